//! The `qwen-chat` usage parser, over
//! `~/.qwen/projects/<slug>/chats/<session>.jsonl`.
//!
//! Rows are `{uuid, parentUuid, sessionId, timestamp, type, …}`; an
//! assistant row carries the call's Gemini-style `usageMetadata`
//! `{promptTokenCount, candidatesTokenCount, thoughtsTokenCount,
//! totalTokenCount, cachedContentTokenCount}` and its `model`.
//!
//! Counting rules:
//! - `promptTokenCount` includes the cached tokens (Chat Completions
//!   `prompt_tokens` does), so input = prompt − cached.
//! - One row is one API call. Rows are deduplicated by `uuid`; a re-written
//!   row that reports more adds only the difference.
//! - Rows a `/branch` copied from another session (`forkedFrom`) are that
//!   session's calls and count there, not again in the fork.
//! - `~/.qwen/usage_record.jsonl` holds cumulative per-session totals; it is
//!   a different file and is never mixed in.
//!
//! The chats miss calls: Qwen Code 0.24.4 makes a managed-auto-memory-
//! extractor call after each headless turn, billed like any other, that no
//! chat row records (tests/fixtures/real/qwen: the success + resume session
//! made four calls, its chat holds two).
//!
//! The `qwen-usage-record` parser reads `~/.qwen/usage_record.jsonl` instead:
//! one row per headless process, `{sessionId, timestamp (epoch ms), models:
//! {<model>: {requests, inputTokens, outputTokens, cachedTokens,
//! thoughtsTokens, totalTokens}}}`, a running total per session (a resumed
//! session's row includes the earlier processes). Each row adds its growth
//! over the session's previous row; a row lower than the previous one starts
//! over. Growth without tokens (failed attempts, which `requests` counts too)
//! is no request. It matches the server's count of answered calls, memory
//! extractor included; a process whose calls partly failed over-counts
//! requests by its failed attempts. Interactive sessions write no row.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use drover_kit::Usage;
use drover_kit::usage::{Count, Ledger, RowParser, contains, day_of, day_of_millis, key_of};
use serde::Deserialize;

/// The parser of that name, if it is this adapter's.
pub fn parser(name: &str) -> Option<Box<dyn RowParser>> {
    match name {
        crate::PARSER => Some(Box::new(QwenChat::default())),
        RECORD_PARSER => Some(Box::new(UsageRecord::default())),
        _ => None,
    }
}

/// The parser for `~/.qwen/usage_record.jsonl`.
pub const RECORD_PARSER: &str = "qwen-usage-record";

/// Output and reasoning from Gemini-style counts. Gemini reports thoughts
/// apart from candidates (total = prompt + candidates + thoughts), while
/// Qwen's OpenAI-compatible path puts the whole `completion_tokens` (which
/// already holds reasoning) in candidates (total = prompt + candidates). The
/// total says which; without one, the Gemini convention is assumed.
pub(crate) fn split_output(prompt: u64, candidates: u64, thoughts: u64, total: u64) -> (u64, u64) {
    if thoughts == 0 {
        return (candidates, 0);
    }
    if total != 0 && total == prompt.saturating_add(candidates) {
        return (candidates, thoughts.min(candidates));
    }
    (candidates.saturating_add(thoughts), thoughts)
}

#[derive(Default)]
pub struct QwenChat {
    /// row uuid -> (ledger cell, usage counted so far)
    seen: HashMap<u64, (usize, Usage)>,
    file_session: String,
}

#[derive(Deserialize)]
struct Row<'a> {
    #[serde(borrow, default)]
    uuid: Option<Cow<'a, str>>,
    #[serde(rename = "sessionId", borrow, default)]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(rename = "usageMetadata", default)]
    usage: Option<Metadata>,
    #[serde(rename = "forkedFrom", default)]
    forked_from: Option<serde::de::IgnoredAny>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    #[serde(default)]
    prompt_token_count: Count,
    #[serde(default)]
    candidates_token_count: Count,
    #[serde(default)]
    thoughts_token_count: Count,
    #[serde(default)]
    total_token_count: Count,
    #[serde(default)]
    cached_content_token_count: Count,
}

impl Metadata {
    fn usage(&self) -> Usage {
        let prompt = self.prompt_token_count.0;
        let cached = self.cached_content_token_count.0;
        let (output, reasoning) = split_output(
            prompt,
            self.candidates_token_count.0,
            self.thoughts_token_count.0,
            self.total_token_count.0,
        );
        Usage {
            input: prompt.saturating_sub(cached),
            output,
            cache_read: cached,
            cache_write: 0,
            reasoning,
            requests: 1,
        }
    }
}

/// Field-wise growth of `now` over `before` (zero where it shrank).
fn growth(now: &Usage, before: &Usage) -> Usage {
    Usage {
        requests: 0,
        ..now.minus(before)
    }
}

fn max_of(a: &Usage, b: &Usage) -> Usage {
    Usage {
        input: a.input.max(b.input),
        output: a.output.max(b.output),
        cache_read: a.cache_read.max(b.cache_read),
        cache_write: a.cache_write.max(b.cache_write),
        reasoning: a.reasoning.max(b.reasoning),
        requests: a.requests.max(b.requests),
    }
}

impl RowParser for QwenChat {
    fn begin_file(&mut self, name: &str) {
        let file = name.rsplit('/').next().unwrap_or(name);
        self.file_session = file.strip_suffix(".jsonl").unwrap_or(file).to_string();
    }

    fn row(&mut self, line: &[u8], ledger: &mut Ledger) {
        if !contains(line, b"\"usageMetadata\"") {
            return;
        }
        let Ok(row) = serde_json::from_slice::<Row<'_>>(line) else {
            ledger.reject();
            return;
        };
        // Only the call's own assistant row counts; a user row quoting the
        // key in its text does not.
        if row.kind.as_deref() != Some("assistant") {
            return;
        }
        let Some(metadata) = row.usage else {
            return;
        };
        ledger.mark_seen();
        if row.forked_from.is_some() {
            return;
        }
        let usage = metadata.usage();
        let key = row
            .uuid
            .as_deref()
            .filter(|u| !u.is_empty())
            .map(|u| key_of(&[u]));
        if let Some(key) = key
            && let Some((cell, counted)) = self.seen.get_mut(&key)
        {
            let extra = growth(&usage, counted);
            if !extra.is_zero() {
                ledger.add_at(*cell, &extra);
                *counted = max_of(counted, &usage);
            }
            return;
        }
        let session = row
            .session_id
            .as_deref()
            .filter(|s| !s.is_empty())
            .unwrap_or(&self.file_session);
        let day = row.timestamp.as_deref().map(day_of).unwrap_or("");
        let cell = ledger.cell(session, day, row.model.as_deref().unwrap_or(""));
        ledger.add_at(cell, &usage);
        if let Some(key) = key {
            self.seen.insert(key, (cell, usage));
        }
    }
}

/// `usage_record.jsonl`: running totals per (session, model).
#[derive(Default)]
pub struct UsageRecord {
    last: HashMap<(String, String), Usage>,
    file_session: String,
}

#[derive(Deserialize)]
struct Record {
    #[serde(rename = "sessionId", default)]
    session_id: Option<String>,
    #[serde(default)]
    timestamp: Count,
    #[serde(default)]
    models: Option<BTreeMap<String, RecordModel>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RecordModel {
    #[serde(default)]
    requests: Count,
    #[serde(default)]
    input_tokens: Count,
    #[serde(default)]
    output_tokens: Count,
    #[serde(default)]
    cached_tokens: Count,
    #[serde(default)]
    thoughts_tokens: Count,
    #[serde(default)]
    total_tokens: Count,
}

impl RecordModel {
    fn usage(&self) -> Usage {
        let prompt = self.input_tokens.0;
        let cached = self.cached_tokens.0;
        let (output, reasoning) = split_output(
            prompt,
            self.output_tokens.0,
            self.thoughts_tokens.0,
            self.total_tokens.0,
        );
        Usage {
            input: prompt.saturating_sub(cached),
            output,
            cache_read: cached,
            cache_write: 0,
            reasoning,
            requests: self.requests.0,
        }
    }
}

/// Whether every field of `now` is at least `before`'s.
fn covers(now: &Usage, before: &Usage) -> bool {
    now.input >= before.input
        && now.output >= before.output
        && now.cache_read >= before.cache_read
        && now.cache_write >= before.cache_write
        && now.reasoning >= before.reasoning
        && now.requests >= before.requests
}

impl RowParser for UsageRecord {
    fn begin_file(&mut self, name: &str) {
        let file = name.rsplit('/').next().unwrap_or(name);
        self.file_session = file.strip_suffix(".jsonl").unwrap_or(file).to_string();
    }

    fn row(&mut self, line: &[u8], ledger: &mut Ledger) {
        if !contains(line, b"\"models\"") {
            return;
        }
        let Ok(record) = serde_json::from_slice::<Record>(line) else {
            ledger.reject();
            return;
        };
        let Some(models) = record.models else {
            return;
        };
        ledger.mark_seen();
        let session = record
            .session_id
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| self.file_session.clone());
        let day = day_of_millis(record.timestamp.0);
        for (model, figures) in models {
            let now = figures.usage();
            let key = (session.clone(), model.clone());
            let growth = match self.last.get(&key) {
                Some(before) if covers(&now, before) => now.minus(before),
                _ => now,
            };
            self.last.insert(key, now);
            let tokens = Usage {
                requests: 0,
                ..growth
            };
            if tokens.is_zero() {
                continue;
            }
            ledger.add(&session, &day, &model, &growth);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAT: &str = include_str!("../fixtures/chat.jsonl");

    fn tally(files: &[(&str, &str)]) -> Option<drover_kit::UsageReport> {
        drover_kit::testing::tally::<crate::Qwen>(crate::PARSER, files, 41)
    }

    #[test]
    fn the_scripted_chat_counts_match_the_reference() {
        // Two Chat Completions calls of prompt 3101 (cached 300), completion 77.
        let report = tally(&[("/h/.qwen/projects/-w/chats/4f1c2a9e.jsonl", CHAT)]).expect("usage");
        assert_eq!(report.rejected_rows, 0);
        assert_eq!(report.entries.len(), 1);
        let entry = &report.entries[0];
        assert_eq!(
            (
                entry.session.as_str(),
                entry.day.as_str(),
                entry.model.as_str()
            ),
            (
                "4f1c2a9e-0000-4000-8000-00000000a001",
                "2026-11-30",
                "fake-model"
            )
        );
        let u = entry.usage;
        assert_eq!(
            (
                u.input,
                u.output,
                u.cache_read,
                u.cache_write,
                u.reasoning,
                u.requests
            ),
            (2 * 2801, 2 * 77, 2 * 300, 0, 0, 2)
        );
    }

    #[test]
    fn thoughts_are_output_once_whichever_convention_the_row_uses() {
        // Gemini convention: total = prompt + candidates + thoughts.
        assert_eq!(split_output(4101, 87, 9, 4197), (96, 9));
        // OpenAI convention: total = prompt + candidates, reasoning inside.
        assert_eq!(split_output(2101, 67, 5, 2168), (67, 5));
        // No total: Gemini convention.
        assert_eq!(split_output(4101, 87, 9, 0), (96, 9));
        assert_eq!(split_output(3101, 77, 0, 3178), (77, 0));
        let gemini = r#"{"uuid":"g1","sessionId":"s","timestamp":"2026-11-30T09:00:00Z","type":"assistant","model":"m","usageMetadata":{"promptTokenCount":4101,"candidatesTokenCount":87,"thoughtsTokenCount":9,"totalTokenCount":4197,"cachedContentTokenCount":400}}"#;
        let u = tally(&[("f.jsonl", gemini)]).expect("usage").total();
        assert_eq!(
            (u.input, u.output, u.cache_read, u.reasoning),
            (3701, 96, 400, 9)
        );
    }

    #[test]
    fn rewritten_rows_and_forks_do_not_count_twice() {
        let first = CHAT
            .lines()
            .find(|l| l.contains("usageMetadata"))
            .expect("assistant row");
        let grown = first.replace("\"candidatesTokenCount\":77", "\"candidatesTokenCount\":80");
        // A /branch copy keeps the uuid and rewrites the session id.
        let forked = first
            .replace("a001\",\"timestamp", "b002\",\"timestamp")
            .replace("\"cwd\"", "\"forkedFrom\":{\"sessionId\":\"4f1c2a9e-0000-4000-8000-00000000a001\",\"messageUuid\":\"x\"},\"cwd\"");
        let text = [first, first, grown.as_str()].join("\n");
        let report = tally(&[("fork.jsonl", &forked), ("a.jsonl", &text)]).expect("usage");
        assert_eq!(report.entries.len(), 1);
        assert!(report.entries[0].session.ends_with("a001"));
        let u = report.total();
        assert_eq!((u.input, u.output, u.requests), (2801, 80, 1));
        // A fork file alone carries usage rows, none of them its own.
        assert_eq!(
            tally(&[("fork.jsonl", &forked)]).map(|r| r.total()),
            Some(Usage::ZERO)
        );
        // The same row in a second file (a copy) is still one call.
        let twice = tally(&[("a.jsonl", first), ("b.jsonl", first)])
            .expect("usage")
            .total();
        assert_eq!(twice.requests, 1);
    }

    #[test]
    fn usage_free_rows_garbage_and_prose() {
        let prose = r#"{"uuid":"u1","sessionId":"s","type":"user","message":{"role":"user","parts":[{"text":"what is \"usageMetadata\"?"}]}}"#;
        assert_eq!(tally(&[("f.jsonl", prose)]), None);
        let broken = "{\"uuid\":\"x\",\"usageMetadata\":{\"promptTokenCount\":";
        let report = tally(&[("f.jsonl", &format!("{broken}\n{CHAT}"))]).expect("usage");
        assert_eq!(report.rejected_rows, 1);
        assert_eq!(report.total().requests, 2);
        // A usage row of zeros is tracked usage that counts zero.
        let zero = r#"{"uuid":"z","type":"assistant","usageMetadata":{"promptTokenCount":"lots","candidatesTokenCount":-1}}"#;
        let report = tally(&[("/p/chats/sess-file.jsonl", zero)]).expect("tracked");
        assert_eq!(report.total().input, 0);
        assert_eq!(report.entries[0].session, "sess-file");
    }
}
