//! drover-run: the run directory. Everything a run knows lives in files under
//! `<project>/.drover/runs/<run-id>/`, so nothing depends on a live drover
//! process.
//!
//! docs/run-directory.md lists every file: who writes it, who reads it,
//! which records are sealed and which files are append-only.

pub mod follow;
mod hook_record;
mod journal;
pub mod projects;
#[cfg(test)]
mod properties;
pub mod question;
pub mod sealed;
pub mod status;
pub mod watch;

use std::fs;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use drover_relay::now_ns;
pub use drover_state::safe_segment;
pub use follow::{Follower, RunEvent};
pub use hook_record::{HookRecord, LAST_MESSAGE_MAX, RAW_PAYLOAD_MAX};
pub use journal::{Journal, Origin, Record, Transition, parse_transitions, read_transitions};
pub use watch::{EventWatcher, ReadDrop};

/// What `run.json` records.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RunInfo {
    pub run_id: String,
    pub created_ns: u64,
    pub cli: String,
    pub workspace: drover_types::WorkspaceKind,
    pub project: PathBuf,
    pub tasks: Vec<String>,
    /// The drover process that drives the run, and its start time (so a
    /// recycled pid is not mistaken for it).
    pub driver_pid: u32,
    pub driver_start: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct RunDir {
    root: PathBuf,
    id: String,
}

/// `.drover/runs` under a project.
pub fn runs_root(project: &Path) -> PathBuf {
    project.join(".drover").join("runs")
}

/// A run id: UTC timestamp plus random suffix, sortable by creation.
pub fn new_run_id() -> String {
    let now = now_ns();
    let secs = now / 1_000_000_000;
    let millis = (now / 1_000_000) % 1000;
    let (y, mo, d, h, mi, s) = civil(secs);
    let mut random = [0u8; 3];
    if let Ok(mut f) = fs::File::open("/dev/urandom") {
        let _ = std::io::Read::read_exact(&mut f, &mut random);
    } else {
        random = (now_ns() as u32).to_le_bytes()[..3]
            .try_into()
            .unwrap_or([0; 3]);
    }
    format!(
        "{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}-{millis:03}-{:02x}{:02x}{:02x}",
        random[0], random[1], random[2]
    )
}

/// A fresh conversation id for a CLI that takes one from its caller
/// (`[turn] session_id`): a random UUID (version 4), the shape such CLIs
/// accept.
pub fn new_conversation_id() -> std::io::Result<String> {
    let mut b = [0u8; 16];
    std::io::Read::read_exact(&mut fs::File::open("/dev/urandom")?, &mut b)?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    ))
}

/// Seconds since the epoch -> (year, month, day, hour, minute, second) UTC.
pub fn civil(secs: u64) -> (i64, u32, u32, u32, u32, u32) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-from-civil inverse.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        month,
        day,
        (rem / 3600) as u32,
        ((rem % 3600) / 60) as u32,
        (rem % 60) as u32,
    )
}

impl RunDir {
    pub fn create(project: &Path, id: &str) -> std::io::Result<RunDir> {
        let root = runs_root(project).join(id);
        for sub in ["events", "logs", "tasks"] {
            drover_state::create_dir_all(&root.join(sub))?;
        }
        projects::remember(project);
        Ok(RunDir {
            root,
            id: id.to_string(),
        })
    }

    pub fn open(project: &Path, id: &str) -> std::io::Result<RunDir> {
        let root = runs_root(project).join(id);
        if !root.join("run.json").is_file() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("no run {id} under {}", runs_root(project).display()),
            ));
        }
        Ok(RunDir {
            root,
            id: id.to_string(),
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn events_dir(&self) -> PathBuf {
        self.root.join("events")
    }

    pub fn journal_path(&self) -> PathBuf {
        self.root.join("events.jsonl")
    }

    pub fn log(&self, task: &str) -> PathBuf {
        self.root.join("logs").join(format!("{task}.log"))
    }

    pub fn stdout_log(&self, task: &str) -> PathBuf {
        self.root.join("logs").join(format!("{task}.out"))
    }

    pub fn stderr_log(&self, task: &str) -> PathBuf {
        self.root.join("logs").join(format!("{task}.err"))
    }

    pub fn task_dir(&self, task: &str) -> PathBuf {
        self.root.join("tasks").join(task)
    }

    pub fn info_path(&self) -> PathBuf {
        self.root.join("run.json")
    }

    /// Writes `run.json`, sealed: its driver pid and workspace decide what
    /// `drover status` does with the run.
    pub fn write_info(&self, info: &RunInfo) -> std::io::Result<()> {
        sealed::write_sealed(&self.info_path(), info)
    }

    /// `run.json` with its provenance: a run a checkout committed reads as
    /// [`drover_gate::Provenance::ForeignRecord`].
    pub fn read_info_sourced(&self) -> std::io::Result<drover_gate::Sourced<RunInfo>> {
        sealed::read_sealed(&self.info_path())
    }

    pub fn read_info(&self) -> std::io::Result<RunInfo> {
        let text = fs::read_to_string(self.info_path())?;
        serde_json::from_str(&text).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: {e}", self.info_path().display()),
            )
        })
    }

    /// Appends one JSON line to `tasks/<task>/lifecycle.jsonl` (best effort:
    /// observability must never break a session).
    pub fn lifecycle(&self, task: &str, event: &str, detail: serde_json::Value) {
        let path = self.task_dir(task).join("lifecycle.jsonl");
        let mut line = serde_json::json!({"ts": now_ns(), "event": event});
        if let (Some(obj), serde_json::Value::Object(extra)) = (line.as_object_mut(), detail) {
            obj.extend(extra);
        }
        let _ = drover_state::append_line(&path, &line.to_string());
    }
}

/// Writes JSON via a temporary sibling and a rename (confined to the
/// project under `.drover/`, see [`crate::state`]).
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    text.push('\n');
    drover_state::write_atomic(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil(0), (1970, 1, 1, 0, 0, 0));
        assert_eq!(civil(1_796_040_000), (2026, 11, 30, 12, 0, 0));
        assert_eq!(civil(951_782_400), (2000, 2, 29, 0, 0, 0));
    }

    #[test]
    fn a_conversation_id_is_a_fresh_version_4_uuid() {
        let a = new_conversation_id().expect("id");
        let b = new_conversation_id().expect("id");
        assert_ne!(a, b);
        let groups: Vec<&str> = a.split('-').collect();
        assert_eq!(
            groups.iter().map(|g| g.len()).collect::<Vec<_>>(),
            [8, 4, 4, 4, 12],
            "{a}"
        );
        assert!(a.chars().all(|c| c == '-' || c.is_ascii_hexdigit()), "{a}");
        assert!(groups[2].starts_with('4'), "{a}");
        assert!(groups[3].starts_with(['8', '9', 'a', 'b']), "{a}");
    }

    #[test]
    fn segments_are_file_safe() {
        assert_eq!(safe_segment("../../etc/passwd"), "etc-passwd");
        assert_eq!(safe_segment("claude 1"), "claude-1");
        assert_eq!(safe_segment(""), "task");
        assert_eq!(safe_segment(&"a".repeat(100)).len(), 64);
    }

    #[test]
    fn run_ids_sort_by_time_and_differ() {
        let a = new_run_id();
        let b = new_run_id();
        assert_eq!(a.len(), "20261130-120000-123-abcdef".len());
        assert_ne!(a, b);
    }
}
