//! `.drover/conversations.jsonl`: which conversation each session used and
//! what it spent, so a resumed headless turn can be reported per turn even
//! when the CLI reports conversation-cumulative totals (Codex), and
//! `--continue` can find the last conversation.
//!
//! A checkout can commit this file, and what it says reaches a CLI's argv
//! (`--continue` resumes the id) and the usage drover reports. So each line
//! is sealed as drover writes it, and only sealed lines count; a committed
//! or edited line is ignored.

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

/// The largest conversations file read (years of turns fit far below it).
const FILE_MAX: u64 = 256 << 20;

/// The lines this user's drover wrote, oldest first.
fn entries(project: &Path) -> Vec<Entry> {
    let path = path(project);
    let Ok(bytes) = drover_gate::read::read_bounded(&path, FILE_MAX) else {
        return Vec::new();
    };
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|line| drover_run::sealed::read_sealed_line::<Entry>(&path, line))
        .filter(|e| e.from == drover_gate::Provenance::SealedRecord)
        .map(|e| e.value)
        .collect()
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
    let path = path(project);
    match drover_run::sealed::seal_line(&path, entry) {
        Ok(line) => {
            if let Err(e) = drover_state::append_line(&path, &line) {
                tracing::warn!("cannot record the conversation in {}: {e}", path.display());
            }
        }
        Err(e) => tracing::warn!(
            "cannot seal the conversation record ({e}); `--continue` will not find it"
        ),
    }
}

/// Every turn this user's drover recorded in the project, oldest first:
/// the ledger budgets are checked against.
pub fn turns(project: &Path) -> Vec<Entry> {
    entries(project)
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

/// The prior usage of a conversation known by several ids (the one a hook
/// reported, the one a turn resumed): the first that has any recorded.
pub fn prior_usage_of(project: &Path, cli: &str, ids: &[Option<&str>]) -> Option<Spent> {
    ids.iter()
        .flatten()
        .filter(|id| !id.is_empty())
        .find_map(|id| prior_usage(project, cli, id))
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

        // A turn whose cost is unknown makes the sum's cost unknown.
        record(p, &turn("c1", 1, None));
        let prior = prior_usage(p, "codex", "c1").expect("recorded");
        assert_eq!((prior.tokens.input, prior.cost_usd), (151, None));
        assert_eq!(whole.minus(&prior).cost_usd, None);
    }

    /// A line a checkout committed (or anything but this user's drover
    /// wrote) is neither continued nor counted: its id would reach the
    /// CLI's argv, its usage the bill.
    #[test]
    fn only_lines_this_drover_sealed_count() {
        let project = tempfile::tempdir().expect("project");
        let p = project.path();
        record(p, &turn("mine", 10, Some(0.1)));
        let committed = r#"{"ts":3,"cli":"codex","conversation":"--config=model_provider=evil","run":"r","task":"t","usage":{"input":999,"output":0,"cache_read":0,"cache_write":0,"reasoning":0,"requests":1},"cost_usd":5.0}"#;
        drover_state::append_line(&path(p), committed).expect("append");
        let forged = committed.replace(
            "\"cost_usd\":5.0}",
            &format!("\"cost_usd\":5.0,\"seal\":\"{}\"}}", "ab".repeat(32)),
        );
        drover_state::append_line(&path(p), &forged).expect("append");
        assert_eq!(last(p, "codex").as_deref(), Some("mine"));
        let prior = prior_usage(p, "codex", "--config=model_provider=evil");
        assert!(prior.is_none(), "{prior:?}");
    }
}
