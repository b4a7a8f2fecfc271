//! Reconciling a run from its files alone, for `drover status` after the
//! driving drover died (killed, crashed, host rebooted).
//!
//! A task without a verdict whose driver is gone is settled from evidence:
//! the relay's event files, the headless turn's output files (read by the
//! adapter, exactly as the live driver would have), the result file, and
//! whether the CLI (its process, or its pane) is still there. A CLI that is
//! still working keeps its task open; nothing is guessed. Once a pane run
//! is settled, its pane and session are closed the way a live driver would
//! (identity-checked), unless the run was started with `--keep`.

use std::path::Path;

use serde::Serialize;

use super::records::{AgentRecord, PaneRecord, ProcessRecord, Record};
use super::usage::Spent;
use super::verdict::{self, ResultState};
use super::{Context, Timings, TurnReport, Verdict, conversations};
use drover_gate::Provenance;
use drover_profile::Catalog;
use drover_run::status::TaskView;
use drover_run::{EventWatcher, HookRecord, RunDir, RunInfo, now_ns, read_transitions};
use drover_sandbox::Sandbox;
use drover_types::wit;
use drover_types::wit::SeatState;
use drover_workspace::herdr::HerdrError;
use drover_workspace::process::{self, Identity};
use drover_workspace::tmux::MuxError;
use drover_workspace::{self as workspace, WorkspaceError, WorkspaceKind};

#[derive(Debug, Clone, Serialize)]
pub struct TaskStatus {
    pub task: String,
    pub state: Option<String>,
    pub prompt_kind: Option<String>,
    /// The line that showed a blocked task was blocked.
    pub evidence: Option<String>,
    pub verdict: Option<String>,
    pub reason: Option<String>,
    /// What the session cost, once its verdict recorded it.
    pub cost_usd: Option<f64>,
    /// The cost is of counts read from printed text (`[turn.usage]`): an
    /// estimate.
    pub cost_approximate: bool,
    /// True when this status was settled by reconciliation just now.
    pub reconciled: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunStatus {
    pub run_id: String,
    pub cli: String,
    pub workspace: WorkspaceKind,
    pub created_ns: u64,
    pub driver_alive: bool,
    /// `run.json` was not sealed by this user's drover (a checkout may have
    /// committed the run): it is shown as recorded and nothing it names is
    /// contacted, closed or signalled.
    pub foreign: bool,
    pub tasks: Vec<TaskStatus>,
}

/// What a task recorded at launch so it can be settled without its driver.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct TaskSpec {
    pub result_file: Option<std::path::PathBuf>,
    pub launched_ns: u64,
    /// `drover run --keep`: the pane stays after the verdict.
    #[serde(default)]
    pub keep: bool,
}

pub fn write_task_spec(run: &RunDir, task: &str, spec: &TaskSpec) {
    let _ = drover_run::write_json_atomic(&run.task_dir(task).join("spec.json"), spec);
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

pub fn driver_alive(info: &RunInfo) -> bool {
    match info.driver_start {
        Some(start) => process::alive(Identity {
            pid: info.driver_pid,
            start,
        }),
        None => false,
    }
}

/// The status of every task of a run, settling what can be settled.
pub fn status(
    run: &RunDir,
    mut load: impl FnMut(&str) -> Option<Context>,
) -> std::io::Result<RunStatus> {
    let sourced = run.read_info_sourced()?;
    let foreign = sourced.from != Provenance::SealedRecord;
    let info = sourced.value;
    let alive = !foreign && driver_alive(&info);
    let mut tasks = Vec::new();
    let mut context: Option<Context> = None;
    for task in &info.tasks {
        let view = TaskView::of(task, &read_transitions(&run.journal_path()));
        let recorded = read_json::<TurnReport>(&run.task_dir(task).join("session.json"));
        let mut status = TaskStatus {
            task: task.clone(),
            state: view.state,
            prompt_kind: view.prompt_kind,
            evidence: view.evidence,
            verdict: view.verdict,
            cost_usd: recorded.as_ref().and_then(|r| r.cost_usd),
            cost_approximate: recorded.as_ref().is_some_and(|r| r.usage_approximate),
            reason: recorded.map(|r| r.reason),
            reconciled: false,
        };
        // A seat's run has no driver between messages by design: nothing to settle.
        if status.verdict.is_none() && !alive && !foreign && !is_seat_run(&info) {
            if context.is_none() {
                context = load(&info.cli);
            }
            let settled = context.as_ref().and_then(|ctx| {
                if info.workspace == WorkspaceKind::Ray {
                    crate::ray::driver::settle(ctx, task)
                } else {
                    settle(ctx, &info, task)
                }
            });
            // Settling may have recorded states (a Ray job's journal lines
            // copied home) even when it could not conclude.
            let view = TaskView::of(task, &read_transitions(&run.journal_path()));
            status.state = view.state;
            status.prompt_kind = view.prompt_kind;
            status.evidence = view.evidence;
            if let Some(result) = settled {
                status.verdict = Some(result.status.as_str().to_string());
                status.reason = Some(result.reason.clone());
                status.cost_usd = result.cost_usd;
                status.cost_approximate = result.usage_approximate;
                status.reconciled = true;
            }
        }
        tasks.push(status);
    }
    Ok(RunStatus {
        run_id: info.run_id.clone(),
        cli: info.cli.clone(),
        workspace: info.workspace,
        created_ns: info.created_ns,
        driver_alive: alive,
        foreign,
        tasks,
    })
}

/// Runs `drover up` made (`seat-<nick>-…`).
pub fn is_seat_run(info: &RunInfo) -> bool {
    info.run_id.starts_with("seat-")
}

/// Settles runs one after another, loading the sandbox, the profiles and
/// each run's component only when a run needs settling.
pub struct Settler {
    project: std::path::PathBuf,
    loaded: Option<(Sandbox, Catalog)>,
}

impl Settler {
    pub fn new(project: &Path) -> Settler {
        Settler {
            project: project.to_path_buf(),
            loaded: None,
        }
    }

    /// [`status`] of `run`, settling what can be settled.
    pub fn status(&mut self, run: &RunDir) -> std::io::Result<RunStatus> {
        let project = self.project.clone();
        let loaded = &mut self.loaded;
        status(run, |cli| {
            if loaded.is_none() {
                let sandbox = Sandbox::with_default_cache().ok()?;
                *loaded = Some((sandbox, Catalog::load(&project)));
            }
            let (sandbox, catalog) = loaded.as_ref()?;
            let profile = catalog.find(cli)?.clone();
            // Settling parses what the run left; it launches nothing, so
            // it needs no trust (and its context could not spawn without).
            let prepared = crate::launch::Prepared::assess(&project, profile, sandbox).ok()?;
            Some(Context::new(project.clone(), run.clone(), prepared))
        })
    }
}

/// How long a settled run's CLI gets to exit before it is force-killed.
const TEARDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Settles one orphaned task, or returns `None` when its CLI still runs.
/// The verdict comes from the same rules the live drivers use
/// ([`crate::verdict`]), on the evidence the run left.
fn settle(ctx: &Context, info: &RunInfo, task: &str) -> Option<TurnReport> {
    let run = &ctx.run;
    let spec: Option<TaskSpec> = read_json(&run.task_dir(task).join("spec.json"));
    let launched = spec.as_ref().map_or(0, |s| s.launched_ns);
    let mut watcher = EventWatcher::new(
        run.events_dir(),
        crate::drops::DropParser::for_seat(run.root(), ctx.profile(), ctx.adapter()),
    )
    .since(launched);
    let events: Vec<HookRecord> = watcher
        .poll()
        .into_iter()
        .filter(|e| e.task == task && e.ts >= launched)
        .collect();
    let session_id = events
        .iter()
        .rev()
        .find_map(|e| e.session_id.clone().filter(|s| !s.is_empty()));
    let transcript = events
        .iter()
        .rev()
        .find_map(|e| e.transcript_path.clone().filter(|s| !s.is_empty()));
    let stop = events
        .iter()
        .any(|e| e.kind == wit::CanonicalEvent::Stop && !e.subagent);
    let blocked = events.iter().rev().find_map(|e| e.prompt_kind);
    let asked = spec.as_ref().and_then(|s| s.result_file.clone());
    let result_text = asked
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .map(|t| serde_json::from_str(&t).unwrap_or(serde_json::Value::String(t)));
    let result_state = ResultState::of(asked.as_ref(), result_text.is_some());

    let mut result = TurnReport {
        status: Verdict::Crashed,
        run_id: run.id().to_string(),
        task: task.to_string(),
        cli: info.cli.clone(),
        workspace: info.workspace,
        reason: String::new(),
        session_id,
        transcript_path: transcript.clone(),
        reply: None,
        usage: None,
        cost_usd: None,
        usage_approximate: false,
        fault: None,
        blocked: None,
        stop_seen: stop,
        result: None,
        exit_code: None,
        budget_weighted: None,
        timings: Timings {
            started_ns: launched,
            ended_ns: now_ns(),
            duration_ms: 0,
            timeout_clock: None,
        },
        logs: Vec::new(),
    };

    let ruling = match info.workspace {
        WorkspaceKind::Headless => {
            let process = ProcessRecord::read(run, task)?;
            if process.identity.is_some_and(process::alive) {
                ctx.state(
                    task,
                    SeatState::Working,
                    None,
                    "reconcile:cli-still-running",
                );
                return None;
            }
            result.logs = vec![run.stdout_log(task), run.stderr_log(task)];
            // The conversation's earlier turns, as the live driver passes
            // them: an output that reports a running total (Codex after a
            // resume) has them taken off, not counted again.
            let turn = crate::headless::parse_outcome(
                ctx,
                task,
                (process.stdout_offset, process.stderr_offset),
                &[
                    result.session_id.as_deref(),
                    process.conversation.as_deref(),
                ],
                None,
            );
            result.reply = turn.reply.clone();
            if result.session_id.is_none() {
                result.session_id = turn.conversation_id.clone();
            }
            let spent = turn.usage.as_ref().map(Spent::of_report);
            result.usage = spent.map(|s| s.tokens);
            result.cost_usd = spent.and_then(|s| s.cost_usd);
            verdict::of_turn(&turn, None, blocked, &result_state)
        }
        WorkspaceKind::Acp => {
            let agent = AgentRecord::read(run, task);
            if agent
                .as_ref()
                .and_then(|a| a.identity)
                .is_some_and(process::alive)
            {
                // Its stdin closed with its driver: it is on its way out.
                return None;
            }
            if result.session_id.is_none() {
                result.session_id = agent.and_then(|a| a.session);
            }
            let traffic = super::acp::traffic_log(ctx, task);
            result.logs = vec![run.stderr_log(task), traffic.clone()];
            match super::acp::last_stop_reason(&traffic) {
                Some(reason) => verdict::of_stop_reason(&reason, &result_state),
                None => verdict::gone("the agent is gone without finishing its turn"),
            }
        }
        WorkspaceKind::Jules => {
            if AgentRecord::read(run, task)
                .and_then(|a| a.driver)
                .is_some_and(process::alive)
            {
                return None;
            }
            // The session goes on in Jules's cloud; what is gone is the
            // drover that followed it.
            verdict::gone(
                "the drover process following the Jules session is gone (the session goes on in Jules)",
            )
        }
        kind if kind.has_panes() => {
            // Only a pane this user's drover recorded is asked after or closed.
            let pane = PaneRecord::read(run, task).map(|r| r.pane);
            let ws = match workspace::open_panes(info.workspace, &ctx.project) {
                Ok(ws) => Some(ws),
                // No multiplexer at all: its panes went with it.
                Err(
                    WorkspaceError::Mux(MuxError::Missing)
                    | WorkspaceError::Herdr(HerdrError::NotRunning(_)),
                ) => None,
                // Could not ask is not gone.
                Err(_) => return None,
            };
            if let (Some(pane), Some(ws)) = (&pane, &ws) {
                match ws.pane_alive(pane) {
                    Ok(true) if !stop => {
                        ctx.state(
                            task,
                            SeatState::Working,
                            None,
                            "reconcile:seat-still-running",
                        );
                        return None;
                    }
                    Err(_) => return None,
                    _ => {}
                }
            }
            // The verdict is final: nothing of the run may keep running.
            let keep = spec.as_ref().is_some_and(|s| s.keep);
            if let (Some(pane), Some(ws), false) = (&pane, &ws, keep) {
                super::interactive::teardown(
                    ctx,
                    task,
                    ws.as_ref(),
                    pane,
                    Provenance::SealedRecord,
                    TEARDOWN_GRACE,
                );
            }
            result.logs = vec![run.log(task)];
            if let Some(t) = &transcript {
                // A record names the path: it is read only where a CLI
                // keeps files. The transcript holds the whole conversation:
                // the turn is what it adds to the turns recorded before.
                let whole = super::usage::confine(ctx, &ctx.project, &[], Path::new(t))
                    .and_then(|t| {
                        super::usage::read(
                            ctx.adapter(),
                            &ctx.profile().usage_parser,
                            std::slice::from_ref(&t),
                        )
                    })
                    .as_ref()
                    .map(Spent::of_report);
                let prior = conversations::prior_usage_of(
                    &ctx.project,
                    &ctx.profile().name,
                    &[result.session_id.as_deref()],
                );
                let spent = verdict::turn_usage(None, whole, prior);
                result.usage = spent.map(|s| s.tokens);
                result.cost_usd = spent.and_then(|s| s.cost_usd);
            }
            if stop {
                verdict::finished(Some("Stop hook"), &result_state)
            } else {
                result.blocked = blocked;
                verdict::gone("the seat is gone without finishing its turn")
            }
        }
        // A Ray task is settled by its own driver ([`status`] sends it
        // there); no other kind is left.
        _ => return None,
    };
    let ruling = ruling.reconciled();
    result.status = ruling.verdict;
    result.reason = ruling.reason;
    if ruling.blocked.is_some() {
        result.blocked = ruling.blocked;
    }
    if asked.is_some() {
        result.result = result_text;
    }
    ctx.state(
        task,
        result.seat_state(),
        result.blocked.map(|k| k.as_str()),
        "reconcile",
    );
    if result.status != Verdict::Completed {
        let mut lines = Vec::new();
        for log in &result.logs {
            lines.extend(super::faults::tail_lines(log));
        }
        result.fault = super::faults::classify(ctx, task, &lines);
    }
    let path = run.task_dir(task).join("session.json");
    let _ = drover_run::write_json_atomic(&path, &result);
    ctx.verdict(
        task,
        result.status,
        "reconcile",
        serde_json::json!({"reason": result.reason}),
    );
    Some(result)
}

#[cfg(test)]
mod tests;
