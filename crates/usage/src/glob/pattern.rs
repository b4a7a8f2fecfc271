//! The pattern grammar: `/`-separated segments, `*` and `?` within one,
//! `**` for any number of whole segments; everything else literal.

use std::path::{Component, Path, PathBuf};

/// Whether one path segment contains a wildcard.
pub(super) fn is_wild(segment: &str) -> bool {
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

/// The directory a pattern's leading literal segments name under `base`
/// (the whole path when the pattern has no wildcard).
pub fn literal_root(base: &Path, pattern: &str) -> PathBuf {
    let mut root = base.to_path_buf();
    for s in segments(pattern).into_iter().take_while(|s| !is_wild(s)) {
        root.push(s);
    }
    root
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
}
