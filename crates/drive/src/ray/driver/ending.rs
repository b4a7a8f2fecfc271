//! How a Ray turn ends: from the node's result line, from what Ray says about
//! the job when there is none, and settling a task whose drover is gone.

use std::path::Path;

use crate::{Context, FaultReport, TurnReport, Verdict, conversations};
use drover_ray::jobs::{JobInfo, JobStatus, Jobs};
use drover_run::now_ns;
use drover_types::wit;

use super::{Copier, RayRecord, acting, read_record, write_record};
use crate::ray::mailbox;

/// Bytes of a warm turn's output read when settling.
const LOG_MAX: u64 = 64 << 20;

pub(super) fn network_fault(reason: &str) -> FaultReport {
    FaultReport {
        kind: wit::FaultKind::Network,
        evidence: drover_types::text::truncate_chars(&drover_ray::clean(reason), 500),
        retry_after_secs: None,
        rule: "ray:unreachable".to_string(),
        hint: None,
    }
}

pub(super) fn note_job(record: &mut RayRecord, info: Option<&JobInfo>) {
    if let Some(info) = info {
        record.status = Some(info.status);
        record.message = info.message.as_deref().map(drover_ray::jobs::summarize);
        record.node_id = info.driver_node_id.clone();
        record.node_address = info.driver_agent_http_address.clone();
    }
}

/// The verdict when no result line was read: a job Ray says succeeded
/// whose log could not be read from its node (`log_error`, Ray's own
/// message) is a `network` fault, not a crash of drover on the node.
pub(super) fn without_result(
    info: Option<&JobInfo>,
    id: &str,
    log_error: Option<&str>,
) -> (Verdict, String, Option<FaultReport>) {
    match (info, log_error) {
        (Some(info), Some(error)) if info.status == JobStatus::Succeeded => (
            Verdict::Crashed,
            format!(
                "the Ray job succeeded but its log could not be read from its node: {}",
                drover_ray::clean(error)
            ),
            Some(FaultReport {
                kind: wit::FaultKind::Network,
                evidence: drover_types::text::truncate_chars(&drover_ray::clean(error), 500),
                retry_after_secs: None,
                rule: "ray:log-unreachable".to_string(),
                hint: None,
            }),
        ),
        _ => {
            let (status, reason) = from_job(info, id);
            (status, reason, None)
        }
    }
}

/// The verdict when the node's drover left no result line.
pub(super) fn from_job(info: Option<&JobInfo>, id: &str) -> (Verdict, String) {
    let Some(info) = info else {
        return (
            Verdict::Crashed,
            format!("Ray does not know the job {id} (was the cluster restarted?)"),
        );
    };
    let message = info
        .message
        .as_deref()
        .map(drover_ray::jobs::summarize)
        .filter(|m| !m.is_empty());
    let reason = match info.status {
        JobStatus::Failed => format!(
            "the Ray job failed: {}",
            message.unwrap_or_else(|| "Ray gave no reason".to_string())
        ),
        JobStatus::Stopped => "the Ray job was stopped".to_string(),
        JobStatus::Succeeded => {
            "the Ray job ended without a result from drover on the node".to_string()
        }
        JobStatus::Pending | JobStatus::Running => format!(
            "the Ray job is still {} (drover stopped waiting)",
            info.status.as_str()
        ),
    };
    (Verdict::Crashed, reason)
}

pub(super) fn bare_result(
    ctx: &Context,
    task: &str,
    status: Verdict,
    reason: String,
    started: u64,
) -> TurnReport {
    TurnReport::of_run(
        ctx,
        task,
        drover_types::WorkspaceKind::Ray,
        status,
        reason,
        started,
    )
}

/// The node's result, told from this machine: this run, this workspace,
/// this machine's copy of the log.
pub(super) fn from_remote(ctx: &Context, mut remote: TurnReport, log: &Path) -> TurnReport {
    remote.run_id = ctx.run.id().to_string();
    remote.workspace = drover_types::WorkspaceKind::Ray;
    remote.logs = vec![log.to_path_buf()];
    remote
}

pub(super) fn conclude_without_result(ctx: &Context, task: &str, result: TurnReport) -> TurnReport {
    finish(ctx, task, result, false)
}

/// Journal (unless the node's verdict was copied), `session.json`, and the
/// conversation record `--continue` reads.
pub(super) fn finish(
    ctx: &Context,
    task: &str,
    result: TurnReport,
    verdict_copied: bool,
) -> TurnReport {
    if !verdict_copied {
        ctx.state(
            task,
            result.seat_state(),
            result.blocked.map(|k| k.as_str()),
            "ray",
        );
    }
    crate::record_verdict(ctx, &result);
    if let Some(id) = &result.session_id {
        conversations::record_turn(ctx, task, id, result.usage, result.cost_usd);
    }
    result
}

/// Settles a task whose driver died, from Ray: copies the journal lines the
/// job printed since, and concludes once the job has ended. `None` while
/// the job runs or the cluster cannot be asked (the task stays open).
pub fn settle(ctx: &Context, task: &str) -> Option<TurnReport> {
    let Some(sourced) = read_record(&ctx.run, task) else {
        let started = now_ns();
        let result = bare_result(
            ctx,
            task,
            Verdict::Crashed,
            "drover stopped before it submitted the Ray job (reconciled)".to_string(),
            started,
        );
        return Some(finish(ctx, task, result, false));
    };
    // A record this drover did not seal names no cluster to ask and no
    // file to write: the task stays open, shown as recorded.
    let acting = match acting(&ctx.run, &sourced) {
        Ok(acting) => acting,
        Err(refused) => {
            ctx.run.lifecycle(
                task,
                "settle-refused",
                serde_json::json!({"why": refused.to_string()}),
            );
            return None;
        }
    };
    let mut record = sourced.value;
    let jobs = Jobs::new(&acting.address);
    let info = match jobs.info(&record.submission_id) {
        Ok(info) => info,
        Err(e) => {
            tracing::debug!("cannot settle {task} from Ray yet: {e}");
            return None;
        }
    };
    let id = record
        .warm
        .as_ref()
        .map_or(&record.submission_id, |w| &w.turn)
        .clone();
    let mut copier = Copier::new(ctx, task, &id, &acting.log, true);
    match (&acting.mailbox, &record.warm) {
        // A warm turn's lines are in its worker's mailbox; the worker's job
        // outlives the turn, so the result decides, not the job.
        (Some(mailbox), Some(warm)) => {
            if let Ok(bytes) = mailbox::read_from(&mailbox.out_file(&warm.turn), 0, LOG_MAX) {
                copier.feed(&bytes);
            }
            let ended = copier.result.is_some() || copier.refused.is_some();
            if !ended && info.as_ref().is_some_and(|i| !i.status.terminal()) {
                return None;
            }
        }
        _ => {
            if info.is_some() {
                copier.catch_up(&jobs);
            }
            if info.as_ref().is_some_and(|i| !i.status.terminal()) {
                return None;
            }
        }
    }
    note_job(&mut record, info.as_ref());
    write_record(&ctx.run, task, &record);
    let verdict_seen = copier.verdict_seen;
    let result = match copier.result.take() {
        Some(remote) => {
            let mut r = from_remote(ctx, remote, &record.log);
            r.reason = format!("{} (reconciled from Ray)", r.reason);
            r
        }
        None => {
            let (status, reason, fault) = match copier.refused.take() {
                Some(why) => (
                    Verdict::Crashed,
                    format!("the Ray worker could not run the turn: {why}"),
                    None,
                ),
                None => without_result(
                    info.as_ref(),
                    &record.submission_id,
                    copier.log_error.as_deref(),
                ),
            };
            let mut r = bare_result(
                ctx,
                task,
                status,
                format!("{reason} (reconciled)"),
                record.submitted_ns,
            );
            r.fault = fault;
            r.logs = vec![record.log.clone()];
            r
        }
    };
    Some(finish(ctx, task, result, verdict_seen))
}
