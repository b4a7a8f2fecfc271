//! Profile errors name the file, the line, the field and what was expected.

use std::fmt;
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq)]
pub struct ProfileError {
    /// The profile file (or `<built-in>/name.toml`).
    pub source: String,
    /// 1-based line of the offending value, when known.
    pub line: Option<usize>,
    /// Dotted field path, e.g. `hooks.events.Stop`.
    pub field: Option<String>,
    pub message: String,
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "profile {}", self.source)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": ")?;
        if let Some(field) = &self.field {
            write!(f, "{field}: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for ProfileError {}

/// Errors about which profile a name means.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    #[error("unknown CLI profile '{name}' (available: {available})")]
    Unknown { name: String, available: String },
    #[error("profiles failed to load, refusing to guess which '{name}' you meant:\n{errors}")]
    Broken { name: String, errors: String },
    #[error("cannot read profile directory {dir}: {reason}")]
    Directory { dir: PathBuf, reason: String },
}
