//! Reading `agy -p … --output-format stream-json` output: NDJSON events
//! `{"event":"init","conversation_id":…,"init":{…}}`,
//! `{"event":"step_update","step_update":{"step_index","state","step_type",
//! "text_delta"?,"usage"?,"error"?,…}}` and a terminal
//! `{"event":"result","result":{"status","response","error"?,"num_turns",
//! "usage":{input_tokens, output_tokens, thinking_tokens, cache_read_tokens,
//! total_tokens}}}` (shapes from an agy 1.1.17 capture).
//!
//! Usage: `total_tokens` = input + output in the capture, so thinking is not
//! inside `output_tokens` and is added to output. `input_tokens` is taken to
//! include the cached part (Gemini's convention; the capture's cache was 0,
//! so this is unverified) and the cache is split out of it.

use std::collections::BTreeMap;

use drover_kit::output::last_line;
use drover_kit::usage::Count;
use drover_kit::{PromptKind, TurnOutcome, TurnOutput, TurnResult, Usage, UsageReport};
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize, Default, Clone, Copy)]
struct Tokens {
    #[serde(default)]
    input_tokens: Count,
    #[serde(default)]
    output_tokens: Count,
    #[serde(default)]
    thinking_tokens: Count,
    #[serde(default)]
    cache_read_tokens: Count,
}

impl Tokens {
    fn usage(&self, requests: u64) -> Usage {
        let (input, cache_read) = (self.input_tokens.0, self.cache_read_tokens.0);
        Usage {
            input: if cache_read <= input {
                input - cache_read
            } else {
                input
            },
            output: self.output_tokens.0.saturating_add(self.thinking_tokens.0),
            cache_read,
            cache_write: 0,
            reasoning: self.thinking_tokens.0,
            requests,
        }
    }
}

/// The sentence agy prints in plain print mode when a tool needed a
/// permission it could not ask for (github antigravity-cli#650, agy 1.1.5).
const HEADLESS_DENIAL: &str = "that headless mode cannot prompt for";

#[derive(Default)]
struct Stream {
    conversation_id: Option<String>,
    model: String,
    /// step index -> accumulated response text.
    responses: BTreeMap<i64, String>,
    /// step indexes of model responses that reported usage.
    calls: Vec<i64>,
    tool_error: Option<String>,
    denied: bool,
    result: Option<Value>,
}

fn text(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn is_denial(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    m.contains("permission check failed")
        || m.contains("denied permission")
        || m.contains(HEADLESS_DENIAL)
}

impl Stream {
    fn fold(&mut self, event: &Value) {
        match event.get("event").and_then(Value::as_str) {
            Some("init") => {
                self.conversation_id =
                    text(event.get("conversation_id")).or(self.conversation_id.take());
                if let Some(model) = text(event.get("init").and_then(|i| i.get("model"))) {
                    self.model = model;
                }
            }
            Some("step_update") => {
                if let Some(step) = event.get("step_update") {
                    self.step(step);
                }
            }
            Some("result") => self.result = event.get("result").cloned(),
            _ => {}
        }
    }

    fn step(&mut self, step: &Value) {
        let index = step.get("step_index").and_then(Value::as_i64).unwrap_or(-1);
        let state = step.get("state").and_then(Value::as_str);
        match step.get("step_type").and_then(Value::as_str) {
            Some("agent_response") => {
                if let Some(delta) = step.get("text_delta").and_then(Value::as_str) {
                    self.responses.entry(index).or_default().push_str(delta);
                }
                if state == Some("DONE")
                    && step.get("usage").is_some()
                    && !self.calls.contains(&index)
                {
                    self.calls.push(index);
                }
            }
            Some("tool") if state == Some("ERROR") => {
                let message = text(step.get("error").and_then(|e| e.get("message")));
                if message.as_deref().is_some_and(is_denial) {
                    self.denied = true;
                }
                self.tool_error = message.or(self.tool_error.take());
            }
            _ => {}
        }
    }
}

pub fn parse(output: &TurnOutput) -> TurnResult {
    let mut stream = Stream::default();
    for event in drover_kit::output::json_lines(&output.stdout) {
        stream.fold(&event);
    }
    let Some(result) = stream.result.take() else {
        return without_result(output, stream);
    };
    let conversation_id = text(result.get("conversation_id")).or(stream.conversation_id.clone());
    let status = result
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_ascii_uppercase();
    let error = text(result.get("error")).or(stream.tool_error.clone());
    let succeeded = matches!(status.as_str(), "SUCCESS" | "OK");
    let (outcome, prompt_kind) = if succeeded {
        (TurnOutcome::Success, None)
    } else if stream.denied || error.as_deref().is_some_and(is_denial) {
        (TurnOutcome::Blocked, Some(PromptKind::Permission))
    } else {
        (TurnOutcome::Failed, None)
    };
    // Tool turns can end with an empty `response`: the streamed text of the
    // last model response is the reply then.
    let reply = text(result.get("response")).or_else(|| {
        stream
            .responses
            .values()
            .rev()
            .map(|t| t.trim())
            .find(|t| !t.is_empty())
            .map(str::to_string)
    });
    let usage = result
        .get("usage")
        .and_then(|u| Tokens::deserialize(u).ok())
        .map(|tokens| {
            let requests = (stream.calls.len() as u64).max(1);
            UsageReport::single(
                conversation_id.as_deref().unwrap_or(""),
                &stream.model,
                tokens.usage(requests),
            )
        });
    TurnResult {
        outcome,
        reply: if succeeded { reply } else { None },
        conversation_id,
        error: if succeeded {
            None
        } else {
            error.or_else(|| last_line(&output.stderr))
        },
        usage,
        prompt_kind,
    }
}

/// No result event: plain-text print mode, a crash, or a kill.
fn without_result(output: &TurnOutput, stream: Stream) -> TurnResult {
    let denial = [&output.stdout, &output.stderr]
        .iter()
        .flat_map(|t| t.lines())
        .map(str::trim)
        .find(|l| l.contains(HEADLESS_DENIAL))
        .map(str::to_string);
    let (outcome, prompt_kind) = if denial.is_some() {
        (TurnOutcome::Blocked, Some(PromptKind::Permission))
    } else if output.exit_code.is_some_and(|c| c != 0) {
        (TurnOutcome::Failed, None)
    } else {
        (TurnOutcome::Unknown, None)
    };
    let error = match outcome {
        TurnOutcome::Blocked => denial,
        TurnOutcome::Failed => last_line(&output.stderr).or_else(|| last_line(&output.stdout)),
        _ => None,
    };
    TurnResult {
        outcome,
        reply: None,
        conversation_id: stream.conversation_id,
        error,
        usage: None,
        prompt_kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::testing::assert_replied;
    use drover_kit::testing::turn_output as output;

    #[test]
    fn success_gives_reply_id_and_usage() {
        // Synthesized on the captured shape with distinctive counts:
        // input 4101 (400 cached), output 87, thinking 9.
        let r = parse(&output(
            include_str!("../fixtures/headless-ok.jsonl"),
            "",
            Some(0),
        ));
        assert_replied(&r, "pong", "7c1e0d2a-3b4f-4a5e-8f60-71829a3b4c5d");
        let report = r.usage.expect("usage");
        let u = report.total();
        assert_eq!(
            (u.input, u.cache_read, u.output, u.reasoning, u.requests),
            (3701, 400, 96, 9, 1)
        );
        assert_eq!(report.entries[0].model, "gemini-3.7-flash-high");
        assert_eq!(
            report.entries[0].session,
            "7c1e0d2a-3b4f-4a5e-8f60-71829a3b4c5d"
        );
    }

    #[test]
    fn a_denied_permission_in_headless_mode_blocks() {
        // Real capture, agy 1.1.17 (fixtures/README.md).
        let r = parse(&output(
            include_str!("../fixtures/headless-denied.jsonl"),
            "",
            Some(0),
        ));
        assert_eq!(
            (r.outcome, r.prompt_kind),
            (TurnOutcome::Blocked, Some(PromptKind::Permission))
        );
        assert_eq!(
            r.error.as_deref(),
            Some("permission check failed for command \"echo hi\": user denied permission")
        );
        assert_eq!(
            r.conversation_id.as_deref(),
            Some("4df4b685-e326-4498-b423-4732961ac2e4")
        );
        let u = r.usage.expect("usage").total();
        // total_tokens 45519 = 44909 + 610: thinking (395) is outside output.
        assert_eq!(
            (u.input, u.output, u.reasoning, u.cache_read),
            (44909, 610 + 395, 395, 0)
        );
    }

    #[test]
    fn a_failed_status_is_a_failure_and_the_reply_falls_back_to_deltas() {
        for status in ["ERROR", "FAILURE", "CANCELLED", "TIMEOUT", "WAT"] {
            let line = format!(
                r#"{{"event":"result","result":{{"status":"{status}","response":"partial","error":"model overloaded"}}}}"#
            );
            let r = parse(&output(&line, "", Some(0)));
            assert_eq!(
                (r.outcome, r.reply.as_deref(), r.error.as_deref()),
                (TurnOutcome::Failed, None, Some("model overloaded")),
                "{status}"
            );
        }
        let tool_turn = [
            r#"{"event":"step_update","step_update":{"step_index":2,"state":"ACTIVE","step_type":"agent_response","text_delta":"Hello "}}"#,
            r#"{"event":"step_update","step_update":{"step_index":2,"state":"DONE","step_type":"agent_response","text_delta":"from agy!"}}"#,
            r#"{"event":"result","result":{"status":"SUCCESS","response":""}}"#,
        ]
        .join("\n");
        let r = parse(&output(&tool_turn, "", Some(0)));
        assert_eq!(
            (r.outcome, r.reply.as_deref(), r.usage),
            (TurnOutcome::Success, Some("Hello from agy!"), None)
        );
    }

    #[test]
    fn plain_print_mode_denial_and_crashes() {
        let denial = "jetski: no output produced — a tool required the \"mcp\" permission that headless mode cannot prompt for, so it was auto-denied.\nAdd an allow-rule under permissions.allow in settings.json (e.g. mcp(<target>)).\n";
        let r = parse(&output(denial, "", Some(1)));
        assert_eq!(
            (r.outcome, r.prompt_kind),
            (TurnOutcome::Blocked, Some(PromptKind::Permission))
        );
        assert!(
            r.error
                .as_deref()
                .is_some_and(|e| e.starts_with("jetski: no output produced"))
        );
        let crash = parse(&output(
            "",
            "Error: You are not logged into Antigravity.\n",
            Some(1),
        ));
        assert_eq!(
            (crash.outcome, crash.error.as_deref()),
            (
                TurnOutcome::Failed,
                Some("Error: You are not logged into Antigravity.")
            )
        );
        let killed = parse(&output(
            r#"{"event":"init","conversation_id":"c1","init":{}}"#,
            "",
            None,
        ));
        assert_eq!(
            (killed.outcome, killed.conversation_id.as_deref()),
            (TurnOutcome::Unknown, Some("c1"))
        );
    }
}
