//! The projects this user's drover has run in: `$XDG_STATE_HOME/drover/
//! projects`, one absolute path per line, added when a run starts. `drover
//! serve --all-projects` shows them; the list is yours (your state
//! directory), and a path in it is only ever read as a project, never run.

use std::path::{Path, PathBuf};

fn path() -> Option<PathBuf> {
    drover_gate::seal::state_dir().map(|d| d.join("projects"))
}

/// The most bytes read (thousands of projects fit).
const FILE_MAX: u64 = 4 << 20;

/// Every project on record that is still a directory, oldest first.
pub fn known() -> Vec<PathBuf> {
    let Some(path) = path() else {
        return Vec::new();
    };
    let Ok(text) = drover_gate::read::read_text_bounded(&path, FILE_MAX) else {
        return Vec::new();
    };
    let mut seen = std::collections::BTreeSet::new();
    text.lines()
        .map(PathBuf::from)
        .filter(|p| p.is_absolute() && p.is_dir())
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

/// Adds `project` to the list unless it is on it.
pub fn remember(project: &Path) {
    let Some(path) = path() else {
        return;
    };
    let Ok(project) = project.canonicalize() else {
        return;
    };
    if known().contains(&project) {
        return;
    }
    let Some(line) = project.to_str().filter(|l| !l.contains('\n')) else {
        return;
    };
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Err(e) = drover_state::append_line(&path, line) {
        tracing::debug!("cannot remember the project in {}: {e}", path.display());
    }
}
