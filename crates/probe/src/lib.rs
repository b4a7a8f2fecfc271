//! drover-probe: `drover probe-adapter`, a sanitized report of what a CLI and its adapter
//! look like on this machine, for finalizing a profile or filing an adapter
//! bug without leaking anything personal (docs/probe-adapter.md).
//!
//! Scan mode reads what is on disk and runs only `--version`/`--help`.
//! Probe mode (launching one real turn) fills the same report model.
//! `--draft-profile` drafts a profile from the CLI's help (draft).

mod binary;
mod discover;
pub mod draft;
pub mod live;
pub mod report;
pub mod sanitize;
mod scan;
mod schema;

pub use report::{Format, Report};
pub use sanitize::{Identity, Leak, Repairs, Sanitizer};
pub use scan::{COMMAND_TIMEOUT, ScanError, ScanOptions, scan};
