//! drover-acp: the Agent Client Protocol, client side: JSON-RPC framing
//! over an agent process's stdio ([`rpc`]) and drover's role in the
//! protocol ([`client`]).
//! The wire types come from the `agent-client-protocol-schema` crate; the
//! agent process itself is started by the `acp` workspace
//! (`drover-workspace`) and driven turn by turn by drover's ACP session
//! driver.

pub mod client;
pub mod rpc;

pub use client::{AcpError, AgentInfo, Client, Event, Wait};
