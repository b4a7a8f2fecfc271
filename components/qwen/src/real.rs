//! Golden tests over the real Qwen Code 0.24.4 captures in
//! `tests/fixtures/real/qwen/` (see its README and `capture/NOTES.md`).
//!
//! Expected values come from the scripted server and the captured text,
//! never from this adapter's output: every Chat Completions call the server
//! answered carried prompt 3101 (300 of them cached) and completion 77, so
//! one call is input 2801 + cache read 300, output 77. `server-requests.jsonl`
//! gives the calls per run (the `seq` numbers quoted below; the log holds
//! the headless runs, then three interactive runs, the last of which is the
//! captured session). Qwen follows most headless turns with a
//! managed-auto-memory-extractor call (answered "OK"), a billed call of its
//! own.

use drover_kit::Adapter;
use drover_kit::testing::{
    Evidence, Run, assert_captured_hooks, assert_failed, assert_hooks_round_trip,
    assert_pane_faults, assert_readings, assert_replied, calls, hook_names, hook_request_for,
    only_entry, total,
};
use drover_kit::{
    CanonicalEvent, FaultKind, LocationContext, PromptKind, SeatState, TurnOutcome, TurnResult,
    Usage, UsageReport,
};
use serde_json::Value;

use crate::tests_support::profile;
use crate::usage::RECORD_PARSER;
use crate::{PARSER, Qwen};

// real!(file) and run!(case, ext) over tests/fixtures/real/qwen/.
drover_kit::testing::real_captures!("qwen");

/// parse-turn over a captured run.
fn parse(run: &Run, prior: Option<Usage>) -> TurnResult {
    run.parse_with::<Qwen>(&profile(), prior)
}

/// What the server sent for `n` successful Chat Completions calls.
fn chat(n: u64) -> Usage {
    calls(3101 - 300, 300, 77, 0, n)
}

const SESSION: &str = "04d7f44c-3f1b-4b60-b153-bbb52597cdfd";

#[test]
fn success_resume_and_tool_turns_report_what_the_server_sent() {
    // seq 1 (OK) and seq 2 (the memory extractor).
    let first = parse(&run!("headless-success", "json"), None);
    assert_replied(&first, "OK", SESSION);
    assert_eq!(first.error, None);
    let report = first.usage.clone().expect("usage");
    assert_eq!(report.entries.len(), 1);
    assert_eq!(report.entries[0].model, "fake-model");
    assert_eq!(report.total(), chat(2));

    // seq 3 and 4. The result's figures are the conversation's (four calls);
    // drover passes the first turn's own usage as prior usage.
    let resumed = run!("headless-resume", "json");
    let r = parse(&resumed, Some(total(first.usage)));
    assert_replied(&r, "SECOND", SESSION);
    assert_eq!(total(r.usage), chat(2));
    assert_eq!(total(parse(&resumed, None).usage), chat(4));

    // seq 7 and 8; stream-json carries no stats.
    let stream = parse(&run!("headless-stream-json", "jsonl"), None);
    assert_eq!(
        (stream.outcome, stream.reply.as_deref()),
        (TurnOutcome::Success, Some("STREAM"))
    );
    assert_eq!(
        stream.conversation_id.as_deref(),
        Some("17676fb3-c601-4613-9e99-3506b8c16bdc")
    );
    assert_eq!(total(stream.usage), chat(2));

    // seq 10 (the tool call) and 11; no memory call after a yolo tool run.
    let tool = parse(&run!("headless-tool", "json"), None);
    assert_eq!(
        (tool.outcome, tool.reply.as_deref()),
        (TurnOutcome::Success, Some("TOOLDONE"))
    );
    assert_eq!(
        tool.conversation_id.as_deref(),
        Some("3de99054-35c5-413e-b161-d64f3bf28909")
    );
    assert_eq!(total(tool.usage), chat(2));
}

#[test]
fn text_mode_prints_the_reply_or_the_sentence() {
    let plain = parse(&run!("headless-text", "txt"), None);
    assert_eq!(plain.outcome, TurnOutcome::Success);
    assert_eq!(plain.reply.as_deref(), Some("PLAIN"));
    assert_eq!((plain.error, plain.usage), (None, None));
    let failed = parse(&run!("headless-error-500-text", "txt"), None);
    assert_eq!(failed.outcome, TurnOutcome::Failed);
    assert_eq!(
        failed.error.as_deref(),
        Some("[API Error: 500 The server had an error while processing your request.]")
    );
}

/// (run, session, the CLI's sentence, fault kind)
fn error_runs() -> Vec<(Run, Option<&'static str>, &'static str, Option<FaultKind>)> {
    vec![
        (
            run!("headless-error-500", "json"),
            Some("f12ffd8d-ab2b-44e2-a22d-9c28d2bbcab1"),
            "[API Error: 500 The server had an error while processing your request.]",
            Some(FaultKind::ServerError),
        ),
        (
            run!("headless-error-503", "json"),
            Some("bebf2499-61a4-4d70-be1f-fa46861de90a"),
            "[API Error: 503 The engine is currently overloaded, please try again later.]",
            Some(FaultKind::Overload),
        ),
        (
            run!("headless-error-429", "json"),
            Some("45814266-c006-4cbb-85d1-47e00eb83969"),
            "[API Error: 429 Rate limit reached for requests]\nPossible quota limitations in place or slow response times detected. Please wait and try again later.",
            Some(FaultKind::RateLimit),
        ),
        (
            run!("headless-error-401", "json"),
            Some("c935a5f5-e0c3-405b-8a1e-7ae602d7b08a"),
            "[API Error: 401 Incorrect API key provided]",
            Some(FaultKind::Auth),
        ),
        (
            run!("headless-error-400", "json"),
            Some("37af7b8c-855a-4f1b-9cfb-4ff25d0606b7"),
            "[API Error: 400 fake error]",
            None,
        ),
        (
            // Qwen retried the dropped connection until the deadline; killed,
            // it prints only its cancellation, and no sentence names the cause.
            run!("headless-error-drop", "json"),
            None,
            "Operation cancelled.",
            None,
        ),
        (
            run!("headless-error-closed-port", "json"),
            None,
            "Operation cancelled.",
            None,
        ),
    ]
}

#[test]
fn every_error_mode_fails_with_the_clis_sentence() {
    for (run, session, sentence, _) in error_runs() {
        let r = parse(&run, None);
        assert_failed(&r, session, sentence);
        // No call succeeded: zero tokens and no request, or no usage at all.
        let usage = r.usage.map(|u| u.total()).unwrap_or(Usage::ZERO);
        assert_eq!(usage, Usage::ZERO, "{sentence}");
    }
}

fn classify(lines: Vec<String>) -> Option<drover_kit::Fault> {
    Qwen::classify_fault(&profile(), &lines)
}

#[test]
fn error_output_classifies() {
    for (run, _, sentence, kind) in error_runs() {
        // stdout and stderr as printed (stderr's closing JSON object) …
        let fault = classify(run.lines());
        assert_eq!(fault.as_ref().map(|f| f.kind), kind, "{sentence}");
        // … and parse-turn's sentence.
        let error = parse(&run, None).error.expect("sentence");
        let lines = error.lines().map(str::to_string).collect();
        assert_eq!(classify(lines).map(|f| f.kind), kind, "{sentence}");
    }
    let text = classify(run!("headless-error-500-text", "txt").lines()).expect("fault");
    assert_eq!(
        (text.kind, text.evidence.as_str()),
        (
            FaultKind::ServerError,
            "[API Error: 500 The server had an error while processing your request.]"
        )
    );
    for run in [
        run!("headless-success", "json"),
        run!("headless-text", "txt"),
        run!("headless-tool", "json"),
    ] {
        assert_eq!(classify(run.lines()), None);
    }
}

#[test]
fn panes_classify_by_the_sentence_they_show() {
    let auth = "✕ [API Error: 401 Incorrect API key provided]";
    let cases: [(&str, Option<(FaultKind, &str)>); 10] = [
        (real!("pane-idle.txt"), None),
        (real!("pane-working.txt"), None),
        (real!("pane-reply.txt"), None),
        (real!("pane-permission.txt"), None),
        (real!("pane-after-tool.txt"), None),
        (real!("pane-exit.txt"), None),
        (real!("pane-first-run.txt"), None),
        (
            real!("pane-error-401.txt"),
            Some((
                FaultKind::Auth,
                "✕ [API Error: 401 Incorrect API key provided] (Press Ctrl+Y to retry)",
            )),
        ),
        // While the 500s are retried the pane shows only a spinner: the
        // newest sentence on screen is still the earlier 401.
        (real!("pane-error-500.txt"), Some((FaultKind::Auth, auth))),
        (
            real!("pane-error-500-recovered.txt"),
            Some((FaultKind::Auth, auth)),
        ),
    ];
    assert_pane_faults(classify, &cases, Evidence::Exact);
}

#[test]
fn every_pane_reads_as_what_it_shows() {
    use SeatState::{Blocked, Idle, Unknown, Working};
    let cases: [(&str, SeatState, Option<PromptKind>); 10] = [
        (real!("pane-idle.txt"), Idle, None),
        (real!("pane-working.txt"), Working, None),
        (real!("pane-reply.txt"), Idle, None),
        (
            real!("pane-permission.txt"),
            Blocked,
            Some(PromptKind::Permission),
        ),
        // The input row proposes a follow-up: `> OK`.
        (real!("pane-after-tool.txt"), Idle, None),
        (real!("pane-error-401.txt"), Idle, None),
        (real!("pane-error-500.txt"), Working, None),
        (real!("pane-error-500-recovered.txt"), Idle, None),
        // No settings, no OPENAI_* variables: "Connect a Provider".
        (
            real!("pane-first-run.txt"),
            Blocked,
            Some(PromptKind::Other),
        ),
        // Qwen has quit; only its resume hint is left.
        (real!("pane-exit.txt"), Unknown, None),
    ];
    assert_readings(|s| Qwen::read_screen(&profile(), &s), &cases);
}

fn all_hook_logs() -> Vec<&'static str> {
    let mut logs: Vec<&str> = error_runs().iter().map(|(r, ..)| r.hooks).collect();
    logs.extend([
        run!("headless-success", "json").hooks,
        run!("headless-resume", "json").hooks,
        run!("headless-text", "txt").hooks,
        run!("headless-stream-json", "jsonl").hooks,
        run!("headless-tool", "json").hooks,
        run!("headless-error-500-text", "txt").hooks,
        real!("interactive.hooks.jsonl"),
    ]);
    logs
}

#[test]
fn every_captured_hook_payload_parses() {
    let expected_kind = |native: &str| match native {
        "SessionStart" => CanonicalEvent::SessionStart,
        "UserPromptSubmit" => CanonicalEvent::PromptSubmit,
        "Stop" => CanonicalEvent::Stop,
        "StopFailure" => CanonicalEvent::StopFailure,
        "SessionEnd" => CanonicalEvent::SessionEnd,
        "Notification" => CanonicalEvent::Notification,
        "PermissionRequest" => CanonicalEvent::PermissionRequest,
        "PreToolUse" => CanonicalEvent::ToolStart,
        "PostToolUse" => CanonicalEvent::ToolEnd,
        "PostToolBatch" | "MessageDisplay" | "InstructionsLoaded" => CanonicalEvent::Other,
        other => panic!("a captured event this test does not know: {other}"),
    };
    let seen = assert_captured_hooks::<Qwen>(
        &profile(),
        &all_hook_logs(),
        "<tmp>/qwen/work",
        expected_kind,
        |native, e, field| {
            match native {
                "Stop" => {
                    assert_eq!(e.last_message, field("last_assistant_message"));
                    assert!(e.last_message.is_some());
                }
                "StopFailure" => {
                    assert_eq!(e.reason.as_deref(), Some("authentication_failed"));
                    assert_eq!(
                        e.last_message.as_deref(),
                        Some("[API Error: 401 Incorrect API key provided]")
                    );
                }
                "Notification" => {
                    let kind = field("notification_type");
                    assert_eq!(e.reason, kind);
                    let expected = match kind.as_deref() {
                        Some("permission_prompt") => Some(PromptKind::Permission),
                        // auth_success, idle_prompt: nothing waits.
                        _ => None,
                    };
                    assert_eq!(e.prompt_kind, expected, "{kind:?}");
                }
                "PermissionRequest" => {
                    assert_eq!(e.prompt_kind, Some(PromptKind::Permission));
                    assert_eq!(e.reason.as_deref(), Some("run_shell_command"));
                }
                "SessionStart" => assert_eq!(e.reason, field("source")),
                "SessionEnd" => assert_eq!(e.reason.as_deref(), Some("prompt_input_exit")),
                _ => {}
            }
        },
    );
    assert_eq!(seen, 95);
}

#[test]
fn headless_failures_fire_no_turn_end() {
    for (run, _, sentence, _) in error_runs() {
        let events = hook_names(run.hooks);
        for end in ["Stop", "StopFailure", "SessionEnd"] {
            assert!(!events.iter().any(|e| e == end), "{sentence}: {end}");
        }
    }
}

fn tally(parser: &str, files: &[(&str, &str)]) -> Option<UsageReport> {
    drover_kit::testing::tally::<Qwen>(parser, files, 4096)
}

const CHAT: &str = real!("transcript.jsonl");
const CHAT_TOOL: &str = real!("transcript-tool.jsonl");
const CHAT_TMUX: &str = real!("transcript-interactive.jsonl");
const RECORDS: &str = real!("usage_record.jsonl");

#[test]
fn chats_hold_only_the_calls_they_record() {
    // seq 1 and 3: the memory extractor's calls (seq 2, 4) are not in it.
    let report = tally(PARSER, &[(&format!("chats/{SESSION}.jsonl"), CHAT)]).expect("usage");
    assert_eq!(
        only_entry(&report),
        (SESSION, "2026-11-30", "fake-model", chat(2))
    );
    // seq 10 and 11.
    assert_eq!(total(tally(PARSER, &[("t.jsonl", CHAT_TOOL)])), chat(2));
    // The last interactive run: TMUXOK (seq 2), the tool (5, 6), AFTER500
    // (16); its memory calls (3, 7, 17, 18) are not in the chat.
    assert_eq!(total(tally(PARSER, &[("i.jsonl", CHAT_TMUX)])), chat(4));
}

#[test]
fn usage_record_totals_every_answered_headless_call() {
    // Headless phase: seq 1–8, 10, 11 answered (memory calls included);
    // every other request failed.
    let report = tally(RECORD_PARSER, &[("usage_record.jsonl", RECORDS)]).expect("usage");
    assert_eq!(report.rejected_rows, 0);
    assert_eq!(report.total(), chat(10));
    let by_session: Vec<(&str, &str, u64)> = report
        .entries
        .iter()
        .map(|e| (e.session.as_str(), e.day.as_str(), e.usage.requests))
        .collect();
    assert_eq!(
        by_session,
        [
            (SESSION, "2026-11-30", 4),
            ("17676fb3-c601-4613-9e99-3506b8c16bdc", "2026-11-30", 2),
            ("3de99054-35c5-413e-b161-d64f3bf28909", "2026-11-30", 2),
            ("dc9a2a55-9d1f-49c2-b435-39a970e3a864", "2026-11-30", 2),
        ]
    );
}

#[test]
fn the_profiles_parser_picks_the_files() {
    let context = LocationContext {
        home: "/home/u".to_string(),
        cwd: "/w".to_string(),
        env: vec![],
    };
    let chats = Qwen::transcript_locations(&profile(), &context);
    assert_eq!(
        chats
            .iter()
            .map(|g| (g.pattern.as_str(), g.parser.as_str()))
            .collect::<Vec<_>>(),
        [(".qwen/projects/*/chats/*.jsonl", PARSER)]
    );
    let mut records_profile = profile();
    records_profile.usage_parser = RECORD_PARSER.to_string();
    let records = Qwen::transcript_locations(&records_profile, &context);
    assert_eq!(
        records
            .iter()
            .map(|g| (g.pattern.as_str(), g.parser.as_str()))
            .collect::<Vec<_>>(),
        [(".qwen/usage_record.jsonl", RECORD_PARSER)]
    );
}

#[test]
fn hooks_install_into_and_leave_the_real_settings_file() {
    let settings = real!("config.settings.json");
    let request = hook_request_for("claude-settings-json", "qwen", profile().hook_events);
    let trip = assert_hooks_round_trip::<Qwen>(settings, &request);
    let value = &trip.installed;
    assert_eq!(value["$version"], 4);
    assert_eq!(value["model"]["generationConfig"]["maxRetries"], 0);
    let stop = value["hooks"]["Stop"].as_array().expect("Stop list");
    assert_eq!(
        stop.last().map(|e| e["hooks"][0]["command"].clone()),
        Some(Value::from("/usr/local/bin/drover hook --cli qwen Stop"))
    );
    assert_eq!(trip.after.registered.len(), 8);
}
