//! A headless turn's stdout: `muse exec --json` prints one envelope a line
//! (`schema_version`, `sequence`, `record_type`, `payload_type`, `payload`).
//! `run.terminal.*` carries the reply (`payload.text`) and the outcome
//! (`payload.terminal`, `payload.reason`); `run.output.delta` streams the
//! same text and is the reply only when no terminal envelope came. A
//! `task.lifecycle.failed|rejected|cancelled` is a task's, not the run's: it
//! explains a failed run and is ignored in one that completed. Exit 2 is a
//! command-line error. No token counts are printed (the session log has
//! them).

use drover_kit::output::last_line;
use drover_kit::{TurnOutcome, TurnOutput, TurnResult};
use serde_json::Value;

/// One envelope's payload type and payload, when the line is one.
pub fn envelope(line: &str) -> Option<(String, Value)> {
    let mut value: Value = serde_json::from_str(line.trim()).ok()?;
    let kind = value.get("payload_type")?.as_str()?.to_string();
    let payload = value.get_mut("payload")?.take();
    payload.is_object().then_some((kind, payload))
}

fn text(value: &Value, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// A failed task's sentence: its event's reason, or its error's message.
fn task_reason(payload: &Value) -> Option<String> {
    let event = payload.get("event").unwrap_or(payload);
    text(event, "reason").or_else(|| event.get("error").and_then(|e| text(e, "message")))
}

pub fn parse(output: &TurnOutput) -> TurnResult {
    let mut terminal: Option<(String, Option<String>)> = None;
    let mut replies: Vec<String> = Vec::new();
    let mut deltas = String::new();
    let mut task_failure: Option<String> = None;
    for line in output.stdout.lines() {
        let Some((kind, payload)) = envelope(line) else {
            continue;
        };
        if kind.starts_with("run.terminal.") {
            let outcome = text(&payload, "terminal")
                .unwrap_or_else(|| kind.trim_start_matches("run.terminal.").to_string());
            let reason = text(&payload, "reason")
                .or_else(|| payload.get("error").and_then(|e| text(e, "message")));
            replies.extend(text(&payload, "text"));
            terminal = Some((outcome, reason));
        } else if kind == "run.output.delta" {
            deltas.push_str(payload.get("text").and_then(Value::as_str).unwrap_or(""));
        } else if matches!(
            kind.as_str(),
            "task.lifecycle.failed" | "task.lifecycle.rejected" | "task.lifecycle.cancelled"
        ) {
            task_failure = task_failure
                .or_else(|| task_reason(&payload))
                .or(Some(kind));
        }
    }
    let reply = if replies.is_empty() {
        Some(deltas.trim().to_string()).filter(|d| !d.is_empty())
    } else {
        Some(replies.join("\n\n"))
    };
    let result = |outcome, reply, error| TurnResult {
        outcome,
        reply,
        conversation_id: None,
        error,
        usage: None,
        prompt_kind: None,
    };
    if output.exit_code == Some(2) {
        let said = last_line(&output.stderr).unwrap_or_default();
        return result(
            TurnOutcome::Failed,
            None,
            Some(format!(
                "`muse exec` refused its command line (exit 2): {said}"
            )),
        );
    }
    match terminal {
        Some((outcome, _)) if outcome == "completed" && output.exit_code == Some(0) => {
            match reply {
                Some(reply) => result(TurnOutcome::Success, Some(reply), None),
                None => result(
                    TurnOutcome::Unknown,
                    None,
                    Some("the run completed with no text".to_string()),
                ),
            }
        }
        Some((outcome, reason)) => result(
            TurnOutcome::Failed,
            reply,
            Some(reason.or(task_failure).map_or_else(
                || format!("the run ended {outcome}"),
                |r| format!("the run ended {outcome}: {r}"),
            )),
        ),
        None if output.exit_code == Some(0) => result(
            TurnOutcome::Unknown,
            reply,
            Some("`muse exec` printed no run.terminal envelope".to_string()),
        ),
        None => result(
            TurnOutcome::Failed,
            None,
            task_failure
                .or_else(|| last_line(&output.stderr))
                .or_else(|| last_line(&output.stdout)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(stdout: &str, exit: i32) -> TurnResult {
        parse(&TurnOutput {
            stdout: stdout.to_string(),
            stderr: String::new(),
            exit_code: Some(exit),
            prior_usage: None,
        })
    }

    fn line(kind: &str, payload: &str) -> String {
        format!(
            r#"{{"schema_version":1,"sequence":7,"record_type":"event","durability":"durable","payload_type":"{kind}","payload_schema_version":1,"payload":{payload}}}"#
        )
    }

    #[test]
    fn the_terminal_envelope_is_the_reply() {
        let out = [
            line(
                "run.model.configured",
                r#"{"model_id":"spark-1.3","provider_id":"meta"}"#,
            ),
            line("run.output.delta", r#"{"text":"HEL"}"#),
            line("run.output.delta", r#"{"text":"LO"}"#),
            line(
                "run.terminal.completed",
                r#"{"terminal":"completed","reason":"end_turn","text":"HELLO"}"#,
            ),
        ]
        .join("\n");
        let r = run(&out, 0);
        assert_eq!(
            (r.outcome, r.reply.as_deref()),
            (TurnOutcome::Success, Some("HELLO"))
        );
    }

    #[test]
    fn without_a_terminal_envelope_the_deltas_are_kept_but_nothing_completes() {
        let out = line("run.output.delta", r#"{"text":"partial"}"#);
        let r = run(&out, 0);
        assert_eq!(
            (r.outcome, r.reply.as_deref()),
            (TurnOutcome::Unknown, Some("partial"))
        );
    }

    #[test]
    fn a_failed_run_says_why_and_a_task_failure_explains_it() {
        let out = [
            line("task.lifecycle.failed", r#"{"event":{"reason":"model failed after 3 attempts: provider returned 503 service_unavailable"}}"#),
            line("run.terminal.failed", r#"{"terminal":"failed"}"#),
        ]
        .join("\n");
        let r = run(&out, 1);
        assert_eq!(r.outcome, TurnOutcome::Failed);
        assert_eq!(
            r.error.as_deref(),
            Some(
                "the run ended failed: model failed after 3 attempts: provider returned 503 service_unavailable"
            )
        );
    }

    #[test]
    fn a_rejected_task_in_a_completed_run_is_not_a_failure() {
        let out = [
            line(
                "task.lifecycle.rejected",
                r#"{"event":{"reason":"duplicate"}}"#,
            ),
            line(
                "run.terminal.completed",
                r#"{"terminal":"completed","text":"OK"}"#,
            ),
        ]
        .join("\n");
        assert_eq!(run(&out, 0).outcome, TurnOutcome::Success);
    }

    #[test]
    fn exit_two_is_a_command_line_error() {
        let r = parse(&TurnOutput {
            stdout: String::new(),
            stderr: "error: unexpected argument '--bogus'".into(),
            exit_code: Some(2),
            prior_usage: None,
        });
        assert_eq!(r.outcome, TurnOutcome::Failed);
        assert!(
            r.error
                .as_deref()
                .is_some_and(|e| e.contains("exit 2") && e.contains("--bogus"))
        );
    }

    #[test]
    fn the_fixtures_read_as_what_they_show() {
        let ok = run(include_str!("../fixtures/exec-success.jsonl"), 0);
        assert_eq!(
            (ok.outcome, ok.reply.as_deref()),
            (TurnOutcome::Success, Some("OK"))
        );
        let quota = run(include_str!("../fixtures/exec-failed-quota.jsonl"), 1);
        assert_eq!(quota.outcome, TurnOutcome::Failed);
        assert!(
            quota
                .error
                .is_some_and(|e| e.contains("weekly usage limit reached"))
        );
    }

    #[test]
    fn lines_that_are_no_envelope_are_skipped() {
        let out = format!(
            "not json\n{{\"payload_type\":3}}\n{}",
            line(
                "run.terminal.completed",
                r#"{"terminal":"completed","text":"OK"}"#
            )
        );
        assert_eq!(run(&out, 0).reply.as_deref(), Some("OK"));
    }
}
