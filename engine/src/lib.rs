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
pub mod probe;

/// The Agent Client Protocol client (`drover-acp`).
pub use drover_acp as acp;
/// The settings files, `config.toml` (`drover-config`).
pub use drover_config as config;
/// Provenance, the effect table and record seals (`drover-gate`).
pub use drover_gate as gate;
/// CLI profiles, the built-in catalog, config directories and the registry
/// (`drover-profile`).
pub use drover_profile as profile;
pub use drover_profile::{builtin, registry};
/// The run directory and blocked questions (`drover-run`).
pub use drover_run as run;
pub use drover_run::question;
/// The sandboxed component host (`drover-sandbox`).
pub use drover_sandbox as sandbox;
/// Sessions and what drives them: relay drops, hook installs, seats,
/// policy, trust, privileges, notifications, Ray (`drover-session`).
pub use drover_session as session;
pub use drover_session::{hooks, notify, policy, privileges, ray, relay, seat_host, seats, trust};
/// `.drover/` confined to its project (`drover-state`).
pub use drover_state as state;
/// The shared vocabulary as plain types (`drover-types`).
pub use drover_types as types;
/// Token usage from transcripts, and its prices (`drover-usage`).
pub use drover_usage as usage;
pub use drover_usage::pricing;
/// Where seats run (`drover-workspace`).
pub use drover_workspace as workspace;

#[cfg(test)]
mod layering;
