//! Reading `copilot -p … --output-format json` output: JSONL session events
//! (`{"type": …, "data": {…}, "id", "timestamp", "ephemeral"?}`) ending in a
//! `result` line `{"type":"result","sessionId":…,"exitCode":…,"usage":
//! {"premiumRequests":…,"totalApiDurationMs":…,…}}`.
//!
//! The result carries premium requests, not tokens, so a turn reports no
//! usage: the tokens land in `events.jsonl` (`session.shutdown`), which the
//! `copilot-events` tally reads. The process is reported to exit 0 even when
//! the agent failed, so `exitCode` on the result line decides.

use drover_kit::output::last_line;
use drover_kit::{PromptKind, TurnOutcome, TurnOutput, TurnResult};
use serde_json::Value;

/// What the event stream said, folded line by line.
#[derive(Default)]
struct Stream {
    saw_event: bool,
    session_id: Option<String>,
    exit_code: Option<i64>,
    saw_result: bool,
    reply: Option<String>,
    summary: Option<String>,
    task_failed: bool,
    error: Option<String>,
    blocked: Option<PromptKind>,
}

fn text(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

impl Stream {
    fn fold(&mut self, event: &Value) {
        let Some(kind) = event.get("type").and_then(Value::as_str) else {
            return;
        };
        self.saw_event = true;
        let data = event.get("data");
        let field = |key: &str| data.and_then(|d| d.get(key));
        // Subagent events carry an envelope-level agentId; only the main
        // agent's messages are the turn's reply.
        let from_subagent = event.get("agentId").is_some_and(|a| !a.is_null());
        match kind {
            "result" => {
                self.saw_result = true;
                self.session_id = text(event.get("sessionId")).or(self.session_id.take());
                self.exit_code = event.get("exitCode").and_then(Value::as_i64);
            }
            "session.start" if self.session_id.is_none() => {
                self.session_id = text(field("sessionId"));
            }
            "assistant.message" if !from_subagent => {
                if let Some(content) = text(field("content")) {
                    self.reply = Some(content);
                }
            }
            "session.task_complete" => {
                self.summary = text(field("summary"));
                self.task_failed = field("success").and_then(Value::as_bool) == Some(false);
            }
            "session.error" => {
                self.error = text(field("message")).or_else(|| text(field("errorType")));
            }
            "permission.completed" => {
                let result_kind = field("result")
                    .and_then(|r| r.get("kind"))
                    .and_then(Value::as_str);
                // Headless mode cannot ask: a tool that needed approval is
                // denied with this kind, which is a prompt drover must answer.
                if result_kind == Some("denied-no-approval-rule-and-could-not-request-from-user") {
                    self.blocked = Some(PromptKind::Permission);
                }
            }
            // 1.0.102 reports the same denial on the tool's completion:
            // `error.code: "denied"` ("Permission denied because no
            // interactive user response was available").
            "tool.execution_complete" if !from_subagent => {
                let code = field("error")
                    .and_then(|e| e.get("code"))
                    .and_then(Value::as_str);
                if code == Some("denied") {
                    self.blocked = Some(PromptKind::Permission);
                }
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
    let process_failed = output.exit_code.is_some_and(|c| c != 0);
    let failed = if stream.saw_result {
        stream.exit_code.is_some_and(|c| c != 0) || process_failed
    } else {
        process_failed || stream.error.is_some()
    };
    let (outcome, prompt_kind) = if failed {
        (TurnOutcome::Failed, None)
    } else if let Some(kind) = stream.blocked {
        (TurnOutcome::Blocked, Some(kind))
    } else if stream.saw_result && !stream.task_failed {
        (TurnOutcome::Success, None)
    } else {
        (TurnOutcome::Unknown, None)
    };
    let error = if failed {
        stream
            .error
            .clone()
            .or_else(|| last_line(&output.stderr))
            .or_else(|| {
                if stream.saw_event {
                    None
                } else {
                    last_line(&output.stdout)
                }
            })
    } else {
        None
    };
    TurnResult {
        outcome,
        reply: if failed {
            None
        } else {
            stream.reply.or(stream.summary)
        },
        conversation_id: stream.session_id,
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

    // Third-party capture of Copilot CLI 1.0.36 `--output-format json`
    // (fixtures/README.md): reply "pong", session 8a216c49-….
    const PONG: &str = include_str!("../fixtures/headless-pong.jsonl");

    #[test]
    fn success_gives_reply_and_session_but_no_usage() {
        let r = parse(&output(PONG, "", Some(0)));
        assert_replied(&r, "pong", "8a216c49-e51c-4eef-9405-bf83298fced2");
        assert_eq!((r.error, r.usage, r.prompt_kind), (None, None, None));
    }

    #[test]
    fn result_exit_code_decides_even_when_the_process_exits_zero() {
        let r = parse(&output(
            include_str!("../fixtures/headless-error.jsonl"),
            "",
            Some(0),
        ));
        assert_eq!(r.outcome, TurnOutcome::Failed);
        assert_eq!(
            r.error.as_deref(),
            Some(
                "Execution failed: Error: Failed to get response from the AI model; retried 5 times (total retry wait time: 6.05 seconds) Last error: Unknown error"
            )
        );
        assert_eq!(r.reply, None);
        assert_eq!(
            r.conversation_id.as_deref(),
            Some("3f0c7a1e-5b2d-4c8e-9a6f-0d1e2f3a4b5c")
        );
    }

    #[test]
    fn an_unaskable_permission_blocks() {
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
            r.reply.as_deref(),
            Some("I could not run the command: permission was denied.")
        );
    }

    #[test]
    fn subagent_messages_are_not_the_reply() {
        let stdout = [
            r#"{"type":"assistant.message","data":{"messageId":"a","content":"main answer"}}"#,
            r#"{"type":"assistant.message","agentId":"sub-1","data":{"messageId":"b","content":"subagent chatter"}}"#,
            r#"{"type":"result","sessionId":"s","exitCode":0}"#,
        ]
        .join("\n");
        assert_eq!(
            parse(&output(&stdout, "", Some(0))).reply.as_deref(),
            Some("main answer")
        );
    }

    #[test]
    fn no_events_reports_the_last_line() {
        let r = parse(&output("", "error: unknown option '--bogus'\n", Some(1)));
        assert_eq!(
            (r.outcome, r.error.as_deref()),
            (TurnOutcome::Failed, Some("error: unknown option '--bogus'"))
        );
        // Killed by the deadline before a result line: the output does not say.
        let truncated: String = PONG.lines().take(11).collect::<Vec<_>>().join("\n");
        let r = parse(&output(&truncated, "", None));
        assert_eq!(r.outcome, TurnOutcome::Unknown);
        assert_eq!(r.reply.as_deref(), Some("pong"));
    }
}
