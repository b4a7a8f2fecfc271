//! drover-workspace: where seats run (the transport axis, kept apart from
//! the CLI axis of adapters). `headless` runs one non-interactive turn per
//! message; `tmux` and `herdr` keep seats in panes a human can attach to;
//! `acp` runs a CLI's Agent Client Protocol mode as a long-lived agent
//! process ([`acp`]); `ray` runs each turn as a job on a Ray cluster
//! (drover's `ray` module, which is a session driver and so sits above this
//! crate). The engine talks to tmux only through [`tmux::Tmux`] and to herdr
//! only through [`herdr::Herdr`].
//!
//! Selection ([`select`]): `--workspace` flag > `DROVER_WORKSPACE` > the
//! project's `.drover/config.toml` (`[workspace] default = "tmux"`) when
//! the project is trusted, else the user's `config.toml` > `headless`.

pub mod acp;
pub mod headless;
pub mod herdr;
pub mod jules;
pub mod keys;
pub mod process;
pub mod tmux;

pub use acp::Acp;
pub use headless::Headless;
pub use keys::Key;

use std::path::Path;

use serde::Serialize;

use drover_config::{Config, Scope};
use drover_gate::{Cleared, Effect};
use drover_types::wit;

/// `word` as one POSIX shell word: as it is when it is plain, else in single
/// quotes. For the command lines workspaces and hook configs hand a shell.
pub fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Clears `pane` for closing (and the processes in it for signalling) when
/// its provenance allows: [`drover_gate::Provenance::Created`] for one this
/// drover opened, [`drover_gate::Provenance::SealedRecord`] for one read
/// back from a sealed record.
pub fn clear_pane(
    pane: &Pane,
    from: drover_gate::Provenance,
) -> Result<drover_gate::Cleared<Pane>, drover_gate::Refused> {
    drover_gate::clear(
        drover_gate::Effect::ClosePane,
        "the pane to close",
        drover_gate::Sourced::new(pane.clone(), from),
    )
}

/// Clears a pane's session for closing, as its pane was cleared.
pub fn clear_session(
    session: &str,
    from: drover_gate::Provenance,
) -> Result<drover_gate::Cleared<String>, drover_gate::Refused> {
    drover_gate::clear(
        drover_gate::Effect::ClosePane,
        "the session to close",
        drover_gate::Sourced::new(session.to_string(), from),
    )
}

/// A pane and the window (tmux) or tab (herdr) that holds it, by the
/// backend's own ids (`%3`/`@2` on tmux, `w1:p2`/`w1:t2` on herdr), and the
/// session (workspace, on herdr) it belongs to. Opaque outside this crate:
/// only the backend that made a pane builds or interprets one; everyone
/// else hands it back to that backend, keeps it (a seat record), or shows
/// its ids.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pane {
    session: String,
    window: String,
    pane: String,
}

impl Pane {
    /// The pane's id in its backend's terms.
    pub fn id(&self) -> &str {
        &self.pane
    }

    /// The id of the window (tmux) or tab (herdr) holding it.
    pub fn window(&self) -> &str {
        &self.window
    }

    /// The session (tmux) or workspace (herdr) it belongs to.
    pub fn session(&self) -> &str {
        &self.session
    }
}

/// The workspace contract, in the three parts a backend may implement:
/// [`PaneBackend`], the pane operations a seat in a terminal needs (tmux,
/// herdr); [`TurnRunner`], `turn.run` for backends that run one process per
/// message (headless); and [`AgentRunner`], `agent.start` for backends that
/// keep a long-lived agent process to speak a protocol with (acp). A
/// backend implements only what it does; [`gaps`] lists what each lacks.
/// (`status.wait`, `status.stream`, `prompt.kind` and `notify` are the
/// engine's, over the run journal: [`drover_run::status`] and drover's `notify`.)
pub trait PaneBackend {
    fn kind(&self) -> WorkspaceKind;
    /// `session.ensure`: the container seats of a run share.
    fn ensure_session(&self, session: &str, cwd: &Path) -> Result<(), WorkspaceError>;
    /// `pane.create` + `pane.run`: a pane running `argv`, its output teed to `log`.
    fn create_pane(
        &self,
        session: &str,
        name: &str,
        launch: &PaneLaunch<'_>,
    ) -> Result<Pane, WorkspaceError>;
    /// Keeps teeing a pane created earlier (by another drover process) into
    /// `log` while this process drives it. A no-op where the tee lives in
    /// the multiplexer (tmux's `pipe-pane`).
    fn watch_output(&self, _pane: &Pane, _log: &Path) {}
    /// Brings the pane's log up to date now (before it is read for faults).
    fn flush_output(&self, _pane: &Pane) {}
    /// `pane.read`: what the pane shows now.
    fn read_pane(&self, pane: &Pane) -> Result<wit::Screen, WorkspaceError>;
    /// `pane.label`: `nickname · role`.
    fn label_pane(&self, pane: &Pane, label: &str) -> Result<(), WorkspaceError>;
    /// `pane.type`: a bracketed paste, then Enter. Refused for a human seat.
    fn type_text(&self, pane: &Pane, text: &str, human: bool) -> Result<(), WorkspaceError> {
        self.paste_text(pane, text, human)?;
        self.submit(pane, human)
    }
    /// The paste of [`PaneBackend::type_text`] alone: returns once the
    /// screen shows it (bounded) and a moment more, so what the pane shows
    /// then is the message sitting in the CLI's input. Refused for a human
    /// seat.
    fn paste_text(&self, pane: &Pane, text: &str, human: bool) -> Result<(), WorkspaceError>;
    /// The Enter of [`PaneBackend::type_text`], which submits the paste.
    /// Refused for a human seat.
    fn submit(&self, pane: &Pane, human: bool) -> Result<(), WorkspaceError>;
    /// `pane.keys`: presses keys (a dialog's answer). Refused for a human
    /// seat, and by backends without panes.
    fn press_keys(&self, _pane: &Pane, _keys: &[Key], human: bool) -> Result<(), WorkspaceError> {
        if human {
            return Err(WorkspaceError::HumanSeat);
        }
        Err(WorkspaceError::Unsupported {
            backend: self.kind().as_str(),
            what: "press keys in a pane",
        })
    }
    /// Whether the multiplexer holds the pane in a mode of its own that
    /// takes keys instead of the CLI (tmux's copy mode, where a selection
    /// also lives). `Ok(false)` where the backend has no such mode.
    fn pane_in_mode(&self, _pane: &Pane) -> Result<bool, WorkspaceError> {
        Ok(false)
    }
    /// Leaves that mode, and any selection in it, so keys reach the CLI
    /// again. Refused for a human seat; nothing to do where there is none.
    fn cancel_mode(&self, _pane: &Pane, human: bool) -> Result<(), WorkspaceError> {
        if human {
            return Err(WorkspaceError::HumanSeat);
        }
        Ok(())
    }
    /// Clears the CLI's input line before a message is typed again: Ctrl-U
    /// (kill to the start of the line, in readline, a cooked terminal and
    /// the coding TUIs' inputs alike) `times` times, one per line of the
    /// message. Refused for a human seat, and by backends without panes.
    fn clear_input(&self, _pane: &Pane, _times: usize, human: bool) -> Result<(), WorkspaceError> {
        if human {
            return Err(WorkspaceError::HumanSeat);
        }
        Err(WorkspaceError::Unsupported {
            backend: self.kind().as_str(),
            what: "clear a pane's input line",
        })
    }
    /// Whether the pane still exists; `Err` means "could not ask", never "gone".
    fn pane_alive(&self, pane: &Pane) -> Result<bool, WorkspaceError>;
    /// `pane.close`: kill it and every process it started (identity-checked).
    /// Returns the pids that had to be force-killed. The pane must have been
    /// cleared by the gate ([`drover_gate::Effect::ClosePane`]): one this
    /// drover opened, or a sealed record of one, never a pane a file names.
    fn close_pane(&self, pane: &drover_gate::Cleared<Pane>, grace: std::time::Duration)
    -> Vec<u32>;
    /// Ends a session and whatever is left in it (its idle first window),
    /// cleared like [`PaneBackend::close_pane`]'s pane.
    fn close_session(&self, session: &drover_gate::Cleared<String>);
    /// The multiplexer's own reading of the agent in a pane, when it has one
    /// (herdr's agent status): a second status source beside the hooks.
    fn agent_state(&self, _pane: &Pane) -> Result<Option<String>, WorkspaceError> {
        Ok(None)
    }
}

/// `turn.run`: a backend that runs one non-interactive process per message.
pub trait TurnRunner {
    fn kind(&self) -> WorkspaceKind;
    fn run_turn(
        &self,
        launch: &headless::TurnLaunch<'_>,
    ) -> Result<headless::TurnProcess, WorkspaceError>;
}

/// `agent.start`: a backend that keeps a long-lived agent process and a
/// connection to its stdio.
pub trait AgentRunner {
    fn kind(&self) -> WorkspaceKind;
    fn start_agent(
        &self,
        launch: &acp::AgentLaunch<'_>,
    ) -> Result<(acp::AgentProcess, drover_acp::rpc::Connection), WorkspaceError>;
}

/// A CLI's command line: the program and its arguments, the environment it
/// gets on top of drover's, and its stdin. Every backend starts one only as
/// a [`Cleared`] value ([`drover_gate::clear`] with [`Effect::Spawn`]), so no
/// caller reaches a spawn around the gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliCommand {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub stdin: Option<String>,
}

/// The command a launch may start: cleared for [`Effect::Spawn`] (a value
/// cleared for another effect is refused), and not empty.
fn spawnable(command: &Cleared<CliCommand>) -> Result<(&String, &[String]), String> {
    if command.effect() != Effect::Spawn {
        return Err(format!(
            "a command cleared to {} cannot be started",
            command.effect().as_str()
        ));
    }
    command
        .argv
        .split_first()
        .ok_or_else(|| "the adapter returned an empty command".to_string())
}

/// What a pane runs.
pub struct PaneLaunch<'a> {
    pub cwd: &'a Path,
    /// Its environment is the command's (the pane starts with that alone).
    pub command: &'a Cleared<CliCommand>,
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
    #[error(transparent)]
    Herdr(#[from] herdr::HerdrError),
    #[error("{0}")]
    Process(String),
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

pub use drover_types::WorkspaceKind;

/// An operation of the contract a backend does without, and what drover
/// does instead.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Gap {
    pub operation: &'static str,
    pub instead: &'static str,
}

/// The optional operations a backend lacks (docs/workspaces.md).
pub fn gaps(kind: WorkspaceKind) -> &'static [Gap] {
    match kind {
        WorkspaceKind::Headless => &[
            Gap {
                operation: "pane.create, pane.run, pane.read, pane.label, pane.type, pane.close",
                instead: "one non-interactive turn per message (turn.run); there is no pane to read, label or attach to",
            },
            Gap {
                operation: "notify (workspace)",
                instead: "desktop, webhook and command notifiers only",
            },
        ],
        WorkspaceKind::Tmux => &[
            Gap {
                operation: "turn.run",
                instead: "the CLI stays in its pane; each message is typed",
            },
            Gap {
                operation: "agent status",
                instead: "states come from the CLI's hooks and the adapter's screen reading only",
            },
        ],
        WorkspaceKind::Herdr => &[
            Gap {
                operation: "turn.run",
                instead: "the CLI stays in its pane; each message is typed",
            },
            Gap {
                operation: "pipe-pane (byte-exact output tee)",
                instead: "the pane log is rebuilt from pane.read snapshots every 250 ms while drover drives the seat",
            },
            Gap {
                operation: "attach by command",
                instead: "drover attach focuses the pane and runs the herdr client",
            },
        ],
        WorkspaceKind::Acp => &[
            Gap {
                operation: "pane.create, pane.run, pane.read, pane.label, pane.type, pane.close",
                instead: "a long-lived agent process spoken to in the Agent Client Protocol (agent.start); there is no pane to read, label or attach to",
            },
            Gap {
                operation: "turn.run",
                instead: "one session/prompt per message to the seat's agent, which a seat host holds between commands",
            },
            Gap {
                operation: "notify (workspace)",
                instead: "desktop, webhook and command notifiers only",
            },
        ],
        WorkspaceKind::Ray => &[
            Gap {
                operation: "pane.create, pane.run, pane.read, pane.label, pane.type, pane.close",
                instead: "each message is a Ray job running one headless turn on a node; there is no pane to read, label or attach to",
            },
            Gap {
                operation: "turn.run on this machine",
                instead: "the turn runs on the node Ray picks (or --place pins); its journal lines come home through the job's log",
            },
            Gap {
                operation: "notify (workspace)",
                instead: "desktop, webhook and command notifiers, sent from this machine",
            },
        ],
        WorkspaceKind::Jules => &[
            Gap {
                operation: "pane.create, pane.run, pane.read, pane.label, pane.type, pane.close",
                instead: "each message is a Jules session (or a message to the seat's session) in Google's cloud, polled over the REST API; there is no pane to read, label or attach to",
            },
            Gap {
                operation: "hooks",
                instead: "seat states come from the session's state and activities (working, blocked on a plan, done, failed)",
            },
            Gap {
                operation: "transcript and usage",
                instead: "no local transcript: the activities are journaled as events; usage and cost are unavailable (the API reports none)",
            },
            Gap {
                operation: "notify (workspace)",
                instead: "desktop, webhook and command notifiers, sent from this machine",
            },
        ],
    }
}

/// Opens the pane backend of `kind` for `project`; a kind without panes
/// is refused.
pub fn open_panes(
    kind: WorkspaceKind,
    project: &Path,
) -> Result<Box<dyn PaneBackend>, WorkspaceError> {
    Ok(match kind {
        WorkspaceKind::Tmux => Box::new(tmux::Tmux::for_project(project)?),
        WorkspaceKind::Herdr => Box::new(herdr::Herdr::connect(herdr::CALL_TIMEOUT)?),
        WorkspaceKind::Headless
        | WorkspaceKind::Acp
        | WorkspaceKind::Ray
        | WorkspaceKind::Jules => {
            return Err(WorkspaceError::Unsupported {
                backend: kind.as_str(),
                what: "open panes",
            });
        }
    })
}

/// Which workspace is selected and why.
#[derive(Debug, Clone, Serialize)]
pub struct Selection {
    pub kind: WorkspaceKind,
    /// `flag`, `env`, `project`, `user` or `default`.
    pub reason: &'static str,
    /// What was set aside on the way: an untrusted project's choice.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error("DROVER_WORKSPACE={0:?} is not a workspace (headless, tmux, herdr, acp, ray, jules)")]
    Env(String),
    #[error("{at} = {value:?} is not a workspace (headless, tmux, herdr, acp, ray, jules)")]
    Project { at: String, value: String },
}

/// The workspace: `flag` > `DROVER_WORKSPACE` > `[workspace] default` in
/// the project's config.toml when the project is trusted, else in the
/// user's > headless. The workspace decides how and where seats' processes
/// start (a Ray cluster, a herdr server), so a project's choice goes through
/// the gate as one; an untrusted project's is set aside, with a note.
pub fn select(config: &Config, flag: Option<WorkspaceKind>) -> Result<Selection, SelectError> {
    if let Some(kind) = flag {
        return Ok(Selection {
            kind,
            reason: "flag",
            ignored: Vec::new(),
        });
    }
    if let Some(value) = std::env::var("DROVER_WORKSPACE")
        .ok()
        .filter(|v| !v.is_empty())
    {
        return WorkspaceKind::parse(&value)
            .map(|kind| Selection {
                kind,
                reason: "env",
                ignored: Vec::new(),
            })
            .ok_or(SelectError::Env(value));
    }
    let keys = ["workspace", "default"];
    let (found, refused) = config.get_for(drover_gate::Effect::Spawn, &keys);
    let ignored = refused.iter().map(drover_config::set_aside).collect();
    let Some((value, file)) = found else {
        return Ok(Selection {
            kind: WorkspaceKind::Headless,
            reason: "default",
            ignored,
        });
    };
    let at = file.locate(&keys);
    let value = value.as_str().ok_or_else(|| SelectError::Project {
        at: at.clone(),
        value: value.to_string(),
    })?;
    WorkspaceKind::parse(value)
        .map(|kind| Selection {
            kind,
            reason: match file.scope {
                Scope::Project => "project",
                Scope::User => "user",
            },
            ignored,
        })
        .ok_or(SelectError::Project {
            at,
            value: value.to_string(),
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
    /// Where the backend listens (herdr's socket), when it has one.
    pub socket: Option<String>,
    pub lacks: &'static [Gap],
}

/// What the configured Ray cluster answered, for its row: the caller asks
/// the cluster (drover's `ray::cluster`), which sits above this crate.
#[derive(Debug, Clone, Default)]
pub struct RayRow {
    pub reachable: bool,
    pub ray_version: Option<String>,
    pub summary: String,
}

/// Every backend's row; `jules` is [`jules::row`]'s answer.
pub fn backends(selection: Option<&Selection>, ray: &RayRow, jules: &jules::Row) -> Vec<Backend> {
    WorkspaceKind::ALL
        .iter()
        .map(|&kind| {
            let mut row = Backend {
                name: kind.as_str(),
                available: false,
                version: None,
                selected: selection.is_some_and(|s| s.kind == kind),
                note: String::new(),
                socket: None,
                lacks: gaps(kind),
            };
            match kind {
                WorkspaceKind::Headless => {
                    row.available = true;
                    row.version = Some(format!("drover {}", env!("CARGO_PKG_VERSION")));
                    row.note = "one non-interactive turn per message; knows every seat state exactly".to_string();
                }
                WorkspaceKind::Tmux => {
                    row.version = tmux::Tmux::version();
                    row.available = row.version.is_some();
                    row.note = "seats in panes a human can attach to (needs hooks installed)".to_string();
                }
                WorkspaceKind::Herdr => {
                    let socket = herdr::socket_path();
                    row.socket = socket.as_ref().map(|p| p.value.display().to_string());
                    let answer = socket.map(|s| {
                        drover_gate::clear(drover_gate::Effect::Connect, "herdr's socket", s)
                            .map_err(herdr::HerdrError::from)
                            .and_then(|s| {
                                herdr::Herdr::at(s, std::time::Duration::from_secs(2)).ping()
                            })
                    });
                    row.note = match &answer {
                        Some(Ok(_)) => "seats in panes of a running herdr server (needs hooks installed); herdr's agent status is a second status source".to_string(),
                        Some(Err(e)) => e.to_string(),
                        None => "no socket path (set HERDR_SOCKET_PATH or HOME)".to_string(),
                    };
                    row.version = answer.and_then(Result::ok);
                    row.available = row.version.is_some();
                }
                WorkspaceKind::Acp => {
                    row.available = true;
                    row.version = Some(format!(
                        "Agent Client Protocol version {}",
                        agent_client_protocol_schema::ProtocolVersion::LATEST
                    ));
                    row.note = "a CLI's ACP mode as a long-lived agent process; turn ends, tool calls and permission questions come from the protocol".to_string();
                }
                WorkspaceKind::Ray => {
                    row.available = ray.reachable;
                    row.version = ray.ray_version.as_ref().map(|v| format!("ray {v}"));
                    row.note = ray.summary.clone();
                }
                WorkspaceKind::Jules => {
                    row.available = jules.available;
                    row.version = jules.version.clone();
                    row.note = jules.summary.clone();
                }
            }
            row
        })
        .collect()
}
