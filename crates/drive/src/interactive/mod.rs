//! The interactive driver: a CLI in a pane (tmux or herdr), driven like a
//! person would.
//!
//! It launches the CLI, waits until the screen reads idle, types the prompt
//! as a bracketed paste and proves the CLI took it ([`delivery`]: once
//! retried after clearing the input, else the seat is `blocked`, "message
//! not accepted"), then decides from hook events (the relay's drops),
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
//! Nothing is ever typed into a pane whose screen does not read idle: a
//! dialog the CLI opens (a first-run warning, folder trust, a permission)
//! is journaled as a question with its options ([`dialog`]) and waits for
//! `drover answer` or the project's `[policy]`; a screen nothing reads past
//! the ready timeout is reported with its last lines, and left alone.
//!
//! A multiplexer failure is never read as a crash: liveness unknown skips
//! the tick. Where the multiplexer reads the agent itself (herdr), its
//! `blocked` is a second source beside the hooks and the screen.

pub mod delivery;
pub mod dialog;
mod driver;
mod wait;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::records::{PaneRecord, Record};
use super::result_file::ResultFile;
use super::watchdog::{Activity, Watchdog};
use super::{Context, TurnReport, TurnSpec, Verdict, conversations, faults};
use drover_gate::Provenance;
use drover_run::{EventWatcher, now_ns};
use drover_trust::policy::Policy;
use drover_types::wit;
use drover_types::wit::SeatState;
use drover_workspace::{self as workspace, Pane, PaneBackend, PaneLaunch, WorkspaceKind};

const TICK: Duration = Duration::from_millis(250);
const SCREEN_EVERY: Duration = Duration::from_millis(750);
/// How long a just-launched CLI's screen must keep reading idle before
/// anything is typed (a dialog may still replace its first prompt).
const LAUNCH_HOLD: Duration = Duration::from_secs(2);
/// How long an answered dialog may take to leave the screen.
const SETTLE_LIMIT: Duration = Duration::from_secs(10);
/// How often the policy answers one dialog on one seat before leaving it to
/// a person (an answer that did not take is not pressed forever).
const POLICY_TRIES: u32 = 2;

/// What a pane shows when drover is about to type into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// The screen reads idle: a message may be typed.
    Idle,
    /// The CLI waits on a question (a dialog, a prompt), journaled for
    /// `drover answer`.
    Asking,
    /// The screen read as nothing known for the ready timeout; its last
    /// lines.
    Unread(String),
}

struct State {
    session_id: Option<String>,
    transcript_path: Option<String>,
    blocked: Option<wit::PromptKind>,
    stop_seen: bool,
    reply: Option<String>,
    /// A hookless seat: the screen as it was before the prompt was typed.
    typed_over: Option<Vec<String>>,
}

enum Event {
    /// The turn ended: a Stop hook, or (hookless) a settled idle screen.
    Stop(EndSignal),
    Failure(Option<String>),
    End(Option<String>),
    Nothing,
}

/// A CLI running in a pane.
pub struct Seat {
    pub workspace: Box<dyn PaneBackend>,
    pub pane: Pane,
    /// Where the pane came from: this drover opened it, or a sealed seat
    /// record names it. Closing it is cleared by this.
    pub from: Provenance,
}

impl Seat {
    pub fn ws(&self) -> &dyn PaneBackend {
        self.workspace.as_ref()
    }
}

/// What told drover a turn ended.
#[derive(Clone, Copy)]
enum EndSignal {
    StopHook,
    /// A hookless seat's screen read idle and stopped changing.
    SettledScreen,
}

impl EndSignal {
    fn source(self) -> &'static str {
        match self {
            EndSignal::StopHook => "hook:Stop",
            EndSignal::SettledScreen => "screen:settled",
        }
    }

    fn why(self) -> &'static str {
        match self {
            EndSignal::StopHook => "Stop hook",
            EndSignal::SettledScreen => "the idle screen settled",
        }
    }
}

/// The waiting loop's own counters and clocks.
struct Watch {
    nudges_left: u32,
    stall_nudges_left: u32,
    last_screen: Instant,
    /// A hookless seat: the screen has moved since the prompt was typed
    /// (or read working), and the idle screen last seen with when it was
    /// first seen unchanged.
    moved: bool,
    still: Option<(Vec<String>, Instant)>,
    activity: Activity<Option<(u64, std::time::SystemTime)>>,
}

/// One session's (or one turn's) bookkeeping on a seat.
struct Driver<'a> {
    ctx: &'a Context,
    spec: &'a TurnSpec,
    started: u64,
    clock: Instant,
    watchdog: Watchdog,
    log: PathBuf,
    st: State,
    result_file: Option<ResultFile>,
    watcher: EventWatcher,
    /// Events older than this are a previous turn's.
    since: u64,
    profile: wit::Profile,
    workspace: WorkspaceKind,
    /// A person's seat: never typed into, its dialogs never answered.
    human: bool,
    policy: Policy,
    /// Policy answers given per dialog (by its text and options).
    policy_tries: std::collections::HashMap<String, u32>,
    /// Hook events read while proving a message's delivery, for the
    /// turn's wait to apply.
    carried: Vec<drover_run::HookRecord>,
}

/// One session: launch, wait until ready, type the prompt, decide, tear down.
pub fn run(ctx: &Context, spec: &TurnSpec, kind: WorkspaceKind) -> TurnReport {
    prepare(ctx, spec);
    // The event floor is taken before the CLI starts: its first hooks
    // (SessionStart) can land before the pane is even labelled.
    let mut driver = Driver::new(ctx, spec, now_ns(), false, kind);
    // A run's own process holds the seat: a dialog before the first turn
    // waits for its answer (`drover answer --run`) within the deadline.
    let seat = match start(ctx, spec, &mut driver, true) {
        Ok((seat, Readiness::Idle)) => seat,
        Ok((seat, not_ready)) => {
            let result = driver.not_typed(&not_ready);
            return conclude(ctx, spec, Some(&seat), result);
        }
        Err(failure) => {
            let (seat, result) = *failure;
            return conclude(ctx, spec, seat.as_ref(), result);
        }
    };
    let result = driver.turn(&seat);
    conclude(ctx, spec, Some(&seat), result)
}

/// `drover up`: launch a seat and wait until its screen reads idle, asks a
/// question (journaled, for `drover answer`), or stays unread past the
/// ready timeout; in each case the pane keeps running and the readiness
/// says which. A failure (the CLI exited, the deadline) leaves nothing
/// behind.
pub fn up(
    ctx: &Context,
    spec: &TurnSpec,
    human: bool,
    kind: WorkspaceKind,
) -> Result<(Seat, Readiness), Box<TurnReport>> {
    prepare(ctx, spec);
    let mut driver = Driver::new(ctx, spec, now_ns(), human, kind);
    match start(ctx, spec, &mut driver, false) {
        Ok(up) => Ok(up),
        Err(failure) => {
            let (seat, result) = *failure;
            let mut spec = spec.clone();
            spec.keep = false;
            Err(Box::new(conclude(ctx, &spec, seat.as_ref(), result)))
        }
    }
}

/// `drover send`: one turn on a running seat, typed only once its screen
/// reads idle. A human seat is never typed into. The seat keeps running
/// afterwards unless `spec.keep` is false.
pub fn send(ctx: &Context, spec: &TurnSpec, seat: &Seat, human: bool) -> TurnReport {
    crate::shared::keep_prompt(ctx, spec);
    seat.ws().watch_output(&seat.pane, &ctx.run.log(&spec.task));
    let mut driver = Driver::new(ctx, spec, now_ns(), human, seat.ws().kind());
    let result = driver.turn(seat);
    conclude(ctx, spec, Some(seat), result)
}

fn prepare(ctx: &Context, spec: &TurnSpec) {
    crate::shared::keep_prompt(ctx, spec);
    // tmux appends to the log by path; it is created here, confined, so a
    // link planted in its place is refused before tmux writes a byte.
    let log = ctx.run.log(&spec.task);
    let _ = drover_state::remove_file(&log);
    let _ = drover_state::create_file(&log);
}

/// A launch that failed: the seat, if its pane was made, and the result.
type StartFailure = Box<(Option<Seat>, TurnReport)>;

/// Launches the CLI and waits for its screen to read idle; with
/// `until_answered`, a question it asks first is waited out too.
fn start(
    ctx: &Context,
    spec: &TurnSpec,
    driver: &mut Driver<'_>,
    until_answered: bool,
) -> Result<(Seat, Readiness), StartFailure> {
    let kind = driver.workspace;
    let ws = match workspace::open_panes(kind, &ctx.project) {
        Ok(w) => w,
        Err(e) => {
            let result = driver.result(
                Verdict::Crashed,
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
            if let Ok(session) = workspace::clear_session(
                &drover_workspace::tmux::session_name(ctx.run.id()),
                Provenance::Created,
            ) {
                ws.close_session(&session);
            }
            let result = driver.result(Verdict::Crashed, reason, None, None);
            return Err(Box::new((None, result)));
        }
    };
    ctx.state(&spec.task, SeatState::Unknown, None, "launch");
    let seat = Seat {
        workspace: ws,
        pane,
        from: Provenance::Created,
    };
    match driver.wait_ready(&seat, until_answered, LAUNCH_HOLD) {
        Ok(readiness) => Ok((seat, readiness)),
        Err(result) => Err(Box::new((Some(seat), *result))),
    }
}

/// Creates the window running the CLI, tees its output, labels it.
fn launch(ctx: &Context, spec: &TurnSpec, ws: &dyn PaneBackend) -> Result<Pane, String> {
    let task = spec.task.as_str();
    let session = drover_workspace::tmux::session_name(ctx.run.id());
    ws.ensure_session(&session, &spec.cwd)
        .map_err(|e| e.to_string())?;
    let request = wit::LaunchRequest {
        prompt: String::new(),
        model: spec.model.clone(),
        extra_args: spec.extra_args.clone(),
        conversation: spec
            .conversation
            .to_wit()
            .map_err(|why| format!("not resuming: {why}"))?,
    };
    let command = match ctx
        .adapter()
        .interactive_command(&ctx.profile().to_wit(), &request)
    {
        Ok(Ok(c)) => c,
        Ok(Err(wit::AdapterError::InvalidInput(m) | wit::AdapterError::Unsupported(m))) => {
            return Err(format!("the adapter cannot build the launch command: {m}"));
        }
        Err(e) => return Err(format!("the adapter failed: {e}")),
    };
    // The pane gets drover's environment (a tmux server keeps the one it
    // started with), then the profile's, the command's and the session's.
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| !k.starts_with("TMUX"))
        .collect();
    env.extend(super::seat_env(ctx, spec, &command, false));
    let cleared = super::spawn::clear_command(ctx, &command, env)?;
    let log = ctx.run.log(task);
    let launch = PaneLaunch {
        cwd: &spec.cwd,
        command: &cleared,
        log: &log,
    };
    let pane = ws
        .create_pane(&session, task, &launch)
        .map_err(|e| e.to_string())?;
    // Sealed: `drover status` closes the pane a sealed record names, and
    // only that.
    let record = PaneRecord {
        workspace: ws.kind(),
        pane: pane.clone(),
    };
    if let Err(e) = record.write(&ctx.run, task) {
        tracing::warn!("cannot record the pane: {e}");
    }
    let _ = ws.label_pane(&pane, &format!("{} · {task}", ctx.profile().name));
    ctx.run.lifecycle(task, "launched", serde_json::json!({"pane": pane.id(), "window": pane.window(), "argv0": command.argv.first()}));
    Ok(pane)
}

/// Stops a seat (`pane.close`) and the session it was the last of, noting
/// any process that had to be force-killed. `from` says where the pane came
/// from; the gate refuses a pane only a file names.
pub fn teardown(
    ctx: &Context,
    task: &str,
    ws: &dyn PaneBackend,
    pane: &Pane,
    from: Provenance,
    grace: Duration,
) {
    let cleared = workspace::clear_pane(pane, from)
        .and_then(|pane| Ok((workspace::clear_session(pane.session(), from)?, pane)));
    let (session, pane) = match cleared {
        Ok(both) => both,
        Err(refused) => {
            ctx.run.lifecycle(
                task,
                "teardown-refused",
                serde_json::json!({"why": refused.to_string()}),
            );
            return;
        }
    };
    let forced = ws.close_pane(&pane, grace);
    if !forced.is_empty() {
        ctx.run
            .lifecycle(task, "kill-escalated", serde_json::json!({"pids": forced}));
    }
    ws.close_session(&session);
}

fn conclude(
    ctx: &Context,
    spec: &TurnSpec,
    seat: Option<&Seat>,
    mut result: TurnReport,
) -> TurnReport {
    let task = spec.task.as_str();
    if let Some(seat) = seat {
        seat.ws().flush_output(&seat.pane);
    }
    if let Some(seat) = seat
        && !spec.keep
    {
        teardown(
            ctx,
            task,
            seat.ws(),
            &seat.pane,
            seat.from,
            spec.teardown_grace,
        );
    }
    match result.status {
        Verdict::Completed => ctx.state(task, SeatState::Done, None, "verdict"),
        _ if result.blocked.is_some() => {}
        _ => ctx.state(task, SeatState::Unknown, None, "verdict"),
    }
    if let Some(transcript) = result
        .transcript_path
        .as_deref()
        .and_then(|path| super::usage::confine(ctx, &spec.cwd, &spec.env, Path::new(path)))
    {
        let spent = super::usage::read_with_grace(
            ctx.adapter(),
            &ctx.profile().usage_parser,
            std::slice::from_ref(&transcript),
            ctx.profile().usage_grace,
        );
        result.usage = spent.map(|s| s.tokens);
        result.cost_usd = spent.and_then(|s| s.cost_usd);
    }
    if let Some(id) = &result.session_id {
        // The transcript holds the whole conversation; the ledger keeps
        // what each turn added, so budgets sum turns.
        let whole = super::usage::Spent {
            tokens: result.usage.unwrap_or_default(),
            cost_usd: result.cost_usd,
        };
        let turn = match conversations::prior_usage(&ctx.project, &ctx.profile().name, id) {
            Some(earlier) => whole.minus(&earlier),
            None => whole,
        };
        let usage = result.usage.map(|_| turn.tokens);
        conversations::record_turn(ctx, task, id, usage, turn.cost_usd);
    }
    if result.status != Verdict::Completed {
        result.fault = faults::classify(ctx, task, &faults::tail_lines(&ctx.run.log(task)));
    }
    super::record_verdict(ctx, &result);
    result
}
