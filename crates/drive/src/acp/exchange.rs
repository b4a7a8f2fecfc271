//! One prompt's exchange with the agent: its updates, the questions it asks
//! and who answered them.

use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use agent_client_protocol_schema::v1::RequestId;
use serde_json::{Value, json};

use super::{Agent, CANCEL_GRACE, End, Exchange, Hooks, REPLY_MAX, TICK, TOOLS_MAX, ToolView};
use crate::watchdog::{Activity, Alarm, Watchdog};
use crate::{Context, TurnSpec};
use drover_acp::{Event, Wait};
use drover_run::now_ns;
use drover_run::question::{self, Answerer, Choice, ChoiceKind, Question};
use drover_trust::policy::Policy;
use drover_types::wit::SeatState;

/// Sends one prompt and follows it to its end.
#[allow(clippy::too_many_arguments)]
pub(super) fn exchange(
    ctx: &Context,
    spec: &TurnSpec,
    agent: &mut Agent,
    policy: &Policy,
    text: &str,
    hooks: &mut Hooks,
    watchdog: &mut Watchdog,
) -> Exchange {
    let task = spec.task.as_str();
    let task_dir = ctx.run.task_dir(task);
    let mut out = Exchange {
        end: End::Closed,
        reply: String::new(),
        blocked: false,
        usage: None,
    };
    if let Err(e) = agent.client.prompt(&agent.session, text) {
        out.end = End::Unsent(e.to_string());
        return out;
    }
    ctx.state(task, SeatState::Working, None, "acp:session/prompt");
    let mut waiting: VecDeque<(RequestId, Question)> = VecDeque::new();
    let mut cancelling: Option<(End, Instant)> = None;
    let mut activity = Activity::new(());
    loop {
        let alarm = watchdog.check(ctx, spec, hooks.transcript.as_deref());
        if alarm == Some(Alarm::BudgetNudge) {
            ctx.run.lifecycle(
                task,
                "budget-nudge-skipped",
                json!({"why": "a prompt is in flight; the grace runs, then the turn is cancelled"}),
            );
        }
        if cancelling.is_none() {
            let stop = match alarm {
                Some(Alarm::Cancelled) => Some(End::Interrupted),
                Some(Alarm::Timeout(which)) => Some(End::Timeout(which)),
                Some(Alarm::OverBudget) => Some(End::OverBudget),
                Some(Alarm::BudgetNudge) | None => (waiting.is_empty()
                    && activity.stalled(spec.stall_grace))
                .then_some(End::Stalled),
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
            .next_event(TICK.min(watchdog.deadline.remaining().max(TICK)))
        {
            Wait::Idle => continue,
            Wait::Closed => {
                out.end = cancelling.map_or(End::Closed, |(end, _)| end);
                return out;
            }
            Wait::Event(event) => event,
        };
        activity.touch();
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
                    ctx.attention(&format!(
                        "task {task} is blocked on a permission question: {} (answer with `drover answer`: {})",
                        q.summary(),
                        q.options_line()
                    ));
                }
                waiting.push_back((id, q));
            }
            Event::PromptDone(Ok(response)) => {
                out.usage = reported_usage(&response);
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
pub(super) fn deliver(
    ctx: &Context,
    task: &str,
    agent: &mut Agent,
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
    ctx.state(task, SeatState::Working, None, "answer");
}

/// One `session/update`: seat state, journal events, reply text.
pub(super) fn absorb(
    ctx: &Context,
    task: &str,
    agent: &mut Agent,
    params: &Value,
    out: &mut Exchange,
) {
    let update = &params["update"];
    let kind = update["sessionUpdate"].as_str().unwrap_or_default();
    match kind {
        "agent_message_chunk" => {
            if let Some(text) = update["content"]["text"].as_str()
                && out.reply.len() + text.len() <= REPLY_MAX
            {
                out.reply.push_str(text);
            }
            ctx.state(task, SeatState::Working, None, "acp:agent_message_chunk");
        }
        "agent_thought_chunk" => ctx.state(task, SeatState::Working, None, "acp:agent_thought_chunk"),
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
                ctx.state(task, SeatState::Working, None, "acp:tool_call");
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

/// Reads a tool call (or its update, or a permission request's
/// `toolCall`): the tool's name (its own `name`, else the one its
/// `tool_call` gave), the kind, the title and an input summary from
/// `rawInput` (a command, path, URL, query or pattern), else its first
/// location, else its title.
pub(super) fn tool_view(call: &Value, known: &HashMap<String, String>) -> ToolView {
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
pub(super) fn question_of(params: &Value, known: &HashMap<String, String>) -> Question {
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
        on_pane: false,
    }
}

/// The usage an agent reported with a turn's end (MSP's `session/tokenUsage`
/// per model, carried on the prompt's answer): drover's counts per model.
fn reported_usage(response: &Value) -> Option<drover_types::wit::UsageReport> {
    let entries: Vec<drover_types::wit::UsageEntry> = response
        .get("usage")?
        .as_array()?
        .iter()
        .map(|e| {
            let count = |k: &str| e.get(k).and_then(Value::as_u64).unwrap_or(0);
            drover_types::wit::UsageEntry {
                session: String::new(),
                day: String::new(),
                model: e["model"].as_str().unwrap_or_default().to_string(),
                usage: drover_types::wit::Usage {
                    input: count("input"),
                    output: count("output"),
                    cache_read: count("cache_read"),
                    cache_write: count("cache_write"),
                    reasoning: count("reasoning"),
                    requests: 1,
                },
            }
        })
        .collect();
    (!entries.is_empty()).then_some(drover_types::wit::UsageReport {
        entries,
        rejected_rows: 0,
    })
}
