//! Reading `grok -p … --output-format json` output: one JSON object
//! `{"text","stopReason","sessionId","requestId","usage":{input_tokens,
//! cache_read_input_tokens,output_tokens,reasoning_tokens,total_tokens},
//! "num_turns","modelUsage":{<model>:{inputTokens,outputTokens,
//! cacheReadInputTokens,modelCalls}}}`, or on failure
//! `{"type":"error","message":…}` (exit 1). `streaming-json` output is read
//! too: `text` chunks and a closing `end` (or `error`) line with the same
//! fields.
//!
//! Usage is the prompt's own (a resumed session reports only the new turn),
//! with `input_tokens` already net of cache reads; `total_tokens = input +
//! cache read + output`, so `output_tokens` includes reasoning. A tool that
//! needed approval in a run without `--always-approve` ends the turn with
//! `stopReason: "Cancelled"`, empty text and exit 0: blocked on a
//! permission.

use drover_kit::output::last_line;
use drover_kit::usage::count;
use drover_kit::{PromptKind, TurnOutcome, TurnOutput, TurnResult, Usage, UsageEntry, UsageReport};
use serde_json::Value;

/// The closing object of either output format.
fn closing(stdout: &str) -> (Option<Value>, String) {
    let trimmed = stdout.trim();
    if trimmed.starts_with('{')
        && let Ok(doc) = serde_json::from_str::<Value>(trimmed)
    {
        let text = doc
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        return (Some(doc), text);
    }
    // streaming-json: one object per line.
    let mut text = String::new();
    let mut last = None;
    for line in trimmed.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        match event.get("type").and_then(Value::as_str) {
            Some("text") => text.push_str(
                event
                    .get("data")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
            ),
            Some("end" | "error") => last = Some(event),
            _ => {}
        }
    }
    (last, text)
}

fn usage_of(doc: &Value, session: &str) -> Option<UsageReport> {
    let totals = doc.get("usage").filter(|u| u.is_object())?;
    let reasoning = count(totals.get("reasoning_tokens"));
    let models: Vec<(&String, &Value)> = doc
        .get("modelUsage")
        .and_then(Value::as_object)
        .map(|m| m.iter().collect())
        .unwrap_or_default();
    let entry = |model: &str, usage: Usage| UsageEntry {
        session: session.to_string(),
        day: String::new(),
        model: model.to_string(),
        usage,
    };
    let mut entries = Vec::new();
    if models.is_empty() {
        entries.push(entry(
            "",
            Usage {
                input: count(totals.get("input_tokens")),
                output: count(totals.get("output_tokens")),
                cache_read: count(totals.get("cache_read_input_tokens")),
                cache_write: 0,
                reasoning,
                requests: count(doc.get("num_turns")),
            },
        ));
    } else {
        for (model, m) in &models {
            entries.push(entry(
                model,
                Usage {
                    input: count(m.get("inputTokens")),
                    output: count(m.get("outputTokens")),
                    cache_read: count(m.get("cacheReadInputTokens")),
                    cache_write: 0,
                    // Only the totals break reasoning out; one model owns it.
                    reasoning: if models.len() == 1 { reasoning } else { 0 },
                    requests: count(m.get("modelCalls")),
                },
            ));
        }
        if models.len() > 1 && reasoning > 0 {
            entries.push(entry(
                "",
                Usage {
                    reasoning,
                    ..Usage::ZERO
                },
            ));
        }
    }
    Some(UsageReport {
        entries,
        rejected_rows: 0,
    })
}

pub fn parse(output: &TurnOutput) -> TurnResult {
    let (doc, text) = closing(&output.stdout);
    let exited_ok = output.exit_code == Some(0);
    let Some(doc) = doc else {
        // Plain output, or nothing readable.
        let reply = Some(output.stdout.trim().to_string()).filter(|s| !s.is_empty());
        return TurnResult {
            outcome: match (output.exit_code, &reply) {
                (Some(0), Some(_)) => TurnOutcome::Success,
                (Some(0), None) | (None, _) => TurnOutcome::Unknown,
                (Some(_), _) => TurnOutcome::Failed,
            },
            reply: reply.filter(|_| exited_ok),
            conversation_id: None,
            error: (!exited_ok).then(|| last_line(&output.stderr)).flatten(),
            usage: None,
            prompt_kind: None,
        };
    };
    let session = doc
        .get("sessionId")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    let usage = usage_of(&doc, session.unwrap_or_default());
    let error = (doc.get("type").and_then(Value::as_str) == Some("error")).then(|| {
        doc.get("message")
            .and_then(Value::as_str)
            .unwrap_or("error")
            .to_string()
    });
    let stop = doc
        .get("stopReason")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let (outcome, prompt_kind, error) = match (error, stop) {
        (Some(message), _) => (TurnOutcome::Failed, None, Some(message)),
        (None, _) if !exited_ok && output.exit_code.is_some() => {
            (TurnOutcome::Failed, None, last_line(&output.stderr))
        }
        (None, "EndTurn") => (TurnOutcome::Success, None, None),
        (None, "Cancelled") if exited_ok => {
            (TurnOutcome::Blocked, Some(PromptKind::Permission), None)
        }
        (None, "") => (TurnOutcome::Unknown, None, None),
        (None, other) => (
            TurnOutcome::Failed,
            None,
            Some(format!("turn stopped: {other}")),
        ),
    };
    let reply =
        Some(text.trim().to_string()).filter(|t| !t.is_empty() && outcome == TurnOutcome::Success);
    TurnResult {
        outcome,
        reply,
        conversation_id: session.map(str::to_string),
        error,
        usage,
        prompt_kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(stdout: &str, code: Option<i32>) -> TurnOutput {
        TurnOutput {
            stdout: stdout.to_string(),
            stderr: String::new(),
            exit_code: code,
            prior_usage: None,
        }
    }

    #[test]
    fn several_models_keep_their_own_counts_and_reasoning_stays_whole() {
        let doc = r#"{"text":"ok","stopReason":"EndTurn","sessionId":"s",
            "usage":{"input_tokens":30,"cache_read_input_tokens":7,"output_tokens":12,"reasoning_tokens":4},
            "modelUsage":{"a":{"inputTokens":10,"outputTokens":5,"cacheReadInputTokens":7,"modelCalls":1},
                          "b":{"inputTokens":20,"outputTokens":7,"cacheReadInputTokens":0,"modelCalls":2}}}"#;
        let r = parse(&out(doc, Some(0)));
        let report = r.usage.expect("usage");
        let total = report.total();
        assert_eq!(
            (
                total.input,
                total.output,
                total.cache_read,
                total.reasoning,
                total.requests
            ),
            (30, 12, 7, 4, 3)
        );
        assert_eq!(report.entries.len(), 3);
    }

    #[test]
    fn other_stop_reasons_fail_and_garbage_is_unknown() {
        let r = parse(&out(
            r#"{"text":"","stopReason":"MaxTurnRequests","sessionId":"s"}"#,
            Some(0),
        ));
        assert_eq!(
            (r.outcome, r.error.as_deref()),
            (TurnOutcome::Failed, Some("turn stopped: MaxTurnRequests"))
        );
        assert_eq!(parse(&out("", Some(0))).outcome, TurnOutcome::Unknown);
        let killed = parse(&out("{\"type\":\"text\",\"data\":\"par", None));
        assert_eq!((killed.outcome, killed.usage), (TurnOutcome::Unknown, None));
        // Hostile numbers read as zero, never a panic.
        let odd = parse(&out(
            r#"{"stopReason":"EndTurn","usage":{"input_tokens":-5,"output_tokens":"x"},"modelUsage":[]}"#,
            Some(0),
        ));
        assert_eq!(odd.usage.expect("usage").total(), Usage::ZERO);
    }
}
