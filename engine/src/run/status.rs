//! The status side of the workspace contract, over a run's journal
//! (`events.jsonl`), so any process can ask — the driving drover need not be
//! alive: `status.stream` (new transitions since an offset),
//! `status.wait` (block until a seat reaches one of some states) and
//! `prompt.kind` (what a blocked seat is waiting for). `notify` is the
//! run's `ATTENTION` file.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::{Duration, Instant};

use super::Transition;

/// Transitions appended after byte `offset`, and the offset to continue from.
/// A torn last line is left for the next call.
pub fn stream(journal: &Path, offset: u64) -> (Vec<Transition>, u64) {
    let Ok(mut file) = std::fs::File::open(journal) else {
        return (Vec::new(), offset);
    };
    if file.seek(SeekFrom::Start(offset)).is_err() {
        return (Vec::new(), offset);
    }
    let mut bytes = Vec::new();
    if file.read_to_end(&mut bytes).is_err() {
        return (Vec::new(), offset);
    }
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let lines = String::from_utf8_lossy(&bytes[..complete]);
    let transitions = lines
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    (transitions, offset + complete as u64)
}

/// Waits until `task` reaches one of `states` (or gets a verdict, when
/// `verdict` is in `states`), polling the journal; `None` at the timeout.
pub fn wait(journal: &Path, task: &str, states: &[&str], timeout: Duration) -> Option<Transition> {
    let until = Instant::now() + timeout;
    let mut offset = 0;
    loop {
        let (fresh, next) = stream(journal, offset);
        offset = next;
        let hit = fresh.into_iter().rev().find(|t| {
            t.task == task
                && ((t.kind == "state" && states.contains(&t.state.as_str()))
                    || (t.kind == "verdict"
                        && (states.contains(&"verdict") || states.contains(&t.state.as_str()))))
        });
        if hit.is_some() {
            return hit;
        }
        if Instant::now() >= until {
            return None;
        }
        std::thread::sleep(
            Duration::from_millis(100).min(until.saturating_duration_since(Instant::now())),
        );
    }
}

/// The prompt kind a seat is blocked on, if its last state is `blocked`.
pub fn prompt_kind(journal: &Path, task: &str) -> Option<String> {
    let (all, _) = stream(journal, 0);
    all.into_iter()
        .rev()
        .find(|t| t.task == task && t.kind == "state")
        .filter(|t| t.state == "blocked")
        .and_then(|t| t.prompt_kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::Journal;
    use serde_json::Value;

    #[test]
    fn stream_wait_and_prompt_kind_follow_the_journal() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("events.jsonl");
        let mut j = Journal::open(path.clone());
        j.record("a", "working", None, "launch", Value::Null);
        let (first, offset) = stream(&path, 0);
        assert_eq!(first.len(), 1);
        j.record("a", "blocked", Some("permission"), "hook", Value::Null);
        let (more, _) = stream(&path, offset);
        assert_eq!(
            more.iter().map(|t| t.state.as_str()).collect::<Vec<_>>(),
            ["blocked"]
        );
        assert_eq!(prompt_kind(&path, "a").as_deref(), Some("permission"));
        assert_eq!(
            wait(&path, "a", &["blocked"], Duration::ZERO).map(|t| t.state),
            Some("blocked".to_string())
        );
        assert!(wait(&path, "a", &["done"], Duration::from_millis(50)).is_none());
        j.record("a", "done", None, "hook", Value::Null);
        assert_eq!(prompt_kind(&path, "a"), None);
        // A torn line is not consumed.
        std::io::Write::write_all(
            &mut std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .expect("open"),
            b"{\"ts\":1",
        )
        .expect("append");
        let (_, end) = stream(&path, 0);
        assert!(end < std::fs::metadata(&path).expect("meta").len());
    }
}
