//! `drover answer SEAT OPTION`: answers the question a blocked seat waits
//! on. The answer is left in the seat's task directory for the process
//! that holds its agent (the seat host, or a `drover run`), which delivers
//! it and journals it; this command waits a moment to say it was delivered.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use serde::Serialize;

use super::Outcome;
use super::output::{Json, outln, print_json};
use crate::question::{self, AnswerFile};
use crate::run::{RunDir, now_ns, read_transitions};
use crate::seats;
use crate::workspace::process::{self, Identity};

/// How long to wait for the holder to journal the answer.
const DELIVERY_WAIT: Duration = Duration::from_secs(15);

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
    let project = project
        .canonicalize()
        .with_context(|| format!("project {}", project.display()))?;
    let (run_id, task) = match &args.run {
        Some(run) => (run.clone(), args.seat.clone()),
        None => {
            let Some(record) = seats::load(&project, &args.seat) else {
                bail!(
                    "no seat named {} (see `drover seats`; a run's task takes --run RUN)",
                    args.seat
                );
            };
            (record.run_id, record.nick)
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
    if !holder_alive(&task_dir) {
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
    if args.json.json {
        print_json(&outcome)?;
    } else if delivered {
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
    Ok(Outcome::Ok)
}

/// Whether the process that holds the task's agent (`agent.json`'s
/// `driver`) is still running.
fn holder_alive(task_dir: &Path) -> bool {
    std::fs::read_to_string(task_dir.join("agent.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| serde_json::from_value::<Identity>(v["driver"].clone()).ok())
        .is_some_and(process::alive)
}

fn wait_delivered(journal: &Path, task: &str, question: &str) -> bool {
    let until = Instant::now() + DELIVERY_WAIT;
    loop {
        let delivered = read_transitions(journal).iter().any(|t| {
            t.task == task
                && t.kind == "answer"
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
