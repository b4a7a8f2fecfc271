//! A seat never types into a screen it cannot read. A dialog the CLI opens
//! on its pane (the scripted stand-in shows Claude Code 2.1.332's one-time
//! Bypass Permissions warning) is journaled as a question with its options
//! and answered by `drover answer` or the project's policy; a screen no
//! rule reads is reported with its last lines, and nothing is typed into
//! it (the stand-in keeps whatever reaches it as evidence).

use crate::support;

use std::path::PathBuf;

use serde_json::Value;
use support::{Project, tmux_required};

/// The stand-in's evidence file: whatever was typed into its unread screen.
const TYPED: &str = ".scripted/typed-into-unread-screen.txt";

fn json(out: &std::process::Output, what: &str) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{what}: {e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// `drover up NICK --cli CLI --workspace tmux --json [extra]` with the
/// stand-in's start-up directives.
fn up(
    p: &Project,
    nick: &str,
    cli: &str,
    directives: &str,
    extra: &[&str],
) -> std::process::Output {
    p.drover()
        .env("SCRIPTED_CLI_DIRECTIVES", directives)
        .args(["up", nick, "--cli", cli, "--workspace", "tmux", "--json"])
        .args(extra)
        .output()
        .expect("drover up")
}

fn labels(question: &Value) -> Vec<(String, String)> {
    question["options"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            (
                o["label"].as_str().unwrap_or_default().to_string(),
                o["kind"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn bypass_options() -> Vec<(String, String)> {
    vec![
        ("No, exit".to_string(), "reject_once".to_string()),
        ("Yes, I accept".to_string(), "allow_once".to_string()),
    ]
}

/// The seat's run id.
fn seat_run(p: &Project, nick: &str) -> String {
    std::fs::read_dir(p.path().join(".drover/runs"))
        .expect("runs")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|name| name.starts_with(&format!("seat-{nick}-")))
        .expect("the seat's run")
}

/// The seat's run journal.
fn seat_journal(p: &Project, nick: &str) -> Vec<Value> {
    p.journal(&seat_run(p, nick))
}

/// The seat's task directory.
fn seat_dir(p: &Project, nick: &str) -> PathBuf {
    p.run_dir(&seat_run(p, nick)).join("tasks").join(nick)
}

#[test]
fn a_first_run_dialog_is_a_question_and_nothing_is_typed_before_it_is_answered() {
    tmux_required();
    let p = Project::new();
    p.install_hooks("scripted");
    let out = up(&p, "lead", "scripted", "@first-run-dialog", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json(&out, "up");
    assert_eq!(doc["state"], "blocked", "{doc:#}");
    let question = &doc["question"];
    assert_eq!(
        question["title"], "WARNING: Claude Code running in Bypass Permissions mode",
        "{doc:#}"
    );
    assert_eq!(question["tool"], "claude/v1/bypass");
    assert_eq!(labels(question), bypass_options());
    // `drover seats` shows what it waits on.
    let seats = json(&p.output(&["seats", "--json"]), "seats");
    assert_eq!(seats["seats"][0]["state"], "blocked", "{seats:#}");

    // A message now is not typed: Enter would pick "No, exit".
    let early = p.output(&["send", "--json", "lead", "Reply with exactly: EARLY"]);
    assert_eq!(early.status.code(), Some(1));
    let early = json(&early, "send");
    assert_eq!(early["status"], "stalled", "{early:#}");
    assert!(
        early["reason"]
            .as_str()
            .is_some_and(|r| r.contains("waits on a question") && r.contains("nothing was typed")),
        "{early:#}"
    );
    let seats = json(&p.output(&["seats", "--json"]), "seats");
    assert_eq!(
        seats["seats"][0]["alive"], true,
        "the CLI exited: {seats:#}"
    );

    // An option no label starts with is refused, naming the options.
    let wrong = p.output(&["answer", "lead", "maybe"]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("2 = Yes, I accept"));
    let answered = p.output(&["answer", "lead", "yes", "--json"]);
    assert!(
        answered.status.success(),
        "{}",
        String::from_utf8_lossy(&answered.stderr)
    );
    let answered = json(&answered, "answer");
    assert_eq!(
        (
            answered["option"]["label"].as_str(),
            answered["now"].as_str()
        ),
        (Some("Yes, I accept"), Some("idle")),
        "{answered:#}"
    );
    let journal = seat_journal(&p, "lead");
    let answer = journal
        .iter()
        .find(|l| l["kind"] == "answer")
        .expect("the answer is journaled");
    assert_eq!(
        (answer["state"].as_str(), answer["source"].as_str()),
        (Some("2"), Some("person")),
        "{answer:#}"
    );
    let lifecycle = std::fs::read_to_string(seat_dir(&p, "lead").join("lifecycle.jsonl"))
        .expect("lifecycle.jsonl");
    assert!(
        lifecycle.lines().any(|l| {
            let l: Value = serde_json::from_str(l).unwrap_or_default();
            l["event"] == "dialog-answered" && l["keys"] == serde_json::json!(["down", "enter"])
        }),
        "the keys pressed are not recorded: {lifecycle}"
    );

    let sent = json(
        &p.output(&["send", "--json", "lead", "Reply with exactly: TMUXOK"]),
        "send",
    );
    assert_eq!(
        (sent["status"].as_str(), sent["reply"].as_str()),
        (Some("completed"), Some("TMUXOK")),
        "{sent:#}"
    );
    assert!(p.output(&["down", "lead"]).status.success());
}

#[test]
fn the_projects_policy_answers_a_dialog_once_trusted_and_never_on_a_human_seat() {
    tmux_required();
    let p = Project::new();
    p.install_hooks("scripted");
    std::fs::create_dir_all(p.path().join(".drover")).expect("mkdir");
    std::fs::write(
        p.path().join(".drover/config.toml"),
        "[[policy.rule]]\ntool = \"claude/v1/bypass\"\ndecision = \"allow\"\n",
    )
    .expect("policy");
    // Untrusted, the checkout's allow is set aside: a person is asked.
    let out = up(&p, "a", "scripted", "@first-run-dialog", &[]);
    assert_eq!(json(&out, "up")["state"], "blocked");
    assert!(p.output(&["down", "a"]).status.success());

    assert!(p.output(&["trust"]).status.success());
    let out = up(&p, "b", "scripted", "@first-run-dialog", &[]);
    let doc = json(&out, "up");
    assert_eq!(doc["state"], "idle", "{doc:#}");
    let journal = seat_journal(&p, "b");
    let answer = journal
        .iter()
        .find(|l| l["kind"] == "answer")
        .expect("the policy's answer is journaled");
    assert_eq!(answer["state"], "2", "{answer:#}");
    assert!(
        answer["source"].as_str().is_some_and(
            |s| s.starts_with("policy:") && s.ends_with("config.toml:1: policy.rule.0")
        ),
        "{answer:#}"
    );
    let sent = json(
        &p.output(&["send", "--json", "b", "Reply with exactly: POLICY"]),
        "send",
    );
    assert_eq!(sent["reply"], "POLICY", "{sent:#}");
    assert!(p.output(&["down", "b"]).status.success());

    // A person's seat: asked, never answered for them.
    let out = up(&p, "boss", "scripted", "@first-run-dialog", &["--human"]);
    let doc = json(&out, "up");
    assert_eq!(doc["state"], "blocked", "{doc:#}");
    assert!(
        !seat_journal(&p, "boss")
            .iter()
            .any(|l| l["kind"] == "answer"),
        "the policy answered a human seat"
    );
    let refused = p.output(&["answer", "boss", "yes"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("human seat"));
    assert!(p.output(&["down", "boss"]).status.success());
}

/// The built-in scripted profile with a short `ready_timeout_s`, as the
/// user's own profile (it replaces the built-in one of the same name).
fn quick_to_give_up(p: &Project) {
    let builtin = include_str!("../../../profiles/scripted.toml");
    let dir = p.home.join(".config/drover/profiles");
    std::fs::create_dir_all(&dir).expect("profiles");
    std::fs::write(
        dir.join("scripted.toml"),
        format!("ready_timeout_s = 3\n{builtin}"),
    )
    .expect("profile");
}

#[test]
fn nothing_is_typed_into_a_screen_no_rule_reads() {
    tmux_required();
    let p = Project::new();
    p.install_hooks("scripted");
    quick_to_give_up(&p);
    let out = up(&p, "lost", "scripted", "@unreadable-screen", &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let doc = json(&out, "up");
    assert_eq!(doc["state"], "unknown", "{doc:#}");
    assert!(
        doc["last_lines"]
            .as_str()
            .is_some_and(|l| l.contains("warming up its caches")),
        "{doc:#}"
    );
    let unknown = seat_journal(&p, "lost")
        .into_iter()
        .rfind(|l| l["kind"] == "state")
        .expect("a state");
    assert_eq!(unknown["state"], "unknown");
    assert!(
        unknown["detail"]["evidence"]
            .as_str()
            .is_some_and(|e| e.contains("warming up its caches")),
        "{unknown:#}"
    );
    let sent = p.output(&["send", "--json", "lost", "Reply with exactly: NO"]);
    assert_eq!(sent.status.code(), Some(1));
    let sent = json(&sent, "send");
    assert!(
        sent["reason"]
            .as_str()
            .is_some_and(|r| r.contains("nothing was typed") && r.contains("warming up")),
        "{sent:#}"
    );
    assert!(p.output(&["down", "lost"]).status.success());

    // A run on a pane: the same.
    let run = p
        .drover()
        .env("SCRIPTED_CLI_DIRECTIVES", "@unreadable-screen")
        .args(["run", "--json", "--cli", "scripted", "--workspace", "tmux"])
        .arg("Reply with exactly: NO")
        .output()
        .expect("drover run");
    let doc = json(&run, "run");
    assert_eq!(doc["status"], "stalled", "{doc:#}");
    let typed: PathBuf = p.path().join(TYPED);
    assert!(
        !typed.exists(),
        "drover typed into a screen no rule reads: {:?}",
        std::fs::read_to_string(&typed)
    );
}
