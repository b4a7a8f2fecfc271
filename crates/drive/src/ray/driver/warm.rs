//! A turn given to a long-lived worker job (`[ray] warm`, the default):
//! the driver claims an idle worker of the same placement from this
//! project's pool (`.drover/ray/workers/`, each worker's sealed
//! `worker.json`), or makes a new one and submits its job; posts the turn
//! in the worker's mailbox; renews the turn's lease while it waits; and
//! reads the turn's wire lines from the mailbox as the worker writes them.
//! What Ray says about the worker's job (gone, failed) ends a turn that has
//! no result, as for a job of its own.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::{
    Copier, Ending, Followed, LOCAL_MARGIN, PATIENCE, STOP_WAIT, Target, conclude,
    conclude_without_result, network_fault, submit, write_record,
};
use crate::clock::Deadline;
use crate::ray::lease::{self, Renewer};
use crate::ray::mailbox::{self, Mailbox};
use crate::ray::wire::{self, WorkerRequest};
use crate::records::{RayRecord, WarmTurn};
use crate::watchdog::{Alarm, Watchdog};
use crate::{Context, TurnReport, TurnSpec, Verdict};
use drover_gate::Provenance;
use drover_ray::jobs::{JobStatus, Jobs, RayError, Submission};
use drover_run::now_ns;
use drover_types::wit::SeatState;

/// How often the turn's output is looked at.
const READ_EVERY: Duration = Duration::from_millis(20);
/// How often Ray is asked about the worker's job while the turn runs.
const CHECK_EVERY: Duration = Duration::from_secs(1);
/// Bytes of the turn's output read at once.
const CHUNK: u64 = 1 << 20;

/// The driver's sealed record of a worker, in its mailbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerRecord {
    pub address: String,
    /// The worker's Ray job.
    pub submission_id: String,
    /// What the worker was started with: only a turn asking for the same
    /// is given to it.
    pub placement: String,
    pub started_ns: u64,
}

/// What the caller prepared for the turn.
pub(super) struct Given<'a> {
    pub jobs: &'a Jobs,
    pub entrypoint: String,
    pub turn: &'a str,
    pub document: &'a str,
    pub log: &'a Path,
    pub record: RayRecord,
}

/// A worker this driver holds for its turn.
struct Claimed {
    mailbox: Mailbox,
    job: String,
    /// Made for this turn: its job is submitted once the turn is posted.
    fresh: bool,
}

/// The placement a worker serves, as one comparable text.
fn placement(target: &Target, entrypoint: &str) -> String {
    let s = &target.settings;
    serde_json::json!([s.address, entrypoint, s.num_cpus, s.resources, target.node]).to_string()
}

/// An idle worker of `placement` this driver now holds, if any. A worker
/// whose job Ray says ended is marked gone and skipped.
fn claim_idle(
    ctx: &Context,
    jobs: &Jobs,
    placement: &str,
    turn: &str,
) -> Result<Option<Claimed>, RayError> {
    let mut dirs: Vec<_> = std::fs::read_dir(mailbox::workers_dir(&ctx.project))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let worker = Mailbox::new(dir);
        if worker.is_gone() {
            continue;
        }
        // Only a worker this user's drover recorded: a committed
        // `worker.json` names nothing to give a turn to.
        let Ok(record) =
            drover_run::sealed::read_sealed::<WorkerRecord>(&worker.dir.join(mailbox::RECORD))
        else {
            continue;
        };
        if record.from != Provenance::SealedRecord || record.value.placement != placement {
            continue;
        }
        if !worker.claim(turn).unwrap_or(false) {
            continue;
        }
        match jobs.info(&record.value.submission_id) {
            Ok(Some(info)) if !info.status.terminal() => {
                return Ok(Some(Claimed {
                    mailbox: worker,
                    job: record.value.submission_id,
                    fresh: false,
                }));
            }
            Ok(_) => {
                let _ = worker.mark_gone();
            }
            Err(e) => {
                let _ = worker.release();
                return Err(e);
            }
        }
    }
    Ok(None)
}

/// A new worker's mailbox and sealed record, held for `turn`.
fn make_worker(
    ctx: &Context,
    target: &Target,
    placement: &str,
    turn: &str,
) -> std::io::Result<Claimed> {
    let id = format!("{}-{}", now_ns(), std::process::id());
    let mailbox = Mailbox::create(mailbox::workers_dir(&ctx.project).join(&id))?;
    let job = format!("drover-worker-{id}");
    let record = WorkerRecord {
        address: target.settings.address.clone(),
        submission_id: job.clone(),
        placement: placement.to_string(),
        started_ns: now_ns(),
    };
    drover_run::sealed::write_sealed(&mailbox.dir.join(mailbox::RECORD), &record)?;
    mailbox.claim(turn)?;
    Ok(Claimed {
        mailbox,
        job,
        fresh: true,
    })
}

/// Posts the turn to the worker this driver holds; why not, if it cannot.
fn give(claimed: &Claimed, turn: &str, document: &str) -> Result<(), String> {
    claimed.mailbox.post(turn, document).map_err(|e| {
        let _ = claimed.mailbox.release();
        format!(
            "cannot give the turn to the Ray worker at {}: {e}",
            claimed.mailbox.dir.display()
        )
    })
}

pub(super) fn run(
    ctx: &Context,
    spec: &TurnSpec,
    target: &Target,
    given: Given<'_>,
    ending: &Ending<'_>,
) -> TurnReport {
    let task = spec.task.as_str();
    let settings = &target.settings;
    let jobs = given.jobs;
    let place = placement(target, &given.entrypoint);
    let mut record = given.record;
    let crashed = |reason: String, fault| {
        let mut r = ending(ctx, Verdict::Crashed, reason, fault);
        r.logs = vec![given.log.to_path_buf()];
        r
    };
    let claimed = match claim_idle(ctx, jobs, &place, given.turn) {
        Ok(Some(claimed)) => Ok(claimed),
        Ok(None) => make_worker(ctx, target, &place, given.turn).map_err(|e| {
            format!(
                "cannot make a Ray worker's mailbox under {}: {e}",
                mailbox::workers_dir(&ctx.project).display()
            )
        }),
        Err(e) => {
            ctx.state(task, SeatState::Unknown, None, "ray:submit-failed");
            let fault = match &e {
                RayError::Unreachable { reason, .. } => Some(network_fault(reason)),
                _ => None,
            };
            return conclude_without_result(ctx, task, crashed(e.to_string(), fault));
        }
    };
    let claimed = match claimed {
        Ok(claimed) => claimed,
        Err(reason) => return conclude_without_result(ctx, task, crashed(reason, None)),
    };
    record.submission_id = claimed.job.clone();
    record.warm = Some(WarmTurn {
        turn: given.turn.to_string(),
        mailbox: claimed.mailbox.dir.clone(),
    });
    write_record(&ctx.run, task, &record);
    if let Err(reason) = give(&claimed, given.turn, given.document) {
        return conclude_without_result(ctx, task, crashed(reason, None));
    }
    ctx.state(task, SeatState::Working, None, "ray:submit");
    ctx.run.lifecycle(
        task,
        "ray-turn",
        serde_json::json!({"address": settings.address, "worker": claimed.job, "turn": given.turn, "new_worker": claimed.fresh, "resources": settings.resources, "num_cpus": settings.num_cpus}),
    );
    let renewer = Renewer::start(claimed.mailbox.clone(), given.turn.to_string());
    if claimed.fresh
        && let Err(e) = start_worker(ctx, spec, target, jobs, &given.entrypoint, &claimed)
    {
        drop(renewer);
        let _ = claimed.mailbox.mark_gone();
        let (reason, fault) = match &e {
            RayError::Unreachable { reason, .. } => (e.to_string(), Some(network_fault(reason))),
            _ => (format!("Ray did not take the worker job: {e}"), None),
        };
        ctx.state(task, SeatState::Unknown, None, "ray:submit-failed");
        return conclude_without_result(ctx, task, crashed(reason, fault));
    }
    let mut copier = Copier::new(ctx, task, given.turn, given.log, false);
    let mut claimed = claimed;
    let mut renewer = renewer;
    let followed = loop {
        match follow(ctx, spec, jobs, &mut copier, &claimed, given.turn, &place) {
            Following::Done(followed) => break followed,
            // An idle worker freed up while the new one waited for room:
            // the turn moves there, and the waiting job is stopped.
            Following::Moved(to) => {
                drop(renewer);
                let _ = claimed.mailbox.withdraw(given.turn);
                let _ = claimed.mailbox.mark_gone();
                let stopped = jobs.stop(&claimed.job);
                ctx.run.lifecycle(
                    task,
                    "ray-move",
                    serde_json::json!({"from": claimed.job, "to": to.job, "stopped": stopped.as_ref().map_err(ToString::to_string)}),
                );
                claimed = to;
                record.submission_id = claimed.job.clone();
                record.warm = Some(WarmTurn {
                    turn: given.turn.to_string(),
                    mailbox: claimed.mailbox.dir.clone(),
                });
                write_record(&ctx.run, task, &record);
                if let Err(reason) = give(&claimed, given.turn, given.document) {
                    return conclude_without_result(ctx, task, crashed(reason, None));
                }
                renewer = Renewer::start(claimed.mailbox.clone(), given.turn.to_string());
            }
        }
    };
    drop(renewer);
    if copier.result.is_some() || copier.refused.is_some() {
        // The turn is over: its lease file has nothing left to say.
        let _ = claimed.mailbox.revoke(given.turn);
    }
    conclude(ctx, spec, copier, followed, record, ending)
}

fn start_worker(
    ctx: &Context,
    spec: &TurnSpec,
    target: &Target,
    jobs: &Jobs,
    entrypoint: &str,
    claimed: &Claimed,
) -> Result<(), RayError> {
    let settings = &target.settings;
    let on_node = super::on_node(&claimed.mailbox.dir, &ctx.project, &settings.project);
    let worker = WorkerRequest {
        mailbox: on_node,
        idle_ms: u64::try_from(settings.idle.as_millis()).unwrap_or(u64::MAX),
        lapse_ms: lease::LAPSE_AFTER.as_millis() as u64,
    };
    let document = serde_json::to_string(&worker).map_err(|e| RayError::Malformed {
        what: "the worker's settings".to_string(),
        reason: e.to_string(),
    })?;
    let submission = Submission {
        entrypoint: entrypoint.to_string(),
        submission_id: claimed.job.clone(),
        runtime_env: serde_json::json!({"env_vars": {wire::WORKER_ENV: document}}),
        metadata: BTreeMap::from([
            ("drover_worker".to_string(), claimed.mailbox.id()),
            ("drover_run".to_string(), ctx.run.id().to_string()),
        ]),
        entrypoint_num_cpus: settings.num_cpus,
        entrypoint_resources: settings.resources.clone(),
        entrypoint_label_selector: target
            .node
            .as_ref()
            .map(|id| BTreeMap::from([("ray.io/node-id".to_string(), id.clone())])),
    };
    submit(jobs, &submission, spec).map(|_| ())
}

/// How following a turn ended.
enum Following {
    Done(Followed),
    /// The new worker still waits for room and an idle one is held instead.
    Moved(Claimed),
}

/// Reads the turn's output until its result (or refusal), the worker's job
/// ending, the cluster gone for [`PATIENCE`], or the watchdog; on an alarm
/// the lease is revoked, and the worker stops the turn.
fn follow(
    ctx: &Context,
    spec: &TurnSpec,
    jobs: &Jobs,
    copier: &mut Copier<'_>,
    claimed: &Claimed,
    turn: &str,
    placement: &str,
) -> Following {
    let task = spec.task.as_str();
    let out = claimed.mailbox.out_file(turn);
    let mut watchdog = Watchdog::new(Deadline::after(spec.timeout + LOCAL_MARGIN));
    let mut followed = Followed::default();
    let mut offset = 0u64;
    let mut last_check = Instant::now();
    let mut last_contact = Instant::now();
    let mut revoked: Option<Instant> = None;
    loop {
        if revoked.is_none() {
            let why = match watchdog.check(ctx, spec, None) {
                Some(Alarm::Cancelled) => {
                    followed.cancelled = true;
                    Some("interrupted")
                }
                Some(Alarm::Timeout(which)) => {
                    followed.timed_out = Some(which);
                    Some("timeout")
                }
                Some(Alarm::BudgetNudge | Alarm::OverBudget) | None => None,
            };
            if let Some(why) = why {
                let revoked_now = claimed.mailbox.revoke(turn);
                ctx.run.lifecycle(
                    task,
                    "ray-stop",
                    serde_json::json!({"why": why, "lease_revoked": revoked_now.as_ref().map_err(ToString::to_string)}),
                );
                revoked = Some(Instant::now());
            }
        }
        if let Ok(bytes) = mailbox::read_from(&out, offset, CHUNK)
            && !bytes.is_empty()
        {
            offset += bytes.len() as u64;
            copier.feed(&bytes);
            continue;
        }
        if copier.result.is_some() || copier.refused.is_some() {
            // Where it ran, for a seat's pinning and the record.
            followed.info = jobs.info(&claimed.job).ok().flatten();
            return Following::Done(followed);
        }
        if revoked.is_some_and(|t| t.elapsed() >= STOP_WAIT) {
            followed.info = jobs.info(&claimed.job).ok().flatten();
            return Following::Done(followed);
        }
        if last_check.elapsed() >= CHECK_EVERY {
            last_check = Instant::now();
            match jobs.info(&claimed.job) {
                Ok(Some(info)) if info.status.terminal() => {
                    // Its last lines may have landed since the last read.
                    if let Ok(bytes) = mailbox::read_from(&out, offset, CHUNK) {
                        copier.feed(&bytes);
                    }
                    let _ = claimed.mailbox.mark_gone();
                    followed.info = Some(info);
                    return Following::Done(followed);
                }
                Ok(None) => {
                    let _ = claimed.mailbox.mark_gone();
                    return Following::Done(followed);
                }
                Ok(Some(info)) => {
                    last_contact = Instant::now();
                    if claimed.fresh
                        && info.status == JobStatus::Pending
                        && offset == 0
                        && revoked.is_none()
                        && let Ok(Some(idle)) = claim_idle(ctx, jobs, placement, turn)
                    {
                        return Following::Moved(idle);
                    }
                }
                Err(RayError::Unreachable { reason, .. }) => {
                    if last_contact.elapsed() >= PATIENCE {
                        followed.unreachable = Some(reason);
                        return Following::Done(followed);
                    }
                }
                Err(e) => tracing::debug!("worker status: {e}"),
            }
        }
        std::thread::sleep(READ_EVERY);
    }
}
