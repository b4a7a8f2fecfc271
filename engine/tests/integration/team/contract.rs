//! A script drives a team: `up`, `send --no-wait`, `wait`, `events
//! --follow --json` and `down`; a human seat is never waited on.

use serde_json::Value;

use super::{Follow, assert_no_tmux, json, ok};
use crate::support::{Project, tmux_required};

#[test]
fn a_script_drives_a_team_with_up_send_wait_events_and_down() {
    let p = Project::new();
    let follow = Follow::start(&p);
    let up = json(
        &p,
        &[
            "up",
            "rev",
            "--cli",
            "scripted",
            "--workspace",
            "headless",
            "--json",
        ],
    );
    assert_eq!(up["seat"]["nick"], "rev", "{up:#}");
    let sent = json(
        &p,
        &[
            "send",
            "--no-wait",
            "--json",
            "rev",
            "Reply with exactly: LATER @hold=release",
        ],
    );
    assert_eq!(sent["started"]["state"], "working", "{sent:#}");
    // Not settled yet: a short wait times out (exit 1) and says where it is.
    let early = p.output(&["wait", "rev", "--timeout", "100ms", "--json"]);
    assert_eq!(early.status.code(), Some(1));
    let early: Value = serde_json::from_slice(&early.stdout).expect("wait JSON");
    assert_eq!(
        (early["held"].as_bool(), early["state"].as_str()),
        (Some(false), Some("working")),
        "{early:#}"
    );
    std::fs::write(p.path().join("release"), "").expect("release the turn");
    let done = json(&p, &["wait", "rev", "--json"]);
    assert_eq!(
        (done["held"].as_bool(), done["verdict"].as_str()),
        (Some(true), Some("completed")),
        "{done:#}"
    );
    let not_working = json(&p, &["wait", "rev", "--not", "working", "--json"]);
    assert_eq!(not_working["state"], "done");
    // The follower printed the turn once: one working line, one verdict.
    let lines = follow.until("verdict", |l| l["seat"] == "rev" && l["kind"] == "verdict");
    let of_rev: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["seat"] == "rev")
        .map(|l| {
            (
                l["kind"].as_str().unwrap_or_default(),
                l["state"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        of_rev,
        [
            ("state", "working"),
            ("state", "done"),
            ("verdict", "completed")
        ]
    );
    assert!(
        lines
            .iter()
            .all(|l| l["run"].is_string() && l["ts"].is_u64())
    );
    ok(&p, &["down", "rev"]);
    // Usage errors exit 2: an unknown target, a human seat (never waited on).
    assert_eq!(p.output(&["wait", "nobody"]).status.code(), Some(2));
    assert_eq!(
        p.output(&["wait", "rev", "--until", "sleepy"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn a_human_seat_is_never_waited_on() {
    tmux_required();
    let p = Project::new();
    ok(
        &p,
        &[
            "up",
            "boss",
            "--cli",
            "scripted",
            "--workspace",
            "tmux",
            "--human",
        ],
    );
    let out = p.output(&["wait", "boss", "--timeout", "1s"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("human seat"));
    ok(&p, &["down", "--all"]);
    assert_no_tmux(&p);
}
