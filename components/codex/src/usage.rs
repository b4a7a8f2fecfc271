//! The `codex-rollout` usage parser, for
//! `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<thread>.jsonl`.
//!
//! Rows: `{"timestamp":…,"type":…,"payload":{…}}`. The ones read here:
//! - `session_meta` (`payload.id`: the thread id) and `turn_context`
//!   (`payload.model`) attribute what follows;
//! - `event_msg` with `payload.type == "token_count"`: `payload.info.
//!   total_token_usage` is the thread's running total. Codex writes it again
//!   unchanged (per request and at turn end), so rows are never summed: each
//!   change of the total adds the difference to the previous one and counts
//!   as one request. A total lower than the last one means the counter
//!   restarted, so it counts from zero. `info: null` rows carry only rate
//!   limits. Baselines are kept per thread across files, so a thread whose
//!   rollout is fed twice, or continued in a second file, is not counted again;
//!   and each change is reported as a request keyed by the thread and the
//!   total it reached, so the engine also drops the copies another tally
//!   read (a rollout both live and archived, a thread continued in a file
//!   under another year that opens with the old total again);
//! - `token_usage_record` (newer Codex): `payload.usage` is one response's own
//!   usage, keyed by `payload.response_id` (counted once across files and
//!   tallies, which also drops the copies a forked thread carries). It
//!   describes the same requests as `token_count`, so a file that has
//!   records is counted from them; its `token_count` rows count only for the
//!   part of the thread before the first record (an older Codex wrote it),
//!   found through the record's `thread_token_usage` running total.
//!
//! Responses accounting: `input_tokens` includes `cached_input_tokens`, and
//! `output_tokens` includes `reasoning_output_tokens`.

use std::collections::HashMap;

use drover_kit::usage::{Count, Ledger, RowParser, contains};
use drover_kit::{Request, Usage};
use serde::{Deserialize, Deserializer};

/// Every row this parser reads contains one of these.
pub const NEEDLES: &[&str] = &[
    "\"token_count\"",
    "\"token_usage_record\"",
    "\"turn_context\"",
    "\"session_meta\"",
];

/// The parser of that name, if it is this adapter's.
pub fn parser(name: &str) -> Option<Box<dyn RowParser>> {
    (name == crate::PARSER).then(|| Box::new(Rollout::default()) as Box<dyn RowParser>)
}

/// A string field read leniently: any other JSON value is absent.
#[derive(Default)]
struct Text(Option<String>);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Text, D::Error> {
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::String(s) if !s.is_empty() => Ok(Text(Some(s))),
            _ => Ok(Text(None)),
        }
    }
}

/// An object field read leniently: one that does not have the expected
/// shape is absent rather than making the whole row unreadable.
struct Loose<T>(Option<T>);

impl<T> Default for Loose<T> {
    fn default() -> Self {
        Loose(None)
    }
}

impl<'de, T: serde::de::DeserializeOwned> Deserialize<'de> for Loose<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Loose<T>, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        Ok(Loose(
            value
                .is_object()
                .then(|| serde_json::from_value(value).ok())
                .flatten(),
        ))
    }
}

#[derive(Deserialize)]
struct Row {
    #[serde(rename = "type", default)]
    kind: Text,
    #[serde(default)]
    timestamp: Text,
    /// Read in place (not through `Loose`): `session_meta` payloads carry
    /// the whole instructions text, which need not be copied.
    #[serde(default)]
    payload: Option<Payload>,
}

#[derive(Deserialize, Default)]
struct Payload {
    #[serde(rename = "type", default)]
    kind: Text,
    #[serde(default)]
    id: Text,
    #[serde(default)]
    model: Text,
    /// `session_meta`'s working directory.
    #[serde(default)]
    cwd: Text,
    #[serde(default)]
    info: Loose<Info>,
    #[serde(default)]
    usage: Loose<Tokens>,
    #[serde(default)]
    thread_token_usage: Loose<Tokens>,
    #[serde(default)]
    response_id: Text,
}

#[derive(Deserialize, Default)]
struct Info {
    #[serde(default)]
    total_token_usage: Loose<Tokens>,
    /// Some builds wrote the counts flat in `info`.
    #[serde(default)]
    input_tokens: Option<Count>,
    #[serde(default)]
    cached_input_tokens: Count,
    #[serde(default)]
    cache_write_input_tokens: Count,
    #[serde(default)]
    output_tokens: Count,
    #[serde(default)]
    reasoning_output_tokens: Count,
}

impl Info {
    fn total(self) -> Option<Tokens> {
        if let Some(total) = self.total_token_usage.0 {
            return Some(total);
        }
        let input_tokens = self.input_tokens?;
        Some(Tokens {
            input_tokens,
            cached_input_tokens: self.cached_input_tokens,
            cache_write_input_tokens: self.cache_write_input_tokens,
            output_tokens: self.output_tokens,
            reasoning_output_tokens: self.reasoning_output_tokens,
        })
    }
}

/// Responses API accounting: `input_tokens` includes the cached part and
/// `output_tokens` includes reasoning.
#[derive(Deserialize, Default, Clone, PartialEq, Debug)]
pub(crate) struct Tokens {
    #[serde(default)]
    input_tokens: Count,
    #[serde(default)]
    cached_input_tokens: Count,
    #[serde(default)]
    cache_write_input_tokens: Count,
    #[serde(default)]
    output_tokens: Count,
    #[serde(default)]
    reasoning_output_tokens: Count,
}

impl Tokens {
    /// These tokens as drover counts them, over `requests` calls.
    pub(crate) fn usage(&self, requests: u64) -> Usage {
        Usage {
            input: self
                .input_tokens
                .0
                .saturating_sub(self.cached_input_tokens.0),
            output: self.output_tokens.0,
            cache_read: self.cached_input_tokens.0,
            cache_write: self.cache_write_input_tokens.0,
            reasoning: self.reasoning_output_tokens.0,
            requests,
        }
    }

    fn fields(&self) -> [u64; 5] {
        [
            self.input_tokens.0,
            self.cached_input_tokens.0,
            self.cache_write_input_tokens.0,
            self.output_tokens.0,
            self.reasoning_output_tokens.0,
        ]
    }

    /// `self - earlier`, or `None` when a field went down (a restart).
    fn since(&self, earlier: &Tokens) -> Option<Tokens> {
        let (now, then) = (self.fields(), earlier.fields());
        if now.iter().zip(then).any(|(n, t)| *n < t) {
            return None;
        }
        Some(Tokens {
            input_tokens: Count(now[0] - then[0]),
            cached_input_tokens: Count(now[1] - then[1]),
            cache_write_input_tokens: Count(now[2] - then[2]),
            output_tokens: Count(now[3] - then[3]),
            reasoning_output_tokens: Count(now[4] - then[4]),
        })
    }

    /// One number that grows with the running total, to compare positions.
    fn position(&self) -> u64 {
        self.input_tokens.0.saturating_add(self.output_tokens.0)
    }

    /// One request of these tokens.
    fn request(
        &self,
        key: String,
        session: String,
        timestamp: &str,
        model: String,
        cwd: &str,
    ) -> Request {
        Request {
            key,
            session,
            timestamp: timestamp.to_string(),
            model,
            cwd: cwd.to_string(),
            input: self
                .input_tokens
                .0
                .saturating_sub(self.cached_input_tokens.0),
            output: self.output_tokens.0,
            reasoning: self.reasoning_output_tokens.0,
            cache_read: self.cached_input_tokens.0,
            cache_write_5m: self.cache_write_input_tokens.0,
            cache_write_1h: 0,
        }
    }

    /// The dedupe key of the request that brought `thread`'s running total
    /// to `self`: equal in every copy of the thread's rollout.
    fn total_key(&self, thread: &str) -> String {
        let [i, c, w, o, r] = self.fields();
        format!("total:{thread}:{i}:{c}:{w}:{o}:{r}")
    }
}

/// A `token_count` change, held until the file ends decides its source.
struct Pending {
    request: Request,
    /// Where the running total stood after this change.
    position: u64,
}

#[derive(Default)]
struct FileState {
    name_session: String,
    session: Option<String>,
    model: String,
    cwd: String,
    pending: Vec<Pending>,
    saw_usage: bool,
    /// Set by the file's first `token_usage_record`: the running total
    /// before it, when the record says (`Some(None)` when it does not).
    records_from: Option<Option<u64>>,
}

#[derive(Default)]
pub struct Rollout {
    /// thread -> last `token_count` total seen, across files.
    totals: HashMap<String, Tokens>,
    file: FileState,
}

/// The thread id in `rollout-<timestamp>-<uuid>.jsonl`, else the file stem.
fn session_of_file(name: &str) -> String {
    let file = name.rsplit('/').next().unwrap_or(name);
    let stem = file.strip_suffix(".jsonl").unwrap_or(file);
    let tail = stem.len().checked_sub(36).and_then(|at| stem.get(at..));
    let uuid_like = |s: &str| {
        s.len() == 36
            && s.char_indices().all(|(i, c)| {
                if [8, 13, 18, 23].contains(&i) {
                    c == '-'
                } else {
                    c.is_ascii_hexdigit()
                }
            })
    };
    match tail {
        Some(id) if uuid_like(id) => id.to_string(),
        _ => stem.to_string(),
    }
}

impl Rollout {
    fn session(&self) -> String {
        self.file
            .session
            .clone()
            .unwrap_or_else(|| self.file.name_session.clone())
    }

    fn token_count(&mut self, info: Option<Info>, timestamp: &str) {
        let Some(total) = info.and_then(Info::total) else {
            return;
        };
        self.file.saw_usage = true;
        let session = self.session();
        let delta = match self.totals.get(&session) {
            Some(last) if *last == total => return,
            Some(last) => total.since(last).unwrap_or_else(|| total.clone()),
            None if total.fields() == [0; 5] => return,
            None => total.clone(),
        };
        let position = total.position();
        let key = total.total_key(&session);
        self.totals.insert(session.clone(), total);
        if self.file.records_from.is_some() {
            // The records of this file count this request.
            return;
        }
        let request = delta.request(
            key,
            session,
            timestamp,
            self.file.model.clone(),
            &self.file.cwd,
        );
        self.file.pending.push(Pending { request, position });
    }

    fn record(&mut self, payload: Payload, timestamp: &str, ledger: &mut Ledger) {
        let Some(usage) = payload.usage.0 else {
            return;
        };
        self.file.saw_usage = true;
        if self.file.records_from.is_none() {
            let before = payload
                .thread_token_usage
                .0
                .map(|t| t.position().saturating_sub(usage.position()));
            self.file.records_from = Some(before);
        }
        // The ledger counts a response id once; one without an id is never
        // taken for a copy.
        let key = payload
            .response_id
            .0
            .map(|id| format!("response:{id}"))
            .unwrap_or_default();
        let model = payload.model.0.unwrap_or_else(|| self.file.model.clone());
        ledger.request(usage.request(key, self.session(), timestamp, model, &self.file.cwd));
    }
}

impl RowParser for Rollout {
    fn begin_file(&mut self, name: &str) {
        self.file = FileState {
            name_session: session_of_file(name),
            ..FileState::default()
        };
    }

    fn row(&mut self, line: &[u8], ledger: &mut Ledger) {
        if !NEEDLES.iter().any(|n| contains(line, n.as_bytes())) {
            return;
        }
        let Ok(row) = serde_json::from_slice::<Row>(line) else {
            ledger.reject();
            return;
        };
        let Some(payload) = row.payload else {
            return;
        };
        let timestamp = row.timestamp.0.unwrap_or_default();
        match (row.kind.0.as_deref(), payload.kind.0.as_deref()) {
            (Some("session_meta"), _) => {
                // The first one names the file's thread; later ones are
                // history a forked thread copied.
                if self.file.session.is_none() {
                    self.file.session = payload.id.0;
                    self.file.cwd = payload.cwd.0.unwrap_or_default();
                }
                if let Some(model) = payload.model.0 {
                    self.file.model = model;
                }
            }
            (Some("turn_context"), _) => {
                if let Some(model) = payload.model.0 {
                    self.file.model = model;
                }
            }
            (Some("event_msg"), Some("token_count")) => {
                self.token_count(payload.info.0, &timestamp)
            }
            (Some("token_usage_record"), _) | (Some("event_msg"), Some("token_usage_record")) => {
                self.record(payload, &timestamp, ledger);
            }
            _ => {}
        }
    }

    fn end_file(&mut self, ledger: &mut Ledger) {
        let file = std::mem::take(&mut self.file);
        let limit = file.records_from.unwrap_or(Some(u64::MAX));
        for p in file.pending {
            if limit.is_some_and(|limit| p.position <= limit) {
                ledger.request(p.request);
            }
        }
        if file.saw_usage {
            ledger.mark_seen();
        }
    }

    fn reports_requests(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::Usage;
    use drover_kit::UsageReport;

    const FILE: &str = "/h/.codex/sessions/2026/11/30/rollout-2026-11-30T10-00-00-019a9776-0a34-7842-8627-112b63d66e90.jsonl";
    const THREAD: &str = "019a9776-0a34-7842-8627-112b63d66e90";
    const RESUMED: &str = include_str!("../fixtures/rollout-resumed.jsonl");
    const RECORDS_ONLY: &str = include_str!("../fixtures/rollout-records-only.jsonl");
    const UPGRADED: &str = include_str!("../fixtures/rollout-upgraded.jsonl");

    fn tally_files(files: &[(&str, &str)]) -> Option<UsageReport> {
        drover_kit::testing::tally::<crate::Codex>(crate::PARSER, files, 41)
    }

    fn tally(text: &str) -> Option<UsageReport> {
        tally_files(&[(FILE, text)])
    }

    fn fields(u: &Usage) -> (u64, u64, u64, u64, u64, u64) {
        (
            u.input,
            u.cache_read,
            u.cache_write,
            u.output,
            u.reasoning,
            u.requests,
        )
    }

    #[test]
    fn running_totals_become_deltas_and_re_emits_count_once() {
        // Two requests of 2101 in (1000 cached) / 67 out (5 reasoning): the
        // second turn's total is 4202/2000/134/10. Both turns re-emit their
        // total, and the file also holds records for the same two responses.
        let report = tally(RESUMED).expect("usage");
        assert_eq!(fields(&report.total()), (2202, 2000, 0, 134, 10, 2));
        assert_eq!(report.rejected_rows, 0);
        assert_eq!(report.entries.len(), 1);
        let entry = &report.entries[0];
        assert_eq!(
            (
                entry.session.as_str(),
                entry.day.as_str(),
                entry.model.as_str()
            ),
            (THREAD, "2026-11-30", "gpt-5.5")
        );
    }

    #[test]
    fn token_count_alone_counts_the_same() {
        let only_counts: String = RESUMED
            .lines()
            .filter(|l| !l.contains("token_usage_record"))
            .map(|l| format!("{l}\n"))
            .collect();
        let report = tally(&only_counts).expect("usage");
        assert_eq!(fields(&report.total()), (2202, 2000, 0, 134, 10, 2));
    }

    #[test]
    fn records_alone_count_each_response_once() {
        // Three responses; one record is written twice; cache writes carried.
        let report = tally(RECORDS_ONLY).expect("usage");
        assert_eq!(fields(&report.total()), (2202 + 1101, 3000, 40, 201, 15, 3));
        let models: Vec<&str> = report.entries.iter().map(|e| e.model.as_str()).collect();
        assert_eq!(models, ["gpt-5.5", "gpt-6-sol"]);
    }

    #[test]
    fn a_thread_upgraded_mid_file_counts_old_snapshots_and_new_records() {
        // Turn 1 by an older Codex (token_count only), turn 2 by a newer one
        // (token_count and a record for the same response).
        let report = tally(UPGRADED).expect("usage");
        assert_eq!(fields(&report.total()), (2202, 2000, 0, 134, 10, 2));
    }

    #[test]
    fn records_fed_twice_count_once() {
        let twice =
            tally_files(&[(FILE, RESUMED), ("/elsewhere/copy.jsonl", RESUMED)]).expect("usage");
        assert_eq!(fields(&twice.total()), (2202, 2000, 0, 134, 10, 2));
    }

    #[test]
    fn a_thread_continued_in_a_second_file_counts_only_the_new_part() {
        // The second file opens with the first turn's total again, then grows
        // by one request.
        let lines: Vec<&str> = RESUMED
            .lines()
            .filter(|l| !l.contains("token_usage_record"))
            .collect();
        let split = lines
            .iter()
            .position(|l| l.contains("Reply with exactly: SECOND"))
            .expect("second turn");
        let old_total = lines[..split]
            .iter()
            .rev()
            .find(|l| l.contains("total_token_usage"))
            .expect("turn 1 total");
        let head = lines[..split].join("\n");
        let tail = [lines[0], old_total]
            .into_iter()
            .chain(lines[split..].iter().copied())
            .collect::<Vec<_>>()
            .join("\n");
        let first = tally_files(&[(FILE, &head)]).expect("usage");
        assert_eq!(fields(&first.total()), (1101, 1000, 0, 67, 5, 1));
        let both = tally_files(&[
            (FILE, &head),
            ("/h/.codex/sessions/2026/12/01/rollout-b.jsonl", &tail),
        ])
        .expect("usage");
        assert_eq!(fields(&both.total()), (2202, 2000, 0, 134, 10, 2));
        assert!(both.entries.iter().all(|e| e.session == THREAD));
    }

    #[test]
    fn a_total_that_drops_restarts_the_count() {
        let row = |i: u64, c: u64, o: u64| {
            format!(
                r#"{{"timestamp":"2026-11-30T10:00:00Z","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{i},"cached_input_tokens":{c},"output_tokens":{o}}}}}}}}}"#
            )
        };
        let text = [
            row(500, 200, 60),
            row(500, 200, 60),
            row(100, 40, 10),
            row(150, 40, 20),
        ]
        .join("\n");
        let report = tally(&text).expect("usage");
        // 500/200/60, then a restart at 100/40/10, then +50/0/+10.
        assert_eq!(fields(&report.total()), (300 + 60 + 50, 240, 0, 80, 0, 3));
        assert_eq!(
            report.entries[0].session, THREAD,
            "session from the file name without session_meta"
        );
    }

    #[test]
    fn null_info_and_no_usage_rows_are_none_zero_usage_is_zero() {
        let null_info = r#"{"timestamp":"2026-11-30T10:00:00Z","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":7.0}}}}"#;
        let meta = r#"{"timestamp":"2026-11-30T10:00:00Z","type":"session_meta","payload":{"id":"t","cwd":"/w"}}"#;
        assert_eq!(tally(&format!("{meta}\n{null_info}\n")), None);
        assert_eq!(
            tally("{\"type\":\"response_item\",\"payload\":{\"type\":\"message\"}}\n"),
            None
        );
        let zero = r#"{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":0,"output_tokens":0}}}}"#;
        let report = tally(zero).expect("tracked");
        assert_eq!((report.total(), report.entries.len()), (Usage::ZERO, 0));
    }

    #[test]
    fn flat_info_spacing_and_garbage() {
        let flat = r#"{"type": "event_msg", "payload": {"type": "token_count", "info": {"input_tokens": 500, "cached_input_tokens": 200, "output_tokens": 60}}}"#;
        let odd = r#"{"type":"event_msg","payload":{"type":"token_count","info":"soon"}}"#;
        let text = format!(
            "not json \"token_count\"\n{flat}\n{odd}\n{{\"type\":\"turn_context\",\"payload\":{{\"model\":7}}}}\n"
        );
        let report = tally(&text).expect("usage");
        assert_eq!(report.rejected_rows, 1);
        assert_eq!(fields(&report.total()), (300, 200, 0, 60, 0, 1));
        assert_eq!(report.entries[0].model, "");
    }

    #[test]
    fn session_ids_from_file_names() {
        assert_eq!(session_of_file(FILE), THREAD);
        assert_eq!(session_of_file("notes.jsonl"), "notes");
        assert_eq!(
            session_of_file("rollout-é-019a9776-0a34-7842-8627-112b63d66e9x.jsonl"),
            "rollout-é-019a9776-0a34-7842-8627-112b63d66e9x"
        );
    }
}
