//! The interactive driver: a CLI in a pane (tmux or herdr), driven like a
//! person would.
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
//! A multiplexer failure is never read as a crash: liveness unknown skips
//! the tick. Where the multiplexer reads the agent itself (herdr), its
//! `blocked` is a second source beside the hooks and the screen.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::budget::{Budget, Verdict};
use super::clock::Deadline;
use super::result_file::ResultFile;
use super::shared::{NUDGE_BUDGET, NUDGE_RESULT, NUDGE_STALL, heartbeat, humanize};
use super::{Context, SessionResult, SessionSpec, Status, Timings, conversations, faults};
use crate::run::{EventWatcher, HookRecord, now_ns};
use crate::sandbox::wit;
use crate::workspace::{self, Kind, Pane, PaneLaunch, Workspace};

const TICK: Duration = Duration::from_millis(250);
const SCREEN_EVERY: Duration = Duration::from_millis(750);
/// How long to wait for the screen to read ready before typing anyway.
const READY_TIMEOUT: Duration = Duration::from_secs(45);

/// The session (tmux session, herdr workspace) a run's seats live in.
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

/// A CLI running in a pane.
pub struct Seat {
    pub workspace: Box<dyn Workspace>,
    pub pane: Pane,
}

impl Seat {
    pub fn ws(&self) -> &dyn Workspace {
        self.workspace.as_ref()
    }
}

/// The waiting loop's own counters and clocks.
struct Watch {
    nudges_left: u32,
    stall_nudges_left: u32,
    last_heartbeat: Option<Instant>,
    last_screen: Instant,
    activity: Option<(u64, std::time::SystemTime)>,
    last_activity: Instant,
}

/// One session's (or one turn's) bookkeeping on a seat.
struct Driver<'a> {
    ctx: &'a Context,
    spec: &'a SessionSpec,
    started: u64,
    clock: Instant,
    deadline: Deadline,
    log: PathBuf,
    st: State,
    budget: Budget,
    result_file: Option<ResultFile>,
    watcher: EventWatcher,
    /// Events older than this are a previous turn's.
    since: u64,
    profile: wit::Profile,
    workspace: &'static str,
}

impl<'a> Driver<'a> {
    fn new(ctx: &'a Context, spec: &'a SessionSpec, since: u64) -> Driver<'a> {
        Driver {
            ctx,
            spec,
            started: now_ns(),
            clock: Instant::now(),
            deadline: Deadline::after(spec.timeout),
            log: ctx.run.log(&spec.task),
            st: State {
                session_id: None,
                transcript_path: None,
                blocked: None,
                stop_seen: false,
                reply: None,
            },
            budget: Budget::new(),
            result_file: spec
                .result_file
                .as_ref()
                .map(|p| ResultFile::before_launch(p.clone())),
            watcher: EventWatcher::new(ctx.run.events_dir()),
            since,
            profile: ctx.profile.to_wit(),
            workspace: pane_kind(ctx).as_str(),
        }
    }

    fn task(&self) -> &'a str {
        self.spec.task.as_str()
    }

    fn result(
        &self,
        status: Status,
        reason: String,
        result: Option<serde_json::Value>,
        timeout_clock: Option<&str>,
    ) -> SessionResult {
        SessionResult {
            status,
            run_id: self.ctx.run.id().to_string(),
            task: self.task().to_string(),
            cli: self.ctx.profile.name.clone(),
            workspace: self.workspace.to_string(),
            reason,
            session_id: self.st.session_id.clone(),
            transcript_path: self.st.transcript_path.clone(),
            reply: self.st.reply.clone(),
            usage: None,
            cost_usd: None,
            fault: None,
            blocked: if status == Status::Completed {
                None
            } else {
                self.st.blocked
            },
            stop_seen: self.st.stop_seen,
            result,
            exit_code: None,
            budget_weighted: self.budget.weighted,
            timings: Timings {
                started_ns: self.started,
                ended_ns: now_ns(),
                duration_ms: self.clock.elapsed().as_millis() as u64,
                timeout_clock: timeout_clock.map(str::to_string),
            },
            logs: vec![self.log.clone()],
        }
    }

    /// The pane is gone: completed if the result file is there, else crashed.
    fn gone(&self, reason: &str) -> SessionResult {
        let found = self.result_file.as_ref().and_then(ResultFile::read);
        let status = if found.is_some() {
            Status::Completed
        } else {
            Status::Crashed
        };
        self.result(status, reason.to_string(), found, None)
    }

    fn interrupted(&self) -> Option<SessionResult> {
        self.spec.cancelled().then(|| {
            self.result(
                Status::Crashed,
                "interrupted: drover was asked to stop".to_string(),
                None,
                None,
            )
        })
    }

    fn events(&mut self, wait: Duration) -> Vec<HookRecord> {
        let task = self.task();
        let since = self.since;
        self.watcher
            .wait(wait)
            .into_iter()
            .filter(|e| e.task == task && e.ts >= since)
            .collect()
    }

    fn read_screen(&self, seat: &Seat) -> Option<wit::ScreenReading> {
        let screen = seat.ws().read_pane(&seat.pane).ok()?;
        self.ctx.adapter.read_screen(&self.profile, &screen).ok()
    }

    fn blocked(
        &mut self,
        kind: wit::PromptKind,
        source: &str,
        before_first_turn: bool,
        evidence: Option<&str>,
    ) {
        let task = self.task();
        if self.st.blocked != Some(kind) {
            let when = if before_first_turn {
                " before its first turn"
            } else {
                ""
            };
            self.ctx
                .notify(&format!("task {task} is blocked on a {kind} prompt{when}"));
        }
        self.st.blocked = Some(kind);
        self.ctx.blocked(task, kind.as_str(), source, evidence);
    }

    /// Waits until the screen reads ready (or the ready timeout passes).
    fn wait_ready(&mut self, seat: &Seat) -> Result<(), Box<SessionResult>> {
        let task = self.task();
        let ready_since = Instant::now();
        loop {
            if let Some(r) = self.interrupted() {
                return Err(Box::new(r));
            }
            if let Some(which) = self.deadline.expired() {
                return Err(Box::new(self.result(
                    Status::Timeout,
                    format!("the CLI never became ready before the deadline ({which} clock)"),
                    None,
                    Some(which),
                )));
            }
            if let Ok(false) = seat.ws().pane_alive(&seat.pane) {
                return Err(Box::new(self.gone("the CLI exited before it was ready")));
            }
            for event in self.events(TICK) {
                self.absorb(&event);
            }
            let reading = self.read_screen(seat);
            let source = format!(
                "screen:{}",
                reading.as_ref().map_or("", |r| r.rule.as_str())
            );
            match reading.as_ref().map(|r| r.state) {
                Some(wit::SeatState::Idle) => {
                    self.ctx.state(task, "idle", None, &source);
                    return Ok(());
                }
                Some(wit::SeatState::Blocked) => {
                    let kind = reading
                        .as_ref()
                        .and_then(|r| r.prompt_kind)
                        .unwrap_or(wit::PromptKind::Other);
                    let evidence = reading.as_ref().map(|r| r.evidence.clone());
                    self.blocked(kind, &source, true, evidence.as_deref());
                }
                _ if ready_since.elapsed() >= READY_TIMEOUT && self.st.blocked.is_none() => {
                    self.ctx.run.lifecycle(
                        task,
                        "typed-without-ready-screen",
                        serde_json::json!({"waited_s": READY_TIMEOUT.as_secs()}),
                    );
                    return Ok(());
                }
                _ => {}
            }
        }
    }

    /// Renders and types the prompt, then waits for the turn's verdict.
    fn turn(&mut self, seat: &Seat, human: bool) -> SessionResult {
        let task = self.task();
        let rendered = match self
            .ctx
            .adapter
            .render_prompt(&self.profile, &self.spec.prompt)
        {
            Ok(Ok(text)) => text,
            Ok(Err(wit::AdapterError::InvalidInput(m) | wit::AdapterError::Unsupported(m))) => {
                return self.result(
                    Status::Crashed,
                    format!("the adapter cannot render the prompt: {m}"),
                    None,
                    None,
                );
            }
            Err(e) => {
                return self.result(
                    Status::Crashed,
                    format!("the adapter failed rendering the prompt: {e}"),
                    None,
                    None,
                );
            }
        };
        if let Err(e) = seat.ws().type_text(&seat.pane, &rendered, human) {
            return self.result(
                Status::Crashed,
                format!("cannot type the prompt: {e}"),
                None,
                None,
            );
        }
        self.st.blocked = None;
        self.ctx.state(task, "working", None, "prompt-typed");
        self.wait_turn(seat)
    }

    /// The verdict machine, from a typed prompt to the turn's end.
    fn wait_turn(&mut self, seat: &Seat) -> SessionResult {
        let mut watch = Watch {
            nudges_left: self.spec.stop_nudges,
            stall_nudges_left: self.spec.stall_nudges,
            last_heartbeat: None,
            last_screen: Instant::now(),
            activity: log_key(&self.log),
            last_activity: Instant::now(),
        };
        loop {
            if let Some(r) = self.clock_and_budget(seat, &mut watch) {
                return r;
            }
            let mut outcome = Event::Nothing;
            for event in self.events(TICK.min(self.deadline.remaining())) {
                let kind = self.absorb(&event);
                if !matches!(kind, Event::Nothing) {
                    outcome = kind;
                    break;
                }
            }
            if let Some(r) = self.on_event(seat, outcome, &mut watch) {
                return r;
            }
            match seat.ws().pane_alive(&seat.pane) {
                Ok(false) => return self.gone("the CLI's pane is gone (it exited)"),
                Ok(true) => {}
                // Could not ask: not a crash. The deadline bounds a lasting failure.
                Err(e) => self.ctx.run.lifecycle(
                    self.task(),
                    "mux-unavailable",
                    serde_json::json!({"error": e.to_string()}),
                ),
            }
            if watch.last_screen.elapsed() >= SCREEN_EVERY {
                watch.last_screen = Instant::now();
                self.look_at_screen(seat);
            }
            if let Some(r) = self.on_silence(seat, &mut watch) {
                return r;
            }
        }
    }

    /// The deadline, the cancel, the heartbeat and the token budget.
    fn clock_and_budget(&mut self, seat: &Seat, watch: &mut Watch) -> Option<SessionResult> {
        let (ctx, spec, task) = (self.ctx, self.spec, self.task());
        if let Some(r) = self.interrupted() {
            return Some(r);
        }
        if let Some(which) = self.deadline.expired() {
            ctx.run.lifecycle(task, "timeout-fired", serde_json::json!({"expired_clock": which, "timeout_s": spec.timeout.as_secs_f64()}));
            return Some(self.result(
                Status::Timeout,
                format!(
                    "the session deadline of {} passed ({which} clock)",
                    humanize(spec.timeout)
                ),
                None,
                Some(which),
            ));
        }
        if watch
            .last_heartbeat
            .is_none_or(|t| t.elapsed() >= spec.heartbeat)
        {
            watch.last_heartbeat = Some(Instant::now());
            heartbeat(ctx, spec, &self.deadline);
            match self
                .budget
                .sample(ctx, spec, self.st.transcript_path.as_deref())
            {
                Verdict::Nudge => {
                    let _ = seat.ws().type_text(&seat.pane, NUDGE_BUDGET, false);
                    ctx.run
                        .lifecycle(task, "nudge", serde_json::json!({"why": "budget"}));
                }
                Verdict::OverBudget => {
                    return Some(self.result(
                        Status::OverBudget,
                        "the token budget was exceeded".to_string(),
                        None,
                        None,
                    ));
                }
                Verdict::Fine => {}
            }
        }
        if self.budget.expired() {
            let dead = matches!(seat.ws().pane_alive(&seat.pane), Ok(false));
            let status = if dead {
                Status::Crashed
            } else {
                Status::OverBudget
            };
            return Some(self.result(
                status,
                "the token budget was exceeded and its grace ran out".to_string(),
                None,
                None,
            ));
        }
        None
    }

    /// What a turn-ending hook decides: the turn's result, or a nudge and
    /// more waiting.
    fn on_event(
        &mut self,
        seat: &Seat,
        outcome: Event,
        watch: &mut Watch,
    ) -> Option<SessionResult> {
        let (ctx, spec, task) = (self.ctx, self.spec, self.task());
        match outcome {
            Event::Stop => {
                self.st.stop_seen = true;
                self.st.blocked = None;
                ctx.state(task, "done", None, "hook:Stop");
                let Some(result_file) = &self.result_file else {
                    return Some(self.result(
                        Status::Completed,
                        "the turn finished (Stop hook)".to_string(),
                        None,
                        None,
                    ));
                };
                let alive = || !matches!(seat.ws().pane_alive(&seat.pane), Ok(false));
                if let Some(found) = result_file.wait(spec.result_wait, alive) {
                    return Some(self.result(
                        Status::Completed,
                        "the turn finished and wrote the result file".to_string(),
                        Some(found),
                        None,
                    ));
                }
                ctx.run.lifecycle(
                    task,
                    "resultless-stop",
                    serde_json::json!({"path": result_file.path(), "nudges_left": watch.nudges_left}),
                );
                if watch.nudges_left == 0 {
                    let reason = format!(
                        "the turn finished without writing {}",
                        result_file.path().display()
                    );
                    return Some(self.result(Status::Stalled, reason, None, None));
                }
                watch.nudges_left -= 1;
                ctx.run.lifecycle(
                    task,
                    "nudge",
                    serde_json::json!({"why": "result-file", "left": watch.nudges_left}),
                );
                let text = format!("{NUDGE_RESULT} ({})", result_file.path().display());
                if let Err(e) = seat.ws().type_text(&seat.pane, &text, false) {
                    ctx.run.lifecycle(
                        task,
                        "nudge-failed",
                        serde_json::json!({"error": e.to_string()}),
                    );
                }
                ctx.state(task, "working", None, "nudge");
                None
            }
            Event::Failure(reason) => {
                ctx.state(task, "unknown", None, "hook:StopFailure");
                let why = reason.map_or_else(
                    || "the turn failed (StopFailure)".to_string(),
                    |r| format!("the turn failed: {r}"),
                );
                Some(self.result(Status::Stalled, why, None, None))
            }
            Event::End(reason) => {
                let why = format!(
                    "the CLI ended its session{}",
                    reason.map(|r| format!(" ({r})")).unwrap_or_default()
                );
                Some(self.gone(&why))
            }
            Event::Nothing => None,
        }
    }

    /// Reads the screen (and the multiplexer's own reading) for a blocked
    /// or working seat.
    fn look_at_screen(&mut self, seat: &Seat) {
        let (ctx, task) = (self.ctx, self.task());
        let native = seat.ws().agent_state(&seat.pane).ok().flatten();
        let native_blocked = native.as_deref() == Some("blocked");
        if let Some(reading) = self.read_screen(seat) {
            let source = format!("screen:{}", reading.rule);
            match reading.state {
                wit::SeatState::Blocked => self.blocked(
                    reading.prompt_kind.unwrap_or(wit::PromptKind::Other),
                    &source,
                    false,
                    Some(&reading.evidence),
                ),
                wit::SeatState::Working if !native_blocked => {
                    self.st.blocked = None;
                    ctx.state(task, "working", None, &source);
                }
                _ => {}
            }
        }
        if native_blocked && self.st.blocked.is_none() {
            let source = format!("{}:blocked", self.workspace);
            let evidence = format!("{} reads the agent as blocked", self.workspace);
            self.blocked(wit::PromptKind::Other, &source, false, Some(&evidence));
        }
    }

    /// Silence past the stall window: a nudge while any are left, then
    /// stalled.
    fn on_silence(&mut self, seat: &Seat, watch: &mut Watch) -> Option<SessionResult> {
        let (ctx, task) = (self.ctx, self.task());
        let key = log_key(&self.log);
        if key != watch.activity {
            watch.activity = key;
            watch.last_activity = Instant::now();
        } else if let Some(grace) = self.spec.stall_grace
            && watch.last_activity.elapsed() >= grace
            && self.st.blocked.is_none()
        {
            if watch.stall_nudges_left > 0 {
                watch.stall_nudges_left -= 1;
                ctx.run.lifecycle(
                    task,
                    "nudge",
                    serde_json::json!({"why": "stall", "left": watch.stall_nudges_left}),
                );
                let _ = seat.ws().type_text(&seat.pane, NUDGE_STALL, false);
                watch.last_activity = Instant::now();
            } else {
                if matches!(seat.ws().pane_alive(&seat.pane), Ok(false)) {
                    return Some(self.gone("the CLI's pane is gone (it exited)"));
                }
                // A live pane's artifact is not trusted: the work may be mid-write.
                return Some(self.result(
                    Status::Stalled,
                    format!("no activity for {}", humanize(grace)),
                    None,
                    None,
                ));
            }
        }
        None
    }

    /// Applies one hook event; returns what it means for the turn.
    fn absorb(&mut self, event: &HookRecord) -> Event {
        let (ctx, task) = (self.ctx, self.task());
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
            self.st.session_id = Some(id.clone());
        }
        if let Some(path) = event.transcript_path.as_ref().filter(|s| !s.is_empty()) {
            self.st.transcript_path = Some(path.clone());
        }
        let source = format!("hook:{}", event.native);
        match event.kind {
            wit::CanonicalEvent::Stop if event.subagent => Event::Nothing,
            wit::CanonicalEvent::Stop => {
                if event.last_message.is_some() {
                    self.st.reply = event.last_message.clone();
                }
                Event::Stop
            }
            wit::CanonicalEvent::StopFailure => Event::Failure(event.reason.clone()),
            wit::CanonicalEvent::SessionEnd => Event::End(event.reason.clone()),
            wit::CanonicalEvent::PermissionRequest | wit::CanonicalEvent::Notification => {
                if let Some(kind) = event.prompt_kind {
                    let evidence = super::hook_evidence(event);
                    self.blocked(kind, &source, false, evidence.as_deref());
                }
                Event::Nothing
            }
            wit::CanonicalEvent::PromptSubmit
            | wit::CanonicalEvent::ToolStart
            | wit::CanonicalEvent::ToolEnd => {
                self.st.blocked = None;
                ctx.state(task, "working", None, &source);
                Event::Nothing
            }
            _ => Event::Nothing,
        }
    }
}

/// One session: launch, wait until ready, type the prompt, decide, tear down.
pub fn run(ctx: &Context, spec: &SessionSpec) -> SessionResult {
    prepare(ctx, spec);
    // The event floor is taken before the CLI starts: its first hooks
    // (SessionStart) can land before the pane is even labelled.
    let mut driver = Driver::new(ctx, spec, now_ns());
    let seat = match start(ctx, spec, &mut driver) {
        Ok(seat) => seat,
        Err(failure) => {
            let (seat, result) = *failure;
            return conclude(ctx, spec, seat.as_ref(), result);
        }
    };
    let result = driver.turn(&seat, false);
    conclude(ctx, spec, Some(&seat), result)
}

/// `drover up`: launch a seat and wait until it is ready; the pane keeps
/// running. A human seat waiting at a prompt is up too (its person answers
/// it); any other failure leaves nothing behind.
pub fn up(ctx: &Context, spec: &SessionSpec, human: bool) -> Result<Seat, Box<SessionResult>> {
    prepare(ctx, spec);
    let mut driver = Driver::new(ctx, spec, now_ns());
    match start(ctx, spec, &mut driver) {
        Ok(seat) => Ok(seat),
        Err(failure) => {
            let (seat, result) = *failure;
            if human && result.blocked.is_some() && seat.is_some() {
                // A person answers the prompt: the seat is up.
                return seat.ok_or_else(|| Box::new(result));
            }
            let mut spec = spec.clone();
            spec.keep = false;
            Err(Box::new(conclude(ctx, &spec, seat.as_ref(), result)))
        }
    }
}

/// `drover send`: one turn on a running seat. A human seat is never typed
/// into. The seat keeps running afterwards unless `spec.keep` is false.
pub fn send(ctx: &Context, spec: &SessionSpec, seat: &Seat, human: bool) -> SessionResult {
    let _ = crate::state::write_atomic(
        &ctx.run.task_dir(&spec.task).join("prompt.txt"),
        format!("{}\n", spec.prompt).as_bytes(),
    );
    seat.ws().watch_output(&seat.pane, &ctx.run.log(&spec.task));
    let mut driver = Driver::new(ctx, spec, now_ns());
    let result = driver.turn(seat, human);
    conclude(ctx, spec, Some(seat), result)
}

fn prepare(ctx: &Context, spec: &SessionSpec) {
    let task_dir = ctx.run.task_dir(&spec.task);
    let _ = crate::state::write_atomic(
        &task_dir.join("prompt.txt"),
        format!("{}\n", spec.prompt).as_bytes(),
    );
    // tmux appends to the log by path; it is created here, confined, so a
    // link planted in its place is refused before tmux writes a byte.
    let log = ctx.run.log(&spec.task);
    let _ = crate::state::remove_file(&log);
    let _ = crate::state::create_file(&log);
}

/// Launches the CLI and waits for it to be ready.
fn start(
    ctx: &Context,
    spec: &SessionSpec,
    driver: &mut Driver<'_>,
) -> Result<Seat, Box<(Option<Seat>, SessionResult)>> {
    let kind = pane_kind(ctx);
    let ws = match workspace::open(kind, &ctx.project) {
        Ok(w) => w,
        Err(e) => {
            let result = driver.result(
                Status::Crashed,
                format!("cannot use {}: {e}", kind.as_str()),
                None,
                None,
            );
            return Err(Box::new((None, result)));
        }
    };
    let pane = match launch(ctx, spec, ws.as_ref()) {
        Ok(p) => p,
        Err(reason) => {
            // The session made for this pane must not outlive the failure.
            ws.close_session(&session_name(ctx.run.id()));
            let result = driver.result(Status::Crashed, reason, None, None);
            return Err(Box::new((None, result)));
        }
    };
    ctx.state(&spec.task, "unknown", None, "launch");
    let seat = Seat {
        workspace: ws,
        pane,
    };
    match driver.wait_ready(&seat) {
        Ok(()) => Ok(seat),
        Err(result) => Err(Box::new((Some(seat), *result))),
    }
}

/// The pane backend a run uses (its `run.json` says; tmux when unreadable).
pub fn pane_kind(ctx: &Context) -> Kind {
    ctx.run
        .read_info()
        .ok()
        .and_then(|info| Kind::parse(&info.workspace))
        .filter(|k| k.has_panes())
        .unwrap_or(Kind::Tmux)
}

/// Creates the window running the CLI, tees its output, labels it.
fn launch(ctx: &Context, spec: &SessionSpec, ws: &dyn Workspace) -> Result<Pane, String> {
    let task = spec.task.as_str();
    let session = session_name(ctx.run.id());
    ws.ensure_session(&session, &spec.cwd)
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
    env.extend(super::seat_env(ctx, spec, &command, false));
    let log = ctx.run.log(task);
    let launch = PaneLaunch {
        cwd: &spec.cwd,
        env: &env,
        argv: &command.argv,
        log: &log,
    };
    let pane = ws
        .create_pane(&session, task, &launch)
        .map_err(|e| e.to_string())?;
    let _ = crate::run::write_json_atomic(
        &ctx.run.task_dir(task).join("pane.json"),
        &serde_json::json!({"workspace": ws.kind().as_str(), "pane": pane}),
    );
    let _ = ws.label_pane(&pane, &format!("{} · {task}", ctx.profile.name));
    ctx.run.lifecycle(task, "launched", serde_json::json!({"pane": pane.pane, "window": pane.window, "argv0": command.argv.first()}));
    Ok(pane)
}

fn log_key(path: &Path) -> Option<(u64, std::time::SystemTime)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

/// Stops a seat (`pane.close`) and the session it was the last of, noting
/// any process that had to be force-killed.
pub fn teardown(ctx: &Context, task: &str, ws: &dyn Workspace, pane: &Pane, grace: Duration) {
    let forced = ws.close_pane(pane, grace);
    if !forced.is_empty() {
        ctx.run
            .lifecycle(task, "kill-escalated", serde_json::json!({"pids": forced}));
    }
    ws.close_session(&pane.session);
}

fn conclude(
    ctx: &Context,
    spec: &SessionSpec,
    seat: Option<&Seat>,
    mut result: SessionResult,
) -> SessionResult {
    let task = spec.task.as_str();
    if let Some(seat) = seat {
        seat.ws().flush_output(&seat.pane);
    }
    if let Some(seat) = seat
        && !spec.keep
    {
        teardown(ctx, task, seat.ws(), &seat.pane, spec.teardown_grace);
    }
    match result.status {
        Status::Completed => ctx.state(task, "done", None, "verdict"),
        _ if result.blocked.is_some() => {}
        _ => ctx.state(task, "unknown", None, "verdict"),
    }
    if let Some(transcript) = &result.transcript_path {
        let spent = super::usage::read_with_grace(
            &ctx.adapter,
            &ctx.profile.usage_parser,
            Path::new(transcript),
            ctx.profile.usage_grace,
        );
        result.usage = spent.map(|s| s.tokens);
        result.cost_usd = spent.and_then(|s| s.cost_usd);
    }
    if let Some(id) = &result.session_id {
        conversations::record_turn(ctx, task, id, result.usage, result.cost_usd);
    }
    if result.status != Status::Completed {
        result.fault = faults::classify(ctx, task, &faults::tail_lines(&ctx.run.log(task)));
    }
    super::record_verdict(ctx, &result);
    result
}
