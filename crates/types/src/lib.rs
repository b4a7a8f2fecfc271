//! drover-types: the vocabulary every layer of drover shares, as plain Rust
//! types with no runtime behind them.
//!
//! [`wit`] and [`requests`] mirror the `drover:adapter` WIT's records and
//! enums (seat states, canonical events, prompt kinds, faults, screens, …).
//! Only `drover-sandbox` knows the wasmtime bindings; it converts between
//! them and these types at its boundary, so the journal, the run directory,
//! ACP and the workspaces can speak the vocabulary without compiling a
//! WebAssembly runtime. [`Verdict`] is how a run ended and
//! [`WorkspaceKind`] where it ran; [`journal::Record`] what a journal line
//! records; [`text`] holds the helpers everyone cuts and prints with.

pub mod journal;
mod names;
pub mod requests;
pub mod text;
mod tokens;
mod verdict;
pub mod wit;
mod workspace;

pub use tokens::Tokens;
pub use verdict::{BudgetMode, Verdict};
pub use workspace::WorkspaceKind;
