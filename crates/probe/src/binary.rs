//! Running the CLI's `--version` and `--help`: the only processes scan mode
//! starts. Each gets a deadline, a closed stdin and bounded output capture,
//! and is killed when it overstays (a CLI that opens an interactive first-run
//! screen instead of printing help must not hang the probe).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Bytes kept from each of stdout and stderr.
const MAX_CAPTURE: usize = 1 << 20;

/// What one run printed (stdout then stderr), or why it printed nothing.
#[derive(Debug)]
pub enum Run {
    Printed {
        text: String,
        exit_code: Option<i32>,
    },
    TimedOut {
        text: String,
    },
    Failed(std::io::Error),
}

impl Run {
    pub fn text(&self) -> Option<&str> {
        match self {
            Run::Printed { text, .. } | Run::TimedOut { text } => Some(text),
            Run::Failed(_) => None,
        }
    }
}

/// The binary on PATH (or the path given).
pub fn locate(binary: &str) -> Option<PathBuf> {
    which::which(binary).ok()
}

/// Runs `<path> <args…>` with a deadline and returns what it printed.
pub fn run(path: &Path, args: &[&str], timeout: Duration) -> Run {
    let child = Command::new(path)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return Run::Failed(e),
    };
    let readers: Vec<_> = [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    .map(|stream| std::thread::spawn(move || capture(stream)))
    .collect();
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Run::Failed(e),
        }
    };
    // A grandchild holding the pipes open must not keep us waiting: the
    // readers are abandoned after a short grace.
    let grace = Instant::now() + Duration::from_millis(500);
    let mut text = String::new();
    for reader in readers {
        while !reader.is_finished() && Instant::now() < grace {
            std::thread::sleep(Duration::from_millis(10));
        }
        if reader.is_finished()
            && let Ok(bytes) = reader.join()
        {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    match status {
        Some(status) => Run::Printed {
            text,
            exit_code: status.code(),
        },
        None => Run::TimedOut { text },
    }
}

fn capture(mut stream: Box<dyn Read + Send>) -> Vec<u8> {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_CAPTURE.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    kept
}
