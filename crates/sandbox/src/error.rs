//! Errors from the sandbox. Each names the component and, for calls, the
//! export; limits say which one tripped; traps carry the root cause and the
//! tail of the guest's stderr, where panic messages land.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot create the wasm engine: {0}")]
    Engine(String),

    #[error("component {component}: cannot compile: {reason}")]
    Compile { component: String, reason: String },

    #[error("component {component}: cannot link: {reason}")]
    Link { component: String, reason: String },

    #[error(
        "component {component}: cannot instantiate: {reason}{}",
        stderr_suffix(stderr)
    )]
    Instantiate {
        component: String,
        reason: String,
        stderr: String,
    },

    #[error(
        "component {component}: {export} exceeded its {limit}{}",
        stderr_suffix(stderr)
    )]
    Limit {
        component: String,
        export: String,
        limit: Limit,
        stderr: String,
    },

    #[error(
        "component {component}: {export} trapped: {reason}{}",
        stderr_suffix(stderr)
    )]
    Trap {
        component: String,
        export: String,
        reason: String,
        stderr: String,
    },

    #[error(
        "component {component} targets drover:adapter@{found}; this drover hosts drover:adapter {supported}"
    )]
    Incompatible {
        component: String,
        found: String,
        supported: String,
    },

    #[error(
        "component {component} says it was built against drover:adapter@{claimed} but exports drover:adapter/cli {exported}"
    )]
    VersionMismatch {
        component: String,
        claimed: String,
        exported: String,
    },

    #[error("cannot read component {path}: {reason}")]
    Read { path: PathBuf, reason: String },

    #[error(
        "component {component}: {export} returned {what} of {size}; drover does not act on an answer that large"
    )]
    Oversized {
        component: String,
        export: String,
        what: String,
        size: String,
    },
}

/// Which bound a call ran into.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    Time(Duration),
    Memory(usize),
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Limit::Time(d) => write!(f, "time limit of {} ms", d.as_millis()),
            Limit::Memory(bytes) => write!(f, "memory limit of {} MiB", bytes >> 20),
        }
    }
}

fn stderr_suffix(stderr: &str) -> String {
    let trimmed = stderr.trim();
    if trimmed.is_empty() {
        String::new()
    } else {
        format!("\n  guest stderr: {}", trimmed.replace('\n', "\n    "))
    }
}

impl SandboxError {
    /// The guest's panic message, when its stderr holds one.
    pub fn panic_message(&self) -> Option<&str> {
        let stderr = match self {
            SandboxError::Trap { stderr, .. } | SandboxError::Limit { stderr, .. } => stderr,
            _ => return None,
        };
        stderr
            .lines()
            .position(|l| l.contains("panicked at"))
            .and_then(|at| {
                stderr
                    .lines()
                    .nth(at + 1)
                    .or_else(|| stderr.lines().nth(at))
            })
    }

    pub fn limit(&self) -> Option<Limit> {
        match self {
            SandboxError::Limit { limit, .. } => Some(*limit),
            _ => None,
        }
    }
}
