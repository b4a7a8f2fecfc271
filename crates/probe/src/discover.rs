//! Finding the newest transcript: from `--transcript`, from `--session-dir`,
//! or from the globs the adapter's `transcript-locations` answers.
//!
//! The globs come from a component that may be third-party, so they are
//! checked before use (bounded count and length, no `..`, no walk from the
//! filesystem root) and every walk is bounded in entries and depth and
//! never follows a symlink.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use drover_types::wit;

/// Globs used from one answer; the rest are ignored.
pub const MAX_GLOBS: usize = 32;
/// Longest pattern accepted.
pub const MAX_PATTERN: usize = 512;
/// Directory entries one walk may look at.
pub const WALK_BUDGET: usize = 50_000;
/// How deep `**` descends.
const MAX_DEPTH: usize = 12;

/// Why a glob from the adapter was not used.
#[derive(Debug, Clone, PartialEq)]
pub enum Rejected {
    TooLong,
    NotText,
    ClimbsOut,
    FromRoot,
    NotAbsolute,
}

impl Rejected {
    pub fn reason(&self) -> &'static str {
        match self {
            Rejected::TooLong => "the pattern is longer than 512 bytes",
            Rejected::NotText => "the pattern holds control characters",
            Rejected::ClimbsOut => "the pattern has a '..' segment",
            Rejected::FromRoot => "the pattern would walk the filesystem root",
            Rejected::NotAbsolute => "an absolute glob that is not an absolute path",
        }
    }
}

/// A checked glob: an absolute directory to start from plus the pattern
/// segments below it.
#[derive(Debug, Clone)]
pub struct Glob {
    pub root: PathBuf,
    pub segments: Vec<String>,
    /// The pattern as answered, for the report (sanitized there).
    pub display: String,
}

/// Checks one glob from the adapter and anchors it at home or the project.
pub fn check(
    glob: &wit::TranscriptGlob,
    home: Option<&Path>,
    cwd: &Path,
) -> Result<Glob, Rejected> {
    let pattern = glob.pattern.as_str();
    if pattern.len() > MAX_PATTERN {
        return Err(Rejected::TooLong);
    }
    if pattern.chars().any(char::is_control) {
        return Err(Rejected::NotText);
    }
    let segments: Vec<String> = pattern
        .split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .map(str::to_string)
        .collect();
    if segments.iter().any(|s| s == "..") {
        return Err(Rejected::ClimbsOut);
    }
    let root = match glob.base {
        wit::GlobBase::Home => home.ok_or(Rejected::NotAbsolute)?.to_path_buf(),
        wit::GlobBase::Cwd => cwd.to_path_buf(),
        wit::GlobBase::Absolute => {
            if !pattern.starts_with('/') {
                return Err(Rejected::NotAbsolute);
            }
            PathBuf::from("/")
        }
    };
    // Split off the literal prefix so the walk starts as deep as it can.
    let literal = segments.iter().take_while(|s| !is_wild(s)).count();
    let mut start = root;
    for s in &segments[..literal] {
        start.push(s);
    }
    if start == Path::new("/") && literal < segments.len() {
        return Err(Rejected::FromRoot);
    }
    let display = match glob.base {
        wit::GlobBase::Home => format!("~/{}", pattern.trim_start_matches('/')),
        wit::GlobBase::Cwd => format!("./{}", pattern.trim_start_matches('/')),
        wit::GlobBase::Absolute => pattern.to_string(),
    };
    Ok(Glob {
        root: start,
        segments: segments[literal..].to_vec(),
        display,
    })
}

fn is_wild(segment: &str) -> bool {
    segment.contains(['*', '?'])
}

/// A file that matched.
#[derive(Debug, Clone)]
pub struct Found {
    pub path: PathBuf,
    pub modified: SystemTime,
    pub size: u64,
}

/// The outcome of walking globs.
#[derive(Debug, Default)]
pub struct Matches {
    pub newest: Option<Found>,
    /// Which glob (index) found the newest.
    pub newest_glob: Option<usize>,
    pub count: u64,
    /// A walk ran out of its entry budget: the newest may be missing.
    pub truncated: bool,
}

impl Matches {
    fn offer(&mut self, found: Found, glob: usize) {
        self.count += 1;
        let newer = self
            .newest
            .as_ref()
            .is_none_or(|n| found.modified > n.modified);
        if newer {
            self.newest = Some(found);
            self.newest_glob = Some(glob);
        }
    }
}

/// Walks every glob and keeps the newest regular file.
pub fn newest(globs: &[Glob]) -> Matches {
    let mut matches = Matches::default();
    for (index, glob) in globs.iter().enumerate() {
        let mut budget = WALK_BUDGET;
        walk(&glob.root, &glob.segments, 0, &mut budget, &mut |found| {
            matches.offer(found, index)
        });
        if budget == 0 {
            matches.truncated = true;
        }
    }
    matches
}

/// Newest `**/*.jsonl` under `dir`, else newest `**/*.json`.
pub fn newest_in_dir(dir: &Path) -> Matches {
    for ext in ["*.jsonl", "*.json"] {
        let glob = Glob {
            root: dir.to_path_buf(),
            segments: vec!["**".to_string(), ext.to_string()],
            display: String::new(),
        };
        let found = newest(std::slice::from_ref(&glob));
        if found.newest.is_some() || found.truncated {
            return found;
        }
    }
    Matches::default()
}

fn walk(
    dir: &Path,
    segments: &[String],
    depth: usize,
    budget: &mut usize,
    offer: &mut dyn FnMut(Found),
) {
    let Some((first, rest)) = segments.split_first() else {
        if let Some(found) = regular_file(dir) {
            offer(found);
        }
        return;
    };
    if first == "**" {
        // Zero directories…
        walk(dir, rest, depth, budget, offer);
        if depth >= MAX_DEPTH {
            return;
        }
        // …or one more, keeping `**` in front.
        for child in children(dir, budget) {
            if is_dir(&child) {
                walk(&child, segments, depth + 1, budget, offer);
            }
        }
        return;
    }
    if !is_wild(first) {
        walk(&dir.join(first), rest, depth, budget, offer);
        return;
    }
    for child in children(dir, budget) {
        let matched = child
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|name| wildcard(first.as_bytes(), name.as_bytes()));
        if matched {
            walk(&child, rest, depth + 1, budget, offer);
        }
    }
}

/// A directory's entries, charged to the budget; unreadable = empty.
fn children(dir: &Path, budget: &mut usize) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        if let Ok(entry) = entry {
            out.push(entry.path());
        }
    }
    out
}

fn is_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_dir())
}

/// A regular file (never a symlink) with its mtime and size.
pub fn regular_file(path: &Path) -> Option<Found> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() {
        return None;
    }
    Some(Found {
        path: path.to_path_buf(),
        modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        size: meta.len(),
    })
}

/// `*` and `?` within one path segment; a leading dot is matched only by a
/// literal dot, as shells do.
fn wildcard(pattern: &[u8], name: &[u8]) -> bool {
    if name.first() == Some(&b'.') && pattern.first() != Some(&b'.') {
        return false;
    }
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if p < pattern.len() && (pattern[p] == b'?' || pattern[p] == name[n]) {
            p += 1;
            n += 1;
        } else if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, n));
            p += 1;
        } else if let Some((sp, sn)) = star {
            p = sp + 1;
            n = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

/// Lines in a file (a last line without a newline counts).
pub fn count_lines(path: &Path) -> std::io::Result<u64> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 64 << 10];
    let (mut lines, mut last) = (0u64, b'\n');
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        lines += buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
        last = buf[n - 1];
    }
    Ok(lines + u64::from(last != b'\n'))
}

/// `YYYY-MM-DD` (UTC) of a time: the date only, never the hour.
pub fn utc_date(time: SystemTime) -> String {
    let secs = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(base: wit::GlobBase, pattern: &str) -> wit::TranscriptGlob {
        wit::TranscriptGlob {
            base,
            pattern: pattern.to_string(),
            format: "jsonl".into(),
            parser: "claude-jsonl".into(),
        }
    }

    #[test]
    fn wildcards_match_within_a_segment() {
        assert!(wildcard(b"*.jsonl", b"abc.jsonl"));
        assert!(wildcard(b"rollout-*.jsonl", b"rollout-1.jsonl"));
        assert!(!wildcard(b"*.jsonl", b"abc.json"));
        assert!(wildcard(b"a?c", b"abc"));
        assert!(!wildcard(b"*", b".hidden"));
        assert!(wildcard(b".*", b".hidden"));
    }

    #[test]
    fn hostile_globs_are_refused() {
        let home = Path::new("/h");
        let cwd = Path::new("/p");
        let refused = |base, pattern: &str| check(&glob(base, pattern), Some(home), cwd).err();
        assert_eq!(
            refused(wit::GlobBase::Absolute, "/**/*"),
            Some(Rejected::FromRoot)
        );
        assert_eq!(
            refused(wit::GlobBase::Absolute, "/*/x.jsonl"),
            Some(Rejected::FromRoot)
        );
        assert_eq!(
            refused(wit::GlobBase::Cwd, "../../etc/*"),
            Some(Rejected::ClimbsOut)
        );
        assert_eq!(
            refused(wit::GlobBase::Absolute, "relative/*"),
            Some(Rejected::NotAbsolute)
        );
        assert_eq!(
            refused(wit::GlobBase::Home, &"x".repeat(600)),
            Some(Rejected::TooLong)
        );
        assert_eq!(
            refused(wit::GlobBase::Home, "a\u{0}b"),
            Some(Rejected::NotText)
        );
        let ok = check(
            &glob(wit::GlobBase::Home, ".claude/projects/*/*.jsonl"),
            Some(home),
            cwd,
        )
        .expect("a plain glob is fine");
        assert_eq!(ok.root, Path::new("/h/.claude/projects"));
        assert_eq!(ok.segments, ["*", "*.jsonl"]);
    }

    #[test]
    fn finds_the_newest_match_and_skips_symlinks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = dir.path().join("p1");
        let b = dir.path().join("p2").join("deep");
        std::fs::create_dir_all(&a).expect("mkdir");
        std::fs::create_dir_all(&b).expect("mkdir");
        std::fs::write(a.join("old.jsonl"), "{}\n").expect("write");
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(b.join("new.jsonl"), "{}\n{}").expect("write");
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.path(), a.join("loop")).expect("symlink");
        let g = check(
            &glob(
                wit::GlobBase::Absolute,
                &format!("{}/**/*.jsonl", dir.path().display()),
            ),
            None,
            dir.path(),
        )
        .expect("valid");
        let m = newest(&[g]);
        assert_eq!(m.count, 2);
        let newest = m.newest.expect("found");
        assert!(newest.path.ends_with("p2/deep/new.jsonl"));
        assert_eq!(count_lines(&newest.path).expect("count"), 2);
        assert!(newest_in_dir(dir.path()).newest.is_some());
    }

    #[test]
    fn dates_are_utc_days() {
        let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_784_253_924);
        assert_eq!(utc_date(t), "2026-07-17");
        assert_eq!(utc_date(SystemTime::UNIX_EPOCH), "1970-01-01");
    }
}
