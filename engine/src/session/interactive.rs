//! The interactive driver: a CLI in a tmux pane, driven like a person would.
//!
//! It launches the CLI, waits until the screen reads ready, types the prompt
//! as a bracketed paste, then decides from hook events (the relay's drops),
//! pane liveness, pane-log activity, the screen and the clock:
//! - Stop (not a subagent's) ends the turn: completed, or — when a result
//!   file is required and missing — a nudge, then stalled;
//! - StopFailure ends the turn as stalled (the seat is alive, the turn
//!   failed; the fault says why); SessionEnd or a vanished pane is crashed,
//!   with a result file that is present honoured;
//! - permission requests, notifications and blocking screens mark the seat
//!   blocked (with the prompt kind) and keep waiting for a person;
//! - silence past the stall window nudges, then stalls; the deadline times
//!   out on either clock; the token budget warns or enforces.
//!
//! A tmux failure is never read as a crash: liveness unknown skips the tick.

use std::path::Path;
use std::time::{Duration, Instant};

use super::budget::{Budget, Verdict};
use super::clock::Deadline;
use super::headless::{heartbeat, humanize};
use super::result_file::ResultFile;
use super::{Context, SessionResult, SessionSpec, Status, Timings, conversations, faults};
use crate::relay::{ENV_RUN_DIR, ENV_TASK_ID};
use crate::run::{EventWatcher, HookRecord, now_ns};
use crate::sandbox::wit;
use crate::workspace::tmux::{Pane, Tmux};
use crate::workspace::{PaneLaunch, Workspace};

const TICK: Duration = Duration::from_millis(250);
const SCREEN_EVERY: Duration = Duration::from_millis(750);
/// How long to wait for the screen to read ready before typing anyway.
const READY_TIMEOUT: Duration = Duration::from_secs(45);

pub const NUDGE_STALL: &str = "drover: this session has shown no activity for a while. If you are waiting on something, say what; otherwise continue the task and end your turn when it is done.";
pub const NUDGE_BUDGET: &str = "drover: this session has exceeded its token budget. Wrap up now: finish the current step, write any result the task needs, and end your turn.";

/// The tmux session a run's seats live in.
pub fn session_name(run_id: &str) -> String {
    format!("drover-{run_id}")
}

struct State {
    session_id: Option<String>,
    transcript_path: Option<String>,
    blocked: Option<wit::PromptKind>,
    stop_seen: bool,
    reply: Option<String>,
}

enum Event {
    Stop,
    Failure(Option<String>),
    End(Option<String>),
    Nothing,
}

pub fn run(ctx: &Context, spec: &SessionSpec) -> SessionResult {
    let started = now_ns();
    let clock = Instant::now();
    let task = spec.task.as_str();
    let deadline = Deadline::after(spec.timeout);
    let _ = std::fs::create_dir_all(ctx.run.task_dir(task));
    let _ = std::fs::write(
        ctx.run.task_dir(task).join("prompt.txt"),
        format!("{}\n", spec.prompt),
    );
    let log = ctx.run.log(task);
    let _ = std::fs::remove_file(&log);
    let _ = std::fs::File::create(&log);
    let mut st = State {
        session_id: None,
        transcript_path: None,
        blocked: None,
        stop_seen: false,
        reply: None,
    };
    let mut budget = Budget::new();
    let result_file = spec
        .result_file
        .as_ref()
        .map(|p| ResultFile::before_launch(p.clone()));

    let make = |status: Status,
                reason: String,
                st: &State,
                result: Option<serde_json::Value>,
                timeout_clock: Option<&str>,
                budget: &Budget| SessionResult {
        status,
        run_id: ctx.run.id().to_string(),
        task: task.to_string(),
        cli: ctx.profile.name.clone(),
        workspace: "tmux".to_string(),
        reason,
        session_id: st.session_id.clone(),
        transcript_path: st.transcript_path.clone(),
        reply: st.reply.clone(),
        usage: None,
        fault: None,
        blocked: if status == Status::Completed {
            None
        } else {
            st.blocked
        },
        stop_seen: st.stop_seen,
        result,
        exit_code: None,
        budget_weighted: budget.weighted,
        timings: Timings {
            started_ns: started,
            ended_ns: now_ns(),
            duration_ms: clock.elapsed().as_millis() as u64,
            timeout_clock: timeout_clock.map(str::to_string),
        },
        logs: vec![log.clone()],
    };

    let tmux = match Tmux::for_project(&ctx.project) {
        Ok(t) => t,
        Err(e) => {
            return conclude(
                ctx,
                spec,
                None,
                None,
                make(
                    Status::Crashed,
                    format!("cannot use tmux: {e}"),
                    &st,
                    None,
                    None,
                    &budget,
                ),
            );
        }
    };
    // The event floor is taken before the CLI starts: its first hooks
    // (SessionStart) can land before the pane is even labelled.
    let launched = now_ns();
    let pane = match launch(ctx, spec, &tmux) {
        Ok(p) => p,
        Err(reason) => {
            return conclude(
                ctx,
                spec,
                Some(&tmux),
                None,
                make(Status::Crashed, reason, &st, None, None, &budget),
            );
        }
    };
    let mut watcher = EventWatcher::new(ctx.run.events_dir());
    let profile = ctx.profile.to_wit();
    ctx.state(task, "unknown", None, "launch");

    // Wait for the CLI to be ready for input.
    let ready_since = Instant::now();
    loop {
        if spec.cancelled() {
            return conclude(
                ctx,
                spec,
                Some(&tmux),
                Some(&pane),
                make(
                    Status::Crashed,
                    "interrupted: drover was asked to stop".to_string(),
                    &st,
                    None,
                    None,
                    &budget,
                ),
            );
        }
        if let Some(which) = deadline.expired() {
            return conclude(
                ctx,
                spec,
                Some(&tmux),
                Some(&pane),
                make(
                    Status::Timeout,
                    format!("the CLI never became ready before the deadline ({which} clock)"),
                    &st,
                    None,
                    Some(which),
                    &budget,
                ),
            );
        }
        if let Ok(false) = ws(&tmux).pane_alive(&pane) {
            let found = result_file.as_ref().and_then(ResultFile::read);
            let status = if found.is_some() {
                Status::Completed
            } else {
                Status::Crashed
            };
            return conclude(
                ctx,
                spec,
                Some(&tmux),
                Some(&pane),
                make(
                    status,
                    "the CLI exited before it was ready".to_string(),
                    &st,
                    found,
                    None,
                    &budget,
                ),
            );
        }
        for event in relevant(&mut watcher, task, launched, TICK) {
            absorb(ctx, task, &event, &mut st);
        }
        let reading = read_screen(ctx, &tmux, &pane, &profile);
        match reading.as_ref().map(|r| r.state) {
            Some(wit::SeatState::Idle) => {
                ctx.state(
                    task,
                    "idle",
                    None,
                    &format!(
                        "screen:{}",
                        reading.as_ref().map_or("", |r| r.rule.as_str())
                    ),
                );
                break;
            }
            Some(wit::SeatState::Blocked) => {
                let kind = reading
                    .as_ref()
                    .and_then(|r| r.prompt_kind)
                    .unwrap_or(wit::PromptKind::Other);
                if st.blocked != Some(kind) {
                    ctx.notify(&format!(
                        "task {task} is blocked on a {kind} prompt before its first turn"
                    ));
                }
                st.blocked = Some(kind);
                ctx.state(
                    task,
                    "blocked",
                    Some(kind.as_str()),
                    &format!(
                        "screen:{}",
                        reading.as_ref().map_or("", |r| r.rule.as_str())
                    ),
                );
            }
            _ if ready_since.elapsed() >= READY_TIMEOUT && st.blocked.is_none() => {
                ctx.run.lifecycle(
                    task,
                    "typed-without-ready-screen",
                    serde_json::json!({"waited_s": READY_TIMEOUT.as_secs()}),
                );
                break;
            }
            _ => {}
        }
    }

    let rendered = match ctx.adapter.render_prompt(&profile, &spec.prompt) {
        Ok(Ok(text)) => text,
        Ok(Err(wit::AdapterError::InvalidInput(m) | wit::AdapterError::Unsupported(m))) => {
            return conclude(
                ctx,
                spec,
                Some(&tmux),
                Some(&pane),
                make(
                    Status::Crashed,
                    format!("the adapter cannot render the prompt: {m}"),
                    &st,
                    None,
                    None,
                    &budget,
                ),
            );
        }
        Err(e) => {
            return conclude(
                ctx,
                spec,
                Some(&tmux),
                Some(&pane),
                make(
                    Status::Crashed,
                    format!("the adapter failed rendering the prompt: {e}"),
                    &st,
                    None,
                    None,
                    &budget,
                ),
            );
        }
    };
    if let Err(e) = ws(&tmux).type_text(&pane, &rendered, false) {
        return conclude(
            ctx,
            spec,
            Some(&tmux),
            Some(&pane),
            make(
                Status::Crashed,
                format!("cannot type the prompt: {e}"),
                &st,
                None,
                None,
                &budget,
            ),
        );
    }
    st.blocked = None;
    ctx.state(task, "working", None, "prompt-typed");

    let mut nudges_left = spec.stop_nudges;
    let mut stall_nudges_left = spec.stall_nudges;
    let mut last_heartbeat: Option<Instant> = None;
    let mut last_screen = Instant::now();
    let mut activity = log_key(&log);
    let mut last_activity = Instant::now();
    loop {
        if spec.cancelled() {
            return conclude(
                ctx,
                spec,
                Some(&tmux),
                Some(&pane),
                make(
                    Status::Crashed,
                    "interrupted: drover was asked to stop".to_string(),
                    &st,
                    None,
                    None,
                    &budget,
                ),
            );
        }
        if let Some(which) = deadline.expired() {
            ctx.run.lifecycle(task, "timeout-fired", serde_json::json!({"expired_clock": which, "timeout_s": spec.timeout.as_secs_f64()}));
            return conclude(
                ctx,
                spec,
                Some(&tmux),
                Some(&pane),
                make(
                    Status::Timeout,
                    format!(
                        "the session deadline of {} passed ({which} clock)",
                        humanize(spec.timeout)
                    ),
                    &st,
                    None,
                    Some(which),
                    &budget,
                ),
            );
        }
        if last_heartbeat.is_none_or(|t| t.elapsed() >= spec.heartbeat) {
            last_heartbeat = Some(Instant::now());
            heartbeat(ctx, spec, &deadline);
            match budget.sample(ctx, spec, st.transcript_path.as_deref()) {
                Verdict::Nudge => {
                    let _ = ws(&tmux).type_text(&pane, NUDGE_BUDGET, false);
                    ctx.run
                        .lifecycle(task, "nudge", serde_json::json!({"why": "budget"}));
                }
                Verdict::OverBudget => {
                    return conclude(
                        ctx,
                        spec,
                        Some(&tmux),
                        Some(&pane),
                        make(
                            Status::OverBudget,
                            "the token budget was exceeded".to_string(),
                            &st,
                            None,
                            None,
                            &budget,
                        ),
                    );
                }
                Verdict::Fine => {}
            }
        }
        if budget.expired() {
            let dead = matches!(ws(&tmux).pane_alive(&pane), Ok(false));
            let status = if dead {
                Status::Crashed
            } else {
                Status::OverBudget
            };
            return conclude(
                ctx,
                spec,
                Some(&tmux),
                Some(&pane),
                make(
                    status,
                    "the token budget was exceeded and its grace ran out".to_string(),
                    &st,
                    None,
                    None,
                    &budget,
                ),
            );
        }

        let mut outcome = Event::Nothing;
        for event in relevant(&mut watcher, task, launched, TICK.min(deadline.remaining())) {
            let kind = absorb(ctx, task, &event, &mut st);
            if !matches!(kind, Event::Nothing) {
                outcome = kind;
                break;
            }
        }
        match outcome {
            Event::Stop => {
                st.stop_seen = true;
                st.blocked = None;
                ctx.state(task, "done", None, "hook:Stop");
                let Some(result_file) = &result_file else {
                    return conclude(
                        ctx,
                        spec,
                        Some(&tmux),
                        Some(&pane),
                        make(
                            Status::Completed,
                            "the turn finished (Stop hook)".to_string(),
                            &st,
                            None,
                            None,
                            &budget,
                        ),
                    );
                };
                let alive = || !matches!(ws(&tmux).pane_alive(&pane), Ok(false));
                if let Some(found) = result_file.wait(spec.result_wait, alive) {
                    return conclude(
                        ctx,
                        spec,
                        Some(&tmux),
                        Some(&pane),
                        make(
                            Status::Completed,
                            "the turn finished and wrote the result file".to_string(),
                            &st,
                            Some(found),
                            None,
                            &budget,
                        ),
                    );
                }
                ctx.run.lifecycle(
                    task,
                    "resultless-stop",
                    serde_json::json!({"path": result_file.path(), "nudges_left": nudges_left}),
                );
                if nudges_left == 0 {
                    return conclude(
                        ctx,
                        spec,
                        Some(&tmux),
                        Some(&pane),
                        make(
                            Status::Stalled,
                            format!(
                                "the turn finished without writing {}",
                                result_file.path().display()
                            ),
                            &st,
                            None,
                            None,
                            &budget,
                        ),
                    );
                }
                nudges_left -= 1;
                ctx.run.lifecycle(
                    task,
                    "nudge",
                    serde_json::json!({"why": "result-file", "left": nudges_left}),
                );
                let text = format!(
                    "{} ({})",
                    super::headless::NUDGE_RESULT,
                    result_file.path().display()
                );
                if let Err(e) = ws(&tmux).type_text(&pane, &text, false) {
                    ctx.run.lifecycle(
                        task,
                        "nudge-failed",
                        serde_json::json!({"error": e.to_string()}),
                    );
                }
                ctx.state(task, "working", None, "nudge");
                continue;
            }
            Event::Failure(reason) => {
                ctx.state(task, "unknown", None, "hook:StopFailure");
                let why = reason.map_or_else(
                    || "the turn failed (StopFailure)".to_string(),
                    |r| format!("the turn failed: {r}"),
                );
                return conclude(
                    ctx,
                    spec,
                    Some(&tmux),
                    Some(&pane),
                    make(Status::Stalled, why, &st, None, None, &budget),
                );
            }
            Event::End(reason) => {
                let found = result_file.as_ref().and_then(ResultFile::read);
                let status = if found.is_some() {
                    Status::Completed
                } else {
                    Status::Crashed
                };
                let why = format!(
                    "the CLI ended its session{}",
                    reason.map(|r| format!(" ({r})")).unwrap_or_default()
                );
                return conclude(
                    ctx,
                    spec,
                    Some(&tmux),
                    Some(&pane),
                    make(status, why, &st, found, None, &budget),
                );
            }
            Event::Nothing => {}
        }

        match ws(&tmux).pane_alive(&pane) {
            Ok(false) => {
                let found = result_file.as_ref().and_then(ResultFile::read);
                let status = if found.is_some() {
                    Status::Completed
                } else {
                    Status::Crashed
                };
                return conclude(
                    ctx,
                    spec,
                    Some(&tmux),
                    Some(&pane),
                    make(
                        status,
                        "the CLI's pane is gone (it exited)".to_string(),
                        &st,
                        found,
                        None,
                        &budget,
                    ),
                );
            }
            Ok(true) => {}
            // Could not ask: not a crash. The deadline bounds a lasting failure.
            Err(e) => ctx.run.lifecycle(
                task,
                "mux-unavailable",
                serde_json::json!({"error": e.to_string()}),
            ),
        }

        if last_screen.elapsed() >= SCREEN_EVERY {
            last_screen = Instant::now();
            if let Some(reading) = read_screen(ctx, &tmux, &pane, &profile) {
                let source = format!("screen:{}", reading.rule);
                match reading.state {
                    wit::SeatState::Blocked => {
                        let kind = reading.prompt_kind.unwrap_or(wit::PromptKind::Other);
                        if st.blocked != Some(kind) {
                            ctx.notify(&format!("task {task} is blocked on a {kind} prompt"));
                        }
                        st.blocked = Some(kind);
                        ctx.state(task, "blocked", Some(kind.as_str()), &source);
                    }
                    wit::SeatState::Working => {
                        st.blocked = None;
                        ctx.state(task, "working", None, &source);
                    }
                    _ => {}
                }
            }
        }

        let key = log_key(&log);
        if key != activity {
            activity = key;
            last_activity = Instant::now();
        } else if let Some(grace) = spec.stall_grace
            && last_activity.elapsed() >= grace
            && st.blocked.is_none()
        {
            if stall_nudges_left > 0 {
                stall_nudges_left -= 1;
                ctx.run.lifecycle(
                    task,
                    "nudge",
                    serde_json::json!({"why": "stall", "left": stall_nudges_left}),
                );
                let _ = ws(&tmux).type_text(&pane, NUDGE_STALL, false);
                last_activity = Instant::now();
            } else {
                let dead = matches!(ws(&tmux).pane_alive(&pane), Ok(false));
                if dead {
                    let found = result_file.as_ref().and_then(ResultFile::read);
                    let status = if found.is_some() {
                        Status::Completed
                    } else {
                        Status::Crashed
                    };
                    return conclude(
                        ctx,
                        spec,
                        Some(&tmux),
                        Some(&pane),
                        make(
                            status,
                            "the CLI's pane is gone (it exited)".to_string(),
                            &st,
                            found,
                            None,
                            &budget,
                        ),
                    );
                }
                // A live pane's artifact is not trusted: the work may be mid-write.
                return conclude(
                    ctx,
                    spec,
                    Some(&tmux),
                    Some(&pane),
                    make(
                        Status::Stalled,
                        format!("no activity for {}", humanize(grace)),
                        &st,
                        None,
                        None,
                        &budget,
                    ),
                );
            }
        }
    }
}

/// Creates the window running the CLI, tees its output, labels it.
fn launch(ctx: &Context, spec: &SessionSpec, tmux: &Tmux) -> Result<Pane, String> {
    let task = spec.task.as_str();
    let session = session_name(ctx.run.id());
    ws(tmux)
        .ensure_session(&session, &spec.cwd)
        .map_err(|e| e.to_string())?;
    let request = wit::LaunchRequest {
        prompt: String::new(),
        model: spec.model.clone(),
        extra_args: spec.extra_args.clone(),
        conversation: spec.conversation.to_wit(),
    };
    let command = match ctx
        .adapter
        .interactive_command(&ctx.profile.to_wit(), &request)
    {
        Ok(Ok(c)) => c,
        Ok(Err(wit::AdapterError::InvalidInput(m) | wit::AdapterError::Unsupported(m))) => {
            return Err(format!("the adapter cannot build the launch command: {m}"));
        }
        Err(e) => return Err(format!("the adapter failed: {e}")),
    };
    super::guard::check_command(&ctx.profile, &command)?;
    // The pane gets drover's environment (a tmux server keeps the one it
    // started with), then the profile's, the command's and the session's.
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| !k.starts_with("TMUX"))
        .collect();
    env.extend(ctx.profile.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    env.extend(command.env.iter().cloned());
    env.extend(spec.env.iter().cloned());
    env.push((
        ENV_RUN_DIR.to_string(),
        ctx.run.root().to_string_lossy().into_owned(),
    ));
    env.push((ENV_TASK_ID.to_string(), task.to_string()));
    if let Some(path) = &spec.result_file {
        env.push((
            "DROVER_RESULT_FILE".to_string(),
            path.to_string_lossy().into_owned(),
        ));
    }
    let log = ctx.run.log(task);
    let launch = PaneLaunch {
        cwd: &spec.cwd,
        env: &env,
        argv: &command.argv,
        log: &log,
    };
    let pane = ws(tmux)
        .create_pane(&session, task, &launch)
        .map_err(|e| e.to_string())?;
    let _ = crate::run::write_json_atomic(
        &ctx.run.task_dir(task).join("pane.json"),
        &serde_json::json!({"socket": tmux.socket(), "pane": pane}),
    );
    let _ = ws(tmux).label_pane(&pane, &format!("{} · {task}", ctx.profile.name));
    ctx.run.lifecycle(task, "launched", serde_json::json!({"pane": pane.pane, "window": pane.window, "argv0": command.argv.first()}));
    Ok(pane)
}

fn relevant(watcher: &mut EventWatcher, task: &str, since: u64, wait: Duration) -> Vec<HookRecord> {
    watcher
        .wait(wait)
        .into_iter()
        .filter(|e| e.task == task && e.ts >= since)
        .collect()
}

/// Applies one hook event; returns what it means for the turn.
fn absorb(ctx: &Context, task: &str, event: &HookRecord, st: &mut State) -> Event {
    // A subagent's stop without a transcript (Copilot) says nothing about
    // the seat, not even its session id.
    let transcriptless = event.transcript_path.as_deref().is_none_or(str::is_empty);
    if event.kind == wit::CanonicalEvent::Stop
        && ctx.profile.subagent_stop_without_transcript
        && transcriptless
    {
        ctx.run.lifecycle(
            task,
            "subagent-stop-ignored",
            serde_json::json!({"native": event.native}),
        );
        return Event::Nothing;
    }
    if let Some(id) = event.session_id.as_ref().filter(|s| !s.is_empty()) {
        st.session_id = Some(id.clone());
    }
    if let Some(path) = event.transcript_path.as_ref().filter(|s| !s.is_empty()) {
        st.transcript_path = Some(path.clone());
    }
    let source = format!("hook:{}", event.native);
    match event.kind {
        wit::CanonicalEvent::Stop if event.subagent => Event::Nothing,
        wit::CanonicalEvent::Stop => {
            if event.last_message.is_some() {
                st.reply = event.last_message.clone();
            }
            Event::Stop
        }
        wit::CanonicalEvent::StopFailure => Event::Failure(event.reason.clone()),
        wit::CanonicalEvent::SessionEnd => Event::End(event.reason.clone()),
        wit::CanonicalEvent::PermissionRequest | wit::CanonicalEvent::Notification => {
            if let Some(kind) = event.prompt_kind {
                if st.blocked != Some(kind) {
                    ctx.notify(&format!("task {task} is blocked on a {kind} prompt"));
                }
                st.blocked = Some(kind);
                ctx.state(task, "blocked", Some(kind.as_str()), &source);
            }
            Event::Nothing
        }
        wit::CanonicalEvent::PromptSubmit
        | wit::CanonicalEvent::ToolStart
        | wit::CanonicalEvent::ToolEnd => {
            st.blocked = None;
            ctx.state(task, "working", None, &source);
            Event::Nothing
        }
        _ => Event::Nothing,
    }
}

fn read_screen(
    ctx: &Context,
    tmux: &Tmux,
    pane: &Pane,
    profile: &wit::Profile,
) -> Option<wit::ScreenReading> {
    let screen = ws(tmux).read_pane(pane).ok()?;
    ctx.adapter.read_screen(profile, &screen).ok()
}

fn log_key(path: &Path) -> Option<(u64, std::time::SystemTime)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// Stops a seat (`pane.close`), noting any process that had to be
/// force-killed.
pub fn teardown(ctx: &Context, task: &str, tmux: &Tmux, pane: &Pane, grace: Duration) {
    let forced = ws(tmux).close_pane(pane, grace);
    if !forced.is_empty() {
        ctx.run
            .lifecycle(task, "kill-escalated", serde_json::json!({"pids": forced}));
    }
}

/// The tmux backend through the workspace contract.
fn ws(tmux: &Tmux) -> &dyn Workspace {
    tmux
}

fn conclude(
    ctx: &Context,
    spec: &SessionSpec,
    tmux: Option<&Tmux>,
    pane: Option<&Pane>,
    mut result: SessionResult,
) -> SessionResult {
    let task = spec.task.as_str();
    if let (Some(tmux), Some(pane)) = (tmux, pane)
        && !spec.keep
    {
        teardown(ctx, task, tmux, pane, spec.teardown_grace);
    }
    match result.status {
        Status::Completed => ctx.state(task, "done", None, "verdict"),
        _ if result.blocked.is_some() => {}
        _ => ctx.state(task, "unknown", None, "verdict"),
    }
    if let Some(transcript) = &result.transcript_path {
        result.usage = super::usage::read_with_grace(
            &ctx.adapter,
            &ctx.profile.usage_parser,
            Path::new(transcript),
            ctx.profile.usage_grace,
        );
    }
    if let Some(id) = &result.session_id {
        conversations::record(
            &ctx.project,
            &conversations::Entry {
                ts: now_ns(),
                cli: ctx.profile.name.clone(),
                conversation: id.clone(),
                run: ctx.run.id().to_string(),
                task: task.to_string(),
                usage: result.usage,
            },
        );
    }
    if result.status != Status::Completed {
        result.fault = faults::classify(ctx, task, &faults::tail_lines(&ctx.run.log(task)));
    }
    super::record_verdict(ctx, &result);
    result
}
