//! `drover answer SEAT OPTION`: answers the question a blocked seat waits
//! on. An ACP question's answer is left in the seat's task directory for
//! the process that holds its agent (the seat host, or a `drover run`),
//! which delivers it and journals it; this command waits a moment to say
//! it was delivered. A dialog on a pane is answered here: the pane is read
//! again, and only while it still shows that dialog are the option's keys
//! pressed; then the pane's next state (idle, or the next dialog) is
//! journaled and shown.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde::Serialize;

use super::Outcome;
use super::output::{Json, outln, print_json};
use crate::drive::interactive::{self, dialog};
use crate::drive::records::{AgentRecord, PaneRecord, Record};
use crate::drive::{Context, Prepared};
use crate::gate::Provenance;
use crate::question::{self, AnswerFile, Answerer};
use crate::run::{RunDir, now_ns, read_transitions};
use crate::seats;
use crate::workspace::process;
use crate::workspace::{self, Pane};
use drover_types::wit;

/// How long to wait for the holder to journal the answer.
const DELIVERY_WAIT: Duration = Duration::from_secs(15);
/// How long an answered pane dialog may take to give way to what follows.
const SETTLE_WAIT: Duration = Duration::from_secs(60);

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The seat (with --run: the task) whose question to answer.
    seat: String,
    /// The option: its id, its kind (allow_once, reject_once, …), its label,
    /// or its position (1 = first).
    option: String,
    /// Answer a task of this run instead of a seat.
    #[arg(long, value_name = "RUN")]
    run: Option<String>,
    #[command(flatten)]
    json: Json,
}

#[derive(Serialize)]
struct Answered {
    seat: String,
    run_id: String,
    question: question::Question,
    option: question::Choice,
    delivered: bool,
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let doc = answer(project, &args)?;
    if args.json.json {
        print_json(&doc)?;
    }
    Ok(Outcome::Ok)
}

/// `drover answer`'s work: the answer delivered; what `answer --json`
/// prints (people's lines are printed here without `--json`). A human
/// seat is refused.
pub fn answer(project: &Path, args: &Args) -> anyhow::Result<serde_json::Value> {
    let project = project
        .canonicalize()
        .with_context(|| format!("project {}", project.display()))?;
    let mut seat_pane = None;
    let mut seat_record = None;
    let (run_id, task) = match &args.run {
        Some(run) => (run.clone(), args.seat.clone()),
        None => {
            let Some(record) = seats::load(&project, &args.seat) else {
                bail!(
                    "no seat named {} (see `drover seats`; a run's task takes --run RUN)",
                    args.seat
                );
            };
            let record = seats::require_sealed(record).map_err(anyhow::Error::msg)?;
            if record.human {
                bail!(
                    "{} is a human seat: its person answers it in its pane (`drover attach {}`)",
                    record.nick,
                    record.nick
                );
            }
            seat_pane = record.pane.clone();
            let named = (record.run_id.clone(), record.nick.clone());
            seat_record = Some(record);
            named
        }
    };
    let run = RunDir::open(&project, &run_id)?;
    let task_dir = run.task_dir(&task);
    let Some(q) = question::pending(&run.journal_path(), &task) else {
        bail!("{task} is not waiting on a question");
    };
    let Some(choice) = q.choice(&args.option).cloned() else {
        bail!(
            "'{}' is not one of the options of {task}'s question ({}): {}",
            args.option,
            q.summary(),
            q.options_line()
        );
    };
    if q.kind == crate::budget::KIND {
        let run = RunDir::open(&project, &run_id)?;
        let info = run.read_info()?;
        let ctx = Context::new(project.clone(), run, Prepared::launch(&project, &info.cli)?);
        let holder = match &seat_record {
            Some(record) => super::pause::Holder::Seat(record),
            None => super::pause::Holder::Task(&task),
        };
        super::pause::answer(&project, holder, &ctx, &q, &choice.id, &Answerer::Person)?;
        let outcome = Answered {
            seat: task.clone(),
            run_id,
            question: q,
            option: choice,
            delivered: true,
        };
        if !args.json.json {
            outln!(
                "{}: answered {} ({}) to {}",
                outcome.seat,
                outcome.option.id,
                outcome.option.label,
                outcome.question.title
            );
        }
        return Ok(serde_json::to_value(&outcome)?);
    }
    if q.on_pane {
        let pane = seat_pane
            .or_else(|| recorded_pane(&run, &task))
            .with_context(|| {
                format!("no sealed record of {task}'s pane, so its dialog cannot be answered here")
            })?;
        return answer_on_pane(
            &project,
            run,
            run_id,
            &task,
            pane,
            q,
            choice,
            args.json.json,
        );
    }
    if !holder_alive(&run, &task) {
        bail!(
            "the drover process holding {task}'s agent is gone, so the question can no longer be answered"
        );
    }
    question::leave_answer(
        &task_dir,
        &AnswerFile {
            question: q.id.clone(),
            option: choice.id.clone(),
            ts: now_ns(),
        },
    )
    .with_context(|| format!("leaving the answer in {}", task_dir.display()))?;
    let delivered = wait_delivered(&run.journal_path(), &task, &q.id);
    let outcome = Answered {
        seat: task.clone(),
        run_id,
        question: q,
        option: choice,
        delivered,
    };
    if !args.json.json {
        if delivered {
            outln!(
                "{}: answered {} ({}) to {}",
                outcome.seat,
                outcome.option.id,
                outcome.option.label,
                outcome.question.summary()
            );
        } else {
            outln!(
                "{}: left the answer {} for its driver, which has not taken it yet",
                outcome.seat,
                outcome.option.id
            );
        }
    }
    Ok(serde_json::to_value(&outcome)?)
}

/// The pane a run's sealed `pane.json` names (never one a file merely
/// claims).
fn recorded_pane(run: &RunDir, task: &str) -> Option<Pane> {
    PaneRecord::read(run, task).map(|r| r.pane)
}

#[derive(Serialize)]
struct AnsweredOnPane {
    seat: String,
    run_id: String,
    question: question::Question,
    option: question::Choice,
    /// What the pane shows after the answer: idle, blocked, or unknown
    /// when it had not settled.
    now: &'static str,
    next_question: Option<question::Question>,
}

/// Answers a dialog on a pane: re-reads it, presses the option's keys while
/// it still shows that dialog, and reports what the pane shows next.
#[allow(clippy::too_many_arguments)]
fn answer_on_pane(
    project: &Path,
    run: RunDir,
    run_id: String,
    task: &str,
    pane: Pane,
    q: question::Question,
    choice: question::Choice,
    json: bool,
) -> anyhow::Result<serde_json::Value> {
    let info = run.read_info()?;
    let kind = Some(info.workspace)
        .filter(|k| k.has_panes())
        .with_context(|| format!("{task}'s run is on {}, which has no panes", info.workspace))?;
    let prepared = Prepared::launch(project, &info.cli)?;
    let ctx = Context::new(project.to_path_buf(), run, prepared);
    let seat = interactive::Seat {
        workspace: workspace::open_panes(kind, project)?,
        pane,
        from: Provenance::SealedRecord,
    };
    dialog::answer(&ctx, task, &seat, &q, &choice, &Answerer::Person, false)
        .map_err(|why| anyhow::anyhow!("{task}: not answered: {why}"))?;
    let settled = dialog::settle(&ctx, task, &seat, &q, SETTLE_WAIT);
    let now = match settled.as_ref().map(|r| r.state) {
        Some(wit::SeatState::Idle) => "idle",
        Some(wit::SeatState::Blocked) => "blocked",
        _ => "unknown",
    };
    let next_question = (now == "blocked")
        .then(|| question::pending(&ctx.run.journal_path(), task))
        .flatten();
    let outcome = AnsweredOnPane {
        seat: task.to_string(),
        run_id,
        question: q,
        option: choice,
        now,
        next_question,
    };
    let doc = serde_json::to_value(&outcome)?;
    if json {
        return Ok(doc);
    }
    outln!(
        "{}: answered {} ({}) to {}",
        outcome.seat,
        outcome.option.id,
        outcome.option.label,
        outcome.question.title
    );
    match (&outcome.next_question, settled) {
        (Some(next), _) => {
            outln!("  it now asks: {}", next.title);
            outln!("    {}", next.options_line());
        }
        (None, Some(reading)) if outcome.now == "blocked" => outln!(
            "  it now waits at a {} prompt drover cannot answer: `drover attach {}`",
            reading
                .prompt_kind
                .unwrap_or(wit::PromptKind::Other)
                .as_str(),
            outcome.seat
        ),
        (None, Some(_)) => outln!("  its screen reads idle"),
        (None, None) => {
            outln!("  its screen has not settled yet (`drover seats` shows it once it does)")
        }
    }
    Ok(doc)
}

/// Whether the process that holds the task's agent (the sealed
/// `agent.json`'s `driver`) is still running.
fn holder_alive(run: &RunDir, task: &str) -> bool {
    AgentRecord::read(run, task)
        .and_then(|record| record.driver)
        .is_some_and(process::alive)
}

fn wait_delivered(journal: &Path, task: &str, question: &str) -> bool {
    let until = Instant::now() + DELIVERY_WAIT;
    loop {
        let delivered = read_transitions(journal).iter().any(|t| {
            t.task == task
                && matches!(t.record, crate::run::Record::Answer { .. })
                && t.detail.get("question").and_then(|q| q.as_str()) == Some(question)
        });
        if delivered {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
