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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::Pane;
use drover_gate::{Cleared, Effect, Provenance, Sourced};

mod tee;
mod workspace;

use tee::Tee;

/// Every herdr call is bounded by this (a notifier's is shorter).
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest reply read (a full-screen read is far smaller).
const REPLY_MAX: u64 = 16 << 20;

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
}
