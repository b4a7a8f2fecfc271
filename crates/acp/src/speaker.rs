//! The protocol a seat's agent speaks: ACP, or Muse's MSP, behind one
//! client that gives the seat driver the same events either way.

use std::path::Path;
use std::time::Duration;

use agent_client_protocol_schema::v1::RequestId;

use super::client::{AcpClient, AcpError, AgentInfo, Wait};
use super::msp::MspClient;
use super::rpc::Connection;

/// Which protocol an agent process speaks on its stdio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Acp,
    Msp,
}

pub enum Client {
    Acp(AcpClient),
    Msp(MspClient),
}

impl Client {
    /// The handshake of `protocol`.
    pub fn initialize(
        conn: Connection,
        protocol: Protocol,
        timeout: Duration,
    ) -> Result<Client, AcpError> {
        Ok(match protocol {
            Protocol::Acp => Client::Acp(AcpClient::initialize(conn, timeout)?),
            Protocol::Msp => Client::Msp(MspClient::initialize(conn, timeout)?),
        })
    }

    pub fn agent(&self) -> &AgentInfo {
        match self {
            Client::Acp(c) => c.agent(),
            Client::Msp(c) => c.agent(),
        }
    }

    pub fn new_session(&mut self, cwd: &Path, timeout: Duration) -> Result<String, AcpError> {
        match self {
            Client::Acp(c) => c.new_session(cwd, timeout),
            Client::Msp(c) => c.new_session(cwd, timeout),
        }
    }

    pub fn load_session(
        &mut self,
        id: &str,
        cwd: &Path,
        timeout: Duration,
    ) -> Result<(), AcpError> {
        match self {
            Client::Acp(c) => c.load_session(id, cwd, timeout),
            Client::Msp(c) => c.load_session(id, timeout),
        }
    }

    pub fn prompt(&mut self, session: &str, text: &str) -> Result<(), AcpError> {
        match self {
            Client::Acp(c) => c.prompt(session, text),
            Client::Msp(c) => c.prompt(session, text),
        }
    }

    pub fn cancel(&self, session: &str) -> Result<(), AcpError> {
        match self {
            Client::Acp(c) => c.cancel(session),
            Client::Msp(c) => c.cancel(session),
        }
    }

    pub fn answer_permission(
        &mut self,
        id: &RequestId,
        option: Option<&str>,
    ) -> Result<(), AcpError> {
        match self {
            Client::Acp(c) => c.answer_permission(id, option),
            Client::Msp(c) => c.answer_permission(id, option),
        }
    }

    pub fn next_event(&mut self, wait: Duration) -> Wait {
        match self {
            Client::Acp(c) => c.next_event(wait),
            Client::Msp(c) => c.next_event(wait),
        }
    }
}
