//! drover: drives AI coding CLIs unattended, with every CLI-specific piece of
//! logic running as a sandboxed WebAssembly component.
//!
//! This crate is the command line ([`cli`]) and what only it uses: `drover
//! probe-adapter` ([`probe`]) and `drover adapter check` ([`conformance`]).
//! The engine lives in the crates below it, re-exported here under the paths
//! they had when they were modules of this crate (docs/architecture.md has
//! the crate map); an embedder depends on those crates directly.

pub mod cli;
pub mod conformance;

/// The Agent Client Protocol client (`drover-acp`).
pub use drover_acp as acp;
pub use drover_budget as budget;
/// The settings files, `config.toml` (`drover-config`).
pub use drover_config as config;
/// Turns and what drives them: the four drivers, relay drops, privileges,
/// recovery (`drover-drive`).
pub use drover_drive as drive;
pub use drover_drive::{drops, privileges};
/// Provenance, the effect table and record seals (`drover-gate`).
pub use drover_gate as gate;
/// Installing the hook relay into a CLI's config (`drover-hooks`).
pub use drover_hooks as hooks;
/// Telling people when a seat settles (`drover-notify`).
pub use drover_notify as notify;
/// `drover probe-adapter` (`drover-probe`).
pub use drover_probe as probe;
/// CLI profiles, the built-in catalog, config directories and the registry
/// (`drover-profile`).
pub use drover_profile as profile;
pub use drover_profile::{builtin, registry};
/// A Ray cluster: jobs, log tails, settings (`drover-ray`).
pub use drover_ray as ray;
/// The run directory and blocked questions (`drover-run`).
pub use drover_run as run;
pub use drover_run::question;
/// The sandboxed component host (`drover-sandbox`).
pub use drover_sandbox as sandbox;
/// Long-lived seats and the seat host (`drover-seats`).
pub use drover_seats as seats;
pub use drover_seats::host as seat_host;
/// `.drover/` confined to its project (`drover-state`).
pub use drover_state as state;
/// Trust in a project's settings, and the question policy (`drover-trust`).
pub use drover_trust as trust;
pub use drover_trust::policy;
/// The shared vocabulary as plain types (`drover-types`).
pub use drover_types as types;
/// Token usage from transcripts, and its prices (`drover-usage`).
pub use drover_usage as usage;
pub use drover_usage::pricing;
/// Where seats run (`drover-workspace`).
pub use drover_workspace as workspace;

#[cfg(test)]
mod layering;
