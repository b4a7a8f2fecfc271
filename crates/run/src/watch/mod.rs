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
//! later (recovery, `probe-adapter`, a test) finds parsed records. A record
//! is kept in a bucket, `events/<ts / BUCKET_NS>/`, so `events/` itself
//! holds only drops not read yet and one directory per stretch of time
//! (records of older drovers, directly in `events/`, are still read).
//!
//! A seat lives for many sends and `events/` keeps all their records, so a
//! watcher need not read them all: a record's name (its stem, without
//! `.drop` or `.json`: a drop and the record replacing it are one record)
//! starts with the relay's timestamp, in ns and not zero-padded, so names
//! are ordered by that number, then by the whole stem. A watcher keeps a
//! cursor, below which every record was consumed; a later watcher resumes
//! after it ([`EventWatcher::resume_after`]) or after a time
//! ([`EventWatcher::since`]) and lists the older files but never opens them.
//! The relay stamps a drop before writing it, so a drop can land after a
//! later-stamped one: the cursor stays [`LATE`] behind the clock, a drop
//! landing within that is read, and one later than that (its relay stalled
//! for a minute) is skipped. The same margin keeps records stamped in the
//! future (the CLI can write here) from ever moving the cursor. A bucket
//! whose whole stretch lies before the cursor or the `since` time is not
//! even listed, so a send to a seat with a long history lists what its own
//! stretch holds, not the history: its cost stays flat.

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

/// The stretch of time one bucket of records covers, in ns (1,000 s): a
/// few sends of a seat, and a few dozen buckets over a night.
pub const BUCKET_NS: u64 = 1_000_000_000_000;

/// The bucket a record stamped `ts` is kept in.
pub fn bucket_of(ts: u64) -> String {
    (ts / BUCKET_NS).to_string()
}

/// How far behind its own timestamp a drop may land and still be read: the
/// relay stamps it just before writing it, so a minute means a stalled
/// relay. The cursor never passes a record younger than this.
const LATE: Duration = Duration::from_secs(60);

/// Turns a relay's drop into a record (parsing the payload with the
/// adapter component of the CLI that fired the hook).
pub trait ReadDrop: Send {
    fn record(&mut self, drop: &HookDrop) -> HookRecord;
}

pub struct EventWatcher {
    dir: PathBuf,
    /// Every record named at or before it was consumed (or skipped).
    cursor: Option<Position>,
    /// Files named before this ns are skipped unopened.
    since: u64,
    /// Stems consumed after the cursor; the cursor's advance empties it.
    consumed: HashSet<String>,
    unreadable: HashMap<OsString, u32>,
    reader: Box<dyn ReadDrop>,
    wakeups: Option<Receiver<()>>,
    _watcher: Option<notify::RecommendedWatcher>,
}

/// A record's place in name order.
struct Position {
    ts: u64,
    stem: String,
}

impl Position {
    fn new(stem: &str) -> Position {
        Position {
            ts: stamp(stem),
            stem: stem.to_string(),
        }
    }

    fn covers(&self, ts: u64, stem: &str) -> bool {
        (ts, stem) <= (self.ts, self.stem.as_str())
    }
}

/// The timestamp a stem starts with: 0 without one, `u64::MAX` past it.
fn stamp(stem: &str) -> u64 {
    let digits = stem.bytes().take_while(u8::is_ascii_digit).count();
    match digits {
        0 => 0,
        _ => stem[..digits].parse().unwrap_or(u64::MAX),
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Drop,
    Record,
}

/// A file of this listing past the cursor (or retried below it).
struct Listed {
    ts: u64,
    stem: String,
    name: OsString,
    kind: Kind,
}

/// The stem and kind of an event file's name; `None` for anything else
/// (temporaries are hidden, and the relay names drops in ASCII).
fn event_file(name: &std::ffi::OsStr) -> Option<(&str, Kind)> {
    let name = name.to_str().filter(|n| !n.starts_with('.'))?;
    if let Some(stem) = name
        .strip_suffix(DROP_EXTENSION)
        .and_then(|n| n.strip_suffix('.'))
    {
        Some((stem, Kind::Drop))
    } else {
        name.strip_suffix(".json").map(|stem| (stem, Kind::Record))
    }
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
        let (wakeups, watcher) = match watcher {
            Ok(w) => (Some(rx), Some(w)),
            Err(e) => {
                tracing::debug!("filesystem notifications unavailable, polling: {e}");
                (None, None)
            }
        };
        EventWatcher {
            dir,
            cursor: None,
            since: 0,
            consumed: HashSet::new(),
            unreadable: HashMap::new(),
            reader,
            wakeups,
            _watcher: watcher,
        }
    }

    /// Skips, unopened, every file whose name's timestamp is before `ns`
    /// (a driver's launch: it has no use for older records).
    pub fn since(mut self, ns: u64) -> EventWatcher {
        self.since = ns;
        self
    }

    /// Resumes after `cursor`, what [`EventWatcher::cursor`] gave an earlier
    /// watcher of this directory: files named at or before it are never
    /// opened. Any string is taken (it comes back from disk); one behind
    /// this watcher's own cursor changes nothing.
    pub fn resume_after(mut self, cursor: &str) -> EventWatcher {
        let at = Position::new(cursor);
        if self
            .cursor
            .as_ref()
            .is_none_or(|c| !c.covers(at.ts, &at.stem))
        {
            self.consumed.retain(|stem| !at.covers(stamp(stem), stem));
            self.cursor = Some(at);
        }
        self
    }

    /// The stem of the last record passed: every file named at or before
    /// it was consumed, and a drop still to land before it would be over a
    /// minute late. Persist it to resume the next watcher after it.
    pub fn cursor(&self) -> Option<&str> {
        self.cursor.as_ref().map(|c| c.stem.as_str())
    }

    /// Where nothing before can matter: the `since` time, or the cursor's.
    fn floor(&self) -> u64 {
        self.since.max(self.cursor.as_ref().map_or(0, |c| c.ts))
    }

    /// The event files to look at: drops and old records in `events/`, and
    /// the records of every bucket not wholly before [`Self::floor`]; each
    /// with its name relative to `events/`.
    fn entries(&self) -> Vec<OsString> {
        let Ok(top) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let floor = self.floor();
        let mut names = Vec::new();
        for entry in top.filter_map(Result::ok) {
            let name = entry.file_name();
            let bucket = name
                .to_str()
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|n| n.parse::<u64>().ok());
            let Some(bucket) = bucket else {
                names.push(name);
                continue;
            };
            let end = bucket.saturating_add(1).saturating_mul(BUCKET_NS);
            // Not a link: the CLI can write into `events/`.
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if end <= floor || !is_dir {
                continue;
            }
            let Ok(inner) = std::fs::read_dir(entry.path()) else {
                continue;
            };
            for file in inner.filter_map(Result::ok) {
                let mut relative = name.clone();
                relative.push("/");
                relative.push(file.file_name());
                names.push(relative);
            }
        }
        names
    }

    /// New events, oldest first.
    pub fn poll(&mut self) -> Vec<HookRecord> {
        let mut listed = Vec::new();
        for name in self.entries() {
            let file_name = std::path::Path::new(&name)
                .file_name()
                .unwrap_or_default()
                .to_os_string();
            let Some((stem, kind)) = event_file(&file_name) else {
                continue;
            };
            if matches!(kind, Kind::Drop) && file_name != name {
                // Drops land in `events/` only.
                continue;
            }
            let ts = stamp(stem);
            let passed = self.cursor.as_ref().is_some_and(|c| c.covers(ts, stem));
            // The emptiness test spares hashing each name of a long history.
            let retried = !self.unreadable.is_empty() && self.unreadable.contains_key(&name);
            if ts < self.since || (passed && !retried) {
                continue;
            }
            let stem = stem.to_string();
            listed.push(Listed {
                ts,
                stem,
                name,
                kind,
            });
        }
        listed.sort_by(|a, b| (a.ts, &a.stem).cmp(&(b.ts, &b.stem)));
        let mut fresh = Vec::new();
        for file in &listed {
            if self.consumed.contains(&file.stem) {
                continue;
            }
            let path = self.dir.join(&file.name);
            let record = match file.kind {
                Kind::Drop => self.read_drop(&path, &file.stem),
                Kind::Record => read_record(&path),
            };
            match record {
                Some(record) => {
                    self.unreadable.remove(&file.name);
                    let passed = self
                        .cursor
                        .as_ref()
                        .is_some_and(|c| c.covers(file.ts, &file.stem));
                    if !passed {
                        self.consumed.insert(file.stem.clone());
                    }
                    fresh.push(record);
                }
                None => {
                    let tries = self.unreadable.entry(file.name.clone()).or_insert(0);
                    *tries += 1;
                    if *tries == 3 {
                        tracing::warn!(file = %path.display(), "an event file does not parse; it will keep being retried");
                    }
                }
            }
        }
        if !self.unreadable.is_empty() {
            // A file gone from the directory has nothing left to retry.
            let present: HashSet<&OsString> = listed.iter().map(|f| &f.name).collect();
            self.unreadable.retain(|name, _| present.contains(name));
        }
        self.advance(&listed);
        fresh.sort_by_key(|r| r.ts);
        fresh
    }

    /// Moves the cursor over this listing's settled records, in name order,
    /// up to the first one not consumed yet.
    fn advance(&mut self, listed: &[Listed]) {
        let late = u64::try_from(LATE.as_nanos()).unwrap_or(u64::MAX);
        let settled = drover_relay::now_ns().saturating_sub(late);
        for file in listed {
            if file.ts >= settled {
                break;
            }
            if self
                .cursor
                .as_ref()
                .is_some_and(|c| c.covers(file.ts, &file.stem))
            {
                // Retried below the cursor, or a drop beside its record.
                continue;
            }
            if !self.consumed.remove(&file.stem) {
                if !self.unreadable.contains_key(&file.name) {
                    break;
                }
                // Blocking here would grow `consumed` for good and make every
                // later watcher re-read all that follows; this watcher still
                // retries it.
                tracing::warn!(file = %self.dir.join(&file.name).display(), "the cursor passes an event file that does not parse; a watcher resumed after it will not read it");
            }
            self.cursor = Some(Position::new(&file.stem));
        }
    }

    /// A drop as a record; the record then replaces the drop on disk
    /// (best effort: when that fails the drop stays for a later reader, and
    /// the stem, consumed, keeps this watcher from reading either again).
    fn read_drop(&mut self, path: &std::path::Path, stem: &str) -> Option<HookRecord> {
        use std::io::Read;
        let parsed = format!("{stem}.json");
        let bucket = bucket_of(stamp(stem));
        if self.dir.join(&bucket).join(&parsed).exists() {
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
                let kept = drover_relay::open_bucket(&events, &bucket)?;
                drover_relay::write_event_file(&kept, &parsed, &json)?;
                events.remove_file(path.file_name().unwrap_or_default())
            });
        if let Err(e) = replaced {
            tracing::debug!(file = %path.display(), "a drop stays unreplaced: {e}");
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
mod tests;
