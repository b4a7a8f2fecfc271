//! A tool call that needs a permission: the seat blocks on the CLI's
//! permission prompt.

use std::time::Instant;

use serde_json::Value;

use super::{Case, context, timed};
use crate::support::real::{Real, wait_for};

/// A tool call that needs a permission leaves the seat blocked on a
/// permission prompt: the journal records `blocked:permission`. The seat
/// then waits for a person, so the test stops drover (SIGTERM, as Ctrl-C
/// would) and the result says what the seat was blocked on.
pub fn blocked(case: &Case) {
    let started = Instant::now();
    crate::support::tmux_required();
    let Some(real) = Real::new(case.cli) else {
        return;
    };
    real.hooks("install");
    let tool: Value = serde_json::from_str(case.tool).expect("tool JSON");
    real.server.control("tool", &tool);
    let args = case.args_with(&["--workspace", "tmux"]);
    let args: Vec<&str> = args
        .into_iter()
        .chain(case.blocked_args.iter().copied())
        .collect();
    let spawned = Instant::now();
    let limit = crate::support::HANG;
    let child = real.spawn_run(limit, &args, "Reply with exactly: TOOLDONE");
    // The seat's current state, not its first blocked one, and only once the
    // pane shows the prompt: a hook can say "blocked" a moment before the
    // dialog is drawn, while the screen still shows the turn working
    // (Copilot), and the screen then moves the seat back to working.
    let seen = wait_for(limit, || {
        let run = real.newest_run()?;
        let last = real.states(&run).last()?.clone();
        if last.starts_with("unknown@verdict") {
            return Some(last);
        }
        let screen = real.seat_pane(case.cli).and_then(|p| real.capture(&p))?;
        let shown = real.explain("blocked-check", &screen);
        (last.starts_with("blocked:permission@") && shown["state"] == "blocked").then_some(last)
    });
    if seen.as_deref().is_some_and(|s| s.starts_with("blocked:")) {
        // SAFETY: kill(2) on the drover child this test started.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGTERM);
        }
    }
    let out = Real::finish_run(child, spawned);
    let states = real.states(out.run_id());
    assert!(
        states.iter().any(|s| s.starts_with("blocked:permission@")),
        "{states:?}\n{}",
        context(&real, &out)
    );
    assert_ne!(out.status(), "completed", "{}", context(&real, &out));
    assert_ne!(out.code, 0);
    assert_eq!(out.doc["blocked"], "permission", "{}", context(&real, &out));
    assert!(
        !real.work.join("hi.txt").exists(),
        "the tool ran although nobody approved it"
    );
    eprintln!("[real {}] blocked: {states:?}", case.cli);
    timed(case.cli, "blocked", started);
}
