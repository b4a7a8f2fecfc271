//! Every verdict path through `drover run`, on every workspace, with the
//! scripted CLI (Claude Code's formats, driven by the real claude component),
//! real tmux, and a fake herdr server (tests/fake-herdr) speaking herdr's
//! socket API over real pseudo-terminals.

use crate::support;

use serde_json::Value;
use support::{Project, tmux_required};

const HEADLESS: &str = "headless";
const TMUX: &str = "tmux";
const HERDR: &str = "herdr";

fn project(workspace: &str) -> Project {
    let p = match workspace {
        HERDR => Project::with_fake_herdr(&[]),
        _ => Project::new(),
    };
    if workspace == TMUX {
        tmux_required();
    }
    if workspace != HEADLESS {
        p.install_hooks("scripted");
    }
    p
}

fn run(p: &Project, workspace: &str, extra: &[&str], prompt: &str) -> (Value, i32) {
    let mut args = vec![
        "--cli",
        "scripted",
        "--workspace",
        workspace,
        "--teardown-grace",
        "2s",
    ];
    args.extend_from_slice(extra);
    args.push(prompt);
    p.run(&args)
}

fn status(doc: &Value) -> &str {
    doc["status"].as_str().unwrap_or_default()
}

macro_rules! both {
    ($name:ident, $scenario:ident) => {
        mod $name {
            #[test]
            fn headless() {
                super::$scenario(super::HEADLESS);
            }
            #[test]
            fn tmux() {
                super::$scenario(super::TMUX);
            }
            #[test]
            fn herdr() {
                super::$scenario(super::HERDR);
            }
        }
    };
}

fn completes_with_reply_usage_and_conversation(ws: &str) {
    let p = project(ws);
    let (doc, code) = run(&p, ws, &[], "Reply with exactly: HELLO FROM DROVER");
    assert_eq!((status(&doc), code), ("completed", 0), "{doc:#}");
    assert_eq!(doc["reply"], "HELLO FROM DROVER");
    assert_eq!(doc["usage"]["input"], 1201);
    assert_eq!(doc["usage"]["cache_write"], 1302);
    assert_eq!(doc["usage"]["cache_read"], 1403);
    assert_eq!(doc["usage"]["output"], 57);
    assert_eq!(doc["usage"]["requests"], 1);
    let conversation = doc["session_id"]
        .as_str()
        .expect("conversation id")
        .to_string();
    let run_id = doc["run_id"].as_str().expect("run id");
    assert_eq!(p.states(run_id).last().map(String::as_str), Some("done"));
    // A second run resumes the same conversation.
    let (again, code) = run(
        &p,
        ws,
        &["--resume", &conversation],
        "Reply with exactly: AGAIN",
    );
    assert_eq!((status(&again), code), ("completed", 0), "{again:#}");
    assert_eq!(again["session_id"], conversation.as_str());
    assert_eq!(again["reply"], "AGAIN");
}
both!(completes, completes_with_reply_usage_and_conversation);

fn result_file_gates_completion(ws: &str) {
    let p = project(ws);
    let (doc, _) = run(
        &p,
        ws,
        &["--result-file", "out.json"],
        "Reply with exactly: DONE @write=out.json",
    );
    assert_eq!(status(&doc), "completed", "{doc:#}");
    assert_eq!(doc["result"]["ok"], true);
    // Missing after the nudge budget: stalled.
    let (doc, code) = run(
        &p,
        ws,
        &[
            "--result-file",
            "never.json",
            "--result-wait",
            "1s",
            "--nudges",
            "0",
        ],
        "Reply with exactly: NOPE",
    );
    assert_eq!((status(&doc), code), ("stalled", 1), "{doc:#}");
    // A nudge gets the work to write it.
    let (doc, _) = run(
        &p,
        ws,
        &[
            "--result-file",
            "late.json",
            "--result-wait",
            "1s",
            "--nudges",
            "1",
        ],
        "Reply with exactly: LATE @write-after-nudge=late.json",
    );
    assert_eq!(status(&doc), "completed", "{doc:#}");
    let lifecycle = std::fs::read_to_string(
        p.run_dir(doc["run_id"].as_str().unwrap_or_default())
            .join("tasks/scripted/lifecycle.jsonl"),
    )
    .unwrap_or_default();
    assert!(lifecycle.contains("\"nudge\""), "{lifecycle}");
}
both!(result_file, result_file_gates_completion);

fn hang_times_out(ws: &str) {
    let p = project(ws);
    let (doc, code) = run(&p, ws, &["--timeout", "3s"], "work @hang");
    assert_eq!((status(&doc), code), ("timeout", 1), "{doc:#}");
    assert!(
        doc["timings"]["timeout_clock"]
            .as_str()
            .is_some_and(|c| c == "monotonic" || c == "both"),
        "{doc:#}"
    );
}
both!(timeout, hang_times_out);

fn crash_is_crashed_and_a_present_result_is_honoured(ws: &str) {
    let p = project(ws);
    let (doc, code) = run(&p, ws, &[], "work @crash");
    assert_eq!((status(&doc), code), ("crashed", 1), "{doc:#}");
    let (doc, _) = run(
        &p,
        ws,
        &["--result-file", "r.json", "--result-wait", "1s"],
        "work @write=r.json @crash",
    );
    assert_eq!(
        status(&doc),
        if ws == HEADLESS {
            "crashed"
        } else {
            "completed"
        },
        "{doc:#}"
    );
}
both!(crash, crash_is_crashed_and_a_present_result_is_honoured);

fn early_exit_is_crashed(ws: &str) {
    let p = project(ws);
    let (doc, code) = run(&p, ws, &[], "work @exit-early");
    assert_eq!((status(&doc), code), ("crashed", 1), "{doc:#}");
}
both!(early_exit, early_exit_is_crashed);

fn no_stop_hook(ws: &str) {
    let p = project(ws);
    let (doc, _) = run(
        &p,
        ws,
        &["--timeout", "4s"],
        "Reply with exactly: QUIET @no-stop",
    );
    // Headless knows the turn ended from the exit and the parsed result;
    // a pane without a Stop hook has not provably finished.
    assert_eq!(
        status(&doc),
        if ws == HEADLESS {
            "completed"
        } else {
            "timeout"
        },
        "{doc:#}"
    );
}
both!(no_stop, no_stop_hook);

fn subagent_stops_never_end_the_turn(ws: &str) {
    let p = project(ws);
    let (doc, _) = run(
        &p,
        ws,
        &["--timeout", "4s"],
        "Reply with exactly: SUB @subagent-stops=3 @no-stop",
    );
    assert_eq!(
        status(&doc),
        if ws == HEADLESS {
            "completed"
        } else {
            "timeout"
        },
        "{doc:#}"
    );
    let (doc, _) = run(&p, ws, &[], "Reply with exactly: SUB @subagent-stops=3");
    assert_eq!(
        (status(&doc), doc["reply"].as_str()),
        ("completed", Some("SUB")),
        "{doc:#}"
    );
}
both!(subagent_stops, subagent_stops_never_end_the_turn);

fn fault_is_classified_with_the_clis_sentence(ws: &str) {
    let p = project(ws);
    let (doc, code) = run(&p, ws, &[], "work @fault=529");
    assert_eq!(code, 1);
    assert_eq!(
        status(&doc),
        if ws == HEADLESS { "crashed" } else { "stalled" },
        "{doc:#}"
    );
    assert_eq!(doc["fault"]["kind"], "overload", "{doc:#}");
    assert!(
        doc["fault"]["evidence"]
            .as_str()
            .is_some_and(|e| e.contains("API Error: 529 Overloaded.")),
        "{doc:#}"
    );
    let (doc, _) = run(&p, ws, &[], "work @fault=refused");
    assert_eq!(doc["fault"]["kind"], "network", "{doc:#}");
}
both!(fault, fault_is_classified_with_the_clis_sentence);

fn permission_request_blocks(ws: &str) {
    let p = project(ws);
    let (doc, code) = run(&p, ws, &["--timeout", "5s"], "clean up @blocked");
    assert_eq!(code, 1);
    assert_eq!(doc["blocked"], "permission", "{doc:#}");
    assert_eq!(
        status(&doc),
        if ws == HEADLESS { "stalled" } else { "timeout" },
        "{doc:#}"
    );
    let run_id = doc["run_id"].as_str().unwrap_or_default();
    assert!(
        p.states(run_id).iter().any(|s| s == "blocked:permission"),
        "{:?}",
        p.states(run_id)
    );
    assert!(
        std::fs::read_to_string(p.run_dir(run_id).join("ATTENTION"))
            .is_ok_and(|t| t.contains("permission"))
    );
}
both!(blocked, permission_request_blocks);

fn silence_stalls(ws: &str) {
    let p = project(ws);
    let (doc, code) = run(
        &p,
        ws,
        &["--stall", "1s", "--timeout", "20s"],
        "think @quiet=8000",
    );
    assert_eq!((status(&doc), code), ("stalled", 1), "{doc:#}");
    if ws != HEADLESS {
        // With a nudge budget the seat is nudged once before it stalls.
        let (doc, _) = run(
            &p,
            ws,
            &["--stall", "1s", "--stall-nudges", "1", "--timeout", "20s"],
            "think @quiet=8000",
        );
        assert_eq!(status(&doc), "stalled", "{doc:#}");
        let lifecycle = std::fs::read_to_string(
            p.run_dir(doc["run_id"].as_str().unwrap_or_default())
                .join("tasks/scripted/lifecycle.jsonl"),
        )
        .unwrap_or_default();
        assert!(lifecycle.contains("\"why\":\"stall\""), "{lifecycle}");
    }
}
both!(stall, silence_stalls);

fn budget_warns_or_ends_the_session(ws: &str) {
    let p = project(ws);
    // The budget is sampled from the transcript, whose path the hooks give
    // (SessionStart), on either workspace.
    if ws == HEADLESS {
        p.install_hooks("scripted");
    }
    // 1201 + 57 + 1302 + round(1403 * 0.1) = 2700 weighted tokens.
    let budget = ["--budget", "100", "--heartbeat", "300ms"];
    let mut warn = budget.to_vec();
    warn.extend(["--budget-mode", "warn"]);
    let (doc, _) = run(
        &p,
        ws,
        &warn,
        "Reply with exactly: W @usage-first @sleep=1500",
    );
    assert_eq!(status(&doc), "completed", "{doc:#}");
    let mut enforce = budget.to_vec();
    enforce.extend(["--budget-mode", "enforce", "--budget-grace", "0s"]);
    let (doc, code) = run(
        &p,
        ws,
        &enforce,
        "Reply with exactly: E @usage-first @sleep=4000",
    );
    assert_eq!((status(&doc), code), ("over_budget", 1), "{doc:#}");
    assert_eq!(doc["budget_weighted"], 2700);
}
both!(budget, budget_warns_or_ends_the_session);

/// One scripted request (1201 in, 57 out, 1403 cache read, 1302 cache
/// write) at the prices the test's pricing.json gives its model (Claude
/// Opus 5.5's in LiteLLM 1.110.2): $0.0127346.
const ONE_REQUEST_USD: f64 = 1201.0 * 4e-6 + 57.0 * 2e-5 + 1403.0 * 2e-7 + 1302.0 * 5e-6;

fn dollar_budget_ends_the_session(ws: &str) {
    let p = project(ws);
    if ws == HEADLESS {
        p.install_hooks("scripted");
    }
    // The scripted CLI's model is in no price table: the user's file adds it.
    let config = p.home.join(".config/drover");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(
        config.join("pricing.json"),
        r#"{"claude-scripted-1": {"input_cost_per_token": 4e-6, "output_cost_per_token": 2e-5,
            "cache_read_input_token_cost": 2e-7, "cache_creation_input_token_cost": 5e-6}}"#,
    )
    .expect("pricing.json");
    let (doc, code) = run(
        &p,
        ws,
        &["--budget-usd", "1", "--budget-mode", "enforce"],
        "Reply with exactly: FINE",
    );
    assert_eq!((status(&doc), code), ("completed", 0), "{doc:#}");
    let cost = doc["cost_usd"].as_f64().expect("priced");
    assert!((cost - ONE_REQUEST_USD).abs() < 1e-9, "{cost}");
    let (doc, code) = run(
        &p,
        ws,
        &[
            "--budget-usd",
            "0.01",
            "--budget-mode",
            "enforce",
            "--budget-grace",
            "0s",
            "--heartbeat",
            "300ms",
        ],
        "Reply with exactly: E @usage-first @sleep=4000",
    );
    assert_eq!((status(&doc), code), ("over_budget", 1), "{doc:#}");
}
both!(dollar_budget, dollar_budget_ends_the_session);

#[test]
fn session_end_is_crashed_unless_a_result_is_present() {
    let p = project(TMUX);
    let (doc, _) = run(&p, TMUX, &[], "bye @end-session");
    assert_eq!(status(&doc), "crashed", "{doc:#}");
    let (doc, _) = run(
        &p,
        TMUX,
        &["--result-file", "bye.json"],
        "bye @end-session @write=bye.json",
    );
    assert_eq!(status(&doc), "completed", "{doc:#}");
}

#[test]
fn tmux_without_hooks_refuses_with_the_fix() {
    tmux_required();
    let p = Project::new();
    let out = p.output(&["run", "--cli", "scripted", "--workspace", "tmux", "hello"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("drover hooks install --cli scripted"),
        "{stderr}"
    );
}

#[test]
fn journal_records_transitions_once() {
    let p = project(TMUX);
    let (doc, _) = run(&p, TMUX, &[], "Reply with exactly: J @sleep=2500");
    let states = p.states(doc["run_id"].as_str().unwrap_or_default());
    for pair in states.windows(2) {
        assert_ne!(pair[0], pair[1], "a repeated state: {states:?}");
    }
    assert!(
        states.contains(&"working".to_string())
            && states.last().map(String::as_str) == Some("done"),
        "{states:?}"
    );
}

fn interrupt_tears_the_seat_down(ws: &str) {
    use std::process::Stdio;
    let p = project(ws);
    let child = p
        .drover()
        .args([
            "run",
            "--json",
            "--cli",
            "scripted",
            "--workspace",
            ws,
            "--teardown-grace",
            "2s",
            "work @hang",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("drover run");
    p.first_run_working();
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let out = child.wait_with_output().expect("exit");
    assert_eq!(out.status.code(), Some(130));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("the verdict is still printed");
    assert_eq!(status(&doc), "crashed", "{doc:#}");
    assert!(
        doc["reason"]
            .as_str()
            .is_some_and(|r| r.contains("interrupted")),
        "{doc:#}"
    );
    let process: Value = serde_json::from_str(
        &std::fs::read_to_string(
            p.run_dir(doc["run_id"].as_str().unwrap_or_default())
                .join("tasks/scripted/process.json"),
        )
        .unwrap_or_default(),
    )
    .unwrap_or_default();
    if ws == HEADLESS {
        let pid = process["pid"].as_u64().expect("pid") as u32;
        let start = process["identity"]["start"].as_u64().expect("start");
        assert!(
            !drover::workspace::process::alive(drover::workspace::process::Identity { pid, start }),
            "the turn outlived the interrupt"
        );
    } else if ws == HERDR {
        let herdr = p.herdr.as_ref().expect("fake herdr");
        let panes = herdr.call("pane.list", serde_json::json!({}));
        assert_eq!(
            panes["result"]["panes"].as_array().map(Vec::len),
            Some(0),
            "the seat's pane (or its workspace) survived the interrupt: {panes:#}"
        );
    } else {
        // Not the window, not the session's idle shell, not the server.
        let socket = drover::workspace::tmux::socket_for(p.path());
        let sessions = std::process::Command::new("tmux")
            .args(["-L", &socket, "list-sessions"])
            .output()
            .expect("tmux");
        assert!(
            !sessions.status.success(),
            "tmux sessions survived the interrupt: {}",
            String::from_utf8_lossy(&sessions.stdout)
        );
    }
}
both!(interrupt, interrupt_tears_the_seat_down);

// ------------------------------------------------------------------ acp
//
// The acp workspace against `scripted-cli --acp`, an ACP agent that writes
// the same transcripts and obeys the same prompt directives.

/// `drover` for an acp session of the scripted CLI.
fn acp_args<'a>(extra: &[&'a str], prompt: &'a str) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--json",
        "--cli",
        "scripted",
        "--workspace",
        "acp",
        "--teardown-grace",
        "2s",
    ];
    args.extend_from_slice(extra);
    args.push(prompt);
    args
}

fn acp_run(p: &Project, extra: &[&str], prompt: &str) -> (Value, i32) {
    let out = p
        .drover()
        .args(acp_args(extra, prompt))
        .output()
        .expect("drover runs");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON document ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (doc, out.status.code().unwrap_or(-1))
}

fn traffic(p: &Project, doc: &Value) -> String {
    std::fs::read_to_string(
        p.run_dir(doc["run_id"].as_str().unwrap_or_default())
            .join("logs")
            .join("scripted.acp"),
    )
    .unwrap_or_default()
}

#[test]
fn acp_completes_with_reply_and_transcript_usage_and_resumes_with_session_load() {
    let p = Project::new();
    // The relay tells drover where the transcript is.
    p.install_hooks("scripted");
    let (doc, code) = acp_run(&p, &[], "Reply with exactly: ACP ONE");
    assert_eq!((status(&doc), code), ("completed", 0), "{doc:#}");
    assert_eq!(doc["workspace"], "acp");
    assert_eq!(doc["reply"], "ACP ONE");
    assert_eq!(
        doc["usage"],
        serde_json::json!({"input": 1201, "output": 57, "cache_read": 1403, "cache_write": 1302, "cache_write_1h": 0, "reasoning": 0, "requests": 1}),
        "{doc:#}"
    );
    let conversation = doc["session_id"].as_str().expect("session id").to_string();
    let run_id = doc["run_id"].as_str().unwrap_or_default();
    assert_eq!(
        p.states(run_id),
        ["unknown", "idle", "working", "done"],
        "{doc:#}"
    );
    // drover offers the agent no file system and no terminal.
    let sent = traffic(&p, &doc);
    let init: Value = sent
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("-> "))
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no initialize sent: {sent}"));
    let caps = &init["params"]["clientCapabilities"];
    assert_eq!(
        (
            &caps["fs"]["readTextFile"],
            &caps["fs"]["writeTextFile"],
            &caps["terminal"]
        ),
        (
            &Value::Bool(false),
            &Value::Bool(false),
            &Value::Bool(false)
        ),
        "{init:#}"
    );

    let (again, code) = acp_run(
        &p,
        &["--resume", &conversation],
        "Reply with exactly: ACP TWO",
    );
    assert_eq!((status(&again), code), ("completed", 0), "{again:#}");
    assert_eq!(again["session_id"], conversation.as_str());
    assert_eq!(
        again["reply"], "ACP TWO",
        "the replayed history is not this turn's reply"
    );
    // The transcript now holds both turns; this one spent one turn's worth.
    assert_eq!(again["usage"]["input"], 1201, "{again:#}");
    assert!(
        p.journal(again["run_id"].as_str().unwrap_or_default())
            .iter()
            .any(|l| l["source"] == "acp:session/load"),
        "{again:#}"
    );
    // --continue finds the same conversation; a conversation the agent does
    // not know fails the handshake.
    let (cont, _) = acp_run(&p, &["--continue"], "Reply with exactly: ACP THREE");
    assert_eq!(cont["session_id"], conversation.as_str(), "{cont:#}");
    let (unknown, code) = acp_run(&p, &["--resume", "no-such-session"], "hello");
    assert_eq!((status(&unknown), code), ("crashed", 1), "{unknown:#}");
    assert!(
        unknown["reason"]
            .as_str()
            .is_some_and(|r| r.contains("session/load")),
        "{unknown:#}"
    );
}

#[test]
fn acp_turn_endings_map_to_verdicts() {
    let p = Project::new();
    let (doc, code) = acp_run(&p, &[], "work @crash");
    assert_eq!((status(&doc), code), ("crashed", 1), "{doc:#}");
    assert_eq!(doc["exit_code"], 3, "{doc:#}");
    assert_eq!(doc["fault"]["kind"], "network", "{doc:#}");
    let (doc, _) = acp_run(&p, &[], "work @fault=529");
    assert_eq!(status(&doc), "stalled", "{doc:#}");
    assert_eq!(doc["fault"]["kind"], "overload", "{doc:#}");
    assert!(
        doc["reason"]
            .as_str()
            .is_some_and(|r| r.contains("API Error: 529 Overloaded.")),
        "{doc:#}"
    );
    let (doc, _) = acp_run(&p, &[], "Reply with exactly: LONG @stop=max_tokens");
    assert_eq!(status(&doc), "stalled", "{doc:#}");
    assert!(
        doc["reason"]
            .as_str()
            .is_some_and(|r| r.contains("max_tokens")),
        "{doc:#}"
    );
    // An agent asking for a file read is refused, and carries on.
    let (doc, _) = acp_run(&p, &[], "Reply with exactly: NO FS @ask-fs");
    assert_eq!(
        (status(&doc), doc["reply"].as_str()),
        ("completed", Some("NO FS")),
        "{doc:#}"
    );
    // The deadline cancels the prompt; the agent answers `cancelled`.
    let (doc, code) = acp_run(&p, &["--timeout", "2s"], "work @hang");
    assert_eq!((status(&doc), code), ("timeout", 1), "{doc:#}");
    let sent = traffic(&p, &doc);
    assert!(sent.contains(r#""method":"session/cancel""#), "{sent}");
    assert!(sent.contains(r#""stopReason":"cancelled""#), "{sent}");
}

/// Waits for `run`'s journal to show the task blocked on a question.
fn wait_question(p: &Project, child: &mut std::process::Child) -> (String, Value) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        assert!(
            child.try_wait().ok().flatten().is_none(),
            "drover ended before the seat blocked"
        );
        let runs = p.path().join(".drover").join("runs");
        for entry in std::fs::read_dir(&runs).into_iter().flatten().flatten() {
            let run_id = entry.file_name().to_string_lossy().into_owned();
            if let Some(line) = p
                .journal(&run_id)
                .into_iter()
                .find(|l| l["state"] == "blocked" && l["detail"]["question"].is_object())
            {
                return (run_id, line);
            }
        }
        assert!(std::time::Instant::now() < until, "the seat never blocked");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn acp_permission_question_is_data_answered_by_a_person_or_the_policy() {
    let p = Project::new();
    let mut child = p
        .drover()
        .args(acp_args(&[], "Reply with exactly: TOOL DONE @blocked"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("drover runs");
    let (run_id, blocked) = wait_question(&p, &mut child);
    assert_eq!(blocked["prompt_kind"], "permission");
    let question = &blocked["detail"]["question"];
    assert_eq!(question["tool"], "bash", "{blocked:#}");
    assert_eq!(question["kind"], "execute");
    assert_eq!(question["input"], "echo hi > hi.txt");
    assert_eq!(
        question["options"],
        serde_json::json!([
            {"id": "once", "label": "Allow once", "kind": "allow_once"},
            {"id": "always", "label": "Always allow", "kind": "allow_always"},
            {"id": "reject", "label": "Reject", "kind": "reject_once"}
        ])
    );
    // A wrong option is refused and names the choices.
    let wrong = p.output(&["answer", "--run", &run_id, "scripted", "maybe"]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("once = Allow once"));
    let answered = p.output(&[
        "answer",
        "--run",
        &run_id,
        "scripted",
        "Allow once",
        "--json",
    ]);
    assert!(
        answered.status.success(),
        "{}",
        String::from_utf8_lossy(&answered.stderr)
    );
    let answered: Value = serde_json::from_slice(&answered.stdout).expect("answer JSON");
    assert_eq!(answered["delivered"], true, "{answered:#}");
    let out = child.wait_with_output().expect("drover finishes");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("run JSON");
    assert_eq!(
        (status(&doc), doc["reply"].as_str()),
        ("completed", Some("TOOL DONE")),
        "{doc:#}"
    );
    assert!(
        p.path().join("hi.txt").exists(),
        "the allowed tool did not run"
    );
    let journal = p.journal(&run_id);
    let answer = journal
        .iter()
        .find(|l| l["kind"] == "answer")
        .expect("answer journaled");
    assert_eq!(
        (answer["state"].as_str(), answer["source"].as_str()),
        (Some("once"), Some("person"))
    );
    assert!(journal.iter().any(|l| l["kind"] == "event"
        && l["state"] == "tool_call_update"
        && l["detail"]["status"] == "completed"));
    // Answering again: nothing is pending.
    let again = p.output(&["answer", "--run", &run_id, "scripted", "once"]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("not waiting on a question"));

    // The policy rejects without anyone.
    std::fs::create_dir_all(p.path().join(".drover")).expect("mkdir");
    std::fs::write(
        p.path().join(".drover").join("config.toml"),
        "[[policy.rule]]\ninput = \"*hi2.txt\"\ndecision = \"reject\"\n\n[[policy.rule]]\nkind = \"execute\"\ninput = \"echo hi > hi3.txt\"\ndecision = \"allow\"\n",
    )
    .expect("policy");
    let (doc, _) = acp_run(&p, &[], "Reply with exactly: NOPE @blocked @write=hi2.txt");
    assert!(
        !p.path().join("hi2.txt").exists(),
        "the policy's rejection was ignored"
    );
    let journal = p.journal(doc["run_id"].as_str().unwrap_or_default());
    let answer = journal
        .iter()
        .find(|l| l["kind"] == "answer")
        .expect("policy answer journaled");
    assert_eq!(answer["state"], "reject", "{answer:#}");
    assert!(
        answer["source"].as_str().is_some_and(
            |s| s.starts_with("policy:") && s.ends_with("config.toml:1: policy.rule.0")
        ),
        "{answer:#}"
    );
    assert_eq!(answer["detail"]["answered"]["rule"]["input"], "*hi2.txt");
    // An allow rule from the checkout counts once the user trusts it.
    let show = p.output(&["trust", "--show"]);
    let shown = String::from_utf8_lossy(&show.stdout);
    assert!(
        shown.contains("[[policy.rule]]") && shown.contains("hi3.txt"),
        "{shown}"
    );
    assert!(p.output(&["trust"]).status.success());
    let (doc, _) = acp_run(&p, &[], "Reply with exactly: YES @blocked @write=hi3.txt");
    assert_eq!(status(&doc), "completed", "{doc:#}");
    assert!(
        p.path().join("hi3.txt").exists(),
        "the policy's allow was ignored"
    );

    // A broken policy stops drover before it starts anything.
    std::fs::write(
        p.path().join(".drover").join("config.toml"),
        "[[policy.rule]]\nkind = \"shell\"\ndecision = \"allow\"\n",
    )
    .expect("policy");
    let out = p
        .drover()
        .args(acp_args(&[], "hello"))
        .output()
        .expect("drover");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("config.toml:2: policy.rule.0.kind") && stderr.contains("'shell'"),
        "{stderr}"
    );
}
