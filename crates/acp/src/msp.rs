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
                super::client::refuse(&self.conn, &id, &method);
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
        let conn = &self.conn;
        super::client::call(conn, method, params, timeout, |id, m| {
            super::client::refuse(conn, &id, &m)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{result, scripted};

    fn note(method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "method": method, "params": params})
    }

    const WAIT: Duration = Duration::from_secs(5);

    /// The server's answers to the handshake; `turn` answers `turn/start`.
    fn server(turn: fn(&Value) -> Vec<Value>) -> impl Fn(&Value) -> Vec<Value> {
        move |m| match m["method"].as_str() {
            Some("initialize") => vec![result(
                m,
                json!({"serverInfo": {"name": "muse-session-server", "version": "1.4.14"}}),
            )],
            Some("session/start") => vec![result(
                m,
                json!({"session": {"sessionId": "s1", "modelId": "gpt-5"}}),
            )],
            Some("turn/start") => turn(m),
            Some("approval/decide") => vec![result(m, json!({"status": "accepted"}))],
            _ => Vec::new(),
        }
    }

    fn opened(conn: Connection) -> MspClient {
        let mut client = MspClient::initialize(conn, WAIT).expect("initialize");
        assert_eq!(client.agent().name, "muse-session-server");
        assert_eq!(
            client.new_session(Path::new("/work"), WAIT).expect("start"),
            "s1"
        );
        client
    }

    fn next(client: &mut MspClient) -> Event {
        match client.next_event(WAIT) {
            Wait::Event(event) => event,
            other => panic!("no event: {other:?}"),
        }
    }

    #[test]
    fn a_turn_streams_its_text_and_ends_with_the_usage_tokenusage_reported() {
        let (conn, server) = scripted(server(|m| {
            let usage = json!({"inputTokens": 3101, "outputTokens": 77, "cachedTokens": 300, "reasoningTokens": 5});
            vec![
                result(m, json!({"status": "accepted", "turnId": "t1"})),
                note(
                    "item/delta",
                    json!({"itemId": "i1", "field": "text", "delta": "HEL"}),
                ),
                note(
                    "item/delta",
                    json!({"itemId": "i1", "field": "text", "delta": "LO"}),
                ),
                // The whole text again, once streamed: not repeated.
                note(
                    "item/completed",
                    json!({"item": {"itemId": "i1", "kind": "agentMessage", "text": "HELLO"}}),
                ),
                note(
                    "session/tokenUsage",
                    json!({"modelId": "gpt-5", "usage": usage}),
                ),
                note(
                    "turn/completed",
                    json!({"turnId": "t1", "terminal": "completed", "usage": usage}),
                ),
            ]
        }));
        let mut client = opened(conn);
        client
            .prompt("s1", "Reply with exactly: HELLO")
            .expect("turn/start");
        let mut text = String::new();
        let done = loop {
            match next(&mut client) {
                Event::Update(u) => {
                    text.push_str(u["update"]["content"]["text"].as_str().unwrap_or(""))
                }
                Event::PromptDone(done) => break done,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(text, "HELLO");
        let done = done.expect("completed");
        assert_eq!(done["stopReason"], "end_turn");
        // Counted once (tokenUsage, not again from turn/completed), input
        // net of the cached part.
        assert_eq!(
            done["usage"],
            json!([{"model": "gpt-5", "input": 2801, "output": 77, "cache_read": 300, "reasoning": 5}])
        );
        drop(client);
        let sent = server.join().expect("server");
        assert_eq!(sent[1]["method"], "initialized");
        assert_eq!(
            sent[3]["params"]["input"][0]["text"],
            "Reply with exactly: HELLO"
        );
    }

    #[test]
    fn an_approval_is_a_permission_question_decided_with_its_own_choice() {
        let (conn, server) = scripted(server(|m| {
            vec![
                result(m, json!({"status": "accepted", "turnId": "t1"})),
                json!({"jsonrpc": "2.0", "id": 41, "method": "approval/request", "params": {
                    "sessionId": "s1", "approvalId": "a1", "toolName": "write_file",
                    "subject": {"path": "/work/hi.txt"}, "rawArgs": "{\"path\":\"hi.txt\"}",
                    "currentRequirementId": {"approvalId": "a1", "sourceIndex": 0},
                    "availableChoices": [
                        {"choiceId": "allow_once", "label": "Allow once", "decision": "approved"},
                        {"choiceId": "abort", "label": "Reject", "decision": "abort"}]}}),
            ]
        }));
        let mut client = opened(conn);
        client.prompt("s1", "write it").expect("turn/start");
        let Event::Permission { id, params } = next(&mut client) else {
            panic!("no question");
        };
        assert_eq!(params["toolCall"]["title"], "write_file /work/hi.txt");
        assert_eq!(params["toolCall"]["rawInput"]["path"], "hi.txt");
        let kinds: Vec<&str> = params["options"]
            .as_array()
            .map(|o| o.iter().filter_map(|o| o["kind"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(kinds, ["allow_once", "reject_once"]);
        // No answer given (a cancelled turn): the declining choice.
        client.answer_permission(&id, None).expect("decide");
        drop(client);
        let sent = server.join().expect("server");
        assert!(
            sent.iter()
                .any(|m| m["id"] == 41 && m["result"] == json!({})),
            "{sent:#?}"
        );
        let decide = sent
            .iter()
            .find(|m| m["method"] == "approval/decide")
            .unwrap_or_else(|| panic!("no decision: {sent:#?}"));
        assert_eq!(decide["params"]["choiceId"], "abort");
        assert_eq!(decide["params"]["approvalId"], "a1");
        assert_eq!(decide["params"]["requirementId"]["sourceIndex"], 0);
    }

    #[test]
    fn a_failed_turn_carries_muses_error_object() {
        let (conn, _server) = scripted(server(|m| {
            vec![
                result(m, json!({"status": "accepted", "turnId": "t1"})),
                note(
                    "turn/completed",
                    json!({"turnId": "t1", "terminal": "failed",
                    "reason": "model failed after 3 attempts: provider returned 503 service_unavailable",
                    "error": {"kind": "modelError", "message": "model failed after 3 attempts: provider returned 503 service_unavailable", "retryable": true}}),
                ),
            ]
        }));
        let mut client = opened(conn);
        client.prompt("s1", "work").expect("turn/start");
        let Event::PromptDone(Err(error)) = next(&mut client) else {
            panic!("not a failure");
        };
        assert!(error.message.contains("provider returned 503"));
        assert_eq!(error.data.expect("the error object")["kind"], "modelError");
    }

    #[test]
    fn a_server_that_is_not_msp_is_refused_at_the_handshake() {
        let (conn, _server) = scripted(|m| vec![result(m, json!({"protocolVersion": 1}))]);
        let refused = MspClient::initialize(conn, WAIT).err().expect("refused");
        assert!(
            refused.to_string().contains("not an MSP server"),
            "{refused}"
        );
    }
}
