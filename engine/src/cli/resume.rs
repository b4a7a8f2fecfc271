//! A seat (or a headless `drover run --resume-after-limit`) whose turn a
//! rate limit or a quota ended waits for the reset and sends again. The
//! reset time is the one the CLI stated (its adapter reads it from the
//! sentence or error object into the fault's `retry_after_secs`); without
//! one, drover backs off, doubling from a minute. Meanwhile the task is
//! journaled `blocked` with the prompt kind `waiting` and the time in its
//! evidence ("rate-limit: waiting until 17:05:03 (the CLI's reset time;
//! attempt 1 of 3)"), so `drover seats`, `wait` and `[[notify]]` see it;
//! the resumption is journaled too. The profile's `[resume]` (off switch,
//! attempts, the message sent on resuming) and `drover up --no-resume`
//! decide whether it happens.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use crate::drive::{Context, TurnReport};
use drover_types::wit::{FaultKind, SeatState};

/// The journal's prompt kind of a seat waiting for a limit to reset.
pub(super) const WAITING: &str = "waiting";
/// The first wait when the CLI did not say when its limit resets.
const BACKOFF_FIRST: Duration = Duration::from_secs(60);
/// No single wait is longer: a reset days away is a person's decision.
const WAIT_MAX: Duration = Duration::from_secs(12 * 3600);

/// How long to wait before resuming `result`'s message, if it is to be
/// resumed (its `resumed`th resumption); `opted_out` says why it may not be.
pub(super) fn plan(
    ctx: &Context,
    task: &str,
    opted_out: Option<&str>,
    result: &TurnReport,
    resumed: u32,
) -> Option<Duration> {
    let fault = result.fault.as_ref()?;
    if !matches!(fault.kind, FaultKind::RateLimit | FaultKind::Quota) {
        return None;
    }
    let settings = &ctx.profile().resume;
    let why_not = if let Some(why) = opted_out {
        Some(why)
    } else if !settings.on_limit {
        Some("the profile's [resume] on_limit is false")
    } else if resumed >= settings.attempts {
        Some("its [resume] attempts are used up")
    } else {
        None
    };
    if let Some(why) = why_not {
        ctx.run.lifecycle(
            task,
            "not-resumed",
            serde_json::json!({"fault": fault.kind.as_str(), "why": why, "resumed": resumed}),
        );
        return None;
    }
    let wait = match fault.retry_after_secs {
        Some(secs) => Duration::from_secs(u64::from(secs)),
        None => BACKOFF_FIRST.saturating_mul(1 << resumed.min(16)),
    };
    if wait > WAIT_MAX {
        ctx.run.lifecycle(
            task,
            "not-resumed",
            serde_json::json!({"fault": fault.kind.as_str(), "why": "the reset is more than 12 hours away", "wait_s": wait.as_secs()}),
        );
        return None;
    }
    Some(wait)
}

/// Journals the seat waiting, waits (a signal, or `gone` turning true,
/// ends the wait: false), and journals the resumption.
pub(super) fn wait(
    ctx: &Context,
    task: &str,
    result: &TurnReport,
    wait: Duration,
    resumed: u32,
    cancel: &AtomicBool,
    gone: &dyn Fn() -> bool,
) -> bool {
    let kind = result.fault.as_ref().map_or("limit", |f| f.kind.as_str());
    let until = SystemTime::now() + wait;
    let attempts = ctx.profile().resume.attempts;
    let local = clock_time(until);
    let stated = if result
        .fault
        .as_ref()
        .is_some_and(|f| f.retry_after_secs.is_some())
    {
        "the CLI's reset time"
    } else {
        "backing off"
    };
    ctx.blocked(
        task,
        WAITING,
        &format!("resume:{kind}"),
        Some(&format!(
            "{kind}: waiting until {local} ({stated}; attempt {} of {attempts})",
            resumed + 1
        )),
    );
    ctx.run.lifecycle(
        task,
        "suspended",
        serde_json::json!({
            "fault": kind,
            "until_ns": until.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64),
            "wait_s": wait.as_secs_f64(),
            "attempt": resumed + 1,
            "attempts": attempts,
        }),
    );
    // The wall clock decides (a suspended laptop wakes past the reset). A
    // signal, or the seat taken down, ends the wait.
    while SystemTime::now() < until {
        if cancel.load(Ordering::Relaxed) || gone() {
            return false;
        }
        let left = until
            .duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO);
        std::thread::sleep(left.min(Duration::from_millis(250)));
    }
    ctx.run.lifecycle(
        task,
        "resumed",
        serde_json::json!({"fault": kind, "attempt": resumed + 1}),
    );
    ctx.state(task, SeatState::Idle, None, "resume");
    true
}

/// `HH:MM:SS` in the machine's zone.
fn clock_time(at: SystemTime) -> String {
    let millis = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let zone = "local".parse::<drover_usage::Zone>().unwrap_or_default();
    zone.time_of_day(millis)
}
