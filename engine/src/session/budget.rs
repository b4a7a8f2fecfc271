//! The mid-session token budget: sampled at heartbeat cadence from the
//! transcript; `warn` notes the crossing once, `enforce` nudges the seat to
//! wrap up and ends the session `over_budget` when the grace runs out.

use std::time::{Instant, SystemTime};

use super::{BudgetMode, Context, SessionSpec, Tokens};

pub enum Verdict {
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
    grace_until: Option<(Instant, SystemTime)>,
}

impl Budget {
    pub fn new() -> Budget {
        Budget {
            tripped: false,
            weighted: None,
            grace_until: None,
        }
    }

    /// Samples usage (when a transcript is known) and decides.
    pub fn sample(
        &mut self,
        ctx: &Context,
        spec: &SessionSpec,
        transcript: Option<&str>,
    ) -> Verdict {
        let Some(limit) = spec.token_budget else {
            return Verdict::Fine;
        };
        if spec.budget_mode == BudgetMode::Off {
            return Verdict::Fine;
        }
        if self.tripped {
            return self.grace_check();
        }
        let Some(path) = transcript else {
            return Verdict::Fine;
        };
        let Some(report) = super::usage::read(
            &ctx.adapter,
            &ctx.profile.usage_parser,
            std::path::Path::new(path),
        ) else {
            return Verdict::Fine;
        };
        let weighted = Tokens::of_report(&report).weighted(spec.cache_read_weight);
        self.weighted = Some(weighted);
        if weighted <= limit {
            return Verdict::Fine;
        }
        self.tripped = true;
        ctx.run.lifecycle(
            &spec.task,
            "budget-tripped",
            serde_json::json!({"weighted": weighted, "budget": limit, "mode": spec.budget_mode}),
        );
        ctx.notify(&format!(
            "task {} crossed its token budget: {weighted} weighted tokens > {limit}",
            spec.task
        ));
        match spec.budget_mode {
            BudgetMode::Enforce if spec.budget_grace.is_zero() => Verdict::OverBudget,
            BudgetMode::Enforce => {
                self.grace_until = Some((
                    Instant::now() + spec.budget_grace,
                    SystemTime::now() + spec.budget_grace,
                ));
                Verdict::Nudge
            }
            _ => Verdict::Fine,
        }
    }

    fn grace_check(&self) -> Verdict {
        match self.grace_until {
            Some((mono, wall)) if Instant::now() >= mono || SystemTime::now() >= wall => {
                Verdict::OverBudget
            }
            _ => Verdict::Fine,
        }
    }

    /// Checks only the grace deadline (every tick, not just on heartbeats).
    pub fn expired(&self) -> bool {
        matches!(self.grace_check(), Verdict::OverBudget)
    }
}
