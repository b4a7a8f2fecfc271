//! Seats on a fake herdr server: blocked with evidence from herdr's own
//! status, herdr's errors, and a herdr that disappears mid-session.

use std::io::Read;
use std::process::Stdio;

use serde_json::Value;

use super::{Follow, assert_nothing_left, json, ok};
use crate::support::Project;

#[test]
fn a_herdr_seat_blocks_with_evidence_from_herdrs_own_status() {
    let p = Project::with_fake_herdr(&[]);
    p.install_hooks("scripted");
    ok(
        &p,
        &["up", "dev", "--cli", "scripted", "--workspace", "herdr"],
    );
    let seat = json(&p, &["seats", "--json"]);
    let pane = seat["seats"][0]["pane"]["pane"]
        .as_str()
        .expect("pane id")
        .to_string();
    let follow = Follow::start(&p);
    let mut send = p
        .drover()
        .args([
            "send",
            "--json",
            "dev",
            "Reply with exactly: SLOW @hold=release",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("send");
    follow.until("working", |l| l["seat"] == "dev" && l["state"] == "working");
    // herdr's own reading says the agent waits for someone.
    let herdr = p.herdr.as_ref().expect("herdr");
    let reply = herdr.call(
        "pane.report_agent",
        serde_json::json!({"pane_id": pane, "source": "custom:test", "agent": "claude", "state": "blocked"}),
    );
    assert!(reply.get("result").is_some(), "{reply:#}");
    let lines = follow.until("blocked", |l| l["seat"] == "dev" && l["state"] == "blocked");
    let blocked = lines
        .iter()
        .find(|l| l["state"] == "blocked")
        .expect("blocked");
    assert_eq!(blocked["source"], "herdr:blocked", "{blocked:#}");
    assert_eq!(
        blocked["detail"]["evidence"],
        "herdr reads the agent as blocked"
    );
    let listed = json(&p, &["seats", "--json"]);
    assert_eq!(listed["seats"][0]["state"], "blocked", "{listed:#}");
    assert_eq!(
        listed["seats"][0]["evidence"],
        "herdr reads the agent as blocked"
    );
    herdr.call(
        "pane.report_agent",
        serde_json::json!({"pane_id": pane, "source": "custom:test", "agent": "claude", "state": "working"}),
    );
    std::fs::write(p.path().join("release"), "").expect("release the turn");
    let out = send.wait().expect("send ends");
    assert!(out.success());
    let mut text = String::new();
    send.stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut text)
        .expect("read");
    let result: Value = serde_json::from_str(&text).expect("send JSON");
    assert_eq!(result["reply"], "SLOW", "{result:#}");
    ok(&p, &["down", "dev"]);
    let panes = herdr.call("pane.list", serde_json::json!({}));
    assert_eq!(
        panes["result"]["panes"].as_array().map(Vec::len),
        Some(0),
        "{panes:#}"
    );
    assert_nothing_left(&p);
}

#[test]
fn a_herdr_that_answers_errors_fails_the_run_with_its_error() {
    let p = Project::with_fake_herdr(&["--fail", "layout.apply=internal_error"]);
    p.install_hooks("scripted");
    let (doc, code) = p.run(&[
        "--cli",
        "scripted",
        "--workspace",
        "herdr",
        "Reply with exactly: NO",
    ]);
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("crashed"), 1),
        "{doc:#}"
    );
    assert!(
        doc["reason"]
            .as_str()
            .is_some_and(|r| r.contains("herdr layout.apply refused: internal_error")),
        "{doc:#}"
    );
    // The workspace it made for the run is gone again.
    let herdr = p.herdr.as_ref().expect("herdr");
    let spaces = herdr.call("workspace.list", serde_json::json!({}));
    assert_eq!(
        spaces["result"]["workspaces"].as_array().map(Vec::len),
        Some(0),
        "{spaces:#}"
    );
}

#[test]
fn a_herdr_that_disappears_mid_session_is_not_a_crash() {
    let mut p = Project::with_fake_herdr(&[]);
    p.install_hooks("scripted");
    let child = p
        .drover()
        .args([
            "run",
            "--json",
            "--cli",
            "scripted",
            "--workspace",
            "herdr",
            "--timeout",
            "6s",
            "--teardown-grace",
            "1s",
            "work @hang",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("drover run");
    p.first_run_working();
    p.herdr.as_mut().expect("herdr").kill();
    let out = child.wait_with_output().expect("drover ends");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("a verdict");
    // Could not ask is not gone: the deadline decides.
    assert_eq!(doc["status"], "timeout", "{doc:#}");
    let lifecycle = std::fs::read_to_string(
        p.run_dir(doc["run_id"].as_str().unwrap_or_default())
            .join("tasks/scripted/lifecycle.jsonl"),
    )
    .unwrap_or_default();
    assert!(lifecycle.contains("herdr is not running"), "{lifecycle}");
    assert_nothing_left(&p);
}
