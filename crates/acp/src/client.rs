//! drover's side of an ACP connection: the handshake (`initialize`, then
//! `session/new` or `session/load`), one `session/prompt` at a time,
//! `session/cancel`, and answers to the agent's requests.
//!
//! drover declares no client capabilities: no `fs` (an agent reads and
//! writes the seat's files itself, with its own permission rules, and gains
//! nothing from routing them through drover) and no `terminal`. So every
//! request an agent makes other than `session/request_permission` is
//! answered with JSON-RPC "method not found", naming the method; a
//! permission request outside a turn is answered `cancelled`.

use std::path::Path;
use std::time::{Duration, Instant};

use agent_client_protocol_schema::ProtocolVersion;
use agent_client_protocol_schema::v1::{
    CancelNotification, ClientCapabilities, ContentBlock, Error as RpcError, Implementation,
    InitializeRequest, InitializeResponse, LoadSessionRequest, NewSessionRequest,
    NewSessionResponse, PromptRequest, RequestId, RequestPermissionOutcome,
    RequestPermissionResponse, SelectedPermissionOutcome, TextContent,
};
use serde_json::Value;

use super::rpc::{Connection, Incoming, Next, SendError};

pub const METHOD_PERMISSION: &str = "session/request_permission";

#[derive(Debug, thiserror::Error)]
pub enum AcpError {
    #[error("the agent closed its output during {during}")]
    Closed { during: &'static str },
    #[error("the agent did not answer {method} within {}s", after.as_secs())]
    Timeout {
        method: &'static str,
        after: Duration,
    },
    #[error("the agent answered {method} with error {code}: {message}")]
    Rpc {
        method: &'static str,
        code: i32,
        message: String,
    },
    #[error("the agent's answer to {method} is not valid: {detail}")]
    Protocol {
        method: &'static str,
        detail: String,
    },
    #[error("the agent speaks ACP version {0}; drover speaks version 1")]
    Version(u16),
    #[error("the agent cannot resume a conversation (it does not offer session/load)")]
    NoLoad,
    #[error(transparent)]
    Send(#[from] SendError),
}

/// Who answered `initialize`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AgentInfo {
    pub name: String,
    pub version: String,
    pub load_session: bool,
}

/// Something that happened during a turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A `session/update` notification's params.
    Update(Value),
    /// A `session/request_permission`; answer it with [`AcpClient::answer_permission`].
    Permission { id: RequestId, params: Value },
    /// The response to the prompt in flight.
    PromptDone(Result<Value, RpcError>),
    /// Output that is not protocol (logged, never fatal).
    Noise(String),
}

/// What [`AcpClient::next_event`] gave.
#[derive(Debug, PartialEq)]
pub enum Wait {
    Event(Event),
    Idle,
    Closed,
}

pub struct AcpClient {
    conn: Connection,
    agent: AgentInfo,
    prompt: Option<RequestId>,
}

impl AcpClient {
    /// Sends `initialize` and checks the agent's answer.
    pub fn initialize(conn: Connection, timeout: Duration) -> Result<AcpClient, AcpError> {
        let mut client = AcpClient {
            conn,
            agent: AgentInfo::default(),
            prompt: None,
        };
        let request = InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(ClientCapabilities::default())
            .client_info(Implementation::new("drover", env!("CARGO_PKG_VERSION")));
        let answer: InitializeResponse = client.call("initialize", request, timeout)?;
        if answer.protocol_version != ProtocolVersion::V1 {
            return Err(AcpError::Version(answer.protocol_version.as_u16()));
        }
        client.agent = AgentInfo {
            name: answer
                .agent_info
                .as_ref()
                .map(|i| i.name.clone())
                .unwrap_or_default(),
            version: answer
                .agent_info
                .as_ref()
                .map(|i| i.version.clone())
                .unwrap_or_default(),
            load_session: answer.agent_capabilities.load_session,
        };
        Ok(client)
    }

    pub fn agent(&self) -> &AgentInfo {
        &self.agent
    }

    /// `session/new` in `cwd`; the new session's id.
    pub fn new_session(&mut self, cwd: &Path, timeout: Duration) -> Result<String, AcpError> {
        let answer: NewSessionResponse =
            self.call("session/new", NewSessionRequest::new(cwd), timeout)?;
        Ok(answer.session_id.to_string())
    }

    /// `session/load`: continue a saved conversation. The history the agent
    /// replays as updates before answering is not a turn and is dropped.
    pub fn load_session(
        &mut self,
        id: &str,
        cwd: &Path,
        timeout: Duration,
    ) -> Result<(), AcpError> {
        if !self.agent.load_session {
            return Err(AcpError::NoLoad);
        }
        let _: Value = self.call(
            "session/load",
            LoadSessionRequest::new(id.to_string(), cwd),
            timeout,
        )?;
        Ok(())
    }

    /// Sends `session/prompt`; its end arrives as [`Event::PromptDone`].
    pub fn prompt(&mut self, session: &str, text: &str) -> Result<(), AcpError> {
        let request = PromptRequest::new(
            session.to_string(),
            vec![ContentBlock::Text(TextContent::new(text))],
        );
        self.prompt = Some(self.conn.request("session/prompt", request)?);
        Ok(())
    }

    /// `session/cancel`: the agent ends the prompt with `cancelled`.
    pub fn cancel(&self, session: &str) -> Result<(), AcpError> {
        Ok(self.conn.notify(
            "session/cancel",
            CancelNotification::new(session.to_string()),
        )?)
    }

    /// Answers a permission request with an option id, or `None` for
    /// `cancelled`.
    pub fn answer_permission(&self, id: &RequestId, option: Option<&str>) -> Result<(), AcpError> {
        answer(&self.conn, id, option)
    }

    /// The next event of the turn, waiting at most `wait`. Requests drover
    /// does not serve are answered here.
    pub fn next_event(&mut self, wait: Duration) -> Wait {
        let until = Instant::now() + wait;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let message = match self.conn.next(left) {
                Next::Message(m) => m,
                Next::Idle => return Wait::Idle,
                Next::Closed => return Wait::Closed,
            };
            match message {
                Incoming::Notification { method, params } if method == "session/update" => {
                    return Wait::Event(Event::Update(params));
                }
                Incoming::Notification { .. } => {}
                Incoming::Request { id, method, params } if method == METHOD_PERMISSION => {
                    if self.prompt.is_some() {
                        return Wait::Event(Event::Permission { id, params });
                    }
                    let _ = self.answer_permission(&id, None);
                }
                Incoming::Request { id, method, .. } => self.refuse(&id, &method),
                Incoming::Response { id, result } => {
                    if self.prompt.as_ref() == Some(&id) {
                        self.prompt = None;
                        return Wait::Event(Event::PromptDone(result));
                    }
                }
                Incoming::Invalid(text) => return Wait::Event(Event::Noise(text)),
            }
        }
    }

    fn refuse(&self, id: &RequestId, method: &str) {
        refuse(&self.conn, id, method);
    }

    /// A request whose answer the handshake waits for; whatever else arrives
    /// meanwhile is answered or dropped.
    fn call<T: serde::de::DeserializeOwned>(
        &mut self,
        method: &'static str,
        params: impl serde::Serialize,
        timeout: Duration,
    ) -> Result<T, AcpError> {
        let conn = &self.conn;
        let value = call(conn, method, params, timeout, |id, m| {
            if m == METHOD_PERMISSION {
                let _ = answer(conn, &id, None);
            } else {
                refuse(conn, &id, &m);
            }
        })?;
        serde_json::from_value(value).map_err(|e| AcpError::Protocol {
            method,
            detail: e.to_string(),
        })
    }
}

/// Answers a request drover does not serve: "method not found", naming it.
pub(crate) fn refuse(conn: &Connection, id: &RequestId, method: &str) {
    let error =
        RpcError::method_not_found().data(Value::String(format!("drover does not offer {method}")));
    let _ = conn.respond(id, Err(error));
}

/// Answers a permission request with an option id, or `None` for
/// `cancelled`.
fn answer(conn: &Connection, id: &RequestId, option: Option<&str>) -> Result<(), AcpError> {
    let outcome = match option {
        Some(option) => {
            RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option.to_string()))
        }
        None => RequestPermissionOutcome::Cancelled,
    };
    let value = serde_json::to_value(RequestPermissionResponse::new(outcome))
        .map_err(|e| SendError(std::io::Error::other(e)))?;
    Ok(conn.respond(id, Ok(value))?)
}

/// Sends `method` and waits for its answer (the handshake's requests, in
/// either protocol); a request the peer makes meanwhile goes to
/// `on_request` (its id and method), anything else is dropped.
pub(crate) fn call(
    conn: &Connection,
    method: &'static str,
    params: impl serde::Serialize,
    timeout: Duration,
    mut on_request: impl FnMut(RequestId, String),
) -> Result<Value, AcpError> {
    let id = conn.request(method, params)?;
    let until = Instant::now() + timeout;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(AcpError::Timeout {
                method,
                after: timeout,
            });
        }
        match conn.next(left) {
            Next::Idle => {}
            Next::Closed => return Err(AcpError::Closed { during: method }),
            Next::Message(Incoming::Response { id: got, result }) if got == id => {
                return result.map_err(|e| AcpError::Rpc {
                    method,
                    code: e.code.into(),
                    message: e.message,
                });
            }
            Next::Message(Incoming::Request { id, method: m, .. }) => on_request(id, m),
            Next::Message(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{result, scripted};
    use serde_json::json;

    #[test]
    fn a_turn_streams_updates_asks_permission_and_ends_with_the_prompt_response() {
        let (conn, agent) = scripted(|m| match m["method"].as_str() {
            Some("initialize") => vec![result(
                m,
                json!({"protocolVersion": 1, "agentCapabilities": {"loadSession": true}, "agentInfo": {"name": "fake", "version": "1.0"}}),
            )],
            Some("session/new") => vec![
                json!({"jsonrpc": "2.0", "id": 90, "method": "fs/read_text_file", "params": {"path": "/etc/passwd"}}),
                result(m, json!({"sessionId": "s1"})),
            ],
            Some("session/prompt") => vec![
                json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "hi"}}}}),
                json!({"jsonrpc": "2.0", "id": 7, "method": "session/request_permission", "params": {"sessionId": "s1", "toolCall": {"toolCallId": "t"}, "options": []}}),
            ],
            None if m["id"] == 7 => {
                vec![json!({"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}})]
            }
            _ => Vec::new(),
        });
        let mut client = AcpClient::initialize(conn, Duration::from_secs(5)).expect("initialize");
        assert_eq!(client.agent().name, "fake");
        assert!(client.agent().load_session);
        let session = client
            .new_session(Path::new("/work"), Duration::from_secs(5))
            .expect("session/new");
        assert_eq!(session, "s1");
        client
            .prompt(&session, "Reply with exactly: hi")
            .expect("prompt");
        let Wait::Event(Event::Update(update)) = client.next_event(Duration::from_secs(5)) else {
            panic!("expected an update");
        };
        assert_eq!(update["update"]["content"]["text"], "hi");
        let Wait::Event(Event::Permission { id, .. }) = client.next_event(Duration::from_secs(5))
        else {
            panic!("expected a permission request");
        };
        client
            .answer_permission(&id, Some("allow"))
            .expect("answer");
        assert_eq!(
            client.next_event(Duration::from_secs(5)),
            Wait::Event(Event::PromptDone(Ok(json!({"stopReason": "end_turn"}))))
        );
        drop(client);
        let seen = agent.join().expect("agent");
        let refusal = seen
            .iter()
            .find(|m| m["id"] == 90)
            .expect("fs request answered");
        assert_eq!(refusal["error"]["code"], -32601);
        assert_eq!(
            refusal["error"]["data"],
            "drover does not offer fs/read_text_file"
        );
        let init = &seen[0]["params"];
        assert_eq!(init["clientCapabilities"]["fs"]["readTextFile"], false);
        assert_eq!(init["clientCapabilities"]["terminal"], false);
        let answer = seen
            .iter()
            .find(|m| m["id"] == 7)
            .expect("permission answered");
        assert_eq!(
            answer["result"]["outcome"],
            json!({"outcome": "selected", "optionId": "allow"})
        );
    }

    #[test]
    fn handshake_failures_are_typed() {
        let (conn, _agent) = scripted(|m| match m["method"].as_str() {
            Some("initialize") => vec![result(
                m,
                json!({"protocolVersion": 1, "agentCapabilities": {"loadSession": false}}),
            )],
            Some("session/new") => vec![
                json!({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32000, "message": "Authentication required"}}),
            ],
            _ => Vec::new(),
        });
        let mut client = AcpClient::initialize(conn, Duration::from_secs(5)).expect("initialize");
        assert!(matches!(
            client.load_session("old", Path::new("/w"), Duration::from_secs(5)),
            Err(AcpError::NoLoad)
        ));
        let err = client
            .new_session(Path::new("/w"), Duration::from_secs(5))
            .expect_err("auth error");
        assert_eq!(
            err.to_string(),
            "the agent answered session/new with error -32000: Authentication required"
        );
    }

    #[test]
    fn a_silent_or_vanished_agent_is_reported() {
        let (conn, _agent) = scripted(|_| Vec::new());
        assert!(matches!(
            AcpClient::initialize(conn, Duration::from_millis(200)),
            Err(AcpError::Timeout {
                method: "initialize",
                ..
            })
        ));
        let conn = Connection::new(std::io::empty(), std::io::sink(), None);
        assert!(matches!(
            AcpClient::initialize(conn, Duration::from_secs(5)),
            Err(AcpError::Closed {
                during: "initialize"
            })
        ));
        let (conn, _agent) = scripted(|m| vec![result(m, json!({"protocolVersion": 2}))]);
        assert!(matches!(
            AcpClient::initialize(conn, Duration::from_secs(5)),
            Err(AcpError::Version(2))
        ));
    }
}
