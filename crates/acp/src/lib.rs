//! drover-acp: the protocols a seat's long-lived agent speaks on its stdio,
//! client side: JSON-RPC framing ([`rpc`]), the Agent Client Protocol
//! ([`client`]) and Muse's session protocol ([`msp`]), behind one
//! [`Client`] ([`speaker`]) that gives the seat driver the same events.
//! The ACP wire types come from the `agent-client-protocol-schema` crate;
//! the agent process itself is started by the `acp` workspace
//! (`drover-workspace`) and driven turn by turn by drover's seat driver.

pub mod client;
pub mod msp;
pub mod rpc;
pub mod speaker;
#[cfg(test)]
mod testing;

pub use client::{AcpError, AgentInfo, Event, Wait};
pub use speaker::{Client, Protocol};
