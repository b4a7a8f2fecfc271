//! Reading `qwen -p PROMPT --output-format json` output.
//!
//! Stdout is one JSON array of Claude-SDK-like messages: `system/init`
//! (`session_id`, `model`), one `assistant` per main call (`message.usage`),
//! and a final `result` `{subtype, is_error, result, session_id, usage,
//! stats}`. `result.usage` sums every call of the process (the main turn and
//! the managed-auto-memory-extractor) and its `input_tokens` includes the
//! cached tokens (6202 = 2 × prompt 3101 with 600 cached).
//!
//! Qwen Code 0.24.4 (tests/fixtures/real/qwen): after `--resume` the figures
//! are the conversation's running total (the resumed turn of two calls
//! reported four), so `prior_usage`, what drover recorded for the earlier
//! turns, is subtracted when the report covers it. A failed turn still prints
//! the array, with `result.is_error`, `subtype: error_during_execution` and
//! the sentence in `result.error.message` (no `result` text); stderr ends
//! with `{"error":{"type","message","code"}}` (`AlreadyReportedError`, or
//! `FatalCancellationError` "Operation cancelled." when the run was killed).
//! Text mode prints the reply alone, or `[API Error: …]` on stderr.

use drover_kit::usage::Count;
use drover_kit::{PromptKind, TurnOutcome, TurnOutput, TurnResult, Usage, UsageEntry, UsageReport};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::usage::split_output;
use drover_kit::output::strip_ansi;

#[derive(Deserialize, Default)]
struct ResultUsage {
    #[serde(default)]
    input_tokens: Count,
    #[serde(default)]
    output_tokens: Count,
    #[serde(default)]
    cache_read_input_tokens: Count,
    #[serde(default)]
    cache_creation_input_tokens: Count,
}

/// One model's block under `stats.models`: `api.totalRequests` and Gemini-style
/// `tokens{prompt, candidates, total, cached, thoughts}`.
#[derive(Deserialize, Default)]
struct ModelStats {
    #[serde(default)]
    api: ApiStats,
    #[serde(default)]
    tokens: TokenStats,
}

#[derive(Deserialize, Default)]
struct ApiStats {
    #[serde(rename = "totalRequests", default)]
    total_requests: Count,
}

#[derive(Deserialize, Default)]
struct TokenStats {
    #[serde(default)]
    prompt: Count,
    #[serde(default)]
    candidates: Count,
    #[serde(default)]
    total: Count,
    #[serde(default)]
    cached: Count,
    #[serde(default)]
    thoughts: Count,
}

/// The messages on stdout: the array (pretty or compact), or, for
/// `stream-json`, one object per line.
fn messages(stdout: &str) -> Vec<Map<String, Value>> {
    let objects = |values: Vec<Value>| {
        values
            .into_iter()
            .filter_map(|v| match v {
                Value::Object(o) => Some(o),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let trimmed = stdout.trim();
    match serde_json::from_str::<Value>(trimmed) {
        Ok(Value::Array(items)) => return objects(items),
        Ok(Value::Object(one)) => return vec![one],
        _ => {}
    }
    // Noise before the array (a warning printed to stdout): start at a line
    // that opens it. Only the first few candidates are tried, so hostile
    // output cannot make this quadratic.
    let mut offset = 0;
    let mut tries = 0;
    for line in stdout.split_inclusive('\n') {
        if line.trim_start().starts_with('[') && tries < 4 {
            tries += 1;
            if let Ok(Value::Array(items)) = serde_json::from_str::<Value>(stdout[offset..].trim())
            {
                return objects(items);
            }
        }
        offset += line.len();
    }
    objects(
        stdout
            .lines()
            .filter(|l| l.trim_start().starts_with('{'))
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .collect(),
    )
}

fn kind_of(message: &Map<String, Value>) -> Option<&str> {
    message.get("type").and_then(Value::as_str)
}

fn text(message: &Map<String, Value>, key: &str) -> Option<String> {
    message
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The `message` of the `{"error":{"type","message","code"}}` object Qwen
/// ends stderr with (pretty-printed over several lines).
fn stderr_error_object(text: &str) -> Option<String> {
    let start = text
        .rfind("\n{")
        .map_or_else(|| text.find('{'), |at| Some(at + 1))?;
    let value: Value = serde_json::from_str(text[start..].trim()).ok()?;
    value
        .get("error")?
        .get("message")?
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// The CLI's error sentence: the message of its closing error object, else
/// the newest `[API Error: …]` line (a retry notice ends in one too), else
/// the last non-empty line.
fn error_line(text: &str) -> Option<String> {
    if let Some(message) = stderr_error_object(text) {
        return Some(message);
    }
    let lines: Vec<String> = text
        .lines()
        .map(|l| strip_ansi(l).trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    lines
        .iter()
        .rfind(|l| l.contains("[API Error:"))
        .or_else(|| lines.last())
        .cloned()
}

pub fn parse(output: &TurnOutput) -> TurnResult {
    let messages = messages(&output.stdout);
    let init_session = messages
        .iter()
        .find(|m| kind_of(m) == Some("system"))
        .and_then(|m| text(m, "session_id"));
    let Some(result) = messages.iter().rev().find(|m| kind_of(m) == Some("result")) else {
        // Text mode: the reply itself on success.
        let text = strip_ansi(output.stdout.trim());
        let text = text.trim();
        if output.exit_code == Some(0) && !text.is_empty() && messages.is_empty() {
            return TurnResult::replied(text.to_string(), None);
        }
        return TurnResult::no_result(
            output.exit_code,
            init_session,
            error_line(&output.stderr).or_else(|| error_line(&output.stdout)),
        );
    };
    let session = text(result, "session_id").or(init_session);
    let failed = result.get("is_error").and_then(Value::as_bool) == Some(true)
        || text(result, "subtype").is_some_and(|s| s.starts_with("error"))
        || output.exit_code.is_some_and(|c| c != 0);
    let denied = result
        .get("permission_denials")
        .and_then(Value::as_array)
        .is_some_and(|d| !d.is_empty());
    let (outcome, prompt_kind) = if failed {
        (TurnOutcome::Failed, None)
    } else if denied {
        (TurnOutcome::Blocked, Some(PromptKind::Permission))
    } else {
        (TurnOutcome::Success, None)
    };
    let reply = text(result, "result");
    let own_error = result
        .get("error")
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let usage = usage_of(result, &messages, session.as_deref().unwrap_or(""))
        .map(|report| per_turn(report, output.prior_usage.as_ref()));
    TurnResult {
        outcome,
        reply: if failed { None } else { reply.clone() },
        conversation_id: session.clone(),
        error: if failed {
            own_error.or(reply).or_else(|| error_line(&output.stderr))
        } else {
            None
        },
        usage,
        prompt_kind,
    }
}

/// The turn's own usage from a running total: `prior` (drover's record of
/// the earlier turns) is taken off the entries in order, field by field.
/// A report that does not cover `prior` is already per turn and is kept.
fn per_turn(mut report: UsageReport, prior: Option<&Usage>) -> UsageReport {
    let Some(prior) = prior else {
        return report;
    };
    let total = report.total();
    let covers = total.input >= prior.input
        && total.output >= prior.output
        && total.cache_read >= prior.cache_read
        && total.cache_write >= prior.cache_write
        && total.reasoning >= prior.reasoning
        && total.requests >= prior.requests;
    if !covers || prior.is_zero() {
        return report;
    }
    let mut left = *prior;
    for entry in &mut report.entries {
        let taken = Usage {
            input: left.input.min(entry.usage.input),
            output: left.output.min(entry.usage.output),
            cache_read: left.cache_read.min(entry.usage.cache_read),
            cache_write: left.cache_write.min(entry.usage.cache_write),
            reasoning: left.reasoning.min(entry.usage.reasoning),
            requests: left.requests.min(entry.usage.requests),
        };
        entry.usage = entry.usage.minus(&taken);
        left = left.minus(&taken);
    }
    report.entries.retain(|e| !e.usage.is_zero());
    report
}

/// Per-model usage from `stats.models` when it accounts for the whole
/// `usage.input_tokens` (so a stats layout this parser misreads cannot
/// silently zero the turn), else the summed `usage`.
fn usage_of(
    result: &Map<String, Value>,
    messages: &[Map<String, Value>],
    session: &str,
) -> Option<UsageReport> {
    let summed = result
        .get("usage")
        .and_then(|u| serde_json::from_value::<ResultUsage>(u.clone()).ok());
    if let Some(entries) = stats_entries(result, session)
        && summed.as_ref().is_none_or(|u| {
            let prompt = entries
                .iter()
                .fold(0u64, |sum, (_, prompt)| sum.saturating_add(*prompt));
            prompt == u.input_tokens.0
        })
    {
        return Some(UsageReport {
            entries: entries.into_iter().map(|(entry, _)| entry).collect(),
            rejected_rows: 0,
        });
    }
    let u = summed?;
    // Calls the stream shows (assistant messages with usage), plus one when
    // the summed prompt tokens exceed theirs: the memory extractor's call,
    // which prints no message (stream-json carries no stats to count it).
    let shown: Vec<u64> = messages
        .iter()
        .filter(|m| kind_of(m) == Some("assistant"))
        .filter_map(|m| m.get("message").and_then(|msg| msg.get("usage")))
        .filter_map(|usage| serde_json::from_value::<ResultUsage>(usage.clone()).ok())
        .map(|usage| usage.input_tokens.0)
        .filter(|&prompt| prompt > 0)
        .collect();
    let shown_prompt = shown.iter().fold(0u64, |sum, p| sum.saturating_add(*p));
    let unseen = u64::from(u.input_tokens.0 > shown_prompt);
    let usage = Usage {
        input: u.input_tokens.0.saturating_sub(u.cache_read_input_tokens.0),
        output: u.output_tokens.0,
        cache_read: u.cache_read_input_tokens.0,
        cache_write: u.cache_creation_input_tokens.0,
        reasoning: 0,
        requests: 0,
    };
    // A failed turn reports zeros: no tokens, and no request either.
    let requests = if usage.is_zero() {
        0
    } else {
        (shown.len() as u64 + unseen).max(1)
    };
    Some(UsageReport::single(
        session,
        "",
        Usage { requests, ..usage },
    ))
}

/// `(entry, prompt tokens)` per model under `stats.models`.
fn stats_entries(result: &Map<String, Value>, session: &str) -> Option<Vec<(UsageEntry, u64)>> {
    let models = result.get("stats")?.get("models")?.as_object()?;
    if models.is_empty() {
        return None;
    }
    let mut entries = Vec::new();
    for (model, value) in models {
        let stats = serde_json::from_value::<ModelStats>(value.clone()).ok()?;
        let t = &stats.tokens;
        let (output, reasoning) = split_output(t.prompt.0, t.candidates.0, t.thoughts.0, t.total.0);
        entries.push((
            UsageEntry {
                session: session.to_string(),
                day: String::new(),
                model: model.clone(),
                usage: Usage {
                    input: t.prompt.0.saturating_sub(t.cached.0),
                    output,
                    cache_read: t.cached.0,
                    cache_write: 0,
                    reasoning,
                    requests: stats.api.total_requests.0,
                },
            },
            t.prompt.0,
        ));
    }
    Some(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::testing::assert_replied;
    use drover_kit::testing::turn_output as output;

    const SUCCESS: &str = include_str!("../fixtures/headless-success.json");
    const SESSION: &str = "4f1c2a9e-0000-4000-8000-00000000a001";

    #[test]
    fn success_gives_reply_id_and_per_model_usage() {
        let r = parse(&output(SUCCESS, "", Some(0)));
        assert_replied(&r, "OK", SESSION);
        let report = r.usage.expect("usage");
        assert_eq!(report.entries.len(), 1);
        assert_eq!(report.entries[0].model, "fake-model");
        let u = report.total();
        // Two calls (main + memory extractor) of prompt 3101, cached 300, completion 77.
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
    }

    #[test]
    fn without_stats_the_summed_usage_excludes_cache_reads() {
        let mut value: Value = serde_json::from_str(SUCCESS).expect("fixture is json");
        if let Some(items) = value.as_array_mut()
            && let Some(Value::Object(result)) = items.last_mut()
        {
            result.remove("stats");
        }
        let compact = serde_json::to_string(&value).expect("serializes");
        let u = parse(&output(&compact, "", Some(0)))
            .usage
            .expect("usage")
            .total();
        // One assistant message shows 3101 of the 6202 prompt tokens: the
        // memory extractor's call is the other one (as in the real stream).
        assert_eq!(
            (u.input, u.output, u.cache_read, u.requests),
            (5602, 154, 600, 2)
        );
        // A stats layout that does not add up to the summed usage is ignored.
        let odd = SUCCESS.replace("\"prompt\": 6202", "\"promptTokens\": 6202");
        let u = parse(&output(&odd, "", Some(0)))
            .usage
            .expect("usage")
            .total();
        assert_eq!((u.input, u.requests), (5602, 2));
    }

    #[test]
    fn api_errors_come_from_stderr() {
        let r = parse(&output(
            "",
            "[API Error: 500 The server had an error while processing your request.]\n",
            Some(1),
        ));
        assert_eq!(r.outcome, TurnOutcome::Failed);
        assert_eq!(
            r.error.as_deref(),
            Some("[API Error: 500 The server had an error while processing your request.]")
        );
        assert_eq!(r.usage, None);
        let retrying = "Ripgrep not available: spawn rg EACCES\nRetrying in 60s (attempt 1/10): [API Error: 429 Rate limit reached for requests]\nRetrying provider attempt (0 buffered tool call(s) discarded).\n";
        let r = parse(&output("", retrying, None));
        assert_eq!(r.outcome, TurnOutcome::Failed);
        assert_eq!(
            r.error.as_deref(),
            Some(
                "Retrying in 60s (attempt 1/10): [API Error: 429 Rate limit reached for requests]"
            )
        );
        let cancelled = parse(&output(
            "",
            "\u{1b}[31mOperation cancelled.\u{1b}[0m\n",
            None,
        ));
        assert_eq!(cancelled.error.as_deref(), Some("Operation cancelled."));
        assert_eq!(
            parse(&output("", "", Some(0))).outcome,
            TurnOutcome::Unknown
        );
    }

    #[test]
    fn error_results_and_denials() {
        let is_error = SUCCESS
            .replace("\"is_error\": false", "\"is_error\": true")
            .replace(
                "\"result\": \"OK\"",
                "\"result\": \"Reached max session turns\"",
            );
        let r = parse(&output(&is_error, "", Some(1)));
        assert_eq!(
            (r.outcome, r.reply, r.error.as_deref()),
            (TurnOutcome::Failed, None, Some("Reached max session turns"))
        );
        let denied = SUCCESS.replace(
            "\"permission_denials\": []",
            "\"permission_denials\": [{\"tool_name\": \"run_shell_command\"}]",
        );
        let r = parse(&output(&denied, "", Some(0)));
        assert_eq!(
            (r.outcome, r.prompt_kind),
            (TurnOutcome::Blocked, Some(PromptKind::Permission))
        );
    }

    #[test]
    fn huge_counts_saturate_instead_of_overflowing() {
        let big = r#"[{"type":"result","subtype":"success","is_error":false,"result":"x","session_id":"s","usage":{"input_tokens":18446744073709551615},"stats":{"models":{"a":{"tokens":{"prompt":18446744073709551615}},"b":{"tokens":{"prompt":18446744073709551615}}}}}]"#;
        let u = parse(&output(big, "", Some(0)))
            .usage
            .expect("usage")
            .total();
        assert_eq!(u.input, u64::MAX);
    }

    #[test]
    fn noise_before_the_array_and_stream_json_lines() {
        let noisy = format!("Auto mode enabled\n{SUCCESS}");
        assert_eq!(
            parse(&output(&noisy, "", Some(0))).reply.as_deref(),
            Some("OK")
        );
        let value: Value = serde_json::from_str(SUCCESS).expect("json");
        let lines: Vec<String> = value
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .map(|i| serde_json::to_string(i).unwrap_or_default())
                    .collect()
            })
            .unwrap_or_default();
        let r = parse(&output(&lines.join("\n"), "", Some(0)));
        assert_eq!(
            (r.outcome, r.conversation_id.as_deref()),
            (TurnOutcome::Success, Some(SESSION))
        );
        // Only the init line survived (killed mid-turn): the id is still known.
        let r = parse(&output(&lines[0], "", None));
        assert_eq!(
            (r.outcome, r.conversation_id.as_deref()),
            (TurnOutcome::Failed, Some(SESSION))
        );
    }
}
