//! Golden tests over the real Grok 0.2.111 captures in
//! `tests/fixtures/real/grok/` (see its README and `capture/NOTES.md`).
//!
//! Expected values come from the scripted server and the captured text,
//! never from this adapter's output: every Chat Completions call the server
//! answered carried prompt 3101 (300 of them cached) and completion 77, so
//! one call is input 2801 + cache read 300, output 77. `server-requests.jsonl`
//! lists the calls: the first prompt of every session also makes a
//! Responses call forcing the `session_title` tool (seq 2, 5, 7, 10, 14, 44),
//! which grok accounts nowhere; the chat calls are seq 3 (OK), 4 (SECOND),
//! 6, 8, 11–12 (tool call, TOOLDONE), 15 (the unapproved tool call), and in
//! the tmux session 45 (TMUXOK), 48–49 (tool call, TOOLDONE).

use drover_kit::testing::{
    Evidence, Run, assert_pane_faults, assert_readings, assert_replied, calls, hook_lines,
    parse_payload, total,
};
use drover_kit::{
    Adapter, CanonicalEvent, FaultKind, PromptKind, SeatState, TurnOutcome, TurnResult, Usage,
};

use crate::Grok;
use crate::tests_support::profile;
use crate::usage::{LOG_PARSER, UPDATES_PARSER};

// real!(file) and run!(case, ext) over tests/fixtures/real/grok/.
drover_kit::testing::real_captures!("grok");

fn chat(n: u64) -> Usage {
    calls(3101 - 300, 300, 77, 0, n)
}

fn parse(run: &Run) -> TurnResult {
    run.parse_with::<Grok>(&profile(), None)
}

const SESSION: &str = "01a232b4-758f-7130-a8e5-21646eb750e3";

#[test]
fn headless_turns_report_reply_conversation_and_their_own_usage() {
    let first = parse(&run!("headless-success", "json"));
    assert_replied(&first, "OK", SESSION);
    let report = first.usage.clone().expect("usage");
    assert_eq!(report.entries[0].model, "fake-model");
    assert_eq!(report.total(), chat(1));
    // The resumed turn reports only itself (seq 4).
    let second = parse(&run!("headless-resume", "json"));
    assert_eq!(
        (second.reply.as_deref(), second.conversation_id.as_deref()),
        (Some("SECOND"), Some(SESSION))
    );
    assert_eq!(total(second.usage), chat(1));
    // streaming-json: text chunks and the closing `end` line (seq 8).
    let stream = parse(&run!("headless-stream-json", "jsonl"));
    assert_eq!(
        (stream.outcome, stream.reply.as_deref()),
        (TurnOutcome::Success, Some("STREAM"))
    );
    assert_eq!(total(stream.usage), chat(1));
    // The tool call and the answer after it (seq 11, 12).
    let tool = parse(&run!("headless-tool", "json"));
    assert_eq!(tool.reply.as_deref(), Some("TOOLDONE"));
    assert_eq!(total(tool.usage), chat(2));
    // Plain text: the reply, no session id, no usage.
    let plain = parse(&run!("headless-text", "txt"));
    assert_eq!(
        (plain.outcome, plain.reply.as_deref(), plain.usage),
        (TurnOutcome::Success, Some("PLAIN"), None)
    );
}

#[test]
fn an_unapproved_tool_leaves_the_headless_turn_blocked() {
    let r = parse(&run!("headless-tool-unapproved", "json"));
    assert_eq!(r.outcome, TurnOutcome::Blocked);
    assert_eq!(r.prompt_kind, Some(PromptKind::Permission));
    assert_eq!(r.reply, None);
    // The call that asked for the tool (seq 15) was still spent.
    assert_eq!(total(r.usage), chat(1));
}

/// (run, the CLI's sentence starts with, fault kind)
fn error_runs() -> Vec<(Run, &'static str, Option<FaultKind>)> {
    let api = "Internal error: {\n  \"message\": \"API error (status ";
    vec![
        (
            run!("headless-error-500", "json"),
            api,
            Some(FaultKind::ServerError),
        ),
        (
            run!("headless-error-503", "json"),
            api,
            Some(FaultKind::Overload),
        ),
        (
            run!("headless-error-529", "json"),
            api,
            Some(FaultKind::Overload),
        ),
        (
            run!("headless-error-429", "json"),
            "requests: Rate limit reached for requests",
            Some(FaultKind::RateLimit),
        ),
        (
            run!("headless-error-401", "json"),
            "Internal error: \"Unauthorized (401) from http://127.0.0.1:<port>/v1/chat/completions",
            Some(FaultKind::Auth),
        ),
        (run!("headless-error-400", "json"), api, None),
        (
            run!("headless-error-drop", "json"),
            "Internal error: \"reqwest error stream: error sending request for url",
            Some(FaultKind::Network),
        ),
    ]
}

#[test]
fn every_error_mode_fails_with_the_clis_sentence_and_classifies() {
    for (run, sentence, kind) in error_runs() {
        let r = parse(&run);
        assert_eq!(r.outcome, TurnOutcome::Failed, "{sentence}");
        let error = r.error.clone().unwrap_or_default();
        assert!(error.starts_with(sentence), "{error:?} vs {sentence:?}");
        let fault = Grok::classify_fault(&profile(), &run.lines());
        assert_eq!(fault.as_ref().map(|f| f.kind), kind, "{error}: {fault:?}");
        let from_sentence = Grok::classify_fault(
            &profile(),
            &error.lines().map(str::to_string).collect::<Vec<_>>(),
        );
        assert_eq!(from_sentence.map(|f| f.kind), kind, "{error}");
    }
    // A closed port: grok retried silently until the capture's timeout.
    let closed = run!("headless-error-closed-port", "json");
    assert_eq!(parse(&closed).outcome, TurnOutcome::Unknown);
    assert_eq!(Grok::classify_fault(&profile(), &closed.lines()), None);
    let text = Grok::classify_fault(&profile(), &run!("headless-error-500-text", "txt").lines())
        .expect("fault");
    assert_eq!(text.kind, FaultKind::ServerError);
}

#[test]
fn session_files_and_the_log_hold_the_turns_usage() {
    let tally = |parser: &str, name: &str, text: &str| {
        drover_kit::testing::tally::<Grok>(parser, &[(name, text)], 37)
    };
    let updates = |text: &str| {
        total(tally(
            UPDATES_PARSER,
            "/h/.grok/sessions/w/s/updates.jsonl",
            text,
        ))
    };
    // The tmux session: TMUXOK (seq 45), then the tool call and TOOLDONE
    // (48, 49); the 401 and 500 turns wrote no usage.
    assert_eq!(updates(real!("session-interactive-updates.jsonl")), chat(3));
    assert_eq!(updates(real!("session-tool-updates.jsonl")), chat(2));
    // The headless OK + SECOND session: the first process exited before
    // writing its turn's usage line, so the session file has one turn of two.
    assert_eq!(updates(real!("session-updates.jsonl")), chat(1));
    // The log has every answered chat call of the capture, by session.
    let log = tally(
        LOG_PARSER,
        "/h/.grok/logs/unified.jsonl",
        real!("logs-unified.jsonl"),
    )
    .expect("usage");
    assert_eq!(log.total(), chat(10));
    let of = |session: &str| {
        log.entries
            .iter()
            .filter(|e| e.session == session)
            .fold(Usage::ZERO, |mut sum, e| {
                sum.add(&e.usage);
                sum
            })
    };
    assert_eq!(of(SESSION), chat(2));
    assert_eq!(of("01a232b6-c7c8-7503-899a-c911851bba2a"), chat(3));
}

#[test]
fn real_hook_payloads_parse() {
    let session = "01a232b6-c7c8-7503-899a-c911851bba2a";
    let mut stops = Vec::new();
    let mut failures = 0;
    for (event, payload) in hook_lines(real!("interactive.hooks.jsonl")) {
        let parsed = parse_payload::<Grok>(&profile(), &event, &payload);
        assert_eq!(parsed.session_id.as_deref(), Some(session), "{event}");
        match event.as_str() {
            "Stop" => {
                assert_eq!(parsed.kind, CanonicalEvent::Stop);
                assert!(
                    parsed
                        .transcript_path
                        .as_deref()
                        .is_some_and(|p| p.ends_with(&format!(
                            "/.grok/sessions/%3Ctmp%3E%2Fgrok%2Fwork/{session}/updates.jsonl"
                        )))
                );
                stops.push(parsed.last_message.unwrap_or_default());
            }
            "StopFailure" => {
                failures += 1;
                assert_eq!(parsed.kind, CanonicalEvent::StopFailure);
                assert_eq!(parsed.reason.as_deref(), Some("server_error"));
            }
            "Notification" => {
                let permission = payload["notificationType"] == "permission_prompt";
                assert_eq!(parsed.prompt_kind.is_some(), permission, "{payload}");
            }
            _ => {}
        }
    }
    assert_eq!(stops, ["TMUXOK", "TOOLDONE"]);
    assert_eq!(failures, 2);
}

#[test]
fn real_panes_read_as_their_state() {
    assert_readings(
        |screen| Grok::read_screen(&profile(), &screen),
        &[
            (real!("pane-idle.txt"), SeatState::Idle, None),
            (real!("pane-working.txt"), SeatState::Working, None),
            (real!("pane-reply.txt"), SeatState::Idle, None),
            (
                real!("pane-permission.txt"),
                SeatState::Blocked,
                Some(PromptKind::Permission),
            ),
            (real!("pane-after-tool.txt"), SeatState::Idle, None),
            (real!("pane-error-401.txt"), SeatState::Idle, None),
            (real!("pane-error-500.txt"), SeatState::Idle, None),
            (
                real!("pane-trust-dialog.txt"),
                SeatState::Blocked,
                Some(PromptKind::TrustDialog),
            ),
        ],
    );
    assert_pane_faults(
        |lines| Grok::classify_fault(&profile(), &lines),
        &[
            (
                real!("pane-error-401.txt"),
                Some((
                    FaultKind::Auth,
                    "┃ Authentication required — your session has expired or your credentials were rejected. Run /login to re-authenticate, then resend your message.",
                )),
            ),
            (
                real!("pane-error-500.txt"),
                Some((
                    FaultKind::ServerError,
                    "\"message\": \"API error (status 500 Internal Server Error): The server had an error while processing your request.\", █",
                )),
            ),
            (real!("pane-reply.txt"), None),
        ],
        Evidence::IgnoringSpacing,
    );
}
