//! Reading price tables in LiteLLM's format (`model -> {field: dollars per
//! token}`): the embedded snapshot and the user's override files.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::PricingError;
use super::rates::{Rates, Tier};

/// Which price a LiteLLM field sets, with its long-context threshold.
#[derive(Clone, Copy)]
enum Slot {
    Input,
    Output,
    Reasoning,
    CacheRead,
    CacheWrite,
    CacheWrite1h,
}

fn slot(field: &str) -> Option<(Slot, Option<u64>)> {
    let base = |name: &str| match name {
        "input_cost_per_token" => Some(Slot::Input),
        "output_cost_per_token" => Some(Slot::Output),
        "output_cost_per_reasoning_token" => Some(Slot::Reasoning),
        "cache_read_input_token_cost" => Some(Slot::CacheRead),
        "cache_creation_input_token_cost" => Some(Slot::CacheWrite),
        "cache_creation_input_token_cost_above_1hr" => Some(Slot::CacheWrite1h),
        _ => None,
    };
    if let Some(s) = base(field) {
        return Some((s, None));
    }
    // `<field>_above_<N>k_tokens`.
    let rest = field.strip_suffix("k_tokens")?;
    let at = rest.rfind("_above_")?;
    let thousands: u64 = rest[at + "_above_".len()..].parse().ok()?;
    match base(&rest[..at])? {
        Slot::Reasoning => None,
        s => Some((s, Some(thousands.checked_mul(1000)?))),
    }
}

fn set(rates: &mut Rates, slot: Slot, above: Option<u64>, price: f64) {
    let Some(above) = above else {
        let field = match slot {
            Slot::Input => &mut rates.input,
            Slot::Output => &mut rates.output,
            Slot::Reasoning => &mut rates.reasoning,
            Slot::CacheRead => &mut rates.cache_read,
            Slot::CacheWrite => &mut rates.cache_write,
            Slot::CacheWrite1h => &mut rates.cache_write_1h,
        };
        *field = Some(price);
        return;
    };
    let at = match rates.tiers.binary_search_by_key(&above, |t| t.above) {
        Ok(at) => at,
        Err(at) => {
            rates.tiers.insert(
                at,
                Tier {
                    above,
                    ..Tier::default()
                },
            );
            at
        }
    };
    let tier = &mut rates.tiers[at];
    let field = match slot {
        Slot::Input => &mut tier.input,
        Slot::Output => &mut tier.output,
        Slot::CacheRead => &mut tier.cache_read,
        Slot::CacheWrite => &mut tier.cache_write,
        Slot::CacheWrite1h => &mut tier.cache_write_1h,
        Slot::Reasoning => return,
    };
    *field = Some(price);
}

/// Lays one LiteLLM entry's prices over `rates`; other fields are ignored.
/// A price field that is not a non-negative number is an error naming it.
fn apply(rates: &mut Rates, entry: &Map<String, Value>) -> Result<(), String> {
    for (field, value) in entry {
        let Some((slot, above)) = slot(field) else {
            continue;
        };
        match value.as_f64() {
            Some(price) if price.is_finite() && price >= 0.0 => set(rates, slot, above, price),
            _ => {
                return Err(format!(
                    "{field}: expected dollars per token, found {value}"
                ));
            }
        }
    }
    Ok(())
}

/// Lays a whole table (`{"model": {…prices…}, …}`) over `models`: the
/// fields an entry gives replace the ones there, field by field; new models
/// are added. `source` names the table in errors. Returns the models the
/// table named.
pub fn merge(
    models: &mut HashMap<String, Rates>,
    source: &str,
    text: &str,
) -> Result<Vec<String>, PricingError> {
    let table: Map<String, Value> =
        serde_json::from_str(text).map_err(|e| PricingError::Syntax {
            path: source.to_string(),
            at: format!("{}:{}", e.line(), e.column()),
            message: e.to_string(),
        })?;
    merge_entries(models, source, table)
}

/// [`merge`] for a table already parsed.
pub fn merge_entries(
    models: &mut HashMap<String, Rates>,
    source: &str,
    table: Map<String, Value>,
) -> Result<Vec<String>, PricingError> {
    let mut named = Vec::with_capacity(table.len());
    for (model, entry) in table {
        let Value::Object(entry) = entry else {
            return Err(PricingError::Entry {
                path: source.to_string(),
                model,
                message: "expected an object of prices".to_string(),
            });
        };
        let rates = models.entry(model.clone()).or_default();
        apply(rates, &entry).map_err(|message| PricingError::Entry {
            path: source.to_string(),
            model: model.clone(),
            message,
        })?;
        named.push(model);
    }
    Ok(named)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(source: &str, text: &str) -> Result<HashMap<String, Rates>, PricingError> {
        let mut models = HashMap::new();
        merge(&mut models, source, text).map(|_| models)
    }

    #[test]
    fn litellm_fields_fill_base_prices_and_tiers() {
        let text = r#"{"m": {"input_cost_per_token": 3e-6, "output_cost_per_token": 1.5e-5,
            "cache_read_input_token_cost": 3e-7, "cache_creation_input_token_cost": 3.75e-6,
            "cache_creation_input_token_cost_above_1hr": 6e-6,
            "input_cost_per_token_above_200k_tokens": 6e-6,
            "output_cost_per_token_above_200k_tokens": 2.25e-5,
            "input_cost_per_token_above_32k_tokens": 4e-6,
            "input_cost_per_token_batches": 1e-9, "mode": "chat", "litellm_provider": "anthropic"}}"#;
        let models = parse("t.json", text).expect("parses");
        let m = &models["m"];
        assert_eq!(m.input, Some(3e-6));
        assert_eq!(m.cache_write_1h, Some(6e-6));
        assert_eq!(
            m.tiers.iter().map(|t| t.above).collect::<Vec<_>>(),
            [32_000, 200_000]
        );
        assert_eq!(m.tiers[1].output, Some(2.25e-5));
        assert_eq!(m.tiers[0].output, None);
    }

    #[test]
    fn bad_prices_name_the_model_and_field() {
        let e = parse("p.json", r#"{"m": {"input_cost_per_token": "cheap"}}"#)
            .expect_err("a string price");
        assert_eq!(
            e.to_string(),
            "p.json: model 'm': input_cost_per_token: expected dollars per token, found \"cheap\""
        );
        let e = parse("p.json", "{\n  \"m\": {,}\n}").expect_err("bad JSON");
        assert!(e.to_string().starts_with("p.json:2:"), "{e}");
        let e = parse("p.json", r#"{"m": {"output_cost_per_token": -1}}"#).expect_err("negative");
        assert!(e.to_string().contains("output_cost_per_token"), "{e}");
    }
}
