//! Golden tests over the real Gemini CLI 0.61.0 captures in
//! `tests/fixtures/real/gemini/` (see its README and `capture/NOTES.md`).
//!
//! Expected values come from the scripted server and the captured text,
//! never from this adapter's output: every Gemini call the server answered
//! carried prompt 4101 (400 of them cached), candidates 87 and thoughts 9,
//! so one call is input 3701 + cache read 400, output 96 (9 of them
//! reasoning). `server-requests.jsonl` gives the calls per run (the `seq`
//! numbers quoted below). A failed call carried no usage.

use drover_kit::Adapter;
use drover_kit::testing::golden::{
    Failure, Pane, assert_failures, assert_failures_classify, assert_no_run_faults, assert_panes,
    failure, kinds,
};
use drover_kit::testing::{
    Evidence, Run, assert_captured_hooks, assert_hooks_round_trip, assert_replied, calls,
    captured_hook_logs, hook_lines, hook_names, hook_request_for, only_entry, parse_payload, total,
};
use drover_kit::{FaultKind, PromptKind, SeatState, TurnOutcome, TurnResult, Usage, UsageReport};

use crate::tests_support::profile;
use crate::{Gemini, PARSER};

// real!(file) and run!(case, ext) over tests/fixtures/real/gemini/.
drover_kit::testing::real_captures!("gemini");

/// parse-turn over a captured run.
fn parse(run: &Run) -> TurnResult {
    run.parse_with::<Gemini>(&profile(), None)
}

/// What the server sent for `n` successful Gemini calls.
fn gemini(n: u64) -> Usage {
    calls(4101 - 400, 400, 87 + 9, 9, n)
}

/// (model, usage) per entry.
fn per_model(report: Option<UsageReport>) -> Vec<(String, Usage)> {
    report
        .expect("usage reported")
        .entries
        .into_iter()
        .map(|e| (e.model, e.usage))
        .collect()
}

const SESSION: &str = "904d5261-b039-49db-a6b9-e1ff57feb76f";

#[test]
fn success_resume_and_tool_turns_report_what_the_server_sent() {
    // seq 1 (the model router, structured answer) and seq 2 (main model).
    let first = parse(&run!("headless-success", "json"));
    assert_replied(&first, "OK", SESSION);
    assert_eq!(first.error, None);
    assert_eq!(
        per_model(first.usage),
        [
            ("gemini-3.5-flash-lite".to_string(), gemini(1)),
            ("gemini-3.1-pro-preview".to_string(), gemini(1)),
        ]
    );
    // seq 3 and 4: the resumed process reports only its own calls.
    let resumed = parse(&run!("headless-resume", "json"));
    assert_eq!(
        (resumed.outcome, resumed.reply.as_deref()),
        (TurnOutcome::Success, Some("SECOND"))
    );
    assert_eq!(resumed.conversation_id.as_deref(), Some(SESSION));
    assert_eq!(total(resumed.usage), gemini(2));
    // seq 5: `-m` skips the router.
    let pinned = parse(&run!("headless-pinned-model", "json"));
    assert_eq!(pinned.reply.as_deref(), Some("PINNED"));
    assert_eq!(
        per_model(pinned.usage),
        [("gemini-2.5-pro".to_string(), gemini(1))]
    );
    // seq 9 (the function call) and seq 10.
    let tool = parse(&run!("headless-tool", "json"));
    assert_eq!(
        (tool.outcome, tool.reply.as_deref()),
        (TurnOutcome::Success, Some("TOOLDONE"))
    );
    assert_eq!(
        tool.conversation_id.as_deref(),
        Some("45272a00-1553-40e1-8bc8-0a3a37ba6426")
    );
    assert_eq!(total(tool.usage), gemini(2));
}

#[test]
fn text_and_stream_json_modes() {
    // seq 6.
    let plain = parse(&run!("headless-text", "txt"));
    assert_eq!(plain.outcome, TurnOutcome::Success);
    assert_eq!(plain.reply.as_deref(), Some("PLAIN"));
    assert_eq!((plain.error, plain.usage), (None, None));
    // seq 7.
    let stream = parse(&run!("headless-stream-json", "jsonl"));
    assert_replied(&stream, "STREAM", "f89336dd-547e-493d-8263-4a6d6a36f288");
    assert_eq!(stream.error, None);
    assert_eq!(
        per_model(stream.usage),
        [("gemini-2.5-pro".to_string(), gemini(1))]
    );
    // Text mode's failure: rc 1 and the catch-all last line; the sentence is
    // the report line before it.
    let failed = parse(&run!("headless-error-500-text", "txt"));
    assert_eq!(failed.outcome, TurnOutcome::Failed);
    assert_eq!(failed.reply, None);
    assert!(
        failed.error.as_deref().is_some_and(|e| e.starts_with(
            "Error when talking to Gemini API Full report available at: <tmp>/gemini/tmp/gemini-client-error-Turn.run-sendMessageStream-"
        ) && e.ends_with(
            r#"_ApiError: {"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}"#
        )),
        "{:?}",
        failed.error
    );
}

fn failures() -> Vec<Failure> {
    vec![
        failure(
            run!("headless-error-500", "json"),
            "6aad96b2-1b56-4c5f-af8c-c3261fb896aa",
            r#"{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}"#,
            Some(FaultKind::ServerError),
        ),
        failure(
            run!("headless-error-503", "json"),
            "e8156ce9-401e-4788-a9f5-bf14c6b2ceee",
            "The model is overloaded. Please try again later.",
            Some(FaultKind::Overload),
        ),
        failure(
            run!("headless-error-529", "json"),
            "368e9b8e-ffe4-4714-8a59-3bfc8cec61ae",
            r#"{"error":{"code":529,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}"#,
            Some(FaultKind::Overload),
        ),
        failure(
            run!("headless-error-429", "json"),
            "36b1a96e-3c59-4096-aa46-4c804df5cdd8",
            "Resource has been exhausted (e.g. check quota).",
            Some(FaultKind::RateLimit),
        ),
        failure(
            run!("headless-error-401", "json"),
            "429e3940-f7a8-442f-b4d9-127c38d83b1d",
            r#"{"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}"#,
            Some(FaultKind::Auth),
        ),
        failure(
            run!("headless-error-400", "json"),
            "63b19375-9560-4687-ab37-bc9b334a9673",
            r#"{"error":{"code":400,"message":"fake error","status":"INVALID_ARGUMENT"}}"#,
            None,
        ),
        failure(
            run!("headless-error-drop", "json"),
            "03863ce4-f276-4a8c-aeb8-916f8bf3369b",
            "exception TypeError: fetch failed sending request",
            Some(FaultKind::Network),
        ),
        failure(
            run!("headless-error-closed-port", "json"),
            "ec301e8b-2e7d-4d2a-9829-1cf589a112bc",
            "exception TypeError: fetch failed sending request",
            Some(FaultKind::Network),
        ),
    ]
}

/// The exit code of each failure: the HTTP status mod 256 (500, 503, 529,
/// 429, 401, 400), then 1 for the two network failures.
const EXITS: [i32; 8] = [244, 247, 17, 173, 145, 144, 1, 1];

#[test]
fn every_error_mode_fails_with_the_clis_message() {
    let failures = failures();
    for (f, exit) in failures.iter().zip(EXITS) {
        // stdout stays empty.
        assert_eq!(f.run.exit_code(), Some(exit), "{}", f.sentence);
        assert_eq!(f.run.stdout, "", "{}", f.sentence);
    }
    assert_eq!(failures.len(), EXITS.len());
    assert_failures(parse, &failures, |f, r| {
        assert_eq!(r.usage, None, "{}", f.sentence)
    });
}

fn classify(lines: Vec<String>) -> Option<drover_kit::Fault> {
    Gemini::classify_fault(&profile(), &lines)
}

#[test]
fn stderr_of_every_error_mode_classifies() {
    assert_failures_classify(classify, &failures(), |_, fault| {
        assert!(
            fault
                .evidence
                .starts_with("Error when talking to Gemini API Full report available at:"),
            "{}",
            fault.evidence
        );
    });
    let text = classify(run!("headless-error-500-text", "txt").lines()).expect("fault");
    assert_eq!(text.kind, FaultKind::ServerError);
    // The router's schema complaint on stderr of a successful run is noise.
    assert_no_run_faults(
        classify,
        &[
            run!("headless-success", "json"),
            run!("headless-resume", "json"),
            run!("headless-tool", "json"),
            run!("headless-text", "txt"),
        ],
    );
}

const AUTH_LINE: &str = r#"✕ [API Error: {"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}]"#;

#[test]
fn every_pane_reads_and_classifies_as_what_it_shows() {
    use FaultKind::Auth;
    use PromptKind::{Permission, TrustDialog};
    use SeatState::{Blocked, Idle, Unknown, Working};
    let panes: [Pane; 9] = [
        // A still `Executing Hook: rec-SessionStart` line above the prompt.
        (real!("pane-idle.txt"), Idle, None, None),
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
            real!("pane-error-401.txt"),
            Idle,
            None,
            Some((Auth, AUTH_LINE)),
        ),
        // 20 s into the persistent 429: the retry loop spins. It prints
        // nothing meanwhile: the newest sentence on screen is still the
        // earlier 401.
        (
            real!("pane-error-429.txt"),
            Working,
            None,
            Some((Auth, AUTH_LINE)),
        ),
        (
            real!("pane-first-run.txt"),
            Blocked,
            Some(TrustDialog),
            Some((
                FaultKind::TrustDialog,
                "│ Do you trust the files in this folder?  │",
            )),
        ),
        // Gemini has quit; its summary box and hook log remain.
        (
            real!("pane-exit.txt"),
            Unknown,
            None,
            Some((Auth, AUTH_LINE)),
        ),
    ];
    let read = |s| Gemini::read_screen(&profile(), &s);
    assert_panes(read, classify, Evidence::IgnoringSpacing, &panes);
}

#[test]
fn every_captured_hook_payload_parses() {
    let expected_kind = kinds(
        "SessionStart BeforeAgent=PromptSubmit AfterAgent=Stop SessionEnd PreCompress=PreCompact \
         Notification BeforeTool=ToolStart AfterTool=ToolEnd BeforeModel=Other AfterModel=Other \
         BeforeToolSelection=Other",
    );
    let seen = assert_captured_hooks::<Gemini>(
        &profile(),
        &captured_hook_logs("gemini"),
        "<tmp>/gemini/work",
        expected_kind,
        |native, e, field| match native {
            "AfterAgent" => {
                assert_eq!(e.last_message, field("prompt_response"));
                assert!(e.last_message.is_some());
            }
            "Notification" => {
                assert_eq!(e.prompt_kind, Some(PromptKind::Permission));
                assert_eq!(e.reason.as_deref(), Some("ToolPermission"));
            }
            "SessionStart" => assert_eq!(e.reason, field("source")),
            "SessionEnd" => assert_eq!(e.reason.as_deref(), Some("exit")),
            "PreCompress" => assert_eq!(e.reason.as_deref(), Some("auto")),
            "BeforeTool" | "AfterTool" => {
                assert_eq!(e.reason.as_deref(), Some("run_shell_command"))
            }
            _ => {}
        },
    );
    assert_eq!(seen, 370);
}

#[test]
fn hooks_tie_to_their_runs_and_failures_fire_no_end() {
    let stops = |log: &str| -> Vec<(Option<String>, Option<String>)> {
        hook_lines(log)
            .into_iter()
            .filter(|(e, _)| e == "AfterAgent")
            .map(|(native, payload)| {
                let e = parse_payload::<Gemini>(&profile(), &native, &payload);
                (e.session_id, e.last_message)
            })
            .collect()
    };
    assert_eq!(
        stops(run!("headless-success", "json").hooks),
        [(Some(SESSION.to_string()), Some("OK".to_string()))]
    );
    assert_eq!(
        stops(run!("headless-tool", "json").hooks),
        [(
            Some("45272a00-1553-40e1-8bc8-0a3a37ba6426".to_string()),
            Some("TOOLDONE".to_string())
        )]
    );
    for f in failures() {
        let events = hook_names(f.run.hooks);
        assert!(
            !events
                .iter()
                .any(|e| e == "AfterAgent" || e == "SessionEnd"),
            "{}",
            f.sentence
        );
    }
}

fn tally(files: &[(&str, &str)]) -> Option<UsageReport> {
    drover_kit::testing::tally::<Gemini>(PARSER, files, 4096)
}

const CHAT: &str = real!("transcript.jsonl");
const CHAT_TOOL: &str = real!("transcript-tool.jsonl");
const CHAT_NAME: &str = ".gemini/tmp/work/chats/session-2026-11-30T17-04-904d5261.jsonl";
const TOOL_NAME: &str = ".gemini/tmp/work/chats/session-2026-11-30T17-05-45272a00.jsonl";

#[test]
fn chats_total_the_main_model_calls() {
    // seq 2 and 4. The router calls (seq 1, 3) are real requests but the
    // chat does not record them; parse-turn's stats do.
    let report = tally(&[(CHAT_NAME, CHAT)]).expect("usage");
    assert_eq!(
        only_entry(&report),
        (SESSION, "2026-11-30", "gemini-3.1-pro-preview", gemini(2))
    );
    // seq 9 and 10; the first message id is written twice.
    let tool = tally(&[(TOOL_NAME, CHAT_TOOL)]).expect("usage");
    assert_eq!(tool.total(), gemini(2));
    assert_eq!(tool.entries[0].model, "gemini-2.5-pro");
    assert_eq!(
        total(tally(&[
            (CHAT_NAME, CHAT),
            (TOOL_NAME, CHAT_TOOL),
            (CHAT_NAME, CHAT)
        ])),
        gemini(4)
    );
}

#[test]
fn hooks_install_into_and_leave_the_real_settings_file() {
    let settings = real!("config.settings.json");
    let request = hook_request_for("gemini-settings-json", "gemini", profile().hook_events);
    let trip = assert_hooks_round_trip::<Gemini>(settings, &request);
    assert_eq!(trip.before.missing.len(), 5);
    let value = &trip.installed;
    let after = value["hooks"]["AfterAgent"].as_array().expect("list");
    assert_eq!(after[0]["hooks"][0]["name"], "rec-AfterAgent");
    assert_eq!(
        after[1]["hooks"][0]["command"],
        "/usr/local/bin/drover hook --cli gemini AfterAgent"
    );
    assert_eq!(value["general"]["maxAttempts"], 1);
    assert_eq!(value["hooks"].as_object().map(|h| h.len()), Some(11));
    assert_eq!(trip.after.registered.len(), 5);
}
