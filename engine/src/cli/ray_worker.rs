//! A long-lived Ray worker: `drover --project DIR ray-worker`, the
//! entrypoint of the worker jobs the ray workspace starts. It takes turns
//! from its mailbox (`crate::drive::ray::mailbox`) as drivers post them,
//! runs each exactly as `ray-turn` runs one ([`super::ray_turn::run_turn`]),
//! and writes the turn's wire lines both to its `.out` file, where the
//! driver reads them, and to the job's log, where Ray keeps them.
//!
//! It stops a turn whose lease is revoked, and stops it and exits when the
//! lease lapses (its driver is gone); it exits when it has had no turn for
//! its idle time, and when Ray stops the job.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;

use super::Outcome;
use super::output::stdout_json;
use super::ray_turn::run_turn;
use crate::drive::ray::lease::{Held, Watch};
use crate::drive::ray::mailbox::Mailbox;
use crate::drive::ray::wire::{self, TurnRequest, WorkerRequest};

/// How often the mailbox is looked at for a new turn.
const LOOK_EVERY: Duration = Duration::from_millis(20);
/// How often a running turn's lease is looked at.
const LEASE_EVERY: Duration = Duration::from_millis(250);

/// How a turn left the worker.
enum Served {
    /// Ready for the next.
    Next,
    /// Its driver's lease lapsed, or Ray stopped the job: leave.
    Leave,
}

/// Serves turns until the worker leaves (idle, its lease lapsed, or
/// stopped by Ray).
pub fn main(project: &Path, interrupted: Arc<AtomicBool>) -> anyhow::Result<Outcome> {
    let text = std::env::var(wire::WORKER_ENV).with_context(|| {
        format!(
            "{} is not set: this command is the entrypoint of Ray worker jobs drover starts",
            wire::WORKER_ENV
        )
    })?;
    let worker = WorkerRequest::parse(&text).map_err(anyhow::Error::msg)?;
    let project = project
        .canonicalize()
        .with_context(|| format!("the project directory {} on this node", project.display()))?;
    // Resolved, the mailbox must still be a worker's directory in this
    // project: a link on the way out of it is refused.
    let resolved = worker
        .mailbox
        .canonicalize()
        .with_context(|| format!("the mailbox {} on this node", worker.mailbox.display()))?;
    if !resolved.starts_with(&project)
        || !resolved.ends_with(
            worker
                .mailbox
                .strip_prefix(worker.mailbox.ancestors().nth(4).unwrap_or(Path::new("/")))?,
        )
    {
        anyhow::bail!(
            "{}: the mailbox {} is not a worker's directory in the project {}",
            wire::WORKER_ENV,
            worker.mailbox.display(),
            project.display()
        );
    }
    let mailbox = Mailbox::new(resolved);
    let idle = Duration::from_millis(worker.idle_ms);
    let lapse = Duration::from_millis(worker.lapse_ms);
    stdout_json(&format!(
        "drover worker {} takes turns\n",
        worker.mailbox.display()
    ));
    let mut taken: HashSet<String> = HashSet::new();
    let mut idle_since = Instant::now();
    let mut claimed_since: Option<Instant> = None;
    loop {
        if interrupted.load(Ordering::Relaxed) {
            mailbox.mark_gone()?;
            return Ok(Outcome::Ok);
        }
        if let Some(turn) = mailbox.posted().into_iter().find(|t| !taken.contains(t)) {
            taken.insert(turn.clone());
            claimed_since = None;
            let served = serve(&project, &mailbox, &turn, lapse, &interrupted);
            idle_since = Instant::now();
            match served {
                Served::Next => mailbox.release()?,
                Served::Leave => {
                    mailbox.mark_gone()?;
                    return Ok(Outcome::Ok);
                }
            }
            continue;
        }
        if mailbox.claimed() {
            // A driver that died between its claim and its turn frees the
            // worker once a lease would have lapsed.
            let since = *claimed_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= lapse {
                mailbox.release()?;
                claimed_since = None;
            }
        } else if idle_since.elapsed() >= idle && mailbox.retire()? {
            stdout_json("drover worker: idle, leaving\n");
            return Ok(Outcome::Ok);
        }
        std::thread::sleep(LOOK_EVERY);
    }
}

/// Runs one posted turn under its lease.
fn serve(
    project: &Path,
    mailbox: &Mailbox,
    turn: &str,
    lapse: Duration,
    interrupted: &AtomicBool,
) -> Served {
    let out = match mailbox.open_out(turn) {
        Ok(file) => Some(Mutex::new(file)),
        Err(e) => {
            stdout_json(&format!("drover worker: cannot write {turn}.out: {e}\n"));
            None
        }
    };
    let emit = |line: &str| {
        stdout_json(&format!("{line}\n"));
        if let Some(out) = &out
            && let Ok(mut file) = out.lock()
        {
            // One write per line: the driver reads whole lines only.
            let _ = file.write_all(format!("{line}\n").as_bytes());
        }
    };
    let request = mailbox
        .read_turn(turn)
        .map_err(|e| e.to_string())
        .and_then(|text| TurnRequest::parse(&text))
        .and_then(|request| {
            if request.submission_id == turn {
                Ok(request)
            } else {
                Err(format!(
                    "the turn {turn}.turn names another turn ({})",
                    request.submission_id
                ))
            }
        });
    let request = match request {
        Ok(request) => request,
        Err(reason) => {
            emit(&wire::refused_line(&reason));
            return Served::Next;
        }
    };
    let cancel = Arc::new(AtomicBool::new(false));
    let finished = AtomicBool::new(false);
    let lapsed = AtomicBool::new(false);
    let outcome = std::thread::scope(|scope| {
        scope.spawn(|| {
            let mut watch = Watch::new(lapse);
            let mut looked: Option<Instant> = None;
            // Wakes often so the worker is free as soon as the turn ends.
            while !finished.load(Ordering::Relaxed) {
                if looked.is_none_or(|t| t.elapsed() >= LEASE_EVERY) {
                    looked = Some(Instant::now());
                    match watch.see(mailbox.lease(turn)) {
                        Held::Yes => {}
                        Held::Revoked => cancel.store(true, Ordering::Relaxed),
                        Held::Lapsed => {
                            lapsed.store(true, Ordering::Relaxed);
                            cancel.store(true, Ordering::Relaxed);
                        }
                    }
                }
                if interrupted.load(Ordering::Relaxed) {
                    cancel.store(true, Ordering::Relaxed);
                }
                std::thread::sleep(LOOK_EVERY);
            }
        });
        let outcome = run_turn(project, &request, Arc::clone(&cancel), &emit);
        finished.store(true, Ordering::Relaxed);
        outcome
    });
    if let Err(e) = outcome {
        emit(&wire::refused_line(&format!("{e:#}")));
    }
    if lapsed.load(Ordering::Relaxed) {
        stdout_json(&format!(
            "drover worker: the lease on {turn} lapsed (its driver is gone); leaving\n"
        ));
        return Served::Leave;
    }
    if interrupted.load(Ordering::Relaxed) {
        return Served::Leave;
    }
    Served::Next
}
