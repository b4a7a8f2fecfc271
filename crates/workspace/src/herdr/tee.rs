//! Copying a pane's output into its log (herdr has no `pipe-pane`): a
//! thread per pane reads the recent lines and appends only the new ones.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::Herdr;
use crate::Pane;

/// How often a pane's recent output is copied into its log.
const TEE_EVERY: Duration = Duration::from_millis(250);
/// Lines of recent output each copy looks at.
const TEE_LINES: u32 = 400;

impl Herdr {
    /// Copies the pane's recent output into `log` for as long as this client
    /// lives (herdr has no `pipe-pane`).
    pub(super) fn tee(&self, pane: &Pane, log: &Path) {
        let tee = Arc::new(Tee {
            client: Herdr::at(self.socket.clone(), self.bound),
            pane: pane.clone(),
            log: log.to_path_buf(),
            stop: AtomicBool::new(false),
            seen: Mutex::new((None, Vec::new())),
        });
        self.tees
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Arc::clone(&tee));
        std::thread::spawn(move || {
            while !tee.stop.load(Ordering::Relaxed) {
                if tee.copy().is_err() {
                    return;
                }
                std::thread::sleep(TEE_EVERY);
            }
        });
    }
}

/// One pane's output copier: what it read last, so each copy appends only
/// the lines that appeared since.
pub(super) struct Tee {
    client: Herdr,
    pub(super) pane: Pane,
    log: PathBuf,
    pub(super) stop: AtomicBool,
    /// The revision and the lines of the last read.
    seen: Mutex<(Option<Value>, Vec<String>)>,
}

impl Tee {
    /// Appends what is new; `Err` once the pane is gone.
    pub(super) fn copy(&self) -> Result<(), ()> {
        let read = match self.client.call(
            "pane.read",
            json!({"pane_id": self.pane.pane, "source": "recent_unwrapped", "lines": TEE_LINES, "strip_ansi": true}),
        ) {
            Ok(read) => read,
            Err(e) if e.is_not_found() => return Err(()),
            Err(_) => return Ok(()),
        };
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let revision = read.pointer("/read/revision").cloned();
        if revision.is_some() && revision == seen.0 {
            return Ok(());
        }
        let lines: Vec<String> = read
            .pointer("/read/text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        let fresh = appended(&seen.1, &lines);
        if !fresh.is_empty() {
            let mut text = fresh.join("\n");
            text.push('\n');
            let _ = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&self.log)
                .and_then(|mut f| f.write_all(text.as_bytes()));
        }
        *seen = (revision, lines);
        Ok(())
    }
}

/// The lines of `now` that were not in `before`: `now` minus the longest
/// prefix of it that ends `before` (scrollback moves up as output arrives).
fn appended<'a>(before: &[String], now: &'a [String]) -> &'a [String] {
    for overlap in (1..=before.len().min(now.len())).rev() {
        if before[before.len() - overlap..] == now[..overlap] {
            return &now[overlap..];
        }
    }
    now
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn only_lines_past_the_overlap_are_appended() {
        assert_eq!(
            appended(&lines("a\nb\nc"), &lines("b\nc\nd\ne")),
            lines("d\ne")
        );
        assert_eq!(appended(&[], &lines("a")), lines("a"));
        assert!(appended(&lines("a\nb"), &lines("a\nb")).is_empty());
        // No overlap: everything is new (more scrolled past than was read).
        assert_eq!(appended(&lines("a"), &lines("x\ny")), lines("x\ny"));
    }
}
