//! Named, long-lived seats (`drover up`, `send`, `attach`, `down`): a CLI
//! conversation with a nickname and a role, kept in
//! `.drover/seats/<nick>.json`. A tmux seat is a pane that outlives the
//! command that started it; a headless seat is a conversation id, resumed by
//! each message. A `human` seat is a pane for a person: drover never types
//! into it and never waits on it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use drover_workspace::Pane;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SeatRecord {
    pub nick: String,
    pub role: String,
    pub cli: String,
    pub workspace: String,
    pub human: bool,
    pub run_id: String,
    pub cwd: PathBuf,
    pub model: String,
    /// The conversation the next message continues (headless), or the one
    /// the pane's CLI reported (tmux).
    pub conversation: Option<String>,
    pub pane: Option<Pane>,
    pub created_ns: u64,
    /// Dollar budget for the seat's conversation (`up --budget-usd`),
    /// checked on every message like a run's.
    #[serde(default)]
    pub budget_usd: Option<f64>,
    #[serde(default)]
    pub budget_mode: crate::BudgetMode,
    /// What the seat's conversation has cost so far, when known.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// Replaces the profile's bypass args for this seat's CLI (`drover up
    /// --arg …` or `--no-bypass`); `None` keeps the profile's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_args: Option<Vec<String>>,
    /// A ray seat: where its turns go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ray: Option<RaySeat>,
}

/// Where a ray seat's turns run. The first turn's node becomes the seat's:
/// its CLI keeps the conversation there.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct RaySeat {
    pub address: Option<String>,
    pub place: Option<String>,
    /// Ray's node id, once a turn ran.
    pub node: Option<String>,
}

pub fn dir(project: &Path) -> PathBuf {
    project.join(".drover").join("seats")
}

fn path(project: &Path, nick: &str) -> PathBuf {
    dir(project).join(format!("{nick}.json"))
}

pub fn load(project: &Path, nick: &str) -> Option<SeatRecord> {
    serde_json::from_str(&std::fs::read_to_string(path(project, nick)).ok()?).ok()
}

pub fn save(project: &Path, seat: &SeatRecord) -> std::io::Result<()> {
    drover_run::write_json_atomic(&path(project, &seat.nick), seat)
}

pub fn remove(project: &Path, nick: &str) -> std::io::Result<()> {
    drover_state::remove_file(&path(project, nick))
}

/// Every seat on record, by nickname.
pub fn list(project: &Path) -> Vec<SeatRecord> {
    let mut seats: Vec<SeatRecord> = std::fs::read_dir(dir(project))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .filter_map(|t| serde_json::from_str(&t).ok())
                .collect()
        })
        .unwrap_or_default();
    seats.sort_by(|a, b| a.nick.cmp(&b.nick));
    seats
}
