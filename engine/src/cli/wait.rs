//! `drover wait TARGET`: blocks until a seat's (or a run task's) state
//! reaches — or leaves — a given state, following its run's journal (no
//! re-reading loop). Exit 0 when the condition held, 1 at the timeout
//! (printing the state it was in), 2 for a usage error (unknown target, a
//! human seat, a run with several tasks and none named).

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::Outcome;
use super::output::{Json, errln, outln, print_json};
use crate::drive::recover::{Settler, driver_alive, is_seat_run};
use crate::run::status::TaskView;
use crate::run::{Follower, RunDir, RunEvent};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Condition {
    Working,
    Idle,
    Done,
    Blocked,
    Unknown,
    /// The task's turn has its verdict (its last journal line is one).
    Settled,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A seat's nickname, a run id (its only task), or RUN/TASK.
    target: String,
    /// Until the state is this (default: settled or blocked).
    #[arg(long, value_enum, conflicts_with = "not")]
    until: Option<Condition>,
    /// Until the state is no longer this.
    #[arg(long, value_enum)]
    not: Option<Condition>,
    /// Give up after this long (exit 1), e.g. 30s, 10m. Default: no limit.
    #[arg(long, value_parser = super::run::parse_duration)]
    timeout: Option<Duration>,
    #[command(flatten)]
    json: Json,
}

/// A usage error: printed, exit 2.
struct Usage(String);

fn holds(view: &TaskView, c: Condition) -> bool {
    match c {
        Condition::Settled => view.settled,
        state => view.state.as_deref() == Some(as_str(state)),
    }
}

fn as_str(c: Condition) -> &'static str {
    match c {
        Condition::Working => "working",
        Condition::Idle => "idle",
        Condition::Done => "done",
        Condition::Blocked => "blocked",
        Condition::Unknown => "unknown",
        Condition::Settled => "settled",
    }
}

/// The run and task a target names.
fn resolve(project: &Path, target: &str) -> Result<(String, String, Option<String>), Usage> {
    if let Some(seat) = crate::seats::load(project, target) {
        let seat = crate::seats::require_sealed(seat).map_err(Usage)?;
        if seat.human {
            return Err(Usage(format!(
                "{target} is a human seat: drover never waits on it"
            )));
        }
        return Ok((seat.run_id, seat.nick.clone(), Some(seat.nick)));
    }
    let (run_id, task) = match target.split_once('/') {
        Some((run, task)) => (run.to_string(), Some(task.to_string())),
        None => (target.to_string(), None),
    };
    let run = RunDir::open(project, &run_id).map_err(|_| {
        Usage(format!(
            "no seat or run named {target} (see `drover seats`, `drover status`)"
        ))
    })?;
    let info = run
        .read_info()
        .map_err(|e| Usage(format!("run {run_id}: {e}")))?;
    let task = match task {
        Some(t) if info.tasks.contains(&t) => t,
        Some(t) => {
            return Err(Usage(format!(
                "run {run_id} has no task {t} (its tasks: {})",
                info.tasks.join(", ")
            )));
        }
        None if info.tasks.len() == 1 => info.tasks[0].clone(),
        None => {
            return Err(Usage(format!(
                "run {run_id} has several tasks: name one as {run_id}/TASK ({})",
                info.tasks.join(", ")
            )));
        }
    };
    let seat = crate::run::follow::seat_of(&run_id, &task);
    Ok((run_id, task, seat))
}

#[derive(Serialize)]
struct Report<'a> {
    target: &'a str,
    run: &'a str,
    task: &'a str,
    seat: Option<&'a str>,
    /// Whether the condition held (false: the timeout passed).
    held: bool,
    until: Option<Condition>,
    not: Option<Condition>,
    #[serde(flatten)]
    view: &'a TaskView,
    /// The journal line that made the condition hold.
    line: Option<serde_json::Value>,
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let (run_id, task, seat) = match resolve(project, &args.target) {
        Ok(found) => found,
        Err(Usage(message)) => {
            errln!("error: {message}");
            return Ok(Outcome::Usage);
        }
    };
    let condition = |view: &TaskView| match (args.until, args.not) {
        (Some(c), _) => holds(view, c),
        // Leaving a state needs a state to leave from.
        (None, Some(c)) => view.state.is_some() && !holds(view, c),
        (None, None) => view.settled || holds(view, Condition::Blocked),
    };
    let mut follower = Follower::new(project, Some(&run_id));
    let mut view = TaskView::default();
    let mut last: Option<RunEvent> = None;
    for event in follower.read_all() {
        if event.transition.task == task {
            view.apply(&event.transition);
            last = Some(event);
        }
    }
    let deadline = args.timeout.map(|t| Instant::now() + t);
    let mut settler = Settler::new(project);
    let mut last_settle = Instant::now();
    let held = loop {
        if condition(&view) {
            break true;
        }
        let remaining = match deadline {
            Some(d) if Instant::now() >= d => break false,
            Some(d) => d.saturating_duration_since(Instant::now()),
            None => super::events::SETTLE_EVERY,
        };
        for event in follower.next(remaining.min(super::events::SETTLE_EVERY)) {
            if event.transition.task == task {
                view.apply(&event.transition);
                let done = condition(&view);
                last = Some(event);
                if done {
                    break;
                }
            }
        }
        if last_settle.elapsed() >= super::events::SETTLE_EVERY {
            last_settle = Instant::now();
            settle_if_orphaned(project, &run_id, &mut settler);
        }
    };
    let report = Report {
        target: &args.target,
        run: &run_id,
        task: &task,
        seat: seat.as_deref(),
        held,
        until: args.until,
        not: args.not,
        view: &view,
        line: last.as_ref().map(RunEvent::to_json),
    };
    if args.json.json {
        print_json(&report)?;
    } else {
        let state = super::seats::state_label(
            view.state.as_deref(),
            view.prompt_kind.as_deref(),
            view.evidence.as_deref(),
        );
        let verdict = match (&view.verdict, view.settled) {
            (Some(v), true) => format!(", verdict {v}"),
            _ => String::new(),
        };
        let prefix = if held { "" } else { "timed out: " };
        outln!("{prefix}{}: {state}{verdict}", args.target);
    }
    Ok(if held { Outcome::Ok } else { Outcome::Failed })
}

fn settle_if_orphaned(project: &Path, run_id: &str, settler: &mut Settler) {
    let Ok(run) = RunDir::open(project, run_id) else {
        return;
    };
    let Ok(info) = run.read_info() else { return };
    if !is_seat_run(&info) && !driver_alive(&info) {
        let _ = settler.status(&run);
    }
}
