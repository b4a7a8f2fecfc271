//! How a run's turn ended, and how its budget is held.

use serde::{Deserialize, Serialize};

/// How a turn (and so a run) ended: what `drover run` reports, the journal
/// records and recovery settles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Completed,
    Stalled,
    Timeout,
    Crashed,
    OverBudget,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Completed => "completed",
            Verdict::Stalled => "stalled",
            Verdict::Timeout => "timeout",
            Verdict::Crashed => "crashed",
            Verdict::OverBudget => "over_budget",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What crossing a budget does: nothing, a note, or a wrap-up and an end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum BudgetMode {
    #[default]
    Off,
    Warn,
    Enforce,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_as_journaled() {
        for v in [
            Verdict::Completed,
            Verdict::Stalled,
            Verdict::Timeout,
            Verdict::Crashed,
            Verdict::OverBudget,
        ] {
            let journaled =
                serde::de::value::StrDeserializer::<serde::de::value::Error>::new(v.as_str());
            assert_eq!(Verdict::deserialize(journaled), Ok(v));
        }
        let misspelled =
            serde::de::value::StrDeserializer::<serde::de::value::Error>::new("over-budget");
        assert!(Verdict::deserialize(misspelled).is_err());
        assert_eq!(Verdict::OverBudget.as_str(), "over_budget");
    }
}
