//! Reading a headless turn of a CLI no component knows, as `[turn] output`
//! says: `text` (the default; stdout is the reply), `json` (the result
//! object most `-p` modes print, read by its common key names), or a
//! family's own format (read by that family's adapter).
//!
//! `json` takes the whole stdout, else its last line that is a JSON object.
//! The reply is the first string of `result`, `response`, `text`, `reply`,
//! `output`, `message`; the conversation id `session_id`, `sessionId`,
//! `conversation_id`, `conversationId`, `thread_id`, `threadId`; the turn
//! failed when `is_error` is true or `error` is set. `usage` counts input
//! (`input_tokens`, `inputTokens`, or `prompt_tokens` less its cached part),
//! cache reads and writes, output and reasoning as the CLI reports them.

use drover_kit::{AdapterError, Profile, TurnOutcome, TurnOutput, TurnResult, Usage, UsageReport};
use serde_json::{Map, Value};

use crate::family::Family;
use crate::printed::Printed;
use drover_kit::output::last_line;

fn result(outcome: TurnOutcome) -> TurnResult {
    TurnResult {
        outcome,
        reply: None,
        conversation_id: None,
        error: None,
        usage: None,
        prompt_kind: None,
    }
}

/// A failed turn's sentence: stderr's last line, else stdout's.
fn failure(output: &TurnOutput) -> TurnResult {
    TurnResult {
        error: last_line(&output.stderr).or_else(|| last_line(&output.stdout)),
        ..result(TurnOutcome::Failed)
    }
}

/// Plain text: the reply is stdout less the profile's `[turn] drop` lines,
/// or the `reply` group of its `[turn] reply` pattern; usage is read from
/// the printed summary when `[turn.usage]` says how.
pub fn text(profile: &Profile, output: &TurnOutput) -> Result<TurnResult, AdapterError> {
    let printed = Printed::of(profile)?;
    if output.exit_code != Some(0) {
        return Ok(failure(output));
    }
    let plain = Printed::plain(&output.stdout);
    let usage = printed
        .usage(&plain)
        .map(|(u, model)| UsageReport::single("", &model, u));
    let kept = printed.kept(&plain);
    Ok(match printed.reply(&kept) {
        Some(reply) if !reply.is_empty() => TurnResult {
            reply: Some(reply),
            usage,
            ..result(TurnOutcome::Success)
        },
        Some(_) => TurnResult {
            error: Some("the turn printed nothing".to_string()),
            usage,
            ..result(TurnOutcome::Unknown)
        },
        None => TurnResult {
            error: Some(
                "the output does not match [turn] reply, so drover cannot tell the reply apart"
                    .to_string(),
            ),
            usage,
            ..result(TurnOutcome::Unknown)
        },
    })
}

fn object(stdout: &str) -> Option<Map<String, Value>> {
    if let Ok(Value::Object(whole)) = serde_json::from_str(stdout.trim()) {
        return Some(whole);
    }
    stdout
        .lines()
        .rev()
        .map(str::trim)
        .filter(|l| l.starts_with('{'))
        .find_map(|l| match serde_json::from_str(l) {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        })
}

fn first_string(map: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|k| map.get(*k).and_then(Value::as_str))
        .map(str::to_string)
}

fn first_count(map: &Map<String, Value>, keys: &[&str]) -> Option<u64> {
    keys.iter()
        .find_map(|k| map.get(*k).and_then(Value::as_u64))
}

fn usage(map: &Map<String, Value>) -> Option<Usage> {
    let usage = map.get("usage")?.as_object()?;
    let cached = first_count(
        usage,
        &[
            "cache_read_input_tokens",
            "cacheReadTokens",
            "cache_read_tokens",
        ],
    )
    .or_else(|| {
        usage
            .get("prompt_tokens_details")
            .and_then(Value::as_object)
            .and_then(|d| first_count(d, &["cached_tokens"]))
    })
    .unwrap_or(0);
    // OpenAI-style `prompt_tokens` include the cached part; drover's input
    // does not.
    let input = match first_count(usage, &["input_tokens", "inputTokens"]) {
        Some(n) => n,
        None => first_count(usage, &["prompt_tokens", "promptTokens"])?.saturating_sub(cached),
    };
    Some(Usage {
        input,
        output: first_count(
            usage,
            &[
                "output_tokens",
                "outputTokens",
                "completion_tokens",
                "completionTokens",
            ],
        )
        .unwrap_or(0),
        cache_read: cached,
        cache_write: first_count(
            usage,
            &[
                "cache_creation_input_tokens",
                "cacheWriteTokens",
                "cache_write_tokens",
            ],
        )
        .unwrap_or(0),
        reasoning: first_count(
            usage,
            &["reasoning_tokens", "reasoningTokens", "thoughts_tokens"],
        )
        .unwrap_or(0),
        requests: 1,
    })
}

pub fn json(output: &TurnOutput) -> TurnResult {
    let Some(map) = object(&output.stdout) else {
        return if output.exit_code == Some(0) {
            TurnResult {
                error: Some("it printed no JSON result object ([turn] output is json)".to_string()),
                ..result(TurnOutcome::Unknown)
            }
        } else {
            failure(output)
        };
    };
    let session = first_string(
        &map,
        &[
            "session_id",
            "sessionId",
            "conversation_id",
            "conversationId",
            "thread_id",
            "threadId",
        ],
    );
    let error = match map.get("error") {
        Some(Value::String(e)) => Some(e.clone()),
        Some(Value::Object(e)) => Some(
            first_string(e, &["message", "type"])
                .unwrap_or_else(|| Value::Object(e.clone()).to_string()),
        ),
        Some(Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    };
    let reply = first_string(
        &map,
        &["result", "response", "text", "reply", "output", "message"],
    );
    let failed = map.get("is_error").and_then(Value::as_bool) == Some(true)
        || error.is_some()
        || output.exit_code.is_some_and(|c| c != 0);
    TurnResult {
        outcome: if failed {
            TurnOutcome::Failed
        } else {
            TurnOutcome::Success
        },
        error: if failed {
            error
                .or_else(|| reply.clone())
                .or_else(|| last_line(&output.stderr))
        } else {
            None
        },
        reply: if failed { None } else { reply },
        usage: usage(&map).map(|u| UsageReport::single(session.as_deref().unwrap_or(""), "", u)),
        conversation_id: session,
        prompt_kind: None,
    }
}

/// The turn as the profile's `[turn] output` reads it.
pub fn parse(
    profile: &drover_kit::Profile,
    output: &TurnOutput,
) -> Result<TurnResult, drover_kit::AdapterError> {
    match profile.turn_output.as_str() {
        "" | "text" => text(profile, output),
        "json" => Ok(json(output)),
        format => match Family::of_turn_format(format) {
            Some(family) => family.parse_turn(profile, output),
            None => Err(drover_kit::invalid(format!(
                "unknown [turn] output '{format}'"
            ))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(stdout: &str, stderr: &str, exit: i32) -> TurnOutput {
        drover_kit::testing::turn_output(stdout, stderr, Some(exit))
    }

    #[test]
    fn text_is_the_reply_or_the_last_error_line() {
        let text = |o: &TurnOutput| text(&crate::tests_support::profile(), o).expect("reads");
        let ok = text(&output("PONG\n", "", 0));
        assert_eq!(
            (ok.outcome, ok.reply.as_deref()),
            (TurnOutcome::Success, Some("PONG"))
        );
        let failed = text(&output("", "warming up\nError: no API key\n", 1));
        assert_eq!(failed.outcome, TurnOutcome::Failed);
        assert_eq!(failed.error.as_deref(), Some("Error: no API key"));
        assert_eq!(text(&output("", "", 0)).outcome, TurnOutcome::Unknown);
    }

    #[test]
    fn json_reads_common_result_shapes() {
        // Grok-style: text, sessionId, usage with input excluding cache reads.
        let grok = r#"{"text":"OK","stopReason":"end_turn","sessionId":"g-1","usage":{"input_tokens":2801,"cache_read_input_tokens":300,"output_tokens":77,"reasoning_tokens":5}}"#;
        let r = json(&output(grok, "", 0));
        assert_eq!(
            (r.outcome, r.reply.as_deref()),
            (TurnOutcome::Success, Some("OK"))
        );
        assert_eq!(r.conversation_id.as_deref(), Some("g-1"));
        let total = r.usage.expect("usage").total();
        assert_eq!(
            (total.input, total.cache_read, total.output, total.reasoning),
            (2801, 300, 77, 5)
        );
        // OpenAI-style counts: prompt tokens include the cached part.
        let openai = "log line\n{\"response\":\"hi\",\"usage\":{\"prompt_tokens\":3101,\"completion_tokens\":77,\"prompt_tokens_details\":{\"cached_tokens\":300}}}\n";
        let total = json(&output(openai, "", 0)).usage.expect("usage").total();
        assert_eq!((total.input, total.cache_read), (2801, 300));
        // Errors.
        let failed = json(&output(
            r#"{"is_error":true,"result":"API Error: 529 Overloaded."}"#,
            "",
            1,
        ));
        assert_eq!(failed.outcome, TurnOutcome::Failed);
        assert_eq!(failed.error.as_deref(), Some("API Error: 529 Overloaded."));
        let failed = json(&output(r#"{"error":{"message":"quota exceeded"}}"#, "", 0));
        assert_eq!(failed.error.as_deref(), Some("quota exceeded"));
        // No result object when JSON was asked for: not a success.
        let plain = json(&output("hello\n", "", 0));
        assert_eq!((plain.outcome, plain.reply), (TurnOutcome::Unknown, None));
    }
}
