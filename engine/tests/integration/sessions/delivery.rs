//! Proof of delivery on panes: a typed message counts once the CLI shows it
//! took it. The scripted stand-in drops the first Enter, sits in tmux copy
//! mode (the paste reaches the terminal, the Enter goes to copy mode), or
//! never takes a message; drover clears the input and types once more, and
//! a message still not taken leaves the seat `blocked`, "message not
//! accepted", never `working`.

use serde_json::Value;

use super::{HERDR, TMUX, project, status};
use crate::support::Project;

/// `drover run --json` on `ws` with the stand-in's start-up directives.
fn run_with(p: &Project, ws: &str, directives: &str, prompt: &str) -> (Value, i32) {
    let out = p
        .drover()
        .env("SCRIPTED_CLI_DIRECTIVES", directives)
        .args([
            "run",
            "--json",
            "--cli",
            "scripted",
            "--workspace",
            ws,
            "--teardown-grace",
            "2s",
            "--timeout",
            "60s",
            prompt,
        ])
        .output()
        .expect("drover run");
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "drover run printed no JSON document ({e}):\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (doc, out.status.code().unwrap_or(-1))
}

/// The run's `delivery-retry` lifecycle records, in order.
fn retries(p: &Project, doc: &Value) -> Vec<Value> {
    let run = doc["run_id"].as_str().expect("run id");
    let task = doc["task"].as_str().expect("task");
    let path = p
        .run_dir(run)
        .join("tasks")
        .join(task)
        .join("lifecycle.jsonl");
    std::fs::read_to_string(&path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["event"] == "delivery-retry")
        .collect()
}

/// Their steps.
fn retry_steps(p: &Project, doc: &Value) -> Vec<String> {
    retries(p, doc)
        .iter()
        .map(|l| l["step"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn dropped_enter_is_retried_and_delivered(ws: &str) {
    let p = project(ws);
    // Quiet: no spinner, so until the reply only the prompt hook can prove
    // the retyped message arrived.
    let (doc, code) = run_with(
        &p,
        ws,
        "@drop-first-enter",
        "Reply with exactly: DELIVERED @quiet=3000",
    );
    assert_eq!((status(&doc), code), ("completed", 0), "{doc:#}");
    assert_eq!(doc["reply"], "DELIVERED", "{doc:#}");
    let steps = retry_steps(&p, &doc);
    assert_eq!(
        steps,
        ["clear-input", "retype", "delivered"],
        "the retry is not journaled as one clear and one retype: {doc:#}"
    );
    // The stand-in's profile installs the prompt hook: it is the proof.
    let delivered = retries(&p, &doc).pop().unwrap_or_default();
    assert_eq!(delivered["by"], "hook:UserPromptSubmit", "{delivered:#}");
    let run = doc["run_id"].as_str().expect("run id");
    assert_eq!(p.states(run).last().map(String::as_str), Some("done"));
}

fn a_message_never_taken_is_blocked_not_working(ws: &str) {
    let p = project(ws);
    let (doc, code) = run_with(&p, ws, "@never-accept", "Reply with exactly: LOST");
    assert_eq!((status(&doc), code), ("stalled", 1), "{doc:#}");
    assert!(
        doc["reason"]
            .as_str()
            .is_some_and(|r| r.starts_with("message not accepted")),
        "{doc:#}"
    );
    assert_eq!(doc["blocked"], "other", "{doc:#}");
    assert_eq!(
        retry_steps(&p, &doc),
        ["clear-input", "retype"],
        "one retry, journaled: {doc:#}"
    );
    let run = doc["run_id"].as_str().expect("run id");
    let states = p.states(run);
    assert!(
        !states.iter().any(|s| s == "working"),
        "a message never taken was counted as working: {states:?}"
    );
    assert_eq!(
        states.last().map(String::as_str),
        Some("blocked:other"),
        "{states:?}"
    );
    let journal = p.journal(run);
    let blocked = journal
        .iter()
        .rfind(|l| l["kind"] == "state" && l["state"] == "blocked")
        .expect("the blocked state is journaled");
    assert_eq!(blocked["source"], "delivery:not-accepted", "{blocked:#}");
    assert!(
        blocked.to_string().contains("message not accepted"),
        "{blocked:#}"
    );
}

mod dropped_enter {
    #[test]
    fn tmux() {
        super::dropped_enter_is_retried_and_delivered(super::TMUX);
    }
    #[test]
    fn herdr() {
        super::dropped_enter_is_retried_and_delivered(super::HERDR);
    }
}

mod never_accepted {
    #[test]
    fn tmux() {
        super::a_message_never_taken_is_blocked_not_working(super::TMUX);
    }
    #[test]
    fn herdr() {
        super::a_message_never_taken_is_blocked_not_working(super::HERDR);
    }
}

/// tmux only: herdr has no copy mode. The stand-in enters it on its own
/// pane as it draws its prompt; drover leaves it, clears the input (the
/// first paste is still there) and types again.
#[test]
fn copy_mode_is_left_and_the_message_delivered_on_tmux() {
    let p = project(TMUX);
    let (doc, code) = run_with(
        &p,
        TMUX,
        "@copy-mode",
        "Reply with exactly: OUT OF COPY MODE",
    );
    assert_eq!((status(&doc), code), ("completed", 0), "{doc:#}");
    assert_eq!(doc["reply"], "OUT OF COPY MODE", "{doc:#}");
    assert_eq!(
        retry_steps(&p, &doc),
        ["cancel-mode", "clear-input", "retype", "delivered"],
        "{doc:#}"
    );
}

/// A seat (`drover up`, then `drover send`) whose CLI never takes the
/// message: `send` ends stalled, `drover seats` shows the seat blocked with
/// "message not accepted", and the pane stays up for a person.
#[test]
fn a_seat_that_never_takes_a_message_shows_blocked_in_seats() {
    let p = project(TMUX);
    let up = p
        .drover()
        .env("SCRIPTED_CLI_DIRECTIVES", "@never-accept")
        .args(["up", "dev", "--cli", "scripted", "--workspace", TMUX])
        .output()
        .expect("drover up");
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let sent = p.output(&["send", "--json", "dev", "Reply with exactly: LOST"]);
    assert_eq!(sent.status.code(), Some(1));
    let sent: Value = serde_json::from_slice(&sent.stdout).expect("send JSON");
    assert_eq!(status(&sent), "stalled", "{sent:#}");
    let seats: Value =
        serde_json::from_slice(&p.output(&["seats", "--json"]).stdout).expect("seats JSON");
    let seat = &seats["seats"][0];
    assert_eq!(
        (seat["state"].as_str(), seat["evidence"].as_str()),
        (Some("blocked"), Some("message not accepted")),
        "{seats:#}"
    );
    assert_eq!(seat["alive"], true, "{seats:#}");
    assert!(p.output(&["down", "dev"]).status.success());
}
