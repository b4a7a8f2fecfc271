//! Named, long-lived seats (`drover up`, `send`, `attach`, `down`): a CLI
//! conversation with a nickname and a role, kept in
//! `.drover/seats/<nick>.json`. A tmux seat is a pane that outlives the
//! command that started it; a headless seat is a conversation id, resumed by
//! each message. A `human` seat is a pane for a person: drover never types
//! into it and never waits on it.

pub mod host;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use drover_gate::{Provenance, Sourced};
use drover_workspace::Pane;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SeatRecord {
    pub nick: String,
    pub role: String,
    pub cli: String,
    pub workspace: drover_types::WorkspaceKind,
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
    pub budget_mode: drover_types::BudgetMode,
    /// What the seat's conversation has cost so far, when known.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// Some of that cost is of counts read from the CLI's printed summary
    /// (`[turn.usage]`): an estimate.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cost_approximate: bool,
    /// Replaces the profile's bypass args for this seat's CLI (`drover up
    /// --arg …` or `--no-bypass`); `None` keeps the profile's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extra_args: Option<Vec<String>>,
    /// `drover up --no-resume`: a turn ended by a rate limit or a quota is
    /// not resumed, whatever the profile's `[resume]` says.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_resume: bool,
    /// A ray seat: where its turns go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ray: Option<RaySeat>,
    /// A jules seat: the repository its session works on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jules: Option<JulesSeat>,
}

/// What a jules seat's first message starts its session from: the
/// connected source (as the Jules API names it) and the branch.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct JulesSeat {
    pub source: String,
    pub branch: String,
    /// `owner/repo` on GitHub, for people.
    pub repo: String,
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

/// A seat's record file. `None` for a nickname that is not one safe path
/// segment: a nickname comes from the command line or a record, and either
/// could try to name a file elsewhere (`../../other/.drover/seats/dev`).
fn path(project: &Path, nick: &str) -> Option<PathBuf> {
    (drover_state::safe_segment(nick) == nick).then(|| dir(project).join(format!("{nick}.json")))
}

/// A seat's record, with where it came from. A record drover did not seal
/// (a checkout can commit `.drover/seats/`), or whose nickname or run id
/// is not the one safe segment its file name says, is
/// [`Provenance::ForeignRecord`]: shown, never acted on.
pub fn load(project: &Path, nick: &str) -> Option<Sourced<SeatRecord>> {
    let read = drover_run::sealed::read_sealed::<SeatRecord>(&path(project, nick)?).ok()?;
    let named_here = read.value.nick == nick
        && drover_state::safe_segment(&read.value.run_id) == read.value.run_id;
    Some(if named_here {
        read
    } else {
        // Shown under the name of its file, the one name drover acts by.
        let mut record = read.value;
        record.nick = nick.to_string();
        Sourced::new(record, Provenance::ForeignRecord)
    })
}

/// Records a seat, sealed.
pub fn save(project: &Path, seat: &SeatRecord) -> std::io::Result<()> {
    let path = path(project, &seat.nick).ok_or_else(|| unsafe_nick(&seat.nick))?;
    drover_run::sealed::write_sealed(&path, seat)
}

/// Removes a seat's record; `nick` must be one safe path segment.
pub fn remove(project: &Path, nick: &str) -> std::io::Result<()> {
    drover_state::remove_file(&path(project, nick).ok_or_else(|| unsafe_nick(nick))?)
}

fn unsafe_nick(nick: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!(
            "seat nickname {nick:?} is not one safe path segment (letters, digits, '.', '_' or '-')"
        ),
    )
}

/// Every seat on record, by nickname (its file's name), with where each
/// record came from.
pub fn list(project: &Path) -> Vec<Sourced<SeatRecord>> {
    let mut seats: Vec<Sourced<SeatRecord>> = std::fs::read_dir(dir(project))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| {
                    let name = e.file_name().into_string().ok()?;
                    load(project, name.strip_suffix(".json")?)
                })
                .collect()
        })
        .unwrap_or_default();
    seats.sort_by(|a, b| a.value.nick.cmp(&b.value.nick));
    seats
}

/// What drover says of a record it will not act on.
pub const FOREIGN: &str = "foreign: not written by your drover";

/// The seat's record, refused unless this user's drover sealed it.
pub fn require_sealed(seat: Sourced<SeatRecord>) -> Result<SeatRecord, String> {
    match seat.from {
        Provenance::SealedRecord => Ok(seat.value),
        _ => Err(format!(
            "seat {}'s record is {FOREIGN} (a checkout may have committed .drover/seats/{}.json); drover will not act on it. `drover down {}` removes the record without touching what it names",
            seat.value.nick, seat.value.nick, seat.value.nick
        )),
    }
}
