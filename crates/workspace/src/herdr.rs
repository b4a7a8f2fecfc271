//! The herdr backend: seats in panes of a running herdr server, spoken to
//! over its socket API — newline-delimited JSON requests
//! `{"id","method","params"}` on a Unix socket, answered by
//! `{"id","result"}` or `{"id","error":{"code","message"}}`.
//!
//! The mapping: a drover session is a herdr workspace (labelled with the
//! session name), a pane is a tab holding one pane that runs the CLI's argv
//! directly (`layout.apply` with a `command`), typing is `pane.send_input`
//! (herdr brackets the paste when the CLI asked for it) then an Enter key,
//! reading is `pane.read` of the visible screen. What herdr lacks next to
//! tmux, and how drover makes up for it, is written down in
//! `docs/workspaces.md`.
//!
//! Every call opens its own connection and is bounded; a failure is a typed
//! [`HerdrError`], and only herdr's own `pane_not_found` means a pane is gone.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::{Pane, PaneBackend, PaneLaunch, WorkspaceError, process};
use drover_gate::{Cleared, Effect, Provenance, Sourced};
use drover_types::wit;

/// Every herdr call is bounded by this (a notifier's is shorter).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest reply read (a full-screen read is far smaller).
const REPLY_MAX: u64 = 16 << 20;
/// How often a pane's recent output is copied into its log.
const TEE_EVERY: Duration = Duration::from_millis(250);
/// Lines of recent output each copy looks at.
const TEE_LINES: u32 = 400;

#[derive(Debug, thiserror::Error)]
pub enum HerdrError {
    #[error("herdr is not running (no server answers at {0})")]
    NotRunning(String),
    #[error("herdr {method}: {message}")]
    Transport { method: String, message: String },
    #[error("herdr {method} did not answer within {secs} s")]
    Timeout { method: String, secs: u64 },
    #[error("herdr {method} refused: {code}: {message}")]
    Api {
        method: String,
        code: String,
        message: String,
    },
    #[error("herdr {method} answered something drover does not understand: {detail}")]
    Protocol { method: String, detail: String },
    #[error(transparent)]
    Refused(#[from] drover_gate::Refused),
}

impl HerdrError {
    fn is_not_found(&self) -> bool {
        matches!(self, HerdrError::Api { code, .. } if code.ends_with("not_found"))
    }
}

/// The socket a herdr client uses: `$HERDR_SOCKET_PATH`, else the named
/// session's (`$HERDR_SESSION`), else the default one, all under herdr's
/// config directory. Only the user's environment names it (no settings
/// file does), so it is the user's.
pub fn socket_path() -> Option<Sourced<PathBuf>> {
    socket_from_env().map(|path| Sourced::new(path, Provenance::User))
}

fn socket_from_env() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(path) = var("HERDR_SOCKET_PATH") {
        return Some(PathBuf::from(path));
    }
    let config = var("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".config")))?
        .join("herdr");
    Some(match var("HERDR_SESSION") {
        Some(name) => config.join("sessions").join(name).join("herdr.sock"),
        None => config.join("herdr.sock"),
    })
}

/// A client of one herdr server.
pub struct Herdr {
    socket: Cleared<PathBuf>,
    bound: Duration,
    next_id: AtomicU64,
    /// Session name -> herdr workspace id.
    workspaces: Mutex<HashMap<String, String>>,
    /// Output copiers, stopped when the client is dropped.
    tees: Mutex<Vec<Arc<Tee>>>,
}

impl Drop for Herdr {
    fn drop(&mut self) {
        for tee in self.tees.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            tee.stop.store(true, Ordering::Relaxed);
        }
    }
}

impl Herdr {
    /// Connects to the server at [`socket_path`] and checks it answers.
    pub fn connect(bound: Duration) -> Result<Herdr, HerdrError> {
        let socket = socket_path()
            .ok_or_else(|| HerdrError::NotRunning("~/.config/herdr/herdr.sock".into()))?;
        let herdr = Herdr::at(
            drover_gate::clear(Effect::Connect, "herdr's socket", socket)?,
            bound,
        );
        herdr.ping()?;
        Ok(herdr)
    }

    /// A client of the server at `socket`, a path the gate let through.
    pub fn at(socket: Cleared<PathBuf>, bound: Duration) -> Herdr {
        Herdr {
            socket,
            bound,
            next_id: AtomicU64::new(1),
            workspaces: Mutex::new(HashMap::new()),
            tees: Mutex::new(Vec::new()),
        }
    }

    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// `herdr <version> (protocol <n>)`.
    pub fn ping(&self) -> Result<String, HerdrError> {
        let pong = self.call("ping", json!({}))?;
        Ok(format!(
            "herdr {} (protocol {})",
            pong["version"].as_str().unwrap_or("?"),
            pong["protocol"]
        ))
    }

    /// One request, one reply, on a connection of its own.
    pub fn call(&self, method: &str, params: Value) -> Result<Value, HerdrError> {
        let transport = |e: std::io::Error| {
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) {
                HerdrError::Timeout {
                    method: method.to_string(),
                    secs: self.bound.as_secs(),
                }
            } else {
                HerdrError::Transport {
                    method: method.to_string(),
                    message: e.to_string(),
                }
            }
        };
        let mut stream = UnixStream::connect(self.socket.get()).map_err(|e| {
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) {
                HerdrError::NotRunning(self.socket.display().to_string())
            } else {
                transport(e)
            }
        })?;
        stream
            .set_read_timeout(Some(self.bound))
            .map_err(transport)?;
        stream
            .set_write_timeout(Some(self.bound))
            .map_err(transport)?;
        let id = format!("drover-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let request = json!({"id": id, "method": method, "params": params});
        stream
            .write_all(format!("{request}\n").as_bytes())
            .map_err(transport)?;
        let mut reader = BufReader::new(stream.take(REPLY_MAX));
        let mut line = String::new();
        reader.read_line(&mut line).map_err(transport)?;
        if line.trim().is_empty() {
            return Err(HerdrError::Transport {
                method: method.to_string(),
                message: "the server closed the connection without answering".to_string(),
            });
        }
        let reply: Value = serde_json::from_str(&line).map_err(|e| HerdrError::Protocol {
            method: method.to_string(),
            detail: format!("not JSON ({e})"),
        })?;
        if reply["id"] != json!(id) {
            return Err(HerdrError::Protocol {
                method: method.to_string(),
                detail: format!("a reply to {} instead of {id}", reply["id"]),
            });
        }
        if let Some(error) = reply.get("error") {
            return Err(HerdrError::Api {
                method: method.to_string(),
                code: error["code"].as_str().unwrap_or("unknown").to_string(),
                message: error["message"].as_str().unwrap_or_default().to_string(),
            });
        }
        reply
            .get("result")
            .cloned()
            .ok_or_else(|| HerdrError::Protocol {
                method: method.to_string(),
                detail: "neither result nor error".to_string(),
            })
    }

    /// A field of a result, or a protocol error naming it.
    fn field<'a>(method: &str, value: &'a Value, pointer: &str) -> Result<&'a str, HerdrError> {
        value
            .pointer(pointer)
            .and_then(Value::as_str)
            .ok_or_else(|| HerdrError::Protocol {
                method: method.to_string(),
                detail: format!("no {pointer}"),
            })
    }

    fn workspace_id(&self, session: &str) -> Result<Option<String>, HerdrError> {
        if let Some(id) = self
            .workspaces
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(session)
        {
            return Ok(Some(id.clone()));
        }
        let list = self.call("workspace.list", json!({}))?;
        let found = list["workspaces"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|w| w["label"] == session)
            .and_then(|w| w["workspace_id"].as_str())
            .map(str::to_string);
        if let Some(id) = &found {
            self.workspaces
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(session.to_string(), id.clone());
        }
        Ok(found)
    }

    /// Shows a notification through herdr's configured toast delivery.
    pub fn notify(&self, title: &str, body: &str) -> Result<String, HerdrError> {
        let shown = self.call(
            "notification.show",
            json!({"title": title, "body": body, "sound": "request"}),
        )?;
        Ok(format!(
            "herdr notification: {}",
            shown["reason"].as_str().unwrap_or("shown")
        ))
    }

    /// herdr's own reading of the agent in a pane (`idle`, `working`,
    /// `blocked`, `done`, `unknown`): a second status source beside the
    /// CLI's hooks.
    pub fn agent_status(&self, pane: &Pane) -> Result<String, HerdrError> {
        let info = self.call("pane.get", json!({"pane_id": pane.pane}))?;
        Ok(Herdr::field("pane.get", &info, "/pane/agent_status")?.to_string())
    }

    fn pane_pid(&self, pane: &Pane) -> Option<u32> {
        let info = self
            .call("pane.process_info", json!({"pane_id": pane.pane}))
            .ok()?;
        info.pointer("/process_info/shell_pid")
            .and_then(Value::as_u64)
            .and_then(|p| u32::try_from(p).ok())
    }

    /// Copies the pane's recent output into `log` for as long as this client
    /// lives (herdr has no `pipe-pane`).
    fn tee(&self, pane: &Pane, log: &Path) {
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
struct Tee {
    client: Herdr,
    pane: Pane,
    log: PathBuf,
    stop: AtomicBool,
    /// The revision and the lines of the last read.
    seen: Mutex<(Option<Value>, Vec<String>)>,
}

impl Tee {
    /// Appends what is new; `Err` once the pane is gone.
    fn copy(&self) -> Result<(), ()> {
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

impl PaneBackend for Herdr {
    fn kind(&self) -> super::WorkspaceKind {
        super::WorkspaceKind::Herdr
    }

    fn ensure_session(&self, session: &str, cwd: &Path) -> Result<(), WorkspaceError> {
        if self.workspace_id(session)?.is_some() {
            return Ok(());
        }
        let created = self.call(
            "workspace.create",
            json!({"cwd": cwd, "label": session, "focus": false}),
        )?;
        let id = Herdr::field("workspace.create", &created, "/workspace/workspace_id")?;
        self.workspaces
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(session.to_string(), id.to_string());
        Ok(())
    }

    fn create_pane(
        &self,
        session: &str,
        name: &str,
        launch: &PaneLaunch<'_>,
    ) -> Result<Pane, WorkspaceError> {
        let Some(workspace) = self.workspace_id(session)? else {
            return Err(HerdrError::Api {
                method: "layout.apply".into(),
                code: "workspace_not_found".into(),
                message: format!("no workspace labelled {session}"),
            }
            .into());
        };
        let (program, rest) = super::spawnable(launch.command).map_err(WorkspaceError::Process)?;
        let argv: Vec<&String> = std::iter::once(program).chain(rest).collect();
        let env: serde_json::Map<String, Value> = launch
            .command
            .env
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        let applied = self.call(
            "layout.apply",
            json!({
                "workspace_id": workspace,
                "tab_label": name,
                "focus": false,
                "root": {"type": "pane", "label": name, "cwd": launch.cwd, "command": argv, "env": env},
            }),
        )?;
        let tab = Herdr::field("layout.apply", &applied, "/layout/tab_id")?;
        let pane = applied
            .pointer("/layout/root/pane_id")
            .or_else(|| applied.pointer("/layout/focused_pane_id"))
            .and_then(Value::as_str)
            .ok_or_else(|| HerdrError::Protocol {
                method: "layout.apply".into(),
                detail: "no pane id".into(),
            })?;
        let pane = Pane {
            session: session.to_string(),
            window: tab.to_string(),
            pane: pane.to_string(),
        };
        self.tee(&pane, launch.log);
        Ok(pane)
    }

    fn watch_output(&self, pane: &Pane, log: &Path) {
        self.tee(pane, log);
    }

    fn flush_output(&self, pane: &Pane) {
        let tees = self.tees.lock().unwrap_or_else(|p| p.into_inner()).clone();
        for tee in tees.iter().filter(|t| t.pane == *pane) {
            let _ = tee.copy();
        }
    }

    fn read_pane(&self, pane: &Pane) -> Result<wit::Screen, WorkspaceError> {
        let read = self.call(
            "pane.read",
            json!({"pane_id": pane.pane, "source": "visible", "format": "text", "strip_ansi": true}),
        )?;
        let text = Herdr::field("pane.read", &read, "/read/text")?;
        let title = self
            .call("pane.get", json!({"pane_id": pane.pane}))
            .ok()
            .and_then(|info| {
                info.pointer("/pane/terminal_title_stripped")
                    .or_else(|| info.pointer("/pane/terminal_title"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_default();
        Ok(super::screen_of(text.as_bytes(), &title))
    }

    fn label_pane(&self, pane: &Pane, label: &str) -> Result<(), WorkspaceError> {
        self.call("tab.rename", json!({"tab_id": pane.window, "label": label}))?;
        self.call("pane.rename", json!({"pane_id": pane.pane, "label": label}))?;
        Ok(())
    }

    fn type_text(&self, pane: &Pane, text: &str, human: bool) -> Result<(), WorkspaceError> {
        if human {
            return Err(WorkspaceError::HumanSeat);
        }
        let before = self.read_pane(pane).ok();
        self.call(
            "pane.send_input",
            json!({"pane_id": pane.pane, "text": text}),
        )?;
        // As on tmux: submit once the TUI shows the paste, plus a moment.
        let shown_by = std::time::Instant::now() + super::tmux::PASTE_SHOWN;
        while let Some(before) = &before {
            match self.read_pane(pane) {
                Ok(now) if now.rows == before.rows && std::time::Instant::now() < shown_by => {
                    std::thread::sleep(Duration::from_millis(25));
                }
                _ => break,
            }
        }
        std::thread::sleep(super::tmux::PASTE_SETTLE);
        self.call(
            "pane.send_keys",
            json!({"pane_id": pane.pane, "keys": ["enter"]}),
        )?;
        Ok(())
    }

    /// The pane exists with its whole identity: this pane id, in this tab,
    /// in the workspace labelled with this session. herdr serves every
    /// workspace of the user on one socket, so an id alone could name a
    /// pane drover never made.
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
            |key| {
                let name = match key {
                    crate::Key::Space => " ".to_string(),
                    other => other.name(),
                };
                self.call(
                    "pane.send_keys",
                    json!({"pane_id": pane.pane, "keys": [name]}),
                )
                .map(|_| ())
            },
            || self.read_pane(pane).ok().map(|s| s.rows.join("\n")),
        )?)
    }

    fn pane_alive(&self, pane: &Pane) -> Result<bool, WorkspaceError> {
        let info = match self.call("pane.get", json!({"pane_id": pane.pane})) {
            Ok(info) => info,
            Err(e) if e.is_not_found() => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        let in_tab = info.pointer("/pane/tab_id").and_then(Value::as_str) == Some(&pane.window);
        let workspace = info.pointer("/pane/workspace_id").and_then(Value::as_str);
        let in_session = match self.workspace_id(&pane.session)? {
            Some(id) => workspace == Some(id.as_str()),
            None => false,
        };
        Ok(in_tab && in_session)
    }

    /// Records the pane's process tree, closes it, then force-kills only
    /// processes whose identity still matches. Nothing happens unless the
    /// pane is there with its whole identity.
    fn close_pane(&self, pane: &Cleared<Pane>, grace: Duration) -> Vec<u32> {
        if pane.effect() != Effect::ClosePane || !matches!(self.pane_alive(pane), Ok(true)) {
            return Vec::new();
        }
        self.flush_output(pane);
        let tree = process::pane_tree(self.pane_pid(pane), pane.from());
        let _ = self.call("pane.close", json!({"pane_id": pane.pane}));
        process::reap_tree(&tree, grace, || {
            matches!(
                self.call("pane.get", json!({"pane_id": pane.pane})),
                Err(e) if e.is_not_found()
            )
        })
    }

    fn close_session(&self, session: &Cleared<String>) {
        if session.effect() != Effect::ClosePane {
            return;
        }
        if let Ok(Some(id)) = self.workspace_id(session) {
            let _ = self.call("workspace.close", json!({"workspace_id": id}));
            self.workspaces
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(session.as_str());
        }
    }

    fn agent_state(&self, pane: &Pane) -> Result<Option<String>, WorkspaceError> {
        Ok(Some(self.agent_status(pane)?))
    }
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
