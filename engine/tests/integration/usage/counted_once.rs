//! A request kept in two places (a copied conversation, an archived
//! rollout, a thread continued in another file) counts once.

use super::{CLAUDE_A, CLAUDE_TOTAL, World, claude_fixture, component_fixture, fields};

/// A conversation copied into another project's folder is two tallies;
/// its requests, keyed by message id, still count once.
#[test]
fn a_conversation_copied_into_another_project_counts_once() {
    let w = World::new();
    w.claude();
    w.put(
        &format!(".claude/projects/-w-copy/{CLAUDE_A}.jsonl"),
        &claude_fixture(CLAUDE_A),
    );
    let report = w.json(&["--cli", "claude"], &[]);
    assert_eq!(fields(&report["totals"]), CLAUDE_TOTAL);
    assert!(
        report["repeated_requests"].as_u64().expect("n") >= 2,
        "{report:#}"
    );
}

const CODEX_THREAD: &str = "019a9776-0a34-7842-8627-112b63d66e90";

/// (input, output, cache_read, cache_write, reasoning, requests) of the two
/// requests in the Codex component's `rollout-resumed.jsonl`.
const CODEX_RESUMED_TOTAL: [u64; 6] = [2202, 134, 2000, 0, 10, 2];

/// A rollout both live and archived (a copy kept after `codex archive`) is
/// two tallies; its requests, keyed by response id, count once.
#[test]
fn a_codex_rollout_both_live_and_archived_counts_once() {
    let w = World::new();
    let rollout = component_fixture("codex", "rollout-resumed.jsonl");
    let name = format!("rollout-2026-11-30T10-00-00-{CODEX_THREAD}.jsonl");
    w.put(&format!(".codex/sessions/2026/11/30/{name}"), &rollout);
    w.put(&format!(".codex/archived_sessions/{name}"), &rollout);
    let report = w.json(&["--cli", "codex"], &[]);
    assert_eq!(fields(&report["totals"]), CODEX_RESUMED_TOTAL, "{report:#}");
    assert_eq!(report["repeated_requests"], 2, "{report:#}");
}

/// A thread continued in a second rollout under another year's folder (one
/// tally per year) that opens with the thread's old running total again:
/// each request once, in the month it was made.
#[test]
fn a_codex_thread_continued_in_another_year_counts_once() {
    let w = World::new();
    let text = std::fs::read_to_string(component_fixture("codex", "rollout-resumed.jsonl"))
        .expect("fixture");
    // As an older Codex wrote it: running totals only.
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("token_usage_record"))
        .collect();
    let split = lines
        .iter()
        .position(|l| l.contains("Reply with exactly: SECOND"))
        .expect("second turn");
    let old_total = lines[..split]
        .iter()
        .rev()
        .find(|l| l.contains("total_token_usage"))
        .expect("turn 1 total");
    let head = lines[..split].join("\n");
    let tail: Vec<String> = [lines[0].to_string(), old_total.to_string()]
        .into_iter()
        .chain(
            lines[split..]
                .iter()
                .map(|l| l.replace("2026-11-30T", "2027-01-02T")),
        )
        .collect();
    for (day, text) in [("2026/11/30", head), ("2027/01/02", tail.join("\n"))] {
        let path = w.home().join(format!(
            ".codex/sessions/{day}/rollout-{}-{CODEX_THREAD}.jsonl",
            day.replace('/', "-")
        ));
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    let report = w.json(&["--cli", "codex", "--by", "month"], &[]);
    assert_eq!(fields(&report["totals"]), CODEX_RESUMED_TOTAL, "{report:#}");
    let months: Vec<(&str, u64)> = report["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| (g["month"].as_str().unwrap_or("?"), fields(g)[5]))
        .collect();
    assert_eq!(months, [("2026-11", 1), ("2027-01", 1)]);
}
