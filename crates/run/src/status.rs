//! The status side of the workspace contract, over a run's journal
//! (`events.jsonl`), so any process can ask — the driving drover need not be
//! alive: `status.stream` is [`super::follow::Follower`], `status.wait` is
//! `drover wait` (a follower and a [`TaskView`]), and `prompt.kind` is what a
//! blocked task's view says it is waiting for, with the evidence line.
//! `notify` is drover's `notify`, fed from the same journal.

use serde::Serialize;

use super::{Record, Transition};
use drover_types::wit::SeatState;

/// Characters of evidence kept in a journal line.
pub const EVIDENCE_MAX: usize = 240;

/// What one task's journal lines add up to.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TaskView {
    /// The last seat state (working, idle, done, blocked, unknown).
    pub state: Option<String>,
    /// What a blocked task waits for (permission, trust-dialog, …).
    pub prompt_kind: Option<String>,
    /// The line that showed it was blocked (screen text or hook detail).
    pub evidence: Option<String>,
    /// The question a blocked task waits on, with its options, until it is
    /// answered ([`crate::question`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub question: Option<crate::question::Question>,
    /// The last verdict, and whether it is the task's last line (settled).
    pub verdict: Option<String>,
    pub settled: bool,
    /// When the task entered its state (ns since the epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since_ns: Option<u64>,
}

impl TaskView {
    pub fn apply(&mut self, t: &Transition) {
        let (state, prompt_kind) = match &t.record {
            Record::Verdict { verdict } => {
                self.verdict = Some(verdict.as_str().to_string());
                self.settled = true;
                return;
            }
            Record::Answer { .. } => {
                let answered = t.detail.get("question").and_then(serde_json::Value::as_str);
                if self.question.as_ref().map(|q| q.id.as_str()) == answered {
                    self.question = None;
                }
                return;
            }
            Record::State { state, prompt_kind } => (*state, prompt_kind),
            // What an agent reported changes no state.
            Record::Event { .. } => return,
        };
        self.settled = false;
        if self.state.as_deref() != Some(state.as_str()) || state == SeatState::Blocked {
            self.since_ns = Some(t.ts);
        }
        self.state = Some(state.as_str().to_string());
        if state == SeatState::Blocked {
            self.prompt_kind = prompt_kind.clone();
            self.evidence = t.evidence().map(str::to_string);
            self.question = t
                .detail
                .get("question")
                .and_then(|q| serde_json::from_value(q.clone()).ok());
        } else {
            self.prompt_kind = None;
            self.evidence = None;
            self.question = None;
        }
    }

    /// The view of `task` after every line of `lines`.
    pub fn of<'a>(task: &str, lines: impl IntoIterator<Item = &'a Transition>) -> TaskView {
        let mut view = TaskView::default();
        for t in lines.into_iter().filter(|t| t.task == task) {
            view.apply(t);
        }
        view
    }
}

/// Evidence as the journal keeps it: one line, no control characters, bounded.
pub fn clean_evidence(text: &str) -> Option<String> {
    let line: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    let line = drover_types::text::truncate_chars(line.trim(), EVIDENCE_MAX);
    (!line.is_empty()).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Journal, read_transitions};
    use drover_types::wit::SeatState;
    use serde_json::{Value, json};

    #[test]
    fn the_view_follows_states_verdicts_and_blocked_evidence() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("events.jsonl");
        let mut j = Journal::open(path.clone());
        j.record("a", SeatState::Working, None, "launch", Value::Null);
        j.record(
            "a",
            SeatState::Blocked,
            Some("permission"),
            "screen:claude/v1/permission",
            json!({"evidence": "Do you want to proceed?"}),
        );
        j.record("b", SeatState::Done, None, "hook:Stop", Value::Null);
        let lines = read_transitions(&path);
        let a = TaskView::of("a", &lines);
        assert_eq!(
            (
                a.state.as_deref(),
                a.prompt_kind.as_deref(),
                a.evidence.as_deref()
            ),
            (
                Some("blocked"),
                Some("permission"),
                Some("Do you want to proceed?")
            )
        );
        assert!(!a.settled);
        j.record("a", SeatState::Working, None, "screen", Value::Null);
        j.verdict_once(
            "a",
            drover_types::Verdict::Completed,
            "session",
            Value::Null,
        );
        let a = TaskView::of("a", &read_transitions(&path));
        assert_eq!(
            (
                a.state.as_deref(),
                a.evidence,
                a.verdict.as_deref(),
                a.settled
            ),
            (Some("working"), None, Some("completed"), true)
        );
    }

    #[test]
    fn evidence_is_one_bounded_line_without_control_characters() {
        assert_eq!(
            clean_evidence("  Do you\x1b[31m want\n to\tproceed? \x07").as_deref(),
            Some("Do you[31m want to proceed?")
        );
        assert_eq!(clean_evidence(" \n "), None);
        assert_eq!(
            clean_evidence(&"x".repeat(1000)).map(|e| e.len()),
            Some(EVIDENCE_MAX)
        );
    }
}
