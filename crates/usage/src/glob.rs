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

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use drover_gate::read::Roots;
use drover_gate::{Cleared, Effect, Provenance, Sourced};

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

/// Whether one path segment contains a wildcard.
fn is_wild(segment: &str) -> bool {
    segment.contains(['*', '?'])
}

/// Splits a `/`-separated pattern into its non-empty segments.
pub fn segments(pattern: &str) -> Vec<&str> {
    pattern
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect()
}

/// Matches one name against one segment pattern (`*` = any run of
/// characters, `?` = one character).
pub fn match_segment(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Iterative wildcard matching with backtracking to the last star.
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some('?') => {
                pi += 1;
                ni += 1;
            }
            Some(c) if *c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

/// Matches path segments against pattern segments; `**` matches zero or
/// more whole segments.
pub fn match_segments(pattern: &[&str], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|skip| match_segments(rest, &path[skip..])),
        Some((first, rest)) => match path.split_first() {
            Some((name, tail)) => match_segment(first, name) && match_segments(rest, tail),
            None => false,
        },
    }
}

/// Whether the trailing segments of `path` match the whole pattern: a copy
/// of `~/.claude/projects/x/y.jsonl` kept anywhere still looks like one.
pub fn suffix_matches(pattern: &str, path: &Path) -> bool {
    let pattern = segments(pattern);
    let names = path_names(path);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    (0..=names.len()).any(|start| match_segments(&pattern, &names[start..]))
}

fn path_names(path: &Path) -> Vec<String> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect()
}

/// Expands `pattern` under `base` into the regular files it names, within
/// `scope` and `budget`. Errors reading a directory that exists, and files
/// or links out of the scope, are passed to `warn`; missing directories are
/// silently empty (most users have most CLIs absent). The pattern must have
/// passed [`check`].
pub fn expand(
    base: &Path,
    pattern: &str,
    scope: Scope<'_>,
    budget: &mut Budget,
    warn: &mut dyn FnMut(&Path, String),
) -> Vec<Found> {
    let segs = segments(pattern);
    let literal = segs.iter().take_while(|s| !is_wild(s)).count();
    let root = literal_root(base, pattern);
    let mut walker = Walker {
        root: root.clone(),
        scope,
        out: Vec::new(),
        visited: HashSet::new(),
        budget,
        warn,
    };
    if literal == segs.len() {
        // No wildcard: the pattern names one file.
        if is_file(&root) {
            let parent = root
                .parent()
                .map_or_else(|| root.clone(), Path::to_path_buf);
            walker.root = parent;
            walker.found(root);
        }
        return walker.out;
    }
    walker.walk(&root, &segs[literal..], 0);
    let mut out = walker.out;
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

struct Walker<'a> {
    root: PathBuf,
    scope: Scope<'a>,
    out: Vec<Found>,
    /// (directory, segments left): a pattern with several `**` reaches
    /// the same state many ways; each is walked once.
    visited: HashSet<(PathBuf, usize)>,
    budget: &'a mut Budget,
    warn: &'a mut dyn FnMut(&Path, String),
}

impl Walker<'_> {
    fn walk(&mut self, dir: &Path, rest: &[&str], depth: usize) {
        let Some((first, tail)) = rest.split_first() else {
            return;
        };
        if !self.visited.insert((dir.to_path_buf(), rest.len())) || !self.budget.take() {
            return;
        }
        if *first == "**" {
            // Zero segments here, then one more level down (real directories
            // only, so a symlink loop cannot recurse).
            self.walk(dir, tail, depth);
            if depth >= MAX_RECURSION {
                return;
            }
            for (path, kind) in self.list(dir) {
                if kind == Kind::RealDir {
                    self.walk(&path, rest, depth + 1);
                }
            }
            return;
        }
        if !is_wild(first) {
            let next = dir.join(first);
            let kind = kind_of_entry(&next);
            self.step(next, kind, tail, depth);
            return;
        }
        for (path, kind) in self.list(dir) {
            let matched = path
                .file_name()
                .is_some_and(|n| match_segment(first, &n.to_string_lossy()));
            if matched {
                self.step(path, kind, tail, depth);
            }
        }
    }

    fn step(&mut self, path: PathBuf, kind: Kind, tail: &[&str], depth: usize) {
        if tail.is_empty() {
            if kind == Kind::File {
                self.found(path);
            }
        } else if kind == Kind::RealDir || (kind == Kind::LinkedDir && self.may_follow(&path)) {
            self.walk(&path, tail, depth);
        }
    }

    /// Whether a linked directory leads somewhere the scope allows.
    fn may_follow(&mut self, link: &Path) -> bool {
        match self.scope {
            Scope::Chosen(_) => true,
            Scope::Confined(roots) => {
                match roots.confine(
                    "the linked directory",
                    Sourced::new(link, Provenance::Output),
                ) {
                    Ok(_) => true,
                    Err(refused) => {
                        (self.warn)(link, refused.to_string());
                        false
                    }
                }
            }
        }
    }

    /// A file the pattern names: kept if the scope lets it be read.
    fn found(&mut self, path: PathBuf) {
        let file = match self.scope {
            Scope::Chosen(from) => drover_gate::clear(
                Effect::ReadForComponent,
                "the file",
                Sourced::new(
                    std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone()),
                    from,
                ),
            ),
            Scope::Confined(roots) => {
                roots.confine("the transcript", Sourced::new(&path, Provenance::Output))
            }
        };
        match file {
            Ok(file) => self.out.push(Found {
                path,
                root: self.root.clone(),
                file,
            }),
            // Out of the roots, or a dangling link: the user hears why.
            Err(refused) => (self.warn)(&path, refused.to_string()),
        }
    }

    fn list(&mut self, dir: &Path) -> Vec<(PathBuf, Kind)> {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
            Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => return Vec::new(),
            Err(e) => {
                (self.warn)(dir, format!("cannot list the directory: {e}"));
                return Vec::new();
            }
        };
        let mut listed: Vec<(PathBuf, Kind)> = Vec::new();
        for entry in entries.filter_map(Result::ok) {
            if !self.budget.take() {
                break;
            }
            let path = entry.path();
            let kind = match entry.file_type() {
                Ok(t) if t.is_dir() => Kind::RealDir,
                Ok(t) if t.is_file() => Kind::File,
                Ok(t) if t.is_symlink() => match kind_of(&path) {
                    Kind::RealDir => Kind::LinkedDir,
                    other => other,
                },
                _ => Kind::Other,
            };
            listed.push((path, kind));
        }
        listed.sort_by(|a, b| a.0.cmp(&b.0));
        listed
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    File,
    RealDir,
    /// A symlink to a directory: followed by `*` and literal segments,
    /// never by `**`.
    LinkedDir,
    /// Missing, dangling, a device, …
    Other,
}

/// The kind of what `path` names, following symlinks.
fn kind_of(path: &Path) -> Kind {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => Kind::RealDir,
        Ok(m) if m.is_file() => Kind::File,
        // A dangling symlink is still a file the user will want to hear
        // about: report it as a file so reading it yields a warning.
        Err(_) if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) => {
            Kind::File
        }
        _ => Kind::Other,
    }
}

/// The kind of what `path` names, a link to a directory told apart.
fn kind_of_entry(path: &Path) -> Kind {
    match (std::fs::symlink_metadata(path), kind_of(path)) {
        (Ok(m), Kind::RealDir) if m.file_type().is_symlink() => Kind::LinkedDir,
        (_, kind) => kind,
    }
}

/// The directory a pattern's leading literal segments name under `base`
/// (the whole path when the pattern has no wildcard).
pub fn literal_root(base: &Path, pattern: &str) -> PathBuf {
    let mut root = base.to_path_buf();
    for s in segments(pattern).into_iter().take_while(|s| !is_wild(s)) {
        root.push(s);
    }
    root
}

fn is_file(path: &Path) -> bool {
    kind_of(path) == Kind::File
}

/// Every regular file under `dir` (symlinked files included, symlinked
/// directories not descended), within `scope` and `budget`: for PATH
/// arguments that name a directory, and `--explain-files`.
pub fn walk_dir(
    dir: &Path,
    scope: Scope<'_>,
    budget: &mut Budget,
    warn: &mut dyn FnMut(&Path, String),
) -> Vec<Found> {
    expand(dir, "**/*", scope, budget, warn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_match_stars_and_question_marks() {
        assert!(match_segment("*.jsonl", "abc.jsonl"));
        assert!(match_segment(
            "session-*.json",
            "session-2026-01-01T10-00-abcd1234.json"
        ));
        assert!(!match_segment("session-*.json", "session-x.jsonl"));
        assert!(match_segment("rollout-?.jsonl", "rollout-1.jsonl"));
        assert!(!match_segment("rollout-?.jsonl", "rollout-12.jsonl"));
        assert!(match_segment("*", ""));
        assert!(match_segment("a*b*c", "aXXbYYc"));
        assert!(!match_segment("a*b*c", "aXXbYY"));
        // Brackets are literal in this grammar.
        assert!(match_segment("ai[prod]", "ai[prod]"));
        assert!(!match_segment("ai[prod]", "aip"));
    }

    #[test]
    fn double_star_matches_any_depth() {
        let p = segments("projects/**/*.jsonl");
        assert!(match_segments(&p, &["projects", "a.jsonl"]));
        assert!(match_segments(&p, &["projects", "x", "y", "a.jsonl"]));
        assert!(!match_segments(&p, &["other", "a.jsonl"]));
    }

    #[test]
    fn suffixes_of_copied_trees_match() {
        let pattern = ".claude/projects/*/*.jsonl";
        assert!(suffix_matches(
            pattern,
            Path::new("/backup/u/.claude/projects/-w/s.jsonl")
        ));
        assert!(!suffix_matches(pattern, Path::new("/tmp/s.jsonl")));
        assert!(!suffix_matches(
            pattern,
            Path::new("/h/.claude/projects/-w/sub/s.jsonl")
        ));
    }

    #[test]
    fn expansion_walks_wildcards_and_skips_missing_dirs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for f in [
            "p/a/one.jsonl",
            "p/a/two.jsonl",
            "p/b/three.jsonl",
            "p/b/deep/four.jsonl",
            "p/c.txt",
        ] {
            let path = root.join(f);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, "{}\n").expect("write");
        }
        let mut warnings = Vec::new();
        let mut warn = |p: &Path, m: String| warnings.push((p.to_path_buf(), m));
        let mut budget = Budget::new();
        let mut expand = |pattern: &str, warn: &mut dyn FnMut(&Path, String)| {
            expand(
                root,
                pattern,
                Scope::Chosen(Provenance::Operator),
                &mut budget,
                warn,
            )
        };
        let found = expand("p/*/*.jsonl", &mut warn);
        let names: Vec<_> = found
            .iter()
            .map(|f| f.path.strip_prefix(root).expect("under root").to_path_buf())
            .collect();
        assert_eq!(
            names,
            [
                PathBuf::from("p/a/one.jsonl"),
                "p/a/two.jsonl".into(),
                "p/b/three.jsonl".into()
            ]
        );
        assert!(found.iter().all(|f| f.root == root.join("p")));
        assert_eq!(expand("p/**/*.jsonl", &mut warn).len(), 4);
        assert_eq!(expand("p/**/**/**/*.jsonl", &mut warn).len(), 4);
        assert!(expand("missing/*/*.jsonl", &mut warn).is_empty());
        assert_eq!(expand("p/c.txt", &mut warn).len(), 1);
        let mut budget = Budget::new();
        let chosen = Scope::Chosen(Provenance::Operator);
        assert_eq!(
            walk_dir(&root.join("p"), chosen, &mut budget, &mut warn).len(),
            5
        );
        assert!(warnings.is_empty(), "{warnings:?}");
    }

    #[cfg(unix)]
    #[test]
    fn double_star_does_not_follow_symlink_loops() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("a")).expect("mkdir");
        std::fs::write(root.join("a/x.jsonl"), "").expect("write");
        std::os::unix::fs::symlink(root, root.join("a/loop")).expect("symlink");
        let mut warn = |_: &Path, _: String| {};
        let chosen = Scope::Chosen(Provenance::Operator);
        assert_eq!(
            expand(root, "**/*.jsonl", chosen, &mut Budget::new(), &mut warn).len(),
            1
        );
    }

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
