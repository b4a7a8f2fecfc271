//! The acp backend: a CLI's Agent Client Protocol mode (`gemini --acp`,
//! `opencode acp`, …) as a long-lived child process in its own process
//! group, spoken to over its stdin and stdout. Its stderr is appended to a
//! file (the evidence a crash is classified from); the protocol traffic can
//! be copied to another.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use super::process::{self, Identity};
use super::{AgentRunner, CliCommand, WorkspaceError, WorkspaceKind};
use drover_acp::rpc::Connection;
use drover_gate::Cleared;

/// What to start.
pub struct AgentLaunch<'a> {
    pub command: &'a Cleared<CliCommand>,
    pub cwd: &'a Path,
    /// Appended to, so every agent of a seat lands in the same file.
    pub stderr: PathBuf,
    /// Where the protocol traffic is copied (`-> ` sent, `<- ` received).
    pub traffic: Option<PathBuf>,
}

/// A running agent process. Its stdio belongs to the [`Connection`]
/// returned with it.
pub struct AgentProcess {
    child: Child,
    pub identity: Option<Identity>,
    /// Where this agent's stderr starts in the (shared, appended) file.
    pub stderr_offset: u64,
}

/// Starts the agent and connects to its stdio.
pub fn start(launch: &AgentLaunch<'_>) -> Result<(AgentProcess, Connection), String> {
    let (program, args) = super::spawnable(launch.command)?;
    let stderr = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&launch.stderr)
        .map_err(|e| format!("cannot open {}: {e}", launch.stderr.display()))?;
    let stderr_offset = stderr.metadata().map(|m| m.len()).unwrap_or(0);
    let mut child = Command::new(program)
        .args(args)
        .current_dir(launch.cwd)
        .envs(launch.command.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        // Its own process group, so the whole tree can be stopped.
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(format!("cannot connect to {program}'s stdio"));
    };
    let identity = process::identity(child.id());
    let connection = Connection::new(stdout, stdin, launch.traffic.clone());
    Ok((
        AgentProcess {
            child,
            identity,
            stderr_offset,
        },
        connection,
    ))
}

impl AgentProcess {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Closes the agent's stdio (dropping `connection`: an ACP agent exits
    /// at the end of its input), waits up to `grace` (at most 5 s) for its
    /// process tree to end, then kills what is left of the tree recorded
    /// before — only processes that are still the ones started.
    pub fn stop<T>(&mut self, connection: T, grace: Duration) {
        // The agent was started by this drover.
        let tree = self
            .identity
            .and_then(|id| {
                process::clear_signal("the agent", id, drover_gate::Provenance::Created).ok()
            })
            .map(|root| process::cleared_tree(&root))
            .unwrap_or_default();
        drop(connection);
        let child = std::sync::Mutex::new(&mut self.child);
        let exited = || {
            let mut child = child.lock().unwrap_or_else(|p| p.into_inner());
            matches!(child.try_wait(), Ok(Some(_)))
        };
        process::reap_tree(&tree, grace.min(Duration::from_secs(5)), exited);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `agent.start` only: an ACP seat is a process speaking a protocol, not a
/// pane, and runs no turn processes.
pub struct Acp;

impl AgentRunner for Acp {
    fn kind(&self) -> WorkspaceKind {
        WorkspaceKind::Acp
    }

    fn start_agent(
        &self,
        launch: &AgentLaunch<'_>,
    ) -> Result<(AgentProcess, drover_acp::rpc::Connection), WorkspaceError> {
        start(launch).map_err(WorkspaceError::Process)
    }
}
