//! The `gemini-chat` usage parser.
//!
//! Gemini CLI (since April 2026) records a chat as a JSONL patch stream in
//! `~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl`: a header
//! `{sessionId, projectHash, startTime, lastUpdated, kind}`, message rows
//! `{id, timestamp, type, content, tokens{input,output,cached,thoughts,tool,
//! total}, model}`, `{"$set": {…}}` patches (a `messages` array there is a
//! checkpoint that repeats earlier messages) and `{"$rewindTo": id}`.
//!
//! Counting rules:
//! - One Gemini message is one API response. A message is written again
//!   when its tokens or tool calls arrive and when a checkpoint repeats it:
//!   the last occurrence of an id that carries `tokens` wins, so nothing is
//!   counted twice. An id can also recur in another file of the same
//!   session (resuming a legacy `.json` chat copies it into a new
//!   `.jsonl`); across files only growth is added, since the ledger cannot
//!   take counts back (Gemini writes a message's tokens once, so such
//!   copies are identical).
//! - A rewind removes messages from the conversation, not from the bill:
//!   rewound messages still count.
//! - `input` includes cached tokens and `output` excludes thoughts: input is
//!   `input - cached`, output `output + thoughts`. `tool` is left out, as
//!   Gemini's own stats leave it out of input.
//! - Subagent chats live in `chats/<parent session id>/<id>.jsonl` and are
//!   counted under the parent session.
//!
//! Chats written before the JSONL switch are one pretty-printed JSON
//! document (`session-*.json`, `{sessionId, …, messages: […]}`); a file whose
//! name ends in `.json` is read whole when it ends.

use std::collections::HashMap;

use drover_kit::Usage;
use drover_kit::usage::{Count, Ledger, RowParser, contains, day_of};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// The parser of that name, if it is this adapter's.
pub fn parser(name: &str) -> Option<Box<dyn RowParser>> {
    (name == crate::PARSER).then(|| Box::new(GeminiChat::default()) as Box<dyn RowParser>)
}

/// A legacy chat document larger than this is rejected rather than held.
const MAX_DOCUMENT_BYTES: usize = 64 << 20;

#[derive(Default)]
pub struct GeminiChat {
    /// Messages counted by earlier files: (session, id) -> (ledger cell, usage).
    counted: HashMap<(String, String), (usize, Usage)>,
    file: FileState,
}

#[derive(Default)]
struct FileState {
    /// The file name without folder and extension: the session of last resort.
    stem: String,
    /// The parent session a subagent chat's folder names.
    parent_session: Option<String>,
    /// The session id the file's header (or a `$set`) gives.
    session: Option<String>,
    /// `Some` while buffering a legacy single-document chat.
    document: Option<Vec<u8>>,
    /// The document outgrew [`MAX_DOCUMENT_BYTES`]; the rest is skipped.
    overflowed: bool,
    /// Message ids in first-seen order, and their latest usage.
    order: Vec<String>,
    pending: HashMap<String, Pending>,
}

struct Pending {
    day: String,
    model: String,
    usage: Usage,
}

/// A field read leniently: a value of the wrong shape is absent rather
/// than a reason to drop the whole row.
struct Loose<T>(Option<T>);

impl<T> Default for Loose<T> {
    fn default() -> Self {
        Loose(None)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Loose<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(Loose(T::deserialize(value).ok()))
    }
}

/// One JSONL row, or a whole legacy document: the row may itself be a
/// message, a `$set` patch, or a header (with `messages` when a legacy
/// record sits on one line). Content fields are skipped unread.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Row {
    #[serde(rename = "sessionId")]
    session_id: Loose<String>,
    #[serde(rename = "$set")]
    set: Loose<Patch>,
    messages: Loose<Vec<Loose<Message>>>,
    id: Loose<String>,
    tokens: Loose<Tokens>,
    model: Loose<String>,
    timestamp: Loose<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Patch {
    #[serde(rename = "sessionId")]
    session_id: Loose<String>,
    messages: Loose<Vec<Loose<Message>>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Message {
    id: Loose<String>,
    tokens: Loose<Tokens>,
    model: Loose<String>,
    timestamp: Loose<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Tokens {
    input: Count,
    output: Count,
    cached: Count,
    thoughts: Count,
}

impl GeminiChat {
    fn jsonl_row(&mut self, line: &[u8], ledger: &mut Ledger) {
        let has_tokens = contains(line, b"\"tokens\"");
        if !has_tokens && !contains(line, b"\"sessionId\"") {
            return;
        }
        match serde_json::from_slice::<Row>(line) {
            Ok(row) => self.take_row(row, ledger),
            Err(_) if has_tokens => ledger.reject(),
            Err(_) => {}
        }
    }

    fn take_row(&mut self, row: Row, ledger: &mut Ledger) {
        let Row {
            session_id,
            set,
            messages,
            id,
            tokens,
            model,
            timestamp,
        } = row;
        if let Some(session) = session_id.0.filter(|s| !s.is_empty()) {
            self.file.session = Some(session);
        }
        self.take_message(
            Message {
                id,
                tokens,
                model,
                timestamp,
            },
            ledger,
        );
        let mut lists = vec![messages.0];
        if let Some(patch) = set.0 {
            if let Some(session) = patch.session_id.0.filter(|s| !s.is_empty()) {
                self.file.session = Some(session);
            }
            lists.push(patch.messages.0);
        }
        for message in lists.into_iter().flatten().flatten() {
            if let Some(message) = message.0 {
                self.take_message(message, ledger);
            }
        }
    }

    fn take_message(&mut self, message: Message, ledger: &mut Ledger) {
        let Some(tokens) = message.tokens.0 else {
            return;
        };
        ledger.mark_seen();
        let Some(id) = message.id.0.filter(|id| !id.is_empty()) else {
            // Usage without an id cannot be told apart from its copies.
            ledger.reject();
            return;
        };
        let usage = Usage {
            input: tokens.input.0.saturating_sub(tokens.cached.0),
            output: tokens.output.0.saturating_add(tokens.thoughts.0),
            cache_read: tokens.cached.0,
            cache_write: 0,
            reasoning: tokens.thoughts.0,
            requests: 1,
        };
        let pending = Pending {
            day: message
                .timestamp
                .0
                .as_deref()
                .map(day_of)
                .unwrap_or("")
                .to_string(),
            model: message.model.0.unwrap_or_default(),
            usage,
        };
        if self.file.pending.insert(id.clone(), pending).is_none() {
            self.file.order.push(id);
        }
    }

    fn read_document(&mut self, document: &[u8], ledger: &mut Ledger) {
        if document.trim_ascii().is_empty() {
            return;
        }
        match serde_json::from_slice::<Row>(document) {
            Ok(row) => self.take_row(row, ledger),
            // Not one document after all: read it as JSONL.
            Err(_) => {
                for line in document.split(|&b| b == b'\n') {
                    self.jsonl_row(line, ledger);
                }
            }
        }
    }
}

/// `(stem, parent session)` of a chat file path.
fn file_names(path: &str) -> (String, Option<String>) {
    let parts: Vec<&str> = path.split(['/', '\\']).filter(|p| !p.is_empty()).collect();
    let file = parts.last().copied().unwrap_or("");
    let stem = file
        .strip_suffix(".jsonl")
        .or_else(|| file.strip_suffix(".json"))
        .unwrap_or(file);
    let parent = match parts.as_slice() {
        [.., "chats", parent, _] if *parent != "chats" => Some((*parent).to_string()),
        _ => None,
    };
    (stem.to_string(), parent)
}

impl RowParser for GeminiChat {
    fn begin_file(&mut self, name: &str) {
        let (stem, parent_session) = file_names(name);
        self.file = FileState {
            stem,
            parent_session,
            document: name.ends_with(".json").then(Vec::new),
            ..FileState::default()
        };
    }

    fn row(&mut self, line: &[u8], ledger: &mut Ledger) {
        if self.file.overflowed {
            return;
        }
        match self.file.document.as_mut() {
            Some(buffer) if buffer.len() + line.len() >= MAX_DOCUMENT_BYTES => {
                self.file.document = None;
                self.file.overflowed = true;
                ledger.reject();
            }
            Some(buffer) => {
                buffer.extend_from_slice(line);
                buffer.push(b'\n');
            }
            None => self.jsonl_row(line, ledger),
        }
    }

    fn end_file(&mut self, ledger: &mut Ledger) {
        if let Some(document) = self.file.document.take() {
            self.read_document(&document, ledger);
        }
        let file = std::mem::take(&mut self.file);
        let session = file.parent_session.or(file.session).unwrap_or(file.stem);
        let mut pending = file.pending;
        for id in file.order {
            let Some(p) = pending.remove(&id) else {
                continue;
            };
            let key = (session.clone(), id);
            match self.counted.get_mut(&key) {
                Some((cell, counted)) => {
                    let extra = p.usage.minus(counted);
                    if !extra.is_zero() {
                        ledger.add_at(*cell, &extra);
                        counted.add(&extra);
                    }
                }
                None => {
                    let cell = ledger.cell(&session, &p.day, &p.model);
                    ledger.add_at(cell, &p.usage);
                    self.counted.insert(key, (cell, p.usage));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::UsageReport;

    const SESSION: &str = include_str!("../fixtures/chat-session.jsonl");
    const LEGACY: &str = include_str!("../fixtures/chat-legacy.json");
    const SUBAGENT: &str = include_str!("../fixtures/chat-subagent.jsonl");
    const MAIN_PATH: &str = "/h/.gemini/tmp/gemini/chats/session-2026-11-30T10-00-7c0e5d2a.jsonl";

    /// Tallies `(file name, text)` pairs in one tally, in small chunks so
    /// rows straddle chunk boundaries.
    fn tally(files: &[(&str, &str)]) -> Option<UsageReport> {
        drover_kit::testing::tally::<crate::Gemini>(crate::PARSER, files, 41)
    }

    fn fields(u: Usage) -> (u64, u64, u64, u64, u64, u64) {
        (
            u.input,
            u.output,
            u.cache_read,
            u.cache_write,
            u.reasoning,
            u.requests,
        )
    }

    #[test]
    fn re_emitted_and_checkpointed_messages_count_once() {
        // g1, g2 (written three times, repeated by a checkpoint) and g3 each
        // carry the scripted server's prompt 4101 / cached 400 / candidates
        // 87 / thoughts 9 (docs/adapters/gemini.md).
        let report = tally(&[(MAIN_PATH, SESSION)]).expect("usage");
        assert_eq!(report.rejected_rows, 0);
        assert_eq!(
            fields(report.total()),
            (3 * (4101 - 400), 3 * (87 + 9), 3 * 400, 0, 3 * 9, 3)
        );
        let cells: Vec<(&str, &str, &str, u64)> = report
            .entries
            .iter()
            .map(|e| {
                (
                    e.session.as_str(),
                    e.day.as_str(),
                    e.model.as_str(),
                    e.usage.requests,
                )
            })
            .collect();
        assert_eq!(
            cells,
            [
                (
                    "7c0e5d2a-9b1f-4e43-8a47-1f2d3c4b5a69",
                    "2026-11-30",
                    "gemini-3.8-flash",
                    2
                ),
                (
                    "7c0e5d2a-9b1f-4e43-8a47-1f2d3c4b5a69",
                    "2026-12-01",
                    "gemini-3.8-flash",
                    1
                ),
            ]
        );
    }

    #[test]
    fn bmad_loops_pinned_example() {
        // bmad-loop's adapter guide: g1 twice (12273/45/0/87) + g2
        // (12429/2/11367/16) => input 12273+1062, cache_read 11367,
        // output (45+87)+(2+16).
        let text = [
            r#"{"sessionId":"s1","projectHash":"x","kind":"main"}"#,
            r#"{"$set":{"messages":[{"id":"u1","type":"user","content":[]}]}}"#,
            r#"{"id":"g1","type":"gemini","tokens":{"input":12273,"output":45,"cached":0,"thoughts":87,"tool":0}}"#,
            r#"{"$set":{"lastUpdated":"..."}}"#,
            r#"{"id":"g1","type":"gemini","toolCalls":[{}],"tokens":{"input":12273,"output":45,"cached":0,"thoughts":87,"tool":0}}"#,
            r#"{"id":"g2","type":"gemini","tokens":{"input":12429,"output":2,"cached":11367,"thoughts":16,"tool":0}}"#,
        ]
        .join("\n");
        let report = tally(&[("chats/session-x.jsonl", &text)]).expect("usage");
        let total = report.total();
        assert_eq!(
            (
                total.input,
                total.cache_read,
                total.output,
                total.reasoning,
                total.requests
            ),
            (12273 + 1062, 11367, (45 + 87) + (2 + 16), 87 + 16, 2)
        );
        assert_eq!(report.entries[0].session, "s1");
    }

    #[test]
    fn within_a_file_the_last_occurrence_wins() {
        let text = [
            r#"{"id":"g1","type":"gemini","tokens":{"input":10,"output":5,"cached":0,"thoughts":0}}"#,
            r#"{"id":"g1","type":"gemini","tokens":{"input":7,"output":2,"cached":1,"thoughts":1}}"#,
            r#"{"id":"g1","type":"gemini","content":"no tokens this time"}"#,
        ]
        .join("\n");
        let report =
            tally(&[("/x/chats/session-2026-01-01T00-00-abcd1234.jsonl", &text)]).expect("usage");
        assert_eq!(fields(report.total()), (6, 3, 1, 0, 1, 1));
        // No header: the file name stands in for the session.
        assert_eq!(
            report.entries[0].session,
            "session-2026-01-01T00-00-abcd1234"
        );
    }

    #[test]
    fn legacy_documents_are_read_whole() {
        let report = tally(&[(
            "/h/.gemini/tmp/p/chats/session-2026-03-02T09-00-0f4e2b1a.json",
            LEGACY,
        )])
        .expect("usage");
        assert_eq!(
            fields(report.total()),
            (
                (4101 - 400) + (12429 - 11367),
                (87 + 9) + (2 + 16),
                400 + 11367,
                0,
                9 + 16,
                2
            )
        );
        assert_eq!(report.entries.len(), 1);
        assert_eq!(
            (
                report.entries[0].session.as_str(),
                report.entries[0].day.as_str()
            ),
            ("0f4e2b1a-5d6c-4e7f-8a9b-0c1d2e3f4a5b", "2026-03-02")
        );
    }

    #[test]
    fn a_migrated_legacy_chat_is_not_counted_twice() {
        // Resuming a legacy chat copies its messages into `<name>.jsonl`
        // and appends the new turn.
        let migrated = [
            r#"{"sessionId":"0f4e2b1a-5d6c-4e7f-8a9b-0c1d2e3f4a5b","projectHash":"p","startTime":"2026-03-02T09:00:00.000Z","lastUpdated":"2026-03-02T09:05:00.000Z"}"#,
            r#"{"id":"l-g1","timestamp":"2026-03-02T09:00:02.000Z","type":"gemini","content":"OK","tokens":{"input":4101,"output":87,"cached":400,"thoughts":9,"tool":0,"total":4197},"model":"gemini-2.5-pro"}"#,
            r#"{"id":"l-g2","timestamp":"2026-03-02T09:04:00.000Z","type":"gemini","content":"Second answer","tokens":{"input":12429,"output":2,"cached":11367,"thoughts":16,"tool":0,"total":12447},"model":"gemini-2.5-pro"}"#,
            r#"{"id":"n-g3","timestamp":"2026-03-02T10:00:00.000Z","type":"gemini","content":"New","tokens":{"input":4101,"output":87,"cached":400,"thoughts":9,"tool":0,"total":4197},"model":"gemini-2.5-pro"}"#,
        ]
        .join("\n");
        let name = "/h/.gemini/tmp/p/chats/session-2026-03-02T09-00-0f4e2b1a.json";
        let both = tally(&[(name, LEGACY), (&format!("{name}l"), &migrated)]).expect("usage");
        assert_eq!(both.total().requests, 3);
        assert_eq!(both.total().input, 2 * (4101 - 400) + (12429 - 11367));
    }

    #[test]
    fn subagent_chats_count_under_the_parent_session() {
        let path =
            "/h/.gemini/tmp/gemini/chats/7c0e5d2a-9b1f-4e43-8a47-1f2d3c4b5a69/sub-8a1b2c3d.jsonl";
        let report = tally(&[(MAIN_PATH, SESSION), (path, SUBAGENT)]).expect("usage");
        let sub: Vec<_> = report
            .entries
            .iter()
            .filter(|e| e.model == "gemini-3.5-flash-lite")
            .collect();
        assert_eq!(sub.len(), 1);
        assert_eq!(sub[0].session, "7c0e5d2a-9b1f-4e43-8a47-1f2d3c4b5a69");
        assert_eq!(report.total().requests, 4);
        assert_eq!(file_names("/x/chats/chats/session-a.jsonl").1, None);
    }

    #[test]
    fn no_usage_is_none_and_zero_usage_is_zero() {
        assert_eq!(
            tally(&[(
                MAIN_PATH,
                "{\"sessionId\":\"s\"}\n{\"id\":\"u1\",\"type\":\"user\"}\n"
            )]),
            None
        );
        assert_eq!(tally(&[]), None);
        let zero = r#"{"id":"g1","type":"gemini","tokens":{"input":0,"output":0,"cached":0,"thoughts":0}}"#;
        // A response that reported no tokens is still one request.
        let report = tally(&[(MAIN_PATH, zero)]).expect("tracked");
        assert_eq!(fields(report.total()), (0, 0, 0, 0, 0, 1));
    }

    #[test]
    fn odd_rows_are_rejected_or_read_leniently() {
        let text = [
            r#"{"id":"g1","type":"gemini","tokens":{"input":4101,"output":87,"cached":400,"thoughts":9}"#, // torn
            r#"{"type":"gemini","tokens":{"input":5,"output":5}}"#,                                      // no id
            r#"{"id":7,"type":"gemini","tokens":{"input":5,"output":5}}"#,                                // id not a string
            r#"{"id":"g2","type":"gemini","tokens":{"input":"12","output":-1,"cached":null,"thoughts":2.9},"model":["x"],"timestamp":5}"#,
            r#"{"id":"g3","type":"gemini","tokens":"lots"}"#,                                             // not usage
            "not json \"sessionId\"",
        ]
        .join("\n");
        let report = tally(&[(MAIN_PATH, &text)]).expect("usage");
        assert_eq!(report.rejected_rows, 3);
        assert_eq!(fields(report.total()), (0, 2, 0, 0, 2, 1));
        assert_eq!(
            (
                report.entries[0].model.as_str(),
                report.entries[0].day.as_str()
            ),
            ("", "")
        );
    }

    #[test]
    fn a_json_named_file_holding_jsonl_is_still_read() {
        let report = tally(&[("/x/chats/session-a.json", SESSION)]).expect("usage");
        assert_eq!(report.total().requests, 3);
        // A torn document whose lines read nothing either: no usage at all.
        let torn = "{\n  \"messages\": [\n    {\"id\": \"g\", \"tokens\": {\n";
        assert_eq!(tally(&[("/x/chats/session-b.json", torn)]), None);
    }
}
