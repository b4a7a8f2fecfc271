//! A fresh config home: every first-run dialog answered through
//! `drover answer`, then a message completes.

use serde_json::{Value, json};

use super::Case;
use crate::support::real::{Real, wait_for};

/// `drover up` on tmux with a fresh config home (nothing pre-accepted):
/// every first-run dialog becomes a question read by the screen rules
/// `dialogs` names, in order, and is answered through `drover answer` with
/// the option of kind `prefer` (else the first that lets the CLI go on);
/// then a message completes with its reply.
pub fn fresh_config(case: &Case, dialogs: &[&str], prefer: &str) {
    crate::support::tmux_required();
    let Some(real) = Real::fresh(case.cli) else {
        return;
    };
    let installed = real.hooks("install");
    assert_eq!(installed["missing"], json!([]), "{installed:#}");
    let mut args = vec![
        "up",
        "fresh",
        "--cli",
        case.cli,
        "--workspace",
        "tmux",
        "--json",
    ];
    args.extend_from_slice(case.args);
    let out = real.output(&args);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "up --json: {e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let mut state = doc["state"].as_str().unwrap_or_default().to_string();
    let mut question = doc["question"].clone();
    let mut seen: Vec<String> = Vec::new();
    let mut trail = vec![doc.clone()];
    while state != "idle" {
        assert!(
            state == "blocked" && question.is_object() && seen.len() <= dialogs.len(),
            "the seat is {state} after {seen:?}, expected {dialogs:?}: {trail:#?}"
        );
        seen.push(question["tool"].as_str().unwrap_or_default().to_string());
        let kinds: Vec<&str> = question["options"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| o["kind"].as_str())
            .collect();
        let pick = [prefer, "allow_once", "allow_always"]
            .into_iter()
            .find(|k| kinds.contains(k))
            .unwrap_or_else(|| panic!("no option lets {} go on: {question:#}", case.cli));
        let out = real.output(&["answer", "fresh", pick, "--json"]);
        let answered: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "answer {pick}: {e}: {}{}\n{trail:#?}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        trail.push(answered.clone());
        state = answered["now"].as_str().unwrap_or_default().to_string();
        question = answered["next_question"].clone();
        if state == "unknown" {
            // Not settled within the answer's wait (a CLI that restarts
            // itself): the journal says what came next.
            let settled = wait_for(crate::support::HANG, || {
                let out = real.output(&["seats", "--json"]);
                let all: Value = serde_json::from_slice(&out.stdout).ok()?;
                let seat = all["seats"][0].clone();
                matches!(seat["state"].as_str(), Some("idle" | "blocked")).then_some(seat)
            })
            .unwrap_or_else(|| {
                let screen = real.seat_pane("fresh").and_then(|pane| real.capture(&pane));
                panic!("the seat never settled after {seen:?}: {trail:#?}\nits pane: {screen:?}")
            });
            state = settled["state"].as_str().unwrap_or_default().to_string();
            question = settled["question"].clone();
        }
    }
    assert_eq!(seen, dialogs, "{trail:#?}");
    let out = real.output(&["send", "--json", "fresh", "Reply with exactly: FRESHOK"]);
    let sent: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(
        sent["status"],
        "completed",
        "{sent:#}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if case.stop_carries_reply {
        assert_eq!(sent["reply"], "FRESHOK", "{sent:#}");
    }
    let down = real.output(&["down", "fresh"]);
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
}
