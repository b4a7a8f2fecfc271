//! What one line of a run's journal (`events.jsonl`) records, typed by its
//! `kind`. On disk the line keeps its fields (`kind`, and `state` holding
//! the seat state, the verdict, the event's name or the option chosen);
//! in code each kind is a variant with its own typed field.

use serde::{Deserialize, Serialize};

use crate::Verdict;
use crate::wit::SeatState;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Record {
    /// A seat's state changed (or a blocked seat asks something new).
    State {
        state: SeatState,
        /// What a blocked seat is showing (a prompt kind's name).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt_kind: Option<String>,
    },
    /// A turn ended.
    Verdict {
        #[serde(rename = "state")]
        verdict: Verdict,
    },
    /// Something the agent reported, without a state change.
    Event {
        #[serde(rename = "state")]
        name: String,
    },
    /// The answer to a seat's question: the option chosen.
    Answer {
        #[serde(rename = "state")]
        option: String,
    },
}

impl Record {
    /// The line's `state` field as written: the seat state, the verdict,
    /// the event's name or the option.
    pub fn value(&self) -> &str {
        match self {
            Record::State { state, .. } => state.as_str(),
            Record::Verdict { verdict } => verdict.as_str(),
            Record::Event { name } => name,
            Record::Answer { option } => option,
        }
    }
}
