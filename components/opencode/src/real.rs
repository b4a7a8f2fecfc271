//! Golden tests over the real opencode 1.18.33 captures in
//! `tests/fixtures/real/opencode/` (see its README and `capture/NOTES.md`).
//!
//! Expected values come from the scripted server and the captured text,
//! never from this adapter's output: every Chat Completions call the server
//! answered carried prompt 3101 (300 of them cached) and completion 77, so
//! one call is input 2801 + cache read 300, output 77. `server-requests.jsonl`
//! gives the calls per run (the `seq` numbers quoted below). opencode also
//! makes one title-generation call without tools when a session starts
//! (seq 1, 4, 7, 58); it is billed but appears neither in `run` output nor
//! in the `message` table, so the expected figures leave it out.

use drover_kit::Adapter;
use drover_kit::screen::rows_of as rows;
use drover_kit::testing::golden::{
    Failure, Pane, assert_failures, assert_failures_classify, assert_no_run_faults, assert_panes,
    failure,
};
use drover_kit::testing::{
    Evidence, Run, assert_replied, calls, captured_hook_logs, hook_lines, total,
};
use drover_kit::{
    CanonicalEvent, FaultKind, HookInstall, PromptKind, SeatState, TurnOutcome, TurnResult, Usage,
    UsageReport,
};
use serde_json::{Value, json};

use crate::Opencode;
use crate::tests_support::profile;
use crate::usage::{DB, JSON};

// real!(file) and run!(case, ext) over tests/fixtures/real/opencode/.
drover_kit::testing::real_captures!("opencode");

/// parse-turn over a captured run.
fn parse(run: &Run) -> TurnResult {
    run.parse_with::<Opencode>(&profile(), None)
}

/// What the server sent for `n` successful Chat Completions calls.
fn chat(n: u64) -> Usage {
    calls(3101 - 300, 300, 77, 0, n)
}

const SESSION: &str = "ses_dd2a43f32ffe3bHPlnw0TS47j2";

#[test]
fn success_resume_and_tool_turns_report_what_the_server_sent() {
    // seq 2 (seq 1 is the title).
    let first = parse(&run!("headless-success", "jsonl"));
    assert_replied(&first, "OK", SESSION);
    assert_eq!(first.error, None);
    assert_eq!(total(first.usage), chat(1));
    // seq 3: the resumed session gets no new title.
    let resumed = parse(&run!("headless-resume", "jsonl"));
    assert_eq!(
        (resumed.outcome, resumed.reply.as_deref()),
        (TurnOutcome::Success, Some("SECOND"))
    );
    assert_eq!(resumed.conversation_id.as_deref(), Some(SESSION));
    assert_eq!(total(resumed.usage), chat(1));
    // seq 8 (tool call) and 9.
    let tool = parse(&run!("headless-tool", "jsonl"));
    assert_eq!(
        (tool.outcome, tool.reply.as_deref()),
        (TurnOutcome::Success, Some("TOOLDONE"))
    );
    assert_eq!(
        tool.conversation_id.as_deref(),
        Some("ses_dd2a40747ffesXuEBFXYgYKzdf")
    );
    assert_eq!(total(tool.usage), chat(2));
    // The same stdout through the `opencode-json` parser.
    let t = drover_kit::usage::ChunkedTally::of::<Opencode>(JSON);
    t.begin_file("run.jsonl");
    t.feed(run!("headless-tool", "jsonl").stdout.as_bytes())
        .expect("feeds");
    assert_eq!(total(t.finish()), chat(2));
}

#[test]
fn text_mode_prints_the_reply() {
    // seq 5; the stderr is the colored `> build · fake-model` banner.
    let plain = parse(&run!("headless-text", "txt"));
    assert_eq!(plain.outcome, TurnOutcome::Success);
    assert_eq!(plain.reply.as_deref(), Some("PLAIN"));
    assert_eq!((plain.error, plain.usage), (None, None));
}

fn failures() -> Vec<Failure> {
    vec![
        failure(
            run!("headless-error-500", "jsonl"),
            "ses_dd2a3f6b6ffeRwacS1AGoL7WSu",
            "The server had an error while processing your request.",
            Some(FaultKind::ServerError),
        ),
        failure(
            run!("headless-error-503", "jsonl"),
            "ses_dd2a2cf22ffe3O5Yfsz8jjLDOC",
            "The engine is currently overloaded, please try again later.",
            Some(FaultKind::Overload),
        ),
        failure(
            run!("headless-error-429", "jsonl"),
            "ses_dd2a19be3ffehRsgheV2KBfsR5",
            "Rate limit reached for requests",
            Some(FaultKind::RateLimit),
        ),
        failure(
            run!("headless-error-401", "jsonl"),
            "ses_dd2a075daffeJ5Y8QlS2P0CGym",
            "Incorrect API key provided",
            Some(FaultKind::Auth),
        ),
        failure(
            run!("headless-error-400", "jsonl"),
            "ses_dd2a06248ffeiNhERifwHtZM32",
            "fake error",
            None,
        ),
        failure(
            run!("headless-error-drop", "jsonl"),
            "ses_dd2a05102ffeMX7jgLKu7yiIq6",
            "Cannot connect to API: The socket connection was closed unexpectedly. For more information, pass `verbose: true` in the second argument to fetch()",
            Some(FaultKind::Network),
        ),
        failure(
            run!("headless-error-closed-port", "jsonl"),
            "ses_dd29f4496ffeHdcgDJfcJI0Aya",
            "Cannot connect to API: Unable to connect. Is the computer able to access the url?",
            Some(FaultKind::Network),
        ),
    ]
}

#[test]
fn every_error_mode_fails_with_the_clis_message() {
    assert_failures(parse, &failures(), |f, r| {
        // Errors are a stdout event only; stderr stays empty.
        let printed = (f.run.exit_code(), f.run.stderr);
        assert_eq!(printed, (Some(1), ""), "{}", f.sentence);
        assert_eq!(r.usage, None, "{}", f.sentence);
    });
}

fn classify(lines: Vec<String>) -> Option<drover_kit::Fault> {
    Opencode::classify_fault(&profile(), &lines)
}

#[test]
fn error_events_classify() {
    assert_failures_classify(classify, &failures(), |_, fault| {
        assert!(fault.evidence.starts_with(r#"{"type":"error","#));
    });
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
    use SeatState::{Blocked, Idle, Unknown, Working};
    let panes: [Pane; 9] = [
        (real!("pane-idle.txt"), Idle, None, None),
        (real!("pane-working.txt"), Working, None, None),
        // After a turn the input box has no placeholder.
        (real!("pane-reply.txt"), Idle, None, None),
        (
            real!("pane-permission.txt"),
            Blocked,
            Some(PromptKind::Permission),
            None,
        ),
        (real!("pane-after-tool.txt"), Idle, None, None),
        (
            real!("pane-error-401.txt"),
            Idle,
            None,
            Some((FaultKind::Auth, "┃ Incorrect API key provided")),
        ),
        (
            real!("pane-error-500-retrying.txt"),
            Working,
            None,
            Some((
                FaultKind::ServerError,
                "⬝⬝⬝⬝⬝⬝■■ The server had an error while processing your request. [retrying in 1s attempt #3] esc interrupt • OpenCode 1.18.33",
            )),
        ),
        // No provider configured: the home screen, no dialog.
        (real!("pane-first-run.txt"), Idle, None, None),
        // opencode has exited; only its "Continue opencode -s …" hint is left.
        (real!("pane-exit.txt"), Unknown, None, None),
    ];
    let read = |s| Opencode::read_screen(&profile(), &s);
    assert_panes(read, classify, Evidence::IgnoringSpacing, &panes);
    let retrying = classify(rows(real!("pane-error-500-retrying.txt"))).expect("fault");
    assert_eq!(retrying.retry_after_secs, Some(1));
}

/// The recorder logged `{event, payload: properties}`; drover's plugin
/// relays `{type, properties, session_id, cwd}` (plugin.rs).
fn relayed(log: &str) -> Vec<(String, Value, Value)> {
    hook_lines(log)
        .into_iter()
        .map(|(event, properties)| {
            let session = properties
                .get("sessionID")
                .or_else(|| properties.get("info").and_then(|i| i.get("id")))
                .cloned()
                .unwrap_or(Value::Null);
            let payload = json!({
                "type": event,
                "properties": properties,
                "session_id": session,
                "cwd": "<tmp>/opencode/work",
            });
            (event, properties, payload)
        })
        .collect()
}

#[test]
fn every_captured_bus_event_parses() {
    let mut seen = 0;
    for log in captured_hook_logs("opencode") {
        for (event, properties, payload) in relayed(&log) {
            let expected = match event.as_str() {
                "session.created" => CanonicalEvent::SessionStart,
                "session.idle" => CanonicalEvent::Stop,
                "session.error" => CanonicalEvent::StopFailure,
                "permission.asked" => CanonicalEvent::PermissionRequest,
                _ => CanonicalEvent::Other,
            };
            let session = properties
                .get("sessionID")
                .or_else(|| properties.get("info").and_then(|i| i.get("id")))
                .and_then(Value::as_str)
                .map(str::to_string);
            for bytes in [
                serde_json::to_vec(&payload).expect("serializes"),
                // Without the plugin's copy of the id: the nested fields.
                serde_json::to_vec(&json!({"type": event, "properties": properties}))
                    .expect("serializes"),
            ] {
                let e = Opencode::parse_hook(&profile(), &event, &bytes).expect("parses");
                assert_eq!(e.kind, expected, "{event}");
                assert_eq!(e.session_id, session, "{event}");
                assert!(!e.subagent, "{event}");
                assert_eq!(e.transcript_path, None);
                match event.as_str() {
                    "session.error" => {
                        let message = properties["error"]["data"]["message"]
                            .as_str()
                            .expect("message");
                        assert_eq!(e.reason, Some(format!("APIError: {message}")));
                    }
                    "permission.asked" => {
                        assert_eq!(e.prompt_kind, Some(PromptKind::Permission));
                        assert_eq!(e.reason.as_deref(), Some("bash"));
                    }
                    _ => {}
                }
            }
            let relayed = Opencode::parse_hook(
                &profile(),
                &event.clone(),
                &serde_json::to_vec(&payload).expect("serializes"),
            )
            .expect("parses");
            assert_eq!(relayed.cwd.as_deref(), Some("<tmp>/opencode/work"));
            seen += 1;
        }
    }
    assert_eq!(seen, 1020);
}

#[test]
fn failed_turns_end_with_error_then_idle() {
    for Failure {
        run,
        session,
        sentence,
        ..
    } in failures()
    {
        let turn: Vec<(String, Option<String>)> = relayed(run.hooks)
            .into_iter()
            .filter(|(e, ..)| e.starts_with("session.") && e != "session.updated")
            .filter(|(e, ..)| e != "session.status" && e != "session.diff")
            .map(|(event, _, payload)| {
                let e = Opencode::parse_hook(
                    &profile(),
                    &event.clone(),
                    &serde_json::to_vec(&payload).expect("serializes"),
                )
                .expect("parses");
                (event, e.session_id)
            })
            .collect();
        let s = session.map(str::to_string);
        assert_eq!(
            turn,
            [
                ("session.created".to_string(), s.clone()),
                ("session.error".to_string(), s.clone()),
                ("session.idle".to_string(), s.clone()),
                ("session.idle".to_string(), s),
            ],
            "{sentence}"
        );
    }
}

/// The captured `sqlite3 -json` rows of the `message` table, one line each,
/// in the engine's format: `{"id", "session_id", "data"}` with `data` parsed
/// (`parsed`), or the row as sqlite3 printed it, `data` still JSON text.
fn db_lines(rows_json: &str, parsed: bool) -> String {
    let rows: Vec<Value> = serde_json::from_str(rows_json).expect("sqlite3 -json rows");
    rows.into_iter()
        .map(|row| {
            let line = if parsed {
                let data: Value =
                    serde_json::from_str(row["data"].as_str().expect("data text")).expect("JSON");
                json!({"id": row["id"], "session_id": row["session_id"], "data": data})
            } else {
                row
            };
            format!("{line}\n")
        })
        .collect()
}

fn tally_db(text: &str) -> Option<UsageReport> {
    drover_kit::testing::tally::<Opencode>(DB, &[("opencode.db", text)], 1000)
}

#[test]
fn the_message_table_totals_the_agent_calls() {
    let schema = real!("db-schema.sql");
    assert!(schema.contains(
        "CREATE TABLE `message` (\n          `id` text PRIMARY KEY,\n          `session_id` text NOT NULL,\n          `time_created` integer NOT NULL,\n          `time_updated` integer NOT NULL,\n          `data` text NOT NULL,"
    ));
    for parsed in [true, false] {
        // Headless: success + resume (seq 2, 3), text (5), tool (8, 9); the
        // seven failed sessions hold zero-token assistant rows.
        let report = tally_db(&db_lines(real!("db-message.json"), parsed)).expect("usage");
        assert_eq!(report.rejected_rows, 0);
        assert_eq!(report.total(), chat(5), "parsed: {parsed}");
        let per_session: Vec<(&str, &str, &str, u64)> = report
            .entries
            .iter()
            .map(|e| {
                (
                    e.session.as_str(),
                    e.day.as_str(),
                    e.model.as_str(),
                    e.usage.requests,
                )
            })
            .collect();
        assert_eq!(
            per_session,
            [
                (
                    "ses_dd2a40747ffesXuEBFXYgYKzdf",
                    "2026-11-30",
                    "fake-model",
                    2
                ),
                (
                    "ses_dd2a4182dffezMB8lECDVumtWJ",
                    "2026-11-30",
                    "fake-model",
                    1
                ),
                (SESSION, "2026-11-30", "fake-model", 2),
            ]
        );
        // After the TUI session too: TMUXOK (seq 59), the tool (61, 62) and
        // the answer once the 500s stopped (70).
        let after = tally_db(&db_lines(
            real!("db-message-after-interactive.json"),
            parsed,
        ));
        assert_eq!(total(after), chat(9), "parsed: {parsed}");
    }
}

#[test]
fn the_plugin_dialect_leaves_a_foreign_plugin_alone() {
    let request = HookInstall {
        dialect: "opencode-plugin".to_string(),
        relay_command: "/usr/local/bin/drover hook --cli opencode".to_string(),
        events: profile().hook_events,
        marker: "drover hook --cli".to_string(),
    };
    let recorder = real!("config.plugin.record.js");
    assert!(Opencode::install_hooks(recorder, &request).is_err());
    assert!(Opencode::remove_hooks(recorder, &request).is_err());
    let status = Opencode::detect_hooks(recorder, &request).expect("detects");
    assert_eq!(status.registered, Vec::<String>::new());
    let installed = Opencode::install_hooks("", &request).expect("installs");
    assert_eq!(
        Opencode::detect_hooks(&installed.text, &request)
            .expect("detects")
            .registered
            .len(),
        request.events.len()
    );
    let removed = Opencode::remove_hooks(&installed.text, &request).expect("removes");
    assert_eq!(removed.text, "");
}
