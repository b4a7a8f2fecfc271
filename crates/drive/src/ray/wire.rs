//! What travels between the local driver and the drover a Ray job runs on
//! a node: the turn, as one JSON document in the job's environment, and
//! back, lines in the job's log that the local driver recognises among
//! whatever else the log holds:
//!
//! ```text
//! drover-ray/1 event <seq> <events.jsonl line>   one per journal line, seq from 0
//! drover-ray/1 result <TurnReport JSON>       the turn's result, last
//! drover-ray/1 refused <reason>               a worker could not run the turn
//! ```
//!
//! `seq` is the line's position in the node's journal, so a line read twice
//! (a reconnected log stream, a settle after the driver died) is applied once.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{BudgetMode, Conversation, TurnReport, TurnSpec};
use drover_run::Transition;

/// The environment variable holding the turn on the node.
pub const TURN_ENV: &str = "DROVER_RAY_TURN";
/// The environment variable holding a worker job's [`WorkerRequest`].
pub const WORKER_ENV: &str = "DROVER_RAY_WORKER";
const PREFIX: &str = "drover-ray/1 ";
/// A longer log line is not drover's (a result holds a reply, so be generous).
pub const LINE_MAX: usize = 8 << 20;
/// Bytes of the turn document (it travels in an environment variable,
/// which Linux caps at 128 KiB per string).
pub const TURN_MAX: usize = 120 << 10;

/// One turn, as the node's drover runs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnRequest {
    pub submission_id: String,
    pub run_id: String,
    pub task: String,
    pub cli: String,
    pub prompt: String,
    pub cwd: PathBuf,
    pub model: String,
    #[serde(default)]
    pub resume: Option<String>,
    #[serde(default)]
    pub preset: Option<String>,
    #[serde(default)]
    pub extra_args: Option<Vec<String>>,
    #[serde(default)]
    pub env: Vec<(String, String)>,
    pub timeout_ms: u64,
    #[serde(default)]
    pub result_file: Option<PathBuf>,
    pub result_wait_ms: u64,
    pub stop_nudges: u32,
    #[serde(default)]
    pub stall_ms: Option<u64>,
    pub stall_nudges: u32,
    #[serde(default)]
    pub token_budget: Option<u64>,
    pub budget_mode: BudgetMode,
    pub budget_grace_ms: u64,
    pub heartbeat_ms: u64,
    pub teardown_grace_ms: u64,
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl TurnRequest {
    /// The turn `spec` describes, with paths already mapped to the node.
    pub fn of_spec(spec: &TurnSpec, submission_id: &str, run_id: &str, cli: &str) -> TurnRequest {
        let (resume, preset) = match &spec.conversation {
            Conversation::Fresh => (None, None),
            Conversation::Resume(id) => (Some(id.clone()), None),
            Conversation::Preset(id) => (None, Some(id.clone())),
        };
        TurnRequest {
            submission_id: submission_id.to_string(),
            run_id: run_id.to_string(),
            task: spec.task.clone(),
            cli: cli.to_string(),
            prompt: spec.prompt.clone(),
            cwd: spec.cwd.clone(),
            model: spec.model.clone(),
            resume,
            preset,
            extra_args: spec.extra_args.clone(),
            env: spec.env.clone(),
            timeout_ms: ms(spec.timeout),
            result_file: spec.result_file.clone(),
            result_wait_ms: ms(spec.result_wait),
            stop_nudges: spec.stop_nudges,
            stall_ms: spec.stall_grace.map(ms),
            stall_nudges: spec.stall_nudges,
            token_budget: spec.token_budget,
            budget_mode: spec.budget_mode,
            budget_grace_ms: ms(spec.budget_grace),
            heartbeat_ms: ms(spec.heartbeat),
            teardown_grace_ms: ms(spec.teardown_grace),
        }
    }

    /// The session spec the node runs.
    pub fn to_spec(&self) -> TurnSpec {
        let mut spec = TurnSpec::new(&self.task, &self.prompt, self.cwd.clone());
        spec.model = self.model.clone();
        spec.conversation = match (&self.resume, &self.preset) {
            (Some(id), _) => Conversation::Resume(id.clone()),
            (None, Some(id)) => Conversation::Preset(id.clone()),
            (None, None) => Conversation::Fresh,
        };
        spec.extra_args = self.extra_args.clone();
        spec.env = self.env.clone();
        spec.timeout = Duration::from_millis(self.timeout_ms);
        spec.result_file = self.result_file.clone();
        spec.result_wait = Duration::from_millis(self.result_wait_ms);
        spec.stop_nudges = self.stop_nudges;
        spec.stall_grace = self.stall_ms.map(Duration::from_millis);
        spec.stall_nudges = self.stall_nudges;
        spec.token_budget = self.token_budget;
        spec.budget_mode = self.budget_mode;
        spec.budget_grace = Duration::from_millis(self.budget_grace_ms);
        spec.heartbeat = Duration::from_millis(self.heartbeat_ms);
        spec.teardown_grace = Duration::from_millis(self.teardown_grace_ms);
        spec
    }

    /// Reads and checks the document the job's environment carries.
    pub fn parse(text: &str) -> Result<TurnRequest, String> {
        if text.len() > TURN_MAX {
            return Err(format!("{TURN_ENV} is larger than {TURN_MAX} bytes"));
        }
        let turn: TurnRequest =
            serde_json::from_str(text).map_err(|e| format!("{TURN_ENV} is not a turn: {e}"))?;
        if drover_run::safe_segment(&turn.task) != turn.task {
            return Err(format!(
                "{TURN_ENV}: task {:?} is not a safe name",
                turn.task
            ));
        }
        if drover_run::safe_segment(&turn.submission_id) != turn.submission_id {
            return Err(format!(
                "{TURN_ENV}: submission id {:?} is not a safe name",
                turn.submission_id
            ));
        }
        if !turn.cwd.is_absolute() {
            return Err(format!(
                "{TURN_ENV}: cwd {} is not absolute",
                turn.cwd.display()
            ));
        }
        Ok(turn)
    }
}

/// What a long-lived worker job is told: where its mailbox is on the node
/// (`docs/distributed.md`), how long it waits idle, and when a lease lapses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkerRequest {
    pub mailbox: PathBuf,
    pub idle_ms: u64,
    pub lapse_ms: u64,
}

impl WorkerRequest {
    /// Reads and checks the document the worker job's environment carries:
    /// the mailbox must be a worker's directory under a project's drover
    /// state, named safely.
    pub fn parse(text: &str) -> Result<WorkerRequest, String> {
        let worker: WorkerRequest = serde_json::from_str(text)
            .map_err(|e| format!("{WORKER_ENV} is not a worker's settings: {e}"))?;
        let id = worker
            .mailbox
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let parent = worker.mailbox.parent().map(std::path::Path::to_path_buf);
        let under_workers = parent
            .as_ref()
            .is_some_and(|p| p.ends_with(".drover/ray/workers") && p.is_absolute());
        if id.is_empty() || drover_run::safe_segment(&id) != id || !under_workers {
            return Err(format!(
                "{WORKER_ENV}: mailbox {} is not <project>/.drover/ray/workers/<id>",
                worker.mailbox.display()
            ));
        }
        Ok(worker)
    }
}

/// A recognised line of the job's log.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Event {
        seq: u64,
        transition: Box<Transition>,
    },
    Result(Box<TurnReport>),
    /// A worker could not run the turn at all (a bad document, a profile
    /// not trusted on the node): no result will come.
    Refused(String),
}

pub fn event_line(seq: u64, journal_line: &str) -> String {
    format!("{PREFIX}event {seq} {journal_line}")
}

/// One line, whatever the reason holds (newlines become spaces).
pub fn refused_line(reason: &str) -> String {
    format!("{PREFIX}refused {}", reason.replace(['\r', '\n'], " "))
}

pub fn result_line(result: &TurnReport) -> Result<String, serde_json::Error> {
    Ok(format!("{PREFIX}result {}", serde_json::to_string(result)?))
}

/// Reads one log line; anything that is not a well-formed drover line
/// (Ray's own messages, a torn or oversized line) is `None`.
pub fn parse_line(line: &str) -> Option<Line> {
    if line.len() > LINE_MAX {
        return None;
    }
    let rest = line.trim_end_matches(['\r', '\n']).strip_prefix(PREFIX)?;
    if let Some(event) = rest.strip_prefix("event ") {
        let (seq, json) = event.split_once(' ')?;
        let seq = seq.parse().ok()?;
        let transition = Box::new(serde_json::from_str(json).ok()?);
        return Some(Line::Event { seq, transition });
    }
    if let Some(reason) = rest.strip_prefix("refused ") {
        return Some(Line::Refused(reason.to_string()));
    }
    let json = rest.strip_prefix("result ")?;
    serde_json::from_str(json)
        .ok()
        .map(|r| Line::Result(Box::new(r)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_survives_the_trip() {
        let mut spec = TurnSpec::new("t", "Reply with exactly: X", PathBuf::from("/w"));
        spec.conversation = Conversation::Resume("c1".to_string());
        spec.stall_grace = Some(Duration::from_secs(9));
        spec.token_budget = Some(100);
        spec.budget_mode = BudgetMode::Enforce;
        let turn = TurnRequest::of_spec(&spec, "drover-r-t-1", "r", "claude");
        let text = serde_json::to_string(&turn).expect("encodes");
        let back = TurnRequest::parse(&text).expect("parses");
        assert_eq!(back, turn);
        let again = back.to_spec();
        assert_eq!(again.conversation, spec.conversation);
        assert_eq!(again.stall_grace, spec.stall_grace);
        assert_eq!(again.timeout, spec.timeout);
        assert_eq!(again.budget_mode, BudgetMode::Enforce);
    }

    #[test]
    fn hostile_turns_are_refused() {
        let spec = TurnSpec::new("t", "p", PathBuf::from("/w"));
        let mut turn = TurnRequest::of_spec(&spec, "id", "r", "claude");
        turn.task = "../../x".to_string();
        let e =
            TurnRequest::parse(&serde_json::to_string(&turn).expect("json")).expect_err("unsafe");
        assert!(e.contains("not a safe name"), "{e}");
        let big = format!("{{\"prompt\": \"{}\"}}", "x".repeat(TURN_MAX));
        assert!(
            TurnRequest::parse(&big)
                .expect_err("big")
                .contains("larger")
        );
        assert!(TurnRequest::parse("{").is_err());
    }

    #[test]
    fn a_worker_serves_only_a_workers_mailbox() {
        let ok = r#"{"mailbox": "/p/.drover/ray/workers/w1", "idle_ms": 1, "lapse_ms": 2}"#;
        assert_eq!(
            WorkerRequest::parse(ok).expect("parses").mailbox,
            PathBuf::from("/p/.drover/ray/workers/w1")
        );
        for bad in [
            "/p/.drover/ray/workers/..",
            "/home/me/.ssh",
            "p/.drover/ray/workers/w1",
        ] {
            let text = format!(r#"{{"mailbox": "{bad}", "idle_ms": 1, "lapse_ms": 2}}"#);
            assert!(
                WorkerRequest::parse(&text)
                    .expect_err(bad)
                    .contains("is not <project>/.drover/ray/workers/<id>")
            );
        }
    }

    #[test]
    fn only_well_formed_lines_are_recognised() {
        let journal = r#"{"ts":1,"task":"t","kind":"state","state":"working","source":"launch"}"#;
        match parse_line(&format!("{}\n", event_line(3, journal))) {
            Some(Line::Event { seq, transition }) => {
                assert_eq!(seq, 3);
                assert_eq!(
                    transition.seat_state(),
                    Some(drover_types::wit::SeatState::Working)
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            parse_line(&refused_line("no trust\nfor x")),
            Some(Line::Refused("no trust for x".to_string()))
        );
        for noise in [
            "Running entrypoint for job x: drover ray-turn",
            "drover-ray/1 event x {}",
            "drover-ray/1 event 1 {\"ts\":",
            "drover-ray/1 result {}",
            "drover-ray/2 event 1 {}",
        ] {
            assert_eq!(parse_line(noise), None, "{noise}");
        }
        assert_eq!(
            parse_line(&format!("{PREFIX}event 1 {}", "x".repeat(LINE_MAX))),
            None
        );
    }
}
