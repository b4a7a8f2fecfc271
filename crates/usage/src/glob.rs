//! The transcript globs components return (`*`, `?` and `**`, nothing
//! else), expanded and matched segment by segment.
//!
//! Hand-written rather than the `glob` crate because the WIT grammar is
//! narrower than the crate's: a literal prefix such as a `CLAUDE_CONFIG_DIR`
//! of `/srv/ai[prod]` must stay literal, where the crate would read `[…]` as
//! a character class. Walking segment by segment also lets an unreadable
//! directory become a warning instead of ending the walk, and keeps `**` off
//! symlinked directories, so a link loop cannot make it run forever.
//!
//! A pattern comes from a component, so it is bounded before it is used
//! ([`check`]: its length, its segments, its `**`, no `..`), a walk never
//! visits one directory twice for the same rest of the pattern, and every
//! walk has a [`Budget`] (entries listed, a deadline) that stops it early
//! with a note. Files a component's pattern finds are let through only
//! when they lie under its roots ([`Scope::Confined`]).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use drover_gate::read::Roots;
use drover_gate::{Cleared, Provenance};

mod pattern;
mod walk;

pub use pattern::{literal_root, match_segment, match_segments, segments, suffix_matches};
pub use walk::{expand, walk_dir};

/// How deep `**` descends; deeper trees are not transcript stores.
const MAX_RECURSION: usize = 32;
/// The longest pattern a component may give (a path's own limit).
pub const MAX_PATTERN_LEN: usize = 4096;
/// The most segments a pattern may have.
pub const MAX_SEGMENTS: usize = 64;
/// The most `**` segments a pattern may have; every CLI's layout needs one.
pub const MAX_DOUBLE_STARS: usize = 4;
/// Directory entries one walk looks at before it stops.
pub const MAX_ENTRIES: usize = 500_000;
/// How long one walk may take before it stops.
pub const WALK_DEADLINE: Duration = Duration::from_secs(20);

/// A file a glob found, with the directory its literal prefix named (the
/// root that grouping counts levels from), cleared to be read.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub path: PathBuf,
    pub root: PathBuf,
    /// The file, cleared for a read for the component: its path with links
    /// resolved when the pattern was a component's.
    pub file: Cleared<PathBuf>,
}

/// Whose pattern is walked: a component's (files must lie under its
/// roots) or a directory someone else chose (the operator's PATH).
#[derive(Clone, Copy)]
pub enum Scope<'a> {
    Confined(&'a Roots),
    Chosen(Provenance),
}

/// How much walking is left: entries and time, shared by every walk of one
/// command so the whole is bounded.
pub struct Budget {
    entries: usize,
    entries_left: usize,
    time: Duration,
    deadline: Instant,
    /// Why walking stopped early, once it has.
    pub stopped: Option<String>,
}

impl Budget {
    pub fn new() -> Budget {
        Budget::with(MAX_ENTRIES, WALK_DEADLINE)
    }

    pub fn with(entries: usize, time: Duration) -> Budget {
        Budget {
            entries,
            entries_left: entries,
            time,
            deadline: Instant::now() + time,
            stopped: None,
        }
    }

    /// Takes one entry; false (and the reason noted) when none are left.
    fn take(&mut self) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        if self.entries_left == 0 {
            self.stopped = Some(format!(
                "stopped after {} directory entries (drover's limit); files beyond them are not read",
                self.entries
            ));
            return false;
        }
        if Instant::now() >= self.deadline {
            self.stopped = Some(format!(
                "stopped after {}s of walking (drover's limit); files beyond are not read",
                self.time.as_secs()
            ));
            return false;
        }
        self.entries_left -= 1;
        true
    }
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::new()
    }
}

/// Whether a pattern is one drover walks: short enough, few enough
/// segments and `**`, no `..`. The error names the pattern and the limit.
pub fn check(pattern: &str) -> Result<(), String> {
    let shown: String = pattern.chars().take(120).collect();
    let shown = if shown.len() < pattern.len() {
        format!("{shown}…")
    } else {
        shown
    };
    let segs = segments(pattern);
    let stars = segs.iter().filter(|s| **s == "**").count();
    if pattern.len() > MAX_PATTERN_LEN {
        Err(format!(
            "the transcript pattern {shown} is {} bytes long, over drover's limit of {MAX_PATTERN_LEN}; it is not searched",
            pattern.len()
        ))
    } else if segs.len() > MAX_SEGMENTS {
        Err(format!(
            "the transcript pattern {shown} has {} segments, over drover's limit of {MAX_SEGMENTS}; it is not searched",
            segs.len()
        ))
    } else if stars > MAX_DOUBLE_STARS {
        Err(format!(
            "the transcript pattern {shown} has {stars} `**` segments, over drover's limit of {MAX_DOUBLE_STARS}; it is not searched"
        ))
    } else if segs.contains(&"..") {
        Err(format!(
            "the transcript pattern {shown} climbs out with `..`; it is not searched"
        ))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn patterns_are_bounded_and_a_walk_stops_at_its_budget() {
        let deep = format!("a/{}*.jsonl", "**/".repeat(24));
        let why = check(&deep).expect_err("24 `**`");
        assert!(why.contains(&deep) && why.contains("24 `**`"), "{why}");
        assert!(check(&"x/".repeat(MAX_SEGMENTS + 1)).is_err());
        assert!(check(&"x".repeat(MAX_PATTERN_LEN + 1)).is_err());
        assert!(check("a/../b/*").is_err());
        assert!(check(".claude/projects/**/*.jsonl").is_ok());

        let dir = tempfile::tempdir().expect("tempdir");
        for n in 0..20 {
            std::fs::write(dir.path().join(format!("{n}.jsonl")), "").expect("write");
        }
        let mut budget = Budget::with(5, Duration::from_secs(600));
        let mut warn = |_: &Path, _: String| {};
        let chosen = Scope::Chosen(Provenance::Operator);
        let found = expand(dir.path(), "*.jsonl", chosen, &mut budget, &mut warn);
        assert!(found.len() < 20, "{}", found.len());
        assert!(
            budget
                .stopped
                .as_deref()
                .is_some_and(|s| s.contains("stopped")),
            "{:?}",
            budget.stopped
        );
    }
}
