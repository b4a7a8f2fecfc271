//! The verdict paths every workspace shares: completed, result files,
//! timeouts, crashes, missing hooks, subagents, faults, permissions and
//! stalls; and what only tmux has (a session end, hooks it needs, the
//! journal).

use super::{HEADLESS, HERDR, TMUX, project, run, status};
use crate::support::{Project, tmux_required};

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

/// A pane turn without a Stop hook never provably ends, so its deadline
/// is its verdict; a headless turn ends on its own, with no deadline set.
fn deadline_unless_headless(ws: &str) -> &'static [&'static str] {
    if ws == HEADLESS {
        &[]
    } else {
        &["--timeout", "4s"]
    }
}

fn no_stop_hook(ws: &str) {
    let p = project(ws);
    let (doc, _) = run(
        &p,
        ws,
        deadline_unless_headless(ws),
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
        deadline_unless_headless(ws),
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
    let (doc, code) = if ws == HEADLESS {
        // The headless CLI is denied the permission and exits.
        run(&p, ws, &[], "clean up @blocked")
    } else {
        // A pane waits on its question until someone answers or stops the
        // run: stop it once the journal shows the question, however long a
        // busy machine took to get there.
        blocked_then_interrupted(&p, ws)
    };
    assert_eq!(code, if ws == HEADLESS { 1 } else { 130 }, "{doc:#}");
    assert_eq!(doc["blocked"], "permission", "{doc:#}");
    assert_eq!(
        status(&doc),
        if ws == HEADLESS { "stalled" } else { "crashed" },
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

/// `drover run` on a pane, stopped with Ctrl-C once its seat is blocked.
fn blocked_then_interrupted(p: &Project, ws: &str) -> (serde_json::Value, i32) {
    use std::process::Stdio;
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
            "clean up @blocked",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("drover run");
    p.first_run_journaling("\"prompt_kind\":\"permission\"");
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let out = child.wait_with_output().expect("drover run exits");
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no verdict printed ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (doc, out.status.code().unwrap_or(-1))
}

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
