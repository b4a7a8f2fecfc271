//! The relay binary drover carries (built by `build.rs`: statically linked
//! on glibc Linux), and writing it out where hook configs can run it.
//!
//! `hooks install` writes it once to
//! `$XDG_DATA_HOME/drover/relay/<hash>/drover-relay` (else under
//! `~/.local/share`), `<hash>` the start of its SHA-256: each drover
//! version gets its own file, an upgrade never rewrites a binary a running
//! hook may be executing, and the file name keeps the marker
//! (`drover-relay --cli`) that finds drover's entries in a hook config.
//! Every directory below the data directory is opened without following a
//! link; the file is created exclusively under a temporary name, written
//! fully, made 0755 and renamed into place. A file already there is used
//! only when it holds exactly these bytes.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use drover_gate::{Cleared, Effect, Provenance, Sourced};
use drover_state::Keep;

/// The relay's bytes.
pub const BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/drover-relay"));

/// How a relay binary is linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Linking {
    /// No dynamic loader runs: a hook costs about a process spawn.
    Static,
    /// This target could not link it statically (not glibc Linux, or no
    /// static `libc.a`): each hook also pays the dynamic loader.
    Dynamic,
}

include!(concat!(env!("OUT_DIR"), "/linking.rs"));

/// The relay's directory name: the first 16 hex digits of its SHA-256.
pub fn digest() -> &'static str {
    static DIGEST: OnceLock<String> = OnceLock::new();
    DIGEST.get_or_init(|| {
        use sha2::{Digest, Sha256};
        Sha256::digest(BYTES)
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect()
    })
}

/// The user's data directory (`$XDG_DATA_HOME`, else `~/.local/share`),
/// `None` without either variable.
pub fn data_home() -> Option<PathBuf> {
    let from = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    from("XDG_DATA_HOME").or_else(|| from("HOME").map(|home| home.join(".local/share")))
}

/// Where the relay lives below a data directory.
fn below() -> PathBuf {
    Path::new("drover").join("relay").join(digest())
}

/// The path `hooks install` registers under `data_home`.
pub fn path_in(data_home: &Path) -> PathBuf {
    data_home.join(below()).join(crate::FAST_RELAY)
}

/// The data directory, cleared for writing: the user's own environment
/// chooses it, never a checkout.
pub fn cleared_data_home() -> Result<Option<Cleared<PathBuf>>, drover_gate::Refused> {
    data_home()
        .map(|home| {
            drover_gate::clear(
                Effect::Write,
                "the data directory the hook relay is written to",
                Sourced::new(home, Provenance::User),
            )
        })
        .transpose()
}

/// Writes the relay under `data_home` unless the same bytes are already
/// there, and returns its path.
pub fn write_in(data_home: &Cleared<PathBuf>) -> std::io::Result<PathBuf> {
    let home: &Path = data_home;
    // The data directory itself is the user's to place (a link is theirs to
    // make); below it, nothing is followed.
    std::fs::create_dir_all(home)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", home.display())))?;
    let dir = drover_state::open_dir(home, &below(), true)?;
    let path = path_in(home);
    if holds_the_relay(&dir) {
        return Ok(path);
    }
    let executable = Keep {
        mode: 0o755,
        owner: None,
    };
    drover_state::write_atomic_in_as(&dir, Path::new(crate::FAST_RELAY), BYTES, Some(executable))
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    Ok(path)
}

/// Whether `dir` holds the relay: a regular file (not a link), executable,
/// writable by no one else, with exactly [`BYTES`].
fn holds_the_relay(dir: &cap_std::fs::Dir) -> bool {
    use cap_std::fs::PermissionsExt;
    let Ok(meta) = dir.symlink_metadata(crate::FAST_RELAY) else {
        return false;
    };
    let mode = meta.permissions().mode();
    meta.is_file()
        && meta.len() == BYTES.len() as u64
        && mode & 0o100 != 0
        && mode & 0o022 == 0
        && dir.read(crate::FAST_RELAY).is_ok_and(|b| b == BYTES)
}

/// Whether the relay `path` names is there as [`write_in`] leaves it (for
/// `drover doctor`).
pub fn is_written(path: &Path) -> bool {
    path.parent()
        .and_then(|dir| cap_std::fs::Dir::open_ambient_dir(dir, cap_std::ambient_authority()).ok())
        .is_some_and(|dir| holds_the_relay(&dir))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn cleared(path: &Path) -> Cleared<PathBuf> {
        drover_gate::clear(
            Effect::Write,
            "test",
            Sourced::new(path.to_path_buf(), Provenance::User),
        )
        .expect("cleared")
    }

    #[test]
    fn the_relay_is_written_once_executable_and_named_by_its_hash() {
        let home = tempfile::tempdir().expect("home");
        let data = home.path().join("share");
        let path = write_in(&cleared(&data)).expect("written");
        assert_eq!(path, path_in(&data));
        assert!(path.ends_with(format!("drover/relay/{}/drover-relay", digest())));
        assert_eq!(std::fs::read(&path).expect("read"), BYTES);
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        assert!(is_written(&path));
        // Written already: the same file stays (a running hook may be
        // executing it).
        let inode =
            |p: &Path| std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(p).expect("meta"));
        let before = inode(&path);
        assert_eq!(write_in(&cleared(&data)).expect("again"), path);
        assert_eq!(inode(&path), before);
        // Other bytes at its name are replaced, not used.
        std::fs::write(&path, b"#!/bin/sh\n").expect("tamper");
        assert!(!is_written(&path));
        write_in(&cleared(&data)).expect("rewritten");
        assert_eq!(std::fs::read(&path).expect("read"), BYTES);
    }

    #[test]
    fn the_relay_runs_inert_outside_a_session() {
        let home = tempfile::tempdir().expect("home");
        let path = write_in(&cleared(home.path())).expect("written");
        let out = std::process::Command::new(&path)
            .args(["--cli", "claude", "Stop"])
            .env_remove("DROVER_RUN_DIR")
            .env_remove("DROVER_TASK_ID")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("the relay runs");
        assert!(out.status.success(), "{out:?}");
        assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    }
}
