//! Nothing left running after a settled run or a downed seat, even for a
//! run settled (and notified once) after its drover was killed.

use std::process::Stdio;

use super::{
    Follow, assert_no_tmux, assert_nothing_left, command_lines, json, ok, user_config, wait_for,
};
use crate::support::{Project, tmux_required};

#[test]
fn a_completed_tmux_run_and_downed_seats_leave_no_tmux_behind() {
    tmux_required();
    let p = Project::new();
    p.install_hooks("scripted");
    let (doc, _) = p.run(&[
        "--cli",
        "scripted",
        "--workspace",
        "tmux",
        "--teardown-grace",
        "2s",
        "Reply with exactly: BYE",
    ]);
    assert_eq!(doc["status"], "completed", "{doc:#}");
    assert_no_tmux(&p);
    for nick in ["a", "b"] {
        ok(
            &p,
            &["up", nick, "--cli", "scripted", "--workspace", "tmux"],
        );
    }
    let down = json(&p, &["down", "--all", "--json"]);
    assert_eq!(down["down"].as_array().map(Vec::len), Some(2), "{down:#}");
    assert_no_tmux(&p);
    assert_nothing_left(&p);
}

#[test]
fn a_killed_tmux_run_is_settled_by_a_follower_notifies_once_and_leaves_nothing() {
    tmux_required();
    let p = Project::new();
    let got = p.path().join("notified.jsonl");
    user_config(
        &p,
        &format!(
            "[[notify]]\nkind = \"command\"\nargv = [\"sh\", \"-c\", \"cat >> {}\"]\non = [\"completed\"]\n",
            got.display()
        ),
    );
    p.install_hooks("scripted");
    let mut drover = p
        .drover()
        .args([
            "run",
            "--cli",
            "scripted",
            "--workspace",
            "tmux",
            "Reply with exactly: ORPHAN @sleep=3000",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("drover run");
    let run_id = p.first_run_working();
    drover.kill().expect("SIGKILL drover");
    let _ = drover.wait();
    // A follower notices the dead driver and settles the run once the CLI
    // has finished; the notification comes from that verdict.
    let follow = Follow::start(&p);
    let lines = follow.until("reconciled verdict", |l| {
        l["run"] == run_id.as_str() && l["kind"] == "verdict"
    });
    let verdict = lines
        .iter()
        .find(|l| l["kind"] == "verdict")
        .expect("verdict");
    assert_eq!(
        (verdict["state"].as_str(), verdict["source"].as_str()),
        (Some("completed"), Some("reconcile")),
        "{verdict:#}"
    );
    let sent = wait_for("the notification", crate::support::HANG, || {
        let lines = command_lines(&got);
        (!lines.is_empty()).then_some(lines)
    });
    assert_eq!(sent[0]["run"], run_id.as_str());
    assert_eq!(sent[0]["event"], "completed");
    // Settling again (status) neither notifies nor leaves anything running.
    ok(&p, &["status", "--json"]);
    drop(follow);
    assert_eq!(command_lines(&got).len(), 1);
    assert_no_tmux(&p);
    assert_nothing_left(&p);
}
