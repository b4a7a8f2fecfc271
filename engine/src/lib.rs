//! drover: drives AI coding CLIs unattended, with every CLI-specific piece of
//! logic running as a sandboxed WebAssembly component.

pub mod builtin;
pub mod cli;
pub mod config;
pub mod conformance;
pub mod hooks;
pub mod notify;
pub mod probe;
pub mod profile;
pub mod ray;
pub mod registry;
pub mod relay;
pub mod run;
pub mod sandbox;
pub mod seats;
pub mod session;
pub mod usage;
pub mod workspace;
