//! What tallies report, in one shape: a [`Record`] is one request (from a
//! component that reports requests) or one (session, day, model) cell (from
//! a `drover:adapter@0.1` tally), and [`Requests`] keeps each request once
//! across every file and worker.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use super::time::{Day, parse_instant};
use drover_types::{requests, wit};

pub use drover_types::Tokens;

/// The tokens as one request's bill.
pub fn billable(tokens: &Tokens) -> crate::pricing::Billable {
    let one_hour = tokens.cache_write_1h.min(tokens.cache_write);
    crate::pricing::Billable {
        input: tokens.input,
        output: tokens.output,
        reasoning: tokens.reasoning,
        cache_read: tokens.cache_read,
        cache_write_5m: tokens.cache_write - one_hour,
        cache_write_1h: one_hour,
    }
}

/// When a record happened, as precisely as its source says.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum When {
    Unknown,
    /// A UTC day (what 0.1 tallies report).
    Day(Day),
    /// Milliseconds since the epoch.
    At(i64),
}

/// One request, or one 0.1 cell of several.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub cli: Arc<str>,
    pub session: String,
    pub model: String,
    /// The conversation's working directory; empty when unknown.
    pub cwd: String,
    pub when: When,
    pub tokens: Tokens,
    /// One request (so long-context tiers can be told), not a sum.
    pub single: bool,
}

impl Record {
    /// A 0.1 tally's (session, day, model) cell.
    pub fn of_entry(cli: &Arc<str>, entry: &wit::UsageEntry) -> Record {
        let when = entry.day.parse::<Day>().map_or(When::Unknown, When::Day);
        Record {
            cli: Arc::clone(cli),
            session: entry.session.clone(),
            model: entry.model.clone(),
            cwd: String::new(),
            when,
            tokens: Tokens::of_wit(&entry.usage),
            single: false,
        }
    }

    /// A request from a `request-tally`.
    pub fn of_request(cli: &Arc<str>, r: &requests::Request) -> Record {
        Record {
            cli: Arc::clone(cli),
            session: r.session.clone(),
            model: r.model.clone(),
            cwd: r.cwd.clone(),
            when: parse_instant(&r.timestamp).map_or(When::Unknown, When::At),
            tokens: Tokens {
                input: r.input,
                output: r.output,
                cache_read: r.cache_read,
                cache_write: r.cache_write_5m.saturating_add(r.cache_write_1h),
                cache_write_1h: r.cache_write_1h,
                reasoning: r.reasoning,
                requests: 1,
            },
            single: true,
        }
    }

    /// Which of two copies of one request is kept: the one that reports
    /// more output (a streamed response is written again as it grows), then
    /// more tokens, then a fixed order of the labels, so the result does not
    /// depend on which worker read which copy first.
    fn outranks(&self, other: &Record) -> bool {
        let rank = |r: &Record| {
            (
                r.tokens.output,
                r.tokens.total(),
                std::cmp::Reverse((r.when.clone(), r.session.clone(), r.cwd.clone())),
            )
        };
        rank(self) > rank(other)
    }
}

/// The dedupe keys are already 128-bit hashes: use them as they are.
#[derive(Default)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u128(&mut self, n: u128) {
        self.0 = (n as u64) ^ ((n >> 64) as u64);
    }
}

/// Every request once, whichever files and workers reported it. Memory is
/// one record plus a 16-byte key per distinct request; file contents are
/// never held.
#[derive(Default)]
pub struct Requests {
    index: HashMap<u128, usize, BuildHasherDefault<Identity>>,
    records: Vec<Record>,
    /// Copies seen and dropped.
    pub repeats: u64,
}

impl Requests {
    /// Adds a record; `key` (the component's dedupe key, namespaced by its
    /// CLI and parser) makes later copies of the same request merge into
    /// one. `None` = never a duplicate.
    pub fn add(&mut self, key: Option<u128>, record: Record) {
        let Some(key) = key else {
            self.records.push(record);
            return;
        };
        match self.index.get(&key) {
            Some(&at) => {
                self.repeats += 1;
                if record.outranks(&self.records[at]) {
                    self.records[at] = record;
                }
            }
            None => {
                self.index.insert(key, self.records.len());
                self.records.push(record);
            }
        }
    }

    pub fn into_records(self) -> Vec<Record> {
        self.records
    }
}

/// A request's dedupe key, hashed with the namespace it belongs to
/// (SipHash-1-3 with fixed keys, twice, for 128 bits: collisions are out of
/// reach at any realistic number of requests, and runs are reproducible).
pub fn key(namespace: &str, key: &str) -> u128 {
    #[allow(deprecated)]
    let half = |seed: u64| {
        let mut h = std::hash::SipHasher::new_with_keys(seed, !seed);
        h.write(namespace.as_bytes());
        h.write_u8(0xff);
        h.write(key.as_bytes());
        h.finish()
    };
    (u128::from(half(0x6472_6f76_6572_0001)) << 64) | u128::from(half(0x6472_6f76_6572_0002))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(session: &str, output: u64) -> Record {
        Record {
            cli: Arc::from("claude"),
            session: session.to_string(),
            model: "m".to_string(),
            cwd: String::new(),
            when: When::At(1_000),
            tokens: Tokens {
                input: 10,
                output,
                requests: 1,
                ..Tokens::default()
            },
            single: true,
        }
    }

    #[test]
    fn copies_of_a_request_count_once_with_the_most_output() {
        let a = key("claude/claude-jsonl", "msg_1");
        let mut r = Requests::default();
        r.add(Some(a), request("s1", 10));
        r.add(Some(a), request("s1", 57));
        r.add(Some(a), request("s1", 30));
        r.add(Some(key("claude/claude-jsonl", "msg_2")), request("s1", 5));
        r.add(None, request("s1", 1));
        r.add(None, request("s1", 1));
        let records = r.repeats;
        let all = r.into_records();
        assert_eq!(records, 2);
        assert_eq!(
            all.iter().map(|r| r.tokens.output).collect::<Vec<_>>(),
            [57, 5, 1, 1]
        );
    }

    #[test]
    fn the_kept_copy_does_not_depend_on_arrival_order() {
        let k = key("codex/codex-rollout", "t1:2168");
        let (x, y) = (request("live", 67), request("archived", 67));
        let mut one = Requests::default();
        one.add(Some(k), x.clone());
        one.add(Some(k), y.clone());
        let mut two = Requests::default();
        two.add(Some(k), y);
        two.add(Some(k), x);
        assert_eq!(one.into_records(), two.into_records());
    }

    #[test]
    fn keys_are_namespaced_and_stable() {
        assert_ne!(key("claude/a", "k"), key("codex/a", "k"));
        assert_ne!(key("ab", "c"), key("a", "bc"));
        assert_eq!(key("claude/a", "k"), key("claude/a", "k"));
    }
}
