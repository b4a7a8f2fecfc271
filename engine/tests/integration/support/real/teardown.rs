//! What a tree leaves running, and its teardown: every process that still
//! carries this tree's `HOME`, the tmux server, then the tree itself.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::Real;

impl Real {
    /// Processes (not this one) whose environment carries this tree's HOME.
    pub fn processes(&self) -> Vec<(i32, String)> {
        let needle = format!("HOME={}", self.home.display());
        let me = std::process::id() as i32;
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
        {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<i32>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            if environ
                .split(|b| *b == 0)
                .any(|var| var == needle.as_bytes())
            {
                let cmdline = std::fs::read(entry.path().join("cmdline"))
                    .map(|c| {
                        String::from_utf8_lossy(&c)
                            .replace('\0', " ")
                            .trim()
                            .to_string()
                    })
                    .unwrap_or_default();
                found.push((pid, cmdline));
            }
        }
        found
    }

    /// Processes of this tree that are the CLI itself or a daemon it left.
    pub fn cli_leftovers(&self) -> Vec<(i32, String)> {
        let cli = self.bins.cli.display().to_string();
        self.processes()
            .into_iter()
            .filter(|(_, cmd)| {
                cmd.contains(&cli)
                    || cmd.contains("app-server")
                    || cmd.contains("node_modules")
                    || cmd.split_whitespace().next().is_some_and(|argv0| {
                        Path::new(argv0).file_name().and_then(|n| n.to_str()) == Some(self.cli)
                    })
            })
            .collect()
    }
}

impl Drop for Real {
    fn drop(&mut self) {
        let socket = self.socket();
        let _ = Command::new("tmux")
            .args(["-L", &socket, "kill-server"])
            .output();
        // Whatever still runs with this HOME was started for this tree.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let left = self.processes();
            if left.is_empty() || Instant::now() >= deadline {
                break;
            }
            for (pid, _) in &left {
                // SAFETY: plain kill(2) on a pid whose environment names our tree.
                unsafe {
                    libc::kill(*pid, libc::SIGKILL);
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // Codex creates /tmp/codex-daemon-<uid> and opencode /tmp/opencode
        // whatever TMPDIR says; both are shared names, so only empty ones go.
        // SAFETY: getuid(2) cannot fail.
        let uid = unsafe { libc::getuid() };
        let _ = std::fs::remove_dir(format!("/tmp/codex-daemon-{uid}"));
        let _ = std::fs::remove_dir("/tmp/opencode");
        // tmux keeps its sockets in $TMUX_TMPDIR (not TMPDIR), /tmp by default.
        let tmux_dir = std::env::var_os("TMUX_TMPDIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        let _ = std::fs::remove_file(tmux_dir.join(format!("tmux-{uid}")).join(&socket));
    }
}
