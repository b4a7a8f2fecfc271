//! drover: drives AI coding CLIs unattended, with every CLI-specific piece of
//! logic running as a sandboxed WebAssembly component.

pub mod builtin;
pub mod sandbox;
