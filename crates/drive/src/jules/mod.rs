//! The jules driver: one turn of a seat whose work runs in Google's cloud.
//! The first message creates a Jules session on the seat's repository and
//! branch (with plan approval required); a later one is `sendMessage` to
//! that session. The turn then follows the session by polling its state
//! and activities, and maps them onto seat states:
//!
//! | Jules | seat |
//! |---|---|
//! | `QUEUED`, `PLANNING`, `IN_PROGRESS` | `working` |
//! | `AWAITING_PLAN_APPROVAL` | `blocked` (permission) on the plan, a question `drover answer` or `[policy]` answers: approve = `approvePlan`, reject = a message saying so (Jules revises the plan) |
//! | `AWAITING_USER_FEEDBACK` | the turn ends `stalled`, `blocked` (question) on Jules's message; the next `drover send` answers it |
//! | `COMPLETED` | `done`: the turn is `completed`, its reply the pull request's URL (else the session's), its result the pull requests and the last patch |
//! | `FAILED` | the turn is `stalled` with the failure's reason as its fault |
//! | `PAUSED` | the turn is `stalled` |
//!
//! The process that follows the session holds the seat's question: it
//! records itself in `agent.json` so `drover answer` can leave it an answer
//! ([`drover_run::question`]). Refusals of the API become typed faults
//! (auth, rate limit, quota, server error, network); throttling and server
//! errors are retried with a growing wait that honours the API's
//! `Retry-After` (or its `RetryInfo`).

mod follow;

use std::time::Duration;

use drover_run::now_ns;
use drover_trust::policy::Policy;
use drover_types::wit::PromptKind;
use drover_workspace::jules::{Client, JulesError};
use serde_json::{Value, json};

use crate::records::{AgentRecord, Record as _};
use crate::{Context, Conversation, FaultReport, TurnReport, TurnSpec, Verdict, conversations};

/// The message a rejected plan sends: Jules answers a message in
/// `AWAITING_PLAN_APPROVAL` by revising its plan.
pub const REJECTION: &str =
    "I do not approve this plan. Do not carry it out; propose a different plan.";

/// Where a jules turn goes: the API, how often to look, and the repository
/// a new session starts from.
pub struct Target {
    pub client: Client,
    pub poll: Duration,
    /// `sources/…`, as the API named the connected repository.
    pub source: String,
    pub branch: String,
    /// Jules opens a pull request when its change is ready.
    pub auto_pr: bool,
}

/// How a turn ended.
#[derive(Debug)]
pub(crate) enum End {
    Completed(Box<follow::Outcome>),
    Failed(String),
    Asks(String),
    Paused,
    Fault(JulesError),
    Timeout,
    Interrupted,
}

/// Runs one message as a turn and reports it (journal, `session.json`,
/// the conversation record).
pub fn run(ctx: &Context, spec: &TurnSpec, target: &Target, policy: &Policy) -> TurnReport {
    let task = spec.task.as_str();
    let started = now_ns();
    crate::shared::keep_prompt(ctx, spec);
    let resume = match &spec.conversation {
        Conversation::Resume(id) => Some(id.clone()),
        _ => None,
    };
    let mut follower = follow::Follower::new(ctx, spec, target, policy);
    hold(ctx, task, resume.as_deref());
    let end = follower.turn(resume);
    let session = follower.session().map(str::to_string);
    conclude(ctx, spec, started, end, session)
}

/// Records this process as the one holding the seat's question.
pub(crate) fn hold(ctx: &Context, task: &str, session: Option<&str>) {
    let me = std::process::id();
    let identity = drover_workspace::process::identity(me);
    let record = AgentRecord {
        pid: me,
        identity,
        driver: identity,
        argv: Vec::new(),
        stderr_offset: 0,
        session: session.map(str::to_string),
        agent: None,
    };
    if let Err(e) = record.write(&ctx.run, task) {
        tracing::warn!("cannot record the jules turn's holder: {e}");
    }
}

fn conclude(
    ctx: &Context,
    spec: &TurnSpec,
    started: u64,
    end: End,
    session: Option<String>,
) -> TurnReport {
    let task = spec.task.as_str();
    let mut report = TurnReport::of_run(
        ctx,
        task,
        drover_types::WorkspaceKind::Jules,
        Verdict::Crashed,
        String::new(),
        started,
    );
    report.session_id = session.clone();
    let state_source;
    match end {
        End::Completed(outcome) => {
            report.status = Verdict::Completed;
            report.stop_seen = true;
            report.reason = match outcome.pull_requests.first() {
                Some(pr) => format!("Jules finished and opened {}", pr.url),
                None if outcome.patch.is_some() => {
                    "Jules finished with a patch (no pull request)".to_string()
                }
                None => "Jules finished".to_string(),
            };
            report.reply = Some(
                outcome
                    .pull_requests
                    .first()
                    .map(|pr| pr.url.clone())
                    .or_else(|| outcome.message.clone())
                    .unwrap_or_else(|| outcome.url.clone()),
            );
            report.result = Some(json!({
                "session": session,
                "url": outcome.url,
                "pull_requests": outcome.pull_requests,
                "patch": outcome.patch,
            }));
            state_source = "jules:COMPLETED";
        }
        End::Failed(reason) => {
            report.status = Verdict::Stalled;
            report.reason = format!("the Jules session failed: {reason}");
            report.fault = Some(FaultReport {
                kind: drover_types::wit::FaultKind::Unknown,
                evidence: reason,
                retry_after_secs: None,
                rule: "jules/session-failed".to_string(),
                hint: None,
            });
            state_source = "jules:FAILED";
        }
        End::Asks(message) => {
            report.status = Verdict::Stalled;
            report.blocked = Some(PromptKind::Question);
            report.reason = format!(
                "Jules waits for feedback (answer with `drover send {task} …`): {}",
                drover_types::text::truncate_chars(&message, 200)
            );
            report.reply = Some(message.clone());
            ctx.blocked(
                task,
                PromptKind::Question.as_str(),
                "jules:AWAITING_USER_FEEDBACK",
                Some(&message),
            );
            state_source = "jules:AWAITING_USER_FEEDBACK";
        }
        End::Paused => {
            report.status = Verdict::Stalled;
            report.reason = "the Jules session is paused".to_string();
            state_source = "jules:PAUSED";
        }
        End::Fault(error) => {
            report.status = Verdict::Crashed;
            report.reason = error.to_string();
            report.fault = Some(FaultReport {
                kind: error.fault_kind(),
                evidence: error.to_string(),
                retry_after_secs: error
                    .retry_after()
                    .map(|d| u32::try_from(d.as_secs()).unwrap_or(u32::MAX)),
                rule: error.rule(),
                hint: None,
            });
            state_source = "jules:error";
        }
        End::Timeout => {
            report.status = Verdict::Timeout;
            report.reason = format!(
                "the session did not finish within {} (it goes on in Jules; the next `drover send` is a message to it)",
                crate::shared::humanize(spec.timeout)
            );
            report.timings.timeout_clock = Some("monotonic".to_string());
            state_source = "jules:timeout";
        }
        End::Interrupted => {
            report.status = Verdict::Crashed;
            report.reason =
                "interrupted (the session goes on in Jules; the next `drover send` is a message to it)"
                    .to_string();
            state_source = "jules:interrupted";
        }
    }
    if report.blocked.is_none() {
        ctx.state(task, report.seat_state(), None, state_source);
    }
    crate::record_verdict(ctx, &report);
    if let Some(id) = &report.session_id {
        conversations::record_turn(ctx, task, id, None, None);
    }
    report
}

/// The journal detail of an activity: its kind and what it says.
pub(crate) fn activity_detail(activity: &drover_workspace::jules::api::Activity) -> Value {
    use drover_workspace::jules::client::clean;
    let text = activity
        .progress_updated
        .as_ref()
        .map(|p| format!("{} {}", p.title, p.description))
        .or_else(|| {
            activity
                .agent_messaged
                .as_ref()
                .map(|m| m.agent_message.clone())
        })
        .or_else(|| activity.session_failed.as_ref().map(|f| f.reason.clone()))
        .unwrap_or_else(|| activity.description.clone());
    json!({
        "activity": clean(activity.key(), 200),
        "kind": activity.kind(),
        "originator": clean(&activity.originator, 40),
        "text": clean(&text, 500),
    })
}
