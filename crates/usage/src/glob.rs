//! The transcript globs components return (`*`, `?` and `**`, nothing
//! else), expanded and matched segment by segment.
//!
//! Hand-written rather than the `glob` crate because the WIT grammar is
//! narrower than the crate's: a literal prefix such as a `CLAUDE_CONFIG_DIR`
//! of `/srv/ai[prod]` must stay literal, where the crate would read `[…]` as
//! a character class. Walking segment by segment also lets an unreadable
//! directory become a warning instead of ending the walk, and keeps `**` off
//! symlinked directories, so a link loop cannot make it run forever.

use std::path::{Component, Path, PathBuf};

/// How deep `**` descends; deeper trees are not transcript stores.
const MAX_RECURSION: usize = 32;

/// A file a glob found, with the directory its literal prefix named (the
/// root that grouping counts levels from).
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub path: PathBuf,
    pub root: PathBuf,
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

/// Expands `pattern` under `base` into the regular files it names. Errors
/// reading a directory that exists are passed to `warn`; missing
/// directories are silently empty (most users have most CLIs absent).
pub fn expand(base: &Path, pattern: &str, warn: &mut dyn FnMut(&Path, String)) -> Vec<Found> {
    let segs = segments(pattern);
    let literal = segs.iter().take_while(|s| !is_wild(s)).count();
    let root = literal_root(base, pattern);
    let mut out = Vec::new();
    if literal == segs.len() {
        // No wildcard: the pattern names one file.
        if is_file(&root) {
            let parent = root
                .parent()
                .map_or_else(|| root.clone(), Path::to_path_buf);
            out.push(Found {
                path: root,
                root: parent,
            });
        }
        return out;
    }
    let mut walker = Walker {
        root: root.clone(),
        out: &mut out,
        warn,
    };
    walker.walk(&root, &segs[literal..], 0);
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

struct Walker<'a> {
    root: PathBuf,
    out: &'a mut Vec<Found>,
    warn: &'a mut dyn FnMut(&Path, String),
}

impl Walker<'_> {
    fn walk(&mut self, dir: &Path, rest: &[&str], depth: usize) {
        let Some((first, tail)) = rest.split_first() else {
            return;
        };
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
            self.step(next, kind_of(&dir.join(first)), tail, depth);
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
                self.out.push(Found {
                    path,
                    root: self.root.clone(),
                });
            }
        } else if matches!(kind, Kind::RealDir | Kind::LinkedDir) {
            self.walk(&path, tail, depth);
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
        let mut listed: Vec<(PathBuf, Kind)> = entries
            .filter_map(Result::ok)
            .map(|entry| {
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
                (path, kind)
            })
            .collect();
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
/// directories not descended), for PATH arguments that name a directory.
pub fn walk_dir(dir: &Path, warn: &mut dyn FnMut(&Path, String)) -> Vec<PathBuf> {
    expand(dir, "**/*", warn)
        .into_iter()
        .map(|found| found.path)
        .collect()
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
        let found = expand(root, "p/*/*.jsonl", &mut warn);
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
        assert_eq!(expand(root, "p/**/*.jsonl", &mut warn).len(), 4);
        assert!(expand(root, "missing/*/*.jsonl", &mut warn).is_empty());
        assert_eq!(expand(root, "p/c.txt", &mut warn).len(), 1);
        assert_eq!(walk_dir(&root.join("p"), &mut warn).len(), 5);
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
        assert_eq!(expand(root, "**/*.jsonl", &mut warn).len(), 1);
    }
}
