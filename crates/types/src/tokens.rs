//! Token counts, in the one shape drover reports them.

use serde::{Deserialize, Serialize};

use crate::wit;

/// Token counts in drover's conventions, wherever drover reports them (a
/// session's verdict, the conversation record, `drover usage`): `input`
/// without cache reads or writes, `output` with reasoning (`reasoning` also
/// alone), `cache_write` with its 1-hour part (`cache_write_1h` also alone;
/// 0 where the source does not split it, and when a file written before the
/// field existed is read).
#[derive(Serialize, Deserialize, Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    #[serde(default)]
    pub cache_write_1h: u64,
    pub reasoning: u64,
    pub requests: u64,
}

impl Tokens {
    pub fn add(&mut self, t: &Tokens) {
        self.input = self.input.saturating_add(t.input);
        self.output = self.output.saturating_add(t.output);
        self.cache_read = self.cache_read.saturating_add(t.cache_read);
        self.cache_write = self.cache_write.saturating_add(t.cache_write);
        self.cache_write_1h = self.cache_write_1h.saturating_add(t.cache_write_1h);
        self.reasoning = self.reasoning.saturating_add(t.reasoning);
        self.requests = self.requests.saturating_add(t.requests);
    }

    /// Every token the requests moved (reasoning is inside output).
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }

    pub fn of_wit(u: &wit::Usage) -> Tokens {
        Tokens {
            input: u.input,
            output: u.output,
            cache_read: u.cache_read,
            cache_write: u.cache_write,
            cache_write_1h: 0,
            reasoning: u.reasoning,
            requests: u.requests,
        }
    }

    /// The WIT record (which has no 1-hour split).
    pub fn to_wit(self) -> wit::Usage {
        wit::Usage {
            input: self.input,
            output: self.output,
            cache_read: self.cache_read,
            cache_write: self.cache_write,
            reasoning: self.reasoning,
            requests: self.requests,
        }
    }

    /// The sum of a usage report's entries.
    pub fn of_report(report: &wit::UsageReport) -> Tokens {
        let mut total = Tokens::default();
        for entry in &report.entries {
            total.add(&Tokens::of_wit(&entry.usage));
        }
        total
    }

    /// Field by field, never below zero.
    pub fn minus(&self, other: &Tokens) -> Tokens {
        Tokens {
            input: self.input.saturating_sub(other.input),
            output: self.output.saturating_sub(other.output),
            cache_read: self.cache_read.saturating_sub(other.cache_read),
            cache_write: self.cache_write.saturating_sub(other.cache_write),
            cache_write_1h: self.cache_write_1h.saturating_sub(other.cache_write_1h),
            reasoning: self.reasoning.saturating_sub(other.reasoning),
            requests: self.requests.saturating_sub(other.requests),
        }
    }

    /// Cost-weighted total: cache reads count `cache_read_weight` (bmad-loop's
    /// budget rule, rounded half to even).
    pub fn weighted(&self, cache_read_weight: f64) -> u64 {
        let reads = (self.cache_read as f64 * cache_read_weight).round_ties_even();
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_write)
            .saturating_add(reads.max(0.0) as u64)
    }
}
