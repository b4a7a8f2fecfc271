//! The `copilot-events` usage parser, over
//! `~/.copilot/session-state/<session>/events.jsonl`.
//!
//! Two kinds of rows carry tokens (Copilot CLI 1.0.102, captured):
//! - `session.usage_record`, one per model call as it happens:
//!   `data.usage.{model, inputTokens, outputTokens, cacheReadTokens,
//!   cacheWriteTokens, reasoningTokens, accounting.usageId}`. Each is counted
//!   once (a repeated `usageId` in the same file adds nothing).
//! - `session.shutdown`, when a process ends: per-model running totals of the
//!   conversation in `data.modelMetrics.<model>.{usage:{…}, requests:{count}}`
//!   (1.0.102 also nests a copy under `data.accountingSnapshot`). A snapshot
//!   counts as its difference from the previous snapshot of that model in the
//!   same file, less what that model's usage records since then already
//!   counted; so a file of records and snapshots counts each call once, and
//!   a file from an older CLI (snapshots only) counts the last snapshot. A
//!   snapshot with any counter below the previous one starts a new epoch (a
//!   resumed process that restarted its counters) and is counted whole, less
//!   the records since.
//!
//! Field conventions:
//! - `outputTokens` already includes reasoning (`reasoningTokens` is "output
//!   tokens used for reasoning (subset of outputTokens)", copilot-sdk
//!   streaming-events docs), so output is not summed with it; reasoning is
//!   reported alone.
//! - `inputTokens` includes the cached part (the CLI's own summary prints
//!   `↑ 9.3k (900 cached)` for three calls of 3101 with 300 cached), so
//!   `input` = inputTokens − cacheRead − cacheWrite. When the cache figures
//!   exceed the input the data cannot be cache-inclusive and inputTokens is
//!   taken as is.

use std::collections::{HashMap, HashSet};

use drover_kit::Usage;
use drover_kit::usage::{Count, Ledger, RowParser, contains, day_of};
use serde::Deserialize;
use serde_json::{Map, Value};

/// The parser of that name, if it is this adapter's.
pub fn parser(name: &str) -> Option<Box<dyn RowParser>> {
    (name == crate::PARSER).then(|| Box::new(CopilotEvents::default()) as Box<dyn RowParser>)
}

/// One model's counters as written in a snapshot.
#[derive(Clone, Copy, Default, PartialEq, Debug)]
struct Counters {
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
    reasoning: u64,
    requests: u64,
}

impl Counters {
    fn fields(&self) -> [u64; 6] {
        [
            self.input,
            self.output,
            self.cache_read,
            self.cache_write,
            self.reasoning,
            self.requests,
        ]
    }

    fn covers(&self, earlier: &Counters) -> bool {
        self.fields()
            .iter()
            .zip(earlier.fields())
            .all(|(now, then)| *now >= then)
    }

    /// Field by field, never below zero.
    fn minus(&self, earlier: &Counters) -> Counters {
        Counters {
            input: self.input.saturating_sub(earlier.input),
            output: self.output.saturating_sub(earlier.output),
            cache_read: self.cache_read.saturating_sub(earlier.cache_read),
            cache_write: self.cache_write.saturating_sub(earlier.cache_write),
            reasoning: self.reasoning.saturating_sub(earlier.reasoning),
            requests: self.requests.saturating_sub(earlier.requests),
        }
    }

    fn plus(&self, other: &Counters) -> Counters {
        Counters {
            input: self.input.saturating_add(other.input),
            output: self.output.saturating_add(other.output),
            cache_read: self.cache_read.saturating_add(other.cache_read),
            cache_write: self.cache_write.saturating_add(other.cache_write),
            reasoning: self.reasoning.saturating_add(other.reasoning),
            requests: self.requests.saturating_add(other.requests),
        }
    }

    /// drover's conventions: input without cache, output with reasoning.
    fn usage(&self) -> Usage {
        let cached = self.cache_read.saturating_add(self.cache_write);
        let input = if cached <= self.input {
            self.input - cached
        } else if self.cache_read <= self.input {
            self.input - self.cache_read
        } else {
            self.input
        };
        Usage {
            input,
            output: self.output.max(self.reasoning),
            cache_read: self.cache_read,
            cache_write: self.cache_write,
            reasoning: self.reasoning,
            requests: self.requests,
        }
    }
}

#[derive(Default)]
pub struct CopilotEvents {
    /// model -> last snapshot counted in the current file.
    last: HashMap<String, Counters>,
    /// model -> usage records counted since that model's last snapshot.
    recorded: HashMap<String, Counters>,
    /// `usageId`s of the records counted in the current file.
    usage_ids: HashSet<String>,
    file_session: String,
}

#[derive(Deserialize)]
struct Row {
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    timestamp: Option<Value>,
    #[serde(default)]
    data: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct TokenUsage {
    #[serde(default)]
    input_tokens: Count,
    #[serde(default)]
    output_tokens: Count,
    #[serde(default)]
    cache_read_tokens: Count,
    #[serde(default)]
    cache_write_tokens: Count,
    #[serde(default)]
    reasoning_tokens: Count,
}

/// `data.usage` of a `session.usage_record` row.
#[derive(Deserialize, Default)]
struct CallRecord {
    #[serde(default)]
    model: Option<String>,
    #[serde(flatten)]
    tokens: TokenUsage,
    #[serde(default)]
    accounting: Option<Accounting>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Accounting {
    #[serde(default)]
    usage_id: Option<String>,
}

#[derive(Deserialize, Default)]
struct Requests {
    #[serde(default)]
    count: Count,
}

#[derive(Deserialize, Default)]
struct ModelMetric {
    #[serde(default)]
    usage: Option<TokenUsage>,
    #[serde(default)]
    requests: Option<Requests>,
}

fn counters_of(metric: &Value) -> Option<Counters> {
    let metric = ModelMetric::deserialize(metric).ok()?;
    let usage = metric.usage.unwrap_or_default();
    Some(Counters {
        input: usage.input_tokens.0,
        output: usage.output_tokens.0,
        cache_read: usage.cache_read_tokens.0,
        cache_write: usage.cache_write_tokens.0,
        reasoning: usage.reasoning_tokens.0,
        requests: metric.requests.unwrap_or_default().count.0,
    })
}

/// `…/session-state/<session>/events.jsonl` names its session by directory.
fn session_of_path(name: &str) -> String {
    let mut parts = name.rsplit(['/', '\\']).filter(|p| !p.is_empty());
    match (parts.next(), parts.next()) {
        (Some("events.jsonl"), Some(dir)) => dir.to_string(),
        (Some(file), _) => file.strip_suffix(".jsonl").unwrap_or(file).to_string(),
        _ => String::new(),
    }
}

impl CopilotEvents {
    fn count_snapshot(
        &mut self,
        metrics: &Map<String, Value>,
        session: &str,
        day: &str,
        ledger: &mut Ledger,
    ) {
        for (model, metric) in metrics {
            let Some(now) = counters_of(metric) else {
                continue;
            };
            let delta = match self.last.get(model) {
                Some(before) if now.covers(before) => now.minus(before),
                _ => now,
            };
            self.last.insert(model.clone(), now);
            let recorded = self.recorded.remove(model).unwrap_or_default();
            let usage = delta.minus(&recorded).usage();
            if !usage.is_zero() {
                ledger.add(session, day, model, &usage);
            }
        }
    }
}

impl CopilotEvents {
    /// One `session.usage_record` row: counted now, and remembered so the
    /// next snapshot of its model does not count it again.
    fn count_record(&mut self, data: &Map<String, Value>, day: &str, ledger: &mut Ledger) {
        let Some(record) = data
            .get("usage")
            .and_then(|u| CallRecord::deserialize(u).ok())
        else {
            ledger.reject();
            return;
        };
        if let Some(id) = record.accounting.and_then(|a| a.usage_id)
            && !self.usage_ids.insert(id)
        {
            return;
        }
        let model = record.model.unwrap_or_default();
        let call = Counters {
            input: record.tokens.input_tokens.0,
            output: record.tokens.output_tokens.0,
            cache_read: record.tokens.cache_read_tokens.0,
            cache_write: record.tokens.cache_write_tokens.0,
            reasoning: record.tokens.reasoning_tokens.0,
            requests: 1,
        };
        let seen = self.recorded.entry(model.clone()).or_default();
        *seen = seen.plus(&call);
        let session = self.file_session.clone();
        ledger.add(&session, day, &model, &call.usage());
    }
}

impl RowParser for CopilotEvents {
    fn begin_file(&mut self, name: &str) {
        self.last.clear();
        self.recorded.clear();
        self.usage_ids.clear();
        self.file_session = session_of_path(name);
    }

    fn row(&mut self, line: &[u8], ledger: &mut Ledger) {
        let record = contains(line, b"\"session.usage_record\"");
        if !record && !contains(line, b"\"modelMetrics\"") {
            return;
        }
        let Ok(row) = serde_json::from_slice::<Row>(line) else {
            ledger.reject();
            return;
        };
        let Some(Value::Object(data)) = row.data else {
            return;
        };
        let day = row
            .timestamp
            .as_ref()
            .and_then(Value::as_str)
            .map(day_of)
            .unwrap_or("")
            .to_string();
        if row.kind.as_deref() == Some("session.usage_record") {
            self.count_record(&data, &day, ledger);
            return;
        }
        let metrics = match data.get("modelMetrics") {
            Some(Value::Object(metrics)) => metrics,
            Some(Value::Null) | None => return,
            Some(_) => {
                ledger.reject();
                return;
            }
        };
        // A shutdown with no model calls is usage that counts zero.
        ledger.mark_seen();
        let session = match data.get("sessionId").and_then(Value::as_str) {
            Some(s) if !s.is_empty() => s.to_string(),
            _ => self.file_session.clone(),
        };
        self.count_snapshot(metrics, &session, &day, ledger);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::UsageReport;

    fn tally_files(files: &[(&str, &str)]) -> Option<UsageReport> {
        drover_kit::testing::tally::<crate::Copilot>(crate::PARSER, files, 29)
    }

    fn tally(text: &str) -> Option<UsageReport> {
        tally_files(&[("/h/.copilot/session-state/s1/events.jsonl", text)])
    }

    #[test]
    fn bmad_loop_example_counts_the_last_snapshot_per_model() {
        // bmad-loop §5.6: an earlier gpt-5-mini snapshot (input 100) is
        // superseded by a two-model snapshot.
        let report = tally(include_str!("../fixtures/events.jsonl")).expect("usage");
        let total = report.total();
        // input: (500 − 200 − 30) + 40; output already holds reasoning;
        // reasoning 5 + 2 reported alone; bmad-loop's own sum (input 540,
        // output 75) double-counts cached input and reasoning.
        assert_eq!(
            (
                total.input,
                total.output,
                total.cache_read,
                total.cache_write,
                total.reasoning
            ),
            (310, 68, 200, 30, 7)
        );
        assert_eq!(report.rejected_rows, 1, "the trailing `not json` line");
        let mini = report
            .entries
            .iter()
            .find(|e| e.model == "gpt-5-mini")
            .expect("gpt-5-mini");
        assert_eq!((mini.session.as_str(), mini.usage.input), ("s1", 270));
        // The superseded snapshot and the final one fall on the same day.
        assert_eq!(mini.day, "2026-07-01");
    }

    #[test]
    fn repeated_snapshots_count_once_and_growth_counts_the_difference() {
        // Shape and counts of a real claude-haiku-4.5 session (fixtures/README):
        // 111529 in = 86021 cache read + 25483 cache write + 25 uncached.
        let report = tally(include_str!("../fixtures/events-cumulative.jsonl")).expect("usage");
        let total = report.total();
        assert_eq!(
            (
                total.input,
                total.cache_read,
                total.cache_write,
                total.output,
                total.reasoning,
                total.requests
            ),
            (120000 - 90000 - 26000, 90000, 26000, 950, 275, 4)
        );
        assert_eq!(report.entries.len(), 1);
        assert_eq!(report.entries[0].session, "s1");
        assert_eq!(report.entries[0].day, "2026-08-02");
    }

    #[test]
    fn a_counter_that_falls_starts_a_new_epoch() {
        // Second lifecycle (after session.resume) restarted its counters.
        let report = tally(include_str!("../fixtures/events-lifecycles.jsonl")).expect("usage");
        let total = report.total();
        assert_eq!(
            (total.input, total.cache_read, total.output, total.requests),
            (600 + 300, 600, 350, 5)
        );
        let days: Vec<&str> = report.entries.iter().map(|e| e.day.as_str()).collect();
        assert_eq!(days, ["2026-03-06", "2026-03-07"]);
    }

    #[test]
    fn files_do_not_share_baselines() {
        let line = r#"{"type":"session.shutdown","timestamp":"2026-07-01T10:00:00Z","data":{"modelMetrics":{"m":{"usage":{"inputTokens":10,"outputTokens":4}}}}}"#;
        let report = tally_files(&[
            ("/h/.copilot/session-state/a/events.jsonl", line),
            ("/h/.copilot/session-state/b/events.jsonl", line),
        ])
        .expect("usage");
        assert_eq!(report.total().input, 20);
        let sessions: Vec<&str> = report.entries.iter().map(|e| e.session.as_str()).collect();
        assert_eq!(sessions, ["a", "b"]);
    }

    #[test]
    fn exclusive_input_is_taken_as_is_and_hostile_fields_count_zero() {
        // Cache figures larger than input cannot be cache-inclusive.
        let odd = r#"{"data":{"modelMetrics":{"m":{"usage":{"inputTokens":5,"cacheReadTokens":900,"outputTokens":"7","reasoningTokens":-3}},"n":"not an object","o":{"usage":"x"}}}}"#;
        let total = tally(odd).expect("usage").total();
        assert_eq!(
            (total.input, total.cache_read, total.output, total.reasoning),
            (5, 900, 0, 0)
        );
        // modelMetrics of the wrong type is rejected: it is not usage.
        let bad = r#"{"data":{"modelMetrics":[1]}}"#;
        assert_eq!(tally(bad), None);
        let with_good = format!("{bad}\n{odd}");
        assert_eq!(tally(&with_good).expect("usage").rejected_rows, 1);
    }

    #[test]
    fn none_without_metrics_and_zero_for_an_empty_shutdown() {
        assert_eq!(
            tally(
                r#"{"type":"assistant.message","data":{"content":"says \"modelMetrics\" in prose"}}"#
            ),
            None
        );
        assert_eq!(
            tally("{\"type\":\"session.start\",\"data\":{\"sessionId\":\"x\"}}\n"),
            None
        );
        let empty =
            tally(r#"{"type":"session.shutdown","data":{"modelMetrics":{}}}"#).expect("usage");
        assert_eq!(empty.total(), Usage::ZERO);
    }

    #[test]
    fn session_comes_from_the_directory() {
        assert_eq!(
            session_of_path("/h/.copilot/session-state/abc/events.jsonl"),
            "abc"
        );
        assert_eq!(
            session_of_path("C:\\u\\.copilot\\session-state\\abc\\events.jsonl"),
            "abc"
        );
        assert_eq!(session_of_path("other.jsonl"), "other");
        assert_eq!(session_of_path(""), "");
    }
}
