//! Workspaces: where seats run (the transport axis, kept apart from the CLI
//! axis of adapters). `headless` runs one non-interactive turn per message;
//! `tmux` keeps seats in panes a human can attach to; `ray` runs each turn
//! as a job on a Ray cluster ([`crate::ray`]). The engine talks to tmux
//! only through [`tmux::Tmux`].
//!
//! Selection: `--workspace` flag > `DROVER_WORKSPACE` > the project's
//! `.drover/config.toml` (`[workspace] default = "tmux"`) > `headless`.

pub mod headless;
pub mod process;
pub mod tmux;

use std::path::Path;

use serde::Serialize;

use crate::sandbox::wit;

/// The workspace contract (DESIGN.md §5) a backend implements: the pane
/// operations a seat in a terminal needs, and `turn.run` for backends that
/// run one process per message. A backend answers what it cannot do with
/// [`WorkspaceError::Unsupported`]. (`status.wait`, `status.stream`,
/// `prompt.kind` and `notify` are the engine's, over the run journal:
/// [`crate::run::status`].)
pub trait Workspace {
    fn kind(&self) -> Kind;
    /// `session.ensure`: the container seats of a run share.
    fn ensure_session(&self, session: &str, cwd: &Path) -> Result<(), WorkspaceError>;
    /// `pane.create` + `pane.run`: a pane running `argv`, its output teed to `log`.
    fn create_pane(
        &self,
        session: &str,
        name: &str,
        launch: &PaneLaunch<'_>,
    ) -> Result<tmux::Pane, WorkspaceError>;
    /// `pane.read`: what the pane shows now.
    fn read_pane(&self, pane: &tmux::Pane) -> Result<wit::Screen, WorkspaceError>;
    /// `pane.label`: `nickname · role`.
    fn label_pane(&self, pane: &tmux::Pane, label: &str) -> Result<(), WorkspaceError>;
    /// `pane.type`: a bracketed paste, then Enter. Refused for a human seat.
    fn type_text(&self, pane: &tmux::Pane, text: &str, human: bool) -> Result<(), WorkspaceError>;
    /// Whether the pane still exists; `Err` means "could not ask", never "gone".
    fn pane_alive(&self, pane: &tmux::Pane) -> Result<bool, WorkspaceError>;
    /// `pane.close`: kill it and every process it started (identity-checked).
    /// Returns the pids that had to be force-killed.
    fn close_pane(&self, pane: &tmux::Pane, grace: std::time::Duration) -> Vec<u32>;
    /// `turn.run`: one non-interactive process.
    fn run_turn(
        &self,
        launch: &headless::TurnLaunch<'_>,
    ) -> Result<headless::TurnProcess, WorkspaceError>;
}

/// What a pane runs.
pub struct PaneLaunch<'a> {
    pub cwd: &'a Path,
    pub env: &'a [(String, String)],
    pub argv: &'a [String],
    pub log: &'a Path,
}

#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("the {backend} workspace cannot {what}")]
    Unsupported {
        backend: &'static str,
        what: &'static str,
    },
    #[error("refused to type into a human seat")]
    HumanSeat,
    #[error(transparent)]
    Mux(#[from] tmux::MuxError),
    #[error("{0}")]
    Process(String),
}

/// `turn.run` only: a headless seat has no pane.
pub struct Headless;

impl Workspace for Headless {
    fn kind(&self) -> Kind {
        Kind::Headless
    }

    fn ensure_session(&self, _session: &str, _cwd: &Path) -> Result<(), WorkspaceError> {
        Ok(())
    }

    fn create_pane(
        &self,
        _: &str,
        _: &str,
        _: &PaneLaunch<'_>,
    ) -> Result<tmux::Pane, WorkspaceError> {
        Err(WorkspaceError::Unsupported {
            backend: "headless",
            what: "create a pane",
        })
    }

    fn read_pane(&self, _: &tmux::Pane) -> Result<wit::Screen, WorkspaceError> {
        Err(WorkspaceError::Unsupported {
            backend: "headless",
            what: "read a pane",
        })
    }

    fn label_pane(&self, _: &tmux::Pane, _: &str) -> Result<(), WorkspaceError> {
        Err(WorkspaceError::Unsupported {
            backend: "headless",
            what: "label a pane",
        })
    }

    fn type_text(&self, _: &tmux::Pane, _: &str, _: bool) -> Result<(), WorkspaceError> {
        Err(WorkspaceError::Unsupported {
            backend: "headless",
            what: "type into a pane",
        })
    }

    fn pane_alive(&self, _: &tmux::Pane) -> Result<bool, WorkspaceError> {
        Err(WorkspaceError::Unsupported {
            backend: "headless",
            what: "watch a pane",
        })
    }

    fn close_pane(&self, _: &tmux::Pane, _: std::time::Duration) -> Vec<u32> {
        Vec::new()
    }

    fn run_turn(
        &self,
        launch: &headless::TurnLaunch<'_>,
    ) -> Result<headless::TurnProcess, WorkspaceError> {
        headless::start(launch).map_err(WorkspaceError::Process)
    }
}

impl Workspace for tmux::Tmux {
    fn kind(&self) -> Kind {
        Kind::Tmux
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
    ) -> Result<tmux::Pane, WorkspaceError> {
        let pane = self.new_window(session, name, launch.cwd, launch.env, launch.argv)?;
        if let Err(e) = self.pipe_pane(&pane, launch.log) {
            // A pane that died at once cannot be teed; its log stays empty,
            // which reads as "rendered nothing".
            tracing::debug!("pipe-pane failed: {e}");
        }
        Ok(pane)
    }

    fn read_pane(&self, pane: &tmux::Pane) -> Result<wit::Screen, WorkspaceError> {
        let text = self.capture(pane)?;
        let title = self.title(pane).unwrap_or_default();
        Ok(screen_of(text.as_bytes(), &title))
    }

    fn label_pane(&self, pane: &tmux::Pane, label: &str) -> Result<(), WorkspaceError> {
        Ok(self.label(pane, label)?)
    }

    fn type_text(&self, pane: &tmux::Pane, text: &str, human: bool) -> Result<(), WorkspaceError> {
        if human {
            return Err(WorkspaceError::HumanSeat);
        }
        Ok(tmux::Tmux::type_text(self, pane, text)?)
    }

    fn pane_alive(&self, pane: &tmux::Pane) -> Result<bool, WorkspaceError> {
        Ok(self.alive(pane)?)
    }

    /// Records the pane's process tree first, kills the window, waits, then
    /// force-kills only processes whose start time still matches.
    fn close_pane(&self, pane: &tmux::Pane, grace: std::time::Duration) -> Vec<u32> {
        let tree = self.pane_pid(pane).map(process::tree).unwrap_or_default();
        self.kill_window(pane);
        let until = std::time::Instant::now() + grace;
        loop {
            let window_gone = matches!(self.alive(pane), Ok(false));
            let survivors: Vec<_> = tree
                .iter()
                .copied()
                .filter(|p| process::alive(*p))
                .collect();
            if window_gone && survivors.is_empty() {
                return Vec::new();
            }
            if std::time::Instant::now() >= until {
                for p in &survivors {
                    process::force_kill(*p);
                }
                if !window_gone {
                    self.kill_window(pane);
                }
                return survivors.iter().map(|p| p.pid).collect();
            }
            // Ask politely once the window is gone but children linger.
            if window_gone {
                for p in &survivors {
                    process::terminate(*p);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    fn run_turn(
        &self,
        _: &headless::TurnLaunch<'_>,
    ) -> Result<headless::TurnProcess, WorkspaceError> {
        Err(WorkspaceError::Unsupported {
            backend: "tmux",
            what: "run a headless turn",
        })
    }
}

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
    Ray,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Headless => "headless",
            Kind::Tmux => "tmux",
            Kind::Ray => "ray",
        }
    }

    fn parse(name: &str) -> Option<Kind> {
        match name.trim() {
            "headless" => Some(Kind::Headless),
            "tmux" => Some(Kind::Tmux),
            "ray" => Some(Kind::Ray),
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
    #[error("DROVER_WORKSPACE={0:?} is not a workspace (headless, tmux, ray)")]
    Env(String),
    #[error("{at} = {value:?} is not a workspace (headless, tmux, ray)")]
    Project { at: String, value: String },
    #[error("{message}")]
    Config { message: String },
}

/// `[workspace] default` from the project's (else the user's) config.toml.
fn configured(project: &Path) -> Result<Option<(String, String)>, SelectError> {
    let config = crate::config::Config::load(project).map_err(|e| SelectError::Config {
        message: e.to_string(),
    })?;
    Ok(config
        .get(&["workspace", "default"])
        .and_then(|(value, file)| {
            value
                .as_str()
                .map(|v| (v.to_string(), file.locate(&["workspace", "default"])))
        }))
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
    if let Some((value, at)) = configured(project)? {
        return Kind::parse(&value)
            .map(|kind| Selection {
                kind,
                reason: "project",
            })
            .ok_or(SelectError::Project { at, value });
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
