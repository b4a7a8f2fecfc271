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

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use agent_client_protocol_schema::v1::RequestId;
use serde_json::{Value, json};

use super::budget::{Budget, Verdict};
use super::clock::Deadline;
use super::result_file::ResultFile;
use super::shared::{NUDGE_RESULT, heartbeat, humanize};
use super::{
    Context, Conversation, SessionResult, SessionSpec, Status, Timings, conversations, faults,
    usage::Spent,
};
use crate::acp::{AcpError, AgentInfo, Client, Event, Wait};
use crate::policy::Policy;
use crate::question::{self, Answerer, Choice, ChoiceKind, Question};
use crate::run::{EventWatcher, now_ns};
use crate::sandbox::wit;
use crate::workspace::acp::{AgentLaunch, AgentProcess};
use crate::workspace::{self, Workspace};

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
    spec: &SessionSpec,
    started: u64,
    clock: Instant,
    status: Status,
    reason: String,
) -> SessionResult {
    SessionResult {
        status,
        run_id: ctx.run.id().to_string(),
        task: spec.task.clone(),
        cli: ctx.profile.name.clone(),
        workspace: "acp".to_string(),
        reason,
        session_id: None,
        transcript_path: None,
        reply: None,
        usage: None,
        cost_usd: None,
        fault: None,
        blocked: None,
        stop_seen: false,
        result: None,
        exit_code: None,
        budget_weighted: None,
        timings: Timings {
            started_ns: started,
            ended_ns: now_ns(),
            duration_ms: clock.elapsed().as_millis() as u64,
            timeout_clock: None,
        },
        logs: vec![ctx.run.stderr_log(&spec.task), traffic_log(ctx, &spec.task)],
    }
}

/// The argv that starts the CLI's ACP mode, from the adapter.
fn command(ctx: &Context, request: &wit::LaunchRequest) -> Result<wit::Command, String> {
    match ctx.adapter.acp_command(&ctx.profile.to_wit(), request) {
        Ok(Ok(command)) => Ok(command),
        Ok(Err(wit::AdapterError::InvalidInput(m) | wit::AdapterError::Unsupported(m))) => {
            Err(format!(
                "the {} adapter cannot start an ACP agent: {m}",
                ctx.profile.name
            ))
        }
        Err(e) => Err(format!("the {} adapter failed: {e}", ctx.profile.name)),
    }
}

/// Starts the agent and opens the conversation `spec` names.
pub fn open(ctx: &Context, spec: &SessionSpec) -> Result<Agent, Box<SessionResult>> {
    let task = spec.task.as_str();
    let started = now_ns();
    let clock = Instant::now();
    let fail = |status: Status, reason: String| {
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
        conversation: spec.conversation.to_wit(),
    };
    let command = command(ctx, &request).map_err(|e| fail(Status::Crashed, e))?;
    super::guard::check_command(&ctx.profile, &command).map_err(|e| fail(Status::Crashed, e))?;
    let env = super::seat_env(ctx, spec, &command, false);
    ctx.state(task, "unknown", None, "launch");
    let backend: &dyn Workspace = &workspace::Acp;
    let (mut process, connection) = backend
        .start_agent(&AgentLaunch {
            argv: &command.argv,
            cwd: &spec.cwd,
            env,
            stderr: ctx.run.stderr_log(task),
            traffic: Some(traffic_log(ctx, task)),
        })
        .map_err(|e| fail(Status::Crashed, e.to_string()))?;
    record_agent(ctx, task, &process, &command.argv, None, None);
    ctx.run.lifecycle(
        task,
        "spawned",
        json!({"pid": process.pid(), "argv0": command.argv.first()}),
    );
    let handshake = HANDSHAKE.min(spec.timeout);
    let opened = Client::initialize(connection, handshake).and_then(|mut client| {
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
            ctx.state(task, "unknown", None, "acp:handshake-failed");
            let status = if matches!(e, AcpError::Timeout { .. }) {
                Status::Timeout
            } else {
                Status::Crashed
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
    let source = match spec.conversation {
        Conversation::Resume(_) => "acp:session/load",
        _ => "acp:session/new",
    };
    ctx.state(task, "idle", None, source);
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
    let _ = crate::run::write_json_atomic(
        &ctx.run.task_dir(task).join("agent.json"),
        &json!({
            "pid": process.pid(),
            "identity": process.identity,
            "driver": crate::workspace::process::identity(std::process::id()),
            "argv": argv,
            "stderr_offset": process.stderr_offset,
            "session": session,
            "agent": info,
        }),
    );
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
pub fn run(ctx: &Context, spec: &SessionSpec, policy: &Policy) -> SessionResult {
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

/// One message to a seat's live agent, with the result-file nudges.
pub fn turn(
    ctx: &Context,
    spec: &SessionSpec,
    agent: &mut Agent,
    policy: &Policy,
) -> SessionResult {
    let task = spec.task.as_str();
    let started = now_ns();
    let clock = Instant::now();
    let task_dir = ctx.run.task_dir(task);
    let _ = std::fs::create_dir_all(&task_dir);
    let _ = std::fs::write(task_dir.join("prompt.txt"), format!("{}\n", spec.prompt));
    let deadline = Deadline::after(spec.timeout);
    let result_file = spec
        .result_file
        .as_ref()
        .map(|p| ResultFile::before_launch(p.clone()));
    let mut hooks = Hooks {
        watcher: EventWatcher::new(ctx.run.events_dir()),
        since: agent.launched,
        transcript: agent.transcript.clone(),
    };
    let mut budget = Budget::new();
    let mut nudges_left = spec.stop_nudges;
    let mut usage: Option<Spent> = None;
    let mut reply: Option<String> = None;
    let session = agent.session.clone();
    let finish = |status: Status,
                  reason: String,
                  reply: &Option<String>,
                  usage: Option<Spent>,
                  hooks: &Hooks,
                  budget: &Budget| {
        let mut result = base(ctx, spec, started, clock, status, reason);
        result.session_id = Some(session.clone());
        result.transcript_path = hooks.transcript.clone();
        result.reply = reply.clone();
        result.usage = usage.map(|u| u.tokens);
        result.cost_usd = usage.and_then(|u| u.cost_usd);
        result.budget_weighted = budget.weighted;
        result
    };
    let mut text = match ctx
        .adapter
        .render_prompt(&ctx.profile.to_wit(), &spec.prompt)
    {
        Ok(Ok(text)) => text,
        Ok(Err(wit::AdapterError::InvalidInput(m) | wit::AdapterError::Unsupported(m))) => {
            let result = finish(
                Status::Crashed,
                format!("the adapter cannot render the prompt: {m}"),
                &reply,
                usage,
                &hooks,
                &budget,
            );
            return conclude(ctx, spec, result, None);
        }
        Err(e) => {
            let result = finish(
                Status::Crashed,
                format!("the adapter failed rendering the prompt: {e}"),
                &reply,
                usage,
                &hooks,
                &budget,
            );
            return conclude(ctx, spec, result, None);
        }
    };
    loop {
        let exchange = exchange(
            ctx,
            spec,
            agent,
            policy,
            &text,
            &deadline,
            &mut hooks,
            &mut budget,
        );
        hooks.poll(task);
        agent.transcript = hooks.transcript.clone();
        if !exchange.reply.is_empty() {
            reply = Some(exchange.reply.clone());
        }
        let turn_usage = usage_of_turn(ctx, &agent.session, hooks.transcript.as_deref());
        if let Some(u) = &turn_usage {
            match usage.as_mut() {
                Some(total) => total.add(u),
                None => usage = Some(*u),
            }
        }
        conversations::record_turn(
            ctx,
            task,
            &agent.session,
            turn_usage.map(|u| u.tokens),
            turn_usage.and_then(|u| u.cost_usd),
        );
        let stopped = |status: Status, reason: String, state: &str, source: &str| {
            ctx.state(task, state, None, source);
            let mut result = finish(status, reason, &reply, usage, &hooks, &budget);
            if exchange.blocked && status != Status::Completed {
                result.blocked = Some(wit::PromptKind::Permission);
            }
            result
        };
        let (result, error) = match exchange.end {
            End::Stopped(reason) if reason == "end_turn" => {
                ctx.state(task, "done", None, "acp:end_turn");
                let Some(file) = &result_file else {
                    let mut result = finish(
                        Status::Completed,
                        "the turn finished (end_turn)".to_string(),
                        &reply,
                        usage,
                        &hooks,
                        &budget,
                    );
                    result.stop_seen = true;
                    return conclude(ctx, spec, result, None);
                };
                if let Some(found) = file.wait(spec.result_wait, || true) {
                    let mut result = finish(
                        Status::Completed,
                        "the turn finished and wrote the result file".to_string(),
                        &reply,
                        usage,
                        &hooks,
                        &budget,
                    );
                    result.stop_seen = true;
                    result.result = Some(found);
                    return conclude(ctx, spec, result, None);
                }
                ctx.run.lifecycle(
                    task,
                    "resultless-stop",
                    json!({"path": file.path(), "nudges_left": nudges_left}),
                );
                if nudges_left == 0 {
                    let mut result = finish(
                        Status::Stalled,
                        format!(
                            "the turn finished without writing {}",
                            file.path().display()
                        ),
                        &reply,
                        usage,
                        &hooks,
                        &budget,
                    );
                    result.stop_seen = true;
                    return conclude(ctx, spec, result, None);
                }
                nudges_left -= 1;
                ctx.run.lifecycle(
                    task,
                    "nudge",
                    json!({"why": "result-file", "left": nudges_left}),
                );
                text = format!("{NUDGE_RESULT} ({})", file.path().display());
                continue;
            }
            End::Stopped(reason) => (
                stopped(
                    Status::Stalled,
                    format!("the agent ended the turn with stopReason {reason}"),
                    "unknown",
                    &format!("acp:{reason}"),
                ),
                None,
            ),
            End::Failed(message) => (
                stopped(
                    Status::Stalled,
                    format!("the turn failed: {message}"),
                    "unknown",
                    "acp:error",
                ),
                Some(message),
            ),
            End::Closed => {
                let exit = wait_exit(agent);
                let mut result = stopped(
                    Status::Crashed,
                    match exit {
                        Some(code) => format!("the agent exited (code {code}) during the turn"),
                        None => "the agent closed its output during the turn".to_string(),
                    },
                    "unknown",
                    "acp:closed",
                );
                result.exit_code = exit;
                (result, None)
            }
            End::Timeout(which) => {
                ctx.run.lifecycle(
                    task,
                    "timeout-fired",
                    json!({"expired_clock": which, "timeout_s": spec.timeout.as_secs_f64()}),
                );
                let mut result = stopped(
                    Status::Timeout,
                    format!(
                        "the session deadline of {} passed ({which} clock)",
                        humanize(spec.timeout)
                    ),
                    "unknown",
                    "timeout",
                );
                result.timings.timeout_clock = Some(which.to_string());
                (result, None)
            }
            End::Interrupted => (
                stopped(
                    Status::Crashed,
                    "interrupted: drover was asked to stop".to_string(),
                    "unknown",
                    "interrupted",
                ),
                None,
            ),
            End::OverBudget => (
                stopped(
                    Status::OverBudget,
                    "the token budget was exceeded and its grace ran out".to_string(),
                    "unknown",
                    "over-budget",
                ),
                None,
            ),
            End::Stalled => (
                stopped(
                    Status::Stalled,
                    "no message from the agent for the stall window".to_string(),
                    "unknown",
                    "stall",
                ),
                None,
            ),
            End::Unsent(e) => (
                stopped(
                    Status::Crashed,
                    format!("cannot send the prompt: {e}"),
                    "unknown",
                    "acp:send-failed",
                ),
                None,
            ),
        };
        return conclude(ctx, spec, result, error.as_deref());
    }
}

/// The agent's exit code once it exited (briefly waited for).
fn wait_exit(agent: &mut Agent) -> Option<i32> {
    let until = Instant::now() + Duration::from_secs(2);
    loop {
        if let Ok(Some(status)) = agent.process.try_wait() {
            return status.code();
        }
        if Instant::now() >= until {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends one prompt and follows it to its end.
#[allow(clippy::too_many_arguments)]
fn exchange(
    ctx: &Context,
    spec: &SessionSpec,
    agent: &mut Agent,
    policy: &Policy,
    text: &str,
    deadline: &Deadline,
    hooks: &mut Hooks,
    budget: &mut Budget,
) -> Exchange {
    let task = spec.task.as_str();
    let task_dir = ctx.run.task_dir(task);
    let mut out = Exchange {
        end: End::Closed,
        reply: String::new(),
        blocked: false,
    };
    if let Err(e) = agent.client.prompt(&agent.session, text) {
        out.end = End::Unsent(e.to_string());
        return out;
    }
    ctx.state(task, "working", None, "acp:session/prompt");
    let mut waiting: VecDeque<(RequestId, Question)> = VecDeque::new();
    let mut cancelling: Option<(End, Instant)> = None;
    let mut last_heartbeat: Option<Instant> = None;
    let mut last_message = Instant::now();
    loop {
        if cancelling.is_none() {
            let stop = if spec.cancelled() {
                Some(End::Interrupted)
            } else if let Some(which) = deadline.expired() {
                Some(End::Timeout(which))
            } else if budget.expired() {
                Some(End::OverBudget)
            } else if waiting.is_empty()
                && spec
                    .stall_grace
                    .is_some_and(|g| last_message.elapsed() >= g)
            {
                Some(End::Stalled)
            } else {
                None
            };
            if let Some(end) = stop {
                for (id, _) in waiting.drain(..) {
                    let _ = agent.client.answer_permission(&id, None);
                }
                let _ = agent.client.cancel(&agent.session);
                ctx.run
                    .lifecycle(task, "cancel-sent", json!({"why": format!("{end:?}")}));
                cancelling = Some((end, Instant::now()));
            }
        } else if let Some((_, since)) = &cancelling
            && since.elapsed() >= CANCEL_GRACE.min(spec.teardown_grace.max(TICK))
        {
            out.end = cancelling.map_or(End::Closed, |(end, _)| end);
            return out;
        }
        if last_heartbeat.is_none_or(|t| t.elapsed() >= spec.heartbeat) {
            last_heartbeat = Some(Instant::now());
            heartbeat(ctx, spec, deadline);
            if let Verdict::Nudge = budget.sample(ctx, spec, hooks.transcript.as_deref()) {
                ctx.run.lifecycle(
                    task,
                    "budget-nudge-skipped",
                    json!({"why": "a prompt is in flight; the grace runs, then the turn is cancelled"}),
                );
            }
        }
        hooks.poll(task);
        if let Some((id, q)) = waiting.front()
            && let Some(answer) = question::take_answer(&task_dir, &q.id)
        {
            match q.choice(&answer.option).cloned() {
                Some(choice) => {
                    let (id, q) = (id.clone(), q.clone());
                    waiting.pop_front();
                    deliver(ctx, task, agent, &id, &q, &choice, &Answerer::Person);
                    if let Some((_, next)) = waiting.front() {
                        ctx.blocked_on(task, next, "acp:session/request_permission");
                    }
                }
                None => ctx.run.lifecycle(
                    task,
                    "answer-ignored",
                    json!({"question": q.id, "option": answer.option}),
                ),
            }
        }
        let event = match agent
            .client
            .next_event(TICK.min(deadline.remaining().max(TICK)))
        {
            Wait::Idle => continue,
            Wait::Closed => {
                out.end = cancelling.map_or(End::Closed, |(end, _)| end);
                return out;
            }
            Wait::Event(event) => event,
        };
        last_message = Instant::now();
        match event {
            Event::Update(params) => absorb(ctx, task, agent, &params, &mut out),
            Event::Permission { id, params } => {
                let q = question_of(&params, &agent.tools);
                out.blocked = true;
                if cancelling.is_some() {
                    let _ = agent.client.answer_permission(&id, None);
                    continue;
                }
                if waiting.is_empty() {
                    ctx.blocked_on(task, &q, "acp:session/request_permission");
                }
                if let Some(verdict) = policy.decide(&q) {
                    let choice = q.options.iter().find(|c| c.id == verdict.option).cloned();
                    if let Some(choice) = choice {
                        if waiting.is_empty() {
                            deliver(
                                ctx,
                                task,
                                agent,
                                &id,
                                &q,
                                &choice,
                                &Answerer::Policy { rule: verdict.rule },
                            );
                        } else {
                            ctx.answered(
                                task,
                                &q,
                                &choice,
                                &Answerer::Policy { rule: verdict.rule },
                            );
                            let _ = agent.client.answer_permission(&id, Some(&choice.id));
                        }
                        continue;
                    }
                }
                if waiting.is_empty() {
                    ctx.notify(&format!(
                        "task {task} is blocked on a permission question: {} (answer with `drover answer`: {})",
                        q.summary(),
                        q.options_line()
                    ));
                }
                waiting.push_back((id, q));
            }
            Event::PromptDone(Ok(response)) => {
                let reason = response["stopReason"]
                    .as_str()
                    .unwrap_or("unknown")
                    .to_string();
                out.end = match cancelling {
                    Some((end, _)) => end,
                    None => End::Stopped(question::clean(&reason)),
                };
                return out;
            }
            Event::PromptDone(Err(error)) => {
                let mut message = error.message.clone();
                if let Some(data) = &error.data {
                    let data = match data {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    message = format!("{message} ({data})");
                }
                out.end = match cancelling {
                    Some((end, _)) => end,
                    None => End::Failed(question::clean(&message)),
                };
                return out;
            }
            Event::Noise(_) => {}
        }
    }
}

/// Answers a question over ACP and journals who answered.
fn deliver(
    ctx: &Context,
    task: &str,
    agent: &Agent,
    id: &RequestId,
    q: &Question,
    choice: &Choice,
    by: &Answerer,
) {
    if let Err(e) = agent.client.answer_permission(id, Some(&choice.id)) {
        ctx.run.lifecycle(
            task,
            "answer-unsent",
            json!({"question": q.id, "error": e.to_string()}),
        );
        return;
    }
    ctx.answered(task, q, choice, by);
    ctx.state(task, "working", None, "answer");
}

/// One `session/update`: seat state, journal events, reply text.
fn absorb(ctx: &Context, task: &str, agent: &mut Agent, params: &Value, out: &mut Exchange) {
    let update = &params["update"];
    let kind = update["sessionUpdate"].as_str().unwrap_or_default();
    match kind {
        "agent_message_chunk" => {
            if let Some(text) = update["content"]["text"].as_str()
                && out.reply.len() + text.len() <= REPLY_MAX
            {
                out.reply.push_str(text);
            }
            ctx.state(task, "working", None, "acp:agent_message_chunk");
        }
        "agent_thought_chunk" => ctx.state(task, "working", None, "acp:agent_thought_chunk"),
        "tool_call" | "tool_call_update" => {
            let view = tool_view(update, &agent.tools);
            let id = update["toolCallId"].as_str().unwrap_or_default().to_string();
            if kind == "tool_call" {
                if agent.tools.len() < TOOLS_MAX && !view.tool.is_empty() {
                    agent.tools.insert(id.clone(), view.tool.clone());
                }
                ctx.event(
                    task,
                    "tool_call",
                    "acp:tool_call",
                    json!({"id": question::clean(&id), "tool": view.tool, "kind": view.kind, "title": view.title, "input": view.input}),
                );
                ctx.state(task, "working", None, "acp:tool_call");
            } else if let Some(status @ ("completed" | "failed")) = update["status"].as_str() {
                ctx.event(
                    task,
                    "tool_call_update",
                    "acp:tool_call_update",
                    json!({"id": question::clean(&id), "status": status}),
                );
            }
        }
        "plan" => {
            let entries: Vec<Value> = update["entries"]
                .as_array()
                .map(|items| {
                    items
                        .iter()
                        .take(50)
                        .map(|e| {
                            json!({
                                "content": question::clean(e["content"].as_str().unwrap_or_default()),
                                "status": question::clean(e["status"].as_str().unwrap_or_default()),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            ctx.event(task, "plan", "acp:plan", json!({"entries": entries}));
        }
        "usage_update" => ctx.event(
            task,
            "usage_update",
            "acp:usage_update",
            json!({"used": update["used"].as_u64(), "size": update["size"].as_u64(), "cost": update["cost"].clone()}),
        ),
        _ => {}
    }
}

/// What a tool call is, as far as the protocol says.
struct ToolView {
    tool: String,
    kind: String,
    title: String,
    input: String,
}

/// Reads a tool call (or its update, or a permission request's
/// `toolCall`): the tool's name (its own `name`, else the one its
/// `tool_call` gave), the kind, the title and an input summary from
/// `rawInput` (a command, path, URL, query or pattern), else its first
/// location, else its title.
fn tool_view(call: &Value, known: &HashMap<String, String>) -> ToolView {
    let id = call["toolCallId"].as_str().unwrap_or_default();
    let tool = call["name"]
        .as_str()
        .map(str::to_string)
        .or_else(|| known.get(id).cloned())
        .unwrap_or_default();
    let title = call["title"].as_str().unwrap_or_default();
    let raw = &call["rawInput"];
    let from_raw = [
        "command",
        "cmd",
        "file_path",
        "filePath",
        "path",
        "url",
        "query",
        "pattern",
    ]
    .iter()
    .find_map(|key| match &raw[*key] {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Array(parts) => {
            let words: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
            (!words.is_empty()).then(|| words.join(" "))
        }
        _ => None,
    });
    let input = from_raw
        .or_else(|| call["locations"][0]["path"].as_str().map(str::to_string))
        .unwrap_or_else(|| title.to_string());
    ToolView {
        tool: question::clean(&tool),
        kind: question::clean(call["kind"].as_str().unwrap_or("other")),
        title: question::clean(title),
        input: question::clean(&input),
    }
}

/// A permission request as a question.
fn question_of(params: &Value, known: &HashMap<String, String>) -> Question {
    let view = tool_view(&params["toolCall"], known);
    let options = params["options"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|o| {
                    let kind = match o["kind"].as_str()? {
                        "allow_once" => ChoiceKind::AllowOnce,
                        "allow_always" => ChoiceKind::AllowAlways,
                        "reject_once" => ChoiceKind::RejectOnce,
                        "reject_always" => ChoiceKind::RejectAlways,
                        _ => return None,
                    };
                    Some(Choice {
                        id: o["optionId"].as_str()?.to_string(),
                        label: question::clean(o["name"].as_str().unwrap_or_default()),
                        kind,
                    })
                })
                .take(16)
                .collect()
        })
        .unwrap_or_default();
    Question {
        id: format!("q{}", now_ns()),
        tool: view.tool,
        kind: view.kind,
        title: view.title,
        input: view.input,
        options,
    }
}

/// This turn's usage: the conversation's total from its transcript (the
/// one a hook named, else found among the CLI's transcripts by conversation
/// id), minus what drover recorded for its earlier turns.
fn usage_of_turn(ctx: &Context, conversation: &str, transcript: Option<&str>) -> Option<Spent> {
    let whole = match transcript {
        Some(path) => super::usage::read_with_grace(
            &ctx.adapter,
            &ctx.profile.usage_parser,
            std::path::Path::new(path),
            ctx.profile.usage_grace,
        ),
        None => super::usage::of_conversation(ctx, conversation),
    }?;
    let prior = conversations::prior_usage(&ctx.project, &ctx.profile.name, conversation);
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
    spec: &SessionSpec,
    mut result: SessionResult,
    error: Option<&str>,
) -> SessionResult {
    if result.status != Status::Completed && result.fault.is_none() {
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
mod tests {
    use super::*;

    #[test]
    fn the_last_prompts_stop_reason_is_read_back_from_the_traffic() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("t.acp");
        std::fs::write(
            &log,
            "-> {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/prompt\",\"params\":{}}\n\
             <- {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}\n\
             -> {\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"session/prompt\",\"params\":{}}\n\
             <- {\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{}}\n",
        )
        .expect("write");
        assert_eq!(last_stop_reason(&log), None);
        crate::run::append_line(
            &log,
            "<- {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"stopReason\":\"max_tokens\"}}",
        )
        .expect("append");
        assert_eq!(last_stop_reason(&log).as_deref(), Some("max_tokens"));
    }

    #[test]
    fn a_permission_request_reads_as_a_question() {
        // Shapes sent by gemini 0.61.0, qwen 0.24.4 and opencode 1.18.33.
        let known = HashMap::from([("call_1".to_string(), "bash".to_string())]);
        let gemini = json!({"sessionId": "s", "options": [
            {"optionId": "proceed_always", "name": "Allow for this session", "kind": "allow_always"},
            {"optionId": "proceed_once", "name": "Allow", "kind": "allow_once"},
            {"optionId": "cancel", "name": "Reject", "kind": "reject_once"}],
            "toolCall": {"toolCallId": "run_shell_command__1", "status": "pending", "title": "echo hi > hi.txt",
                "content": [], "locations": [], "kind": "execute"}});
        let q = question_of(&gemini, &known);
        assert_eq!(
            (q.tool.as_str(), q.kind.as_str(), q.input.as_str()),
            ("", "execute", "echo hi > hi.txt")
        );
        assert_eq!(q.options.len(), 3);
        assert_eq!(q.options[1].kind, ChoiceKind::AllowOnce);
        let opencode = json!({"sessionId": "s", "toolCall": {"toolCallId": "call_1", "title": "echo hi > hi.txt",
            "kind": "execute", "status": "pending", "locations": [], "rawInput": {"command": "echo hi > hi.txt"}},
            "options": [{"optionId": "once", "kind": "allow_once", "name": "Allow once"},
                {"optionId": "reject", "kind": "reject_once", "name": "Reject"},
                {"optionId": "odd", "kind": "maybe", "name": "Odd"}]});
        let q = question_of(&opencode, &known);
        assert_eq!(
            (q.tool.as_str(), q.input.as_str()),
            ("bash", "echo hi > hi.txt")
        );
        assert_eq!(
            q.options.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
            ["once", "reject"]
        );
        let read = json!({"toolCall": {"toolCallId": "x", "name": "read_file", "kind": "read",
            "title": "Read\u{1b}[31m file", "locations": [{"path": "/w/src/main.rs"}]}, "options": []});
        let q = question_of(&read, &known);
        assert_eq!(
            (
                q.tool.as_str(),
                q.kind.as_str(),
                q.title.as_str(),
                q.input.as_str()
            ),
            ("read_file", "read", "Read[31m file", "/w/src/main.rs")
        );
    }
}
