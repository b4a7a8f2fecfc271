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

/// `wait` on several seats, a role or all of them returns when one
/// (`--any`) or every one (the default) holds, and says which did what;
/// `events --role` keeps one role's lines.
#[test]
fn a_script_waits_on_a_team_by_role_any_or_every() {
    let p = Project::new();
    for (nick, role) in [("a", "dev"), ("b", "dev"), ("c", "review")] {
        ok(
            &p,
            &[
                "up",
                nick,
                "--cli",
                "scripted",
                "--workspace",
                "headless",
                "--role",
                role,
            ],
        );
    }
    for (nick, prompt) in [
        ("a", "Reply with exactly: A @hold=release-a"),
        ("b", "Reply with exactly: B @hold=release-b"),
        ("c", "Reply with exactly: C"),
    ] {
        ok(&p, &["send", "--no-wait", nick, prompt]);
    }
    let held_by = |doc: &Value| -> Vec<String> {
        doc["held_by"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    // Neither dev seat has finished: the wait times out, saying where each is.
    let early = p.output(&[
        "wait",
        "--role",
        "dev",
        "--any",
        "--until",
        "done",
        "--timeout",
        "100ms",
        "--json",
    ]);
    assert_eq!(early.status.code(), Some(1));
    let early: Value = serde_json::from_slice(&early.stdout).expect("wait JSON");
    assert_eq!(early["held"], false, "{early:#}");
    let targets: Vec<&str> = early["targets"]
        .as_array()
        .map(|t| t.iter().filter_map(|t| t["target"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(targets, ["a", "b"], "{early:#}");
    // One finishes: --any returns with it.
    std::fs::write(p.path().join("release-a"), "").expect("release a");
    let one = json(
        &p,
        &[
            "wait", "--role", "dev", "--any", "--until", "done", "--json",
        ],
    );
    assert_eq!(
        (one["held"].as_bool(), held_by(&one)),
        (Some(true), vec!["a".to_string()]),
        "{one:#}"
    );
    assert_eq!(one["mode"], "any");
    // --every still waits for b.
    let not_yet = p.output(&["wait", "a", "b", "--until", "done", "--timeout", "100ms"]);
    assert_eq!(not_yet.status.code(), Some(1));
    let text = String::from_utf8_lossy(&not_yet.stdout);
    assert!(
        text.contains("a: done, verdict completed (holds)") && text.contains("b: working"),
        "{text}"
    );
    std::fs::write(p.path().join("release-b"), "").expect("release b");
    let both = json(&p, &["wait", "--role", "dev", "--until", "done", "--json"]);
    let mut who = held_by(&both);
    who.sort();
    assert_eq!(who, ["a", "b"], "{both:#}");
    let all = json(&p, &["wait", "--all", "--json"]);
    assert_eq!(all["targets"].as_array().map(Vec::len), Some(3), "{all:#}");
    assert_eq!(all["held"], true);
    // Only the review seat's lines.
    let lines = ok(&p, &["events", "--role", "review", "--json"]);
    let seats: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a JSON line")["seat"].clone())
        .collect();
    assert!(
        !seats.is_empty() && seats.iter().all(|s| s == "c"),
        "{lines}"
    );
    // A role nobody has is a usage error.
    assert_eq!(p.output(&["wait", "--role", "ops"]).status.code(), Some(2));
    ok(&p, &["down", "--all"]);
}
