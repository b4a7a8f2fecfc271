//! The mid-session budgets, in weighted tokens and in dollars: sampled at
//! heartbeat cadence from the transcript; crossing either one trips the
//! budget. `warn` notes the crossing once, `enforce` nudges the seat to wrap
//! up and ends the session `over_budget` when the grace runs out.

use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use super::{BudgetMode, Context, Tokens, TurnSpec};
use drover_gate::Cleared;

pub enum BudgetCheck {
    /// Nothing to do.
    Fine,
    /// Enforce mode just tripped: nudge the seat (grace armed).
    Nudge,
    /// Enforce mode's grace ran out.
    OverBudget,
}

pub struct Budget {
    tripped: bool,
    pub weighted: Option<u64>,
    /// Dollars spent at the last sample, when known.
    pub cost_usd: Option<f64>,
    /// Whether the "cannot price" notice was given.
    unpriced_noted: bool,
    grace_until: Option<(Instant, SystemTime)>,
    /// The transcript last confined ([`super::usage::confine`]), so each
    /// sample does not ask the adapter again.
    confined: Option<(String, Option<Cleared<PathBuf>>)>,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::new()
    }
}

impl Budget {
    pub fn new() -> Budget {
        Budget {
            tripped: false,
            weighted: None,
            cost_usd: None,
            unpriced_noted: false,
            grace_until: None,
            confined: None,
        }
    }

    /// Samples usage (when a transcript is known) and decides.
    pub fn sample(
        &mut self,
        ctx: &Context,
        spec: &TurnSpec,
        transcript: Option<&str>,
    ) -> BudgetCheck {
        if spec.token_budget.is_none() && spec.cost_budget.is_none() {
            return BudgetCheck::Fine;
        }
        if spec.budget_mode == BudgetMode::Off {
            return BudgetCheck::Fine;
        }
        if self.tripped {
            return self.grace_check();
        }
        let Some(path) = transcript else {
            return BudgetCheck::Fine;
        };
        if self
            .confined
            .as_ref()
            .is_none_or(|(named, _)| named != path)
        {
            let file = super::usage::confine(ctx, &spec.cwd, &spec.env, Path::new(path));
            self.confined = Some((path.to_string(), file));
        }
        let Some((_, Some(file))) = &self.confined else {
            return BudgetCheck::Fine;
        };
        let Some(report) = super::usage::read(
            ctx.adapter(),
            &ctx.profile().usage_parser,
            std::slice::from_ref(file),
        ) else {
            return BudgetCheck::Fine;
        };
        let weighted = Tokens::of_report(&report).weighted(spec.cache_read_weight);
        self.weighted = Some(weighted);
        let cost = super::usage::cost_of(&report);
        self.cost_usd = cost;
        if spec.cost_budget.is_some() && cost.is_none() && !self.unpriced_noted {
            self.unpriced_noted = true;
            ctx.attention(&format!(
                "task {}: its dollar budget cannot be checked: a model it used is not in the price table",
                spec.task
            ));
        }
        let over_tokens = spec.token_budget.filter(|limit| weighted > *limit);
        let over_dollars = spec.cost_budget.zip(cost).filter(|(limit, c)| c > limit);
        if over_tokens.is_none() && over_dollars.is_none() {
            return BudgetCheck::Fine;
        }
        self.tripped = true;
        ctx.run.lifecycle(
            &spec.task,
            "budget-tripped",
            serde_json::json!({
                "weighted": weighted,
                "budget": spec.token_budget,
                "cost_usd": cost,
                "budget_usd": spec.cost_budget,
                "mode": spec.budget_mode,
            }),
        );
        let crossed = match (over_tokens, over_dollars) {
            (Some(limit), _) => format!("{weighted} weighted tokens > {limit}"),
            (None, Some((limit, c))) => format!("${c:.2} > ${limit:.2}"),
            (None, None) => String::new(),
        };
        ctx.attention(&format!("task {} crossed its budget: {crossed}", spec.task));
        match spec.budget_mode {
            BudgetMode::Enforce if spec.budget_grace.is_zero() => BudgetCheck::OverBudget,
            BudgetMode::Enforce => {
                self.grace_until = Some((
                    Instant::now() + spec.budget_grace,
                    SystemTime::now() + spec.budget_grace,
                ));
                BudgetCheck::Nudge
            }
            _ => BudgetCheck::Fine,
        }
    }

    fn grace_check(&self) -> BudgetCheck {
        match self.grace_until {
            Some((mono, wall)) if Instant::now() >= mono || SystemTime::now() >= wall => {
                BudgetCheck::OverBudget
            }
            _ => BudgetCheck::Fine,
        }
    }

    /// Checks only the grace deadline (every tick, not just on heartbeats).
    pub fn expired(&self) -> bool {
        matches!(self.grace_check(), BudgetCheck::OverBudget)
    }
}
