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
        if let Err(error) = write_entry(&path, &serialized) {
            tracing::warn!(path = %path.display(), "cannot write the compile cache: {error}");
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
