//! The watchdog every driver runs its turn under: the cancel flag, the
//! deadline, the heartbeat and the budget sampled at its cadence, and
//! silence past the stall window. One look ([`Watchdog::check`]) per tick
//! says which alarm, if any, went off; what a driver does about it (stop a
//! process, cancel an ACP prompt, nudge a pane) stays with the driver.

use std::time::{Duration, Instant};

use crate::budget::{Budget, BudgetCheck};
use crate::clock::Deadline;
use crate::shared::heartbeat;
use crate::{Context, TurnSpec};

/// What the watchdog saw, in the order it looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alarm {
    /// drover was asked to stop.
    Cancelled,
    /// The deadline passed; the clock that fired.
    Timeout(&'static str),
    /// The budget was just crossed in enforce mode: nudge the seat to wrap
    /// up (its grace runs from now).
    BudgetNudge,
    /// The budget's grace ran out (or it was crossed with none).
    OverBudget,
}

pub struct Watchdog {
    pub deadline: Deadline,
    pub budget: Budget,
    last_heartbeat: Option<Instant>,
}

impl Watchdog {
    pub fn new(deadline: Deadline) -> Watchdog {
        Watchdog {
            deadline,
            budget: Budget::new(),
            last_heartbeat: None,
        }
    }

    /// One look: the cancel flag, the deadline, then (at the heartbeat's
    /// cadence) the heartbeat file and a budget sample from `transcript`,
    /// then the budget's grace.
    pub fn check(
        &mut self,
        ctx: &Context,
        spec: &TurnSpec,
        transcript: Option<&str>,
    ) -> Option<Alarm> {
        if spec.cancelled() {
            return Some(Alarm::Cancelled);
        }
        if let Some(which) = self.deadline.expired() {
            return Some(Alarm::Timeout(which));
        }
        if self
            .last_heartbeat
            .is_none_or(|t| t.elapsed() >= spec.heartbeat)
        {
            self.last_heartbeat = Some(Instant::now());
            heartbeat(ctx, spec, &self.deadline);
            match self.budget.sample(ctx, spec, transcript) {
                // No grace at all: there is nothing to nudge into.
                BudgetCheck::Nudge if self.budget.expired() => return Some(Alarm::OverBudget),
                BudgetCheck::Nudge => return Some(Alarm::BudgetNudge),
                BudgetCheck::OverBudget => return Some(Alarm::OverBudget),
                BudgetCheck::Fine => {}
            }
        }
        self.budget.expired().then_some(Alarm::OverBudget)
    }
}

/// Whether anything moved: a key that changes with activity (log sizes, a
/// file's length and time) and when it last changed.
pub struct Activity<K> {
    key: K,
    since: Instant,
}

impl<K: PartialEq> Activity<K> {
    pub fn new(key: K) -> Activity<K> {
        Activity {
            key,
            since: Instant::now(),
        }
    }

    /// Records the key as it is now.
    pub fn observe(&mut self, key: K) {
        if key != self.key {
            self.key = key;
            self.since = Instant::now();
        }
    }

    /// Counts as activity now (a message arrived, a nudge was typed).
    pub fn touch(&mut self) {
        self.since = Instant::now();
    }

    /// Whether nothing moved for `grace` (never, without a stall window).
    pub fn stalled(&self, grace: Option<Duration>) -> bool {
        grace.is_some_and(|g| self.since.elapsed() >= g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activity_is_a_changed_key_not_a_look() {
        let mut activity = Activity::new(1u64);
        assert!(!activity.stalled(None), "no stall window never stalls");
        assert!(activity.stalled(Some(Duration::ZERO)));
        assert!(!activity.stalled(Some(Duration::from_secs(3600))));
        let before = activity.since;
        activity.observe(1);
        assert_eq!(activity.since, before, "the same key is no activity");
        activity.observe(2);
        assert_eq!(activity.key, 2);
        assert!(activity.since >= before);
    }
}
