//! drover's state directory, `<project>/.drover/`, confined to the project.
//!
//! A checkout can commit `.drover` (or `.drover/runs`, `.drover/profiles`, …)
//! as a symbolic link, and the CLI drover drives can create one while it
//! works. So every write of drover's state goes through here: the path is
//! walked from the project one component at a time, each directory opened
//! without following links (through `cap-std` handles), and a link anywhere
//! below the project refuses the write with an error naming the link.
//! Paths outside a `.drover` tree (the user's config and cache) are written
//! plainly.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use cap_fs_ext::DirExt;
use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

/// The directory name of drover's state inside a project.
pub const STATE_DIR: &str = ".drover";

/// Splits a path under a `.drover` tree into (project, path below the
/// project); `None` for any other path.
pub fn split(path: &Path) -> Option<(PathBuf, PathBuf)> {
    let components: Vec<Component<'_>> = path.components().collect();
    let at = components
        .iter()
        .rposition(|c| c.as_os_str() == STATE_DIR)?;
    let project: PathBuf = components[..at].iter().collect();
    let below: PathBuf = components[at..].iter().collect();
    Some((project, below))
}

/// The error for a link (or anything but a directory) at `project/below`.
fn not_a_directory(project: &Path, below: &Path, cause: std::io::Error) -> std::io::Error {
    let path = project.join(below);
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            let target = std::fs::read_link(&path)
                .map(|t| format!(" (to {})", t.display()))
                .unwrap_or_default();
            std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "refusing to use {}: it is a symbolic link{target}; drover keeps its state inside the project and follows no links there (remove the link, or replace it with a directory)",
                    path.display()
                ),
            )
        }
        Ok(_) => std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} is not a directory", path.display()),
        ),
        Err(_) => std::io::Error::new(cause.kind(), format!("{}: {cause}", path.display())),
    }
}

/// Opens `project/below` as a directory, every component without following
/// links, creating missing ones when `create` is set.
pub fn open_dir(project: &Path, below: &Path, create: bool) -> std::io::Result<Dir> {
    let mut dir = Dir::open_ambient_dir(project, ambient_authority())
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", project.display())))?;
    let mut walked = PathBuf::new();
    for component in below.components() {
        let Component::Normal(name) = component else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{}: not a plain path below the project", below.display()),
            ));
        };
        walked.push(name);
        dir = match dir.open_dir_nofollow(name) {
            Ok(next) => next,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {
                match dir.create_dir(name) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(not_a_directory(project, &walked, e)),
                }
                dir.open_dir_nofollow(name)
                    .map_err(|e| not_a_directory(project, &walked, e))?
            }
            Err(e) => return Err(not_a_directory(project, &walked, e)),
        };
    }
    Ok(dir)
}

/// Refuses when any of `dirs` (relative to the project) is a symbolic link.
pub fn refuse_links(project: &Path, dirs: &[&str]) -> std::io::Result<()> {
    for dir in dirs {
        let path = project.join(dir);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(not_a_directory(
                project,
                Path::new(dir),
                std::io::Error::other("link"),
            ));
        }
    }
    Ok(())
}

/// The confined parent directory of `path` and its file name; `None` when
/// `path` is not under a `.drover` tree.
fn parent(path: &Path, create: bool) -> std::io::Result<Option<(Dir, std::ffi::OsString)>> {
    let Some((project, below)) = split(path) else {
        return Ok(None);
    };
    let name = below.file_name().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "a path without a file name",
        )
    })?;
    let dir = open_dir(&project, below.parent().unwrap_or(Path::new("")), create)?;
    Ok(Some((dir, name.to_os_string())))
}

/// Creates the directory `path` (and its parents), confined.
pub fn create_dir_all(path: &Path) -> std::io::Result<()> {
    match split(path) {
        Some((project, below)) => open_dir(&project, &below, true).map(drop),
        None => std::fs::create_dir_all(path),
    }
}

/// Writes `bytes` to `path` through a temporary sibling and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let Some((dir, name)) = parent(path, true)? else {
        let dir = path
            .parent()
            .ok_or_else(|| std::io::Error::other("path has no parent"))?;
        std::fs::create_dir_all(dir)?;
        let mut file = tempfile::NamedTempFile::new_in(dir)?;
        file.write_all(bytes)?;
        return file.persist(path).map(drop).map_err(|e| e.error);
    };
    write_atomic_in(&dir, Path::new(&name), bytes)
}

/// Writes `relative` inside the capability `dir` via a temporary sibling, an
/// fsync and a rename, so a reader sees the old bytes or the new, never half.
pub fn write_atomic_in(dir: &Dir, relative: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_in_as(dir, relative, bytes, None)
}

/// The permissions and owner a file written by [`write_atomic_in_as`] gets:
/// a file drover replaces keeps the user's (a 0600 settings file holding a
/// key must not come back 0644).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Keep {
    /// Permission bits; set-id and sticky bits are never carried over.
    pub mode: u32,
    /// (uid, gid), applied where the process may: a file owned by another
    /// user keeps its mode, and its owner becomes this process's.
    pub owner: Option<(u32, u32)>,
}

impl Keep {
    /// The mode and owner of an existing file.
    pub fn of(meta: &cap_std::fs::Metadata) -> Keep {
        use cap_std::fs::{MetadataExt, PermissionsExt};
        Keep {
            mode: meta.permissions().mode() & 0o777,
            owner: Some((meta.uid(), meta.gid())),
        }
    }

    /// Owner read and write only.
    pub const PRIVATE: Keep = Keep {
        mode: 0o600,
        owner: None,
    };
}

/// [`write_atomic_in`], the file ending with `keep`'s mode and owner (or,
/// with `None`, the default a new file gets). With `keep`, the temporary is
/// created 0600, so no one else can open it while it fills.
pub fn write_atomic_in_as(
    dir: &Dir,
    relative: &Path,
    bytes: &[u8],
    keep: Option<Keep>,
) -> std::io::Result<()> {
    use cap_std::fs::{OpenOptionsExt, PermissionsExt};
    if let Some(parent) = relative.parent().filter(|p| !p.as_os_str().is_empty()) {
        dir.create_dir_all(parent)?;
    }
    let name = relative
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = relative.with_file_name(format!(".{name}.drover-{}.tmp", std::process::id()));
    let mut file = match keep {
        None => dir.create(&temp)?,
        Some(_) => {
            // A stale temporary (same pid, an earlier crash) may have any mode.
            let _ = dir.remove_file(&temp);
            let mut options = OpenOptions::new();
            options.write(true).create_new(true).mode(0o600);
            dir.open_with(&temp, &options)?
        }
    };
    let written = file
        .write_all(bytes)
        .and_then(|()| match keep {
            None => Ok(()),
            Some(keep) => {
                if let Some((uid, gid)) = keep.owner {
                    // Only root may give a file away; anyone else keeps it.
                    let _ = std::os::unix::fs::fchown(&file, Some(uid), Some(gid));
                }
                file.set_permissions(cap_std::fs::Permissions::from_mode(keep.mode & 0o777))
            }
        })
        .and_then(|()| file.sync_all());
    drop(file);
    if let Err(e) = written {
        let _ = dir.remove_file(&temp);
        return Err(e);
    }
    dir.rename(&temp, dir, relative).inspect_err(|_| {
        let _ = dir.remove_file(&temp);
    })
}

/// Opens `path` for appending (created if missing), confined.
pub fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    let Some((dir, name)) = parent(path, true)? else {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        return std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path);
    };
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    dir.open_with(&name, &options)
        .map(|f| f.into_std())
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// Creates (or empties) `path`, confined.
pub fn create_file(path: &Path) -> std::io::Result<std::fs::File> {
    let Some((dir, name)) = parent(path, true)? else {
        return std::fs::File::create(path);
    };
    dir.create(&name)
        .map(|f| f.into_std())
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// Creates `path` only if nothing is there (not even a link), mode 0600,
/// confined: `Ok(None)` when it already exists. What one writer's claim on
/// a file is made of, so two racing writers never both win.
pub fn create_new(path: &Path) -> std::io::Result<Option<std::fs::File>> {
    use cap_std::fs::OpenOptionsExt;
    let opened = match parent(path, true)? {
        Some((dir, name)) => {
            let mut options = OpenOptions::new();
            options.write(true).create_new(true).mode(0o600);
            dir.open_with(&name, &options).map(|f| f.into_std())
        }
        None => {
            use std::os::unix::fs::OpenOptionsExt;
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(path)
        }
    };
    match opened {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
        Err(e) => Err(std::io::Error::new(
            e.kind(),
            format!("{}: {e}", path.display()),
        )),
    }
}

/// Removes the file `path`, confined; a missing file is fine.
pub fn remove_file(path: &Path) -> std::io::Result<()> {
    let result = match parent(path, false) {
        Ok(Some((dir, name))) => dir.remove_file(&name),
        Ok(None) => std::fs::remove_file(path),
        Err(e) => Err(e),
    };
    match result {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

/// A name safe as one path segment (a task id in a file name):
/// `[A-Za-z0-9._-]`, at most 64 chars, never hidden, never empty.
pub fn safe_segment(raw: &str) -> String {
    let mut out: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    while out.starts_with('.') || out.starts_with('-') {
        out.remove(0);
    }
    if out.is_empty() {
        "task".to_string()
    } else {
        out
    }
}

/// Appends a line with a single `write` so concurrent appenders never
/// interleave inside a line (confined like [`write_json_atomic`]).
pub fn append_line(path: &Path, line: &str) -> std::io::Result<()> {
    let mut file = open_append(path)?;
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    file.write_all(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_split_at_the_state_directory() {
        assert_eq!(
            split(Path::new("/p/.drover/runs/r1/events.jsonl")),
            Some((
                PathBuf::from("/p"),
                PathBuf::from(".drover/runs/r1/events.jsonl")
            ))
        );
        assert_eq!(split(Path::new("/home/u/.config/drover/trust.json")), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_linked_state_directory_is_refused_by_name() {
        let project = tempfile::tempdir().expect("project");
        let elsewhere = tempfile::tempdir().expect("elsewhere");
        std::os::unix::fs::symlink(elsewhere.path(), project.path().join(".drover")).expect("link");
        let target = project.path().join(".drover/runs/r1/run.json");
        let err = write_atomic(&target, b"{}").expect_err("refused");
        let text = err.to_string();
        assert!(
            text.contains(&format!(
                "refusing to use {}: it is a symbolic link (to {})",
                project.path().join(".drover").display(),
                elsewhere.path().display()
            )),
            "{text}"
        );
        assert_eq!(std::fs::read_dir(elsewhere.path()).expect("dir").count(), 0);
        // A link deeper down is refused too.
        std::fs::remove_file(project.path().join(".drover")).expect("unlink");
        std::fs::create_dir_all(project.path().join(".drover")).expect("mkdir");
        std::os::unix::fs::symlink(elsewhere.path(), project.path().join(".drover/runs"))
            .expect("link");
        let err =
            open_append(&project.path().join(".drover/runs/r1/events.jsonl")).expect_err("refused");
        assert!(
            err.to_string()
                .contains(".drover/runs: it is a symbolic link"),
            "{err}"
        );
        assert_eq!(std::fs::read_dir(elsewhere.path()).expect("dir").count(), 0);
    }

    #[cfg(unix)]
    #[test]
    fn a_new_file_is_won_once_and_never_through_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let project = tempfile::tempdir().expect("project");
        let claim = project.path().join(".drover/ray/workers/w1/claim");
        let mut first = create_new(&claim)
            .expect("creates")
            .expect("the first wins");
        first.write_all(b"turn-1").expect("write");
        assert!(create_new(&claim).expect("no error").is_none(), "taken");
        let mode = std::fs::metadata(&claim)
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // A link planted where the file goes counts as taken, and the file it
        // points at is left alone; a linked directory above it is refused.
        let elsewhere = tempfile::tempdir().expect("elsewhere");
        let victim = elsewhere.path().join("victim");
        std::fs::write(&victim, "mine").expect("victim");
        let planted = project.path().join(".drover/ray/workers/w2/claim");
        std::fs::create_dir_all(planted.parent().expect("dir")).expect("mkdir");
        std::os::unix::fs::symlink(&victim, &planted).expect("link");
        assert!(create_new(&planted).expect("no error").is_none());
        assert_eq!(std::fs::read_to_string(&victim).expect("read"), "mine");
        std::os::unix::fs::symlink(
            elsewhere.path(),
            project.path().join(".drover/ray/workers/w3"),
        )
        .expect("link");
        let err =
            create_new(&project.path().join(".drover/ray/workers/w3/claim")).expect_err("refused");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read_dir(elsewhere.path()).expect("dir").count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_the_mode_it_is_given() {
        use std::os::unix::fs::PermissionsExt;
        let project = tempfile::tempdir().expect("project");
        let dir = Dir::open_ambient_dir(project.path(), ambient_authority()).expect("dir");
        let path = project.path().join("settings.json");
        std::fs::write(&path, "{}").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        let keep = Keep::of(&dir.metadata("settings.json").expect("meta"));
        assert_eq!(keep.mode, 0o600);
        write_atomic_in_as(&dir, Path::new("settings.json"), b"{\"a\":1}", Some(keep))
            .expect("write");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(std::fs::read(&path).expect("read"), b"{\"a\":1}");
        // Set-id bits are never carried over.
        let odd = Keep {
            mode: 0o4640,
            owner: None,
        };
        write_atomic_in_as(&dir, Path::new("x"), b"", Some(odd)).expect("write");
        let mode = std::fs::metadata(project.path().join("x"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o7777, 0o640);
    }
}
