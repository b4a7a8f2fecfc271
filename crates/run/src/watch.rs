//! Watching `events/` for relay drops: filesystem notifications (`notify`)
//! wake the wait loop early, and a directory listing on every wait is the
//! source of truth, so a missed or unsupported notification only costs
//! latency, never an event.
//!
//! A file is marked consumed only after it parsed. A file that does not parse
//! yet (which atomic renames should make impossible, but the directory is
//! hostile ground) is retried on every later wait and never silently lost.
//!
//! The relay drops raw payloads (`*.drop`, see the `drover-relay` crate); a
//! [`ReadDrop`] (the session's warm component) turns each into a record,
//! which replaces the drop on disk as `*.json`, so whoever reads the run
//! later (recovery, `probe-adapter`, a test) finds parsed records.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use notify::{RecursiveMode, Watcher as _};

use drover_relay::{DROP_EXTENSION, DROP_FILE_MAX, HookDrop};

use super::HookRecord;

/// Largest record file read; parsed records are a few KB.
const EVENT_FILE_MAX: u64 = 1 << 20;

/// Turns a relay's drop into a record (parsing the payload with the
/// adapter component of the CLI that fired the hook).
pub trait ReadDrop: Send {
    fn record(&mut self, drop: &HookDrop) -> HookRecord;
}

pub struct EventWatcher {
    dir: PathBuf,
    consumed: HashSet<OsString>,
    unreadable: HashMap<OsString, u32>,
    reader: Box<dyn ReadDrop>,
    wakeups: Option<Receiver<()>>,
    _watcher: Option<notify::RecommendedWatcher>,
}

impl EventWatcher {
    pub fn new(dir: PathBuf, reader: impl ReadDrop + 'static) -> EventWatcher {
        let reader: Box<dyn ReadDrop> = Box::new(reader);
        let _ = drover_state::create_dir_all(&dir);
        let (tx, rx) = channel();
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            // Only a change can bring an event file. Access events must not
            // wake the loop: `poll` lists (opens and closes) this very
            // directory, so each listing would wake the next one at once
            // and the session loop would spin a core for the whole turn.
            if event.is_ok_and(|e| !matches!(e.kind, notify::EventKind::Access(_))) {
                let _ = tx.send(());
            }
        })
        .and_then(|mut w| w.watch(&dir, RecursiveMode::NonRecursive).map(|()| w));
        match watcher {
            Ok(w) => EventWatcher {
                dir,
                consumed: HashSet::new(),
                unreadable: HashMap::new(),
                reader,
                wakeups: Some(rx),
                _watcher: Some(w),
            },
            Err(e) => {
                tracing::debug!("filesystem notifications unavailable, polling: {e}");
                EventWatcher {
                    dir,
                    consumed: HashSet::new(),
                    unreadable: HashMap::new(),
                    reader,
                    wakeups: None,
                    _watcher: None,
                }
            }
        }
    }

    /// New events, oldest first.
    pub fn poll(&mut self) -> Vec<HookRecord> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut fresh = Vec::new();
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name();
            let text_name = name.to_string_lossy().into_owned();
            if text_name.starts_with('.') || self.consumed.contains(&name) {
                continue;
            }
            let record = if let Some(stem) = text_name.strip_suffix(&format!(".{DROP_EXTENSION}")) {
                self.read_drop(&entry.path(), stem)
            } else if text_name.ends_with(".json") {
                read_record(&entry.path())
            } else {
                continue;
            };
            match record {
                Some(record) => {
                    self.unreadable.remove(&name);
                    self.consumed.insert(name);
                    fresh.push(record);
                }
                None => {
                    let tries = self.unreadable.entry(name).or_insert(0);
                    *tries += 1;
                    if *tries == 3 {
                        tracing::warn!(file = %entry.path().display(), "an event file does not parse; it will keep being retried");
                    }
                }
            }
        }
        fresh.sort_by_key(|r| r.ts);
        fresh
    }

    /// A drop as a record; the record then replaces the drop on disk
    /// (best effort: when that fails the drop stays for a later reader).
    fn read_drop(&mut self, path: &std::path::Path, stem: &str) -> Option<HookRecord> {
        use std::io::Read;
        let parsed = format!("{stem}.json");
        if self.dir.join(&parsed).exists() {
            // Replaced already; only the removal of the drop was missed.
            let _ = std::fs::remove_file(path);
            return None;
        }
        let mut bytes = Vec::new();
        open_event_file(path)?
            .take(DROP_FILE_MAX)
            .read_to_end(&mut bytes)
            .ok()?;
        let drop = HookDrop::from_bytes(&bytes).ok()?;
        let record = self.reader.record(&drop);
        let replaced = serde_json::to_vec(&record)
            .map_err(std::io::Error::other)
            .and_then(|json| {
                let run = self.dir.parent().unwrap_or(std::path::Path::new("."));
                let events = drover_relay::open_events(run, false)?;
                drover_relay::write_event_file(&events, &parsed, &json)?;
                events.remove_file(path.file_name().unwrap_or_default())
            });
        match replaced {
            Ok(()) => {
                self.consumed.insert(OsString::from(parsed));
            }
            Err(e) => tracing::debug!(file = %path.display(), "a drop stays unreplaced: {e}"),
        }
        Some(record)
    }

    /// Waits up to `timeout` for a notification (or just sleeps that long
    /// when notifications are unavailable), then polls.
    pub fn wait(&mut self, timeout: Duration) -> Vec<HookRecord> {
        let ready = self.poll();
        if !ready.is_empty() {
            return ready;
        }
        match &self.wakeups {
            Some(rx) => match rx.recv_timeout(timeout) {
                Ok(()) => {
                    // Coalesce a burst of notifications into one listing.
                    while rx.try_recv().is_ok() {}
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => std::thread::sleep(timeout),
            },
            None => std::thread::sleep(timeout.min(Duration::from_millis(250))),
        }
        self.poll()
    }
}

fn read_record(path: &std::path::Path) -> Option<HookRecord> {
    use std::io::Read;
    let mut text = String::new();
    open_event_file(path)?
        .take(EVENT_FILE_MAX)
        .read_to_string(&mut text)
        .ok()?;
    serde_json::from_str(&text).ok()
}

/// Opens an event file only if it is a regular file, never through a link
/// and never blocking: the driven CLI can write into `events/`, and a FIFO
/// or a link to `/dev/zero` there must not hang or busy the session.
fn open_event_file(path: &std::path::Path) -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    file.metadata().ok()?.is_file().then_some(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_types::wit::CanonicalEvent;

    fn record(ts: u64, task: &str) -> HookRecord {
        HookRecord {
            v: 1,
            ts,
            task: task.to_string(),
            cli: "claude".to_string(),
            native: "Stop".to_string(),
            kind: CanonicalEvent::Stop,
            session_id: None,
            transcript_path: None,
            cwd: None,
            subagent: false,
            reason: None,
            prompt_kind: None,
            last_message: None,
            fields_found: vec![],
            error: None,
            payload: None,
        }
    }

    /// Reads a drop as a Stop of its task at its time.
    struct Stub;

    impl ReadDrop for Stub {
        fn record(&mut self, drop: &HookDrop) -> HookRecord {
            HookRecord {
                native: drop.header.native.clone(),
                ..record(drop.header.ts, &drop.header.task)
            }
        }
    }

    #[test]
    fn a_drop_is_read_once_and_replaced_by_its_record() {
        let project = tempfile::tempdir().expect("tempdir");
        let run = project.path().join(".drover/runs/r");
        let events = run.join("events");
        let mut w = EventWatcher::new(events.clone(), Stub);
        let drop = HookDrop {
            header: drover_relay::DropHeader {
                v: 2,
                ts: 15,
                task: "t".into(),
                cli: "claude".into(),
                native: "SessionEnd".into(),
                capture: false,
            },
            payload: b"{}".to_vec(),
        };
        drover_relay::publish(&run, &drop).expect("publish");
        let got = w.poll();
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].ts, got[0].native.as_str()), (15, "SessionEnd"));
        assert!(w.poll().is_empty(), "delivered twice");
        let names: Vec<String> = std::fs::read_dir(&events)
            .expect("events")
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(names[0].ends_with(".json"), "{names:?}");
        let on_disk: HookRecord =
            serde_json::from_slice(&std::fs::read(events.join(&names[0])).expect("read"))
                .expect("a record");
        assert_eq!(on_disk, got[0]);
        // A second reader of the run (recovery) sees the record, not the drop.
        let mut later = EventWatcher::new(events.clone(), Stub);
        assert_eq!(later.poll(), got);
    }

    #[test]
    fn links_and_fifos_in_events_are_never_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let events = dir.path().join("events");
        let mut w = EventWatcher::new(events.clone(), Stub);
        let elsewhere = dir.path().join("record.json");
        std::fs::write(
            &elsewhere,
            serde_json::to_vec(&record(1, "t")).expect("encode"),
        )
        .expect("write");
        std::os::unix::fs::symlink(&elsewhere, events.join("linked.json")).expect("link");
        let made = std::process::Command::new("mkfifo")
            .arg(events.join("blocking.drop"))
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        // Neither the link nor the FIFO (which would block an open) is read.
        assert!(w.poll().is_empty());
    }

    #[test]
    fn each_file_is_delivered_once_in_ts_order_and_broken_ones_are_retried() {
        let dir = tempfile::tempdir().expect("tempdir");
        let events = dir.path().join("events");
        let mut w = EventWatcher::new(events.clone(), Stub);
        for (name, ts) in [("b.json", 20), ("a.json", 10)] {
            std::fs::write(
                events.join(name),
                serde_json::to_vec(&record(ts, "t")).expect("encode"),
            )
            .expect("write");
        }
        std::fs::write(events.join(".c.json.tmp"), b"{").expect("write");
        std::fs::write(events.join("broken.json"), b"{\"v\":1,").expect("write");
        let got = w.poll();
        assert_eq!(got.iter().map(|r| r.ts).collect::<Vec<_>>(), [10, 20]);
        assert!(w.poll().is_empty());
        // The broken file was not consumed: once it is whole, it arrives.
        std::fs::write(
            events.join("broken.json"),
            serde_json::to_vec(&record(30, "t")).expect("encode"),
        )
        .expect("write");
        assert_eq!(w.poll().iter().map(|r| r.ts).collect::<Vec<_>>(), [30]);
    }

    #[test]
    fn an_idle_wait_waits() {
        // Listing the directory must not count as activity in it.
        let dir = tempfile::tempdir().expect("tempdir");
        let mut w = EventWatcher::new(dir.path().join("events"), Stub);
        let started = std::time::Instant::now();
        let mut rounds = 0;
        while started.elapsed() < Duration::from_millis(600) {
            assert!(w.wait(Duration::from_millis(200)).is_empty());
            rounds += 1;
        }
        assert!(rounds <= 4, "{rounds} waits of 200 ms in 600 ms");
    }

    #[test]
    fn wait_returns_what_arrives() {
        let dir = tempfile::tempdir().expect("tempdir");
        let events = dir.path().join("events");
        let mut w = EventWatcher::new(events.clone(), Stub);
        std::fs::write(
            events.join("x.json"),
            serde_json::to_vec(&record(5, "t")).expect("encode"),
        )
        .expect("write");
        let got = w.wait(Duration::from_secs(5));
        assert_eq!(got.len(), 1);
    }
}
