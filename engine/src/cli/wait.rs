//! `drover wait TARGET...`: blocks until seats' (or run tasks') states
//! reach — or leave — a given state, following their runs' journals (no
//! re-reading loop). Several targets, a role (`--role`) or every seat
//! (`--all`) are waited on together: `--every` (the default) returns when
//! all of them hold, `--any` when the first does, and the report says
//! which seat did what. Exit 0 when the condition held, 1 at the timeout
//! (printing the state each was in), 2 for a usage error (unknown target,
//! a human seat, a run with several tasks and none named, no seat of the
//! role).

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
#[command(group = clap::ArgGroup::new("who").required(true).multiple(true).args(["targets", "role", "all"]))]
pub struct Args {
    /// Seats' nicknames, run ids (their only task), or RUN/TASK.
    targets: Vec<String>,
    /// Every seat of this role (human seats aside).
    #[arg(long, value_name = "ROLE")]
    role: Option<String>,
    /// Every seat of the project (human seats aside).
    #[arg(long)]
    all: bool,
    /// Return when any one target holds.
    #[arg(long, conflicts_with = "every")]
    any: bool,
    /// Return when every target holds (the default).
    #[arg(long)]
    every: bool,
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

/// One target followed: where its journal is and what it shows so far.
struct Watched {
    target: String,
    run: String,
    task: String,
    seat: Option<String>,
    view: TaskView,
    /// The journal line that made the condition hold (or the last seen).
    line: Option<RunEvent>,
}

#[derive(Serialize)]
struct TargetReport<'a> {
    target: &'a str,
    run: &'a str,
    task: &'a str,
    seat: Option<&'a str>,
    /// Whether the condition holds for this target.
    held: bool,
    #[serde(flatten)]
    view: &'a TaskView,
    /// The journal line that made the condition hold.
    line: Option<serde_json::Value>,
}

/// What `wait --json` prints for one target: its report with the
/// condition beside it.
#[derive(Serialize)]
struct SingleReport<'a> {
    #[serde(flatten)]
    target: &'a TargetReport<'a>,
    until: Option<Condition>,
    not: Option<Condition>,
}

#[derive(Serialize)]
struct Report<'a> {
    /// Whether the wait ended because the condition held (false: the
    /// timeout passed).
    held: bool,
    /// `every` or `any`.
    mode: &'static str,
    until: Option<Condition>,
    not: Option<Condition>,
    /// The targets that hold, in the order they came to.
    held_by: Vec<&'a str>,
    targets: Vec<TargetReport<'a>>,
}

/// The targets `args` names: its targets, the seats of its role, or every
/// seat; in that order, each once.
fn targets_of(project: &Path, args: &Args) -> Result<Vec<Watched>, Usage> {
    let mut names: Vec<String> = args.targets.clone();
    if args.role.is_some() || args.all {
        let seats: Vec<_> = crate::seats::list(project)
            .into_iter()
            .filter_map(|s| crate::seats::require_sealed(s).ok())
            .filter(|s| !s.human)
            .filter(|s| args.all || Some(&s.role) == args.role.as_ref())
            .collect();
        if seats.is_empty() {
            return Err(Usage(match &args.role {
                Some(role) if !args.all => {
                    format!("no seat has the role {role} (see `drover seats`)")
                }
                _ => "there is no seat to wait on (see `drover seats`)".to_string(),
            }));
        }
        names.extend(seats.into_iter().map(|s| s.nick));
    }
    let mut watched: Vec<Watched> = Vec::new();
    for name in names {
        let (run, task, seat) = resolve(project, &name)?;
        if watched.iter().any(|w| w.run == run && w.task == task) {
            continue;
        }
        watched.push(Watched {
            target: name,
            run,
            task,
            seat,
            view: TaskView::default(),
            line: None,
        });
    }
    Ok(watched)
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let waited = match wait(project, &args) {
        Ok(waited) => waited,
        Err(message) => {
            errln!("error: {message}");
            return Ok(Outcome::Usage);
        }
    };
    if args.json.json {
        print_json(&waited.doc)?;
    } else {
        outln!("{}", waited.text.trim_end());
    }
    Ok(if waited.held {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}

/// How a wait ended: what `wait --json` prints, whether the condition
/// held (false: the timeout passed), and the lines for people.
pub struct Waited {
    pub doc: serde_json::Value,
    pub held: bool,
    text: String,
}

/// `drover wait`'s work: follows the targets' journals until the
/// condition holds or the timeout passes. `Err`: a usage error (an unknown
/// target, a human seat, no seat of the role), in words.
pub fn wait(project: &Path, args: &Args) -> Result<Waited, String> {
    let mut watched = targets_of(project, args).map_err(|Usage(message)| message)?;
    let condition = |view: &TaskView| match (args.until, args.not) {
        (Some(c), _) => holds(view, c),
        // Leaving a state needs a state to leave from.
        (None, Some(c)) => view.state.is_some() && !holds(view, c),
        (None, None) => view.settled || holds(view, Condition::Blocked),
    };
    let any = args.any;
    let mut held_by: Vec<usize> = Vec::new();
    let absorb = |watched: &mut Vec<Watched>, held_by: &mut Vec<usize>, event: RunEvent| {
        let Some(at) = watched
            .iter()
            .position(|w| w.run == event.run && w.task == event.transition.task)
        else {
            return;
        };
        let w = &mut watched[at];
        w.view.apply(&event.transition);
        let holds_now = condition(&w.view);
        // The line that made it hold stays the one reported.
        if !held_by.contains(&at) {
            w.line = Some(event);
        }
        match (holds_now, held_by.iter().position(|&i| i == at)) {
            (true, None) => held_by.push(at),
            (false, Some(i)) if !any => {
                held_by.remove(i);
            }
            _ => {}
        }
    };
    let single = watched.len() == 1;
    let mut follower = Follower::new(project, single.then(|| watched[0].run.as_str()));
    for event in follower.read_all() {
        absorb(&mut watched, &mut held_by, event);
    }
    let done = |held_by: &Vec<usize>, watched: &Vec<Watched>| {
        if any {
            !held_by.is_empty()
        } else {
            held_by.len() == watched.len()
        }
    };
    let deadline = args.timeout.map(|t| Instant::now() + t);
    let mut settler = Settler::new(project);
    let mut last_settle = Instant::now();
    let held = loop {
        if done(&held_by, &watched) {
            break true;
        }
        let remaining = match deadline {
            Some(d) if Instant::now() >= d => break false,
            Some(d) => d.saturating_duration_since(Instant::now()),
            None => super::events::SETTLE_EVERY,
        };
        for event in follower.next(remaining.min(super::events::SETTLE_EVERY)) {
            absorb(&mut watched, &mut held_by, event);
            if done(&held_by, &watched) {
                break;
            }
        }
        if last_settle.elapsed() >= super::events::SETTLE_EVERY {
            last_settle = Instant::now();
            for w in &watched {
                settle_if_orphaned(project, &w.run, &mut settler);
            }
        }
    };
    let report = Report {
        held,
        mode: if any { "any" } else { "every" },
        until: args.until,
        not: args.not,
        held_by: held_by
            .iter()
            .map(|&i| watched[i].target.as_str())
            .collect(),
        targets: watched
            .iter()
            .enumerate()
            .map(|(i, w)| TargetReport {
                target: &w.target,
                run: &w.run,
                task: &w.task,
                seat: w.seat.as_deref(),
                held: held_by.contains(&i),
                view: &w.view,
                line: w.line.as_ref().map(RunEvent::to_json),
            })
            .collect(),
    };
    // One target keeps the shape `wait` always printed for one.
    let one = (single && args.role.is_none() && !args.all).then(|| &report.targets[0]);
    let doc = match one {
        Some(t) => serde_json::to_value(SingleReport {
            target: t,
            until: args.until,
            not: args.not,
        }),
        None => serde_json::to_value(&report),
    }
    .map_err(|e| e.to_string())?;
    let mut text = String::new();
    if !held && one.is_none() {
        text.push_str("timed out:\n");
    }
    for t in &report.targets {
        let state = super::seats::state_label(
            t.view.state.as_deref(),
            t.view.prompt_kind.as_deref(),
            t.view.evidence.as_deref(),
        );
        let verdict = match (&t.view.verdict, t.view.settled) {
            (Some(v), true) => format!(", verdict {v}"),
            _ => String::new(),
        };
        match one {
            Some(_) => {
                let prefix = if held { "" } else { "timed out: " };
                text.push_str(&format!("{prefix}{}: {state}{verdict}\n", t.target));
            }
            None => {
                let mark = if t.held { " (holds)" } else { "" };
                text.push_str(&format!("{}: {state}{verdict}{mark}\n", t.target));
            }
        }
    }
    Ok(Waited { doc, held, text })
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
