//! Walking a pattern segment by segment: `**` never follows a linked
//! directory, each (directory, rest of pattern) is visited once, and the
//! scope decides which files are let through.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use drover_gate::{Effect, Provenance, Sourced};

use super::pattern::{is_wild, literal_root, match_segment, segments};
use super::{Budget, Found, MAX_RECURSION, Scope};

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
}
