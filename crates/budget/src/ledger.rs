//! What was spent, from the turns drover recorded in the project
//! (`.drover/conversations.jsonl`, sealed lines only: a checkout's committed
//! lines count for nothing): each turn's usage, priced as `drover usage`
//! prices it, once.

use std::collections::BTreeSet;
use std::path::Path;

use drover_turn::conversations::{self, Entry};
use drover_usage::{Day, Zone};

/// Cache reads weigh a tenth, as in `drover run --budget`.
pub const CACHE_READ_WEIGHT: f64 = 0.1;

/// Dollars and weighted tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Spend {
    pub usd: f64,
    pub tokens: u64,
    /// Some turn's model is not in the price table: `usd` is short of it.
    pub unpriced: bool,
}

impl Spend {
    fn add(&mut self, entry: &Entry) {
        match entry.cost_usd {
            Some(cost) => self.usd += cost,
            None => self.unpriced |= entry.usage.is_some_and(|u| u.total() > 0),
        }
        if let Some(usage) = entry.usage {
            self.tokens = self
                .tokens
                .saturating_add(usage.weighted(CACHE_READ_WEIGHT));
        }
    }
}

/// One session a limit counts: a run's task (a seat is its run's task
/// named after it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Session {
    pub run: String,
    pub task: String,
}

pub struct Ledger {
    turns: Vec<Entry>,
}

impl Ledger {
    pub fn read(project: &Path) -> Ledger {
        Ledger {
            turns: conversations::turns(project),
        }
    }

    /// No turns: what a project without limits needs read.
    pub fn empty() -> Ledger {
        Ledger { turns: Vec::new() }
    }

    #[cfg(test)]
    pub fn of(turns: Vec<Entry>) -> Ledger {
        Ledger { turns }
    }

    /// What `sessions` spent (all of the project's when `None`), on `day`
    /// in its zone when one is given.
    pub fn spent(&self, sessions: Option<&BTreeSet<Session>>, day: Option<(&Zone, &Day)>) -> Spend {
        let mut spend = Spend::default();
        let on_day = |ts: u64| {
            day.is_none_or(|(zone, day)| {
                zone.day(i64::try_from(ts / 1_000_000).unwrap_or(0)) == *day
            })
        };
        for turn in self.turns.iter().filter(|t| on_day(t.ts)) {
            let counted = sessions.is_none_or(|s| {
                s.contains(&Session {
                    run: turn.run.clone(),
                    task: turn.task.clone(),
                })
            });
            if counted {
                spend.add(turn);
            }
        }
        spend
    }
}
