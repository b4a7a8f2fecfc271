//! Golden tests over the real Copilot CLI 1.0.102 captures (BYOK mode) in
//! `tests/fixtures/real/copilot/` (see its README and `capture/NOTES.md`).
//!
//! Expected values come from the scripted server and the captured text,
//! never from this adapter's output: every Chat Completions call the server
//! answered carried prompt 3101 (300 of them cached) and completion 77, so
//! one call is input 2801 + cache read 300, output 77. `server-requests.jsonl`
//! lists the calls: seq 1 (OK) and 2 (SECOND) are the resumed conversation
//! of `events.jsonl`; seq 5 (the tool call) and 6 (TOOLDONE) the tool run of
//! `events-tool.jsonl`; the tmux session of `events-interactive.jsonl` got
//! four answers (seq 54 TMUXOK, 57 the tool call, 58 TOOLDONE, 61 AFTER401
//! after a retried 401; the 500s answered nothing).

use drover_kit::testing::{
    Evidence, Run, assert_pane_faults, assert_readings, assert_replied, calls, hook_lines,
    parse_payload, total,
};
use drover_kit::{Adapter, CanonicalEvent, FaultKind, PromptKind, SeatState, TurnOutcome, Usage};

use crate::tests_support::profile;
use crate::{Copilot, PARSER};

// real!(file) and run!(case, ext) over tests/fixtures/real/copilot/.
drover_kit::testing::real_captures!("copilot");

fn chat(n: u64) -> Usage {
    calls(3101 - 300, 300, 77, 0, n)
}

fn events_usage(name: &str, text: &str) -> Usage {
    let path = format!("/h/.copilot/session-state/{name}/events.jsonl");
    total(drover_kit::testing::tally::<Copilot>(
        PARSER,
        &[(&path, text)],
        31,
    ))
}

#[test]
fn events_files_count_each_answered_call_once() {
    // Two lifecycles (the resume), each with its usage record and a
    // cumulative shutdown snapshot.
    assert_eq!(events_usage("s", real!("events.jsonl")), chat(2));
    assert_eq!(events_usage("t", real!("events-tool.jsonl")), chat(2));
    // The tmux session: records as the turns ran, one snapshot at /exit.
    assert_eq!(
        events_usage("i", real!("events-interactive.jsonl")),
        chat(4)
    );
    // Mid-session (before any shutdown) the records alone are the usage.
    let live: String = real!("events-interactive.jsonl")
        .lines()
        .filter(|l| !l.contains("\"session.shutdown\""))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(events_usage("i", &live), chat(4));
}

#[test]
fn headless_turns_report_reply_and_conversation() {
    let session = "eef04deb-cd7f-4775-9242-d8c6980efb1b";
    for (case, reply) in [
        (run!("headless-success", "jsonl"), "OK"),
        (run!("headless-resume", "jsonl"), "SECOND"),
    ] {
        let r = Copilot::parse_turn(&profile(), &case.output(None)).expect("parses");
        assert_replied(&r, reply, session);
        // The output has no token counts: usage comes from events.jsonl.
        assert_eq!(r.usage, None);
    }
    let tool = Copilot::parse_turn(&profile(), &run!("headless-tool", "jsonl").output(None))
        .expect("parses");
    assert_eq!(
        (tool.outcome, tool.reply.as_deref()),
        (TurnOutcome::Success, Some("TOOLDONE"))
    );
}

#[test]
fn a_denied_tool_leaves_the_headless_turn_blocked_on_a_permission() {
    // Without --allow-all-tools the CLI denies the call ("no interactive
    // user response was available") and the agent answers anyway.
    let r = Copilot::parse_turn(
        &profile(),
        &run!("headless-tool-denied", "jsonl").output(None),
    )
    .expect("parses");
    assert_eq!(r.outcome, TurnOutcome::Blocked);
    assert_eq!(r.prompt_kind, Some(PromptKind::Permission));
}

/// (run, the CLI's sentence starts with, fault kind)
fn error_runs() -> Vec<(Run, &'static str, Option<FaultKind>)> {
    vec![
        (
            run!("headless-error-500", "jsonl"),
            "Failed to get response from the AI model; retried 5 times (total retry wait time: 15.27 seconds) Last error: 500 The server had an error",
            Some(FaultKind::ServerError),
        ),
        (
            run!("headless-error-503", "jsonl"),
            "Failed to get response from the AI model; retried 5 times (total retry wait time: 14.20 seconds) Last error: 503 The engine is currently overloaded",
            Some(FaultKind::Overload),
        ),
        (
            run!("headless-error-429", "jsonl"),
            "Failed to get response from the AI model; retried 5 times (total retry wait time: 55.87 seconds) Last error: 429 Rate limit reached",
            Some(FaultKind::RateLimit),
        ),
        (
            run!("headless-error-401", "jsonl"),
            "Authentication failed with provider at http://127.0.0.1:<port>/v1 (HTTP 401).",
            Some(FaultKind::Auth),
        ),
        (run!("headless-error-400", "jsonl"), "400 fake error", None),
        (
            run!("headless-error-drop", "jsonl"),
            "Failed to get response from the AI model; retried 5 times (total retry wait time: 5.00 seconds) Last error: Failed native model HTTP request",
            Some(FaultKind::Network),
        ),
        (
            run!("headless-error-closed-port", "jsonl"),
            "Could not connect to local model provider at http://127.0.0.1:<port>/v1.",
            Some(FaultKind::Network),
        ),
    ]
}

#[test]
fn every_error_mode_fails_with_the_clis_sentence_and_classifies() {
    for (run, sentence, kind) in error_runs() {
        let r = run.parse_with::<Copilot>(&profile(), None);
        assert_eq!(r.outcome, TurnOutcome::Failed, "{sentence}");
        let error = r.error.clone().unwrap_or_default();
        assert!(error.starts_with(sentence), "{error:?} vs {sentence:?}");
        let fault = Copilot::classify_fault(&profile(), &run.lines());
        assert_eq!(
            fault.as_ref().map(|f| f.kind),
            kind,
            "{sentence}: {fault:?}"
        );
        let lines: Vec<String> = error.lines().map(str::to_string).collect();
        let from_sentence = Copilot::classify_fault(&profile(), &lines);
        assert_eq!(from_sentence.map(|f| f.kind), kind, "{sentence}");
    }
    let text = Copilot::classify_fault(&profile(), &run!("headless-error-500-text", "txt").lines())
        .expect("fault");
    assert_eq!(
        (text.kind, text.evidence.as_str()),
        (
            FaultKind::ServerError,
            "Failed to get response from the AI model; retried 5 times (total retry wait time: 15.14 seconds) Last error: 500 The server had an error while processing your request."
        )
    );
}

#[test]
fn real_hook_payloads_parse() {
    let lines = hook_lines(real!("interactive.hooks.jsonl"));
    let mut stops = 0;
    for (event, payload) in &lines {
        let parsed = parse_payload::<Copilot>(&profile(), event, payload);
        match event.as_str() {
            "agentStop" => {
                stops += 1;
                assert_eq!(parsed.kind, CanonicalEvent::Stop);
                assert!(!parsed.subagent);
                assert_eq!(
                    parsed.session_id.as_deref(),
                    Some("3a1daf19-041f-48c5-a6b1-4ea8ab43d381")
                );
                assert!(
                    parsed
                        .transcript_path
                        .as_deref()
                        .is_some_and(|p| p.ends_with(
                            ".copilot/session-state/3a1daf19-041f-48c5-a6b1-4ea8ab43d381/events.jsonl"
                        ))
                );
            }
            "notification" => {
                assert_eq!(parsed.kind, CanonicalEvent::Notification);
                assert_eq!(parsed.prompt_kind, Some(PromptKind::Permission));
            }
            // Model-call errors the CLI retries are not the turn's end.
            "errorOccurred" => assert_eq!(parsed.kind, CanonicalEvent::Other),
            "sessionEnd" => assert_eq!(parsed.kind, CanonicalEvent::SessionEnd),
            _ => {}
        }
    }
    assert_eq!(stops, 3);
}

#[test]
fn real_panes_read_as_their_state() {
    assert_readings(
        |screen| Copilot::read_screen(&profile(), &screen),
        &[
            (real!("pane-idle.txt"), SeatState::Idle, None),
            // A second after agentStop the status row still says
            // `● Working · 6 B esc esc interrupt`; the hook, not the pane,
            // ends a tmux turn.
            (real!("pane-reply.txt"), SeatState::Working, None),
            (real!("pane-error-500-final.txt"), SeatState::Idle, None),
            (real!("pane-working.txt"), SeatState::Working, None),
            (
                real!("pane-permission.txt"),
                SeatState::Blocked,
                Some(PromptKind::Permission),
            ),
            (
                real!("pane-trust-dialog.txt"),
                SeatState::Blocked,
                Some(PromptKind::TrustDialog),
            ),
            (real!("pane-error-500.txt"), SeatState::Working, None),
        ],
    );
    assert_pane_faults(
        |lines| Copilot::classify_fault(&profile(), &lines),
        &[(
            real!("pane-error-500-final.txt"),
            Some((
                FaultKind::ServerError,
                "✗ Failed to get response from the AI model; retried 5 times (total retry wait time: 15.88 seconds) Last error: 500 The server had an error while processing your request.",
            )),
        )],
        Evidence::Exact,
    );
}
