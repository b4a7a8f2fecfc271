//! `.drover/conversations.jsonl`: which conversation each session used and
//! what it spent, so a resumed headless turn can be reported per turn even
//! when the CLI reports conversation-cumulative totals (Codex), and
//! `--continue` can find the last conversation.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Tokens;
use super::usage::Spent;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    pub ts: u64,
    pub cli: String,
    pub conversation: String,
    pub run: String,
    pub task: String,
    pub usage: Option<Tokens>,
    /// What `usage` cost; absent in lines older drovers wrote.
    #[serde(default)]
    pub cost_usd: Option<f64>,
}

fn path(project: &Path) -> PathBuf {
    project.join(".drover").join("conversations.jsonl")
}

fn entries(project: &Path) -> Vec<Entry> {
    std::fs::read_to_string(path(project))
        .map(|t| {
            t.lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect()
        })
        .unwrap_or_default()
}

pub fn record(project: &Path, entry: &Entry) {
    if let Ok(line) = serde_json::to_string(entry) {
        let _ = crate::run::append_line(&path(project), &line);
    }
}

/// What drover recorded for earlier turns of this conversation.
pub fn prior_usage(project: &Path, cli: &str, conversation: &str) -> Option<Spent> {
    let mut total: Option<Spent> = None;
    for e in entries(project)
        .iter()
        .filter(|e| e.cli == cli && e.conversation == conversation)
    {
        if let Some(tokens) = e.usage {
            let spent = Spent {
                tokens,
                cost_usd: e.cost_usd,
            };
            match total.as_mut() {
                Some(t) => t.add(&spent),
                None => total = Some(spent),
            }
        }
    }
    total
}

/// The most recent conversation of this CLI in the project.
pub fn last(project: &Path, cli: &str) -> Option<String> {
    entries(project)
        .into_iter()
        .rev()
        .find(|e| e.cli == cli)
        .map(|e| e.conversation)
}
