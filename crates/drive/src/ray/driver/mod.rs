//! The local side of a Ray turn: submit the job, follow its log stream,
//! copy the node's journal lines into this run's `events.jsonl` (each once,
//! by position), and conclude from the node's result line — or, when there
//! is none, from what Ray says about the job.
//!
//! `tasks/<task>/ray.json` records the cluster and the submission id before
//! the job is submitted, so [`settle`] can finish the task from Ray alone
//! when this drover is gone.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod ending;
mod warm;

use super::mailbox::Mailbox;
use super::wire::{self, Line, TurnRequest};
use crate::clock::Deadline;
use crate::records::{RayRecord, Record};
use crate::watchdog::{Alarm, Watchdog};
use crate::{Context, FaultReport, TurnReport, TurnSpec, Verdict, shared};
use drover_gate::{Cleared, Effect, Refused, Sourced};
use drover_ray::jobs::{JobInfo, JobStatus, Jobs, RayError, Submission, Submitted};
use drover_ray::settings::Settings;
use drover_ray::tail::{Next, Position, Tail};
use drover_run::{Origin, RunDir, now_ns, safe_segment};
use drover_types::wit::SeatState;

pub use ending::settle;
use ending::{
    bare_result, conclude_without_result, finish, from_remote, network_fault, note_job,
    without_result,
};

/// How long a read of the log stream waits before the loop looks around.
const POLL: Duration = Duration::from_millis(250);
/// Between reconnects, and between status checks while the stream is quiet.
const RETRY_EVERY: Duration = Duration::from_secs(1);
const CHECK_QUIET_EVERY: Duration = Duration::from_secs(10);
/// Between status checks once the node's result is in (the job is ending).
const SETTLING_EVERY: Duration = Duration::from_millis(100);
/// How long the cluster may stay unreachable before the turn is given up
/// as a `network` fault.
const PATIENCE: Duration = Duration::from_secs(30);
/// The same at submission, when nothing runs yet.
const SUBMIT_PATIENCE: Duration = Duration::from_secs(10);
/// After asking Ray to stop the job: how long to wait for it to end (Ray
/// itself force-kills after 3 s).
const STOP_WAIT: Duration = Duration::from_secs(20);
/// The node enforces the session deadline itself; the local guard fires
/// this much later, for a job stuck before it started or a node gone quiet.
const LOCAL_MARGIN: Duration = Duration::from_secs(60);

/// Where and how a turn runs on the cluster.
#[derive(Debug, Clone)]
pub struct Target {
    pub settings: Settings,
    /// The node a seat's conversation lives on (Ray's node id).
    pub node: Option<String>,
}

/// The task's job record, with where it came from.
pub fn read_record(run: &RunDir, task: &str) -> Option<Sourced<RayRecord>> {
    RayRecord::read_sourced(run, task)
}

/// What a job record may drive: its cluster (cleared for a connection) and
/// its log, which is always the run's own `logs/<submission id>.log` (the
/// record must name that file). A record this user's drover did not seal,
/// or whose log is any other file, drives nothing.
pub(super) struct Acting {
    pub address: Cleared<String>,
    pub log: PathBuf,
    /// A warm turn's worker mailbox: always one of this project's workers.
    pub mailbox: Option<Mailbox>,
}

pub(super) fn acting(run: &RunDir, record: &Sourced<RayRecord>) -> Result<Acting, Refused> {
    let job = &record.value;
    // A warm turn's log is named by the turn, a job's by the job.
    let name = job.warm.as_ref().map_or(&job.submission_id, |w| &w.turn);
    let own_log = run.root().join("logs").join(format!("{name}.log"));
    let names_own_log = job.log.file_name() == own_log.file_name()
        && job.log.parent().and_then(Path::file_name) == Some(std::ffi::OsStr::new("logs"));
    let mailbox = match &job.warm {
        None => None,
        Some(warm) => {
            let state = run.root().parent().and_then(Path::parent);
            let id = warm
                .mailbox
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let own = state.map(|s| s.join("ray").join("workers").join(&id));
            // The same directory, however each side spelled the project.
            let resolved = |p: &Path| p.canonicalize().ok();
            let same = own
                .as_deref()
                .and_then(resolved)
                .is_some_and(|o| resolved(&warm.mailbox) == Some(o));
            if id.is_empty() || safe_segment(&id) != id || !same {
                return Err(Refused::new(
                    Effect::Write,
                    "the Ray worker's mailbox",
                    record.from,
                    format!(
                        "{} is not one of this project's Ray workers (.drover/ray/workers/<id>)",
                        warm.mailbox.display()
                    ),
                ));
            }
            own.map(Mailbox::new)
        }
    };
    if safe_segment(name) != *name
        || safe_segment(&job.submission_id) != job.submission_id
        || !names_own_log
    {
        return Err(Refused::new(
            Effect::Write,
            "the Ray job's log",
            record.from,
            format!(
                "{} is not this run's log for the job (logs/<submission id>.log)",
                job.log.display()
            ),
        ));
    }
    let address = drover_gate::clear(
        Effect::Connect,
        "the Ray address",
        Sourced::new(job.address.clone(), record.from),
    )?;
    Ok(Acting {
        address,
        log: own_log,
        mailbox,
    })
}

/// Stops the job of a task's last turn when Ray may still run it (`drover
/// down` on a ray seat whose `send` is gone); its id when Ray stopped it.
pub fn stop_job(run: &RunDir, task: &str) -> Result<Option<String>, RayError> {
    let Some(record) = read_record(run, task) else {
        return Ok(None);
    };
    if record.value.status.is_some_and(JobStatus::terminal) {
        return Ok(None);
    }
    let acting = match acting(run, &record) {
        Ok(acting) => acting,
        Err(refused) => {
            tracing::warn!("not stopping {task}'s Ray job: {refused}");
            return Ok(None);
        }
    };
    // A warm turn is stopped through its lease; the worker stays for others.
    if let (Some(mailbox), Some(warm)) = (&acting.mailbox, &record.value.warm) {
        let held = mailbox.lease(&warm.turn).is_some();
        if held && let Err(e) = mailbox.revoke(&warm.turn) {
            tracing::warn!("cannot revoke the lease on {task}'s Ray turn: {e}");
            return Ok(None);
        }
        return Ok(held.then(|| warm.turn.clone()));
    }
    let stopped = Jobs::new(&acting.address).stop(&record.value.submission_id)?;
    Ok(stopped.then_some(record.value.submission_id))
}

fn write_record(run: &RunDir, task: &str, record: &RayRecord) {
    if let Err(e) = record.write(run, task) {
        tracing::warn!("cannot write the task's Ray record: {e}");
    }
}

/// A path under the local project, moved under the project's directory on
/// the nodes; any other path is left as it is.
fn on_node(path: &Path, local: &Path, node: &Path) -> PathBuf {
    match path.strip_prefix(local) {
        Ok(rest) => node.join(rest),
        Err(_) => path.to_path_buf(),
    }
}

/// How the following ended, before the verdict.
#[derive(Default)]
struct Followed {
    info: Option<JobInfo>,
    unreachable: Option<String>,
    timed_out: Option<&'static str>,
    cancelled: bool,
}

/// Reads log lines: copies the node's journal lines, keeps the result, and
/// appends every new line to this machine's copy of the log.
struct Copier<'a> {
    ctx: &'a Context,
    task: &'a str,
    job: &'a str,
    log: Option<std::fs::File>,
    position: Position,
    result: Option<TurnReport>,
    /// Why a worker could not run the turn.
    refused: Option<String>,
    /// Why the job's whole log could not be read (Ray's message).
    log_error: Option<String>,
    verdict_seen: bool,
}

impl<'a> Copier<'a> {
    /// `log` is the run's own copy of the job's log, opened confined (a
    /// link planted in its place, or on the way to it, is refused).
    fn new(ctx: &'a Context, task: &'a str, job: &'a str, log: &Path, fresh: bool) -> Copier<'a> {
        let opened = if fresh {
            drover_state::create_file(log)
        } else {
            drover_state::open_append(log)
        };
        let log = opened
            .map_err(|e| tracing::warn!("cannot write {}: {e}", log.display()))
            .ok();
        Copier {
            ctx,
            task,
            job,
            log,
            position: Position::default(),
            result: None,
            refused: None,
            log_error: None,
            verdict_seen: false,
        }
    }

    fn feed(&mut self, chunk: &[u8]) {
        for line in self.position.feed(chunk) {
            if let Some(file) = &mut self.log {
                let _ = writeln!(file, "{line}");
            }
            match wire::parse_line(&line) {
                Some(Line::Event { seq, transition }) if transition.task == self.task => {
                    if transition.verdict().is_some() {
                        self.verdict_seen = true;
                    }
                    self.ctx.copy(
                        *transition,
                        Origin {
                            job: self.job.to_string(),
                            seq,
                        },
                    );
                }
                Some(Line::Result(result)) if result.task == self.task => {
                    self.result = Some(*result);
                }
                Some(Line::Refused(reason)) => {
                    self.refused = Some(drover_types::text::truncate_chars(
                        &drover_ray::clean(&reason),
                        2000,
                    ));
                }
                _ => {}
            }
        }
    }

    /// Reads the whole log (after the stream ended, or without one).
    fn catch_up(&mut self, jobs: &Jobs) {
        match jobs.logs(self.job) {
            Ok(text) => {
                self.position.restart();
                self.feed(text.as_bytes());
            }
            Err(e) => {
                tracing::debug!("cannot read the job's log: {e}");
                self.log_error = Some(e.to_string());
            }
        }
    }
}

/// How a driver ends a turn without the node's result.
type Ending<'a> = dyn Fn(&Context, Verdict, String, Option<FaultReport>) -> TurnReport + 'a;

/// Runs one turn as a Ray job and waits for its verdict.
pub fn run(ctx: &Context, spec: &TurnSpec, target: &Target) -> TurnReport {
    let started = now_ns();
    let clock = Instant::now();
    let task = spec.task.as_str();
    crate::shared::keep_prompt(ctx, spec);
    let settings = &target.settings;
    let ending = |ctx: &Context, status: Verdict, reason: String, fault: Option<FaultReport>| {
        let mut result = bare_result(ctx, task, status, reason, started);
        result.fault = fault;
        result.timings.duration_ms = clock.elapsed().as_millis() as u64;
        result
    };
    // Where the turn goes and what starts there, through the gate.
    let entrypoint = if settings.warm {
        settings.worker_entrypoint()
    } else {
        settings.entrypoint()
    };
    let (jobs, entrypoint) = match (settings.jobs(), entrypoint) {
        (Ok(jobs), Ok(entrypoint)) => (jobs, entrypoint.into_inner()),
        (Err(refused), _) | (_, Err(refused)) => {
            let r = ending(ctx, Verdict::Crashed, refused.to_string(), None);
            return conclude_without_result(ctx, task, r);
        }
    };
    let submission_id = safe_segment(&format!("drover-{}-{task}-{started}", ctx.run.id()));
    let submission_id = if submission_id.len() > 120 {
        format!("drover-{started}")
    } else {
        submission_id
    };
    let mut turn = TurnRequest::of_spec(spec, &submission_id, ctx.run.id(), &ctx.profile().name);
    turn.cwd = on_node(&spec.cwd, &ctx.project, &settings.project);
    turn.result_file = spec
        .result_file
        .as_ref()
        .map(|p| on_node(p, &ctx.project, &settings.project));
    let log = ctx
        .run
        .root()
        .join("logs")
        .join(format!("{submission_id}.log"));
    let record = RayRecord {
        address: settings.address.clone(),
        submission_id: submission_id.clone(),
        entrypoint: entrypoint.clone(),
        num_cpus: settings.num_cpus,
        resources: settings.resources.clone(),
        place: settings.place.clone(),
        pinned_node: target.node.clone(),
        submitted_ns: started,
        log: log.clone(),
        status: None,
        message: None,
        node_id: None,
        node_address: None,
        warm: None,
    };
    let turn_text = match serde_json::to_string(&turn) {
        Ok(text) if text.len() <= wire::TURN_MAX => text,
        Ok(_) => {
            let r = ending(
                ctx,
                Verdict::Crashed,
                format!(
                    "the turn is larger than a Ray job's environment can carry ({} bytes)",
                    wire::TURN_MAX
                ),
                None,
            );
            return conclude_without_result(ctx, task, r);
        }
        Err(e) => {
            return conclude_without_result(
                ctx,
                task,
                ending(ctx, Verdict::Crashed, e.to_string(), None),
            );
        }
    };
    if settings.warm {
        let given = warm::Given {
            jobs: &jobs,
            entrypoint,
            turn: &submission_id,
            document: &turn_text,
            log: &log,
            record,
        };
        return warm::run(ctx, spec, target, given, &ending);
    }
    write_record(&ctx.run, task, &record);
    let submission = Submission {
        entrypoint,
        submission_id: submission_id.clone(),
        runtime_env: serde_json::json!({"env_vars": {wire::TURN_ENV: turn_text}}),
        metadata: BTreeMap::from([
            ("drover_run".to_string(), ctx.run.id().to_string()),
            ("drover_task".to_string(), task.to_string()),
            ("drover_cli".to_string(), ctx.profile().name.clone()),
        ]),
        entrypoint_num_cpus: settings.num_cpus,
        entrypoint_resources: settings.resources.clone(),
        entrypoint_label_selector: target
            .node
            .as_ref()
            .map(|id| BTreeMap::from([("ray.io/node-id".to_string(), id.clone())])),
    };
    ctx.state(task, SeatState::Working, None, "ray:submit");
    ctx.run.lifecycle(
        task,
        "ray-submit",
        serde_json::json!({"address": settings.address, "submission_id": submission_id, "resources": settings.resources, "num_cpus": settings.num_cpus}),
    );
    if let Err(e) = submit(&jobs, &submission, spec) {
        let (reason, fault) = match &e {
            RayError::Unreachable { reason, .. } => (e.to_string(), Some(network_fault(reason))),
            _ => (format!("Ray did not take the job: {e}"), None),
        };
        ctx.state(task, SeatState::Unknown, None, "ray:submit-failed");
        return conclude_without_result(ctx, task, ending(ctx, Verdict::Crashed, reason, fault));
    }
    let mut copier = Copier::new(ctx, task, &submission_id, &log, false);
    let followed = follow(ctx, spec, &jobs, &mut copier);
    conclude(ctx, spec, copier, followed, record, &ending)
}

/// The verdict once following ended: the node's result (told from here),
/// else why there is none.
fn conclude(
    ctx: &Context,
    spec: &TurnSpec,
    mut copier: Copier<'_>,
    followed: Followed,
    mut record: RayRecord,
    ending: &Ending<'_>,
) -> TurnReport {
    let task = spec.task.as_str();
    let log = record.log.clone();
    let address = record.address.clone();
    let id = record.submission_id.clone();
    let verdict_seen = copier.verdict_seen;
    let remote = copier.result.take();
    note_job(&mut record, followed.info.as_ref());
    write_record(&ctx.run, task, &record);
    let result = match remote {
        // Ray signals the CLI as well as the node's drover, so the node may
        // report a failed turn rather than the interruption: say why.
        Some(mut remote) if followed.cancelled && remote.status != Verdict::Completed => {
            remote.reason = format!(
                "interrupted: drover was asked to stop, and stopped the Ray job (on the node: {})",
                remote.reason
            );
            from_remote(ctx, remote, &log)
        }
        Some(remote) => from_remote(ctx, remote, &log),
        None => {
            let (status, reason, fault) = if let Some(reason) = &followed.unreachable {
                (
                    Verdict::Crashed,
                    format!("lost the Ray cluster at {address}: {reason}"),
                    Some(network_fault(reason)),
                )
            } else if let Some(which) = followed.timed_out {
                (
                    Verdict::Timeout,
                    format!(
                        "the session deadline of {} passed ({which} clock) and the Ray job was stopped",
                        shared::humanize(spec.timeout)
                    ),
                    None,
                )
            } else if followed.cancelled {
                (
                    Verdict::Crashed,
                    "interrupted: drover was asked to stop, and stopped the Ray job".to_string(),
                    None,
                )
            } else {
                match copier.refused.take() {
                    Some(why) => (
                        Verdict::Crashed,
                        format!("the Ray worker could not run the turn: {why}"),
                        None,
                    ),
                    None => {
                        without_result(followed.info.as_ref(), &id, copier.log_error.as_deref())
                    }
                }
            };
            let mut r = ending(ctx, status, reason, fault);
            r.logs = vec![log.clone()];
            r
        }
    };
    finish(ctx, task, result, verdict_seen)
}

fn submit(jobs: &Jobs, submission: &Submission, spec: &TurnSpec) -> Result<Submitted, RayError> {
    let since = Instant::now();
    loop {
        match jobs.submit(submission) {
            Err(RayError::Unreachable { .. })
                if since.elapsed() < SUBMIT_PATIENCE.min(spec.timeout) && !spec.cancelled() =>
            {
                std::thread::sleep(RETRY_EVERY);
            }
            other => return other,
        }
    }
}

fn follow(ctx: &Context, spec: &TurnSpec, jobs: &Jobs, copier: &mut Copier<'_>) -> Followed {
    let task = spec.task.as_str();
    let job = copier.job.to_string();
    let mut watchdog = Watchdog::new(Deadline::after(spec.timeout + LOCAL_MARGIN));
    let url = jobs.tail_url(&job);
    let mut followed = Followed::default();
    let mut tail: Option<Tail> = None;
    let mut last_contact = Instant::now();
    let mut last_check = Instant::now();
    let mut stop_sent: Option<Instant> = None;
    loop {
        if stop_sent.is_none() {
            // No transcript here: the node holds the budget and samples it.
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
                let stopped = jobs.stop(&job);
                ctx.run.lifecycle(
                    task,
                    "ray-stop",
                    serde_json::json!({"why": why, "answer": stopped.as_ref().map_err(ToString::to_string)}),
                );
                stop_sent = Some(Instant::now());
            }
        }
        if stop_sent.is_some_and(|t| t.elapsed() >= STOP_WAIT) {
            copier.catch_up(jobs);
            followed.info = jobs.info(&job).ok().flatten();
            return followed;
        }
        let mut check_now = false;
        match &mut tail {
            None => match Tail::connect(&url, POLL) {
                Ok(t) => {
                    copier.position.restart();
                    tail = Some(t);
                    last_contact = Instant::now();
                }
                Err(e) => {
                    tracing::debug!("log tail: {e}");
                    check_now = true;
                }
            },
            Some(t) => match t.receive() {
                Next::Text(text) => {
                    last_contact = Instant::now();
                    copier.feed(text.as_bytes());
                    check_now = copier.result.is_some();
                }
                // Ray's tail closes seconds after the job ends (it polls the
                // file and the job's status once a second each): once the
                // result is in, ask for the status at once instead.
                Next::Idle => {
                    check_now = last_check.elapsed() >= CHECK_QUIET_EVERY
                        || (copier.result.is_some() && last_check.elapsed() >= SETTLING_EVERY)
                }
                Next::Closed => {
                    tail = None;
                    check_now = true;
                }
                Next::Broken(e) => {
                    tracing::debug!("log tail broke: {e}");
                    tail = None;
                    check_now = true;
                }
            },
        }
        if !check_now {
            continue;
        }
        last_check = Instant::now();
        match jobs.info(&job) {
            Ok(Some(info)) if info.status.terminal() => {
                copier.catch_up(jobs);
                followed.info = Some(info);
                return followed;
            }
            Ok(None) => {
                followed.info = None;
                return followed;
            }
            Ok(Some(_)) => last_contact = Instant::now(),
            Err(RayError::Unreachable { reason, .. }) => {
                if last_contact.elapsed() >= PATIENCE {
                    followed.unreachable = Some(reason);
                    return followed;
                }
            }
            Err(e) => tracing::debug!("job status: {e}"),
        }
        if tail.is_none() {
            std::thread::sleep(RETRY_EVERY);
        } else if copier.result.is_some() {
            std::thread::sleep(SETTLING_EVERY);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_paths_move_to_the_nodes_project() {
        let (local, node) = (Path::new("/home/me/app"), Path::new("/srv/app"));
        assert_eq!(
            on_node(Path::new("/home/me/app/sub/x.json"), local, node),
            PathBuf::from("/srv/app/sub/x.json")
        );
        assert_eq!(
            on_node(Path::new("/tmp/y"), local, node),
            PathBuf::from("/tmp/y")
        );
    }

    #[test]
    fn a_job_without_a_result_is_crashed_with_rays_reason() {
        let info = JobInfo {
            status: JobStatus::Failed,
            message: Some("Job entrypoint command failed with exit code 1, last available logs:\nerror: unknown CLI profile 'nope'\n".to_string()),
            error_type: None,
            driver_node_id: None,
            driver_agent_http_address: None,
            driver_exit_code: Some(1),
        };
        let (status, reason) = ending::from_job(Some(&info), "j");
        assert_eq!(status, Verdict::Crashed);
        assert_eq!(
            reason,
            "the Ray job failed: error: unknown CLI profile 'nope'"
        );
        assert!(
            ending::from_job(None, "j")
                .1
                .contains("does not know the job j")
        );
    }

    #[test]
    fn a_succeeded_job_whose_log_is_out_of_reach_is_a_network_fault() {
        let info = JobInfo {
            status: JobStatus::Succeeded,
            message: Some("Job finished successfully.".to_string()),
            error_type: None,
            driver_node_id: None,
            driver_agent_http_address: None,
            driver_exit_code: Some(0),
        };
        let ray_says = "Ray refused GET /api/jobs/j/logs (HTTP 500): aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host 127.0.0.4:52365";
        let (status, reason, fault) = without_result(Some(&info), "j", Some(ray_says));
        assert_eq!(status, Verdict::Crashed);
        assert!(
            reason.contains("Cannot connect to host 127.0.0.4:52365"),
            "{reason}"
        );
        let fault = fault.expect("a fault");
        assert_eq!(fault.kind, drover_types::wit::FaultKind::Network);
        assert_eq!(fault.rule, "ray:log-unreachable");
        // A job that ran without a result and whose log was read stays a crash.
        let (_, reason, fault) = without_result(Some(&info), "j", None);
        assert!(reason.contains("without a result"), "{reason}");
        assert!(fault.is_none());
    }
}
