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
use drover_kit::testing::golden::{
    Failure, Pane, assert_failures, assert_failures_classify, assert_no_run_faults, assert_panes,
    assert_sentences_classify, failure, kinds,
};
use drover_kit::testing::{
    Evidence, Run, assert_captured_hooks, assert_hooks_round_trip, assert_replied, calls,
    captured_hook_logs, hook_names, hook_request_for, only_entry, total,
};
use drover_kit::{
    FaultKind, LocationContext, PromptKind, SeatState, TurnOutcome, TurnResult, Usage, UsageReport,
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

fn failures() -> Vec<Failure> {
    vec![
        failure(
            run!("headless-error-500", "json"),
            Some("f12ffd8d-ab2b-44e2-a22d-9c28d2bbcab1"),
            "[API Error: 500 The server had an error while processing your request.]",
            Some(FaultKind::ServerError),
        ),
        failure(
            run!("headless-error-503", "json"),
            Some("bebf2499-61a4-4d70-be1f-fa46861de90a"),
            "[API Error: 503 The engine is currently overloaded, please try again later.]",
            Some(FaultKind::Overload),
        ),
        failure(
            run!("headless-error-429", "json"),
            Some("45814266-c006-4cbb-85d1-47e00eb83969"),
            "[API Error: 429 Rate limit reached for requests]\nPossible quota limitations in place or slow response times detected. Please wait and try again later.",
            Some(FaultKind::RateLimit),
        ),
        failure(
            run!("headless-error-401", "json"),
            Some("c935a5f5-e0c3-405b-8a1e-7ae602d7b08a"),
            "[API Error: 401 Incorrect API key provided]",
            Some(FaultKind::Auth),
        ),
        failure(
            run!("headless-error-400", "json"),
            Some("37af7b8c-855a-4f1b-9cfb-4ff25d0606b7"),
            "[API Error: 400 fake error]",
            None,
        ),
        failure(
            // Qwen retried the dropped connection until the deadline; killed,
            // it prints only its cancellation, and no sentence names the cause.
            run!("headless-error-drop", "json"),
            None,
            "Operation cancelled.",
            None,
        ),
        failure(
            run!("headless-error-closed-port", "json"),
            None,
            "Operation cancelled.",
            None,
        ),
    ]
}

#[test]
fn every_error_mode_fails_with_the_clis_sentence() {
    // No call succeeded: zero tokens and no request, or no usage at all.
    assert_failures(|run| parse(run, None), &failures(), |_, _| {});
}

fn classify(lines: Vec<String>) -> Option<drover_kit::Fault> {
    Qwen::classify_fault(&profile(), &lines)
}

#[test]
fn error_output_classifies() {
    // stdout and stderr as printed (stderr's closing JSON object) …
    assert_failures_classify(classify, &failures(), |_, _| {});
    // … and parse-turn's sentence.
    assert_sentences_classify(classify, &failures(), |_, _| {});
    let text = classify(run!("headless-error-500-text", "txt").lines()).expect("fault");
    assert_eq!(
        (text.kind, text.evidence.as_str()),
        (
            FaultKind::ServerError,
            "[API Error: 500 The server had an error while processing your request.]"
        )
    );
    assert_no_run_faults(
        classify,
        &[
            run!("headless-success", "json"),
            run!("headless-text", "txt"),
            run!("headless-tool", "json"),
        ],
    );
}

#[test]
fn every_pane_reads_and_classifies_as_what_it_shows() {
    use FaultKind::Auth;
    use SeatState::{Blocked, Idle, Unknown, Working};
    let auth = "✕ [API Error: 401 Incorrect API key provided]";
    let panes: [Pane; 10] = [
        (real!("pane-idle.txt"), Idle, None, None),
        (real!("pane-working.txt"), Working, None, None),
        (real!("pane-reply.txt"), Idle, None, None),
        (
            real!("pane-permission.txt"),
            Blocked,
            Some(PromptKind::Permission),
            None,
        ),
        // The input row proposes a follow-up: `> OK`.
        (real!("pane-after-tool.txt"), Idle, None, None),
        (
            real!("pane-error-401.txt"),
            Idle,
            None,
            Some((
                Auth,
                "✕ [API Error: 401 Incorrect API key provided] (Press Ctrl+Y to retry)",
            )),
        ),
        // While the 500s are retried the pane shows only a spinner: the
        // newest sentence on screen is still the earlier 401.
        (
            real!("pane-error-500.txt"),
            Working,
            None,
            Some((Auth, auth)),
        ),
        (
            real!("pane-error-500-recovered.txt"),
            Idle,
            None,
            Some((Auth, auth)),
        ),
        // No settings, no OPENAI_* variables: "Connect a Provider".
        (
            real!("pane-first-run.txt"),
            Blocked,
            Some(PromptKind::Other),
            None,
        ),
        // Qwen has quit; only its resume hint is left.
        (real!("pane-exit.txt"), Unknown, None, None),
    ];
    let read = |s| Qwen::read_screen(&profile(), &s);
    assert_panes(read, classify, Evidence::Exact, &panes);
}

#[test]
fn every_captured_hook_payload_parses() {
    let expected_kind = kinds(
        "SessionStart UserPromptSubmit Stop StopFailure SessionEnd Notification \
         PermissionRequest PreToolUse PostToolUse PostToolBatch=Other MessageDisplay=Other \
         InstructionsLoaded=Other",
    );
    let seen = assert_captured_hooks::<Qwen>(
        &profile(),
        &captured_hook_logs("qwen"),
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
    for f in failures() {
        let events = hook_names(f.run.hooks);
        for end in ["Stop", "StopFailure", "SessionEnd"] {
            assert!(!events.iter().any(|e| e == end), "{}: {end}", f.sentence);
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
