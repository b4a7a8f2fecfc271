//! herdr as a [`PaneBackend`]: a session is a herdr workspace, a pane a tab
//! holding one pane that runs the CLI's argv.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Herdr, HerdrError};
use crate::{Pane, PaneBackend, PaneLaunch, WorkspaceError, process};
use drover_gate::{Cleared, Effect};
use drover_types::wit;

impl PaneBackend for Herdr {
    fn kind(&self) -> crate::WorkspaceKind {
        crate::WorkspaceKind::Herdr
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
        let (program, rest) = crate::spawnable(launch.command).map_err(WorkspaceError::Process)?;
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
        Ok(crate::screen_of(text.as_bytes(), &title))
    }

    fn label_pane(&self, pane: &Pane, label: &str) -> Result<(), WorkspaceError> {
        self.call("tab.rename", json!({"tab_id": pane.window, "label": label}))?;
        self.call("pane.rename", json!({"pane_id": pane.pane, "label": label}))?;
        Ok(())
    }

    fn paste_text(&self, pane: &Pane, text: &str, human: bool) -> Result<(), WorkspaceError> {
        if human {
            return Err(WorkspaceError::HumanSeat);
        }
        let before = self.read_pane(pane).ok();
        self.call(
            "pane.send_input",
            json!({"pane_id": pane.pane, "text": text}),
        )?;
        // As on tmux: submit once the TUI shows the paste, plus a moment.
        let shown_by = std::time::Instant::now() + crate::tmux::PASTE_SHOWN;
        while let Some(before) = &before {
            match self.read_pane(pane) {
                Ok(now) if now.rows == before.rows && std::time::Instant::now() < shown_by => {
                    std::thread::sleep(Duration::from_millis(25));
                }
                _ => break,
            }
        }
        std::thread::sleep(crate::tmux::PASTE_SETTLE);
        Ok(())
    }

    fn submit(&self, pane: &Pane, human: bool) -> Result<(), WorkspaceError> {
        if human {
            return Err(WorkspaceError::HumanSeat);
        }
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

    // herdr's API has no pane mode to ask about or leave (no copy mode;
    // its scrollback is the client's, and keys sent over the socket always
    // reach the pane's program), so `pane_in_mode`/`cancel_mode` keep the
    // trait's "none" answers.

    fn clear_input(&self, pane: &Pane, times: usize, human: bool) -> Result<(), WorkspaceError> {
        if human {
            return Err(WorkspaceError::HumanSeat);
        }
        let keys = vec!["ctrl+u"; times.max(1)];
        self.call(
            "pane.send_keys",
            json!({"pane_id": pane.pane, "keys": keys}),
        )?;
        Ok(())
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
