//! The headless backend: `turn.run` — one non-interactive process per
//! message, in its own process group, with stdout and stderr going to files
//! (so a restarted drover can still read a turn that outlived it).

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use super::process::{self, Identity};
use super::{CliCommand, TurnRunner, WorkspaceError, WorkspaceKind};
use drover_gate::Cleared;

/// What to start.
pub struct TurnLaunch<'a> {
    pub command: &'a Cleared<CliCommand>,
    pub cwd: &'a Path,
    /// Appended to, so every turn of a seat lands in the same two files.
    pub stdout: PathBuf,
    pub stderr: PathBuf,
}

/// A running turn.
pub struct TurnProcess {
    child: Child,
    pub identity: Option<Identity>,
    /// Where this turn's output starts in the (shared, appended) files.
    pub stdout_offset: u64,
    pub stderr_offset: u64,
}

fn open_append(path: &Path) -> Result<std::fs::File, String> {
    drover_state::open_append(path).map_err(|e| format!("cannot open {}: {e}", path.display()))
}

/// Starts a turn.
pub fn start(launch: &TurnLaunch<'_>) -> Result<TurnProcess, String> {
    let (program, args) = super::spawnable(launch.command)?;
    let stdin_text = launch.command.stdin.as_deref();
    let stdout = open_append(&launch.stdout)?;
    let stderr = open_append(&launch.stderr)?;
    let stdout_offset = stdout.metadata().map(|m| m.len()).unwrap_or(0);
    let stderr_offset = stderr.metadata().map(|m| m.len()).unwrap_or(0);
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(launch.cwd)
        .envs(launch.command.env.iter().map(|(k, v)| (k, v)))
        .stdout(stdout)
        .stderr(stderr)
        .stdin(if stdin_text.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        // Its own process group, so the whole tree can be stopped.
        .process_group(0);
    let mut child = command
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    if let (Some(text), Some(mut pipe)) = (stdin_text, child.stdin.take()) {
        let _ = pipe.write_all(text.as_bytes());
    }
    let identity = process::identity(child.id());
    Ok(TurnProcess {
        child,
        identity,
        stdout_offset,
        stderr_offset,
    })
}

impl TurnProcess {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// SIGTERM to the process group, then SIGKILL after `grace` (at most
    /// 5 s) to the recorded tree — only to processes that are still the
    /// ones it started.
    pub fn stop(&mut self, grace: Duration) {
        process::stop_group(&mut self.child, self.identity, grace);
    }
}

/// `turn.run` only: a headless seat has no pane.
pub struct Headless;

impl TurnRunner for Headless {
    fn kind(&self) -> WorkspaceKind {
        WorkspaceKind::Headless
    }

    fn run_turn(&self, launch: &TurnLaunch<'_>) -> Result<TurnProcess, WorkspaceError> {
        start(launch).map_err(WorkspaceError::Process)
    }
}
