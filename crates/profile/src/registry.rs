//! Which component bytes implement a profile, and loading them.
//!
//! A component name resolves to `<project>/.drover/adapters/<name>.wasm`, then
//! `~/.config/drover/adapters/<name>.wasm`, then the built-in of that name; a
//! path names a file directly. A profile that names no component and has
//! none of its own name is driven by the built-in generic adapter, from its
//! data alone.
//!
//! Parsing (hook payloads, transcripts, screens, faults) needs no trust: the
//! sandbox gives a component nothing to abuse (docs/sandbox.md). Launching
//! does: a component chooses the CLI's arguments, so a project component
//! ([`is_project_component`]) launches only once the user trusted its bytes
//! (drover-drive's `launch`, docs/trust.md). User components and built-ins
//! are the user's own choice.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::{ComponentRef, Profile};
use drover_sandbox::{Adapter, CacheOutcome, Limits, Sandbox, SandboxError};

/// Where a component's bytes came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    Builtin,
    File(PathBuf),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Builtin => write!(f, "built-in"),
            Origin::File(p) => write!(f, "{}", p.display()),
        }
    }
}

/// The built-in component that drives profiles no component knows.
pub const GENERIC: &str = "generic";

pub struct ComponentBytes {
    pub name: String,
    pub bytes: Cow<'static, [u8]>,
    pub sha256: String,
    pub origin: Origin,
}

impl ComponentBytes {
    /// Whether this is the generic adapter (driven by the profile's data).
    pub fn is_generic(&self) -> bool {
        self.origin == Origin::Builtin && self.name == GENERIC
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error(transparent)]
    Link(#[from] std::io::Error),
    #[error("no component named '{name}' (not in {searched}, and not built in)")]
    Unknown { name: String, searched: String },
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
}

/// `~/.config/drover/adapters`: the user's own components.
pub fn user_adapters_dir() -> Option<PathBuf> {
    crate::user_dir().and_then(|p| p.parent().map(|d| d.join("adapters")))
}

pub fn project_adapters_dir(project: &Path) -> PathBuf {
    project.join(".drover").join("adapters")
}

/// Reads a component file and hashes it: a regular file of at most
/// `COMPONENT_MAX` bytes (a checkout may name a FIFO, a device or a link).
pub fn read_file(name: &str, path: &Path) -> Result<ComponentBytes, ResolveError> {
    // A component in a checkout's `.drover/` is read where it is, never
    // through a link; one of the user's own (`~/.config/drover/adapters`, a
    // path on the command line or in their profile) may be a link their
    // dotfiles manager made, so it is followed to the file it names.
    let readable = match drover_state::split(path) {
        Some(_) => path.to_path_buf(),
        None => path.canonicalize().unwrap_or_else(|_| path.to_path_buf()),
    };
    let bytes = drover_gate::read::read_bounded(&readable, drover_gate::read::COMPONENT_MAX)
        .map_err(|e| SandboxError::Read {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    let sha256 = digest(&bytes);
    Ok(ComponentBytes {
        name: name.to_string(),
        bytes: Cow::Owned(bytes),
        sha256,
        origin: Origin::File(path.to_path_buf()),
    })
}

/// Which component a reference means, without reading it: its name and
/// where it is.
pub fn locate(component: &ComponentRef, project: &Path) -> Result<(String, Origin), ResolveError> {
    match component {
        ComponentRef::File(path) => {
            let name = path.file_stem().map_or_else(
                || "component".to_string(),
                |s| s.to_string_lossy().into_owned(),
            );
            Ok((name, Origin::File(path.clone())))
        }
        ComponentRef::Builtin(name) => {
            let (found, searched) = by_name(name, project)?;
            found.ok_or_else(|| ResolveError::Unknown {
                name: name.clone(),
                searched,
            })
        }
        ComponentRef::Implicit(name) => {
            let (found, searched) = by_name(name, project)?;
            match found {
                Some(found) => Ok(found),
                None if crate::builtin::find(GENERIC).is_some() => {
                    Ok((GENERIC.to_string(), Origin::Builtin))
                }
                None => Err(ResolveError::Unknown {
                    name: name.clone(),
                    searched,
                }),
            }
        }
    }
}

/// The bytes for a component reference.
pub fn resolve(component: &ComponentRef, project: &Path) -> Result<ComponentBytes, ResolveError> {
    let (name, origin) = locate(component, project)?;
    match origin {
        Origin::File(path) => read_file(&name, &path),
        Origin::Builtin => {
            let builtin = crate::builtin::find(&name).ok_or_else(|| ResolveError::Unknown {
                name: name.clone(),
                searched: "the built-in components".to_string(),
            })?;
            Ok(ComponentBytes {
                name,
                bytes: Cow::Borrowed(builtin.bytes),
                sha256: builtin.sha256.to_string(),
                origin: Origin::Builtin,
            })
        }
    }
}

/// Whether the component a profile binds (found at `origin`) is the
/// project's: a file in `.drover/adapters/`, or any file a project profile
/// names by path (inside the checkout or not). Such a component launches
/// only once trusted.
pub fn is_project_component(profile: &Profile, origin: &Origin, project: &Path) -> bool {
    let Origin::File(path) = origin else {
        return false;
    };
    path.starts_with(project_adapters_dir(project))
        || (matches!(profile.component, ComponentRef::File(_))
            && matches!(profile.source, crate::ProfileSource::Project(_)))
}

/// What drives a profile, in words: `claude`, `/p/x.wasm`, or `generic
/// (dialect claude-settings-json)`.
pub fn driver_label(profile: &Profile, project: &Path) -> String {
    match locate(&profile.component, project) {
        Ok((name, Origin::Builtin)) if name == GENERIC => {
            format!("generic (dialect {})", profile.hooks.dialect)
        }
        Ok((name, Origin::Builtin)) => name,
        Ok((name, origin @ Origin::File(_))) if is_project_component(profile, &origin, project) => {
            let shadows = if crate::builtin::find(&name).is_some() {
                format!(", in place of the built-in {name}")
            } else {
                String::new()
            };
            format!("{origin} (project component{shadows}; needs trust to launch)")
        }
        Ok((_, Origin::File(path))) => path.display().to_string(),
        Err(_) => format!("{} (missing)", profile.component),
    }
}

/// A project or user component file called `name`, else the built-in; and
/// the directories searched, for the error when there is neither.
fn by_name(name: &str, project: &Path) -> Result<(Option<(String, Origin)>, String), ResolveError> {
    drover_state::refuse_links(project, &[".drover", ".drover/adapters"])?;
    let mut searched = Vec::new();
    for dir in [Some(project_adapters_dir(project)), user_adapters_dir()]
        .into_iter()
        .flatten()
    {
        let candidate = dir.join(format!("{name}.wasm"));
        if candidate.is_file() {
            return Ok((
                Some((name.to_string(), Origin::File(candidate))),
                String::new(),
            ));
        }
        searched.push(dir.display().to_string());
    }
    let builtin = crate::builtin::find(name).map(|_| (name.to_string(), Origin::Builtin));
    Ok((builtin, searched.join(", ")))
}

/// Binds a profile to its component: the adapter that drives it, loaded
/// under the profile's limits in the default sandbox.
pub fn bind(profile: &Profile, project: &Path) -> Result<Adapter, ResolveError> {
    bind_in(&Sandbox::with_default_cache()?, profile, project)
}

/// [`bind`] in a sandbox the caller keeps for more loads.
pub fn bind_in(
    sandbox: &Sandbox,
    profile: &Profile,
    project: &Path,
) -> Result<Adapter, ResolveError> {
    load_with(sandbox, &profile.component, project, profile.limits()).map(|(adapter, _, _)| adapter)
}

pub fn load_with(
    sandbox: &Sandbox,
    component: &ComponentRef,
    project: &Path,
    limits: Limits,
) -> Result<(Adapter, Origin, CacheOutcome), ResolveError> {
    let found = resolve(component, project)?;
    let (adapter, outcome) = load_resolved(sandbox, &found, limits)?;
    Ok((adapter, found.origin, outcome))
}

/// Loads bytes [`resolve`] read: the built-in's precompiled form, or the
/// file's exact bytes (the ones a trust check hashed).
pub fn load_resolved(
    sandbox: &Sandbox,
    found: &ComponentBytes,
    limits: Limits,
) -> Result<(Adapter, CacheOutcome), ResolveError> {
    let builtin = match found.origin {
        Origin::Builtin => crate::builtin::find(&found.name),
        Origin::File(_) => None,
    };
    let (adapter, outcome) = match builtin {
        Some(builtin) => sandbox.load_builtin(builtin, limits)?,
        None => sandbox.load(&found.name, &found.bytes, &found.sha256, limits)?,
    };
    Ok((adapter, outcome))
}

/// The SHA-256 of `bytes`, in hex: what trust records and profiles carry.
pub use drover_config::digest;

#[cfg(test)]
mod tests {
    use super::*;

    /// The user's own component may be a link (dotfiles); a checkout's may
    /// not, since the checkout chose where it leads.
    #[test]
    fn links_are_followed_for_the_users_components_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let real = dir.path().join("dotfiles/x.wasm");
        std::fs::create_dir_all(real.parent().expect("parent")).expect("dirs");
        std::fs::write(&real, b"\0asm").expect("write");

        let user = dir.path().join("config/drover/adapters/x.wasm");
        std::fs::create_dir_all(user.parent().expect("parent")).expect("dirs");
        std::os::unix::fs::symlink(&real, &user).expect("link");
        assert_eq!(
            read_file("x", &user).expect("followed").sha256,
            digest(b"\0asm")
        );

        let project = dir.path().join("p/.drover/adapters/x.wasm");
        std::fs::create_dir_all(project.parent().expect("parent")).expect("dirs");
        std::os::unix::fs::symlink(&real, &project).expect("link");
        let refused = read_file("x", &project)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(refused.contains("symbolic link"), "{refused}");
    }
}
