//! The security suite: one test per break found by attacking drover as a
//! hostile repository and a hostile component would (docs/security.md lists
//! them), and per effect in the threat model's table. Every test here failed
//! on the drover that had the break.

mod budgets;
mod config;
mod hooks;
mod jules;
mod launch;
mod mcp;
mod panes;
mod reading;
mod records;
mod terminal;
