//! opencode's usage parsers.
//!
//! - `opencode-db`: rows of opencode's SQLite `message` table
//!   (`~/.local/share/opencode/opencode.db`; 1.18.33's columns are `id`,
//!   `session_id`, `time_created`, `time_updated`, `data`, with `data` a TEXT
//!   column holding JSON). The engine reads the database and feeds one JSON
//!   object per row per line:
//!   `{"id": "<message id>", "session_id": "<session id>", "data": {…}}`.
//!   `data` may be the parsed object or the column's text as a JSON string
//!   (what `sqlite3 -json` prints); other columns are ignored. Assistant
//!   messages carry `tokens{input, output, reasoning, cache{read, write}}`,
//!   `modelID` and `time.created` (epoch ms). One assistant message is one
//!   model call. Title generation (one call per new session, no tools) is
//!   billed but stored in no message, so it is not counted.
//! - `opencode-json`: the stdout of `opencode run --format json`, so a saved
//!   headless log can be tallied: each `step_finish` line's `part.tokens` is
//!   one model call.
//!
//! opencode's `tokens.input` already excludes cache reads (input 2801 =
//! prompt 3101 − cached 300) and `tokens.output` excludes reasoning, so
//! output = output + reasoning. Rows are deduplicated by message (db) or
//! part (json) id. A message with all-zero tokens (a call that failed or is
//! still streaming) is usage data that counts nothing, not even a request.

use std::collections::HashSet;

use drover_kit::Usage;
use drover_kit::usage::{Count, Ledger, RowParser, contains, day_of_millis, key_of};
use serde::Deserialize;

pub const DB: &str = "opencode-db";
pub const JSON: &str = "opencode-json";

/// The parser of that name, if it is this adapter's.
pub fn parser(name: &str) -> Option<Box<dyn RowParser>> {
    match name {
        DB => Some(Box::new(Rows::new(Source::Db))),
        JSON => Some(Box::new(Rows::new(Source::Json))),
        _ => None,
    }
}

/// `tokens` of an assistant message or a step-finish part.
#[derive(Deserialize, Default, Clone, Copy)]
pub(crate) struct Tokens {
    #[serde(default)]
    input: Count,
    #[serde(default)]
    output: Count,
    #[serde(default)]
    reasoning: Count,
    #[serde(default)]
    cache: Cache,
}

#[derive(Deserialize, Default, Clone, Copy)]
struct Cache {
    #[serde(default)]
    read: Count,
    #[serde(default)]
    write: Count,
}

/// A string field read leniently: anything but a non-empty string is absent,
/// so one odd field does not cost the whole row.
#[derive(Default)]
struct Text(Option<String>);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Text, D::Error> {
        Ok(match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::String(s) if !s.is_empty() => Text(Some(s)),
            _ => Text(None),
        })
    }
}

impl Tokens {
    /// One call's usage; all-zero counts are no request.
    pub(crate) fn usage(&self) -> Usage {
        let mut usage = Usage {
            input: self.input.0,
            output: self.output.0.saturating_add(self.reasoning.0),
            cache_read: self.cache.read.0,
            cache_write: self.cache.write.0,
            reasoning: self.reasoning.0,
            requests: 0,
        };
        usage.requests = u64::from(!usage.is_zero());
        usage
    }
}

#[derive(Clone, Copy)]
enum Source {
    Db,
    Json,
}

struct Rows {
    source: Source,
    seen: HashSet<u64>,
    file_session: String,
}

impl Rows {
    fn new(source: Source) -> Rows {
        Rows {
            source,
            seen: HashSet::new(),
            file_session: String::new(),
        }
    }
}

#[derive(Deserialize)]
struct DbRow {
    #[serde(default)]
    id: Text,
    #[serde(default)]
    session_id: Text,
    #[serde(default)]
    data: DataColumn,
}

/// The `data` column: the message object, or its JSON text.
#[derive(Default)]
struct DataColumn(Option<Message>);

impl<'de> Deserialize<'de> for DataColumn {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<DataColumn, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::Null => Ok(DataColumn(None)),
            serde_json::Value::String(text) => serde_json::from_str(&text)
                .map(|m| DataColumn(Some(m)))
                .map_err(D::Error::custom),
            value => serde_json::from_value(value)
                .map(|m| DataColumn(Some(m)))
                .map_err(D::Error::custom),
        }
    }
}

/// What every readable `message` row with usage contains: `"tokens"` in an
/// object, `\"tokens\"` in the column's JSON text.
pub const DB_NEEDLES: &[&str] = &["\"tokens\"", "\\\"tokens\\\""];

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    id: Text,
    #[serde(rename = "sessionID", default)]
    session_id: Text,
    #[serde(default)]
    role: Text,
    #[serde(rename = "modelID", default)]
    model_id: Text,
    #[serde(default)]
    time: Option<Times>,
    #[serde(default)]
    tokens: Option<Tokens>,
}

#[derive(Deserialize, Default)]
struct Times {
    #[serde(default)]
    created: Count,
}

#[derive(Deserialize)]
struct JsonLine {
    #[serde(rename = "type", default)]
    kind: Text,
    #[serde(default)]
    timestamp: Count,
    #[serde(rename = "sessionID", default)]
    session_id: Text,
    #[serde(default)]
    part: Option<StepPart>,
}

#[derive(Deserialize)]
struct StepPart {
    #[serde(default)]
    id: Text,
    #[serde(rename = "sessionID", default)]
    session_id: Text,
    #[serde(default)]
    tokens: Option<Tokens>,
}

/// One counted call: its dedupe id, session, day and model.
struct Call {
    id: Option<String>,
    session: Option<String>,
    day: String,
    model: String,
    tokens: Tokens,
}

impl Rows {
    /// The call a line describes; `Err` for a line that should have been
    /// one but cannot be read; `Ok(None)` for other lines.
    fn call(&self, line: &[u8]) -> Result<Option<Call>, ()> {
        match self.source {
            Source::Db => {
                if !DB_NEEDLES.iter().any(|n| contains(line, n.as_bytes())) {
                    return Ok(None);
                }
                let row: DbRow = serde_json::from_slice(line).map_err(|_| ())?;
                let Some(message) = row.data.0 else {
                    return Ok(None);
                };
                if message.role.0.as_deref() != Some("assistant") {
                    return Ok(None);
                }
                let Some(tokens) = message.tokens else {
                    return Ok(None);
                };
                Ok(Some(Call {
                    id: row.id.0.or(message.id.0),
                    session: row.session_id.0.or(message.session_id.0),
                    day: day_of_millis(message.time.unwrap_or_default().created.0),
                    model: message.model_id.0.unwrap_or_default(),
                    tokens,
                }))
            }
            Source::Json => {
                if !contains(line, b"\"step_finish\"") {
                    return Ok(None);
                }
                let row: JsonLine = serde_json::from_slice(line).map_err(|_| ())?;
                if row.kind.0.as_deref() != Some("step_finish") {
                    return Ok(None);
                }
                let Some(part) = row.part else {
                    return Ok(None);
                };
                let Some(tokens) = part.tokens else {
                    return Ok(None);
                };
                Ok(Some(Call {
                    id: part.id.0,
                    session: row.session_id.0.or(part.session_id.0),
                    day: day_of_millis(row.timestamp.0),
                    model: String::new(),
                    tokens,
                }))
            }
        }
    }
}

impl RowParser for Rows {
    fn begin_file(&mut self, name: &str) {
        let file = name.rsplit('/').next().unwrap_or(name);
        let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
        self.file_session = stem.to_string();
    }

    fn row(&mut self, line: &[u8], ledger: &mut Ledger) {
        let call = match self.call(line) {
            Ok(Some(call)) => call,
            Ok(None) => return,
            Err(()) => {
                ledger.reject();
                return;
            }
        };
        ledger.mark_seen();
        if let Some(id) = &call.id
            && !self.seen.insert(key_of(&[id]))
        {
            return;
        }
        let usage = call.tokens.usage();
        if usage.is_zero() {
            return;
        }
        let session = call.session.unwrap_or_else(|| self.file_session.clone());
        ledger.add(&session, &call.day, &call.model, &usage);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DB_ROWS: &str = include_str!("../fixtures/db-messages.jsonl");
    const RUN_JSON: &str = include_str!("../fixtures/run-success.jsonl");

    fn tally(parser: &str, files: &[(&str, &str)]) -> Option<drover_kit::UsageReport> {
        drover_kit::testing::tally::<crate::Opencode>(parser, files, 29)
    }

    #[test]
    fn db_rows_count_assistant_messages_once() {
        // Two turns against the scripted Chat Completions server (prompt 3101,
        // cached 300, completion 77) plus a reasoning model's call, with user
        // rows, an in-flight zero row and a re-fed copy mixed in.
        let report =
            tally(DB, &[("opencode.db", DB_ROWS), ("opencode.db", DB_ROWS)]).expect("usage");
        assert_eq!(report.rejected_rows, 0);
        let fake: Vec<_> = report
            .entries
            .iter()
            .filter(|e| e.model == "fake-model")
            .collect();
        assert_eq!(fake.len(), 1);
        assert_eq!(
            (fake[0].session.as_str(), fake[0].day.as_str()),
            ("ses_3a1f0c2b7ffeAbCdEfGhIjKlMn", "2026-11-30")
        );
        let u = fake[0].usage;
        assert_eq!(
            (
                u.input,
                u.output,
                u.cache_read,
                u.cache_write,
                u.reasoning,
                u.requests
            ),
            (5602, 154, 600, 0, 0, 2)
        );
        let thinking = report
            .entries
            .iter()
            .find(|e| e.model == "fake-reasoner")
            .expect("second model");
        let u = thinking.usage;
        // Responses-style counts: input 2101 with 1000 cached → 1101 uncached; output 62 + reasoning 5 (opencode keeps them apart).
        assert_eq!(
            (
                u.input,
                u.output,
                u.cache_read,
                u.cache_write,
                u.reasoning,
                u.requests
            ),
            (1101, 67, 1000, 12, 5, 1)
        );
        assert_eq!(thinking.day, "2026-12-01");
    }

    #[test]
    fn run_json_step_finishes_are_calls() {
        let report = tally(JSON, &[("/logs/turn-1.jsonl", RUN_JSON)]).expect("usage");
        let u = report.total();
        assert_eq!(
            (
                u.input,
                u.output,
                u.cache_read,
                u.cache_write,
                u.reasoning,
                u.requests
            ),
            (2801, 77, 300, 0, 0, 1)
        );
        assert_eq!(report.entries[0].session, "ses_3a1f0c2b7ffeAbCdEfGhIjKlMn");
        assert_eq!(report.entries[0].day, "2026-11-30");
        // The same log fed twice is the same calls.
        let twice = tally(JSON, &[("a.jsonl", RUN_JSON), ("b.jsonl", RUN_JSON)])
            .expect("usage")
            .total();
        assert_eq!(twice.requests, 1);
    }

    #[test]
    fn none_zero_and_garbage() {
        assert_eq!(
            tally(
                DB,
                &[(
                    "db",
                    "{\"id\":\"m\",\"data\":{\"role\":\"user\",\"tokens\":{}}}\n"
                )]
            ),
            None
        );
        assert_eq!(
            tally(
                JSON,
                &[(
                    "log",
                    "{\"type\":\"text\",\"part\":{\"text\":\"the step_finish event\"}}\n"
                )]
            ),
            None
        );
        let zero = "{\"id\":\"msg_z\",\"session_id\":\"ses_z\",\"data\":{\"role\":\"assistant\",\"tokens\":{\"input\":0,\"output\":0,\"reasoning\":0,\"cache\":{\"read\":0,\"write\":0}}}}";
        let report = tally(DB, &[("db", zero)]).expect("tracked");
        assert_eq!((report.total(), report.entries.len()), (Usage::ZERO, 0));
        let good = DB_ROWS.lines().find(|l| l.contains("msg_a1")).expect("row");
        let broken = format!("{{\"id\":\"x\",\"data\":{{\"tokens\":[}}\n{good}");
        let report = tally(DB, &[("db", &broken)]).expect("usage");
        assert_eq!((report.rejected_rows, report.total().input), (1, 2801));
        // Odd field types are read leniently rather than dropping the call.
        let hostile = "{\"id\":\"msg_h\",\"session_id\":[],\"data\":{\"role\":\"assistant\",\"modelID\":7,\"time\":{\"created\":-5},\"tokens\":{\"input\":\"9\",\"output\":1.9,\"reasoning\":null,\"cache\":[]}}}";
        let report = tally(DB, &[("/x/opencode.db", hostile)]).expect("usage");
        assert_eq!(report.rejected_rows, 0);
        let entry = &report.entries[0];
        assert_eq!(
            (
                entry.session.as_str(),
                entry.model.as_str(),
                entry.day.as_str()
            ),
            ("opencode", "", "")
        );
        assert_eq!(
            (entry.usage.input, entry.usage.output, entry.usage.requests),
            (0, 1, 1)
        );
    }
}
