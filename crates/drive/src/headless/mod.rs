//! The headless driver: one non-interactive turn of the CLI per message, on
//! its saved conversation. The turn's stdout and stderr go to files (so a
//! restarted drover can still read them), the session deadline is enforced
//! here because some CLIs never give up on a dead network, and the adapter
//! reads the outcome.
//!
//! A headless seat's state is known exactly: working while the turn runs,
//! done after a successful turn, blocked when the turn stopped to ask for
//! something, unknown after a failed or unreadable one.

mod turn;

use std::path::Path;
use std::time::Instant;

use super::clock::Deadline;
use super::result_file::ResultFile;
use super::shared::NUDGE_RESULT;
use super::usage::Spent;
use super::verdict::{self, ResultState};
use super::watchdog::Watchdog;
use super::{
    Context, FaultReport, Timings, TurnReport, TurnSpec, Verdict, conversations, faults, seat_env,
};
use drover_run::{EventWatcher, HookRecord, now_ns};
use drover_types::wit;
use drover_types::wit::SeatState;

pub(crate) use turn::parse_outcome;
pub use turn::read_from;

/// What the session learned from hooks so far.
#[derive(Default)]
struct Seen {
    session_id: Option<String>,
    transcript_path: Option<String>,
    blocked: Option<wit::PromptKind>,
    stop: bool,
}

impl Seen {
    fn absorb(&mut self, ctx: &Context, task: &str, event: &HookRecord) {
        if let Some(id) = event.session_id.as_ref().filter(|s| !s.is_empty()) {
            self.session_id = Some(id.clone());
        }
        if let Some(path) = event.transcript_path.as_ref().filter(|s| !s.is_empty()) {
            self.transcript_path = Some(path.clone());
        }
        let source = format!("hook:{}", event.native);
        match event.kind {
            wit::CanonicalEvent::PermissionRequest | wit::CanonicalEvent::Notification => {
                if let Some(kind) = event.prompt_kind {
                    self.blocked = Some(kind);
                    let evidence = super::hook_evidence(event);
                    ctx.blocked(task, kind.as_str(), &source, evidence.as_deref());
                }
            }
            wit::CanonicalEvent::Stop if !event.subagent => self.stop = true,
            _ => {}
        }
    }
}

/// How a session ends, before the bookkeeping every ending shares.
struct Ending {
    status: Verdict,
    reason: String,
    reply: Option<String>,
    result: Option<serde_json::Value>,
    exit_code: Option<i32>,
    clock: Option<&'static str>,
    /// A turn that failed, with the CLI's own sentence when it gave one.
    failure: Option<Option<String>>,
}

impl Ending {
    fn new(status: Verdict, reason: impl Into<String>) -> Ending {
        Ending {
            status,
            reason: reason.into(),
            reply: None,
            result: None,
            exit_code: None,
            clock: None,
            failure: None,
        }
    }

    fn reply(mut self, reply: Option<String>) -> Ending {
        self.reply = reply;
        self
    }

    fn result(mut self, result: Option<serde_json::Value>) -> Ending {
        self.result = result;
        self
    }

    fn exit_code(mut self, code: Option<i32>) -> Ending {
        self.exit_code = code;
        self
    }

    fn clock(mut self, which: Option<&'static str>) -> Ending {
        self.clock = which;
        self
    }

    fn failure(mut self, error: Option<String>) -> Ending {
        self.failure = Some(error);
        self
    }
}

#[derive(Default)]
struct TurnRun {
    exit_code: Option<i32>,
    /// Where the turn's output starts in the task's stdout and stderr logs.
    offsets: (u64, u64),
    timed_out: Option<&'static str>,
    stalled: bool,
    over_budget: bool,
    cancelled: bool,
}

/// One headless session's state across its turns.
struct Session<'a> {
    ctx: &'a Context,
    spec: &'a TurnSpec,
    watchdog: Watchdog,
    watcher: EventWatcher,
    seen: Seen,
    result_file: Option<ResultFile>,
    total_usage: Option<Spent>,
    /// Some of `total_usage` came from the CLI's printed summary.
    usage_approximate: bool,
}

pub fn run(ctx: &Context, spec: &TurnSpec) -> TurnReport {
    let started = now_ns();
    let clock = Instant::now();
    crate::shared::keep_prompt(ctx, spec);
    let mut session = Session {
        ctx,
        spec,
        watchdog: Watchdog::new(Deadline::after(spec.timeout)),
        // A seat's run keeps every earlier turn's records: none concerns
        // this one, so they are not even opened.
        watcher: EventWatcher::new(
            ctx.run.events_dir(),
            crate::drops::DropParser::for_seat(ctx.run.root(), ctx.profile(), ctx.adapter()),
        )
        .since(started),
        seen: Seen::default(),
        result_file: spec
            .result_file
            .as_ref()
            .map(|p| ResultFile::before_launch(p.clone())),
        total_usage: None,
        usage_approximate: false,
    };
    let ending = session.turns();
    let result = session.finish(ending, started, clock);
    conclude(ctx, spec, result)
}

impl Session<'_> {
    /// Runs turns (the prompt, then nudges) until one decides how the
    /// session ends.
    fn turns(&mut self) -> Ending {
        let (ctx, spec) = (self.ctx, self.spec);
        let task = spec.task.as_str();
        let mut conversation = spec.conversation.clone();
        let mut prompt = spec.prompt.clone();
        let mut nudges_left = spec.stop_nudges;
        let mut turn_number = 0u32;
        loop {
            turn_number += 1;
            let conversation_for_cli = match conversation.to_wit() {
                Ok(c) => c,
                Err(why) => return Ending::new(Verdict::Crashed, format!("not resuming: {why}")),
            };
            let request = wit::LaunchRequest {
                prompt: prompt.clone(),
                model: spec.model.clone(),
                extra_args: spec.extra_args.clone(),
                conversation: conversation_for_cli,
            };
            let command = match ctx
                .adapter()
                .headless_command(&ctx.profile().to_wit(), &request)
            {
                Ok(Ok(command)) => command,
                Ok(Err(e)) => {
                    let message = adapter_message(&e);
                    return Ending::new(
                        Verdict::Crashed,
                        format!("the adapter cannot build a headless turn: {message}"),
                    );
                }
                Err(e) => {
                    return Ending::new(Verdict::Crashed, format!("the adapter failed: {e}"));
                }
            };
            let command = match super::spawn::clear_command(
                ctx,
                &command,
                seat_env(ctx, spec, &command, true),
            ) {
                Ok(command) => command,
                Err(refusal) => return Ending::new(Verdict::Crashed, refusal),
            };
            ctx.state(
                task,
                SeatState::Working,
                None,
                if turn_number == 1 { "launch" } else { "nudge" },
            );
            let turn = match self.run_turn(&command, now_ns()) {
                Ok(turn) => turn,
                Err(reason) => {
                    ctx.state(task, SeatState::Unknown, None, "spawn-failed");
                    return Ending::new(Verdict::Crashed, reason);
                }
            };
            if let Some(ending) = self.interrupted(&turn) {
                return ending;
            }
            let resumed = turn::resumed_id(&conversation);
            let mut outcome = parse_outcome(
                ctx,
                task,
                turn.offsets,
                &[self.seen.session_id.as_deref(), resumed.as_deref()],
                turn.exit_code,
            );
            // A CLI given its conversation id (a preset one, or the one it
            // resumes) need not print it.
            if let (None, super::Conversation::Preset(id) | super::Conversation::Resume(id)) =
                (&outcome.conversation_id, &conversation)
            {
                outcome.conversation_id = Some(id.clone());
            }
            if let Some(id) = outcome.conversation_id.as_ref().filter(|s| !s.is_empty()) {
                self.seen.session_id = Some(id.clone());
            }
            self.account(&outcome);
            let mut found = None;
            if outcome.outcome == wit::TurnOutcome::Success {
                self.seen.blocked = None;
                if let Some(result_file) = &self.result_file {
                    found = result_file.wait(spec.result_wait, || true);
                    if found.is_none() {
                        if let Some(id) = self.seen.session_id.clone().filter(|_| nudges_left > 0) {
                            nudges_left -= 1;
                            ctx.run.lifecycle(
                                task,
                                "nudge",
                                serde_json::json!({"why": "result-file", "left": nudges_left}),
                            );
                            conversation = super::Conversation::Resume(id);
                            prompt = format!("{NUDGE_RESULT} ({})", result_file.path().display());
                            continue;
                        }
                        ctx.run.lifecycle(
                            task,
                            "resultless-stop",
                            serde_json::json!({"path": result_file.path()}),
                        );
                    }
                }
            }
            let result_state = ResultState::of(spec.result_file.as_ref(), found.is_some());
            let ruling =
                verdict::of_turn(&outcome, turn.exit_code, self.seen.blocked, &result_state);
            match ruling.blocked {
                Some(kind) => {
                    self.seen.blocked = Some(kind);
                    let evidence = outcome.error.clone().or_else(|| outcome.reply.clone());
                    ctx.blocked(task, kind.as_str(), "exit", evidence.as_deref());
                    ctx.attention(&format!("task {task} is blocked on a {kind} prompt"));
                }
                None => {
                    let source = if found.is_some() {
                        "result-file"
                    } else {
                        "exit"
                    };
                    ctx.state(task, ruling.state, None, source);
                }
            }
            let ending = Ending::new(ruling.verdict, ruling.reason).exit_code(turn.exit_code);
            return match outcome.outcome {
                wit::TurnOutcome::Success => ending.reply(outcome.reply).result(found),
                wit::TurnOutcome::Blocked => ending.reply(outcome.reply),
                wit::TurnOutcome::Failed | wit::TurnOutcome::Unknown => {
                    ending.failure(outcome.error)
                }
            };
        }
    }

    /// The ending of a turn stopped before it finished: the deadline, a
    /// cancel, the budget or a stall.
    fn interrupted(&self, turn: &TurnRun) -> Option<Ending> {
        let (ctx, spec) = (self.ctx, self.spec);
        let task = spec.task.as_str();
        let (ruling, source) = if let Some(which) = turn.timed_out {
            ctx.run.lifecycle(task, "timeout-fired", serde_json::json!({"expired_clock": which, "timeout_s": spec.timeout.as_secs_f64()}));
            (verdict::timed_out(spec.timeout, which), "timeout")
        } else if turn.cancelled {
            (verdict::interrupted(), "interrupted")
        } else if turn.over_budget {
            (verdict::over_budget(), "over-budget")
        } else if turn.stalled {
            (verdict::stalled("no output for the stall window"), "stall")
        } else {
            return None;
        };
        ctx.state(task, ruling.state, None, source);
        Some(
            Ending::new(ruling.verdict, ruling.reason)
                .exit_code(turn.exit_code)
                .clock(turn.timed_out),
        )
    }

    /// Adds a finished turn's usage to the session's and records it
    /// against the conversation.
    fn account(&mut self, outcome: &wit::TurnResult) {
        let (ctx, spec) = (self.ctx, self.spec);
        // Usage from the output, else from the transcript a hook named,
        // else from the conversation's transcript where the CLI keeps them
        // (Copilot prints no tokens and its hooks need a trusted folder).
        let transcripts: Vec<_> = match self
            .seen
            .transcript_path
            .as_deref()
            .and_then(|path| super::usage::confine(ctx, &spec.cwd, &spec.env, Path::new(path)))
        {
            Some(named) => vec![named],
            None => outcome
                .conversation_id
                .as_deref()
                .map(|conversation| {
                    super::usage::transcripts_of(
                        ctx.adapter(),
                        ctx.profile(),
                        &spec.cwd,
                        &|name| cli_env(ctx, spec, name),
                        conversation,
                    )
                })
                .unwrap_or_default(),
        };
        // A transcript holds the whole conversation: this turn's usage is
        // what it adds to the turns drover recorded before.
        let logged = || {
            let whole = super::usage::read_with_grace(
                ctx.adapter(),
                &ctx.profile().usage_parser,
                &transcripts,
                ctx.profile().usage_grace,
            )?;
            let prior = outcome
                .conversation_id
                .as_deref()
                .and_then(|id| conversations::prior_usage(&ctx.project, &ctx.profile().name, id));
            Some(prior.map_or(whole, |p| whole.minus(&p)))
        };
        let output = outcome.usage.as_ref().map(Spent::of_report);
        // Counts the output reports under `[turn.usage]` are the printed
        // summary's, read by the profile's patterns: estimates, used only
        // when the CLI's logs (a `[usage]` table) have no exact count.
        let turn_usage = if output.is_some() && ctx.profile().turn.usage_is_printed() {
            let exact = logged();
            self.usage_approximate |= exact.is_none();
            exact.or(output)
        } else {
            output.or_else(logged)
        };
        if let Some(u) = &turn_usage {
            match self.total_usage.as_mut() {
                Some(total) => total.add(u),
                None => self.total_usage = Some(*u),
            }
        }
        if let Some(id) = &self.seen.session_id {
            conversations::record_turn(
                ctx,
                &spec.task,
                id,
                turn_usage.map(|u| u.tokens),
                turn_usage.and_then(|u| u.cost_usd),
            );
        }
    }

    /// The session's result from how it ended and what it saw.
    fn finish(&self, ending: Ending, started: u64, clock: Instant) -> TurnReport {
        let (ctx, task) = (self.ctx, self.spec.task.as_str());
        let (seen, usage) = (&self.seen, self.total_usage);
        // A failed turn's fault is classified from the CLI's own sentence.
        let fault = ending
            .failure
            .and_then(|error| classify_turn(ctx, task, error.as_deref()));
        let status = ending.status;
        TurnReport {
            status,
            run_id: ctx.run.id().to_string(),
            task: task.to_string(),
            cli: ctx.profile().name.clone(),
            workspace: drover_types::WorkspaceKind::Headless,
            reason: ending.reason,
            session_id: seen.session_id.clone(),
            transcript_path: seen.transcript_path.clone(),
            reply: ending.reply,
            usage: usage.map(|u| u.tokens),
            cost_usd: usage.and_then(|u| u.cost_usd),
            usage_approximate: usage.is_some() && self.usage_approximate,
            fault,
            blocked: if status == Verdict::Completed {
                None
            } else {
                seen.blocked
            },
            stop_seen: seen.stop,
            result: ending.result,
            exit_code: ending.exit_code,
            budget_weighted: self.watchdog.budget.weighted,
            timings: Timings {
                started_ns: started,
                ended_ns: now_ns(),
                duration_ms: clock.elapsed().as_millis() as u64,
                timeout_clock: ending.clock.map(str::to_string),
            },
            logs: vec![ctx.run.stdout_log(task), ctx.run.stderr_log(task)],
        }
    }
}

/// A variable of the CLI's environment: the seat's, else the profile's,
/// else drover's own (which the CLI inherits).
fn cli_env(ctx: &Context, spec: &TurnSpec, name: &str) -> Option<String> {
    let seat = spec
        .env
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v);
    seat.or_else(|| ctx.profile().env.get(name))
        .cloned()
        .or_else(|| std::env::var(name).ok())
}

fn adapter_message(e: &wit::AdapterError) -> String {
    match e {
        wit::AdapterError::InvalidInput(m) | wit::AdapterError::Unsupported(m) => m.clone(),
    }
}

/// Fault classification for a failed turn: the CLI's own sentence first,
/// then the tails of its output.
fn classify_turn(ctx: &Context, task: &str, error: Option<&str>) -> Option<FaultReport> {
    let mut lines = faults::tail_lines(&ctx.run.stdout_log(task));
    lines.extend(faults::tail_lines(&ctx.run.stderr_log(task)));
    if let Some(sentence) = error {
        lines.extend(faults::lines_of(sentence.as_bytes()));
    }
    faults::classify(ctx, task, &lines)
}

/// Classifies faults for every non-completed result that has none yet,
/// writes `session.json`, and records the verdict.
fn conclude(ctx: &Context, spec: &TurnSpec, mut result: TurnReport) -> TurnReport {
    if result.status != Verdict::Completed && result.fault.is_none() {
        result.fault = classify_turn(ctx, &spec.task, None);
    }
    super::record_verdict(ctx, &result);
    result
}

#[cfg(test)]
mod tests;
