//! drover: drives AI coding CLIs unattended, with every CLI-specific piece of
//! logic running as a sandboxed WebAssembly component.

pub mod builtin;
pub mod cli;
pub mod hooks;
pub mod profile;
pub mod registry;
pub mod sandbox;
pub mod usage;
