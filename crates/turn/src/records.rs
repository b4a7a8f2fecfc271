//! The records a run directory keeps about what a task started, so that
//! whoever reads the run later (recovery, `drover answer`, `drover down`)
//! can find it again: `tasks/<task>/process.json` (a headless turn's
//! process), `pane.json` (a pane), `agent.json` (an ACP agent) and
//! `ray.json` (a Ray job). Each is sealed when written and read back typed:
//! only a record this user's drover sealed names something to signal,
//! close or contact, since a checkout can commit a `.drover/runs/` of its
//! own (docs/security.md).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use drover_gate::{Provenance, Sourced};
use drover_ray::jobs::JobStatus;
use drover_run::RunDir;
use drover_types::WorkspaceKind;
use drover_workspace::Pane;
use drover_workspace::process::Identity;

/// A record kind and the file it lives in under `tasks/<task>/`.
pub trait Record: Serialize + DeserializeOwned {
    const FILE: &'static str;

    fn path(run: &RunDir, task: &str) -> PathBuf {
        run.task_dir(task).join(Self::FILE)
    }

    /// Writes the record, sealed.
    fn write(&self, run: &RunDir, task: &str) -> std::io::Result<()> {
        drover_run::sealed::write_sealed(&Self::path(run, task), self)
    }

    /// The record with where it came from (sealed by this user's drover,
    /// or not); `None` when there is none or it does not parse.
    fn read_sourced(run: &RunDir, task: &str) -> Option<Sourced<Self>> {
        drover_run::sealed::read_sealed(&Self::path(run, task)).ok()
    }

    /// The record if this user's drover sealed it: the only kind that may
    /// name something to act on. Anything else is as good as missing.
    fn read(run: &RunDir, task: &str) -> Option<Self> {
        Self::read_sourced(run, task)
            .filter(|r| r.from == Provenance::SealedRecord)
            .map(|r| r.value)
    }
}

/// A headless turn's process, and where its output starts in the task's
/// logs (a seat's logs hold every turn).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessRecord {
    pub pid: u32,
    pub identity: Option<Identity>,
    pub argv: Vec<String>,
    pub launched_ns: u64,
    pub stdout_offset: u64,
    pub stderr_offset: u64,
    /// The conversation the turn resumed: its earlier turns' usage is what
    /// a running total in the output (Codex) has to lose. Absent in records
    /// written before it was kept.
    #[serde(default)]
    pub conversation: Option<String>,
}

impl Record for ProcessRecord {
    const FILE: &'static str = "process.json";
}

/// A seat's pane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaneRecord {
    pub workspace: WorkspaceKind,
    pub pane: Pane,
}

impl Record for PaneRecord {
    const FILE: &'static str = "pane.json";
}

/// An ACP agent process, the drover that holds it (`drover answer` checks
/// it is alive), and the ACP session it has open.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentRecord {
    pub pid: u32,
    pub identity: Option<Identity>,
    pub driver: Option<Identity>,
    pub argv: Vec<String>,
    pub stderr_offset: u64,
    pub session: Option<String>,
    pub agent: Option<drover_acp::AgentInfo>,
}

impl Record for AgentRecord {
    const FILE: &'static str = "agent.json";
}

/// `tasks/<task>/ray.json`: the task's latest job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RayRecord {
    pub address: String,
    pub submission_id: String,
    pub entrypoint: String,
    pub num_cpus: f64,
    pub resources: BTreeMap<String, f64>,
    pub place: Option<String>,
    pub pinned_node: Option<String>,
    pub submitted_ns: u64,
    /// This machine's copy of the job's log.
    pub log: PathBuf,
    /// What Ray last said.
    pub status: Option<JobStatus>,
    pub message: Option<String>,
    pub node_id: Option<String>,
    pub node_address: Option<String>,
    /// A turn given to a long-lived worker job (`submission_id`): the
    /// turn's id and the worker's mailbox on this machine.
    #[serde(default)]
    pub warm: Option<WarmTurn>,
}

/// A turn a Ray worker job took from its mailbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WarmTurn {
    pub turn: String,
    pub mailbox: PathBuf,
}

impl Record for RayRecord {
    const FILE: &'static str = "ray.json";
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> (tempfile::TempDir, RunDir) {
        let dir = tempfile::tempdir().expect("tempdir");
        let run = RunDir::create(dir.path(), "r1").expect("run dir");
        std::fs::create_dir_all(run.task_dir("t")).expect("task dir");
        (dir, run)
    }

    #[test]
    fn a_record_reads_back_as_written_and_only_when_sealed() {
        let (_dir, run) = run();
        let record = ProcessRecord {
            pid: 42,
            identity: Some(Identity { pid: 42, start: 7 }),
            argv: vec!["codex".to_string(), "exec".to_string()],
            launched_ns: 1,
            stdout_offset: 10,
            stderr_offset: 20,
            conversation: Some("thread-1".to_string()),
        };
        record.write(&run, "t").expect("write");
        assert_eq!(ProcessRecord::read(&run, "t"), Some(record.clone()));
        // The same fields without this user's seal (a checkout's file)
        // name nothing.
        let unsealed = serde_json::to_string(&record).expect("json");
        std::fs::write(ProcessRecord::path(&run, "t"), unsealed).expect("plant");
        assert_eq!(ProcessRecord::read(&run, "t"), None);
        assert!(ProcessRecord::read_sourced(&run, "t").is_some());
    }

    #[test]
    fn a_pane_record_with_an_unknown_workspace_is_refused() {
        let (_dir, run) = run();
        std::fs::write(
            PaneRecord::path(&run, "t"),
            r#"{"workspace":"screen","pane":{}}"#,
        )
        .expect("plant");
        assert!(PaneRecord::read_sourced(&run, "t").is_none());
    }
}
