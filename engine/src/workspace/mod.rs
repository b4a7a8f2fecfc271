//! Workspaces: where seats run (the transport axis, kept apart from the CLI
//! axis of adapters). `headless` runs one non-interactive turn per message;
//! `tmux` keeps seats in panes a human can attach to. The engine talks to
//! tmux only through [`tmux::Tmux`].
//!
//! Selection: `--workspace` flag > `DROVER_WORKSPACE` > the project's
//! `.drover/config.toml` (`[workspace] default = "tmux"`) > `headless`.

pub mod process;
pub mod tmux;

use std::path::Path;

use serde::Serialize;

use crate::sandbox::wit;

/// Pane text as the screen-reading functions expect it: ANSI stripped, one
/// entry per row.
pub fn screen_of(raw: &[u8], title: &str) -> wit::Screen {
    let text = strip_ansi_escapes::strip_str(String::from_utf8_lossy(raw));
    wit::Screen {
        rows: text.lines().map(str::to_string).collect(),
        title: title.to_string(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Headless,
    Tmux,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Headless => "headless",
            Kind::Tmux => "tmux",
        }
    }

    fn parse(name: &str) -> Option<Kind> {
        match name.trim() {
            "headless" => Some(Kind::Headless),
            "tmux" => Some(Kind::Tmux),
            _ => None,
        }
    }
}

/// Which workspace is selected and why.
#[derive(Debug, Clone, Serialize)]
pub struct Selection {
    pub kind: Kind,
    /// `flag`, `env`, `project` or `default`.
    pub reason: &'static str,
}

#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error("DROVER_WORKSPACE={0:?} is not a workspace (headless, tmux)")]
    Env(String),
    #[error("{path}: workspace.default = {value:?} is not a workspace (headless, tmux)")]
    Project { path: String, value: String },
    #[error("{path}: {message}")]
    Config { path: String, message: String },
}

/// `.drover/config.toml` `[workspace] default`, if set.
fn project_setting(project: &Path) -> Result<Option<String>, SelectError> {
    let path = project.join(".drover").join("config.toml");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(SelectError::Config {
                path: path.display().to_string(),
                message: e.to_string(),
            });
        }
    };
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| SelectError::Config {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
    Ok(table
        .get("workspace")
        .and_then(|w| w.get("default"))
        .and_then(|d| d.as_str())
        .map(str::to_string))
}

pub fn select(project: &Path, flag: Option<Kind>) -> Result<Selection, SelectError> {
    if let Some(kind) = flag {
        return Ok(Selection {
            kind,
            reason: "flag",
        });
    }
    if let Some(value) = std::env::var("DROVER_WORKSPACE")
        .ok()
        .filter(|v| !v.is_empty())
    {
        return Kind::parse(&value)
            .map(|kind| Selection {
                kind,
                reason: "env",
            })
            .ok_or(SelectError::Env(value));
    }
    if let Some(value) = project_setting(project)? {
        return Kind::parse(&value)
            .map(|kind| Selection {
                kind,
                reason: "project",
            })
            .ok_or_else(|| SelectError::Project {
                path: project
                    .join(".drover")
                    .join("config.toml")
                    .display()
                    .to_string(),
                value,
            });
    }
    Ok(Selection {
        kind: Kind::Headless,
        reason: "default",
    })
}

/// One row of `drover mux`.
#[derive(Debug, Clone, Serialize)]
pub struct Backend {
    pub name: &'static str,
    pub available: bool,
    pub version: Option<String>,
    pub selected: bool,
    pub note: String,
}

pub fn backends(selection: Option<&Selection>) -> Vec<Backend> {
    let is = |k: Kind| selection.is_some_and(|s| s.kind == k);
    let tmux_version = tmux::Tmux::version();
    vec![
        Backend {
            name: "headless",
            available: true,
            version: Some(format!("drover {}", env!("CARGO_PKG_VERSION"))),
            selected: is(Kind::Headless),
            note: "one non-interactive turn per message; knows every seat state exactly"
                .to_string(),
        },
        Backend {
            name: "tmux",
            available: tmux_version.is_some(),
            version: tmux_version,
            selected: is(Kind::Tmux),
            note: "seats in panes a human can attach to (needs hooks installed)".to_string(),
        },
    ]
}
