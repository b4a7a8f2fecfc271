//! Seats: named, long-lived conversations. A tmux seat's pane outlives each
//! command; a headless seat resumes its conversation; a human seat is never
//! typed into.

mod support;

use serde_json::Value;
use support::{Project, tmux_required};

fn ok(p: &Project, args: &[&str]) -> String {
    let out = p.output(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn send(p: &Project, nick: &str, prompt: &str) -> Value {
    let out = p.output(&["send", "--json", nick, prompt]);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("send {nick}: {e}: {}", String::from_utf8_lossy(&out.stderr)))
}

fn seats(p: &Project) -> Value {
    serde_json::from_str(&ok(p, &["seats", "--json"])).expect("seats JSON")
}

#[test]
fn a_tmux_seat_serves_several_messages_and_goes_down() {
    tmux_required();
    let p = Project::new();
    p.install_hooks("scripted");
    ok(
        &p,
        &[
            "up",
            "dev",
            "--cli",
            "scripted",
            "--role",
            "builder",
            "--workspace",
            "tmux",
        ],
    );
    let first = send(&p, "dev", "Reply with exactly: ONE");
    assert_eq!(
        (first["status"].as_str(), first["reply"].as_str()),
        (Some("completed"), Some("ONE")),
        "{first:#}"
    );
    let second = send(&p, "dev", "Reply with exactly: TWO");
    assert_eq!(second["reply"], "TWO", "{second:#}");
    // The same CLI process answered both: one conversation.
    assert_eq!(first["session_id"], second["session_id"]);
    // `drover status` between messages shows the last turn's verdict and
    // settles nothing (a seat has no driver between messages by design).
    let status: Value = serde_json::from_str(&ok(&p, &["status", "--json"])).expect("status");
    let task = &status["runs"][0]["tasks"][0];
    assert_eq!(
        (task["verdict"].as_str(), task["reconciled"].as_bool()),
        (Some("completed"), Some(false)),
        "{status:#}"
    );
    let verdicts = std::fs::read_dir(p.path().join(".drover/runs"))
        .expect("runs")
        .filter_map(Result::ok)
        .map(|e| {
            std::fs::read_to_string(e.path().join("events.jsonl"))
                .unwrap_or_default()
                .matches("\"verdict\"")
                .count()
        })
        .sum::<usize>();
    assert_eq!(verdicts, 2, "one verdict per message");
    let listed = seats(&p);
    assert_eq!(listed["seats"][0]["nick"], "dev");
    assert_eq!(listed["seats"][0]["state"], "done");
    assert_eq!(listed["seats"][0]["alive"], true);
    ok(&p, &["down", "dev"]);
    assert_eq!(seats(&p)["seats"].as_array().map(Vec::len), Some(0));
    let again = p.output(&["send", "dev", "hello"]);
    assert_eq!(again.status.code(), Some(1));
}

#[test]
fn a_headless_seat_resumes_its_conversation() {
    let p = Project::new();
    // The scripted CLI's model priced at $1 per input and output token.
    let config = p.home.join(".config/drover");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(
        config.join("pricing.json"),
        r#"{"claude-scripted-1": {"input_cost_per_token": 1, "output_cost_per_token": 1,
            "cache_read_input_token_cost": 0, "cache_creation_input_token_cost": 0}}"#,
    )
    .expect("pricing.json");
    ok(
        &p,
        &[
            "up",
            "rev",
            "--cli",
            "scripted",
            "--workspace",
            "headless",
            "--budget-usd",
            "5000",
        ],
    );
    let first = send(&p, "rev", "Reply with exactly: R1");
    let second = send(&p, "rev", "Reply with exactly: R2");
    assert_eq!(
        (first["reply"].as_str(), second["reply"].as_str()),
        (Some("R1"), Some("R2"))
    );
    assert_eq!(
        first["session_id"], second["session_id"],
        "the second message resumed the first's conversation"
    );
    // Each message was one request of 1201 in and 57 out; the seat's cost
    // is their sum, beside its budget.
    assert_eq!(first["cost_usd"].as_f64(), Some(1258.0));
    let listed = seats(&p);
    assert_eq!(listed["seats"][0]["cost_usd"].as_f64(), Some(2516.0));
    assert_eq!(listed["seats"][0]["budget_usd"].as_f64(), Some(5000.0));
    ok(&p, &["down", "--all"]);
}

#[test]
fn a_human_seat_is_never_typed_into() {
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
    let out = p.output(&["send", "boss", "Reply with exactly: NO"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("human seat"));
    let log = std::fs::read_dir(p.path().join(".drover/runs"))
        .expect("runs")
        .filter_map(Result::ok)
        .next()
        .expect("seat run")
        .path()
        .join("logs/boss.log");
    assert!(
        !std::fs::read_to_string(log)
            .unwrap_or_default()
            .contains("Reply with exactly: NO"),
        "the prompt reached the human's pane"
    );
    // A second seat with the same nickname is refused while the first is up.
    let dup = p.output(&["up", "boss", "--cli", "scripted", "--workspace", "tmux"]);
    assert_eq!(dup.status.code(), Some(1));
    ok(&p, &["down", "boss"]);
}
