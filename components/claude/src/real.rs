//! Golden tests over the real Claude Code 2.1.332 captures in
//! `tests/fixtures/real/claude/` (see its README and `capture/NOTES.md`).
//!
//! Expected values come from the scripted server and from the captured text,
//! never from this adapter's output: every Anthropic call the server answered
//! carried input 1201, cache_creation 1302, cache_read 1403 and output 57, and
//! `server-requests.jsonl` says which calls each run made (the `seq` numbers
//! quoted below). A failed call carried no usage at all.

use drover_kit::Adapter;
use drover_kit::screen::rows_of as lines;
use drover_kit::testing::golden::{
    Failure, Pane, assert_failures, assert_failures_classify, assert_no_run_faults, assert_panes,
    assert_sentences_classify, failure, kinds,
};
use drover_kit::testing::{
    Evidence, Run, assert_captured_hooks, assert_hooks_round_trip, assert_replied,
    captured_hook_logs, hook_lines, hook_request, only_entry, parse_payload, parsed_hooks, screen,
    total,
};
use drover_kit::usage::ChunkedTally;
use drover_kit::{
    FaultKind, HookInstall, PromptKind, SeatState, TurnOutcome, TurnResult, Usage, UsageReport,
};

use crate::tests_support::profile;
use crate::{Claude, PARSER};

// real!(file) and run!(case, ext) over tests/fixtures/real/claude/.
drover_kit::testing::real_captures!("claude");

/// parse-turn over a captured run.
fn parse(run: &Run, prior: Option<Usage>) -> TurnResult {
    run.parse_with::<Claude>(&profile(), prior)
}

/// For a run whose profile asked for text (`[turn] output = "text"`).
fn parse_text(run: &Run) -> TurnResult {
    let mut text = profile();
    text.turn_output = "text".to_string();
    run.parse_with::<Claude>(&text, None)
}

/// What the server sent for `calls` successful Anthropic calls.
fn anthropic(calls: u64) -> Usage {
    Usage {
        input: 1201 * calls,
        output: 57 * calls,
        cache_read: 1403 * calls,
        cache_write: 1302 * calls,
        reasoning: 0,
        requests: calls,
    }
}

const MODEL: &str = "claude-opus-5-5";

#[test]
fn success_resume_and_tool_turns_report_what_the_server_sent() {
    // seq 1: the first turn.
    let first = parse(&run!("headless-success", "json"), None);
    assert_replied(&first, "OK", "da51da84-d800-446b-8724-dba6795b896f");
    assert_eq!(first.error, None);
    let report = first.usage.clone().expect("usage");
    assert_eq!(report.entries.len(), 1);
    assert_eq!(report.entries[0].model, MODEL);
    assert_eq!(report.total(), anthropic(1));

    // seq 2: one more call. Its `modelUsage` is the session's running total
    // (2402 in); the turn itself is one call. drover passes the first turn
    // as prior usage, which changes nothing for Claude.
    let resumed = run!("headless-resume", "json");
    for prior in [None, Some(anthropic(1))] {
        let r = parse(&resumed, prior);
        assert_replied(&r, "SECOND", "da51da84-d800-446b-8724-dba6795b896f");
        assert_eq!(total(r.usage), anthropic(1));
    }

    // seq 4.
    let stream = parse(&run!("headless-stream-json", "jsonl"), None);
    assert_replied(&stream, "STREAM", "f0f04bcd-e310-4915-95e3-3ea40de05c08");
    assert_eq!(total(stream.usage), anthropic(1));

    // seq 6 (the tool_use answer) and seq 7.
    let tool = parse(&run!("headless-tool-allowed", "json"), None);
    assert_replied(&tool, "TOOLDONE", "8d7bc014-6561-433d-8839-e6e5d59e9657");
    assert_eq!(total(tool.usage), anthropic(2));

    // seq 9 and 10: the call was refused (`permission_denials`), the model
    // then answered DENIED.
    let denied = parse(&run!("headless-tool-denied", "json"), None);
    assert_eq!(
        (denied.outcome, denied.prompt_kind),
        (TurnOutcome::Blocked, Some(PromptKind::Permission))
    );
    assert_eq!(denied.reply.as_deref(), Some("DENIED"));
    assert_eq!(total(denied.usage), anthropic(2));
}

#[test]
fn text_mode_prints_the_reply_or_the_sentence() {
    let plain = parse_text(&run!("headless-text", "txt"));
    assert_eq!(plain.outcome, TurnOutcome::Success);
    assert_eq!(plain.reply.as_deref(), Some("PLAIN"));
    assert_eq!((plain.error, plain.usage), (None, None));

    let failed = parse_text(&run!("headless-error-529-text", "txt"));
    assert_eq!(failed.outcome, TurnOutcome::Failed);
    assert_eq!(failed.reply, None);
    assert_eq!(
        failed.error.as_deref(),
        Some(
            "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:<port>)."
        )
    );
}

fn failures() -> Vec<Failure> {
    vec![
        failure(
            run!("headless-error-500", "json"),
            "86c51f42-bc18-4827-92aa-39fac4865887",
            "API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:<port>).",
            Some(FaultKind::ServerError),
        ),
        failure(
            run!("headless-error-529", "json"),
            "b40c56c7-7bfb-4356-8ad7-ab2a5ec425be",
            "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:<port>).",
            Some(FaultKind::Overload),
        ),
        failure(
            // Anthropic's 503 body is an `overloaded_error`.
            run!("headless-error-503", "json"),
            "ae18430a-c844-47d5-b748-2b06b67ecf7c",
            "API Error: 503 Service unavailable. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:<port>).",
            Some(FaultKind::Overload),
        ),
        failure(
            run!("headless-error-429", "json"),
            "52630d47-b85e-4d94-970c-9d4bb952e5c2",
            "API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit",
            Some(FaultKind::RateLimit),
        ),
        failure(
            run!("headless-error-401", "json"),
            "ee10fd0c-a93c-4223-9e3f-59f9fe5d6c3d",
            "Invalid API key · Fix external API key",
            Some(FaultKind::Auth),
        ),
        failure(
            // A bad request is the request's fault, not the environment's.
            run!("headless-error-400", "json"),
            "13751046-7495-4161-92bc-67f99ca651d8",
            "API Error: 400 fake error",
            None,
        ),
        failure(
            run!("headless-error-drop", "json"),
            "2abbd34b-5c69-4ff3-89e3-30c7caa35988",
            "API Error: Connection dropped (ECONNRESET). Check the gateway set in ANTHROPIC_BASE_URL, then try again.",
            Some(FaultKind::Network),
        ),
        failure(
            run!("headless-error-closed-port", "json"),
            "2e7b099c-0fb4-4884-ba3c-ffa83839086a",
            "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)",
            Some(FaultKind::Network),
        ),
        failure(
            run!("headless-error-closed-port-retries2", "json"),
            "a58a6c09-ff4d-4810-a4fd-229b4afecd2d",
            "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)",
            Some(FaultKind::Network),
        ),
    ]
}

#[test]
fn every_error_mode_fails_with_the_clis_sentence_and_no_usage() {
    assert_failures(
        |run| parse(run, None),
        &failures(),
        |f, r| {
            assert_eq!(f.run.exit_code(), Some(1), "{}", f.sentence);
            // The server answered with an error body: no tokens, no request.
            assert_eq!(total(r.usage.clone()), Usage::ZERO, "{}", f.sentence);
        },
    );
}

fn classify(lines: Vec<String>) -> Option<drover_kit::Fault> {
    Claude::classify_fault(&profile(), &lines)
}

#[test]
fn the_sentences_of_headless_runs_classify() {
    // In -p mode the sentence is the result text, which parse-turn returns.
    assert_sentences_classify(classify, &failures(), |f, fault| {
        assert_eq!(fault.evidence, f.sentence);
    });
    // The raw output: the result object's line.
    assert_failures_classify(classify, &failures(), |_, fault| {
        assert!(fault.evidence.starts_with(r#"{"duration_api_ms":0,"#));
    });
    let text = run!("headless-error-529-text", "txt");
    let fault = classify(lines(text.stdout)).expect("classified");
    assert_eq!(fault.kind, FaultKind::Overload);
    assert!(fault.evidence.starts_with("API Error: 529 Overloaded."));
    // Successful runs print nothing that reads as a fault.
    assert_no_run_faults(
        classify,
        &[
            run!("headless-success", "json"),
            run!("headless-text", "txt"),
            run!("headless-stream-json", "jsonl"),
        ],
    );
}

#[test]
fn every_pane_reads_and_classifies_as_what_it_shows() {
    use FaultKind::{Auth, Network, Overload, RateLimit};
    use PromptKind::{Other, Permission, TrustDialog};
    use SeatState::{Blocked, Idle, Unknown, Working};
    let panes: [Pane; 14] = [
        (real!("pane-idle.txt"), Idle, None, None),
        (real!("pane-idle-auto-mode.txt"), Idle, None, None),
        (real!("pane-working.txt"), Working, None, None),
        (real!("pane-reply.txt"), Idle, None, None),
        (
            real!("pane-permission.txt"),
            Blocked,
            Some(Permission),
            None,
        ),
        (real!("pane-after-tool.txt"), Idle, None, None),
        (
            real!("pane-error-529.txt"),
            Idle,
            None,
            Some((
                Overload,
                "● API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:<port>).",
            )),
        ),
        (
            // The 529 sentence is still on screen above; the newest wins.
            real!("pane-error-429.txt"),
            Idle,
            None,
            Some((
                RateLimit,
                "● API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit",
            )),
        ),
        (
            // `⎿` + U+00A0 before the sentence, no `● API Error` prefix. The
            // idle prompt after a 401 offers "Once fixed, resend…".
            real!("pane-error-401.txt"),
            Idle,
            None,
            Some((Auth, "⎿  Invalid API key · Fix external API key")),
        ),
        (
            real!("pane-retrying-529.txt"),
            Working,
            None,
            Some((Overload, "✻ 529 Overloaded · retrying in 1s · attempt 2/2")),
        ),
        (
            real!("pane-error-529-after-retries.txt"),
            Idle,
            None,
            Some((
                Overload,
                "● API Error: Repeated 529 Overloaded errors. The API is at capacity — this is usually temporary. Try again in a moment. If it persists, check your inference gateway (127.0.0.1:<port>).",
            )),
        ),
        (
            real!("pane-trust-dialog.txt"),
            Blocked,
            Some(TrustDialog),
            Some((
                FaultKind::TrustDialog,
                "Quick safety check: Is this a project you created or one you trust? (Like your own code, a well-known open source project, or work from your team). If not, take a moment to review what's in this",
            )),
        ),
        (
            real!("pane-first-run.txt"),
            Blocked,
            Some(Other),
            Some((Network, "Failed to connect to api.anthropic.com: ENOTFOUND")),
        ),
        // Claude has exited; the pane shows only its resume hint.
        (real!("pane-exit.txt"), Unknown, None, None),
    ];
    let read = |s| Claude::read_screen(&profile(), &s);
    assert_panes(read, classify, Evidence::Exact, &panes);
    let retrying = classify(lines(real!("pane-retrying-529.txt"))).expect("fault");
    assert_eq!(retrying.retry_after_secs, Some(1));
    let idle = Claude::read_screen(&profile(), &screen(real!("pane-error-429.txt")));
    assert_eq!(idle.evidence, "❯ Resend your message to try again");
}

#[test]
fn every_captured_hook_payload_parses() {
    let expected_kind = kinds(
        "SessionStart UserPromptSubmit Stop StopFailure SessionEnd PermissionRequest PreToolUse \
         PostToolUse PostToolBatch=Other MessageDisplay=Other",
    );
    let seen = assert_captured_hooks::<Claude>(
        &profile(),
        &captured_hook_logs("claude"),
        "<tmp>/claude/work",
        expected_kind,
        |native, e, field| {
            assert_eq!(e.native, native);
            match native {
                "Stop" => {
                    assert_eq!(e.last_message, field("last_assistant_message"));
                    assert!(e.last_message.is_some());
                }
                "StopFailure" => {
                    assert_eq!(e.reason, field("error"));
                    assert_eq!(e.last_message, field("last_assistant_message"));
                }
                "PermissionRequest" => {
                    assert_eq!(e.prompt_kind, Some(PromptKind::Permission));
                    assert_eq!(e.reason.as_deref(), Some("Bash"));
                }
                "SessionEnd" => assert_eq!(e.reason, field("reason")),
                "SessionStart" => assert_eq!(e.reason, field("source")),
                _ => {}
            }
        },
    );
    assert_eq!(seen, 95);
}

#[test]
fn hook_payloads_name_the_run_they_belong_to() {
    let stop = |log: &str| parsed_hooks::<Claude>(&profile(), log, "Stop").remove(0);
    let success = run!("headless-success", "json");
    let e = stop(success.hooks);
    assert_eq!(e.session_id, parse(&success, None).conversation_id);
    let start = parsed_hooks::<Claude>(
        &profile(),
        run!("headless-resume", "json").hooks,
        "SessionStart",
    )
    .remove(0);
    assert_eq!(start.reason.as_deref(), Some("resume"));
    assert_eq!(e.last_message.as_deref(), Some("OK"));
    assert_eq!(
        e.transcript_path.as_deref(),
        Some(
            "<tmp>/claude/home/.claude/projects/-<tmp>-claude-work/da51da84-d800-446b-8724-dba6795b896f.jsonl"
        )
    );
    assert_eq!(
        stop(run!("headless-tool-allowed", "json").hooks)
            .last_message
            .as_deref(),
        Some("TOOLDONE")
    );

    // The interactive session: 529, 429 and 401 each fire StopFailure with
    // Claude's error kind; /exit ends the session.
    let failures: Vec<(Option<String>, Option<String>)> =
        hook_lines(real!("interactive.hooks.jsonl"))
            .into_iter()
            .filter(|(e, _)| e == "StopFailure" || e == "SessionEnd")
            .map(|(native, payload)| {
                let e = parse_payload::<Claude>(&profile(), &native, &payload);
                (e.reason, e.last_message)
            })
            .collect();
    assert_eq!(
        failures,
        [
            (
                Some("server_error".to_string()),
                Some("API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:<port>).".to_string())
            ),
            (
                Some("rate_limit".to_string()),
                Some("API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit".to_string())
            ),
            (
                Some("authentication_failed".to_string()),
                Some("Invalid API key · Fix external API key".to_string())
            ),
            (Some("prompt_input_exit".to_string()), None),
        ]
    );
}

fn tally(files: &[(&str, &str)]) -> Option<UsageReport> {
    drover_kit::testing::tally::<Claude>(PARSER, files, 4096)
}

const TRANSCRIPT: &str = real!("transcript.jsonl");
const TRANSCRIPT_TOOL: &str = real!("transcript-tool.jsonl");
const TRANSCRIPT_529: &str = real!("transcript-error-529.jsonl");
const TRANSCRIPT_TMUX: &str = real!("transcript-interactive.jsonl");

#[test]
fn transcripts_total_what_the_server_sent() {
    // seq 1 and 2 (success + resume).
    let report =
        tally(&[("da51da84-d800-446b-8724-dba6795b896f.jsonl", TRANSCRIPT)]).expect("usage");
    assert_eq!(
        only_entry(&report),
        (
            "da51da84-d800-446b-8724-dba6795b896f",
            "2026-11-30",
            MODEL,
            anthropic(2)
        )
    );

    // seq 6 and 7.
    assert_eq!(total(tally(&[("t.jsonl", TRANSCRIPT_TOOL)])), anthropic(2));
    // seq 14 failed: one synthetic error row, usage data that counts zero.
    assert_eq!(total(tally(&[("e.jsonl", TRANSCRIPT_529)])), Usage::ZERO);
    // seq 34, 36, 37 answered; 39 (529), 41 (429), 43 (401) failed.
    assert_eq!(total(tally(&[("i.jsonl", TRANSCRIPT_TMUX)])), anthropic(3));
    // All four files in one tally, cost-state rows and all.
    let all = tally(&[
        ("a.jsonl", TRANSCRIPT),
        ("b.jsonl", TRANSCRIPT_TOOL),
        ("c.jsonl", TRANSCRIPT_529),
        ("d.jsonl", TRANSCRIPT_TMUX),
    ]);
    assert_eq!(total(all), anthropic(7));
}

#[test]
fn a_transcript_fed_twice_counts_once() {
    let t = ChunkedTally::of::<crate::Claude>(PARSER);
    for _ in 0..2 {
        t.begin_file("a.jsonl");
        t.feed(TRANSCRIPT.as_bytes()).expect("feeds");
    }
    assert_eq!(total(t.finish()), anthropic(2));
}

fn install_request() -> HookInstall {
    // profiles/claude.toml's [hooks.events], and the engine's relay/marker.
    let events = [
        "SessionStart",
        "Stop",
        "StopFailure",
        "SubagentStop",
        "SessionEnd",
        "PreCompact",
        "Notification",
        "PermissionRequest",
    ];
    hook_request("claude-settings-json", "claude", &events)
}

#[test]
fn hooks_install_into_and_leave_the_real_settings_file() {
    let settings = real!("config.settings.json");
    let request = install_request();
    let trip = assert_hooks_round_trip::<Claude>(settings, &request);
    assert_eq!(trip.before.registered, Vec::<String>::new());
    assert_eq!(trip.before.missing.len(), 8);
    // The recorder still runs first for every event; drover's relay follows.
    let stop = trip.installed["hooks"]["Stop"]
        .as_array()
        .expect("Stop list");
    assert!(
        stop[0]["hooks"][0]["command"]
            .as_str()
            .is_some_and(|c| c.contains("record.js Stop"))
    );
    assert_eq!(
        stop[1]["hooks"][0]["command"],
        "/usr/local/bin/drover hook --cli claude Stop"
    );
    assert_eq!(
        trip.installed["hooks"].as_object().map(|h| h.len()),
        Some(34),
        "no event added or lost"
    );
    assert_eq!(trip.after.registered.len(), 8);

    let again = Claude::install_hooks(&trip.text, &request).expect("installs");
    assert!(!again.changed);
}
