//! Raised limits: `.drover/budget-raises.jsonl`, one sealed line per raise
//! (a person's `drover answer … raise`, or a `[policy]` rule naming
//! `budget`). A checkout can commit this file; only lines this user's
//! drover sealed count, so a repository cannot raise its own budget.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Raise {
    pub ts: u64,
    /// The level's name (`day`, `role reviewer`, …).
    pub level: String,
    /// What it raised: the day's date, the seat's run and nickname, the
    /// role's or team's name; empty for the project.
    pub key: String,
    pub usd: Option<f64>,
    pub tokens: Option<u64>,
    /// `person`, or the policy rule's `path:line`.
    pub by: String,
}

fn path(project: &Path) -> PathBuf {
    project.join(".drover").join("budget-raises.jsonl")
}

/// Years of raises fit far below this.
const FILE_MAX: u64 = 16 << 20;

pub fn read(project: &Path) -> Vec<Raise> {
    let path = path(project);
    let Ok(bytes) = drover_gate::read::read_bounded(&path, FILE_MAX) else {
        return Vec::new();
    };
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| drover_run::sealed::read_sealed_line::<Raise>(&path, line))
        .filter(|r| r.from == drover_gate::Provenance::SealedRecord)
        .map(|r| r.value)
        .collect()
}

pub fn record(project: &Path, raise: &Raise) -> std::io::Result<()> {
    let path = path(project);
    let line = drover_run::sealed::seal_line(&path, raise)?;
    drover_state::append_line(&path, &line)
}
