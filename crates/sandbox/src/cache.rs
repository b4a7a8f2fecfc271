//! On-disk cache of compiled components.
//!
//! Compiling a component takes hundreds of milliseconds (seconds for Python
//! guests); loading a precompiled one takes well under one. Entries are keyed
//! by the component's SHA-256 and the engine's compatibility hash, so a new
//! wasmtime or different engine settings never load stale code.
//!
//! Precompiled bytes are trusted native code, so every load checks them: a
//! sidecar `<entry>.sum` holds the entry's length and CRC-32, the mapped
//! entry is checked (about 0.1 ms for a built-in component), and only then
//! loaded with `deserialize_file`. A damaged or unsummed entry is
//! rebuilt, never loaded.

use std::fs;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;
/// What happened when a component was looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    Hit,
    Miss,
    /// An entry existed but failed its check; it was replaced.
    Rebuilt,
    Disabled,
}

#[derive(Clone, Debug)]
pub struct CompileCache {
    dir: Option<PathBuf>,
}

impl CompileCache {
    pub fn disabled() -> CompileCache {
        CompileCache { dir: None }
    }

    pub fn at(dir: PathBuf) -> CompileCache {
        CompileCache { dir: Some(dir) }
    }

    /// `$DROVER_CACHE_DIR`, else `$XDG_CACHE_HOME/drover`, else `~/.cache/drover`.
    pub fn default_location() -> CompileCache {
        let from_env = |var: &str| {
            std::env::var_os(var)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let dir = from_env("DROVER_CACHE_DIR")
            .or_else(|| from_env("XDG_CACHE_HOME").map(|d| d.join("drover")))
            .or_else(|| from_env("HOME").map(|h| h.join(".cache").join("drover")));
        CompileCache { dir }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The entry path for a component with this SHA-256 under `engine`.
    pub fn entry_path(&self, engine: &Engine, sha256: &str) -> Option<PathBuf> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        let compat = hasher.finish();
        self.dir
            .as_ref()
            .map(|d| d.join(format!("{sha256}-{compat:016x}.cwasm")))
    }

    /// Loads a cached component, or compiles `wasm` and stores it.
    pub fn load_or_compile(
        &self,
        engine: &Engine,
        sha256: &str,
        wasm: &[u8],
    ) -> wasmtime::Result<(Component, CacheOutcome)> {
        let Some(path) = self.entry_path(engine, sha256) else {
            return Ok((Component::new(engine, wasm)?, CacheOutcome::Disabled));
        };
        let mut outcome = CacheOutcome::Miss;
        match verify(&path) {
            Verified::Good => {
                // SAFETY: the entry is code this engine configuration compiled
                // and wrote to a private directory, and its checksum matched
                // just now.
                match unsafe { Component::deserialize_file(engine, &path) } {
                    Ok(component) => return Ok((component, CacheOutcome::Hit)),
                    Err(error) => {
                        tracing::warn!(path = %path.display(), "cached component rejected, rebuilding: {error:?}");
                        outcome = CacheOutcome::Rebuilt;
                    }
                }
            }
            Verified::Absent => {}
            Verified::Damaged(reason) => {
                tracing::warn!(path = %path.display(), "damaged cache entry, rebuilding: {reason}");
                outcome = CacheOutcome::Rebuilt;
            }
        }
        let serialized = engine.precompile_component(wasm)?;
        match write_entry(&path, &serialized) {
            Ok(()) => prune_stale(&path, STALE_AFTER),
            Err(error) => {
                tracing::warn!(path = %path.display(), "cannot write the compile cache: {error}");
            }
        }
        // SAFETY: `serialized` was produced by this engine just now.
        let component = unsafe { Component::deserialize(engine, &serialized) }?;
        Ok((component, outcome))
    }
}

enum Verified {
    Good,
    Absent,
    Damaged(String),
}

fn sum_path(entry: &Path) -> PathBuf {
    entry.with_extension("sum")
}

fn summary(payload: &[u8]) -> String {
    format!(
        "crc32={:08x} len={}\n",
        crc32fast::hash(payload),
        payload.len()
    )
}

fn verify(path: &Path) -> Verified {
    let file = match fs::File::open(path) {
        Ok(file) => file,
        Err(e) => {
            // Absent or unreadable is not damaged: compile, and let the write
            // report what is wrong with the directory.
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::debug!(path = %path.display(), "compile cache unreadable: {e}");
            }
            return Verified::Absent;
        }
    };
    // Mapped rather than read: checking costs page-cache hits, not a copy.
    // SAFETY: the map is read-only and dropped before this returns; the
    // directory is private to this user.
    let bytes = match unsafe { memmap2::Mmap::map(&file) } {
        Ok(map) => map,
        Err(e) => return Verified::Damaged(format!("cannot map: {e}")),
    };
    match fs::read_to_string(sum_path(path)) {
        Ok(recorded) if recorded == summary(&bytes) => Verified::Good,
        Ok(_) => Verified::Damaged("length or checksum mismatch".to_string()),
        Err(e) => Verified::Damaged(format!("no checksum ({e})")),
    }
}

/// Entries written longer ago than this are removed when another entry is
/// written. Every component version and every drover upgrade leaves one
/// behind, and nothing else would ever delete them; an entry still in use
/// is simply compiled again on its next load.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 3600);

/// Removes cache files (entries, sums, temp files a killed writer left)
/// last modified more than `age` ago, except `keep` and its sum. Best
/// effort: a cache that cannot be pruned still works.
fn prune_stale(keep: &Path, age: std::time::Duration) {
    let Some(dir) = keep.parent() else { return };
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let keep_sum = sum_path(keep);
    let Some(cutoff) = std::time::SystemTime::now().checked_sub(age) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ours = name.ends_with(".cwasm") || name.ends_with(".sum") || name.starts_with(".tmp");
        if !ours || path == keep || path == keep_sum {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|modified| modified < cutoff);
        if old && entry.file_type().is_ok_and(|t| t.is_file()) {
            match fs::remove_file(&path) {
                Ok(()) => {
                    tracing::debug!(path = %path.display(), "pruned a stale compile-cache file")
                }
                Err(e) => tracing::debug!(path = %path.display(), "cannot prune: {e}"),
            }
        }
    }
}

fn write_entry(path: &Path, payload: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("cache path has no parent"))?;
    create_private_dir(dir)?;
    // The sum goes last: an entry without a matching sum is never loaded.
    let _ = fs::remove_file(sum_path(path));
    write_file(dir, path, payload)?;
    write_file(dir, &sum_path(path), summary(payload).as_bytes())
}

fn write_file(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    fn file_aged(dir: &Path, name: &str, age: Duration) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, b"x").expect("write");
        let file = fs::File::options().write(true).open(&path).expect("open");
        file.set_modified(SystemTime::now() - age)
            .expect("set mtime");
        path
    }

    #[test]
    fn pruning_removes_only_old_cache_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let month = Duration::from_secs(31 * 24 * 3600);
        let old_entry = file_aged(dir.path(), "a-1.cwasm", month);
        let old_sum = file_aged(dir.path(), "a-1.sum", month);
        let old_temp = file_aged(dir.path(), ".tmpXYZ", month);
        let fresh_entry = file_aged(dir.path(), "b-1.cwasm", Duration::from_secs(60));
        let foreign = file_aged(dir.path(), "notes.txt", month);
        // The entry just written is kept whatever its clock says.
        let keep = file_aged(dir.path(), "c-1.cwasm", month);
        let keep_sum = file_aged(dir.path(), "c-1.sum", month);

        prune_stale(&keep, STALE_AFTER);

        for gone in [&old_entry, &old_sum, &old_temp] {
            assert!(!gone.exists(), "{} should be pruned", gone.display());
        }
        for kept in [&fresh_entry, &foreign, &keep, &keep_sum] {
            assert!(kept.exists(), "{} should be kept", kept.display());
        }
    }
}
