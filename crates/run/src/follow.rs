//! Following the journals of a project's runs as they grow: `status.stream`
//! for `drover events --follow` and `drover wait`.
//!
//! Each run's `events.jsonl` is read once up to its end and then only from
//! the byte offset reached, so a line is delivered once and never re-read.
//! Filesystem notifications on `.drover/runs/` (new runs) and on each run
//! directory (its journal growing) say which journal to read next; the run
//! directories are watched without recursion, so a pane tee writing into
//! `logs/` never wakes a follower. When notifications are unavailable or
//! overflowed, a size check of every journal (a `stat`, no read) stands in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher as _};
use serde_json::{Map, Value};

use super::{RunInfo, Transition, runs_root};

/// How often the journals' sizes are checked when notifications cannot be
/// trusted to say so (none available, or a queue overflow).
const FALLBACK_SCAN: Duration = Duration::from_millis(250);
/// The same check as a safety net while notifications work.
const SAFETY_SCAN: Duration = Duration::from_secs(5);

/// One journal line of one run: the line's own fields, plus which run it
/// belongs to and, for a seat's run, the seat's nickname.
#[derive(Debug, Clone, PartialEq)]
pub struct RunEvent {
    pub run: String,
    pub seat: Option<String>,
    pub transition: Transition,
    /// Every field of the line as written (fields this drover does not know
    /// pass through unchanged).
    pub fields: Map<String, Value>,
}

impl RunEvent {
    /// The line as `drover events --json` prints it: the journal's fields
    /// plus `run` and `seat`.
    pub fn to_json(&self) -> Value {
        let mut fields = self.fields.clone();
        fields.insert("run".to_string(), Value::String(self.run.clone()));
        fields.insert(
            "seat".to_string(),
            self.seat.clone().map_or(Value::Null, Value::String),
        );
        Value::Object(fields)
    }
}

/// Seat runs are named `seat-<nick>-<run id>` (see `drover up`); their one
/// task is the seat's nickname.
pub fn seat_of(run_id: &str, task: &str) -> Option<String> {
    run_id
        .strip_prefix("seat-")
        .and_then(|rest| rest.strip_prefix(task))
        .filter(|rest| rest.starts_with('-'))
        .map(|_| task.to_string())
}

/// A journal line, parsed, and all its fields as written.
pub type Line = (Transition, Map<String, Value>);

/// Complete lines appended to `path` after byte `offset`, and the offset to
/// continue from. A torn last line is left for the next read.
pub fn read_from(path: &Path, offset: u64) -> (Vec<Line>, u64) {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = std::fs::File::open(path) else {
        return (Vec::new(), offset);
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len < offset {
        // The journal is append-only; a shorter file was replaced. Start over
        // rather than read from the middle of a line.
        return read_from(path, 0);
    }
    if len == offset || file.seek(SeekFrom::Start(offset)).is_err() {
        return (Vec::new(), offset);
    }
    let mut bytes = Vec::new();
    if file.read_to_end(&mut bytes).is_err() {
        return (Vec::new(), offset);
    }
    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let lines = bytes[..complete]
        .split(|&b| b == b'\n')
        .filter_map(|line| {
            let fields: Map<String, Value> = serde_json::from_slice(line).ok()?;
            let transition: Transition =
                serde_json::from_value(Value::Object(fields.clone())).ok()?;
            Some((transition, fields))
        })
        .collect();
    (lines, offset + complete as u64)
}

struct Tail {
    journal: PathBuf,
    offset: u64,
    /// Tasks whose last line is not a verdict (still open).
    open: BTreeMap<String, bool>,
    info: Option<RunInfo>,
}

/// Follows one run or every run of a project.
pub struct Follower {
    root: PathBuf,
    only: Option<String>,
    tails: BTreeMap<String, Tail>,
    wakeups: Option<Receiver<notify::Result<notify::Event>>>,
    watcher: Option<notify::RecommendedWatcher>,
    rescan: bool,
    last_scan: Instant,
}

impl Follower {
    /// A follower positioned at the start of every journal: the first
    /// [`Follower::read_all`] returns their history.
    pub fn new(project: &Path, only: Option<&str>) -> Follower {
        let root = runs_root(project);
        let created = std::fs::create_dir_all(&root);
        // Notifications name absolute paths; a relative root (`--project .`)
        // would match none of them.
        let root = root.canonicalize().unwrap_or(root);
        let (tx, rx) = channel();
        let watcher = created
            .map_err(|e| notify::Error::generic(&e.to_string()))
            .and_then(|()| {
                notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                    // Reads of the journal (ours included) are not news.
                    if !matches!(&event, Ok(e) if matches!(e.kind, notify::EventKind::Access(_))) {
                        let _ = tx.send(event);
                    }
                })
            })
            .and_then(|mut w| w.watch(&root, RecursiveMode::NonRecursive).map(|()| w));
        let (wakeups, watcher) = match watcher {
            Ok(w) => (Some(rx), Some(w)),
            Err(e) => {
                tracing::debug!("filesystem notifications unavailable, checking sizes: {e}");
                (None, None)
            }
        };
        let mut follower = Follower {
            root,
            only: only.map(str::to_string),
            tails: BTreeMap::new(),
            wakeups,
            watcher,
            rescan: false,
            last_scan: Instant::now(),
        };
        follower.discover();
        follower
    }

    /// Adds runs that appeared since the last look (and watches them).
    fn discover(&mut self) {
        let ids: Vec<String> = match &self.only {
            Some(id) => vec![id.clone()],
            None => std::fs::read_dir(&self.root)
                .map(|entries| {
                    entries
                        .filter_map(Result::ok)
                        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                        .filter_map(|e| e.file_name().into_string().ok())
                        .collect()
                })
                .unwrap_or_default(),
        };
        for id in ids {
            if self.tails.contains_key(&id) {
                continue;
            }
            let dir = self.root.join(&id);
            if !dir.is_dir() {
                continue;
            }
            if let Some(w) = &mut self.watcher
                && let Err(e) = w.watch(&dir, RecursiveMode::NonRecursive)
            {
                // Past the watch limit the size check still finds its lines.
                tracing::debug!(run = %id, "cannot watch the run: {e}");
                self.rescan = true;
            }
            self.tails.insert(
                id,
                Tail {
                    journal: dir.join("events.jsonl"),
                    offset: 0,
                    open: BTreeMap::new(),
                    info: None,
                },
            );
        }
    }

    fn read_run(&mut self, id: &str) -> Vec<RunEvent> {
        let Some(tail) = self.tails.get_mut(id) else {
            return Vec::new();
        };
        let (lines, next) = read_from(&tail.journal, tail.offset);
        tail.offset = next;
        lines
            .into_iter()
            .map(|(transition, fields)| {
                tail.open
                    .insert(transition.task.clone(), transition.verdict().is_none());
                RunEvent {
                    run: id.to_string(),
                    seat: seat_of(id, &transition.task),
                    transition,
                    fields,
                }
            })
            .collect()
    }

    /// Everything not yet delivered from every followed journal, oldest first.
    pub fn read_all(&mut self) -> Vec<RunEvent> {
        self.discover();
        let ids: Vec<String> = self.tails.keys().cloned().collect();
        let mut out: Vec<RunEvent> = ids.iter().flat_map(|id| self.read_run(id)).collect();
        out.sort_by_key(|e| e.transition.ts);
        self.last_scan = Instant::now();
        self.rescan = false;
        out
    }

    /// Waits up to `timeout` for journals to grow and returns the new lines,
    /// oldest first (empty when nothing happened).
    pub fn next(&mut self, timeout: Duration) -> Vec<RunEvent> {
        let scan_every = if self.wakeups.is_some() && !self.rescan {
            SAFETY_SCAN
        } else {
            FALLBACK_SCAN
        };
        let until_scan = scan_every.saturating_sub(self.last_scan.elapsed());
        let mut changed: Vec<String> = Vec::new();
        let mut full = false;
        match &self.wakeups {
            Some(rx) => match rx.recv_timeout(timeout.min(until_scan)) {
                Ok(first) => {
                    let mut events = vec![first];
                    // Coalesce a burst into one read per journal.
                    while let Ok(more) = rx.try_recv() {
                        events.push(more);
                    }
                    for event in events {
                        match event {
                            Ok(e) if e.need_rescan() => full = true,
                            Ok(e) => changed.extend(e.paths.iter().filter_map(|p| self.run_of(p))),
                            Err(_) => full = true,
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    self.wakeups = None;
                    full = true;
                }
            },
            None => std::thread::sleep(timeout.min(until_scan)),
        }
        if full || self.last_scan.elapsed() >= scan_every {
            return self.read_all();
        }
        changed.sort();
        changed.dedup();
        self.discover();
        let mut out: Vec<RunEvent> = changed.iter().flat_map(|id| self.read_run(id)).collect();
        out.sort_by_key(|e| e.transition.ts);
        out
    }

    /// The run a changed path belongs to (`<root>/<run>` or `<root>/<run>/x`).
    fn run_of(&self, path: &Path) -> Option<String> {
        let rest = path.strip_prefix(&self.root).ok()?;
        let id = rest.components().next()?.as_os_str().to_str()?.to_string();
        match &self.only {
            Some(only) if *only != id => None,
            _ => Some(id),
        }
    }

    /// Runs with a task still open (no verdict after its last state), with
    /// what `run.json` says about them: the candidates for settling when
    /// their driver is gone.
    pub fn open_runs(&mut self) -> Vec<(String, RunInfo)> {
        let mut out = Vec::new();
        for (id, tail) in &mut self.tails {
            if tail.info.is_none() {
                tail.info = std::fs::read_to_string(self.root.join(id).join("run.json"))
                    .ok()
                    .and_then(|t| serde_json::from_str(&t).ok());
            }
            let Some(info) = &tail.info else { continue };
            let open = info
                .tasks
                .iter()
                .any(|t| tail.open.get(t).copied().unwrap_or(true));
            if open {
                out.push((id.clone(), info.clone()));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Journal, RunDir};
    use drover_types::wit::SeatState;
    use serde_json::Value;

    fn info(id: &str, tasks: &[&str]) -> RunInfo {
        RunInfo {
            run_id: id.to_string(),
            created_ns: 0,
            cli: "claude".to_string(),
            workspace: drover_types::WorkspaceKind::Headless,
            project: PathBuf::from("/p"),
            tasks: tasks.iter().map(|t| t.to_string()).collect(),
            driver_pid: 0,
            driver_start: None,
        }
    }

    #[test]
    fn history_then_only_new_lines_across_runs_that_start_later() {
        let project = tempfile::tempdir().expect("tempdir");
        let a = RunDir::create(project.path(), "a").expect("run a");
        a.write_info(&info("a", &["t"])).expect("info");
        let mut ja = Journal::open(a.journal_path());
        ja.record("t", SeatState::Working, None, "launch", Value::Null);
        let mut f = Follower::new(project.path(), None);
        let history = f.read_all();
        assert_eq!(history.len(), 1);
        assert_eq!(f.open_runs().len(), 1);
        assert!(f.next(Duration::from_millis(10)).is_empty());
        // A run that starts after the follower began.
        let b = RunDir::create(project.path(), "seat-dev-b").expect("run b");
        b.write_info(&info("seat-dev-b", &["dev"])).expect("info");
        Journal::open(b.journal_path()).record("dev", SeatState::Idle, None, "screen", Value::Null);
        ja.verdict_once(
            "t",
            drover_types::Verdict::Completed,
            "session",
            Value::Null,
        );
        let mut seen = Vec::new();
        let until = Instant::now() + Duration::from_secs(10);
        while seen.len() < 2 && Instant::now() < until {
            seen.extend(f.next(Duration::from_millis(500)));
        }
        let mut got: Vec<(String, Option<String>, String)> = seen
            .iter()
            .map(|e| {
                (
                    e.run.clone(),
                    e.seat.clone(),
                    e.transition.record.value().to_string(),
                )
            })
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                ("a".to_string(), None, "completed".to_string()),
                (
                    "seat-dev-b".to_string(),
                    Some("dev".to_string()),
                    "idle".to_string()
                ),
            ]
        );
        // Nothing is delivered twice, even by a full re-check.
        assert!(f.read_all().is_empty());
        let open: Vec<String> = f.open_runs().into_iter().map(|(id, _)| id).collect();
        assert_eq!(open, ["seat-dev-b"]);
    }

    #[test]
    fn unknown_fields_pass_through_and_run_and_seat_are_added() {
        let project = tempfile::tempdir().expect("tempdir");
        let run = RunDir::create(project.path(), "seat-rev-x").expect("run");
        drover_state::append_line(
            &run.journal_path(),
            r#"{"ts":5,"task":"rev","kind":"state","state":"blocked","source":"acp","question":"May I?"}"#,
        )
        .expect("append");
        drover_state::append_line(&run.journal_path(), r#"{"ts":6,"task":"rev","ki"#)
            .expect("torn");
        let mut f = Follower::new(project.path(), Some("seat-rev-x"));
        let lines = f.read_all();
        assert_eq!(lines.len(), 1, "the torn line waits");
        let json = lines[0].to_json();
        assert_eq!(json["question"], "May I?");
        assert_eq!(json["run"], "seat-rev-x");
        assert_eq!(json["seat"], "rev");
    }

    #[test]
    fn seat_names_come_from_the_run_id() {
        assert_eq!(seat_of("seat-dev-2026", "dev").as_deref(), Some("dev"));
        assert_eq!(seat_of("seat-dev-2026", "other"), None);
        assert_eq!(seat_of("seat-devops-1", "dev"), None);
        assert_eq!(seat_of("20261201-x", "claude"), None);
    }
}
