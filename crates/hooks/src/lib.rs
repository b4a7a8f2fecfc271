//! Installing, removing and detecting drover's relay in a CLI's hook config,
//! and writing out the relay binary drover carries ([`embedded`]).
//!
//! The component edits the text (it knows the dialect); the engine owns the
//! file: reads it, checks the edit against it ([`guard`]: only drover's relay
//! entries may come or go), writes it atomically, and never leaves the
//! project (all access goes through a `cap-std` handle on the project
//! directory, so a config path or symlink pointing outside is refused). The
//! first install keeps the original bytes under `.drover/hooks/`, so `remove`
//! can put the user's file back exactly as it was, formatting included. A
//! rewritten file keeps its mode and owner (a settings file can hold a key),
//! the backup is no more readable than the original, and a file its owner
//! cannot write is refused rather than replaced.

use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

pub mod embedded;
mod guard;
#[cfg(test)]
mod properties;

use guard::Document;

use drover_gate::{Cleared, Effect, Provenance, Sourced};
use drover_profile::Profile;
use drover_sandbox::{Adapter, CompileCache, Sandbox, SandboxError};
use drover_state::Keep;
use drover_types::wit;
pub use drover_workspace::shell_quote;

#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("{profile} is hookless (dialect none): there is nothing to install")]
    Hookless { profile: String },
    #[error("{path}: {message}")]
    Config { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot locate the drover executable for the relay command: {0}")]
    Executable(std::io::Error),
    #[error("writing the hook relay: {0}")]
    Relay(std::io::Error),
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error(transparent)]
    Refused(#[from] drover_gate::Refused),
}

/// What a command did to the config file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Change {
    Written,
    Restored,
    Deleted,
    Unchanged,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Status {
    pub config_path: String,
    pub exists: bool,
    pub registered: Vec<String>,
    pub missing: Vec<String>,
}

/// The fast relay's file name: the `drover-relay` crate's binary, which
/// links no WebAssembly runtime. drover carries it ([`embedded`]) and
/// `install` writes it out.
pub const FAST_RELAY: &str = "drover-relay";

/// One way of running the relay: the command line (without the event) and
/// the marker that identifies its entries in a hook config.
#[derive(Debug, Clone, PartialEq)]
pub struct Relay {
    pub command: String,
    pub marker: String,
}

/// The relay hook configs get, and the other form, whose entries an install
/// replaces: the relay drover carries, at the path `install` writes it to;
/// without a data directory (no `HOME` or `XDG_DATA_HOME`), `drover hook
/// --cli NAME`. Nothing is written.
pub fn relay(profile: &Profile) -> Result<(Relay, Relay), HookError> {
    let drover = std::env::current_exe().map_err(HookError::Executable)?;
    let fast = embedded::data_home().map(|home| embedded::path_in(&home));
    Ok(relays_for(&drover, fast.as_deref(), &profile.name))
}

/// (the relay to register, the other form): `fast` when there is one, else
/// `drover hook` run from `drover`.
pub fn relays_for(drover: &Path, fast: Option<&Path>, cli: &str) -> (Relay, Relay) {
    let legacy = relay_for(drover, "hook ", cli);
    match fast {
        Some(fast) => (relay_for(fast, "", cli), legacy),
        // Only the marker of the other form is used (to replace its entries).
        None => (legacy, relay_for(Path::new(FAST_RELAY), "", cli)),
    }
}

/// Writes out the relay drover carries (when there is a data directory)
/// and returns the relays to register, as [`relay`] names them.
fn write_relay(profile: &Profile) -> Result<(Relay, Relay), HookError> {
    let drover = std::env::current_exe().map_err(HookError::Executable)?;
    let fast = match embedded::cleared_data_home()? {
        Some(home) => Some(embedded::write_in(&home).map_err(HookError::Relay)?),
        None => None,
    };
    Ok(relays_for(&drover, fast.as_deref(), &profile.name))
}

/// `<dir>/<program> <subcommand>--cli <name>`, with the marker
/// `<program> <subcommand>--cli`.
fn relay_for(exe: &Path, subcommand: &str, cli: &str) -> Relay {
    let base = exe
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_else(|| "drover".to_string());
    let dir = exe
        .parent()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    let marker = format!("{} {subcommand}--cli", shell_quote(&base));
    // Quote the directory and the basename separately (`'/a b/'drover`) so
    // the marker text appears verbatim in every command.
    let program = if dir.is_empty() {
        shell_quote(&base)
    } else {
        format!("{}{}", shell_quote(&format!("{dir}/")), shell_quote(&base))
    };
    Relay {
        command: format!("{program} {subcommand}--cli {}", shell_quote(cli)),
        marker,
    }
}

/// The install request for the relay to register, and the one for the
/// other relay form (entries an earlier drover wrote).
fn requests(profile: &Profile) -> Result<(wit::HookInstall, wit::HookInstall), HookError> {
    requests_for(profile, relay(profile)?)
}

fn requests_for(
    profile: &Profile,
    (current, other): (Relay, Relay),
) -> Result<(wit::HookInstall, wit::HookInstall), HookError> {
    if profile.hookless() {
        return Err(HookError::Hookless {
            profile: profile.name.clone(),
        });
    }
    let request = |relay: Relay| wit::HookInstall {
        dialect: profile.hooks.dialect.clone(),
        relay_command: relay.command,
        events: profile.hooks.events.clone(),
        marker: relay.marker,
    };
    Ok((request(current), request(other)))
}

struct ConfigFile {
    project: Dir,
    relative: PathBuf,
    display: PathBuf,
}

impl ConfigFile {
    fn open(project: &Path, profile: &Profile) -> Result<ConfigFile, HookError> {
        // Backups go under `.drover/hooks/`: no link may lead them elsewhere.
        drover_state::refuse_links(project, &[".drover", ".drover/hooks"]).map_err(|source| {
            HookError::Io {
                path: project.join(".drover"),
                source,
            }
        })?;
        let dir = Dir::open_ambient_dir(project, ambient_authority()).map_err(|source| {
            HookError::Io {
                path: project.to_path_buf(),
                source,
            }
        })?;
        let relative = PathBuf::from(&profile.hooks.config_path);
        Ok(ConfigFile {
            project: dir,
            display: project.join(&relative),
            relative,
        })
    }

    fn io(&self, source: std::io::Error) -> HookError {
        HookError::Io {
            path: self.display.clone(),
            source,
        }
    }

    /// The file's text, or `None` when it does not exist.
    fn read(&self) -> Result<Option<String>, HookError> {
        match self.project.read(&self.relative) {
            Ok(bytes) => String::from_utf8(bytes)
                .map(Some)
                .map_err(|_| HookError::Config {
                    path: self.display.clone(),
                    message: "is not UTF-8 text".to_string(),
                }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(self.io(e)),
        }
    }

    /// The mode and owner the file has (and keeps when drover rewrites
    /// it), `None` when it does not exist. A file its owner may not write
    /// is refused: the user made it read-only, and drover does not replace
    /// it behind their back.
    fn keep(&self) -> Result<Option<Keep>, HookError> {
        let meta = match self.project.metadata(&self.relative) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io(e)),
        };
        let keep = Keep::of(&meta);
        if keep.mode & 0o200 == 0 {
            return Err(HookError::Config {
                path: self.display.clone(),
                message: format!(
                    "is read-only (mode {:04o}): drover does not replace a file its owner cannot write; make it writable (chmod u+w) to let drover edit it",
                    keep.mode
                ),
            });
        }
        Ok(Some(keep))
    }

    /// Replaces the file with a checked edit (only [`verify`] and a
    /// restorable original make one), keeping `keep`'s mode and owner (a new
    /// file gets the default mode).
    fn write(&self, text: Cleared<String>, keep: Option<Keep>) -> Result<(), HookError> {
        drover_state::write_atomic_in_as(&self.project, &self.relative, text.as_bytes(), keep)
            .map_err(|e| self.io(e))
    }

    fn delete(&self) -> Result<(), HookError> {
        match self.project.remove_file(&self.relative) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(self.io(e)),
        }
    }

    /// Where the pre-install original is kept.
    fn backup_path(&self, profile: &Profile) -> PathBuf {
        let flat = self.relative.to_string_lossy().replace(['/', '\\'], "_");
        PathBuf::from(".drover")
            .join("hooks")
            .join(format!("{}--{flat}.orig", profile.name))
    }
}

fn adapter_error(config: &ConfigFile, error: wit::AdapterError) -> HookError {
    let message = match error {
        wit::AdapterError::InvalidInput(m) => m,
        wit::AdapterError::Unsupported(m) => format!("unsupported: {m}"),
    };
    HookError::Config {
        path: config.display.clone(),
        message,
    }
}

/// Adds drover's relay entries. The edit is checked first (it may only add
/// relay entries); the user's original bytes are kept before the first write.
pub fn install(adapter: &Adapter, profile: &Profile, project: &Path) -> Result<Change, HookError> {
    if profile.hookless() {
        return Err(HookError::Hookless {
            profile: profile.name.clone(),
        });
    }
    let requests = requests_for(profile, write_relay(profile)?)?;
    install_with(adapter, profile, project, requests)
}

fn install_with(
    adapter: &Adapter,
    profile: &Profile,
    project: &Path,
    (request, other): (wit::HookInstall, wit::HookInstall),
) -> Result<Change, HookError> {
    let config = ConfigFile::open(project, profile)?;
    let existing = config.read()?;
    let before = existing.as_deref().unwrap_or("");
    // Entries of the other relay form (`drover hook` from an older install,
    // say) are replaced, not doubled: each would report every hook.
    let mut migrated = None;
    if before.contains(&other.marker) {
        let edit = adapter
            .remove_hooks(before, &other)?
            .map_err(|e| adapter_error(&config, e))?;
        if edit.changed {
            verify(adapter, &config, &other, before, &edit.text, true)?;
            migrated = Some(edit.text);
        }
    }
    let base = migrated.as_deref().unwrap_or(before);
    let edit = adapter
        .install_hooks(base, &request)?
        .map_err(|e| adapter_error(&config, e))?;
    if !edit.changed && migrated.is_none() {
        return Ok(Change::Unchanged);
    }
    let checked = verify(adapter, &config, &request, base, &edit.text, false)?;
    let keep = config.keep()?;
    let backup = config.backup_path(profile);
    if !config.project.exists(&backup) {
        // The backup holds the same bytes, so it is no more readable than
        // the original (an absent original is recorded as an empty backup).
        let backup_keep = keep.map_or(Keep::PRIVATE, |k| Keep {
            mode: k.mode & 0o666,
            ..k
        });
        drover_state::write_atomic_in_as(
            &config.project,
            &backup,
            before.as_bytes(),
            Some(backup_keep),
        )
        .map_err(|e| config.io(e))?;
    }
    config.write(checked, keep)?;
    Ok(Change::Written)
}

/// Removes drover's relay entries. When the file is the original plus
/// drover's entries, the original bytes go back (formatting included,
/// whichever drover version installed them); otherwise the component's
/// removal is checked (it may only take away drover's entries) and written.
pub fn remove(adapter: &Adapter, profile: &Profile, project: &Path) -> Result<Change, HookError> {
    remove_with(adapter, profile, project, requests(profile)?)
}

fn remove_with(
    adapter: &Adapter,
    profile: &Profile,
    project: &Path,
    (request, other): (wit::HookInstall, wit::HookInstall),
) -> Result<Change, HookError> {
    let config = ConfigFile::open(project, profile)?;
    let Some(existing) = config.read()? else {
        return Ok(Change::Unchanged);
    };
    let backup_path = config.backup_path(profile);
    let original = config
        .project
        .read(&backup_path)
        .ok()
        .and_then(|b| String::from_utf8(b).ok());
    if let Some(original) = original
        && [&request, &other]
            .iter()
            .any(|r| restorable(&config, &original, &existing, r))
    {
        let keep = config.keep()?;
        let change = if original.is_empty() {
            config.delete()?;
            Change::Deleted
        } else {
            // The original's mode, from its backup, unless the file has
            // been narrowed since: the narrower of the two.
            let kept = config
                .project
                .metadata(&backup_path)
                .ok()
                .map(|m| Keep::of(&m));
            let keep = match (keep, kept) {
                (Some(current), Some(original)) => Some(Keep {
                    mode: current.mode & original.mode,
                    ..current
                }),
                (current, _) => current,
            };
            config.write(checked_edit(original)?, keep)?;
            Change::Restored
        };
        let _ = config.project.remove_file(&backup_path);
        return Ok(change);
    }
    let mut text = existing.clone();
    let mut checked = None;
    // The component always judges the file for the current relay (so a
    // component that would wipe it is refused, not skipped); the other
    // relay form only when its entries are there.
    for (request, always) in [(&request, true), (&other, false)] {
        if !always && !text.contains(&request.marker) {
            continue;
        }
        let edit = adapter
            .remove_hooks(&text, request)?
            .map_err(|e| adapter_error(&config, e))?;
        if edit.changed {
            checked = Some(verify(adapter, &config, request, &text, &edit.text, true)?);
            text = edit.text;
        }
    }
    let Some(checked) = checked.filter(|_| text != existing) else {
        return Ok(Change::Unchanged);
    };
    let keep = config.keep()?;
    let change = if checked.is_empty() {
        config.delete()?;
        Change::Deleted
    } else {
        config.write(checked, keep)?;
        Change::Written
    };
    let _ = config.project.remove_file(&backup_path);
    Ok(change)
}

/// Whether `current` is the kept `original` plus drover's entries only.
fn restorable(
    config: &ConfigFile,
    original: &str,
    current: &str,
    request: &wit::HookInstall,
) -> bool {
    match (
        guard::parse(&config.relative, original),
        guard::parse(&config.relative, current),
    ) {
        (Ok(Document::Tree(original)), Ok(Document::Tree(current))) => guard::only_drover_added(
            &original,
            &current,
            guard::hook_table(&request.dialect),
            &request.marker,
        ),
        // A plugin file drover wrote over nothing (or over the user's file).
        (Ok(Document::Opaque), Ok(Document::Opaque)) => current.contains(&request.marker),
        _ => false,
    }
}

/// The user's file plus (or minus) drover's own relay entries, once the
/// guard has shown that is all it is: drover's to write. A component's text
/// is program output, which the gate never lets write a file; this is the
/// one place it becomes an edit drover made.
fn checked_edit(text: String) -> Result<Cleared<String>, HookError> {
    let edit = Sourced::new(text, Provenance::Created);
    Ok(drover_gate::clear(
        Effect::Write,
        "the checked hook-config edit",
        edit,
    )?)
}

/// Refuses an edit that does more than add (or remove) drover's entries;
/// the file is left as it was. A file the check cannot parse (a plugin's
/// source) is accepted from a built-in component, and from any other only
/// when it is exactly what the built-in component for that dialect writes.
/// What passes comes back cleared for writing.
fn verify(
    adapter: &Adapter,
    config: &ConfigFile,
    request: &wit::HookInstall,
    before: &str,
    after: &str,
    removing: bool,
) -> Result<Cleared<String>, HookError> {
    let refuse = |message: String| HookError::Config {
        path: config.display.clone(),
        message: format!(
            "refused the {} component {}'s edit, and left the file as it was: {message}",
            if adapter.is_builtin() {
                "built-in"
            } else {
                "third-party"
            },
            adapter.name()
        ),
    };
    let old = guard::parse(&config.relative, before)
        .map_err(|e| refuse(format!("the file is {e}, so the edit cannot be checked")))?;
    let new = guard::parse(&config.relative, after)
        .map_err(|e| refuse(format!("the edited text is {e}")))?;
    match (old, new) {
        (Document::Tree(old), Document::Tree(new)) => {
            let table = guard::hook_table(&request.dialect);
            let checked = if removing {
                guard::check_remove(&old, &new, table, &request.marker)
            } else {
                guard::check_install(&old, &new, table, &request.relay_command, &request.marker)
            };
            checked.map_err(refuse)?;
        }
        _ if adapter.is_builtin() => {}
        _ => match reference_edit(&request.dialect, before, request, removing)? {
            Some(reference) if reference == after => {}
            Some(_) => {
                return Err(refuse(format!(
                    "a {} file is code the CLI runs, and this is not the file drover's own component writes",
                    request.dialect
                )));
            }
            None => {
                return Err(refuse(format!(
                    "a {} file is not JSON or TOML, and no built-in component knows the dialect to compare with",
                    request.dialect
                )));
            }
        },
    }
    checked_edit(after.to_string())
}

/// What the built-in component that knows `dialect` would write.
fn reference_edit(
    dialect: &str,
    before: &str,
    request: &wit::HookInstall,
    removing: bool,
) -> Result<Option<String>, HookError> {
    let sandbox = Sandbox::new(CompileCache::default_location())?;
    for builtin in drover_profile::builtin::all() {
        let (adapter, _) = sandbox.load_builtin(builtin, drover_sandbox::Limits::default())?;
        if !adapter.describe()?.dialects.iter().any(|d| d == dialect) {
            continue;
        }
        let edit = if removing {
            adapter.remove_hooks(before, request)?
        } else {
            adapter.install_hooks(before, request)?
        };
        return Ok(edit.ok().map(|e| e.text));
    }
    Ok(None)
}

/// Which mapped events carry the relay.
pub fn status(adapter: &Adapter, profile: &Profile, project: &Path) -> Result<Status, HookError> {
    status_with(adapter, profile, project, requests(profile)?)
}

fn status_with(
    adapter: &Adapter,
    profile: &Profile,
    project: &Path,
    (request, other): (wit::HookInstall, wit::HookInstall),
) -> Result<Status, HookError> {
    let config = ConfigFile::open(project, profile)?;
    let existing = config.read()?;
    let text = existing.as_deref().unwrap_or("");
    // Entries of the other relay form work too (both relays drop the same
    // events); report them when they are what the file has.
    let request = if !text.contains(&request.marker) && text.contains(&other.marker) {
        other
    } else {
        request
    };
    let detected = adapter
        .detect_hooks(text, &request)?
        .map_err(|e| adapter_error(&config, e))?;
    Ok(Status {
        config_path: profile.hooks.config_path.clone(),
        exists: existing.is_some(),
        registered: detected.registered,
        missing: detected.missing,
    })
}

#[cfg(test)]
mod tests;
