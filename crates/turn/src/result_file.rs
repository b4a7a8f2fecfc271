//! The optional result file the work must write. Only a file written (or
//! changed) after launch counts, so a stale one from an earlier run never
//! completes a session.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// Largest result file read into the session result.
const RESULT_MAX: u64 = 1 << 20;

pub struct ResultFile {
    path: PathBuf,
    before: Option<(SystemTime, u64)>,
}

fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

impl ResultFile {
    /// Remembers what the file looked like before the session started.
    pub fn before_launch(path: PathBuf) -> ResultFile {
        let before = stamp(&path);
        ResultFile { path, before }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's contents if it was written since launch: JSON when it
    /// parses, else text (capped).
    pub fn read(&self) -> Option<serde_json::Value> {
        let now = stamp(&self.path)?;
        if Some(now) == self.before || now.1 == 0 {
            return None;
        }
        use std::io::Read;
        let mut text = String::new();
        std::fs::File::open(&self.path)
            .ok()?
            .take(RESULT_MAX)
            .read_to_string(&mut text)
            .ok()?;
        Some(serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)))
    }

    /// Polls for the file for up to `wait`.
    pub fn wait(
        &self,
        wait: Duration,
        mut still_alive: impl FnMut() -> bool,
    ) -> Option<serde_json::Value> {
        let until = Instant::now() + wait;
        loop {
            if let Some(found) = self.read() {
                return Some(found);
            }
            if Instant::now() >= until || !still_alive() {
                return self.read();
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}
