//! The acp driver: a CLI's Agent Client Protocol mode as a long-lived agent
//! process, one `session/prompt` per message.
//!
//! - **Opening** ([`open`]): the adapter's ACP command is started by the acp
//!   workspace, `initialize`d, and given `session/new` — or `session/load`
//!   when the seat continues a saved conversation (the ACP session id is the
//!   conversation id drover records).
//! - **A turn** ([`turn`]): the prompt's response ends it, and its
//!   `stopReason` decides: `end_turn` is done (then the result file and its
//!   nudges, as on the other workspaces), anything else stalled; an error
//!   response is a failed turn (stalled, the agent lives on); a closed
//!   connection or an exited agent is crashed. `session/update` items keep
//!   the seat `working`, and tool calls, plans and usage updates go into the
//!   journal as `event` lines.
//! - **Questions**: a `session/request_permission` becomes a [`Question`] on
//!   the seat's `blocked` line. The project policy may answer it at once;
//!   otherwise drover waits for `drover answer` (the deadline still runs).
//! - **Stopping a turn** (deadline, interrupt, budget, stall): drover sends
//!   `session/cancel` and waits a little for the agent's `cancelled`.
//! - **Usage**: the conversation's total from the CLI's transcript (read by
//!   the adapter's usage parser, found through the hooks' transcript path or
//!   the adapter's transcript locations), minus what earlier turns recorded.

mod exchange;
mod turn;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::records::{AgentRecord, Record};
use super::{
    Context, Conversation, TurnReport, TurnSpec, Verdict, conversations, faults, usage::Spent,
};
use drover_acp::{AcpError, AgentInfo, Client, Protocol};
use drover_run::question::{self};
use drover_run::{EventWatcher, now_ns};
use drover_trust::policy::Policy;
use drover_types::wit;
use drover_types::wit::SeatState;
use drover_workspace::acp::{AgentLaunch, AgentProcess};
use drover_workspace::{self as workspace, AgentRunner};

pub use turn::turn;

const TICK: Duration = Duration::from_millis(200);
/// How long `initialize` and `session/new|load` may take together: a first
/// start may install plugins (opencode) before it answers.
const HANDSHAKE: Duration = Duration::from_secs(180);
/// How long an agent gets to answer `session/cancel` before drover stops
/// waiting for the prompt's response.
const CANCEL_GRACE: Duration = Duration::from_secs(10);
/// Reply text kept per turn.
const REPLY_MAX: usize = 1 << 20;
/// Tool calls remembered per agent, for naming the tool a question is about.
const TOOLS_MAX: usize = 4096;

/// A running agent with an open session.
pub struct Agent {
    process: AgentProcess,
    client: Client,
    pub session: String,
    pub info: AgentInfo,
    /// Tool names by tool call id, from `tool_call` updates.
    tools: HashMap<String, String>,
    /// When the agent started: its hooks (SessionStart) fire from then on.
    launched: u64,
    /// The transcript a hook named, once one did.
    transcript: Option<String>,
}

impl Agent {
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Whether the agent process has exited.
    pub fn exited(&mut self) -> bool {
        !matches!(self.process.try_wait(), Ok(None))
    }
}

/// The traffic log of a task's agent.
pub fn traffic_log(ctx: &Context, task: &str) -> PathBuf {
    ctx.run.root().join("logs").join(format!("{task}.acp"))
}

/// A result with drover's bookkeeping filled in.
fn base(
    ctx: &Context,
    spec: &TurnSpec,
    started: u64,
    clock: Instant,
    status: Verdict,
    reason: String,
) -> TurnReport {
    let mut report = TurnReport::of_run(
        ctx,
        &spec.task,
        drover_types::WorkspaceKind::Acp,
        status,
        reason,
        started,
    );
    // The monotonic clock, which a suspended host does not advance.
    report.timings.duration_ms = clock.elapsed().as_millis() as u64;
    report.logs = vec![ctx.run.stderr_log(&spec.task), traffic_log(ctx, &spec.task)];
    report
}

/// The argv that starts the CLI's ACP mode, from the adapter.
fn command(ctx: &Context, request: &wit::LaunchRequest) -> Result<wit::Command, String> {
    match ctx.adapter().acp_command(&ctx.profile().to_wit(), request) {
        Ok(Ok(command)) => Ok(command),
        Ok(Err(wit::AdapterError::InvalidInput(m) | wit::AdapterError::Unsupported(m))) => {
            Err(format!(
                "the {} adapter cannot start an ACP agent: {m}",
                ctx.profile().name
            ))
        }
        Err(e) => Err(format!("the {} adapter failed: {e}", ctx.profile().name)),
    }
}

/// Starts the agent and opens the conversation `spec` names.
pub fn open(ctx: &Context, spec: &TurnSpec) -> Result<Agent, Box<TurnReport>> {
    let task = spec.task.as_str();
    let started = now_ns();
    let clock = Instant::now();
    let fail = |status: Verdict, reason: String| {
        Box::new(conclude(
            ctx,
            spec,
            base(ctx, spec, started, clock, status, reason),
            None,
        ))
    };
    let _ = std::fs::create_dir_all(ctx.run.task_dir(task));
    let request = wit::LaunchRequest {
        prompt: String::new(),
        model: spec.model.clone(),
        extra_args: spec.extra_args.clone(),
        conversation: spec
            .conversation
            .to_wit()
            .map_err(|why| fail(Verdict::Crashed, format!("not resuming: {why}")))?,
    };
    let command = command(ctx, &request).map_err(|e| fail(Verdict::Crashed, e))?;
    let env = super::seat_env(ctx, spec, &command, false);
    let cleared =
        super::spawn::clear_command(ctx, &command, env).map_err(|e| fail(Verdict::Crashed, e))?;
    ctx.state(task, SeatState::Unknown, None, "launch");
    let backend: &dyn AgentRunner = &workspace::Acp;
    let (mut process, connection) = backend
        .start_agent(&AgentLaunch {
            command: &cleared,
            cwd: &spec.cwd,
            stderr: ctx.run.stderr_log(task),
            traffic: Some(traffic_log(ctx, task)),
        })
        .map_err(|e| fail(Verdict::Crashed, e.to_string()))?;
    record_agent(ctx, task, &process, &command.argv, None, None);
    ctx.run.lifecycle(
        task,
        "spawned",
        json!({"pid": process.pid(), "argv0": command.argv.first()}),
    );
    let handshake = HANDSHAKE.min(spec.timeout);
    let protocol = match ctx.profile().agent_protocol {
        drover_profile::AgentProtocol::Acp => Protocol::Acp,
        drover_profile::AgentProtocol::Msp => Protocol::Msp,
    };
    let opened = Client::initialize(connection, protocol, handshake).and_then(|mut client| {
        let session = match &spec.conversation {
            Conversation::Fresh => client.new_session(&spec.cwd, handshake)?,
            Conversation::Resume(id) => {
                client.load_session(id, &spec.cwd, handshake)?;
                id.clone()
            }
            Conversation::Preset(_) => {
                return Err(AcpError::Protocol {
                    method: "session/new",
                    detail:
                        "an ACP agent names its own sessions, so a preset session id cannot be used"
                            .to_string(),
                });
            }
        };
        Ok((client, session))
    });
    let (client, session) = match opened {
        Ok(opened) => opened,
        Err(e) => {
            process.stop((), spec.teardown_grace);
            ctx.state(task, SeatState::Unknown, None, "acp:handshake-failed");
            let status = if matches!(e, AcpError::Timeout { .. }) {
                Verdict::Timeout
            } else {
                Verdict::Crashed
            };
            let mut result = base(
                ctx,
                spec,
                started,
                clock,
                status,
                format!("the agent did not open a session: {e}"),
            );
            result.session_id = match &spec.conversation {
                Conversation::Resume(id) => Some(id.clone()),
                _ => None,
            };
            return Err(Box::new(conclude(ctx, spec, result, Some(&e.to_string()))));
        }
    };
    let info = client.agent().clone();
    record_agent(
        ctx,
        task,
        &process,
        &command.argv,
        Some(&session),
        Some(&info),
    );
    let source = match (protocol, &spec.conversation) {
        (Protocol::Acp, Conversation::Resume(_)) => "acp:session/load",
        (Protocol::Acp, _) => "acp:session/new",
        (Protocol::Msp, Conversation::Resume(_)) => "msp:session/resume",
        (Protocol::Msp, _) => "msp:session/start",
    };
    ctx.state(task, SeatState::Idle, None, source);
    Ok(Agent {
        process,
        client,
        session,
        info,
        tools: HashMap::new(),
        launched: started,
        transcript: None,
    })
}

/// `tasks/<task>/agent.json`: the agent process, the driver that holds it
/// (`drover answer` checks it is alive), and the session it has open.
fn record_agent(
    ctx: &Context,
    task: &str,
    process: &AgentProcess,
    argv: &[String],
    session: Option<&str>,
    info: Option<&AgentInfo>,
) {
    let record = AgentRecord {
        pid: process.pid(),
        identity: process.identity,
        driver: drover_workspace::process::identity(std::process::id()),
        argv: argv.to_vec(),
        stderr_offset: process.stderr_offset,
        session: session.map(str::to_string),
        agent: info.cloned(),
    };
    if let Err(e) = record.write(&ctx.run, task) {
        tracing::warn!("cannot record the agent: {e}");
    }
}

/// Ends the agent: its stdin is closed, then its process tree is stopped.
pub fn close(ctx: &Context, task: &str, agent: Agent, grace: Duration) {
    let Agent {
        mut process,
        client,
        ..
    } = agent;
    process.stop(client, grace);
    ctx.run.lifecycle(task, "agent-stopped", Value::Null);
}

/// One session on a fresh agent: open, one turn (with its nudges), close.
pub fn run(ctx: &Context, spec: &TurnSpec, policy: &Policy) -> TurnReport {
    let mut agent = match open(ctx, spec) {
        Ok(agent) => agent,
        Err(result) => return *result,
    };
    let result = turn(ctx, spec, &mut agent, policy);
    close(ctx, &spec.task, agent, spec.teardown_grace);
    result
}

/// How one prompt ended.
#[derive(Debug)]
enum End {
    Stopped(String),
    Failed(String),
    Closed,
    Timeout(&'static str),
    Interrupted,
    OverBudget,
    Stalled,
    Unsent(String),
}

/// What one prompt produced.
struct Exchange {
    end: End,
    reply: String,
    blocked: bool,
    /// Usage the agent reported with the turn's end (MSP), when it did.
    usage: Option<wit::UsageReport>,
}

/// Hook events relayed while the agent works (if the CLI's hooks are
/// installed): the transcript's path.
struct Hooks {
    watcher: EventWatcher,
    since: u64,
    transcript: Option<String>,
}

impl Hooks {
    fn poll(&mut self, task: &str) {
        for event in self
            .watcher
            .poll()
            .into_iter()
            .filter(|e| e.task == task && e.ts >= self.since)
        {
            if let Some(path) = event.transcript_path.filter(|p| !p.is_empty()) {
                self.transcript = Some(path);
            }
        }
    }
}

/// What a tool call is, as far as the protocol says.
struct ToolView {
    tool: String,
    kind: String,
    title: String,
    input: String,
}

/// This turn's usage: the conversation's total from its transcript (the
/// one a hook named, else found among the CLI's transcripts by conversation
/// id), minus what drover recorded for its earlier turns.
fn usage_of_turn(
    ctx: &Context,
    spec: &TurnSpec,
    conversation: &str,
    transcript: Option<&str>,
) -> Option<Spent> {
    let prior = conversations::prior_usage(&ctx.project, &ctx.profile().name, conversation);
    let whole = match transcript {
        Some(path) => super::usage::read_with_grace(
            ctx.adapter(),
            &ctx.profile().usage_parser,
            &[super::usage::confine(
                ctx,
                &spec.cwd,
                &spec.env,
                std::path::Path::new(path),
            )?],
            ctx.profile().usage_grace,
        ),
        None => super::usage::of_conversation_with_grace(
            ctx,
            conversation,
            prior.as_ref(),
            ctx.profile().usage_grace,
        ),
    }?;
    Some(prior.map_or(whole, |p| whole.minus(&p)))
}

/// The `stopReason` the agent answered the last prompt in a traffic log
/// with, if it answered it: what a run whose driver died is settled from.
pub fn last_stop_reason(traffic: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(traffic).ok()?;
    let mut prompt: Option<Value> = None;
    let mut reason = None;
    for line in text.lines() {
        let (sent, json) = match (line.strip_prefix("-> "), line.strip_prefix("<- ")) {
            (Some(json), _) => (true, json),
            (_, Some(json)) => (false, json),
            _ => continue,
        };
        let Ok(message) = serde_json::from_str::<Value>(json) else {
            continue;
        };
        if sent && message["method"] == "session/prompt" {
            prompt = Some(message["id"].clone());
            reason = None;
        } else if !sent
            && message.get("method").is_none()
            && Some(&message["id"]) == prompt.as_ref()
        {
            reason = message["result"]["stopReason"]
                .as_str()
                .map(question::clean);
        }
    }
    reason
}

/// Classifies faults for a result that did not complete (from the agent's
/// stderr and the error it answered with), writes `session.json` and the
/// verdict.
fn conclude(
    ctx: &Context,
    spec: &TurnSpec,
    mut result: TurnReport,
    error: Option<&str>,
) -> TurnReport {
    if result.status != Verdict::Completed && result.fault.is_none() {
        let mut lines = faults::tail_lines(&ctx.run.stderr_log(&spec.task));
        if let Some(sentence) = error {
            lines.extend(faults::lines_of(sentence.as_bytes()));
        }
        result.fault = faults::classify(ctx, &spec.task, &lines);
    }
    super::record_verdict(ctx, &result);
    result
}

#[cfg(test)]
mod tests;
