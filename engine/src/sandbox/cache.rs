//! On-disk cache of compiled components.
//!
//! Compiling a component takes tens of milliseconds (seconds for Python
//! guests); loading a precompiled one takes well under one. Entries are keyed
//! by the component's SHA-256 and the engine's compatibility hash, so a new
//! wasmtime or different engine settings never load stale code. Each entry
//! carries a CRC-32 of its payload: precompiled bytes are trusted native code,
//! so a damaged entry is deleted and rebuilt, never loaded.

use std::fs;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;

const MAGIC: &[u8; 8] = b"DROVERC1";
const HEADER: usize = 8 + 4 + 8;

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
        match read_entry(&path) {
            Ok(Some(payload)) => {
                // SAFETY: the payload is code this process family compiled and
                // wrote to a private directory; its checksum matched, and the
                // key pins the engine's compatibility hash.
                match unsafe { Component::deserialize(engine, &payload) } {
                    Ok(component) => return Ok((component, CacheOutcome::Hit)),
                    Err(error) => {
                        tracing::warn!(path = %path.display(), "cached component rejected, rebuilding: {error:?}");
                        outcome = CacheOutcome::Rebuilt;
                    }
                }
            }
            Ok(None) => {}
            Err(reason) => {
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

fn read_entry(path: &Path) -> Result<Option<Vec<u8>>, String> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            // Unreadable is not damaged: compile, and let the write report.
            tracing::debug!(path = %path.display(), "compile cache unreadable: {e}");
            return Ok(None);
        }
    };
    if bytes.len() < HEADER || &bytes[..8] != MAGIC {
        return Err("bad header".to_string());
    }
    let crc = u32::from_le_bytes(bytes[8..12].try_into().map_err(|_| "bad header")?);
    let len = u64::from_le_bytes(bytes[12..20].try_into().map_err(|_| "bad header")?);
    let payload = &bytes[HEADER..];
    if payload.len() as u64 != len {
        return Err(format!(
            "length {} does not match the recorded {len}",
            payload.len()
        ));
    }
    if crc32fast::hash(payload) != crc {
        return Err("checksum mismatch".to_string());
    }
    Ok(Some(payload.to_vec()))
}

fn write_entry(path: &Path, payload: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("cache path has no parent"))?;
    create_private_dir(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(MAGIC)?;
    file.write_all(&crc32fast::hash(payload).to_le_bytes())?;
    file.write_all(&(payload.len() as u64).to_le_bytes())?;
    file.write_all(payload)?;
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
