//! The node's side of a Ray turn: `drover --project DIR ray-turn`, the
//! entrypoint of a job that runs one turn ([`run_turn`] is also what a
//! long-lived worker runs for each turn it takes). It runs one headless
//! session exactly as `drover run` would (the CLI's component, hooks,
//! verdict and fault classification), and prints its journal and result in
//! the job's log as [`crate::drive::ray::wire`] lines for the submitting drover to read.
//!
//! Its files live on the node, in a drover state directory of their own,
//! `<project>/.drover/ray` (run directories under `.drover/runs/`, the
//! conversation record in `.drover/conversations.jsonl`), so turns of the
//! same project never mix with the runs of a drover working there.

use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context as _;

use super::output::stdout_json;
use crate::drive::ray::wire::{self, TurnRequest};
use crate::drive::{Context, Prepared, headless};
use crate::run::{RunDir, RunInfo, now_ns};

/// How often the journal is looked at for new lines.
const FOLLOW_EVERY: Duration = Duration::from_millis(50);
/// Ray gives a stopped job 3 s (`RAY_JOB_STOP_WAIT_TIME_S`) before SIGKILL:
/// the CLI's teardown must fit, with time left to print the result.
const TEARDOWN_MAX: Duration = Duration::from_secs(2);

/// The state directory turns keep on the node.
pub fn state_dir(project: &Path) -> std::path::PathBuf {
    project.join(".drover").join("ray")
}

/// Runs the turn in `$DROVER_RAY_TURN`; prints its result line and returns
/// Ok once a result exists, whatever the verdict (the verdict is in the
/// result; a failed job means drover itself could not run the turn).
pub fn main(project: &Path, interrupted: Arc<AtomicBool>) -> anyhow::Result<()> {
    let text = std::env::var(wire::TURN_ENV).with_context(|| {
        format!(
            "{} is not set: this command is the entrypoint of Ray jobs drover submits",
            wire::TURN_ENV
        )
    })?;
    let turn = TurnRequest::parse(&text).map_err(anyhow::Error::msg)?;
    run_turn(project, &turn, interrupted, &|line| {
        stdout_json(&format!("{line}\n"));
    })
}

/// Runs one turn on this node as `drover run` would, handing each wire line
/// (journal lines as they come, the result last) to `emit`.
pub fn run_turn(
    project: &Path,
    turn: &TurnRequest,
    cancel: Arc<AtomicBool>,
    emit: &(dyn Fn(&str) + Sync),
) -> anyhow::Result<()> {
    let project = project
        .canonicalize()
        .with_context(|| format!("the project directory {} on this node", project.display()))?;
    // The node checks trust exactly as `drover run` does: a Ray job is no
    // way around the user's consent to a checkout's profile and component.
    let prepared = Prepared::launch(&project, &turn.cli)?;
    let profile = prepared.profile().clone();
    let state = state_dir(&project);
    // The node's turns keep their run directories in a project of their
    // own below this one's state: create it first, confined to the project.
    crate::state::create_dir_all(&state)
        .with_context(|| format!("creating {}", state.display()))?;
    let run = RunDir::create(&state, &turn.submission_id).with_context(|| {
        format!(
            "creating the turn's run directory under {}",
            state.display()
        )
    })?;
    run.write_info(&RunInfo {
        run_id: turn.submission_id.clone(),
        created_ns: now_ns(),
        cli: profile.name.clone(),
        workspace: crate::types::WorkspaceKind::Headless,
        project: project.clone(),
        tasks: vec![turn.task.clone()],
        driver_pid: std::process::id(),
        driver_start: crate::workspace::process::identity(std::process::id()).map(|i| i.start),
    })?;
    let mut spec = turn.to_spec();
    spec.teardown_grace = spec.teardown_grace.min(TEARDOWN_MAX);
    spec.cancel = Some(cancel);
    let journal = run.journal_path();
    let mut ctx = Context::new(state, run, prepared);
    ctx.notifies = false;

    let done = AtomicBool::new(false);
    let result = std::thread::scope(|scope| {
        let follower = scope.spawn(|| follow(&journal, &done, emit));
        let result = headless::run(&ctx, &spec);
        done.store(true, Ordering::Relaxed);
        follower.join().map(|()| result)
    })
    .map_err(|_| anyhow::anyhow!("the journal follower panicked"))?;
    emit(&wire::result_line(&result)?);
    Ok(())
}

/// Hands every line the journal gets to `emit`, numbered from 0, until
/// `done` and the file is read to its end.
fn follow(journal: &Path, done: &AtomicBool, emit: &(dyn Fn(&str) + Sync)) {
    let mut offset = 0u64;
    let mut seq = 0u64;
    loop {
        let finished = done.load(Ordering::Relaxed);
        if let Ok(mut file) = std::fs::File::open(journal)
            && file.seek(SeekFrom::Start(offset)).is_ok()
        {
            let mut reader = BufReader::new(file);
            let mut line = String::new();
            // Only whole lines: a line being appended is read next time.
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line.ends_with('\n') {
                offset += line.len() as u64;
                emit(&wire::event_line(seq, line.trim_end()));
                seq += 1;
                line.clear();
            }
        }
        if finished {
            return;
        }
        std::thread::sleep(FOLLOW_EVERY);
    }
}
