//! The `claude-jsonl` usage parser.
//!
//! Counting rules (each one a way transcripts over-count when rows are just
//! summed):
//! - One API request can be written as several rows (one per content block:
//!   text, tool_use), whole rows are copied by resumed sessions, and `/btw`
//!   sidechain logs replay a parent's message under a new `requestId`
//!   (ccusage#913). `message.id` is the API's id for one response, so rows
//!   sharing it are one request whatever their request id; rows without one
//!   fall back to `requestId` (or `requestRef`). When a later copy reports
//!   more output (streaming), the difference is added.
//! - Claude Code 2.1.332 writes `requestRef` (the id of its `api-request`
//!   row) instead of `requestId` on assistant rows; those rows are per-request
//!   usage like any other (tests/fixtures/real/claude/transcript*.jsonl).
//! - Synthetic API-error rows (`isApiErrorMessage`, model `<synthetic>`)
//!   count zero.
//! - Cumulative snapshot rows are never summed: `cost-state` rows (which
//!   Claude Code 2.1.332 sometimes repeats unchanged; their `modelUsage` is
//!   the session's running total), `summary` and `result` rows.
//! - Cache writes come from `cache_creation_input_tokens`; the per-TTL
//!   breakdown object is used only when that field is absent.
//!
//! Anthropic's `input_tokens` already excludes cache reads, and thinking is
//! billed inside `output_tokens`, so reasoning is not reported separately.

use std::borrow::Cow;
use std::collections::HashMap;

use drover_kit::Usage;
use drover_kit::usage::{Count, Ledger, RowParser, contains, day_of, key_of};
use serde::Deserialize;

/// The parser of that name, if it is this adapter's.
pub fn parser(name: &str) -> Option<Box<dyn RowParser>> {
    (name == crate::PARSER).then(|| Box::new(ClaudeJsonl::default()) as Box<dyn RowParser>)
}

#[derive(Default)]
pub struct ClaudeJsonl {
    /// request key -> (ledger cell, output counted so far)
    seen: HashMap<u64, (u32, u64)>,
    file_session: String,
}

#[derive(Deserialize)]
struct Row<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
    #[serde(rename = "requestId", borrow, default)]
    request_id: Option<Cow<'a, str>>,
    #[serde(rename = "requestRef", borrow, default)]
    request_ref: Option<Cow<'a, str>>,
    #[serde(rename = "sessionId", borrow, default)]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "isApiErrorMessage", default)]
    is_api_error: Option<bool>,
    #[serde(default)]
    usage: Option<Tokens>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<Tokens>,
}

#[derive(Deserialize, Default)]
struct Tokens {
    #[serde(default)]
    input_tokens: Count,
    #[serde(default)]
    output_tokens: Count,
    #[serde(default)]
    cache_read_input_tokens: Count,
    #[serde(default)]
    cache_creation_input_tokens: Option<Count>,
    #[serde(default)]
    cache_creation: Option<CacheBreakdown>,
}

#[derive(Deserialize, Default)]
struct CacheBreakdown {
    #[serde(default)]
    ephemeral_5m_input_tokens: Count,
    #[serde(default)]
    ephemeral_1h_input_tokens: Count,
}

const SNAPSHOT_KINDS: &[&str] = &["cost-state", "summary", "result"];

impl RowParser for ClaudeJsonl {
    fn begin_file(&mut self, name: &str) {
        let file = name.rsplit('/').next().unwrap_or(name);
        self.file_session = file.strip_suffix(".jsonl").unwrap_or(file).to_string();
    }

    fn row(&mut self, line: &[u8], ledger: &mut Ledger) {
        if !contains(line, b"\"usage\"") {
            return;
        }
        let Ok(row) = serde_json::from_slice::<Row<'_>>(line) else {
            ledger.reject();
            return;
        };
        let kind = row.kind.as_deref();
        if kind.is_some_and(|k| SNAPSHOT_KINDS.contains(&k)) {
            return;
        }
        let (message_id, model, tokens) = match row.message {
            Some(Message {
                id,
                model,
                usage: Some(tokens),
            }) => (id, model, tokens),
            _ => match (kind, row.usage) {
                (None | Some("assistant") | Some("message"), Some(tokens)) => (None, None, tokens),
                _ => return,
            },
        };
        ledger.mark_seen();
        let model = model.as_deref().unwrap_or("");
        if row.is_api_error == Some(true) || model == "<synthetic>" {
            return;
        }
        let cache_write = match (tokens.cache_creation_input_tokens, &tokens.cache_creation) {
            (Some(total), _) => total.0,
            (None, Some(b)) => b.ephemeral_5m_input_tokens.0 + b.ephemeral_1h_input_tokens.0,
            (None, None) => 0,
        };
        let usage = Usage {
            input: tokens.input_tokens.0,
            output: tokens.output_tokens.0,
            cache_read: tokens.cache_read_input_tokens.0,
            cache_write,
            reasoning: 0,
            requests: 1,
        };
        let key = match (
            message_id.as_deref().filter(|m| !m.is_empty()),
            row.request_id.as_deref().or(row.request_ref.as_deref()),
        ) {
            (Some(m), _) => Some(key_of(&[m, ""])),
            (None, Some(r)) if !r.is_empty() => Some(key_of(&["", r])),
            _ => None,
        };
        if let Some(key) = key
            && let Some((cell, counted)) = self.seen.get_mut(&key)
        {
            if usage.output > *counted {
                let extra = Usage {
                    output: usage.output - *counted,
                    ..Usage::ZERO
                };
                ledger.add_at(*cell as usize, &extra);
                *counted = usage.output;
            }
            return;
        }
        let session = row.session_id.as_deref().unwrap_or(&self.file_session);
        let day = row.timestamp.as_deref().map(day_of).unwrap_or("");
        let cell = ledger.cell(session, day, model);
        ledger.add_at(cell, &usage);
        if let Some(key) = key {
            self.seen.insert(key, (cell as u32, usage.output));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(text: &str) -> Option<drover_kit::UsageReport> {
        let files = [("/p/-w/sess-file.jsonl", text)];
        drover_kit::testing::tally::<crate::Claude>(crate::PARSER, &files, 37)
    }

    fn row(id: &str, req: &str, input: u64, output: u64, extra: &str) -> String {
        format!(
            r#"{{"parentUuid":null,"isSidechain":false,"type":"assistant","sessionId":"s1","timestamp":"2026-11-30T10:00:00.000Z","requestId":"{req}","message":{{"id":"{id}","model":"claude-opus-5-5","role":"assistant","content":[{{"type":"text","text":"the \"usage\": {{ key in prose"}}],"usage":{{"input_tokens":{input},"cache_creation_input_tokens":1302,"cache_read_input_tokens":1403,"output_tokens":{output},"cache_creation":{{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0}}}}}}{extra}}}"#
        )
    }

    #[test]
    fn content_blocks_and_replays_of_one_request_count_once() {
        let text = [
            row("msg_1", "req_1", 1201, 10, ""),
            row("msg_1", "req_1", 1201, 57, ""), // tool_use block, final output
            row("msg_1", "req_1", 1201, 57, r#","isSidechain":true"#), // replay
            row("msg_2", "req_2", 5, 7, ""),
        ]
        .join("\n");
        let report = tally(&text).expect("usage");
        let total = report.total();
        assert_eq!(
            (
                total.input,
                total.output,
                total.cache_read,
                total.cache_write,
                total.requests
            ),
            (1206, 64, 2806, 2604, 2)
        );
        assert_eq!(report.entries.len(), 1);
        assert_eq!(report.entries[0].day, "2026-11-30");
        assert_eq!(report.entries[0].session, "s1");
    }

    #[test]
    fn synthetic_errors_and_snapshots_are_not_summed() {
        let synthetic = r#"{"type":"assistant","isApiErrorMessage":true,"error":"server_error","apiError":"connection_failed","message":{"id":"e1","model":"<synthetic>","usage":{"input_tokens":0,"output_tokens":0}}}"#;
        let cost = r#"{"type":"cost-state","modelUsage":{"claude-opus-5-5":{"inputTokens":1201}},"usage":{"input_tokens":9999,"output_tokens":9999}}"#;
        let text = [synthetic, cost, cost, &row("msg_1", "req_1", 1, 2, "")].join("\n");
        let total = tally(&text).expect("usage").total();
        assert_eq!((total.input, total.output, total.requests), (1, 2, 1));
        // Only a synthetic row: usage is tracked, and zero.
        assert_eq!(tally(synthetic).map(|r| r.total()), Some(Usage::ZERO));
    }

    /// An assistant row as Claude Code 2.1.332 writes it (trimmed from
    /// tests/fixtures/real/claude/transcript-tool.jsonl): `requestRef`, no
    /// `requestId`, an all-zero cache breakdown beside the real total.
    fn row_2_1_332(id: &str, reference: &str, block: &str, sidechain: bool) -> String {
        format!(
            r#"{{"parentUuid":"617c69d3","isSidechain":{sidechain},"message":{{"content":[{block}],"id":"{id}","model":"claude-opus-5-5","role":"assistant","stop_reason":"end_turn","stop_sequence":null,"type":"message","usage":{{"input_tokens":1201,"cache_creation_input_tokens":1302,"cache_read_input_tokens":1403,"output_tokens":57,"output_tokens_details":{{"thinking_tokens":0}},"service_tier":"standard","cache_creation":{{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0}},"inference_geo":"","iterations":[],"speed":"standard","fallback_credit":null}},"stop_details":null}},"apiBlockIndex":0,"requestRef":"{reference}","requestedModel":"claude-opus-5-5","type":"assistant","uuid":"53db6624","timestamp":"2026-11-30T17:01:16.831Z","sessionId":"8d7bc014","version":"2.1.332","gitBranch":"master"}}"#
        )
    }

    #[test]
    fn request_ref_rows_count_once_per_message() {
        let tool =
            r#"{"id":"toolu_1","input":{"command":"echo hi"},"name":"Bash","type":"tool_use"}"#;
        let text = r#"{"text":"TOOLDONE","type":"text"}"#;
        let rows = [
            row_2_1_332("msg_6", "ref-a", tool, false),
            row_2_1_332("msg_7", "ref-b", text, false),
            // A second content block of msg_7, and a /btw sidechain replay
            // of msg_6 under another request reference.
            row_2_1_332("msg_7", "ref-b", tool, false),
            row_2_1_332("msg_6", "ref-z", tool, true),
        ]
        .join("\n");
        let total = tally(&rows).expect("usage").total();
        assert_eq!(
            (
                total.input,
                total.output,
                total.cache_read,
                total.cache_write,
                total.requests
            ),
            (2402, 114, 2806, 2604, 2)
        );
    }

    #[test]
    fn a_sidechain_replay_with_a_new_request_id_is_the_same_request() {
        let text = [
            row("msg_1", "req_1", 10, 20, ""),
            row("msg_1", "req_btw", 10, 20, r#","isSidechain":true"#),
        ]
        .join("\n");
        let total = tally(&text).expect("usage").total();
        assert_eq!((total.input, total.output, total.requests), (10, 20, 1));
    }

    #[test]
    fn request_refs_key_requests_like_request_ids() {
        // 2.1.332: no requestId, a requestRef to the call's api-request row.
        let by_ref = |msg: &str, reference: &str| {
            format!(
                r#"{{"type":"assistant","requestRef":"{reference}","sessionId":"s1","message":{{"id":"{msg}","model":"claude-opus-5-5","usage":{{"input_tokens":1201,"output_tokens":57}}}}}}"#
            )
        };
        let text = [
            by_ref("msg_1", "r-1"),
            by_ref("msg_1", "r-1"), // a second content block of the same call
            by_ref("msg_2", "r-2"),
        ]
        .join("\n");
        let total = tally(&text).expect("usage").total();
        assert_eq!((total.input, total.output, total.requests), (2402, 114, 2));
    }

    #[test]
    fn spacing_variants_and_breakdown_fallback() {
        let spaced = r#"{"type": "assistant", "requestId": "r", "message": {"id": "m", "model": "x", "usage": {"input_tokens": 3, "output_tokens": 4, "cache_creation": {"ephemeral_5m_input_tokens": 5, "ephemeral_1h_input_tokens": 6}}}}"#;
        let total = tally(spaced).expect("usage").total();
        assert_eq!((total.input, total.output, total.cache_write), (3, 4, 11));
    }

    #[test]
    fn garbage_is_rejected_without_losing_good_rows() {
        let text = format!(
            "not json \"usage\"\n{}\n{{\"type\":\"user\",\"message\":{{\"content\":\"hi\"}}}}\n{{\"usage\": {{\"input_tokens\": \"12\", \"output_tokens\": -1}}}}",
            row("m", "r", 2, 3, "")
        );
        let report = tally(&text).expect("usage");
        assert_eq!(report.rejected_rows, 1);
        let total = report.total();
        // The top-level usage row counts with its unreadable fields as zero.
        assert_eq!((total.input, total.output, total.requests), (2, 3, 2));
        assert_eq!(
            report
                .entries
                .iter()
                .find(|e| e.model.is_empty())
                .map(|e| e.session.as_str()),
            Some("sess-file")
        );
    }

    #[test]
    fn no_usage_rows_is_none() {
        assert_eq!(tally("{\"type\":\"user\"}\n"), None);
    }
}
