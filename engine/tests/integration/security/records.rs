//! Run-directory and seat records are data, never authority: a repository
//! can commit `.drover/runs/…` and `.drover/seats/…` naming a Ray address, a
//! log path, a pane of the project's tmux server, a process of the user's,
//! or a nickname that walks out of `.drover/seats`. drover shows such a
//! record and acts on none of it; only what this user's drover sealed (and
//! so wrote) drives an effect.

use crate::support;

use std::io::ErrorKind;
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use support::{Project, tmux_required};

fn write(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("dirs");
    std::fs::write(path, serde_json::to_string_pretty(value).expect("json")).expect("write");
}

/// A run a checkout committed: `run.json` for `workspace` with one task,
/// whose driver is long gone.
fn commit_run(p: &Project, id: &str, workspace: &str, task: &str) -> std::path::PathBuf {
    let dir = p.path().join(".drover/runs").join(id);
    write(
        &dir.join("run.json"),
        &json!({
            "run_id": id, "created_ns": 1, "cli": "scripted", "workspace": workspace,
            "project": p.path(), "tasks": [task], "driver_pid": 0, "driver_start": null
        }),
    );
    for sub in ["events", "logs", "tasks"] {
        std::fs::create_dir_all(dir.join(sub)).expect("run dirs");
    }
    dir
}

/// A seat record a checkout committed, in `.drover/seats/<file>.json`.
fn commit_seat(p: &Project, file: &str, fields: Value) {
    let mut seat = json!({
        "nick": file, "role": "agent", "cli": "scripted", "workspace": "headless",
        "human": false, "run_id": format!("seat-{file}-1"), "cwd": p.path(), "model": "",
        "conversation": null, "pane": null, "created_ns": 1
    });
    if let (Some(seat), Value::Object(fields)) = (seat.as_object_mut(), fields) {
        seat.extend(fields);
    }
    write(
        &p.path().join(".drover/seats").join(format!("{file}.json")),
        &seat,
    );
}

fn tmux(p: &Project, args: &[&str]) -> String {
    let socket = drover::workspace::tmux::socket_for(p.path());
    let out = Command::new("tmux")
        .args(["-L", &socket])
        .args(args)
        .output()
        .expect("tmux runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every pane id on the project's tmux server.
fn panes(p: &Project) -> Vec<String> {
    tmux(p, &["list-panes", "-a", "-F", "#{pane_id}"])
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

#[test]
fn status_neither_contacts_nor_writes_through_a_committed_ray_run() {
    let p = Project::new();
    // The "cluster" the committed record names: a listener that only
    // records whether anything connected (checked once drover has exited).
    let listener = TcpListener::bind("127.0.0.1:0").expect("listener");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let bashrc = p.path().join("home/.bashrc");
    std::fs::write(&bashrc, "# the user's own\n").expect("bashrc");
    let run = commit_run(&p, "20260101-000000-000-aaaaaa", "ray", "t");
    write(
        &run.join("tasks/t/ray.json"),
        &json!({
            "address": format!("http://127.0.0.1:{port}"), "submission_id": "job1",
            "entrypoint": "true", "num_cpus": 1.0, "resources": {}, "place": null,
            "pinned_node": null, "submitted_ns": 1, "log": bashrc, "status": null,
            "message": null, "node_id": null, "node_address": null
        }),
    );

    let out = p.output(&["status", "--json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);

    match listener.accept() {
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        Ok((_, from)) => panic!("drover status connected to the committed address (from {from})"),
        Err(e) => panic!("accept: {e}"),
    }
    assert_eq!(
        std::fs::read_to_string(&bashrc).expect("bashrc"),
        "# the user's own\n",
        "drover status wrote through the committed log path"
    );
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "status printed no JSON ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let run = &report["runs"][0];
    assert_eq!(run["foreign"], true, "{report:#}");
    assert_eq!(run["tasks"][0]["verdict"], Value::Null, "{report:#}");
}

#[test]
fn down_all_leaves_another_projects_seat_file_in_place() {
    let p = Project::new();
    let other = Project::new();
    let theirs = other.path().join(".drover/seats/dev.json");
    write(&theirs, &json!({"nick": "dev"}));
    let other_name = other
        .path()
        .file_name()
        .and_then(|n| n.to_str())
        .expect("name");
    // From `.drover/seats/`, three levels up is the directory both
    // projects live in.
    let nick = format!("../../../{other_name}/.drover/seats/dev");
    commit_seat(&p, "evil", json!({"nick": nick}));

    let out = p.output(&["down", "--all"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(theirs.exists(), "down --all deleted another project's seat");
    assert!(
        p.path().join(".drover/seats/evil.json").exists(),
        "down --all removed a record it did not write"
    );
}

#[test]
fn a_committed_pane_record_closes_none_of_the_users_panes() {
    tmux_required();
    let p = Project::new();
    // The user's own window on the project's tmux server.
    let ids = tmux(
        &p,
        &[
            "new-session",
            "-d",
            "-s",
            "mine",
            "-P",
            "-F",
            "#{window_id} #{pane_id}",
            "sleep",
            "300",
        ],
    );
    let (window, pane) = ids.trim().split_once(' ').expect("tmux ids");
    let named = json!({"session": "made-up", "window": window, "pane": pane});
    let run = commit_run(&p, "20260101-000000-000-bbbbbb", "tmux", "t");
    write(
        &run.join("tasks/t/pane.json"),
        &json!({"workspace": "tmux", "pane": named}),
    );
    let status = p.output(&["status"]);
    assert!(
        panes(&p).contains(&pane.to_string()),
        "drover status closed the user's pane: {}",
        String::from_utf8_lossy(&status.stderr)
    );

    // The same pane, named by the right session too, in a seat record.
    let named = json!({"session": "mine", "window": window, "pane": pane});
    commit_seat(
        &p,
        "ws",
        json!({"workspace": "tmux", "run_id": "20260101-000000-000-bbbbbb", "pane": named}),
    );
    let down = p.output(&["down", "--all"]);
    assert!(
        panes(&p).contains(&pane.to_string()),
        "drover down --all closed the user's pane: {}",
        String::from_utf8_lossy(&down.stderr)
    );
}

#[test]
fn down_all_does_not_signal_a_process_a_committed_host_record_names() {
    let p = Project::new();
    let mut users = Command::new("sleep").arg("300").spawn().expect("sleep");
    let identity = drover::workspace::process::identity(users.id()).expect("identity");
    let run = commit_run(&p, "seat-h-1", "acp", "h");
    write(
        &run.join("tasks/h/host.json"),
        &json!({
            "identity": identity, "state": "ready", "reason": null,
            "session": null, "agent_pid": null, "ts": 1
        }),
    );
    commit_seat(&p, "h", json!({"workspace": "acp", "run_id": "seat-h-1"}));

    let out = p.output(&["down", "--all"]);
    let alive = matches!(users.try_wait(), Ok(None));
    let _ = users.kill();
    let _ = users.wait();
    assert!(
        alive,
        "drover down --all signalled the user's process: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_seat_drover_brought_up_itself_is_closed_by_down() {
    tmux_required();
    let p = Project::new();
    p.install_hooks("scripted");
    let up = p.output(&["up", "dev", "--cli", "scripted", "--workspace", "tmux"]);
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let listed: Value =
        serde_json::from_slice(&p.output(&["seats", "--json"]).stdout).expect("seats JSON");
    let pane = listed["seats"][0]["pane"]["pane"]
        .as_str()
        .expect("the seat's pane")
        .to_string();
    assert_eq!(listed["seats"][0]["foreign"], false, "{listed:#}");
    assert!(panes(&p).contains(&pane));

    let down = p.output(&["down", "--all"]);
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
    assert!(
        !panes(&p).contains(&pane),
        "drover down left the pane of its own sealed seat"
    );
    assert!(!p.path().join(".drover/seats/dev.json").exists());
}

/// A committed `conversations.jsonl` line would hand its id to the CLI's
/// argv through `--continue` (`--config=…` read as an option) and its usage
/// to the bill: only lines this user's drover sealed count, and no id that
/// starts with `-` reaches a CLI, whoever chose it.
#[test]
fn a_committed_conversation_is_never_continued_and_no_id_is_an_option() {
    let p = Project::new();
    let line = json!({
        "ts": 1, "cli": "scripted", "conversation": "--mcp-config=/tmp/evil.json",
        "run": "r", "task": "t", "usage": null
    });
    std::fs::create_dir_all(p.path().join(".drover")).expect(".drover");
    std::fs::write(
        p.path().join(".drover/conversations.jsonl"),
        format!("{line}\n"),
    )
    .expect("committed line");
    let out = p.output(&["run", "--cli", "scripted", "--continue", "hello"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no earlier scripted conversation recorded"),
        "{stderr}"
    );
    assert!(!stderr.contains("evil"), "{stderr}");

    let out = p.output(&[
        "run",
        "--cli",
        "scripted",
        "--resume=--mcp-config=x",
        "hello",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("--resume") && stderr.contains("would read it as an option"),
        "{stderr}"
    );
    assert!(!p.path().join(".drover/runs").exists(), "a run was started");
}

/// A turn for `drover ray-worker`, as a driver posts it.
fn ray_turn(p: &Project, id: &str, prompt: &str) -> String {
    json!({
        "submission_id": id, "run_id": "r1", "task": "t", "cli": "scripted",
        "prompt": prompt, "cwd": p.path(), "model": "", "timeout_ms": 60_000,
        "result_wait_ms": 1000, "stop_nudges": 0, "stall_nudges": 0,
        "budget_mode": "off", "budget_grace_ms": 1000, "heartbeat_ms": 30_000,
        "teardown_grace_ms": 1000
    })
    .to_string()
}

fn ray_worker(p: &Project, mailbox: &Path, idle_ms: u64, lapse_ms: u64) -> std::process::Output {
    p.drover()
        .arg("ray-worker")
        .env(
            "DROVER_RAY_WORKER",
            json!({"mailbox": mailbox, "idle_ms": idle_ms, "lapse_ms": lapse_ms}).to_string(),
        )
        .output()
        .expect("drover ray-worker")
}

#[test]
fn a_ray_worker_takes_turns_only_from_its_own_projects_mailbox() {
    let p = Project::new();
    let other = Project::new();
    let mailbox = other.path().join(".drover/ray/workers/w1");
    std::fs::create_dir_all(&mailbox).expect("mailbox");
    std::fs::write(
        mailbox.join("t1.turn"),
        ray_turn(&other, "t1", "Reply with exactly: X"),
    )
    .expect("turn");
    let out = ray_worker(&p, &mailbox, 100, 100);
    assert!(!out.status.success(), "the worker served another project");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is not a worker's directory in the project"),
        "{stderr}"
    );
    assert!(!mailbox.join("t1.out").exists(), "a turn ran");
}

#[test]
fn a_ray_worker_stops_a_turn_whose_lease_lapses_and_leaves() {
    let p = Project::new();
    let mailbox = p.path().join(".drover/ray/workers/w1");
    std::fs::create_dir_all(&mailbox).expect("mailbox");
    std::fs::write(mailbox.join("claim"), "t1").expect("claim");
    // A lease its driver never renews.
    std::fs::write(mailbox.join("t1.lease"), "0").expect("lease");
    std::fs::write(
        mailbox.join("t1.turn"),
        ray_turn(&p, "t1", "Reply with exactly: NEVER @hang"),
    )
    .expect("turn");
    let out = ray_worker(&p, &mailbox, 3_600_000, 500);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("lapsed"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let lines = std::fs::read_to_string(mailbox.join("t1.out")).expect("the turn's lines");
    let result = lines
        .lines()
        .find_map(|l| l.strip_prefix("drover-ray/1 result "))
        .expect("a result line");
    let result: Value = serde_json::from_str(result).expect("json");
    assert_ne!(result["status"], "completed", "{result:#}");
    assert!(mailbox.join("gone").exists(), "the worker left");
}
