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

/// Records that `task` of the context's run used `conversation` and spent
/// `usage` in it.
pub fn record_turn(
    ctx: &super::Context,
    task: &str,
    conversation: &str,
    usage: Option<Tokens>,
    cost_usd: Option<f64>,
) {
    record(
        &ctx.project,
        &Entry {
            ts: drover_run::now_ns(),
            cli: ctx.profile().name.clone(),
            conversation: conversation.to_string(),
            run: ctx.run.id().to_string(),
            task: task.to_string(),
            usage,
            cost_usd,
        },
    );
}

pub fn record(project: &Path, entry: &Entry) {
    if let Ok(line) = serde_json::to_string(entry) {
        let _ = drover_run::append_line(&path(project), &line);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(conversation: &str, input: u64, cost_usd: Option<f64>) -> Entry {
        Entry {
            ts: 1,
            cli: "codex".to_string(),
            conversation: conversation.to_string(),
            run: "r".to_string(),
            task: "t".to_string(),
            usage: Some(Tokens {
                input,
                requests: 1,
                ..Tokens::default()
            }),
            cost_usd,
        }
    }

    #[test]
    fn earlier_turns_add_up_and_an_unknown_cost_stays_unknown() {
        let project = tempfile::tempdir().expect("project");
        let p = project.path();
        record(p, &turn("c1", 100, Some(0.25)));
        record(p, &turn("c1", 50, Some(0.5)));
        record(p, &turn("c2", 7, Some(9.0)));
        let prior = prior_usage(p, "codex", "c1").expect("recorded");
        assert_eq!((prior.tokens.input, prior.tokens.requests), (150, 2));
        assert_eq!(prior.cost_usd, Some(0.75));
        let whole = Spent {
            tokens: Tokens {
                input: 400,
                requests: 3,
                ..Tokens::default()
            },
            cost_usd: Some(1.0),
        };
        let this_turn = whole.minus(&prior);
        assert_eq!(
            (this_turn.tokens.input, this_turn.cost_usd),
            (250, Some(0.25))
        );

        // A line an older drover wrote has no cost: the sum's cost is unknown.
        let old = r#"{"ts":2,"cli":"codex","conversation":"c1","run":"r","task":"t","usage":{"input":1,"output":0,"cache_read":0,"cache_write":0,"reasoning":0,"requests":1}}"#;
        drover_run::append_line(&path(p), old).expect("append");
        let prior = prior_usage(p, "codex", "c1").expect("recorded");
        assert_eq!((prior.tokens.input, prior.cost_usd), (151, None));
        assert_eq!(whole.minus(&prior).cost_usd, None);
    }
}
