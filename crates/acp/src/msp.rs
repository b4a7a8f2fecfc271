//! drover's side of the Muse Session Protocol (MSP, `muse serve`), spoken
//! through the same [`Event`]s as ACP so one seat driver serves both. What
//! drover relies on, from MSP's published schema and recorded transcripts
//! (docs/adapters/muse.md):
//!
//! - `initialize` (answered with `serverInfo`), then the `initialized`
//!   notification; `session/start {commandId, workspaceRoot}` or
//!   `session/resume {sessionId}`, each answered with `{session: {sessionId,
//!   modelId, …}}`.
//! - `turn/start {sessionId, commandId, input: [{type: text, text}]}`,
//!   answered `{status: accepted, turnId}`; the turn ends at the
//!   `turn/completed` notification, whose `terminal` is `completed`,
//!   `failed` (with `error {kind, message, retryable, quota}` and `reason`),
//!   or another ending (`interrupted`, `cancelled`).
//! - The reply streams as `item/delta {itemId, field: text, delta}` of an
//!   `agentMessage` item, whose `item/completed` carries the whole text;
//!   tool calls are `toolCall` items.
//! - `session/tokenUsage {modelId, usage {inputTokens (cached included),
//!   outputTokens, cachedTokens, reasoningTokens}}` reports each model call;
//!   `turn/completed` repeats the turn's sum in `usage`.
//! - An approval is the server's request `approval/request {approvalId,
//!   currentRequirementId, toolName, availableChoices [{choiceId, label,
//!   decision}]}`: drover answers the request at once and decides with its
//!   own request `approval/decide {sessionId, commandId, approvalId,
//!   requirementId, choiceId}`.
//! - `turn/interrupt {sessionId, turnId}` stops a turn.
//!
//! Events reach the driver in ACP's words: text as `agent_message_chunk`,
//! tool items as `tool_call`/`tool_call_update`, an approval as a
//! permission request whose options are the choices, and the turn's end as
//! the prompt's answer: `{stopReason, usage}` (`end_turn` for completed), or
//! an error carrying Muse's error object.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::time::{Duration, Instant};

use agent_client_protocol_schema::v1::{Error as RpcError, ErrorCode, RequestId};
use serde_json::{Value, json};

use super::client::{AcpError, AgentInfo, Event, Wait};
use super::rpc::{Connection, Incoming, Next};

pub const METHOD_APPROVAL: &str = "approval/request";

/// An approval waiting for drover's decision.
struct Approval {
    approval: String,
    requirement: Value,
    /// The choice that declines, for an approval drover cancels.
    decline: Option<String>,
}

/// Model calls of the turn in flight, as `session/tokenUsage` reported them.
#[derive(Default)]
struct Calls {
    by_model: Vec<(String, [u64; 4])>,
}

impl Calls {
    fn add(&mut self, model: &str, usage: &Value) {
        let counts = counts(usage);
        match self.by_model.iter_mut().find(|(m, _)| m == model) {
            Some((_, sum)) => sum.iter_mut().zip(counts).for_each(|(s, c)| *s += c),
            None => self.by_model.push((model.to_string(), counts)),
        }
    }
}

/// A tool call's arguments, which MSP sends as JSON text.
fn arguments(raw: &Value) -> Value {
    raw.as_str()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_else(|| raw.clone())
}

/// `[input (cached included), output, cached, reasoning]` of an MSP usage.
fn counts(usage: &Value) -> [u64; 4] {
    [
        "inputTokens",
        "outputTokens",
        "cachedTokens",
        "reasoningTokens",
    ]
    .map(|k| usage.get(k).and_then(Value::as_u64).unwrap_or(0))
}

/// drover's usage entry (input net of cache reads) for a model's counts.
fn entry(model: &str, [input, output, cached, reasoning]: [u64; 4]) -> Value {
    json!({
        "model": model,
        "input": input.saturating_sub(cached),
        "output": output.max(reasoning),
        "cache_read": cached,
        "reasoning": reasoning,
    })
}

pub struct MspClient {
    conn: Connection,
    agent: AgentInfo,
    session: String,
    model: String,
    /// The `turn/start` request in flight, then its turn id once accepted.
    starting: Option<RequestId>,
    turn: Option<String>,
    approvals: HashMap<RequestId, Approval>,
    /// agentMessage items whose text arrived as deltas.
    streamed: HashSet<String>,
    calls: Calls,
    commands: u64,
}

impl MspClient {
    /// Sends `initialize`, checks the answer, then `initialized`.
    pub fn initialize(conn: Connection, timeout: Duration) -> Result<MspClient, AcpError> {
        let mut client = MspClient {
            conn,
            agent: AgentInfo::default(),
            session: String::new(),
            model: String::new(),
            starting: None,
            turn: None,
            approvals: HashMap::new(),
            streamed: HashSet::new(),
            calls: Calls::default(),
            commands: 0,
        };
        let answer = client.call(
            "initialize",
            json!({"clientInfo": {"name": "drover", "version": env!("CARGO_PKG_VERSION")}}),
            timeout,
        )?;
        let info = answer.get("serverInfo").ok_or_else(|| AcpError::Protocol {
            method: "initialize",
            detail: "no serverInfo: not an MSP server".to_string(),
        })?;
        let text = |key: &str| {
            info.get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        client.agent = AgentInfo {
            name: text("name"),
            version: text("version"),
            load_session: true,
        };
        client.conn.notify("initialized", Value::Null)?;
        Ok(client)
    }

    pub fn agent(&self) -> &AgentInfo {
        &self.agent
    }

    /// A command id: MSP deduplicates commands by it, so each is new.
    fn command_id(&mut self) -> String {
        self.commands += 1;
        format!("drover-{}-{}", std::process::id(), self.commands)
    }

    fn opened(&mut self, answer: &Value, method: &'static str) -> Result<String, AcpError> {
        let session = &answer["session"];
        let id = session["sessionId"]
            .as_str()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| AcpError::Protocol {
                method,
                detail: "no session.sessionId".to_string(),
            })?;
        self.session = id.to_string();
        self.model = session["modelId"].as_str().unwrap_or("").to_string();
        Ok(self.session.clone())
    }

    /// `session/start` in `cwd`; the new session's id.
    pub fn new_session(&mut self, cwd: &Path, timeout: Duration) -> Result<String, AcpError> {
        let params = json!({"commandId": self.command_id(), "workspaceRoot": cwd});
        let answer = self.call("session/start", params, timeout)?;
        self.opened(&answer, "session/start")
    }

    /// `session/resume`: continue a saved session.
    pub fn load_session(&mut self, id: &str, timeout: Duration) -> Result<(), AcpError> {
        let params = json!({"sessionId": id, "commandId": self.command_id()});
        let answer = self.call("session/resume", params, timeout)?;
        self.opened(&answer, "session/resume").map(|_| ())
    }

    /// Sends `turn/start`; its end arrives as [`Event::PromptDone`].
    pub fn prompt(&mut self, session: &str, text: &str) -> Result<(), AcpError> {
        let params = json!({
            "sessionId": session,
            "commandId": self.command_id(),
            "input": [{"type": "text", "text": text}],
        });
        self.calls = Calls::default();
        self.turn = None;
        self.starting = Some(self.conn.request("turn/start", params)?);
        Ok(())
    }

    /// `turn/interrupt`: the server ends the turn.
    pub fn cancel(&self, session: &str) -> Result<(), AcpError> {
        let params = json!({"sessionId": session, "turnId": self.turn});
        self.conn.request("turn/interrupt", params)?;
        Ok(())
    }

    /// Decides an approval with a choice id, or `None` for its declining
    /// choice.
    pub fn answer_permission(
        &mut self,
        id: &RequestId,
        option: Option<&str>,
    ) -> Result<(), AcpError> {
        self.conn.respond(id, Ok(json!({})))?;
        let Some(approval) = self.approvals.remove(id) else {
            return Ok(());
        };
        let Some(choice) = option.map(str::to_string).or(approval.decline) else {
            return Ok(());
        };
        let params = json!({
            "sessionId": self.session,
            "commandId": self.command_id(),
            "approvalId": approval.approval,
            "requirementId": approval.requirement,
            "choiceId": choice,
        });
        self.conn.request("approval/decide", params)?;
        Ok(())
    }

    /// The next event of the turn, waiting at most `wait`.
    pub fn next_event(&mut self, wait: Duration) -> Wait {
        let until = Instant::now() + wait;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let message = match self.conn.next(left) {
                Next::Message(m) => m,
                Next::Idle => return Wait::Idle,
                Next::Closed => return Wait::Closed,
            };
            if let Some(event) = self.translate(message) {
                return Wait::Event(event);
            }
        }
    }

    fn translate(&mut self, message: Incoming) -> Option<Event> {
        match message {
            Incoming::Notification { method, params } => self.notification(&method, &params),
            Incoming::Request { id, method, params } if method == METHOD_APPROVAL => {
                if self.turn.is_none() && self.starting.is_none() {
                    let _ = self.conn.respond(&id, Ok(json!({})));
                    return None;
                }
                Some(self.approval(id, &params))
            }
            Incoming::Request { id, method, .. } => {
                let error = RpcError::method_not_found()
                    .data(Value::String(format!("drover does not offer {method}")));
                let _ = self.conn.respond(&id, Err(error));
                None
            }
            Incoming::Response { id, result } => {
                if self.starting.as_ref() != Some(&id) {
                    return None;
                }
                self.starting = None;
                match result {
                    Ok(answer) if answer["status"] == "accepted" => {
                        self.turn = answer["turnId"].as_str().map(str::to_string);
                        None
                    }
                    Ok(answer) => Some(Event::PromptDone(Err(RpcError::new(
                        ErrorCode::InternalError.into(),
                        format!("the turn was not started: {}", answer["status"]),
                    )))),
                    Err(error) => Some(Event::PromptDone(Err(error))),
                }
            }
            Incoming::Invalid(text) => Some(Event::Noise(text)),
        }
    }

    fn update(update: Value) -> Option<Event> {
        Some(Event::Update(json!({"update": update})))
    }

    fn notification(&mut self, method: &str, params: &Value) -> Option<Event> {
        let item = &params["item"];
        match method {
            "item/delta" if params["field"] == "text" => {
                let id = params["itemId"].as_str().unwrap_or_default().to_string();
                self.streamed.insert(id);
                let text = params["delta"].as_str().unwrap_or_default();
                Self::update(json!({"sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": text}}))
            }
            "item/delta" => Self::update(json!({"sessionUpdate": "agent_thought_chunk"})),
            "item/started" if item["kind"] == "toolCall" => Self::update(json!({
                "sessionUpdate": "tool_call",
                "toolCallId": item["callId"],
                "name": item["tool"],
                "title": item["tool"],
                "kind": "other",
                "rawInput": arguments(&item["args"]),
            })),
            "item/completed" if item["kind"] == "toolCall" => Self::update(json!({
                "sessionUpdate": "tool_call_update",
                "toolCallId": item["callId"],
                "status": if item["status"] == "failed" { "failed" } else { "completed" },
            })),
            // A message that did not stream arrives whole.
            "item/completed" if item["kind"] == "agentMessage" => {
                let id = item["itemId"].as_str().unwrap_or_default();
                if self.streamed.remove(id) {
                    return None;
                }
                let text = item["text"].as_str().unwrap_or_default();
                Self::update(json!({"sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": text}}))
            }
            "session/tokenUsage" => {
                let model = params["modelId"]
                    .as_str()
                    .unwrap_or(&self.model)
                    .to_string();
                self.calls.add(&model, &params["usage"]);
                None
            }
            "turn/completed" => {
                if self.turn.is_some()
                    && params["turnId"]
                        .as_str()
                        .is_some_and(|t| Some(t) != self.turn.as_deref())
                {
                    return None;
                }
                self.turn = None;
                self.starting = None;
                Some(Event::PromptDone(self.ending(params)))
            }
            _ => None,
        }
    }

    /// The turn's end in ACP's words, with its usage.
    fn ending(&mut self, params: &Value) -> Result<Value, RpcError> {
        let calls = std::mem::take(&mut self.calls);
        let usage: Vec<Value> = if calls.by_model.is_empty() {
            params
                .get("usage")
                .filter(|u| u.is_object())
                .map(|u| vec![entry(&self.model, counts(u))])
                .unwrap_or_default()
        } else {
            calls.by_model.iter().map(|(m, c)| entry(m, *c)).collect()
        };
        match params["terminal"].as_str().unwrap_or("") {
            "completed" => Ok(json!({"stopReason": "end_turn", "usage": usage})),
            "failed" => {
                let error = params.get("error").cloned().unwrap_or(Value::Null);
                let message = params["reason"]
                    .as_str()
                    .or_else(|| error["message"].as_str())
                    .unwrap_or("the turn failed")
                    .to_string();
                Err(RpcError::new(ErrorCode::InternalError.into(), message).data(error))
            }
            "interrupted" | "cancelled" => Ok(json!({"stopReason": "cancelled", "usage": usage})),
            other => Ok(json!({"stopReason": other, "usage": usage})),
        }
    }

    /// An approval as ACP's permission request: the choices are its options.
    fn approval(&mut self, id: RequestId, params: &Value) -> Event {
        let choices = params["availableChoices"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let kind = |decision: &str| match decision {
            "approved" => "allow_once",
            "approvedForSession" | "approvedAlways" => "allow_always",
            _ => "reject_once",
        };
        let options: Vec<Value> = choices
            .iter()
            .map(|c| {
                json!({
                    "optionId": c["choiceId"],
                    "name": c["label"],
                    "kind": kind(c["decision"].as_str().unwrap_or("")),
                })
            })
            .collect();
        let decline = choices
            .iter()
            .find(|c| kind(c["decision"].as_str().unwrap_or("")) == "reject_once")
            .and_then(|c| c["choiceId"].as_str())
            .map(str::to_string);
        let approval = params["approvalId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let requirement = params
            .get("currentRequirementId")
            .cloned()
            .unwrap_or_else(|| json!({"approvalId": approval, "sourceIndex": 0}));
        self.approvals.insert(
            id.clone(),
            Approval {
                approval,
                requirement,
                decline,
            },
        );
        let tool = params["toolName"].as_str().unwrap_or("a tool");
        let target = params["subject"]["path"].as_str().unwrap_or("");
        Event::Permission {
            id,
            params: json!({
                "sessionId": params["sessionId"],
                "toolCall": {
                    "toolCallId": params["toolCallId"],
                    "name": tool,
                    "title": format!("{tool} {target}").trim().to_string(),
                    "kind": "edit",
                    "rawInput": arguments(&params["rawArgs"]),
                },
                "options": options,
            }),
        }
    }

    /// A request whose answer the handshake waits for; a server request
    /// meanwhile is refused.
    fn call(
        &mut self,
        method: &'static str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, AcpError> {
        let id = self.conn.request(method, params)?;
        let until = Instant::now() + timeout;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(AcpError::Timeout {
                    method,
                    after: timeout,
                });
            }
            match self.conn.next(left) {
                Next::Idle => {}
                Next::Closed => return Err(AcpError::Closed { during: method }),
                Next::Message(Incoming::Response { id: got, result }) if got == id => {
                    return result.map_err(|e| AcpError::Rpc {
                        method,
                        code: e.code.into(),
                        message: e.message,
                    });
                }
                Next::Message(Incoming::Request { id, method: m, .. }) => {
                    let error = RpcError::method_not_found()
                        .data(Value::String(format!("drover does not offer {m}")));
                    let _ = self.conn.respond(&id, Err(error));
                }
                Next::Message(_) => {}
            }
        }
    }
}
