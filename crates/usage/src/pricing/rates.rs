//! One model's prices and the billing rules that turn a request's tokens
//! into dollars.

/// Prices in dollars per token, as LiteLLM's table gives them. A missing
/// cache price falls back as [`Rates::cost`] says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Rates {
    pub input: Option<f64>,
    pub output: Option<f64>,
    /// Reasoning tokens, when the provider bills them apart from output.
    pub reasoning: Option<f64>,
    pub cache_read: Option<f64>,
    /// Cache writes with the default (5-minute) lifetime.
    pub cache_write: Option<f64>,
    /// Anthropic's 1-hour cache writes.
    pub cache_write_1h: Option<f64>,
    /// Long-context prices, by ascending threshold.
    pub tiers: Vec<Tier>,
}

/// The prices that apply to a whole request once its prompt (input, cache
/// reads and cache writes together) passes `above` tokens.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tier {
    pub above: u64,
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
    pub cache_write_1h: Option<f64>,
}

/// One request's tokens in billing terms (drover's conventions: `input`
/// without cache reads or writes, `output` with reasoning).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Billable {
    pub input: u64,
    pub output: u64,
    pub reasoning: u64,
    pub cache_read: u64,
    pub cache_write_5m: u64,
    pub cache_write_1h: u64,
}

impl Billable {
    /// Every token the prompt carried, which decides the long-context tier.
    pub fn prompt(&self) -> u64 {
        self.input
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write_5m)
            .saturating_add(self.cache_write_1h)
    }
}

/// Anthropic bills a 1-hour cache write at twice the base input price; used
/// when the table has no `cache_creation_input_token_cost_above_1hr`.
const ONE_HOUR_WRITE_FACTOR: f64 = 2.0;

impl Rates {
    /// Whether the table prices this model's tokens at all.
    pub fn is_priced(&self) -> bool {
        self.input.is_some() && self.output.is_some()
    }

    /// The request's cost in dollars, `None` when the model has no input or
    /// output price.
    ///
    /// Rules (docs/usage.md, "Cost"): reasoning is output (at the reasoning
    /// price when the table has one); a cache read or write without its own
    /// price costs the input price; a 1-hour write without its own price
    /// costs twice the input price; above a long-context threshold every
    /// token of the request takes the tier's price where the tier has one
    /// (else the base price).
    pub fn cost(&self, t: &Billable) -> Option<f64> {
        let (base_input, base_output) = (self.input?, self.output?);
        let tier = self.tiers.iter().rev().find(|tier| t.prompt() > tier.above);
        let tiered = |price: fn(&Tier) -> Option<f64>| tier.and_then(price);
        let input = tiered(|x| x.input).unwrap_or(base_input);
        let output = tiered(|x| x.output).unwrap_or(base_output);
        let cache_read = tiered(|x| x.cache_read)
            .or(self.cache_read)
            .unwrap_or(input);
        let cache_write = tiered(|x| x.cache_write)
            .or(self.cache_write)
            .unwrap_or(input);
        let cache_write_1h = tiered(|x| x.cache_write_1h)
            .or(self.cache_write_1h)
            .unwrap_or(input * ONE_HOUR_WRITE_FACTOR);
        let reasoning = t.reasoning.min(t.output);
        let reasoning_price = self.reasoning.unwrap_or(output);
        let dollars = |n: u64, price: f64| n as f64 * price;
        Some(
            dollars(t.input, input)
                + dollars(t.output - reasoning, output)
                + dollars(reasoning, reasoning_price)
                + dollars(t.cache_read, cache_read)
                + dollars(t.cache_write_5m, cache_write)
                + dollars(t.cache_write_1h, cache_write_1h),
        )
    }
}

impl Rates {
    /// The cost of several requests summed: their sizes are unknown, so
    /// long-context tiers cannot be told and base prices apply.
    pub fn cost_of_sum(&self, t: &Billable) -> Option<f64> {
        Rates {
            tiers: Vec::new(),
            ..self.clone()
        }
        .cost(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    /// Claude Opus 5.5's row in LiteLLM 1.110.2.
    fn opus() -> Rates {
        Rates {
            input: Some(4e-6),
            output: Some(2e-5),
            cache_read: Some(2e-7),
            cache_write: Some(5e-6),
            cache_write_1h: Some(8e-6),
            ..Rates::default()
        }
    }

    #[test]
    fn each_kind_of_token_has_its_price() {
        let t = Billable {
            input: 1201,
            output: 57,
            cache_read: 1403,
            cache_write_5m: 1000,
            cache_write_1h: 302,
            reasoning: 0,
        };
        let want = 1201.0 * 4e-6 + 57.0 * 2e-5 + 1403.0 * 2e-7 + 1000.0 * 5e-6 + 302.0 * 8e-6;
        assert!(close(opus().cost(&t).expect("priced"), want));
    }

    #[test]
    fn missing_cache_prices_fall_back_to_input_and_twice_input() {
        let rates = Rates {
            input: Some(1.0),
            output: Some(10.0),
            ..Rates::default()
        };
        let t = Billable {
            cache_read: 3,
            cache_write_5m: 5,
            cache_write_1h: 7,
            ..Billable::default()
        };
        assert!(close(rates.cost(&t).expect("priced"), 3.0 + 5.0 + 14.0));
    }

    #[test]
    fn reasoning_is_output_unless_priced_apart() {
        let mut rates = Rates {
            input: Some(0.0),
            output: Some(10.0),
            ..Rates::default()
        };
        let t = Billable {
            output: 100,
            reasoning: 40,
            ..Billable::default()
        };
        assert!(close(rates.cost(&t).expect("priced"), 1000.0));
        rates.reasoning = Some(1.0);
        assert!(close(rates.cost(&t).expect("priced"), 600.0 + 40.0));
    }

    #[test]
    fn a_long_prompt_moves_the_whole_request_to_the_tier() {
        let rates = Rates {
            input: Some(1.0),
            output: Some(10.0),
            cache_read: Some(0.1),
            tiers: vec![Tier {
                above: 200_000,
                input: Some(2.0),
                output: Some(15.0),
                cache_read: Some(0.2),
                ..Tier::default()
            }],
            ..Rates::default()
        };
        let at = |input: u64, cache_read: u64| {
            rates
                .cost(&Billable {
                    input,
                    cache_read,
                    output: 10,
                    ..Billable::default()
                })
                .expect("priced")
        };
        // Exactly 200k is not above the threshold.
        assert!(close(at(100_000, 100_000), 100_000.0 + 10_000.0 + 100.0));
        // 200,001 prompt tokens: every token at the tier's price, output too.
        assert!(close(at(100_001, 100_000), 200_002.0 + 20_000.0 + 150.0));
    }

    #[test]
    fn the_highest_tier_passed_wins() {
        let tier = |above: u64, input: f64| Tier {
            above,
            input: Some(input),
            ..Tier::default()
        };
        let rates = Rates {
            input: Some(1.0),
            output: Some(1.0),
            tiers: vec![tier(32_000, 2.0), tier(256_000, 3.0)],
            ..Rates::default()
        };
        let cost = |input| {
            rates
                .cost(&Billable {
                    input,
                    ..Billable::default()
                })
                .expect("priced")
        };
        assert!(close(cost(1_000), 1_000.0));
        assert!(close(cost(40_000), 80_000.0));
        assert!(close(cost(300_000), 900_000.0));
    }

    #[test]
    fn without_input_or_output_prices_a_model_is_unpriced() {
        let rates = Rates {
            output: Some(1.0),
            ..Rates::default()
        };
        assert!(!rates.is_priced());
        assert_eq!(rates.cost(&Billable::default()), None);
    }
}
