//! drover: drives AI coding CLIs unattended, with every CLI-specific piece of
//! logic running as a sandboxed WebAssembly component.

pub mod acp;
pub mod builtin;
pub mod cli;
pub mod config;
pub mod conformance;
pub mod hooks;
pub mod notify;
pub mod policy;
pub mod pricing;
pub mod privileges;
pub mod probe;
pub mod profile;
pub mod question;
pub mod ray;
pub mod registry;
pub mod relay;
pub mod run;
/// The sandboxed component host (the `drover-sandbox` crate).
pub use drover_sandbox as sandbox;
pub mod seat_host;
pub mod seats;
pub mod session;
pub mod state;
pub mod trust;
pub mod usage;
pub mod workspace;

#[cfg(test)]
mod layering;
