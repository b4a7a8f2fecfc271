//! `events.jsonl`: one line per seat state transition (and one verdict per
//! turn), never a repeat for a poll that saw no change. Reopening a journal
//! reads its last state per task, so a restarted drover continues it without
//! writing a duplicate. A verdict settles a task until its state changes
//! again (a seat's next message), so a turn gets exactly one verdict.
//!
//! Two more kinds of line sit between the transitions and change no state:
//! `event` (what an ACP agent reported: a tool call, a usage update) and
//! `answer` (who answered a blocked seat's question, and how).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::now_ns;
use drover_state::append_line;
use drover_types::Verdict;
pub use drover_types::journal::Record;
use drover_types::wit::SeatState;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Transition {
    pub ts: u64,
    pub task: String,
    /// What the line records, typed by its `kind` (`state`, `verdict`,
    /// `event`, `answer`); a line of a kind this drover does not know does
    /// not parse, and is skipped like a torn one.
    #[serde(flatten)]
    pub record: Record,
    /// What told us: `hook:Stop`, `exit`, `screen:claude/v1/spinner`, …
    pub source: String,
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub detail: serde_json::Value,
    /// Set on a line first recorded elsewhere (a Ray job's node) and copied
    /// here: which job, and the line's position in that job's journal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

/// Where a copied journal line came from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Origin {
    pub job: String,
    pub seq: u64,
}

impl Transition {
    /// The seat state a `state` line records.
    pub fn seat_state(&self) -> Option<SeatState> {
        match self.record {
            Record::State { state, .. } => Some(state),
            _ => None,
        }
    }

    /// The prompt a `state` line's blocked seat shows.
    pub fn prompt_kind(&self) -> Option<&str> {
        match &self.record {
            Record::State { prompt_kind, .. } => prompt_kind.as_deref(),
            _ => None,
        }
    }

    /// The verdict a `verdict` line records.
    pub fn verdict(&self) -> Option<Verdict> {
        match self.record {
            Record::Verdict { verdict } => Some(verdict),
            _ => None,
        }
    }

    /// The evidence line a blocked state carries (`detail.evidence`).
    pub fn evidence(&self) -> Option<&str> {
        self.detail
            .get("evidence")
            .and_then(serde_json::Value::as_str)
    }
}

pub struct Journal {
    path: PathBuf,
    last: HashMap<String, (SeatState, Option<String>)>,
    verdicts: HashMap<String, Verdict>,
    /// Tasks whose last line is a verdict.
    settled: std::collections::HashSet<String>,
    /// The highest `origin.seq` copied from each job.
    copied: HashMap<String, u64>,
    /// The line this journal appended last (for notifications).
    written: Option<Transition>,
}

/// Every line of a journal that parses; a torn last line, or any line that
/// is not a transition (a byte that is not UTF-8 included), is skipped
/// without losing the lines around it.
pub fn read_transitions(path: &Path) -> Vec<Transition> {
    std::fs::read(path)
        .map(|bytes| parse_transitions(&bytes))
        .unwrap_or_default()
}

/// The transitions in a journal's bytes, one per line that parses.
pub fn parse_transitions(bytes: &[u8]) -> Vec<Transition> {
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect()
}

impl Journal {
    pub fn open(path: PathBuf) -> Journal {
        let mut journal = Journal {
            path,
            last: HashMap::new(),
            verdicts: HashMap::new(),
            settled: std::collections::HashSet::new(),
            copied: HashMap::new(),
            written: None,
        };
        for t in read_transitions(&journal.path) {
            if let Some(origin) = &t.origin {
                journal.note_copied(origin);
            }
            match &t.record {
                Record::Verdict { verdict } => {
                    journal.verdicts.insert(t.task.clone(), *verdict);
                    journal.settled.insert(t.task.clone());
                }
                Record::State { state, prompt_kind } => {
                    journal
                        .last
                        .insert(t.task.clone(), (*state, prompt_kind.clone()));
                    journal.settled.remove(&t.task);
                }
                Record::Event { .. } | Record::Answer { .. } => {}
            }
        }
        journal
    }

    fn note_copied(&mut self, origin: &Origin) {
        let seen = self.copied.entry(origin.job.clone()).or_insert(origin.seq);
        *seen = (*seen).max(origin.seq);
    }

    /// The position of the last line copied from `job`, if any.
    pub fn copied_through(&self, job: &str) -> Option<u64> {
        self.copied.get(job).copied()
    }

    /// Copies a line another journal recorded (`origin` says which and
    /// where): once, however often it is offered, and only when it changes
    /// something here (the rules of [`Journal::record`] and
    /// [`Journal::verdict_once`]). Returns whether it was written.
    pub fn copy(&mut self, mut line: Transition, origin: Origin) -> bool {
        if self
            .copied_through(&origin.job)
            .is_some_and(|seen| origin.seq <= seen)
        {
            return false;
        }
        let task = line.task.clone();
        let changes = match &line.record {
            Record::Verdict { .. } => !self.settled.contains(&task),
            Record::State { state, prompt_kind } => {
                self.last.get(&task) != Some(&(*state, prompt_kind.clone()))
            }
            // A node's events and answers are news wherever they land.
            Record::Event { .. } | Record::Answer { .. } => true,
        };
        if !changes {
            return false;
        }
        line.origin = Some(origin.clone());
        self.write(&line);
        self.note_copied(&origin);
        match &line.record {
            Record::Verdict { verdict } => {
                self.verdicts.insert(task.clone(), *verdict);
                self.settled.insert(task);
            }
            Record::State { state, prompt_kind } => {
                self.last
                    .insert(task.clone(), (*state, prompt_kind.clone()));
                self.settled.remove(&task);
            }
            Record::Event { .. } | Record::Answer { .. } => {}
        }
        true
    }

    /// The task's current state, if any was recorded.
    pub fn state(&self, task: &str) -> Option<SeatState> {
        self.last.get(task).map(|(s, _)| *s)
    }

    pub fn verdict(&self, task: &str) -> Option<Verdict> {
        self.verdicts.get(task).copied()
    }

    /// Records a state; returns false (and writes nothing) when it is the
    /// state already recorded.
    pub fn record(
        &mut self,
        task: &str,
        state: SeatState,
        prompt_kind: Option<&str>,
        source: &str,
        detail: serde_json::Value,
    ) -> bool {
        let key = (state, prompt_kind.map(str::to_string));
        if self.last.get(task) == Some(&key) {
            return false;
        }
        self.record_news(task, state, prompt_kind, source, detail)
    }

    /// Records a state even when it is the state already recorded: the
    /// line is news in itself (a new question, which another process may
    /// have followed an answer to since this journal was opened; the
    /// evidence of a screen drover gave up on).
    pub fn record_news(
        &mut self,
        task: &str,
        state: SeatState,
        prompt_kind: Option<&str>,
        source: &str,
        detail: serde_json::Value,
    ) -> bool {
        let key = (state, prompt_kind.map(str::to_string));
        let line = Transition {
            ts: now_ns(),
            task: task.to_string(),
            record: Record::State {
                state,
                prompt_kind: key.1.clone(),
            },
            source: source.to_string(),
            detail,
            origin: None,
        };
        self.write(&line);
        self.last.insert(task.to_string(), key);
        self.settled.remove(task);
        true
    }

    /// Records a turn's verdict: once, until the task's state changes again.
    pub fn verdict_once(
        &mut self,
        task: &str,
        verdict: Verdict,
        source: &str,
        detail: serde_json::Value,
    ) -> bool {
        if self.settled.contains(task) {
            return false;
        }
        let line = Transition {
            ts: now_ns(),
            task: task.to_string(),
            record: Record::Verdict { verdict },
            source: source.to_string(),
            detail,
            origin: None,
        };
        self.write(&line);
        self.verdicts.insert(task.to_string(), verdict);
        self.settled.insert(task.to_string());
        true
    }

    /// Records something the agent reported (no state change).
    pub fn event(&mut self, task: &str, name: &str, source: &str, detail: serde_json::Value) {
        self.write(&Transition {
            ts: now_ns(),
            task: task.to_string(),
            record: Record::Event {
                name: name.to_string(),
            },
            source: source.to_string(),
            detail,
            origin: None,
        });
    }

    /// Records the answer to a blocked seat's question: the option chosen
    /// and who chose it (a person, or the policy rule that decided).
    pub fn answer(
        &mut self,
        task: &str,
        question: &str,
        option: &str,
        by: &crate::question::Answerer,
    ) {
        let source = match by {
            crate::question::Answerer::Person => "person".to_string(),
            crate::question::Answerer::Policy { rule } => format!(
                "policy:{}",
                rule.get("at")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("rule")
            ),
        };
        self.write(&Transition {
            ts: now_ns(),
            task: task.to_string(),
            record: Record::Answer {
                option: option.to_string(),
            },
            source,
            detail: serde_json::json!({"question": question, "answered": by}),
            origin: None,
        });
    }

    /// The line this journal appended last, if any.
    pub fn last_written(&self) -> Option<&Transition> {
        self.written.as_ref()
    }

    fn write(&mut self, line: &Transition) {
        self.written = Some(line.clone());
        match serde_json::to_string(line) {
            Ok(text) => {
                if let Err(e) = append_line(&self.path, &text) {
                    tracing::warn!(path = %self.path.display(), "cannot append to the run journal: {e}");
                }
            }
            Err(e) => tracing::warn!("cannot encode a journal line: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn repeats_are_not_written_and_reopening_continues() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("events.jsonl");
        let mut j = Journal::open(path.clone());
        assert!(j.record("t", SeatState::Working, None, "launch", Value::Null));
        assert!(!j.record("t", SeatState::Working, None, "poll", Value::Null));
        assert!(j.record(
            "t",
            SeatState::Blocked,
            Some("permission"),
            "hook:PermissionRequest",
            Value::Null
        ));
        assert!(!j.record(
            "t",
            SeatState::Blocked,
            Some("permission"),
            "screen",
            Value::Null
        ));
        assert!(j.record(
            "t",
            SeatState::Blocked,
            Some("question"),
            "screen",
            Value::Null
        ));
        let mut again = Journal::open(path.clone());
        assert_eq!(again.state("t"), Some(SeatState::Blocked));
        assert!(!again.record(
            "t",
            SeatState::Blocked,
            Some("question"),
            "poll",
            Value::Null
        ));
        assert!(again.verdict_once("t", Verdict::Completed, "hook:Stop", Value::Null));
        assert!(!Journal::open(path.clone()).verdict_once(
            "t",
            Verdict::Completed,
            "again",
            Value::Null
        ));
        // A later turn (a state change) gets its own verdict; a repeat does not.
        let mut next = Journal::open(path.clone());
        assert!(next.record("t", SeatState::Working, None, "send", Value::Null));
        assert!(next.verdict_once("t", Verdict::Stalled, "session", Value::Null));
        assert!(!next.verdict_once("t", Verdict::Stalled, "again", Value::Null));
        let lines = read_transitions(&path);
        assert_eq!(
            lines.iter().map(|t| t.record.value()).collect::<Vec<_>>(),
            [
                "working",
                "blocked",
                "blocked",
                "completed",
                "working",
                "stalled"
            ]
        );
    }

    #[test]
    fn copied_lines_land_once_by_position() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("events.jsonl");
        let line = |record: Record| Transition {
            ts: 1,
            task: "t".to_string(),
            record,
            source: "exit".to_string(),
            detail: Value::Null,
            origin: None,
        };
        let at = |seq| Origin {
            job: "j1".to_string(),
            seq,
        };
        let mut j = Journal::open(path.clone());
        assert!(j.copy(
            line(Record::State {
                state: SeatState::Working,
                prompt_kind: None
            }),
            at(0)
        ));
        assert!(j.copy(
            line(Record::State {
                state: SeatState::Done,
                prompt_kind: None
            }),
            at(1)
        ));
        // A reconnect offers everything again, and more.
        let mut again = Journal::open(path.clone());
        assert_eq!(again.copied_through("j1"), Some(1));
        assert!(!again.copy(
            line(Record::State {
                state: SeatState::Working,
                prompt_kind: None
            }),
            at(0)
        ));
        assert!(!again.copy(
            line(Record::State {
                state: SeatState::Done,
                prompt_kind: None
            }),
            at(1)
        ));
        assert!(again.copy(
            line(Record::Verdict {
                verdict: Verdict::Completed
            }),
            at(2)
        ));
        assert!(!again.copy(
            line(Record::Verdict {
                verdict: Verdict::Completed
            }),
            at(2)
        ));
        // The next job's lines start from 0 again.
        let next = Origin {
            job: "j2".to_string(),
            seq: 0,
        };
        assert!(again.copy(
            line(Record::State {
                state: SeatState::Working,
                prompt_kind: None
            }),
            next
        ));
        let lines = read_transitions(&path);
        assert_eq!(
            lines.iter().map(|t| t.record.value()).collect::<Vec<_>>(),
            ["working", "done", "completed", "working"]
        );
        assert_eq!(lines[2].origin.as_ref().map(|o| o.seq), Some(2));
    }

    /// The typed record keeps the line's format on disk, which older
    /// drovers, `drover events --json` readers and Ray nodes share.
    #[test]
    fn a_line_reads_and_writes_as_it_always_did() {
        let old = r#"{"ts":5,"task":"t","kind":"state","state":"blocked","prompt_kind":"permission","source":"hook:Notification","detail":{"evidence":"Allow?"}}"#;
        let line: Transition = serde_json::from_str(old).expect("an old line");
        assert_eq!(line.seat_state(), Some(SeatState::Blocked));
        assert_eq!(line.prompt_kind(), Some("permission"));
        assert_eq!(serde_json::to_string(&line).expect("json"), old);
        let verdict =
            r#"{"ts":6,"task":"t","kind":"verdict","state":"over_budget","source":"session"}"#;
        let line: Transition = serde_json::from_str(verdict).expect("a verdict");
        assert_eq!(line.verdict(), Some(Verdict::OverBudget));
        assert_eq!(serde_json::to_string(&line).expect("json"), verdict);
        // A state no drover writes is not a state: the line is skipped.
        let unknown = r#"{"ts":7,"task":"t","kind":"state","state":"sleeping","source":"x"}"#;
        assert!(serde_json::from_str::<Transition>(unknown).is_err());
    }

    #[test]
    fn a_torn_last_line_is_skipped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("events.jsonl");
        Journal::open(path.clone()).record("t", SeatState::Working, None, "x", Value::Null);
        append_line(&path, "{\"ts\": 1, \"task\": \"t\", \"ki").expect("append");
        assert_eq!(read_transitions(&path).len(), 1);
    }
}
