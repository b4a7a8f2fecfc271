//! A fake herdr server for drover's tests: herdr's socket API as its
//! documentation and JSON schema describe it (protocol 20) — newline-
//! delimited JSON over a Unix socket, `{"id","method","params"}` in,
//! `{"id","result":{"type",…}}` or `{"id","error":{"code","message"}}` out —
//! for the methods drover uses, with real processes on real pseudo-terminals
//! behind the panes.
//!
//! ```text
//! fake-herdr --socket PATH [--log FILE] [--fail METHOD=CODE]…
//! ```
//!
//! `--log` appends every request (one JSON line each) so a test can see what
//! drover asked. `--fail` makes a method answer an error with that code.
//! Like herdr, a workspace starts with a shell in its root pane, a pane
//! whose process exits closes (and its tab with it), closing a pane or a
//! workspace hangs up its terminals, and panes get `HERDR_SOCKET_PATH`,
//! `HERDR_ENV`, `HERDR_WORKSPACE_ID`, `HERDR_TAB_ID` and `HERDR_PANE_ID`.
//! Agent status is what `pane.report_agent` last said (`unknown` before);
//! the fake has no screen detection of its own.
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a stand-in program for the tests (a fake CLI or server), not drover: its output is what the tests read"
)]

mod pty;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

const PROTOCOL: u32 = 20;
const ROWS: u16 = 50;
const COLS: u16 = 220;

struct PaneState {
    id: String,
    workspace: String,
    tab: String,
    label: Option<String>,
    cwd: String,
    agent_status: String,
    terminal: pty::Terminal,
}

struct Tab {
    id: String,
    label: String,
}

struct Workspace {
    id: String,
    label: String,
    next_tab: u32,
    next_pane: u32,
}

#[derive(Default)]
struct State {
    next_workspace: u32,
    workspaces: Vec<Workspace>,
    tabs: Vec<Tab>,
    panes: Vec<PaneState>,
}

struct Server {
    socket: PathBuf,
    log: Option<Mutex<std::fs::File>>,
    failures: BTreeMap<String, String>,
    state: Mutex<State>,
}

type Reply = Result<Value, (&'static str, String)>;

fn main() {
    let mut socket = None;
    let mut log = None;
    let mut failures = BTreeMap::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--socket" => socket = args.next().map(PathBuf::from),
            "--log" => log = args.next().map(PathBuf::from),
            "--fail" => {
                if let Some((method, code)) = args.next().as_deref().and_then(|f| f.split_once('='))
                {
                    failures.insert(method.to_string(), code.to_string());
                }
            }
            other => {
                eprintln!("fake-herdr: unknown argument {other}");
                std::process::exit(2);
            }
        }
    }
    let Some(socket) = socket else {
        eprintln!("usage: fake-herdr --socket PATH [--log FILE] [--fail METHOD=CODE]…");
        std::process::exit(2);
    };
    let _ = std::fs::remove_file(&socket);
    let listener = match UnixListener::bind(&socket) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("fake-herdr: cannot listen on {}: {e}", socket.display());
            std::process::exit(1);
        }
    };
    let log = log.and_then(|path| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
            .map(Mutex::new)
    });
    let server = Arc::new(Server {
        socket,
        log,
        failures,
        state: Mutex::new(State::default()),
    });
    for stream in listener.incoming().flatten() {
        let server = Arc::clone(&server);
        std::thread::spawn(move || server.serve(stream));
    }
}

impl Server {
    fn serve(&self, stream: UnixStream) {
        let Ok(mut writer) = stream.try_clone() else {
            return;
        };
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { return };
            if line.trim().is_empty() {
                continue;
            }
            let reply = self.answer(&line);
            if writeln!(writer, "{reply}").is_err() {
                return;
            }
        }
    }

    fn answer(&self, line: &str) -> Value {
        let request: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                return json!({"id": "", "error": {"code": "invalid_request", "message": format!("invalid JSON: {e}")}});
            }
        };
        if let Some(log) = &self.log {
            let mut file = log.lock().unwrap_or_else(|p| p.into_inner());
            let _ = writeln!(file, "{request}");
        }
        let id = request["id"].as_str().unwrap_or_default().to_string();
        let method = request["method"].as_str().unwrap_or_default();
        let params = request.get("params").cloned().unwrap_or(json!({}));
        if id.is_empty() {
            return json!({"id": id, "error": {"code": "invalid_request", "message": "missing id"}});
        }
        if let Some(code) = self.failures.get(method) {
            return json!({"id": id, "error": {"code": code, "message": format!("{method} failed (injected)")}});
        }
        match self.call(method, &params) {
            Ok(result) => json!({"id": id, "result": result}),
            Err((code, message)) => json!({"id": id, "error": {"code": code, "message": message}}),
        }
    }

    fn call(&self, method: &str, p: &Value) -> Reply {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.reap();
        let text = |key: &str| p[key].as_str().map(str::to_string);
        let need = |key: &str| text(key).ok_or(("invalid_params", format!("missing {key}")));
        match method {
            "ping" => Ok(
                json!({"type": "pong", "version": "0.8.0-fake", "protocol": PROTOCOL, "capabilities": {"live_handoff": false}}),
            ),
            "workspace.list" => Ok(
                json!({"type": "workspace_list", "workspaces": st.workspaces.iter().map(|w| st.workspace_info(w)).collect::<Vec<_>>()}),
            ),
            "workspace.create" => {
                st.next_workspace += 1;
                let id = format!("w{}", st.next_workspace);
                let cwd = text("cwd").unwrap_or_else(|| "/".to_string());
                st.workspaces.push(Workspace {
                    id: id.clone(),
                    label: text("label").unwrap_or_else(|| id.clone()),
                    next_tab: 0,
                    next_pane: 0,
                });
                let shell = std::env::var("SHELL").unwrap_or_else(|_| "sh".to_string());
                let (tab, pane) =
                    self.spawn(&mut st, &id, None, &[shell], &cwd, &BTreeMap::new())?;
                let ws = st
                    .workspaces
                    .iter()
                    .find(|w| w.id == id)
                    .map(|w| st.workspace_info(w));
                Ok(
                    json!({"type": "workspace_created", "workspace": ws, "tab": st.tab_info(&tab), "root_pane": st.pane_info(&pane)}),
                )
            }
            "workspace.get" => {
                let id = need("workspace_id")?;
                let ws = st
                    .workspaces
                    .iter()
                    .find(|w| w.id == id)
                    .ok_or(("workspace_not_found", format!("workspace {id} not found")))?;
                Ok(json!({"type": "workspace_info", "workspace": st.workspace_info(ws)}))
            }
            "workspace.close" => {
                let id = need("workspace_id")?;
                if !st.workspaces.iter().any(|w| w.id == id) {
                    return Err(("workspace_not_found", format!("workspace {id} not found")));
                }
                st.panes.retain(|pane| pane.workspace != id);
                st.tabs.retain(|t| !t.id.starts_with(&format!("{id}:")));
                st.workspaces.retain(|w| w.id != id);
                Ok(json!({"type": "ok"}))
            }
            "layout.apply" => {
                let ws = need("workspace_id")?;
                if !st.workspaces.iter().any(|w| w.id == ws) {
                    return Err(("workspace_not_found", format!("workspace {ws} not found")));
                }
                let root = &p["root"];
                if root["type"] != "pane" {
                    return Err((
                        "invalid_layout",
                        "the fake applies single-pane layouts only".to_string(),
                    ));
                }
                let argv: Vec<String> = match root.get("command") {
                    Some(Value::Array(items)) if !items.is_empty() => items
                        .iter()
                        .filter_map(|i| i.as_str().map(str::to_string))
                        .collect(),
                    Some(Value::Array(_)) => {
                        return Err((
                            "invalid_layout",
                            "pane command must not be empty".to_string(),
                        ));
                    }
                    _ => vec![std::env::var("SHELL").unwrap_or_else(|_| "sh".to_string())],
                };
                let env: BTreeMap<String, String> = root["env"]
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                            .collect()
                    })
                    .unwrap_or_default();
                let cwd = root["cwd"].as_str().unwrap_or("/").to_string();
                let (tab, pane) = self.spawn(&mut st, &ws, text("tab_label"), &argv, &cwd, &env)?;
                if let Some(label) = root["label"].as_str()
                    && let Some(pane) = st.panes.iter_mut().find(|x| x.id == pane)
                {
                    pane.label = Some(label.to_string());
                }
                Ok(json!({"type": "layout_apply", "layout": {
                    "workspace_id": ws, "tab_id": tab, "zoomed": false, "focused_pane_id": pane,
                    "root": {"type": "pane", "pane_id": pane, "label": root["label"], "cwd": cwd, "command": argv},
                }}))
            }
            "tab.rename" => {
                let id = need("tab_id")?;
                let label = need("label")?;
                let tab = st
                    .tabs
                    .iter_mut()
                    .find(|t| t.id == id)
                    .ok_or(("tab_not_found", format!("tab {id} not found")))?;
                tab.label = label;
                Ok(json!({"type": "tab_info", "tab": st.tab_info(&id)}))
            }
            "pane.get" => {
                let id = need("pane_id")?;
                st.pane(&id)?;
                Ok(json!({"type": "pane_info", "pane": st.pane_info(&id)}))
            }
            "pane.list" => {
                let only = text("workspace_id");
                let panes: Vec<Value> = st
                    .panes
                    .iter()
                    .filter(|x| only.as_ref().is_none_or(|w| *w == x.workspace))
                    .map(|x| st.pane_info(&x.id))
                    .collect();
                Ok(json!({"type": "pane_list", "panes": panes}))
            }
            "pane.rename" => {
                let id = need("pane_id")?;
                let label = text("label");
                st.pane_mut(&id)?.label = label;
                Ok(json!({"type": "pane_info", "pane": st.pane_info(&id)}))
            }
            "pane.read" => {
                let id = need("pane_id")?;
                let source = need("source")?;
                let lines = p["lines"].as_u64().map(|n| n as usize);
                let pane = st.pane(&id)?;
                let (text, revision) = match source.as_str() {
                    "visible" | "detection" => pane.terminal.visible(),
                    "recent" | "recent_unwrapped" => pane.terminal.recent(lines.unwrap_or(200)),
                    other => return Err(("invalid_params", format!("unknown source {other}"))),
                };
                Ok(json!({"type": "pane_read", "read": {
                    "pane_id": id, "workspace_id": pane.workspace, "tab_id": pane.tab, "source": source,
                    "format": "text", "text": text, "revision": revision, "truncated": false,
                }}))
            }
            "pane.send_text" => {
                let id = need("pane_id")?;
                let text = need("text")?;
                st.pane(&id)?
                    .terminal
                    .write(text.as_bytes())
                    .map_err(|e| ("pane_send_failed", e))?;
                Ok(json!({"type": "ok"}))
            }
            "pane.send_input" | "pane.send_keys" => {
                let id = need("pane_id")?;
                let pane = st.pane(&id)?;
                let mut bytes = Vec::new();
                if let Some(text) = p["text"].as_str().filter(|t| !t.is_empty()) {
                    // Like herdr: a paste is bracketed when the program asked.
                    if pane.terminal.bracketed_paste() {
                        bytes.extend_from_slice(format!("\x1b[200~{text}\x1b[201~").as_bytes());
                    } else {
                        bytes.extend_from_slice(text.as_bytes());
                    }
                }
                for key in p["keys"].as_array().into_iter().flatten() {
                    let key = key.as_str().unwrap_or_default();
                    let encoded: &[u8] = match key {
                        "enter" => b"\r",
                        "esc" | "escape" => b"\x1b",
                        "tab" => b"\t",
                        "backspace" => b"\x7f",
                        "up" => b"\x1b[A",
                        "down" => b"\x1b[B",
                        "right" => b"\x1b[C",
                        "left" => b"\x1b[D",
                        "ctrl+c" => b"\x03",
                        "ctrl+u" => b"\x15",
                        k if k.chars().count() == 1 => k.as_bytes(),
                        other => return Err(("invalid_key", format!("unsupported key {other}"))),
                    };
                    bytes.extend_from_slice(encoded);
                }
                pane.terminal
                    .write(&bytes)
                    .map_err(|e| ("pane_send_failed", e))?;
                Ok(json!({"type": "ok"}))
            }
            "pane.process_info" => {
                let id = need("pane_id")?;
                let pane = st.pane(&id)?;
                Ok(
                    json!({"type": "pane_process_info", "process_info": {"pane_id": id, "shell_pid": pane.terminal.pid(), "foreground_processes": []}}),
                )
            }
            "pane.report_agent" => {
                let id = need("pane_id")?;
                let state = need("state")?;
                if !["idle", "working", "blocked", "unknown"].contains(&state.as_str()) {
                    return Err(("invalid_params", format!("unknown state {state}")));
                }
                st.pane_mut(&id)?.agent_status = state;
                Ok(json!({"type": "ok"}))
            }
            "pane.close" => {
                let id = need("pane_id")?;
                st.pane(&id)?;
                st.close_pane(&id);
                Ok(json!({"type": "ok"}))
            }
            "notification.show" => {
                let title = need("title")?;
                if title.trim().is_empty() {
                    return Err((
                        "invalid_params",
                        "title must contain visible text".to_string(),
                    ));
                }
                Ok(json!({"type": "notification_show", "shown": true, "reason": "shown"}))
            }
            other => Err((
                "internal_error",
                format!("{other} is not implemented by the fake herdr"),
            )),
        }
    }

    /// A new tab in `ws` whose one pane runs `argv`.
    fn spawn(
        &self,
        st: &mut State,
        ws: &str,
        label: Option<String>,
        argv: &[String],
        cwd: &str,
        env: &BTreeMap<String, String>,
    ) -> Result<(String, String), (&'static str, String)> {
        let workspace = st
            .workspaces
            .iter_mut()
            .find(|w| w.id == ws)
            .ok_or(("workspace_not_found", format!("workspace {ws} not found")))?;
        workspace.next_tab += 1;
        workspace.next_pane += 1;
        let tab = format!("{ws}:t{}", workspace.next_tab);
        let pane = format!("{ws}:p{}", workspace.next_pane);
        let mut env = env.clone();
        env.insert(
            "HERDR_SOCKET_PATH".into(),
            self.socket.display().to_string(),
        );
        env.insert("HERDR_ENV".into(), "1".into());
        env.insert("HERDR_WORKSPACE_ID".into(), ws.to_string());
        env.insert("HERDR_TAB_ID".into(), tab.clone());
        env.insert("HERDR_PANE_ID".into(), pane.clone());
        let terminal = pty::Terminal::spawn(argv, cwd, &env, ROWS, COLS)
            .map_err(|e| ("layout_apply_failed", e))?;
        st.tabs.push(Tab {
            id: tab.clone(),
            label: label.unwrap_or_else(|| tab.clone()),
        });
        st.panes.push(PaneState {
            id: pane.clone(),
            workspace: ws.to_string(),
            tab: tab.clone(),
            label: None,
            cwd: cwd.to_string(),
            agent_status: "unknown".to_string(),
            terminal,
        });
        Ok((tab, pane))
    }
}

impl State {
    /// Panes whose program exited close, and so do tabs left empty.
    fn reap(&mut self) {
        let exited: Vec<String> = self
            .panes
            .iter()
            .filter(|p| p.terminal.exited())
            .map(|p| p.id.clone())
            .collect();
        for id in exited {
            self.close_pane(&id);
        }
    }

    fn close_pane(&mut self, id: &str) {
        self.panes.retain(|p| p.id != id);
        let panes = &self.panes;
        self.tabs.retain(|t| panes.iter().any(|p| p.tab == t.id));
    }

    fn pane(&self, id: &str) -> Result<&PaneState, (&'static str, String)> {
        self.panes
            .iter()
            .find(|p| p.id == id)
            .ok_or(("pane_not_found", format!("pane {id} not found")))
    }

    fn pane_mut(&mut self, id: &str) -> Result<&mut PaneState, (&'static str, String)> {
        self.panes
            .iter_mut()
            .find(|p| p.id == id)
            .ok_or(("pane_not_found", format!("pane {id} not found")))
    }

    fn workspace_info(&self, w: &Workspace) -> Value {
        let tabs: Vec<&Tab> = self
            .tabs
            .iter()
            .filter(|t| t.id.starts_with(&format!("{}:", w.id)))
            .collect();
        json!({
            "workspace_id": w.id, "number": w.id.trim_start_matches('w').parse::<u64>().unwrap_or(0),
            "label": w.label, "focused": false,
            "pane_count": self.panes.iter().filter(|p| p.workspace == w.id).count(),
            "tab_count": tabs.len(),
            "active_tab_id": tabs.first().map(|t| t.id.clone()).unwrap_or_default(),
            "agent_status": "unknown",
        })
    }

    fn tab_info(&self, id: &str) -> Value {
        let label = self
            .tabs
            .iter()
            .find(|t| t.id == id)
            .map(|t| t.label.clone())
            .unwrap_or_default();
        let (workspace, number) = id.split_once(":t").unwrap_or_default();
        json!({
            "tab_id": id, "workspace_id": workspace, "number": number.parse::<u64>().unwrap_or(0),
            "label": label, "focused": false,
            "pane_count": self.panes.iter().filter(|p| p.tab == id).count(),
            "agent_status": "unknown",
        })
    }

    fn pane_info(&self, id: &str) -> Value {
        let Some(p) = self.panes.iter().find(|p| p.id == id) else {
            return Value::Null;
        };
        let title = p.terminal.title();
        json!({
            "pane_id": p.id, "terminal_id": format!("term_{}", p.id.replace(':', "_")),
            "workspace_id": p.workspace, "tab_id": p.tab, "focused": false,
            "agent_status": p.agent_status, "revision": p.terminal.revision(),
            "label": p.label, "cwd": p.cwd,
            "terminal_title": title, "terminal_title_stripped": title,
        })
    }
}
