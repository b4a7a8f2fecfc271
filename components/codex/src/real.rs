//! Golden tests over the real Codex CLI 0.171.0 captures in
//! `tests/fixtures/real/codex/` (see its README and `capture/NOTES.md`).
//!
//! Expected values come from the scripted server and the captured text,
//! never from this adapter's output: every Responses call the server
//! answered carried input 2101 (1000 of them cached) and output 67 (5 of
//! them reasoning), so one call is input 1101 + cache read 1000, output 67,
//! reasoning 5. `server-requests.jsonl` gives the calls per run (the `seq`
//! numbers quoted below). A failed call carried no usage.

use drover_kit::Adapter;
use drover_kit::testing::golden::{
    Failure, Pane, assert_failures, assert_failures_classify, assert_no_run_faults, assert_panes,
    failure, kinds,
};
use drover_kit::testing::{
    Evidence, Run, assert_captured_hooks, assert_hooks_round_trip, assert_replied, calls,
    captured_hook_logs, hook_lines, hook_names, hook_request, only_entry, parsed_hooks, total,
};
use drover_kit::{FaultKind, PromptKind, SeatState, TurnOutcome, TurnResult, Usage, UsageReport};

use crate::tests_support::profile;
use crate::{Codex, PARSER};

// real!(file) and run!(case, ext) over tests/fixtures/real/codex/.
drover_kit::testing::real_captures!("codex");

/// parse-turn over a captured run.
fn parse(run: &Run, prior: Option<Usage>) -> TurnResult {
    run.parse_with::<Codex>(&profile(), prior)
}

/// For a run whose profile asked for text (`[turn] output = "text"`).
fn parse_text(run: &Run) -> TurnResult {
    let mut text = profile();
    text.turn_output = "text".to_string();
    run.parse_with::<Codex>(&text, None)
}

/// What the server sent for `n` successful Responses calls.
fn responses(n: u64) -> Usage {
    calls(2101 - 1000, 1000, 67, 5, n)
}

const THREAD: &str = "01a22d68-aace-71c2-bb30-4645f8d9bd84";

#[test]
fn success_resume_and_tool_turns_report_what_the_server_sent() {
    // seq 1.
    let first = parse(&run!("headless-success", "jsonl"), None);
    assert_replied(&first, "OK", THREAD);
    assert_eq!(first.error, None);
    assert_eq!(total(first.usage.clone()), responses(1));

    // seq 2. `turn.completed.usage` is the thread's total (4202 in); drover
    // passes the first turn's own usage as prior usage.
    let resumed = run!("headless-resume", "jsonl");
    let r = parse(&resumed, Some(total(first.usage)));
    assert_replied(&r, "SECOND", THREAD);
    assert_eq!(total(r.usage), responses(1));
    // Without the record, the thread total is all there is.
    let bare = total(parse(&resumed, None).usage);
    assert_eq!(
        (bare.input, bare.cache_read, bare.output),
        (
            responses(2).input,
            responses(2).cache_read,
            responses(2).output
        )
    );

    // seq 5 (the function call) and seq 6.
    let tool = parse(&run!("headless-tool", "jsonl"), None);
    assert_replied(&tool, "TOOLDONE", "01a22d68-b25f-76a1-9c99-f407d1024286");
    assert_eq!(total(tool.usage), responses(2));
}

#[test]
fn text_mode_prints_the_reply_and_the_sentence_on_stderr() {
    // seq 3.
    let plain = parse_text(&run!("headless-text", "txt"));
    assert_eq!(plain.outcome, TurnOutcome::Success);
    assert_eq!(plain.reply.as_deref(), Some("PLAIN"));
    assert_eq!(plain.error, None);
    assert_eq!(
        plain.conversation_id.as_deref(),
        Some("01a22d68-b019-7291-b395-e92c5d35d1d1")
    );

    let failed = parse_text(&run!("headless-error-500-text", "txt"));
    assert_eq!(failed.outcome, TurnOutcome::Failed);
    assert_eq!(failed.reply, None);
    assert_eq!(
        failed.error.as_deref(),
        Some("We’re currently experiencing high demand, which may cause temporary errors.")
    );
    assert_eq!(
        failed.conversation_id.as_deref(),
        Some("01a22d68-c63e-7fa3-8f3b-246454a302a5")
    );
}

fn failures() -> Vec<Failure> {
    vec![
        failure(
            run!("headless-error-500", "jsonl"),
            "01a22d68-b676-7b62-b4b8-a5331d09f667",
            "We’re currently experiencing high demand, which may cause temporary errors.",
            Some(FaultKind::ServerError),
        ),
        failure(
            run!("headless-error-529", "jsonl"),
            "01a22d68-b926-7651-bc30-f981a2eda831",
            "unexpected status 529 <unknown status code>: Overloaded, url: http://127.0.0.1:<port>/v1/responses",
            Some(FaultKind::Overload),
        ),
        failure(
            run!("headless-error-503", "jsonl"),
            "01a22d68-bbf7-7d22-9584-c2e6a0ac17d4",
            "unexpected status 503 Service Unavailable: The engine is currently overloaded, please try again later., url: http://127.0.0.1:<port>/v1/responses",
            Some(FaultKind::Overload),
        ),
        failure(
            run!("headless-error-429", "jsonl"),
            "01a22d68-be17-74d1-8203-a02e1d9675ee",
            "exceeded retry limit, last status: 429 Too Many Requests",
            Some(FaultKind::RateLimit),
        ),
        failure(
            run!("headless-error-401", "jsonl"),
            "01a22d68-c0f3-7541-80e8-50a23a590818",
            "unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:<port>/v1/responses",
            Some(FaultKind::Auth),
        ),
        failure(
            // The API's error body, as codex prints it. Not an environment fault.
            run!("headless-error-400", "jsonl"),
            "01a22d68-c376-7282-b583-731f9e9e7b15",
            r#"{"error":{"code":null,"message":"fake error","param":null,"type":"invalid_request_error"}}"#,
            None,
        ),
        failure(
            run!("headless-error-drop", "jsonl"),
            "01a22d68-c896-76d0-a255-771934c42d24",
            "stream disconnected before completion: error sending request",
            Some(FaultKind::Network),
        ),
        failure(
            // Codex reconnects forever; the capture's `timeout 40` ended it.
            run!("headless-error-closed-port", "jsonl"),
            "01a22d68-cb5a-7f23-9278-fde960ba60ac",
            "Reconnecting... waiting for network (Connection failed: error sending request)",
            Some(FaultKind::Network),
        ),
    ]
}

#[test]
fn every_error_mode_fails_with_the_clis_sentence() {
    assert_failures(
        |run| parse(run, None),
        &failures(),
        |f, r| {
            // No call succeeded and exec reported no usage.
            assert_eq!(r.usage, None, "{}", f.sentence);
        },
    );
}

fn classify(lines: Vec<String>) -> Option<drover_kit::Fault> {
    Codex::classify_fault(&profile(), &lines)
}

#[test]
fn headless_output_classifies() {
    assert_failures_classify(classify, &failures(), |f, fault| {
        // The JSON line that carries the sentence.
        assert!(fault.evidence.contains(f.sentence), "{}", fault.evidence);
    });
    let text = classify(run!("headless-error-500-text", "txt").lines()).expect("fault");
    assert_eq!(
        (text.kind, text.evidence.as_str()),
        (
            FaultKind::ServerError,
            "ERROR: We’re currently experiencing high demand, which may cause temporary errors."
        )
    );
    // The hook-trust warnings every run prints are not faults.
    assert_no_run_faults(
        classify,
        &[
            run!("headless-success", "jsonl"),
            run!("headless-resume", "jsonl"),
            run!("headless-text", "txt"),
            run!("headless-tool", "jsonl"),
        ],
    );
}

#[test]
fn every_pane_reads_and_classifies_as_what_it_shows() {
    use FaultKind::{Auth, Network, RateLimit, ServerError};
    use PromptKind::{HooksReview, ModelNudge, Permission};
    use SeatState::{Blocked, Idle, Unknown, Working};
    let panes: [Pane; 13] = [
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
            real!("pane-error-500.txt"),
            Idle,
            None,
            Some((
                ServerError,
                "■ We’re currently experiencing high demand, which may cause temporary errors.",
            )),
        ),
        (
            real!("pane-error-429.txt"),
            Idle,
            None,
            Some((
                RateLimit,
                "■ exceeded retry limit, last status: 429 Too Many Requests",
            )),
        ),
        (
            real!("pane-error-401.txt"),
            Idle,
            None,
            Some((
                Auth,
                "■ unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:<port>/v1/responses",
            )),
        ),
        // The endless reconnect is a turn still running.
        (
            real!("pane-reconnecting-closed-port.txt"),
            Working,
            None,
            Some((Network, "└ Connection failed: error sending request")),
        ),
        (
            real!("pane-first-run-1.txt"),
            Blocked,
            Some(HooksReview),
            None,
        ),
        (
            real!("pane-first-run-2.txt"),
            Blocked,
            Some(ModelNudge),
            None,
        ),
        (real!("pane-first-run-3.txt"), Idle, None, None),
        // Codex has exited; only its usage summary and resume hint remain.
        (real!("pane-exit.txt"), Unknown, None, None),
    ];
    let read = |s| Codex::read_screen(&profile(), &s);
    assert_panes(read, classify, Evidence::Exact, &panes);
}

#[test]
fn every_captured_hook_payload_parses() {
    let expected_kind = kinds(
        "SessionStart UserPromptSubmit Stop SessionEnd PermissionRequest PreToolUse PostToolUse",
    );
    let seen =
        assert_captured_hooks::<Codex>(
            &profile(),
            &captured_hook_logs("codex"),
            "<tmp>/codex/work",
            expected_kind,
            |native, e, field| {
                assert!(
                    e.transcript_path.as_deref().is_some_and(|p| p
                        .ends_with(&format!("{}.jsonl", e.session_id.as_deref().unwrap_or("-")))),
                    "the rollout of the same thread"
                );
                match native {
                    "Stop" => {
                        assert_eq!(e.last_message, field("last_assistant_message"));
                        assert!(e.last_message.is_some());
                    }
                    "PermissionRequest" => {
                        assert_eq!(e.prompt_kind, Some(PromptKind::Permission));
                        assert_eq!(e.reason.as_deref(), Some("Bash"));
                    }
                    "SessionStart" => assert_eq!(e.reason, field("source")),
                    "SessionEnd" => assert_eq!(e.reason.as_deref(), Some("other")),
                    "PreToolUse" | "PostToolUse" => assert_eq!(e.reason.as_deref(), Some("Bash")),
                    _ => {}
                }
            },
        );
    assert_eq!(seen, 56);
}

#[test]
fn failed_turns_fire_session_end_but_no_stop() {
    for Failure {
        run,
        session,
        sentence,
        ..
    } in failures()
    {
        let events = hook_names(run.hooks);
        assert!(!events.contains(&"Stop".to_string()), "{sentence}");
        // The closed-port run was killed, so it never ended its session.
        let ended = events.contains(&"SessionEnd".to_string());
        assert_eq!(ended, run.exit_code().is_some(), "{sentence}");
        let (_, start) = hook_lines(run.hooks)
            .into_iter()
            .find(|(e, _)| e == "SessionStart")
            .expect("SessionStart");
        assert_eq!(start["session_id"].as_str(), session);
    }
    let starts = parsed_hooks::<Codex>(
        &profile(),
        run!("headless-resume", "jsonl").hooks,
        "SessionStart",
    );
    let e = &starts[0];
    assert_eq!(
        (e.reason.as_deref(), e.session_id.as_deref()),
        (Some("resume"), Some(THREAD))
    );
}

fn tally(files: &[(&str, &str)]) -> Option<UsageReport> {
    drover_kit::testing::tally::<Codex>(PARSER, files, 4096)
}

const ROLLOUT: &str = real!("rollout.jsonl");
const ROLLOUT_TOOL: &str = real!("rollout-tool.jsonl");
const ROLLOUT_529: &str = real!("rollout-error-529.jsonl");
const ROLLOUT_NAME: &str =
    "sessions/2026/11/30/rollout-2026-11-30T17-02-43-01a22d68-aace-71c2-bb30-4645f8d9bd84.jsonl";
const TOOL_NAME: &str =
    "sessions/2026/11/30/rollout-2026-11-30T17-02-45-01a22d68-b25f-76a1-9c99-f407d1024286.jsonl";
const ERROR_NAME: &str =
    "sessions/2026/11/30/rollout-2026-11-30T17-02-47-01a22d68-b926-7651-bc30-f981a2eda831.jsonl";

#[test]
fn rollouts_total_what_the_server_sent() {
    // seq 1 and 2: the success + resume thread.
    let report = tally(&[(ROLLOUT_NAME, ROLLOUT)]).expect("usage");
    assert_eq!(
        only_entry(&report),
        (THREAD, "2026-11-30", "gpt-5.5", responses(2))
    );
    // seq 5 and 6.
    assert_eq!(total(tally(&[(TOOL_NAME, ROLLOUT_TOOL)])), responses(2));
    // seq 10 failed: the rollout holds no usage at all.
    assert_eq!(tally(&[(ERROR_NAME, ROLLOUT_529)]), None);
    // Together, and with the first file fed again: still four calls.
    let all = tally(&[
        (ROLLOUT_NAME, ROLLOUT),
        (TOOL_NAME, ROLLOUT_TOOL),
        (ERROR_NAME, ROLLOUT_529),
        (ROLLOUT_NAME, ROLLOUT),
    ]);
    assert_eq!(total(all), responses(4));
}

#[test]
fn hooks_install_into_and_leave_the_real_hooks_file() {
    let hooks = real!("config.hooks.json");
    // profiles/codex.toml's [hooks.events], and the engine's relay/marker.
    let events = [
        "SessionStart",
        "Stop",
        "SessionEnd",
        "PreCompact",
        "PermissionRequest",
        "SubagentStop",
    ];
    let request = hook_request("codex-hooks-json", "codex", &events);
    let trip = assert_hooks_round_trip::<Codex>(hooks, &request);
    assert_eq!(trip.before.missing.len(), 6);
    let stop = trip.installed["hooks"]["Stop"]
        .as_array()
        .expect("Stop list");
    // The recorder's own timeout is kept; drover's relay follows it.
    assert!(stop[0]["hooks"][0]["timeout"].is_number());
    assert_eq!(
        stop[1]["hooks"][0]["command"],
        "/usr/local/bin/drover hook --cli codex Stop"
    );
    assert_eq!(
        trip.installed["hooks"].as_object().map(|h| h.len()),
        Some(12)
    );
    assert_eq!(trip.after.registered.len(), 6);
}
