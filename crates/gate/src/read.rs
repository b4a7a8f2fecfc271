//! Bounded reads of files drover does not control: anything in a checkout
//! (`.drover/` included) and every path a component names.
//!
//! Such a file may be a FIFO (a read would block forever), a device such as
//! `/dev/zero` (a read would never end), or a link out of where it claims to
//! be. So: the last component is opened without following links and
//! without blocking, only a regular file is read, and never more than a cap.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use crate::{Cleared, Effect, Provenance, Refused, Sourced, clear};

/// The cap for a settings file (a profile, `config.toml`, a record).
pub const SETTINGS_MAX: u64 = 4 << 20;
/// The cap for a component (`.wasm`).
pub const COMPONENT_MAX: u64 = 64 << 20;
/// The cap for one transcript a component tallies (read as a stream): far
/// above any real one, so only a file that never stops growing meets it.
pub const TRANSCRIPT_MAX: u64 = 16 << 30;

/// Opens `path` for reading if it is a regular file of at most `max` bytes
/// (its last component not a link); the file and its size. For files read
/// in a stream (transcripts), where [`read_bounded`] would hold too much.
pub fn open_regular(path: &Path, max: u64) -> std::io::Result<(File, u64)> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                refusal(
                    path,
                    "is a symbolic link; drover does not follow links here".to_string(),
                )
            } else {
                e
            }
        })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refusal(
            path,
            format!(
                "is not a regular file (a {}); drover reads only regular files here",
                kind(&meta.file_type())
            ),
        ));
    }
    if meta.len() > max {
        return Err(refusal(
            path,
            format!(
                "is {} bytes, over drover's limit of {max} for this file",
                meta.len()
            ),
        ));
    }
    Ok((file, meta.len()))
}

fn refusal(path: &Path, why: String) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("{}: {why}", path.display()),
    )
}

/// Reads `path` if it is a regular file of at most `max` bytes.
pub fn read_bounded(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let (file, len) = open_regular(path, max)?;
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(refusal(
            path,
            format!("grew past drover's limit of {max} bytes while being read"),
        ));
    }
    Ok(bytes)
}

/// [`read_bounded`], as UTF-8 text.
pub fn read_text_bounded(path: &Path, max: u64) -> std::io::Result<String> {
    String::from_utf8(read_bounded(path, max)?).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{}: not UTF-8 text (byte {})",
                path.display(),
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// Where files may be read for a component: the directories its CLI keeps
/// its files in (and the run's own), never a secret store.
///
/// A component names the files it wants read (`transcript-locations`); a
/// stranger's component could name `~/.ssh/id_rsa`. Each root is cleared
/// through the gate for [`Effect::ReadForComponent`] by where it came from,
/// and a path is let through only when, with every link resolved, it lies
/// under one: an absolute path elsewhere, a `..` escape, or a link out of
/// the root is refused.
#[derive(Debug, Clone, Default)]
pub struct Roots {
    roots: Vec<Root>,
    denied: Vec<PathBuf>,
}

#[derive(Debug, Clone)]
struct Root {
    dir: PathBuf,
    from: Provenance,
}

impl Roots {
    /// No roots yet. Nothing under `denied` (see [`secret_stores`]) is ever
    /// let through, whatever root it is under.
    pub fn new(denied: Vec<PathBuf>) -> Roots {
        let denied = denied
            .into_iter()
            .flat_map(|d| {
                let resolved = std::fs::canonicalize(&d).ok();
                std::iter::once(d).chain(resolved)
            })
            .collect();
        Roots {
            roots: Vec::new(),
            denied,
        }
    }

    /// Adds `dir` (`what` says what it is, for a refusal) as a root, if its
    /// source may drive a read for a component and it is not `/`, not
    /// relative, has no `..`, and is no secret store.
    pub fn add(&mut self, what: &str, dir: Sourced<PathBuf>) -> Result<(), Refused> {
        let from = dir.from;
        let refuse = |reason: String| {
            Refused::new(
                Effect::ReadForComponent,
                format!("{what} {}", dir.value.display()),
                from,
                reason,
            )
        };
        if let Some(why) = not_plain(&dir.value) {
            return Err(refuse(why.to_string()));
        }
        if dir.value.parent().is_none() {
            return Err(refuse("it is the whole file system".to_string()));
        }
        let resolved = std::fs::canonicalize(&dir.value).unwrap_or_else(|_| dir.value.clone());
        for path in [&dir.value, &resolved] {
            if let Some(secret) = self.denied.iter().find(|d| path.starts_with(d)) {
                return Err(refuse(format!(
                    "it lies in {}, which holds secrets",
                    secret.display()
                )));
            }
        }
        let cleared = clear(Effect::ReadForComponent, what, Sourced::new(resolved, from))?;
        self.roots.push(Root {
            from: cleared.from(),
            dir: cleared.into_inner(),
        });
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.roots.is_empty()
    }

    /// Adds every root of `other`; its secret stores stay denied.
    pub fn merge(&mut self, other: Roots) {
        self.roots.extend(other.roots);
        for secret in other.denied {
            if !self.denied.contains(&secret) {
                self.denied.push(secret);
            }
        }
    }

    /// `path` (`what` says what it is) with every link resolved, cleared for
    /// a read for a component, if it lies under a root and in no secret
    /// store; it carries its root's provenance.
    pub fn confine(&self, what: &str, path: Sourced<&Path>) -> Result<Cleared<PathBuf>, Refused> {
        let refuse = |reason: String| {
            Refused::new(
                Effect::ReadForComponent,
                format!("{what} {}", path.value.display()),
                path.from,
                reason,
            )
        };
        if let Some(why) = not_plain(path.value) {
            return Err(refuse(why.to_string()));
        }
        let resolved = std::fs::canonicalize(path.value).map_err(|e| refuse(e.to_string()))?;
        if let Some(secret) = self.denied.iter().find(|d| resolved.starts_with(d)) {
            return Err(refuse(format!(
                "it lies in {}, which holds secrets",
                secret.display()
            )));
        }
        match self.roots.iter().find(|r| resolved.starts_with(&r.dir)) {
            Some(root) => clear(
                Effect::ReadForComponent,
                what,
                Sourced::new(resolved, root.from),
            ),
            None => Err(refuse(format!(
                "it lies outside the CLI's own directories ({}); drover does not follow a path or link out of them",
                self.roots
                    .iter()
                    .map(|r| r.dir.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}

/// Why a path cannot be a root or be confined: relative, or with `..`.
fn not_plain(path: &Path) -> Option<&'static str> {
    if !path.is_absolute() {
        Some("it is not an absolute path")
    } else if path.components().any(|c| c == Component::ParentDir) {
        Some("it climbs out with `..`")
    } else {
        None
    }
}

/// Where a user keeps secrets under `home`, and drover's own settings and
/// record key: never read for a component, even under a root that holds
/// them.
pub fn secret_stores(home: &Path) -> Vec<PathBuf> {
    const UNDER_HOME: [&str; 25] = [
        ".ssh",
        ".gnupg",
        ".aws",
        ".azure",
        ".kube",
        ".docker",
        ".netrc",
        ".git-credentials",
        ".password-store",
        ".pki",
        ".npmrc",
        ".pypirc",
        ".cargo/credentials",
        ".cargo/credentials.toml",
        ".config/gh",
        ".config/gcloud",
        ".local/share/keyrings",
        ".bash_history",
        ".zsh_history",
        // The coding CLIs' own logins, beside the transcripts drover reads.
        ".claude/.credentials.json",
        ".codex/auth.json",
        ".gemini/oauth_creds.json",
        ".local/share/opencode/auth.json",
        ".config/github-copilot",
        ".config/drover",
    ];
    let mut stores: Vec<PathBuf> = UNDER_HOME.iter().map(|p| home.join(p)).collect();
    if let Some(config) = std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        stores.push(PathBuf::from(config).join("drover"));
    }
    stores.extend(crate::seal::state_dir());
    stores
}

/// Opens a file cleared for a read for a component ([`Roots::confine`]) as
/// [`open_regular`] does.
pub fn open_for_component(path: &Cleared<PathBuf>, max: u64) -> std::io::Result<(File, u64)> {
    if path.effect() != Effect::ReadForComponent {
        return Err(refusal(
            path.get(),
            format!("was cleared to {}, not to be read", path.effect().as_str()),
        ));
    }
    open_regular(path.get(), max)
}

fn kind(file_type: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if file_type.is_dir() {
        "directory"
    } else if file_type.is_fifo() {
        "FIFO"
    } else if file_type.is_char_device() || file_type.is_block_device() {
        "device"
    } else if file_type.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_cap_are_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("a.toml");
        std::fs::write(&file, "name = 'x'\n").expect("write");
        assert_eq!(read_bounded(&file, 100).expect("read"), b"name = 'x'\n");
        let big = read_bounded(&file, 4).expect_err("over the cap");
        assert!(
            big.to_string().contains("over drover's limit of 4"),
            "{big}"
        );

        let link = dir.path().join("zero.toml");
        std::os::unix::fs::symlink("/dev/zero", &link).expect("symlink");
        let linked = read_bounded(&link, 100).expect_err("a link");
        assert!(linked.to_string().contains("symbolic link"), "{linked}");

        let device = read_bounded(Path::new("/dev/zero"), 100).expect_err("a device");
        assert!(device.to_string().contains("device"), "{device}");

        let fifo = dir.path().join("config.toml");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let fifo_err = read_bounded(&fifo, 100).expect_err("a FIFO");
        assert!(fifo_err.to_string().contains("FIFO"), "{fifo_err}");
    }

    #[test]
    fn roots_let_through_only_what_lies_under_them_with_links_resolved() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let claude = home.join(".claude/projects");
        std::fs::create_dir_all(&claude).expect("mkdir");
        std::fs::create_dir_all(home.join(".ssh")).expect("mkdir");
        std::fs::write(home.join(".ssh/id_rsa"), "key").expect("write");
        std::fs::write(claude.join("s.jsonl"), "{}").expect("write");
        std::fs::write(dir.path().join("elsewhere"), "x").expect("write");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), claude.join("out.jsonl"))
            .expect("symlink");
        let mut roots = Roots::new(secret_stores(&home));
        roots
            .add(
                "the transcript root",
                Sourced::new(home.join(".claude"), Provenance::Output),
            )
            .expect("a CLI's own directory");
        let named = |p: &Path| roots.confine("the transcript", Sourced::new(p, Provenance::Output));

        let inside = named(&claude.join("s.jsonl")).expect("under the root");
        assert_eq!(inside.effect(), Effect::ReadForComponent);
        assert!(open_for_component(&inside, 100).is_ok());

        let secret = named(&home.join(".ssh/id_rsa")).expect_err("a secret store");
        assert!(secret.to_string().contains("holds secrets"), "{secret}");
        let escape = named(&claude.join("../../.ssh/id_rsa")).expect_err("`..`");
        assert!(escape.to_string().contains("`..`"), "{escape}");
        let linked = named(&claude.join("out.jsonl")).expect_err("a link out");
        assert!(linked.to_string().contains("outside"), "{linked}");
        let absolute = named(Path::new("/etc/passwd")).expect_err("elsewhere");
        assert!(absolute.to_string().contains("outside"), "{absolute}");

        for bad in [PathBuf::from("/"), home.join(".ssh"), PathBuf::from("rel")] {
            assert!(
                roots
                    .add("a root", Sourced::new(bad.clone(), Provenance::Output))
                    .is_err(),
                "{bad:?}"
            );
        }
        let untrusted = roots.add(
            "a root",
            Sourced::new(home.join(".x"), Provenance::UntrustedProject),
        );
        assert!(untrusted.is_err());
    }
}
