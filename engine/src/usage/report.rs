//! From tally entries to the report: per-session rows, the `--by`
//! grouping, totals, and the `--since` cut.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use super::Warning;
use crate::sandbox::wit;

/// Token counts in drover's conventions (`input` without cache reads,
/// `output` with reasoning; `reasoning` also alone).
#[derive(Serialize, Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub reasoning: u64,
    pub requests: u64,
}

impl Tokens {
    fn add(&mut self, u: &wit::Usage) {
        self.input = self.input.saturating_add(u.input);
        self.output = self.output.saturating_add(u.output);
        self.cache_read = self.cache_read.saturating_add(u.cache_read);
        self.cache_write = self.cache_write.saturating_add(u.cache_write);
        self.reasoning = self.reasoning.saturating_add(u.reasoning);
        self.requests = self.requests.saturating_add(u.requests);
    }

    /// Every token the requests moved (reasoning is inside output).
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }
}

/// `--by`.
#[derive(Serialize, Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum By {
    #[default]
    Session,
    Day,
    Model,
}

/// A UTC day, `YYYY-MM-DD` (the format tally entries use, so days compare
/// as strings).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Day(String);

impl FromStr for Day {
    type Err = String;
    fn from_str(s: &str) -> Result<Day, String> {
        let b = s.as_bytes();
        let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
        let ok = b.len() == 10
            && b[4] == b'-'
            && b[7] == b'-'
            && digits(0..4)
            && digits(5..7)
            && digits(8..10);
        let month: u32 = s.get(5..7).and_then(|m| m.parse().ok()).unwrap_or(0);
        let day: u32 = s.get(8..10).and_then(|d| d.parse().ok()).unwrap_or(0);
        if ok && (1..=12).contains(&month) && (1..=31).contains(&day) {
            Ok(Day(s.to_string()))
        } else {
            Err(format!("'{s}' is not a date of the form YYYY-MM-DD"))
        }
    }
}

impl fmt::Display for Day {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One (CLI, session): every day and model it touched.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Session {
    pub cli: String,
    pub session: String,
    /// Empty when no entry of the session carries a day.
    pub first_day: String,
    pub last_day: String,
    pub models: Vec<String>,
    #[serde(flatten)]
    pub usage: Tokens,
}

/// One row of the `--by` grouping.
#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum Group {
    Session(Session),
    Day {
        day: String,
        clis: Vec<String>,
        models: Vec<String>,
        sessions: usize,
        #[serde(flatten)]
        usage: Tokens,
    },
    Model {
        cli: String,
        model: String,
        sessions: usize,
        #[serde(flatten)]
        usage: Tokens,
    },
}

/// The whole `drover usage` answer (and its `--json` document).
#[derive(Serialize, Debug)]
pub struct Report {
    pub totals: Tokens,
    pub sessions: Vec<Session>,
    pub by: By,
    pub groups: Vec<Group>,
    /// Transcript files and databases read.
    pub files: usize,
    /// Rows the parsers saw as usage but could not read.
    pub rejected_rows: u64,
    pub warnings: Vec<Warning>,
}

#[derive(Default)]
struct SessionAcc {
    days: BTreeSet<String>,
    models: BTreeSet<String>,
    usage: Tokens,
}

#[derive(Default)]
struct DayAcc {
    clis: BTreeSet<String>,
    models: BTreeSet<String>,
    sessions: BTreeSet<(String, String)>,
    usage: Tokens,
}

#[derive(Default)]
struct ModelAcc {
    sessions: BTreeSet<String>,
    usage: Tokens,
}

/// Accumulates tally reports into a [`Report`].
pub struct Builder {
    since: Option<Day>,
    sessions: BTreeMap<(String, String), SessionAcc>,
    days: BTreeMap<String, DayAcc>,
    models: BTreeMap<(String, String), ModelAcc>,
    totals: Tokens,
    rejected_rows: u64,
}

impl Builder {
    pub fn new(since: Option<Day>) -> Builder {
        Builder {
            since,
            sessions: BTreeMap::new(),
            days: BTreeMap::new(),
            models: BTreeMap::new(),
            totals: Tokens::default(),
            rejected_rows: 0,
        }
    }

    pub fn add(&mut self, cli: &str, report: &wit::UsageReport) {
        self.rejected_rows = self.rejected_rows.saturating_add(report.rejected_rows);
        for entry in &report.entries {
            // With --since, an entry must carry a day on or after it; one
            // without a day cannot be placed, so it is left out.
            if let Some(since) = &self.since
                && (entry.day.is_empty() || entry.day.as_str() < since.0.as_str())
            {
                continue;
            }
            self.totals.add(&entry.usage);
            let s = self
                .sessions
                .entry((cli.to_string(), entry.session.clone()))
                .or_default();
            s.usage.add(&entry.usage);
            if !entry.day.is_empty() {
                s.days.insert(entry.day.clone());
            }
            if !entry.model.is_empty() {
                s.models.insert(entry.model.clone());
            }
            let d = self.days.entry(entry.day.clone()).or_default();
            d.usage.add(&entry.usage);
            d.clis.insert(cli.to_string());
            if !entry.model.is_empty() {
                d.models.insert(entry.model.clone());
            }
            d.sessions.insert((cli.to_string(), entry.session.clone()));
            let m = self
                .models
                .entry((cli.to_string(), entry.model.clone()))
                .or_default();
            m.usage.add(&entry.usage);
            m.sessions.insert(entry.session.clone());
        }
    }

    pub fn build(self, by: By, files: usize, warnings: Vec<Warning>) -> Report {
        let mut sessions: Vec<Session> = self
            .sessions
            .into_iter()
            .map(|((cli, session), acc)| Session {
                cli,
                session,
                first_day: acc.days.first().cloned().unwrap_or_default(),
                last_day: acc.days.last().cloned().unwrap_or_default(),
                models: acc.models.into_iter().collect(),
                usage: acc.usage,
            })
            .collect();
        // Oldest activity first, so the latest sessions sit above the total.
        sessions.sort_by(|a, b| {
            (&a.last_day, &a.first_day, &a.cli, &a.session).cmp(&(
                &b.last_day,
                &b.first_day,
                &b.cli,
                &b.session,
            ))
        });
        let groups = match by {
            By::Session => sessions.iter().cloned().map(Group::Session).collect(),
            By::Day => self
                .days
                .into_iter()
                .map(|(day, acc)| Group::Day {
                    day,
                    clis: acc.clis.into_iter().collect(),
                    models: acc.models.into_iter().collect(),
                    sessions: acc.sessions.len(),
                    usage: acc.usage,
                })
                .collect(),
            By::Model => self
                .models
                .into_iter()
                .map(|((cli, model), acc)| Group::Model {
                    cli,
                    model,
                    sessions: acc.sessions.len(),
                    usage: acc.usage,
                })
                .collect(),
        };
        Report {
            totals: self.totals,
            sessions,
            by,
            groups,
            files,
            rejected_rows: self.rejected_rows,
            warnings,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(session: &str, day: &str, model: &str, input: u64) -> wit::UsageEntry {
        wit::UsageEntry {
            session: session.into(),
            day: day.into(),
            model: model.into(),
            usage: wit::Usage {
                input,
                output: 1,
                cache_read: 0,
                cache_write: 0,
                reasoning: 0,
                requests: 1,
            },
        }
    }

    fn report(entries: Vec<wit::UsageEntry>) -> wit::UsageReport {
        wit::UsageReport {
            entries,
            rejected_rows: 1,
        }
    }

    #[test]
    fn since_keeps_later_days_and_drops_undated_entries() {
        let r = report(vec![
            entry("s1", "2026-11-29", "m", 1),
            entry("s1", "2026-11-30", "m", 10),
            entry("s2", "", "m", 100),
        ]);
        let mut all = Builder::new(None);
        all.add("claude", &r);
        assert_eq!(all.build(By::Session, 1, vec![]).totals.input, 111);
        let mut cut = Builder::new(Some("2026-11-30".parse().expect("day")));
        cut.add("claude", &r);
        let built = cut.build(By::Day, 1, vec![]);
        assert_eq!(built.totals.input, 10);
        assert_eq!(built.groups.len(), 1);
        assert_eq!(built.rejected_rows, 1);
    }

    #[test]
    fn sessions_span_days_and_models() {
        let mut b = Builder::new(None);
        b.add(
            "codex",
            &report(vec![
                entry("t", "2026-11-29", "gpt-a", 1),
                entry("t", "2026-12-01", "gpt-b", 2),
            ]),
        );
        b.add("claude", &report(vec![entry("t", "2026-11-30", "opus", 4)]));
        let built = b.build(By::Model, 2, vec![]);
        assert_eq!(built.sessions.len(), 2, "same id, different CLIs");
        let codex = built
            .sessions
            .iter()
            .find(|s| s.cli == "codex")
            .expect("codex");
        assert_eq!(
            (codex.first_day.as_str(), codex.last_day.as_str()),
            ("2026-11-29", "2026-12-01")
        );
        assert_eq!(codex.models, ["gpt-a", "gpt-b"]);
        assert_eq!(built.groups.len(), 3);
        assert_eq!(built.totals.requests, 3);
    }

    #[test]
    fn days_parse_strictly() {
        assert!("2026-11-30".parse::<Day>().is_ok());
        for bad in [
            "2026-13-01",
            "2026-1-1",
            "yesterday",
            "2026-11-30T00",
            "2026-00-10",
        ] {
            assert!(bad.parse::<Day>().is_err(), "{bad}");
        }
    }
}
