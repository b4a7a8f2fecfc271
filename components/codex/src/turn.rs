//! Reading `codex exec --json` output: one JSON event per line,
//! `thread.started{thread_id}`, `turn.started`, `item.completed{item}`
//! (`agent_message` text, and `error` items that are warnings), then
//! `turn.completed{usage}` or a top-level `error{message}` followed by
//! `turn.failed{error{message}}` with exit code 1.
//!
//! `--dangerously-bypass-hook-trust` adds warning `error` items to every run,
//! and a retried request reports a top-level `error` before it succeeds, so
//! only the turn's last event decides the outcome.
//!
//! `turn.completed.usage` is the thread's running total, not the turn's:
//! after a resume it includes every earlier turn. The engine passes what it
//! recorded for earlier turns as `prior_usage`; it is subtracted here.
//!
//! Exec does not say how many API calls a turn made. Every tool item
//! (`command_execution`, `file_change`, `mcp_tool_call`, `web_search`) is
//! answered by one more call, so a turn counts one request plus one per tool
//! item (the real tool turn: two calls served, one `command_execution`).
//! Tool calls the model made in parallel in one response over-count.
//!
//! Without `--json` (text mode, only when the profile asks for text) stdout
//! is the reply alone and stderr carries the banner, `tokens used` and
//! `ERROR: S` lines. When drover asked for `--json`, a turn that printed no
//! event did not say how it ended, whatever it printed instead.

use crate::usage::Tokens;
use drover_kit::{TurnOutcome, TurnOutput, TurnResult, Usage, UsageReport};
use serde::Deserialize;

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: Option<String>,
    thread_id: Option<String>,
    message: Option<String>,
    item: Option<Item>,
    usage: Option<Tokens>,
    error: Option<ErrorBody>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(rename = "type")]
    kind: Option<String>,
    text: Option<String>,
}

#[derive(Deserialize)]
struct ErrorBody {
    message: Option<String>,
}

/// Exec item types that run a tool; the model is called again after each.
const TOOL_ITEMS: &[&str] = &[
    "command_execution",
    "file_change",
    "mcp_tool_call",
    "web_search",
];

enum End {
    Completed(Tokens),
    Failed(Option<String>),
}

#[derive(Default)]
struct Events {
    thread_id: Option<String>,
    reply: Option<String>,
    last_error: Option<String>,
    end: Option<End>,
    tool_items: u64,
    saw_event: bool,
}

fn read_events(stdout: &str) -> Events {
    let mut events = Events::default();
    let lines = stdout.lines().map(str::trim).filter(|l| l.starts_with('{'));
    for event in lines.filter_map(|l| serde_json::from_str::<Event>(l).ok()) {
        events.saw_event |= event.kind.is_some();
        match event.kind.as_deref() {
            Some("thread.started") if events.thread_id.is_none() => {
                events.thread_id = event.thread_id.filter(|id| !id.is_empty());
            }
            Some("item.completed") => match event.item {
                Some(Item {
                    kind: Some(kind),
                    text: Some(text),
                }) if kind == "agent_message" => events.reply = Some(text),
                Some(Item {
                    kind: Some(kind), ..
                }) if TOOL_ITEMS.contains(&kind.as_str()) => events.tool_items += 1,
                _ => {}
            },
            Some("error") => events.last_error = event.message.or(events.last_error),
            Some("turn.completed") => {
                events.end = Some(End::Completed(event.usage.unwrap_or_default()))
            }
            Some("turn.failed") => {
                events.end = Some(End::Failed(event.error.and_then(|e| e.message)))
            }
            _ => {}
        }
    }
    events
}

/// The error sentence of text-mode output (`ERROR: S`), else the first
/// `error:` line (argument errors), else the last line that is not noise.
fn stderr_error(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if let Some(sentence) = lines.iter().rev().find_map(|l| l.strip_prefix("ERROR:")) {
        return Some(sentence.trim().to_string());
    }
    if let Some(line) = lines
        .iter()
        .find(|l| l.starts_with("error:") || l.starts_with("Error"))
    {
        return Some((*line).to_string());
    }
    let noise = |l: &&&str| {
        l.starts_with("Reading additional input from stdin") || l.starts_with("WARNING:")
    };
    lines
        .iter()
        .rev()
        .find(|l| !noise(l))
        .map(|l| (*l).to_string())
}

/// The thread id text mode prints in its stderr banner (`session id: …`).
fn banner_session(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("session id:"))
        .map(str::trim)
        .filter(|id| !id.is_empty() && !id.contains(char::is_whitespace))
        .map(str::to_string)
}

/// The turn's own usage from the thread total. Figures that do not cover
/// `prior` cannot be a running total (a version that reports per turn), so
/// they are taken as they are.
fn per_turn(reported: Usage, prior: Option<&Usage>) -> Usage {
    let Some(prior) = prior else {
        return reported;
    };
    let covers = reported.input >= prior.input
        && reported.output >= prior.output
        && reported.cache_read >= prior.cache_read
        && reported.cache_write >= prior.cache_write
        && reported.reasoning >= prior.reasoning;
    if !covers {
        return reported;
    }
    Usage {
        // Requests are not part of the running total.
        requests: reported.requests,
        ..reported.minus(prior)
    }
}

/// A text-mode turn: stdout is the reply.
pub fn parse_text(output: &TurnOutput) -> TurnResult {
    let text = output.stdout.trim();
    if !read_events(&output.stdout).saw_event && output.exit_code == Some(0) && !text.is_empty() {
        return TurnResult::replied(text.to_string(), banner_session(&output.stderr));
    }
    parse(output)
}

/// A `--json` turn.
pub fn parse(output: &TurnOutput) -> TurnResult {
    let events = read_events(&output.stdout);
    let exited_badly = output.exit_code.is_some_and(|c| c != 0);
    if !events.saw_event && output.exit_code == Some(0) && !output.stdout.trim().is_empty() {
        return TurnResult {
            outcome: TurnOutcome::Unknown,
            reply: None,
            conversation_id: banner_session(&output.stderr),
            error: Some("it printed no JSON events (drover asked for --json)".to_string()),
            usage: None,
            prompt_kind: None,
        };
    }
    let mut result = TurnResult {
        outcome: TurnOutcome::Failed,
        reply: None,
        conversation_id: events.thread_id.or_else(|| banner_session(&output.stderr)),
        error: None,
        usage: None,
        prompt_kind: None,
    };
    match events.end {
        Some(End::Completed(usage)) if !exited_badly => {
            let usage = per_turn(
                usage.usage(1 + events.tool_items),
                output.prior_usage.as_ref(),
            );
            let session = result.conversation_id.clone().unwrap_or_default();
            result.outcome = TurnOutcome::Success;
            result.reply = events.reply;
            result.usage = Some(UsageReport::single(&session, "", usage));
        }
        Some(End::Completed(_)) => {
            result.error = stderr_error(&output.stderr).or(events.last_error);
        }
        Some(End::Failed(message)) => {
            result.error = message
                .or(events.last_error)
                .or_else(|| stderr_error(&output.stderr));
        }
        // No turn end: interrupted (exit 0), killed at the deadline while
        // reconnecting, or refused before the thread started.
        None => {
            if output.exit_code == Some(0) && events.last_error.is_none() {
                result.outcome = TurnOutcome::Unknown;
            }
            result.error = events.last_error.or_else(|| stderr_error(&output.stderr));
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::testing::assert_replied;

    fn output(stdout: &str, stderr: &str, exit: Option<i32>, prior: Option<Usage>) -> TurnOutput {
        TurnOutput {
            stdout: stdout.to_string(),
            stderr: stderr.to_string(),
            exit_code: exit,
            prior_usage: prior,
        }
    }

    const SUCCESS: &str = include_str!("../fixtures/exec-success.jsonl");
    const HOOK_TRUST: &str = include_str!("../fixtures/exec-success-hook-trust.jsonl");
    const RESUMED: &str = include_str!("../fixtures/exec-resumed.jsonl");
    const FAILED_500: &str = include_str!("../fixtures/exec-failed-500.jsonl");
    const STDERR: &str = include_str!("../fixtures/exec-stderr.txt");
    const THREAD: &str = "019a9776-0a34-7842-8627-112b63d66e90";

    fn fields(u: &Usage) -> (u64, u64, u64, u64, u64, u64) {
        (
            u.input,
            u.cache_read,
            u.cache_write,
            u.output,
            u.reasoning,
            u.requests,
        )
    }

    #[test]
    fn success_gives_reply_thread_and_usage() {
        let r = parse(&output(SUCCESS, STDERR, Some(0), None));
        assert_replied(&r, "OK", THREAD);
        assert_eq!(r.error, None);
        let report = r.usage.expect("usage");
        assert_eq!(report.entries[0].session, THREAD);
        // Responses: input 2101 of which 1000 cached, output 67 of which 5 reasoning.
        assert_eq!(fields(&report.total()), (1101, 1000, 0, 67, 5, 1));
    }

    #[test]
    fn hook_trust_warnings_do_not_fail_a_completed_turn() {
        let r = parse(&output(HOOK_TRUST, "", Some(0), None));
        assert_eq!(r.outcome, TurnOutcome::Success);
        assert_eq!(r.reply.as_deref(), Some("OK"));
        assert_eq!(r.error, None);
    }

    #[test]
    fn a_resumed_turn_reports_its_own_usage() {
        // After one more request the thread total is 4202 in (2000 cached),
        // 134 out (10 reasoning); the first turn was 2101/1000/67/5.
        let prior = Usage {
            input: 1101,
            output: 67,
            cache_read: 1000,
            cache_write: 0,
            reasoning: 5,
            requests: 1,
        };
        let r = parse(&output(RESUMED, "", Some(0), Some(prior)));
        assert_eq!(
            (r.outcome, r.reply.as_deref()),
            (TurnOutcome::Success, Some("SECOND"))
        );
        assert_eq!(r.conversation_id.as_deref(), Some(THREAD));
        assert_eq!(
            fields(&r.usage.expect("usage").total()),
            (1101, 1000, 0, 67, 5, 1)
        );
        // Without the engine's record the running total is all there is.
        let bare = parse(&output(RESUMED, "", Some(0), None));
        assert_eq!(
            fields(&bare.usage.expect("usage").total()),
            (2202, 2000, 0, 134, 10, 1)
        );
        // A prior larger than the report means the report is per turn.
        let big = Usage {
            input: 99_999,
            ..prior
        };
        let odd = parse(&output(RESUMED, "", Some(0), Some(big)));
        assert_eq!(odd.usage.expect("usage").total().input, 2202);
    }

    #[test]
    fn failed_turns_carry_the_clis_sentence() {
        let r = parse(&output(FAILED_500, STDERR, Some(1), None));
        assert_eq!(r.outcome, TurnOutcome::Failed);
        assert_eq!(
            r.error.as_deref(),
            Some("We’re currently experiencing high demand, which may cause temporary errors.")
        );
        assert_eq!((r.reply, r.usage), (None, None));
        assert_eq!(r.conversation_id.as_deref(), Some(THREAD));
        let bare = r#"{"type":"turn.failed","error":{}}"#;
        let top = r#"{"type":"error","message":"exceeded retry limit, last status: 429 Too Many Requests"}"#;
        let r = parse(&output(&format!("{top}\n{bare}\n"), "", Some(1), None));
        assert_eq!(
            r.error.as_deref(),
            Some("exceeded retry limit, last status: 429 Too Many Requests")
        );
    }

    #[test]
    fn a_turn_killed_while_reconnecting_is_a_failure() {
        let stdout = format!(
            "{{\"type\":\"thread.started\",\"thread_id\":\"{THREAD}\"}}\n{{\"type\":\"turn.started\"}}\n{}\n",
            r#"{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}"#
        );
        let r = parse(&output(&stdout, "", None, None));
        assert_eq!(r.outcome, TurnOutcome::Failed);
        assert_eq!(
            r.error.as_deref(),
            Some("Reconnecting... waiting for network (Connection failed: error sending request)")
        );
        let quiet = format!(
            "{{\"type\":\"thread.started\",\"thread_id\":\"{THREAD}\"}}\n{{\"type\":\"turn.started\"}}\n"
        );
        assert_eq!(
            parse(&output(&quiet, "", Some(0), None)).outcome,
            TurnOutcome::Unknown
        );
    }

    #[test]
    fn text_mode_and_argument_errors_come_from_stderr() {
        let text = format!(
            "{STDERR}ERROR: unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:18002/v1/responses\n"
        );
        let r = parse(&output("", &text, Some(1), None));
        assert_eq!(r.outcome, TurnOutcome::Failed);
        assert!(
            r.error
                .as_deref()
                .is_some_and(|e| e.starts_with("unexpected status 401 Unauthorized"))
        );
        let clap = "error: unexpected argument '--bogus' found\n\nUsage: codex exec [OPTIONS] [PROMPT]\n\nFor more information, try '--help'.\n";
        assert_eq!(
            parse(&output("", clap, Some(2), None)).error.as_deref(),
            Some("error: unexpected argument '--bogus' found")
        );
        // Only noise on stderr: no sentence to report.
        assert_eq!(parse(&output("", STDERR, Some(1), None)).error, None);
        // A completed turn whose process still failed is not a success.
        let r = parse(&output(
            SUCCESS,
            "Error: failed to write rollout\n",
            Some(1),
            None,
        ));
        assert_eq!(
            (r.outcome, r.error.as_deref()),
            (TurnOutcome::Failed, Some("Error: failed to write rollout"))
        );
    }
}
