//! Blocked prompts as data. When a seat stops to ask something (an ACP
//! agent's `session/request_permission`, or a dialog its pane shows), the
//! question becomes a [`Question`]: the tool and what it would act on, and
//! the options offered.
//! It is journaled on the seat's `blocked` line; the answer — from a person
//! (`drover answer`) or from the project policy (drover's `policy`) — is
//! journaled as an `answer` line naming who decided and, for the policy,
//! which rule.
//!
//! A person's answer travels as a file, `tasks/<task>/answers/<id>.json` in
//! the run directory, which the process holding the seat's agent picks up:
//! `drover answer` needs no connection to it, and an answer given while that
//! process is busy is not lost.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::read_transitions;
use crate::status::TaskView;

/// Characters of a question's title or input summary kept in the journal.
pub const TEXT_MAX: usize = 500;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Question {
    /// Unique within the run: the answer file is named after it.
    pub id: String,
    /// The tool as the CLI names it (`run_shell_command`, `bash`, …); empty
    /// when the CLI does not say.
    pub tool: String,
    /// The ACP tool kind: `read`, `edit`, `delete`, `move`, `search`,
    /// `execute`, `think`, `fetch`, `switch_mode` or `other`.
    pub kind: String,
    /// The agent's one-line description of the call.
    pub title: String,
    /// What the tool would act on: a command line, a path, a URL, a query.
    pub input: String,
    pub options: Vec<Choice>,
    /// A dialog on the seat's pane rather than a protocol request: it is
    /// answered by pressing keys there, once the pane still shows it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub on_pane: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Choice {
    pub id: String,
    pub label: String,
    pub kind: ChoiceKind,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ChoiceKind {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
    /// A pane dialog's option that neither allows nor rejects (a theme).
    Other,
}

impl ChoiceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChoiceKind::AllowOnce => "allow_once",
            ChoiceKind::AllowAlways => "allow_always",
            ChoiceKind::RejectOnce => "reject_once",
            ChoiceKind::RejectAlways => "reject_always",
            ChoiceKind::Other => "other",
        }
    }
}

/// Who answered a question.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Answerer {
    Person,
    Policy { rule: Value },
}

/// A person's answer, as `drover answer` leaves it for the seat's driver.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct AnswerFile {
    pub question: String,
    pub option: String,
    pub ts: u64,
}

/// Removes control characters (a title or command must never reach a
/// terminal as escape sequences), folds whitespace runs and bounds length.
pub fn clean(text: &str) -> String {
    let folded: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    if folded.chars().count() > TEXT_MAX {
        let mut cut = drover_types::text::truncate_chars(&folded, TEXT_MAX - 1);
        cut.push('…');
        cut
    } else {
        folded
    }
}

impl Question {
    /// The option an answer names: its id, its kind (`allow_once`, …), its
    /// label (any case), its 1-based position, or the first words of its
    /// label when no other option starts with them (`yes` for `Yes, I
    /// accept`).
    pub fn choice(&self, answer: &str) -> Option<&Choice> {
        let answer = answer.trim();
        self.options
            .iter()
            .find(|c| c.id == answer)
            .or_else(|| self.options.iter().find(|c| c.kind.as_str() == answer))
            .or_else(|| {
                self.options
                    .iter()
                    .find(|c| c.label.eq_ignore_ascii_case(answer))
            })
            .or_else(|| {
                answer
                    .parse::<usize>()
                    .ok()
                    .and_then(|n| n.checked_sub(1))
                    .and_then(|i| self.options.get(i))
            })
            .or_else(|| {
                let mut starting = self
                    .options
                    .iter()
                    .filter(|c| label_starts(&c.label, answer));
                match (starting.next(), starting.next()) {
                    (Some(only), None) => Some(only),
                    _ => None,
                }
            })
    }

    /// One line for people: `run_shell_command (execute): echo hi > hi.txt`.
    pub fn summary(&self) -> String {
        let what = if self.input.is_empty() {
            &self.title
        } else {
            &self.input
        };
        match (self.tool.is_empty(), self.kind.as_str()) {
            (true, kind) => format!("{kind}: {what}"),
            (false, kind) => format!("{} ({kind}): {what}", self.tool),
        }
    }

    pub fn options_line(&self) -> String {
        self.options
            .iter()
            .map(|c| format!("{} = {} ({})", c.id, c.label, c.kind.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Whether `label` begins with the words of `answer` (any case), ending
/// at a word boundary.
fn label_starts(label: &str, answer: &str) -> bool {
    if answer.is_empty() {
        return false;
    }
    let (label, answer) = (label.to_lowercase(), answer.to_lowercase());
    label
        .strip_prefix(&answer)
        .is_some_and(|rest| rest.chars().next().is_none_or(|c| !c.is_alphanumeric()))
}

/// The journal detail of a `blocked` line that carries a question.
pub fn detail(question: &Question) -> Value {
    serde_json::json!({ "question": question })
}

/// The question `task` waits on: its last state is `blocked` with a
/// question, and no answer to that question was journaled since.
pub fn pending(journal: &Path, task: &str) -> Option<Question> {
    TaskView::of(task, &read_transitions(journal)).question
}

pub fn answers_dir(task_dir: &Path) -> PathBuf {
    task_dir.join("answers")
}

/// Leaves a person's answer for the seat's driver.
pub fn leave_answer(task_dir: &Path, answer: &AnswerFile) -> std::io::Result<()> {
    let name = format!("{}.json", crate::safe_segment(&answer.question));
    crate::write_json_atomic(&answers_dir(task_dir).join(name), answer)
}

/// Takes the answer to `question` if one was left (the file is removed, so
/// it is acted on once).
pub fn take_answer(task_dir: &Path, question: &str) -> Option<AnswerFile> {
    let path = answers_dir(task_dir).join(format!("{}.json", crate::safe_segment(question)));
    let text = std::fs::read_to_string(&path).ok()?;
    let _ = std::fs::remove_file(&path);
    serde_json::from_str::<AnswerFile>(&text)
        .ok()
        .filter(|a| a.question == question)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Journal;
    use drover_types::wit::SeatState;

    fn question(id: &str) -> Question {
        Question {
            id: id.to_string(),
            tool: "run_shell_command".to_string(),
            kind: "execute".to_string(),
            title: "echo hi > hi.txt".to_string(),
            input: "echo hi > hi.txt".to_string(),
            options: vec![
                Choice {
                    id: "proceed_always".to_string(),
                    label: "Allow for this session".to_string(),
                    kind: ChoiceKind::AllowAlways,
                },
                Choice {
                    id: "proceed_once".to_string(),
                    label: "Allow".to_string(),
                    kind: ChoiceKind::AllowOnce,
                },
                Choice {
                    id: "cancel".to_string(),
                    label: "Reject".to_string(),
                    kind: ChoiceKind::RejectOnce,
                },
            ],
            on_pane: false,
        }
    }

    #[test]
    fn an_answer_names_an_option_by_id_kind_label_or_position() {
        let q = question("q1");
        assert_eq!(q.choice("cancel").map(|c| c.id.as_str()), Some("cancel"));
        assert_eq!(
            q.choice("allow_once").map(|c| c.id.as_str()),
            Some("proceed_once")
        );
        assert_eq!(
            q.choice("allow").map(|c| c.id.as_str()),
            Some("proceed_once")
        );
        assert_eq!(q.choice("1").map(|c| c.id.as_str()), Some("proceed_always"));
        assert!(q.choice("0").is_none());
        assert!(q.choice("yes please").is_none());
        // The first words of one label; "allow" alone is also a label.
        assert_eq!(q.choice("rej").map(|c| c.id.as_str()), None);
        assert_eq!(q.choice("reject").map(|c| c.id.as_str()), Some("cancel"));
        assert_eq!(
            q.choice("Allow for").map(|c| c.id.as_str()),
            Some("proceed_always")
        );
        assert_eq!(q.summary(), "run_shell_command (execute): echo hi > hi.txt");
    }

    #[test]
    fn clean_strips_escapes_and_bounds_length() {
        assert_eq!(clean("rm\x1b[2J -rf\n\t/"), "rm[2J -rf /");
        let long = clean(&"x".repeat(2000));
        assert_eq!(long.chars().count(), TEXT_MAX);
        assert!(long.ends_with('…'));
    }

    #[test]
    fn a_question_is_pending_until_answered_or_the_state_moves_on() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("events.jsonl");
        let mut journal = Journal::open(path.clone());
        journal.record("t", SeatState::Working, None, "launch", Value::Null);
        assert_eq!(pending(&path, "t"), None);
        journal.record(
            "t",
            SeatState::Blocked,
            Some("permission"),
            "acp",
            detail(&question("q1")),
        );
        assert_eq!(pending(&path, "t").map(|q| q.id), Some("q1".to_string()));
        assert_eq!(pending(&path, "other"), None);
        journal.answer("t", "q1", "cancel", &Answerer::Person);
        assert_eq!(pending(&path, "t"), None);
        journal.record("t", SeatState::Working, None, "answer", Value::Null);
        journal.record(
            "t",
            SeatState::Blocked,
            Some("permission"),
            "acp",
            detail(&question("q2")),
        );
        journal.record("t", SeatState::Unknown, None, "agent-exited", Value::Null);
        assert_eq!(pending(&path, "t"), None);
    }

    #[test]
    fn an_answer_file_is_taken_once() {
        let dir = tempfile::tempdir().expect("tempdir");
        let answer = AnswerFile {
            question: "q-1".to_string(),
            option: "proceed_once".to_string(),
            ts: 1,
        };
        leave_answer(dir.path(), &answer).expect("write");
        assert_eq!(take_answer(dir.path(), "q-2"), None);
        assert_eq!(take_answer(dir.path(), "q-1"), Some(answer));
        assert_eq!(take_answer(dir.path(), "q-1"), None);
    }
}
