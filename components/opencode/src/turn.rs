//! Reading `opencode run --format json` output.
//!
//! Stdout is JSONL, one event per line, each `{"type", "timestamp",
//! "sessionID", …}`: `step_start`, `text` (`part.text`, once the text part
//! is complete), `tool_use`, `step_finish` (`part.tokens` of that model
//! call), and `error` (`error: {name, data: {message}}`). Errors also reach
//! stderr as `Error: <message>` with exit code 1. Without `--auto`, a
//! permission request is rejected and announced on stderr as
//! `permission requested: <permission> (<patterns>); auto-rejecting`; newer
//! builds also end with `{"type": "done", "rejected": […]}`.
//!
//! Token counts are per step, so a resumed turn (`--session`) reports only
//! its own calls and `prior_usage` is not needed. Title generation (one
//! call without tools when a session starts) is billed but prints no step.
//!
//! 1.18.33 with `--format json` (tests/fixtures/real/opencode) reports API
//! failures only as the stdout `error` event, with an empty stderr. Text
//! mode (no `--format`) prints the reply alone on stdout.

use std::collections::HashSet;

use drover_kit::{PromptKind, TurnOutcome, TurnOutput, TurnResult, Usage, UsageReport};
use serde_json::Value;

use crate::usage::Tokens;
use drover_kit::output::strip_ansi;

struct Events {
    session: Option<String>,
    /// Text parts per assistant message, in order.
    texts: Vec<(String, String)>,
    usage: Usage,
    saw_steps: bool,
    errors: Vec<String>,
    rejected: Vec<String>,
    step_ids: HashSet<String>,
    text_ids: HashSet<String>,
}

fn str_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut v = value;
    for key in path {
        v = v.get(key)?;
    }
    v.as_str().filter(|s| !s.is_empty())
}

/// An error event's sentence: `data.message`, else `message`, else `name`.
fn error_message(error: &Value) -> Option<String> {
    if let Value::String(s) = error {
        return Some(s.clone()).filter(|s| !s.is_empty());
    }
    str_at(error, &["data", "message"])
        .or_else(|| str_at(error, &["message"]))
        .or_else(|| str_at(error, &["name"]))
        .map(str::to_string)
}

fn read_events(stdout: &str) -> Events {
    let mut events = Events {
        session: None,
        texts: Vec::new(),
        usage: Usage::ZERO,
        saw_steps: false,
        errors: Vec::new(),
        rejected: Vec::new(),
        step_ids: HashSet::new(),
        text_ids: HashSet::new(),
    };
    for line in stdout.lines() {
        let line = line.trim();
        if !line.starts_with('{') {
            continue;
        }
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if events.session.is_none() {
            events.session = str_at(&value, &["sessionID"])
                .or_else(|| str_at(&value, &["part", "sessionID"]))
                .map(str::to_string);
        }
        let part = value.get("part").unwrap_or(&Value::Null);
        let part_id = str_at(part, &["id"]).map(str::to_string);
        match value.get("type").and_then(Value::as_str) {
            Some("text") => {
                let Some(text) = str_at(part, &["text"]) else {
                    continue;
                };
                if let Some(id) = &part_id
                    && !events.text_ids.insert(id.clone())
                {
                    continue;
                }
                let message = str_at(part, &["messageID"]).unwrap_or("").to_string();
                events.texts.push((message, text.to_string()));
            }
            Some("step_finish") => {
                events.saw_steps = true;
                if let Some(id) = &part_id
                    && !events.step_ids.insert(id.clone())
                {
                    continue;
                }
                if let Some(tokens) = part
                    .get("tokens")
                    .and_then(|t| serde_json::from_value::<Tokens>(t.clone()).ok())
                {
                    events.usage.add(&tokens.usage());
                }
            }
            Some("step_start") => events.saw_steps = true,
            Some("error") => {
                let message = value
                    .get("error")
                    .and_then(error_message)
                    .unwrap_or_else(|| "error".to_string());
                events.errors.push(message);
            }
            Some("done") => {
                if let Some(list) = value.get("rejected").and_then(Value::as_array) {
                    events
                        .rejected
                        .extend(list.iter().filter_map(Value::as_str).map(str::to_string));
                }
            }
            _ => {}
        }
    }
    events
}

/// The reply: the text of the last assistant message that had any.
fn reply(texts: &[(String, String)]) -> Option<String> {
    let (last, _) = texts.last()?;
    let parts: Vec<&str> = texts
        .iter()
        .filter(|(message, _)| message == last)
        .map(|(_, text)| text.as_str())
        .collect();
    Some(parts.join("\n"))
}

fn clean_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| strip_ansi(l).trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// Text-mode output: stdout that holds no JSON event line.
fn text_reply(stdout: &str) -> Option<String> {
    let text = strip_ansi(stdout.trim());
    let text = text.trim();
    let json = text.lines().any(|l| l.trim_start().starts_with('{'));
    (!text.is_empty() && !json).then(|| text.to_string())
}

pub fn parse(output: &TurnOutput) -> TurnResult {
    let mut events = read_events(&output.stdout);
    let stderr = clean_lines(&output.stderr);
    let stderr_error = stderr.iter().rfind(|l| l.starts_with("Error: ")).cloned();
    for line in &stderr {
        if let Some(rest) = line.split("permission requested: ").nth(1)
            && line.ends_with("auto-rejecting")
        {
            let permission = rest.split([' ', '(']).next().unwrap_or("").to_string();
            if !events.rejected.contains(&permission) {
                events.rejected.push(permission);
            }
        }
    }
    let failed = !events.errors.is_empty()
        || stderr_error.is_some()
        || output.exit_code.is_some_and(|c| c != 0);
    let usage = events
        .saw_steps
        .then(|| UsageReport::single(events.session.as_deref().unwrap_or(""), "", events.usage));
    let reply = reply(&events.texts);
    let (outcome, prompt_kind) = if failed || output.exit_code.is_none() {
        (TurnOutcome::Failed, None)
    } else if !events.rejected.is_empty() {
        (TurnOutcome::Blocked, Some(PromptKind::Permission))
    } else if events.saw_steps || reply.is_some() {
        (TurnOutcome::Success, None)
    } else if let Some(text) = text_reply(&output.stdout) {
        // Text mode: stdout is the reply.
        return TurnResult::replied(text, None);
    } else {
        (TurnOutcome::Unknown, None)
    };
    let error = if outcome == TurnOutcome::Failed {
        events
            .errors
            .last()
            .cloned()
            .or(stderr_error)
            .or_else(|| stderr.last().cloned())
    } else {
        None
    };
    TurnResult {
        outcome,
        reply: if outcome == TurnOutcome::Failed {
            None
        } else {
            reply
        },
        conversation_id: events.session,
        error,
        usage,
        prompt_kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::testing::assert_replied;
    use drover_kit::testing::turn_output as output;

    const SUCCESS: &str = include_str!("../fixtures/run-success.jsonl");
    const SESSION: &str = "ses_3a1f0c2b7ffeAbCdEfGhIjKlMn";

    #[test]
    fn success_gives_reply_session_and_usage() {
        let r = parse(&output(
            SUCCESS,
            "\u{1b}[0m> build · fake-model\u{1b}[0m\n",
            Some(0),
        ));
        assert_replied(&r, "OK", SESSION);
        assert_eq!(r.error, None);
        let u = r.usage.expect("usage").total();
        // Chat prompt 3101 with 300 cached: opencode reports input 2801 already.
        assert_eq!(
            (
                u.input,
                u.output,
                u.cache_read,
                u.cache_write,
                u.reasoning,
                u.requests
            ),
            (2801, 77, 300, 0, 0, 1)
        );
    }

    #[test]
    fn tool_steps_sum_and_the_reply_is_the_last_message() {
        let first_step = SUCCESS.replace("\"text\":\"OK\"", "\"text\":\"Let me check.\"");
        let second = SUCCESS
            .replace("msg_a1", "msg_a2")
            .replace("prt_0", "prt_1")
            .replace("\"text\":\"OK\"", "\"text\":\"DONE\"");
        let text = format!(
            "{first_step}{{\"type\":\"tool_use\",\"sessionID\":\"{SESSION}\",\"part\":{{\"id\":\"prt_t\",\"type\":\"tool\",\"tool\":\"bash\"}}}}\n{second}{second}"
        );
        let r = parse(&output(&text, "", Some(0)));
        assert_eq!(r.reply.as_deref(), Some("DONE"));
        let u = r.usage.expect("usage").total();
        assert_eq!((u.input, u.requests), (5602, 2));
    }

    #[test]
    fn errors_from_stdout_and_stderr() {
        let json_error = format!(
            "{{\"type\":\"step_start\",\"sessionID\":\"{SESSION}\",\"part\":{{\"id\":\"p\"}}}}\n{{\"type\":\"error\",\"timestamp\":1,\"sessionID\":\"{SESSION}\",\"error\":{{\"name\":\"APIError\",\"data\":{{\"message\":\"Rate limit reached for requests\",\"statusCode\":429}}}}}}\n"
        );
        let r = parse(&output(
            &json_error,
            "Error: Rate limit reached for requests\n",
            Some(1),
        ));
        assert_eq!(r.outcome, TurnOutcome::Failed);
        assert_eq!(r.error.as_deref(), Some("Rate limit reached for requests"));
        assert_eq!(r.conversation_id.as_deref(), Some(SESSION));
        assert_eq!(r.usage.map(|u| u.total()), Some(Usage::ZERO));
        // Exact stderr sentences from docs/adapters/opencode.md
        for sentence in [
            "Error: The server had an error while processing your request.",
            "Error: Incorrect API key provided",
            "Error: Cannot connect to API: Unable to connect. Is the computer able to access the url?",
        ] {
            let r = parse(&output(
                "",
                &format!("\u{1b}[91m\u{1b}[1m{sentence}\u{1b}[0m\n"),
                Some(1),
            ));
            assert_eq!(
                (r.outcome, r.error.as_deref()),
                (TurnOutcome::Failed, Some(sentence))
            );
            assert_eq!(r.usage, None);
        }
        let killed = parse(&output("", "", None));
        assert_eq!((killed.outcome, killed.error), (TurnOutcome::Failed, None));
        assert_eq!(
            parse(&output("", "", Some(0))).outcome,
            TurnOutcome::Unknown
        );
    }

    #[test]
    fn rejected_permissions_block() {
        let stderr = "! permission requested: bash (rm -rf build); auto-rejecting\n";
        let r = parse(&output(SUCCESS, stderr, Some(0)));
        assert_eq!(
            (r.outcome, r.prompt_kind),
            (TurnOutcome::Blocked, Some(PromptKind::Permission))
        );
        assert_eq!(r.reply.as_deref(), Some("OK"));
        let done = format!(
            "{SUCCESS}{{\"type\":\"done\",\"sessionID\":\"{SESSION}\",\"reason\":\"idle\",\"rejected\":[\"edit\"]}}\n"
        );
        assert_eq!(
            parse(&output(&done, "", Some(0))).outcome,
            TurnOutcome::Blocked
        );
        let none = format!("{SUCCESS}{{\"type\":\"done\",\"reason\":\"idle\",\"rejected\":[]}}\n");
        assert_eq!(
            parse(&output(&none, "", Some(0))).outcome,
            TurnOutcome::Success
        );
    }
}
