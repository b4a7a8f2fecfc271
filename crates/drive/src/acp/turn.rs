//! One message to a live agent: the prompt, its result-file nudges, and the
//! agent's exit.

use std::time::{Duration, Instant};

use serde_json::json;

use super::exchange::exchange;
use super::{Agent, End, Hooks, base, conclude, usage_of_turn};
use crate::clock::Deadline;
use crate::result_file::ResultFile;
use crate::shared::NUDGE_RESULT;
use crate::verdict::{self, ResultState};
use crate::watchdog::Watchdog;
use crate::{Context, TurnReport, TurnSpec, Verdict, conversations, usage::Spent};
use drover_run::{EventWatcher, now_ns};
use drover_trust::policy::Policy;
use drover_types::wit;
use drover_types::wit::SeatState;

/// One message to a seat's live agent, with the result-file nudges.
pub fn turn(ctx: &Context, spec: &TurnSpec, agent: &mut Agent, policy: &Policy) -> TurnReport {
    let task = spec.task.as_str();
    let started = now_ns();
    let clock = Instant::now();
    crate::shared::keep_prompt(ctx, spec);
    let mut watchdog = Watchdog::new(Deadline::after(spec.timeout));
    let result_file = spec
        .result_file
        .as_ref()
        .map(|p| ResultFile::before_launch(p.clone()));
    let mut hooks = Hooks {
        watcher: EventWatcher::new(
            ctx.run.events_dir(),
            crate::drops::DropParser::for_seat(ctx.run.root(), ctx.profile(), ctx.adapter()),
        )
        .since(agent.launched),
        since: agent.launched,
        transcript: agent.transcript.clone(),
    };
    let mut nudges_left = spec.stop_nudges;
    let mut usage: Option<Spent> = None;
    let mut reply: Option<String> = None;
    let session = agent.session.clone();
    let finish = |status: Verdict,
                  reason: String,
                  reply: &Option<String>,
                  usage: Option<Spent>,
                  hooks: &Hooks,
                  watchdog: &Watchdog| {
        let mut result = base(ctx, spec, started, clock, status, reason);
        result.session_id = Some(session.clone());
        result.transcript_path = hooks.transcript.clone();
        result.reply = reply.clone();
        result.usage = usage.map(|u| u.tokens);
        result.cost_usd = usage.and_then(|u| u.cost_usd);
        result.budget_weighted = watchdog.budget.weighted;
        result
    };
    let mut text = match ctx
        .adapter()
        .render_prompt(&ctx.profile().to_wit(), &spec.prompt)
    {
        Ok(Ok(text)) => text,
        Ok(Err(wit::AdapterError::InvalidInput(m) | wit::AdapterError::Unsupported(m))) => {
            let result = finish(
                Verdict::Crashed,
                format!("the adapter cannot render the prompt: {m}"),
                &reply,
                usage,
                &hooks,
                &watchdog,
            );
            return conclude(ctx, spec, result, None);
        }
        Err(e) => {
            let result = finish(
                Verdict::Crashed,
                format!("the adapter failed rendering the prompt: {e}"),
                &reply,
                usage,
                &hooks,
                &watchdog,
            );
            return conclude(ctx, spec, result, None);
        }
    };
    loop {
        let exchange = exchange(ctx, spec, agent, policy, &text, &mut hooks, &mut watchdog);
        hooks.poll(task);
        agent.transcript = hooks.transcript.clone();
        if !exchange.reply.is_empty() {
            reply = Some(exchange.reply.clone());
        }
        // What the agent reported for this turn (MSP), else the
        // transcript's growth.
        let turn_usage = match &exchange.usage {
            Some(report) => Some(Spent::of_report(report)),
            None => usage_of_turn(ctx, spec, &agent.session, hooks.transcript.as_deref()),
        };
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
        // A turn that stops short leaves the seat in a state no hook named.
        let stopped = |ruling: verdict::Ruling, source: &str| {
            ctx.state(task, ruling.state, None, source);
            let mut result = finish(
                ruling.verdict,
                ruling.reason,
                &reply,
                usage,
                &hooks,
                &watchdog,
            );
            if exchange.blocked && ruling.verdict != Verdict::Completed {
                result.blocked = Some(wit::PromptKind::Permission);
            }
            result
        };
        let (ruling, source, error) = match exchange.end {
            End::Stopped(reason) if reason == "end_turn" => {
                ctx.state(task, SeatState::Done, None, "acp:end_turn");
                let found = result_file
                    .as_ref()
                    .and_then(|file| file.wait(spec.result_wait, || true));
                let state = ResultState::of(spec.result_file.as_ref(), found.is_some());
                if let (Some(file), ResultState::Missing(_)) = (&result_file, &state) {
                    ctx.run.lifecycle(
                        task,
                        "resultless-stop",
                        json!({"path": file.path(), "nudges_left": nudges_left}),
                    );
                    if nudges_left > 0 {
                        nudges_left -= 1;
                        ctx.run.lifecycle(
                            task,
                            "nudge",
                            json!({"why": "result-file", "left": nudges_left}),
                        );
                        text = format!("{NUDGE_RESULT} ({})", file.path().display());
                        continue;
                    }
                }
                let ruling = verdict::of_stop_reason(&reason, &state);
                let mut result = finish(
                    ruling.verdict,
                    ruling.reason,
                    &reply,
                    usage,
                    &hooks,
                    &watchdog,
                );
                result.stop_seen = true;
                result.result = found;
                return conclude(ctx, spec, result, None);
            }
            End::Stopped(reason) => {
                let source = format!("acp:{reason}");
                (
                    verdict::of_stop_reason(&reason, &ResultState::NotAsked),
                    source,
                    None,
                )
            }
            End::Failed(message) => (
                verdict::stalled(&format!("the turn failed: {message}")),
                "acp:error".to_string(),
                Some(message),
            ),
            End::Closed => {
                let exit = wait_exit(agent);
                let what = match exit {
                    Some(code) => format!("the agent exited (code {code}) during the turn"),
                    None => "the agent closed its output during the turn".to_string(),
                };
                let mut result = stopped(verdict::gone(&what), "acp:closed");
                result.exit_code = exit;
                return conclude(ctx, spec, result, None);
            }
            End::Timeout(which) => {
                ctx.run.lifecycle(
                    task,
                    "timeout-fired",
                    json!({"expired_clock": which, "timeout_s": spec.timeout.as_secs_f64()}),
                );
                let mut result = stopped(verdict::timed_out(spec.timeout, which), "timeout");
                result.timings.timeout_clock = Some(which.to_string());
                return conclude(ctx, spec, result, None);
            }
            End::Interrupted => (verdict::interrupted(), "interrupted".to_string(), None),
            End::OverBudget => (verdict::over_budget(), "over-budget".to_string(), None),
            End::Stalled => (
                verdict::stalled("no message from the agent for the stall window"),
                "stall".to_string(),
                None,
            ),
            End::Unsent(e) => (
                verdict::gone(&format!("cannot send the prompt: {e}")),
                "acp:send-failed".to_string(),
                None,
            ),
        };
        let result = stopped(ruling, &source);
        return conclude(ctx, spec, result, error.as_deref());
    }
}

/// The agent's exit code once it exited (briefly waited for).
pub(super) fn wait_exit(agent: &mut Agent) -> Option<i32> {
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
