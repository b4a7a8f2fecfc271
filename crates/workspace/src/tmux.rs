//! The tmux backend: seats live in panes a human can attach to.
//!
//! Every call goes through `tmux -L <socket>`, a private server per drover
//! project, and is bounded by a timeout. Failures are typed [`MuxError`]s; a
//! caller must never read one as "the pane died" (liveness is answered by
//! pane membership, and "could not ask" is a distinct answer).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{
    CliCommand, Pane, PaneBackend, PaneLaunch, WorkspaceError, WorkspaceKind, process, screen_of,
};
use drover_gate::{Cleared, Effect};
use drover_types::wit;
use sha2::{Digest, Sha256};
use wait_timeout::ChildExt;

/// Every tmux call is bounded by this.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
pub const COLUMNS: u16 = 220;
/// How long `type_text` waits for a paste to show on screen before it
/// submits anyway.
pub const PASTE_SHOWN: Duration = Duration::from_secs(2);
/// The pause between a paste showing and the submitting Enter.
pub const PASTE_SETTLE: Duration = Duration::from_millis(150);
pub const ROWS: u16 = 50;

#[derive(Debug, thiserror::Error)]
pub enum MuxError {
    #[error("tmux is not installed (not on PATH)")]
    Missing,
    #[error("tmux {args} failed: {message}")]
    Failed { args: String, message: String },
    #[error("tmux {args} did not answer within {secs} s")]
    Timeout { args: String, secs: u64 },
}

#[derive(Debug, Clone)]
pub struct Tmux {
    binary: PathBuf,
    socket: String,
}

/// The socket name for a project: stable, and distinct per project path.
pub fn socket_for(project: &Path) -> String {
    let canonical = project
        .canonicalize()
        .unwrap_or_else(|_| project.to_path_buf());
    let digest = Sha256::digest(canonical.to_string_lossy().as_bytes());
    format!("drover-{}", drover_types::text::hex(&digest[..6]))
}

/// The pane session a run's panes live in (tmux and herdr alike).
pub fn session_name(run_id: &str) -> String {
    format!("drover-{run_id}")
}

impl Tmux {
    pub fn for_project(project: &Path) -> Result<Tmux, MuxError> {
        let binary = which::which("tmux").map_err(|_| MuxError::Missing)?;
        Ok(Tmux {
            binary,
            socket: socket_for(project),
        })
    }

    pub fn socket(&self) -> &str {
        &self.socket
    }

    /// `tmux -V`, folded to one line.
    pub fn version() -> Option<String> {
        let out = Command::new("tmux").arg("-V").output().ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        (!line.is_empty()).then_some(line)
    }

    fn run(&self, args: &[&str], stdin: Option<&[u8]>) -> Result<String, MuxError> {
        self.run_within(args, stdin, CALL_TIMEOUT)
    }

    fn run_within(
        &self,
        args: &[&str],
        stdin: Option<&[u8]>,
        bound: Duration,
    ) -> Result<String, MuxError> {
        let label = args.first().copied().unwrap_or_default().to_string();
        let mut command = Command::new(&self.binary);
        command
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|e| MuxError::Failed {
            args: label.clone(),
            message: e.to_string(),
        })?;
        if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
            let _ = pipe.write_all(bytes);
        }
        // Read both pipes on threads so a chatty tmux cannot block on a full pipe.
        let stdout = child.stdout.take().map(read_on_thread);
        let stderr = child.stderr.take().map(read_on_thread);
        let status = match child.wait_timeout(bound) {
            Ok(Some(status)) => status,
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(MuxError::Timeout {
                    args: label,
                    secs: bound.as_secs(),
                });
            }
            Err(e) => {
                return Err(MuxError::Failed {
                    args: label,
                    message: e.to_string(),
                });
            }
        };
        let out = stdout.and_then(|h| h.join().ok()).unwrap_or_default();
        let err = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
        if !status.success() {
            return Err(MuxError::Failed {
                args: label,
                message: String::from_utf8_lossy(&err).trim().to_string(),
            });
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    pub fn has_session(&self, session: &str) -> Result<bool, MuxError> {
        match self.run(&["has-session", "-t", &format!("={session}")], None) {
            Ok(_) => Ok(true),
            Err(MuxError::Failed { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// A detached session with one idle shell window, sized for agents.
    pub fn new_session(&self, session: &str, cwd: &Path) -> Result<(), MuxError> {
        let cwd = cwd.to_string_lossy();
        let (cols, rows) = (COLUMNS.to_string(), ROWS.to_string());
        self.run(
            &[
                "new-session",
                "-d",
                "-s",
                session,
                "-x",
                &cols,
                "-y",
                &rows,
                "-c",
                &cwd,
            ],
            None,
        )?;
        // Keep new windows at the agent size even with no client attached.
        let size = format!("{COLUMNS}x{ROWS}");
        let _ = self.run(
            &[
                "set-option",
                "-t",
                &format!("={session}"),
                "default-size",
                &size,
            ],
            None,
        );
        Ok(())
    }

    /// Runs the command in a new window (exec'd directly, no shell parsing).
    fn new_window(
        &self,
        session: &str,
        name: &str,
        cwd: &Path,
        command: &Cleared<CliCommand>,
    ) -> Result<Pane, WorkspaceError> {
        let (program, rest) = super::spawnable(command).map_err(WorkspaceError::Process)?;
        let env = &command.env;
        let cwd = cwd.to_string_lossy().into_owned();
        let target = format!("={session}:");
        let mut args: Vec<String> = vec![
            "new-window".into(),
            "-d".into(),
            "-t".into(),
            target,
            "-n".into(),
            name.to_string(),
            "-c".into(),
            cwd,
            "-P".into(),
            "-F".into(),
            "#{window_id} #{pane_id}".into(),
        ];
        for (key, value) in env {
            args.push("-e".into());
            args.push(format!("{key}={value}"));
        }
        // `sh -c 'exec "$@"' seat ARGV…` always passes tmux several words, so
        // tmux execs without reparsing, and the pane's process is the CLI.
        args.extend([
            "sh".into(),
            "-c".into(),
            "exec \"$@\"".into(),
            "drover-seat".into(),
        ]);
        args.push(program.clone());
        args.extend(rest.iter().cloned());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = self.run(&refs, None)?;
        let mut ids = out.split_whitespace();
        match (ids.next(), ids.next()) {
            (Some(window), Some(pane)) => Ok(Pane {
                session: session.to_string(),
                window: window.to_string(),
                pane: pane.to_string(),
            }),
            _ => Err(MuxError::Failed {
                args: "new-window".into(),
                message: format!("unexpected reply {out:?}"),
            }
            .into()),
        }
    }

    /// Tees the pane's output to `log` (appending).
    pub fn pipe_pane(&self, pane: &Pane, log: &Path) -> Result<(), MuxError> {
        let command = format!("cat >> {}", crate::shell_quote(&log.to_string_lossy()));
        self.run(&["pipe-pane", "-o", "-t", &pane.pane, &command], None)
            .map(|_| ())
    }

    /// Names the window and titles the pane (`nickname · role`).
    pub fn label(&self, pane: &Pane, label: &str) -> Result<(), MuxError> {
        self.run(&["rename-window", "-t", &pane.window, label], None)?;
        self.run(&["select-pane", "-t", &pane.pane, "-T", label], None)
            .map(|_| ())
    }

    /// Pastes `text` as one bracketed paste, returning once the TUI shows
    /// it, plus a moment.
    pub fn paste(&self, pane: &Pane, text: &str) -> Result<(), MuxError> {
        let buffer = format!("drover-{}", pane.pane.trim_start_matches('%'));
        let before = self.capture(pane).ok();
        self.run(&["load-buffer", "-b", &buffer, "-"], Some(text.as_bytes()))?;
        self.run(
            &["paste-buffer", "-p", "-d", "-b", &buffer, "-t", &pane.pane],
            None,
        )?;
        // Submit only after the TUI has taken the paste (its screen changed),
        // plus a moment: some treat an Enter that arrives with or just after
        // a paste as part of it (Gemini CLI turns an Enter within 40 ms of a
        // paste into a newline), and a busy TUI takes a paste late. Polled
        // with a bound, so a screen that shows no change costs PASTE_SHOWN.
        let shown_by = std::time::Instant::now() + PASTE_SHOWN;
        while let Some(before) = &before {
            match self.capture(pane) {
                Ok(now) if &now == before && std::time::Instant::now() < shown_by => {
                    std::thread::sleep(Duration::from_millis(25));
                }
                _ => break,
            }
        }
        std::thread::sleep(PASTE_SETTLE);
        Ok(())
    }

    /// Presses Enter: submits what was pasted.
    pub fn enter(&self, pane: &Pane) -> Result<(), MuxError> {
        self.run(&["send-keys", "-t", &pane.pane, "Enter"], None)
            .map(|_| ())
    }

    /// Sends keys by name (e.g. `Escape`, `1`).
    pub fn send_keys(&self, pane: &Pane, keys: &[&str]) -> Result<(), MuxError> {
        let mut args = vec!["send-keys", "-t", pane.pane.as_str()];
        args.extend_from_slice(keys);
        self.run(&args, None).map(|_| ())
    }

    /// Whether the pane is in a mode (copy mode, where typed keys move a
    /// cursor over the scrollback instead of reaching the CLI).
    pub fn in_mode(&self, pane: &Pane) -> Result<bool, MuxError> {
        self.run(
            &["display-message", "-p", "-t", &pane.pane, "#{pane_in_mode}"],
            None,
        )
        .map(|flag| flag.trim() == "1")
    }

    /// Leaves the pane's mode, and its selection with it.
    pub fn cancel_mode(&self, pane: &Pane) -> Result<(), MuxError> {
        self.run(&["send-keys", "-t", &pane.pane, "-X", "cancel"], None)
            .map(|_| ())
    }

    /// The visible pane text.
    pub fn capture(&self, pane: &Pane) -> Result<String, MuxError> {
        self.run(&["capture-pane", "-p", "-t", &pane.pane], None)
    }

    pub fn title(&self, pane: &Pane) -> Result<String, MuxError> {
        self.run(
            &["display-message", "-p", "-t", &pane.pane, "#{pane_title}"],
            None,
        )
        .map(|t| t.trim_end().to_string())
    }

    /// The (window, pane) ids in the session; empty when the session is
    /// gone. A transport failure is an error, never "no panes".
    pub fn panes(&self, session: &str) -> Result<Vec<(String, String)>, MuxError> {
        if !self.has_session(session)? {
            return Ok(Vec::new());
        }
        match self.run(
            &[
                "list-panes",
                "-s",
                "-t",
                &format!("={session}"),
                "-F",
                "#{window_id} #{pane_id}",
            ],
            None,
        ) {
            Ok(out) => Ok(out
                .lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(w, p)| (w.to_string(), p.trim().to_string()))
                .collect()),
            Err(MuxError::Failed { .. }) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// Whether the pane still exists with its whole identity: this pane,
    /// in this window, in this session (membership, not display-message,
    /// which answers for dead panes too). Pane ids are small numbers a
    /// record can name; a pane of another session or window is not it.
    pub fn alive(&self, pane: &Pane) -> Result<bool, MuxError> {
        Ok(self
            .panes(&pane.session)?
            .iter()
            .any(|(window, id)| *window == pane.window && *id == pane.pane))
    }

    pub fn pane_pid(&self, pane: &Pane) -> Option<u32> {
        self.run(
            &["display-message", "-p", "-t", &pane.pane, "#{pane_pid}"],
            None,
        )
        .ok()
        .and_then(|s| s.trim().parse().ok())
    }

    fn kill_window(&self, pane: &Pane) {
        let _ = self.run(&["kill-window", "-t", &pane.window], None);
    }

    fn kill_session(&self, session: &str) {
        let _ = self.run(&["kill-session", "-t", &format!("={session}")], None);
    }

    /// Sessions on this project's server; empty when no server runs.
    pub fn sessions(&self) -> Result<Vec<String>, MuxError> {
        match self.run(&["list-sessions", "-F", "#{session_name}"], None) {
            Ok(out) => Ok(out.lines().map(str::to_string).collect()),
            Err(MuxError::Failed { .. }) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// Shows `text` to the clients attached to `session` (the `tmux`
    /// notifier), giving up after `bound`. `Ok(false)`: nobody is attached.
    pub fn display_message(
        &self,
        session: &str,
        text: &str,
        bound: Duration,
    ) -> Result<bool, MuxError> {
        let clients = self.run_within(
            &[
                "list-clients",
                "-t",
                &format!("={session}"),
                "-F",
                "#{client_name}",
            ],
            None,
            bound,
        )?;
        // The message is a tmux format: a `#` would expand (`#(cmd)` runs one).
        let literal = text.replace('#', "##");
        let mut shown = false;
        for client in clients.lines().filter(|c| !c.is_empty()) {
            self.run_within(
                &["display-message", "-c", client, "-d", "10000", &literal],
                None,
                bound,
            )?;
            shown = true;
        }
        Ok(shown)
    }

    /// Ends this project's tmux server (tests, and `drover down --all`).
    pub fn kill_server(&self) {
        let _ = self.run(&["kill-server"], None);
    }

    /// The argv that attaches a terminal to a pane's window.
    pub fn attach_argv(&self, pane: &Pane) -> Vec<String> {
        let inside = std::env::var_os("TMUX").is_some();
        let verb = if inside {
            "switch-client"
        } else {
            "attach-session"
        };
        vec![
            "tmux".into(),
            "-L".into(),
            self.socket.clone(),
            verb.into(),
            "-t".into(),
            pane.window.clone(),
        ]
    }
}

fn read_on_thread<R: std::io::Read + Send + 'static>(
    mut reader: R,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = reader.read_to_end(&mut buf);
        buf
    })
}

impl PaneBackend for Tmux {
    fn kind(&self) -> WorkspaceKind {
        WorkspaceKind::Tmux
    }

    fn ensure_session(&self, session: &str, cwd: &Path) -> Result<(), WorkspaceError> {
        if !self.has_session(session)? {
            self.new_session(session, cwd)?;
        }
        Ok(())
    }

    fn create_pane(
        &self,
        session: &str,
        name: &str,
        launch: &PaneLaunch<'_>,
    ) -> Result<Pane, WorkspaceError> {
        let pane = self.new_window(session, name, launch.cwd, launch.command)?;
        if let Err(e) = self.pipe_pane(&pane, launch.log) {
            // A pane that died at once cannot be teed; its log stays empty,
            // which reads as "rendered nothing".
            tracing::debug!("pipe-pane failed: {e}");
        }
        Ok(pane)
    }

    fn read_pane(&self, pane: &Pane) -> Result<wit::Screen, WorkspaceError> {
        let text = self.capture(pane)?;
        let title = self.title(pane).unwrap_or_default();
        Ok(screen_of(text.as_bytes(), &title))
    }

    fn label_pane(&self, pane: &Pane, label: &str) -> Result<(), WorkspaceError> {
        Ok(self.label(pane, label)?)
    }

    fn paste_text(&self, pane: &Pane, text: &str, human: bool) -> Result<(), WorkspaceError> {
        if human {
            return Err(WorkspaceError::HumanSeat);
        }
        Ok(self.paste(pane, text)?)
    }

    fn submit(&self, pane: &Pane, human: bool) -> Result<(), WorkspaceError> {
        if human {
            return Err(WorkspaceError::HumanSeat);
        }
        Ok(self.enter(pane)?)
    }

    fn press_keys(
        &self,
        pane: &Pane,
        keys: &[crate::Key],
        human: bool,
    ) -> Result<(), WorkspaceError> {
        if human {
            return Err(WorkspaceError::HumanSeat);
        }
        Ok(crate::keys::press_one_at_a_time(
            keys,
            |key| self.send_keys(pane, &[key.tmux().as_str()]),
            || self.capture(pane).ok(),
        )?)
    }

    fn pane_in_mode(&self, pane: &Pane) -> Result<bool, WorkspaceError> {
        Ok(self.in_mode(pane)?)
    }

    fn cancel_mode(&self, pane: &Pane, human: bool) -> Result<(), WorkspaceError> {
        if human {
            return Err(WorkspaceError::HumanSeat);
        }
        Ok(Tmux::cancel_mode(self, pane)?)
    }

    fn clear_input(&self, pane: &Pane, times: usize, human: bool) -> Result<(), WorkspaceError> {
        if human {
            return Err(WorkspaceError::HumanSeat);
        }
        let mut args = vec!["send-keys", "-t", pane.pane.as_str()];
        args.extend(std::iter::repeat_n("C-u", times.max(1)));
        Ok(self.run(&args, None).map(|_| ())?)
    }

    fn pane_alive(&self, pane: &Pane) -> Result<bool, WorkspaceError> {
        Ok(self.alive(pane)?)
    }

    /// Records the pane's process tree first, kills the window, waits, then
    /// force-kills only processes whose start time still matches. Nothing
    /// happens unless the pane is there with its whole identity.
    fn close_pane(&self, pane: &Cleared<Pane>, grace: std::time::Duration) -> Vec<u32> {
        if pane.effect() != Effect::ClosePane || !matches!(self.alive(pane), Ok(true)) {
            return Vec::new();
        }
        let tree = process::pane_tree(self.pane_pid(pane), pane.from());
        self.kill_window(pane);
        let forced = process::reap_tree(&tree, grace, || matches!(self.alive(pane), Ok(false)));
        if matches!(self.alive(pane), Ok(true)) {
            self.kill_window(pane);
        }
        forced
    }

    /// Kills the session; the server exits with its last session.
    fn close_session(&self, session: &Cleared<String>) {
        if session.effect() == Effect::ClosePane {
            self.kill_session(session);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ends the test's tmux server however the test ends.
    struct Server(Tmux);

    impl Drop for Server {
        fn drop(&mut self) {
            self.0.kill_server();
        }
    }

    /// A pane id is a small number any file can name: closing checks the
    /// whole identity (session, window, pane), so a pane of another session
    /// is never closed, even when the request itself was cleared.
    #[test]
    fn a_pane_is_closed_only_with_its_whole_identity() {
        let binary = which::which("tmux").expect("tmux is installed (scripts/test.sh installs it)");
        let tmux = Tmux {
            binary,
            socket: format!("drover-unit-{}", std::process::id()),
        };
        let server = Server(tmux.clone());
        let cwd = std::env::temp_dir();
        tmux.new_session("mine", &cwd).expect("session");
        tmux.new_session("drover-run", &cwd).expect("session");
        let sleep = drover_gate::clear(
            Effect::Spawn,
            "a test's command",
            drover_gate::Sourced::new(
                CliCommand {
                    argv: vec!["sleep".into(), "300".into()],
                    env: Vec::new(),
                    stdin: None,
                },
                drover_gate::Provenance::Builtin,
            ),
        )
        .expect("cleared");
        let users = tmux.new_window("mine", "w", &cwd, &sleep).expect("window");
        let elsewhere = Pane {
            session: "drover-run".to_string(),
            ..users.clone()
        };
        assert!(!tmux.alive(&elsewhere).expect("asked"));
        let cleared =
            crate::clear_pane(&elsewhere, drover_gate::Provenance::Created).expect("cleared");
        assert!(tmux.close_pane(&cleared, Duration::from_secs(1)).is_empty());
        assert!(
            tmux.alive(&users).expect("asked"),
            "another session's pane was closed"
        );

        let own = crate::clear_pane(&users, drover_gate::Provenance::Created).expect("cleared");
        tmux.close_pane(&own, Duration::from_secs(5));
        assert!(!tmux.alive(&users).expect("asked"));
        drop(server);
    }

    /// A delivery retry's steps: copy mode is seen and left, and Ctrl-U
    /// clears what a paste left in a cooked terminal's line, so the line
    /// submitted after it is the retyped one alone.
    #[test]
    fn copy_mode_is_seen_and_left_and_the_input_line_cleared() {
        let binary = which::which("tmux").expect("tmux is installed (scripts/test.sh installs it)");
        let tmux = Tmux {
            binary,
            socket: format!("drover-unit-mode-{}", std::process::id()),
        };
        let server = Server(tmux.clone());
        let cwd = std::env::temp_dir();
        tmux.new_session("s", &cwd).expect("session");
        let reader = drover_gate::clear(
            Effect::Spawn,
            "a test's command",
            drover_gate::Sourced::new(
                CliCommand {
                    argv: vec![
                        "sh".into(),
                        "-c".into(),
                        "read -r line; echo \"GOT:$line\"; sleep 300".into(),
                    ],
                    env: Vec::new(),
                    stdin: None,
                },
                drover_gate::Provenance::Builtin,
            ),
        )
        .expect("cleared");
        let pane = tmux.new_window("s", "w", &cwd, &reader).expect("window");
        assert!(!tmux.in_mode(&pane).expect("asked"));
        tmux.run(&["copy-mode", "-t", &pane.pane], None)
            .expect("copy mode");
        assert!(tmux.in_mode(&pane).expect("asked"));
        // In copy mode the paste reaches the terminal; the Enter does not.
        tmux.paste(&pane, "lost").expect("paste");
        tmux.enter(&pane).expect("enter");
        assert!(tmux.in_mode(&pane).expect("asked"), "Enter left copy mode");
        PaneBackend::cancel_mode(&tmux, &pane, false).expect("cancel");
        assert!(!tmux.in_mode(&pane).expect("asked"));
        PaneBackend::clear_input(&tmux, &pane, 1, false).expect("clear");
        tmux.paste(&pane, "kept").expect("paste");
        tmux.enter(&pane).expect("enter");
        let by = std::time::Instant::now() + Duration::from_secs(10);
        let mut screen = String::new();
        while std::time::Instant::now() < by {
            screen = tmux.capture(&pane).unwrap_or_default();
            if screen.contains("GOT:") {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(screen.contains("GOT:kept\n"), "{screen}");
        assert!(!screen.contains("GOT:lostkept"), "{screen}");
        // A person's seat is never touched.
        assert!(matches!(
            PaneBackend::clear_input(&tmux, &pane, 1, true),
            Err(WorkspaceError::HumanSeat)
        ));
        assert!(matches!(
            PaneBackend::cancel_mode(&tmux, &pane, true),
            Err(WorkspaceError::HumanSeat)
        ));
        drop(server);
    }
}
