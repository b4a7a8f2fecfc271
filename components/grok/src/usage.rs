//! Grok's usage parsers.
//!
//! - `grok-updates`, over `~/.grok/sessions/<url-encoded cwd>/<session>/updates.jsonl`
//!   (the file a Stop hook's `transcriptPath` names): one
//!   `_x.ai/session/update` line per finished turn with
//!   `params.update.sessionUpdate == "turn_completed"`, its `prompt_id` and
//!   that turn's `usage{inputTokens, cachedReadTokens, outputTokens,
//!   reasoningTokens, modelCalls, modelUsage:{<model>:{…}}}`. Counted once
//!   per (session, prompt id). A headless run often exits before writing
//!   this line (one turn in four, measured), so these files miss some
//!   headless turns; drover's own runs read headless usage from the JSON
//!   output instead.
//! - `grok-log`, over `~/.grok/logs/unified.jsonl`: one
//!   `shell.turn.inference_done` line per model call, written every time,
//!   with `sid` and `ctx.{prompt_tokens, cached_prompt_tokens,
//!   completion_tokens, reasoning_tokens}` and no model name.
//!
//! Both count `inputTokens`/`prompt_tokens` with the cached part included
//! (3101 with 300 cached for the server's 3101-token prompt), so `input` is
//! the difference; output includes reasoning (the totals add up to input +
//! output). The session's side call for a title is in neither.

use std::collections::HashSet;

use drover_kit::Usage;
use drover_kit::usage::{Ledger, RowParser, contains, count, day_of, day_of_millis};
use serde_json::Value;

pub const UPDATES_PARSER: &str = "grok-updates";
pub const LOG_PARSER: &str = "grok-log";

/// The parser of that name, if it is this adapter's.
pub fn parser(name: &str) -> Option<Box<dyn RowParser>> {
    match name {
        UPDATES_PARSER => Some(Box::new(Updates::default())),
        LOG_PARSER => Some(Box::new(Log)),
        _ => None,
    }
}

/// drover's conventions from cache-inclusive input.
fn usage(input: u64, cached: u64, output: u64, reasoning: u64, requests: u64) -> Usage {
    Usage {
        input: input.saturating_sub(cached),
        output: output.max(reasoning),
        cache_read: cached,
        cache_write: 0,
        reasoning,
        requests,
    }
}

#[derive(Default)]
struct Updates {
    turns: HashSet<(String, String)>,
}

impl RowParser for Updates {
    fn row(&mut self, line: &[u8], ledger: &mut Ledger) {
        if !contains(line, b"\"turn_completed\"") {
            return;
        }
        let Ok(row) = serde_json::from_slice::<Value>(line) else {
            ledger.reject();
            return;
        };
        let params = row.get("params");
        let update = params.and_then(|p| p.get("update"));
        if update
            .and_then(|u| u.get("sessionUpdate"))
            .and_then(Value::as_str)
            != Some("turn_completed")
        {
            return;
        }
        let Some(totals) = update
            .and_then(|u| u.get("usage"))
            .filter(|u| u.is_object())
        else {
            ledger.reject();
            return;
        };
        let session = params
            .and_then(|p| p.get("sessionId"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let prompt = update
            .and_then(|u| u.get("prompt_id"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if !prompt.is_empty() && !self.turns.insert((session.clone(), prompt)) {
            return;
        }
        let day = day_of_millis(count(row.get("timestamp")).saturating_mul(1000));
        let read = |u: &Value| {
            usage(
                count(u.get("inputTokens")),
                count(u.get("cachedReadTokens")),
                count(u.get("outputTokens")),
                count(u.get("reasoningTokens")),
                count(u.get("modelCalls")),
            )
        };
        match totals.get("modelUsage").and_then(Value::as_object) {
            Some(models) if !models.is_empty() => {
                for (model, m) in models {
                    ledger.add(&session, &day, model, &read(m));
                }
            }
            _ => ledger.add(&session, &day, "", &read(totals)),
        }
    }
}

struct Log;

impl RowParser for Log {
    fn row(&mut self, line: &[u8], ledger: &mut Ledger) {
        if !contains(line, b"\"shell.turn.inference_done\"") {
            return;
        }
        let Ok(row) = serde_json::from_slice::<Value>(line) else {
            ledger.reject();
            return;
        };
        if row.get("msg").and_then(Value::as_str) != Some("shell.turn.inference_done") {
            return;
        }
        let Some(ctx) = row.get("ctx").filter(|c| c.is_object()) else {
            ledger.reject();
            return;
        };
        let session = row.get("sid").and_then(Value::as_str).unwrap_or_default();
        let day = row
            .get("ts")
            .and_then(Value::as_str)
            .map(day_of)
            .unwrap_or("");
        let call = usage(
            count(ctx.get("prompt_tokens")),
            count(ctx.get("cached_prompt_tokens")),
            count(ctx.get("completion_tokens")),
            count(ctx.get("reasoning_tokens")),
            1,
        );
        ledger.add(session, day, "", &call);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::UsageReport;

    fn tally(parser: &str, text: &str) -> Option<UsageReport> {
        drover_kit::testing::tally::<crate::Grok>(parser, &[("/h/.grok/x.jsonl", text)], 23)
    }

    #[test]
    fn a_repeated_turn_counts_once_and_prose_is_not_usage() {
        let line = r#"{"timestamp":1796146434,"method":"_x.ai/session/update","params":{"sessionId":"s","update":{"sessionUpdate":"turn_completed","prompt_id":"p","usage":{"inputTokens":100,"cachedReadTokens":40,"outputTokens":9,"reasoningTokens":2,"modelCalls":1}}}}"#;
        let report = tally(UPDATES_PARSER, &format!("{line}\n{line}\n")).expect("usage");
        assert_eq!(report.total(), usage(100, 40, 9, 2, 1));
        assert_eq!(report.entries[0].day, "2026-12-01");
        let prose = r#"{"params":{"update":{"sessionUpdate":"agent_message_chunk","content":{"text":"\"turn_completed\""}}}}"#;
        assert_eq!(tally(UPDATES_PARSER, prose), None);
        let hostile = r#"{"params":{"update":{"sessionUpdate":"turn_completed","usage":"x"}}}"#;
        assert_eq!(tally(UPDATES_PARSER, hostile), None);
    }

    #[test]
    fn log_lines_are_calls() {
        let line = r#"{"ts":"2026-12-01T17:43:38.258Z","sid":"s","msg":"shell.turn.inference_done","ctx":{"prompt_tokens":3101,"cached_prompt_tokens":300,"completion_tokens":77,"reasoning_tokens":0}}"#;
        let report = tally(
            LOG_PARSER,
            &format!("{line}\n{line}\nnot json \"shell.turn.inference_done\"\n"),
        )
        .expect("usage");
        assert_eq!(report.total(), usage(6202, 600, 154, 0, 2));
        assert_eq!(report.rejected_rows, 1);
        assert_eq!(report.entries[0].session, "s");
    }
}
