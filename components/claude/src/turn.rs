//! Reading `claude -p --output-format json` output: one result object
//! `{"type":"result","subtype":"success","is_error":false,"result":"…",
//! "session_id":"…","usage":{…},"modelUsage":{…},"permission_denials":[…]}`.
//! Errors print the same object with `is_error:true` and the sentence in
//! `result`, exit code 1 and an empty stderr.
//!
//! `usage` is the turn's own (the sum of its API calls); `modelUsage` is the
//! session's running total per model, so after `--resume` it also holds the
//! earlier turns (Claude Code 2.1.332, tests/fixtures/real/claude). The turn
//! is counted from `usage`; `modelUsage` only names the model, and splits the
//! turn per model when its sums equal `usage`. A failed call reports all-zero
//! usage: zero tokens and no request.
//!
//! Text mode (`--output-format text`, which a profile asks for with
//! `[turn] output = "text"`) prints only the reply, or the error sentence with exit
//! code 1. When drover asked for JSON, a turn that printed no result object
//! did not say how it ended, whatever it printed instead.

use drover_kit::output::last_line;
use drover_kit::usage::Count;
use drover_kit::{PromptKind, TurnOutcome, TurnOutput, TurnResult, Usage, UsageEntry, UsageReport};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct ResultObject {
    #[serde(rename = "type")]
    kind: Option<String>,
    subtype: Option<String>,
    is_error: Option<bool>,
    result: Option<String>,
    session_id: Option<String>,
    num_turns: Option<Count>,
    usage: Option<ApiUsage>,
    #[serde(rename = "modelUsage")]
    model_usage: Option<BTreeMap<String, ModelUsage>>,
    permission_denials: Option<Vec<serde::de::IgnoredAny>>,
}

#[derive(Deserialize, Default)]
struct ApiUsage {
    #[serde(default)]
    input_tokens: Count,
    #[serde(default)]
    output_tokens: Count,
    #[serde(default)]
    cache_read_input_tokens: Count,
    #[serde(default)]
    cache_creation_input_tokens: Count,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct ModelUsage {
    #[serde(default)]
    input_tokens: Count,
    #[serde(default)]
    output_tokens: Count,
    #[serde(default)]
    cache_read_input_tokens: Count,
    #[serde(default)]
    cache_creation_input_tokens: Count,
}

/// The result object: the last stdout line that parses as one (stream-json
/// output ends with it too).
fn result_object(stdout: &str) -> Option<ResultObject> {
    drover_kit::output::result_object(stdout, |r: &ResultObject| {
        r.kind.as_deref() == Some("result")
    })
}

/// A text-mode turn: the reply itself on success.
pub fn parse_text(output: &TurnOutput) -> TurnResult {
    let text = output.stdout.trim();
    if result_object(&output.stdout).is_none()
        && output.exit_code == Some(0)
        && !text.is_empty()
        && !text.starts_with('{')
    {
        return TurnResult::replied(text.to_string(), None);
    }
    parse(output)
}

/// A JSON turn (`--output-format json` or `stream-json`).
pub fn parse(output: &TurnOutput) -> TurnResult {
    let Some(result) = result_object(&output.stdout) else {
        let succeeded = output.exit_code == Some(0);
        return TurnResult {
            outcome: if succeeded {
                TurnOutcome::Unknown
            } else {
                TurnOutcome::Failed
            },
            reply: None,
            conversation_id: None,
            error: if succeeded {
                Some(
                    "it printed no result object (drover asked for --output-format json)"
                        .to_string(),
                )
            } else {
                last_line(&output.stderr).or_else(|| last_line(&output.stdout))
            },
            usage: None,
            prompt_kind: None,
        };
    };
    let requests = result.num_turns.map_or(0, |c| c.0);
    let usage = usage_of(&result, requests);
    let failed = result.is_error == Some(true)
        || result
            .subtype
            .as_deref()
            .is_some_and(|s| s.starts_with("error"))
        || output.exit_code.is_some_and(|c| c != 0);
    let denied = result
        .permission_denials
        .as_ref()
        .is_some_and(|d| !d.is_empty());
    let (outcome, prompt_kind) = if failed {
        (TurnOutcome::Failed, None)
    } else if denied {
        (TurnOutcome::Blocked, Some(PromptKind::Permission))
    } else {
        (TurnOutcome::Success, None)
    };
    TurnResult {
        outcome,
        reply: if failed { None } else { result.result.clone() },
        conversation_id: result.session_id.clone(),
        error: if failed {
            result.result.clone().or_else(|| last_line(&output.stderr))
        } else {
            None
        },
        usage,
        prompt_kind,
    }
}

fn usage_of(result: &ResultObject, requests: u64) -> Option<UsageReport> {
    let session = result.session_id.clone().unwrap_or_default();
    let models: Vec<(&String, Usage)> = result
        .model_usage
        .iter()
        .flatten()
        .map(|(model, u)| {
            let usage = Usage {
                input: u.input_tokens.0,
                output: u.output_tokens.0,
                cache_read: u.cache_read_input_tokens.0,
                cache_write: u.cache_creation_input_tokens.0,
                reasoning: 0,
                requests: 0,
            };
            (model, usage)
        })
        .collect();
    let turn = match result.usage.as_ref() {
        Some(u) => Usage {
            input: u.input_tokens.0,
            output: u.output_tokens.0,
            cache_read: u.cache_read_input_tokens.0,
            cache_write: u.cache_creation_input_tokens.0,
            reasoning: 0,
            requests: 0,
        },
        // No turn figure: the per-model figures are all there is.
        None if !models.is_empty() => models.iter().fold(Usage::ZERO, |mut sum, (_, u)| {
            sum.add(u);
            sum
        }),
        None => return None,
    };
    // A call that failed reports zeros: no tokens, and no request either.
    let requests = if turn.is_zero() { 0 } else { requests };
    let main = models
        .iter()
        .max_by_key(|(_, u)| u.output)
        .map(|(m, _)| m.as_str())
        .unwrap_or("");
    let summed = models.iter().fold(Usage::ZERO, |mut sum, (_, u)| {
        sum.add(u);
        sum
    });
    if models.len() > 1 && summed == turn {
        // modelUsage covers exactly this turn: keep its split. The result
        // reports turns, not calls per model: they go to the model that did
        // the most output.
        let entries = models
            .into_iter()
            .map(|(model, usage)| UsageEntry {
                session: session.clone(),
                day: String::new(),
                model: model.clone(),
                usage: Usage {
                    requests: if model == main { requests } else { 0 },
                    ..usage
                },
            })
            .collect();
        return Some(UsageReport {
            entries,
            rejected_rows: 0,
        });
    }
    Some(UsageReport::single(
        &session,
        main,
        Usage { requests, ..turn },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::testing::assert_replied;

    fn output(stdout: &str, stderr: &str, exit: i32) -> TurnOutput {
        drover_kit::testing::turn_output(stdout, stderr, Some(exit))
    }

    // Shape captured from Claude Code 2.1.332 against the scripted server
    // (docs/adapters/claude.md): usage 1201/1302/1403/57.
    const SUCCESS: &str = r#"{"type":"result","subtype":"success","is_error":false,"duration_ms":612,"num_turns":1,"result":"OK","session_id":"5f0c1d2e-0000-4000-8000-000000000001","total_cost_usd":0.1,"usage":{"input_tokens":1201,"cache_creation_input_tokens":1302,"cache_read_input_tokens":1403,"output_tokens":57,"server_tool_use":{"web_search_requests":0}},"modelUsage":{"claude-opus-5-5":{"inputTokens":1201,"outputTokens":57,"cacheReadInputTokens":1403,"cacheCreationInputTokens":1302,"webSearchRequests":0,"costUSD":0.1}},"permission_denials":[],"terminal_reason":"completed","api_error_status":null}"#;

    #[test]
    fn success_gives_reply_id_and_usage() {
        let r = parse(&output(SUCCESS, "", 0));
        assert_replied(&r, "OK", "5f0c1d2e-0000-4000-8000-000000000001");
        let usage = r.usage.expect("usage").total();
        assert_eq!(
            (
                usage.input,
                usage.cache_write,
                usage.cache_read,
                usage.output,
                usage.requests
            ),
            (1201, 1302, 1403, 57, 1)
        );
    }

    #[test]
    fn api_errors_are_failures_with_the_sentence() {
        let stdout = r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment.","session_id":"s","num_turns":1,"usage":{"input_tokens":0,"output_tokens":0},"api_error_status":529,"terminal_reason":"api_error"}"#;
        let r = parse(&output(stdout, "", 1));
        assert_eq!(r.outcome, TurnOutcome::Failed);
        assert!(
            r.error
                .as_deref()
                .is_some_and(|e| e.starts_with("API Error: 529 Overloaded"))
        );
        assert_eq!(r.reply, None);
    }

    #[test]
    fn permission_denials_block() {
        let stdout = SUCCESS.replace(r#""permission_denials":[]"#, r#""permission_denials":[{"tool_name":"Bash","tool_use_id":"t1","tool_input":{"command":"rm -rf x"}}]"#);
        let r = parse(&output(&stdout, "", 0));
        assert_eq!(
            (r.outcome, r.prompt_kind),
            (TurnOutcome::Blocked, Some(PromptKind::Permission))
        );
    }

    #[test]
    fn no_result_object_reports_the_last_line() {
        let r = parse(&output("", "Error: unknown option '--bogus'\n", 1));
        assert_eq!(r.outcome, TurnOutcome::Failed);
        assert_eq!(r.error.as_deref(), Some("Error: unknown option '--bogus'"));
        let stream = format!("{{\"type\":\"system\",\"subtype\":\"init\"}}\n{SUCCESS}\n");
        assert_eq!(parse(&output(&stream, "", 0)).reply.as_deref(), Some("OK"));
    }

    #[test]
    fn plain_text_is_a_reply_only_when_text_was_asked_for() {
        let plain = output("hello from a wrapper\n", "", 0);
        let asked_json = parse(&plain);
        assert_eq!(asked_json.outcome, TurnOutcome::Unknown);
        assert_eq!(asked_json.reply, None);
        assert_eq!(
            asked_json.error.as_deref(),
            Some("it printed no result object (drover asked for --output-format json)")
        );
        let asked_text = parse_text(&plain);
        assert_eq!(asked_text.outcome, TurnOutcome::Success);
        assert_eq!(asked_text.reply.as_deref(), Some("hello from a wrapper"));
        // A result object still wins in text mode.
        assert_eq!(
            parse_text(&output(SUCCESS, "", 0)).reply.as_deref(),
            Some("OK")
        );
    }
}
