//! What every driver (headless, interactive, ACP, Ray) shares: the texts
//! drover types to nudge a session, the heartbeat a watcher reads, and
//! durations in words.

use std::time::Duration;

use super::clock::Deadline;
use super::{Context, TurnSpec};
use drover_run::now_ns;

pub const NUDGE_RESULT: &str = "Your turn ended, but the result file this task must write is missing. Finish the task, write the result file, then end your turn.";
pub const NUDGE_STALL: &str = "drover: this session has shown no activity for a while. If you are waiting on something, say what; otherwise continue the task and end your turn when it is done.";
pub const NUDGE_BUDGET: &str = "drover: this session has exceeded its token budget. Wrap up now: finish the current step, write any result the task needs, and end your turn.";

/// Keeps the turn's prompt beside its records (`tasks/<task>/prompt.txt`),
/// written like every file under `.drover/`: confined, through no link.
pub fn keep_prompt(ctx: &Context, spec: &TurnSpec) {
    let path = ctx.run.task_dir(&spec.task).join("prompt.txt");
    if let Err(e) = drover_state::write_atomic(
        &path,
        format!(
            "{}
",
            spec.prompt
        )
        .as_bytes(),
    ) {
        tracing::warn!(path = %path.display(), "cannot keep the prompt: {e}");
    }
}

pub fn heartbeat(ctx: &Context, spec: &TurnSpec, deadline: &Deadline) {
    let _ = drover_run::write_json_atomic(
        &ctx.run.task_dir(&spec.task).join("heartbeat.json"),
        &serde_json::json!({"ts": now_ns(), "remaining_s": deadline.remaining().as_secs_f64(), "pid": std::process::id()}),
    );
}

pub fn humanize(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 && s.is_multiple_of(60) {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}
