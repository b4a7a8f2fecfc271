//! Where a component's transcript pattern may be walked: the CLI's own
//! directories, never wherever the component says.
//!
//! A pattern's literal root (the directory before its first wildcard) must
//! lie strictly under home for a home-relative pattern, under the project
//! for a project-relative one, and, for an absolute one, under a directory
//! named by an environment variable the component declared in
//! `location-env` and the user set (`CLAUDE_CONFIG_DIR=/srv/ai`) or under
//! the project. The root is then a [`Roots`] entry: every file the walk
//! finds must lie under it with links resolved, and never in a secret store
//! ([`drover_gate::read::secret_stores`]). docs/usage.md says the rules.

use std::path::{Component, Path, PathBuf};

use crate::glob;
use drover_gate::read::{Roots, secret_stores};
use drover_gate::{Provenance, Sourced};
use drover_types::wit;

/// What a component's patterns are confined to.
pub struct Area {
    home: Option<PathBuf>,
    cwd: PathBuf,
    /// Directories the user named in the variables the component declared.
    chosen: Vec<PathBuf>,
}

impl Area {
    /// `env`: the declared variables the user set, as the component got
    /// them. A value may list several directories (`,` or `:`).
    pub fn new(home: Option<&Path>, cwd: &Path, env: &[(String, String)]) -> Area {
        let chosen = env
            .iter()
            .flat_map(|(_, value)| value.split([',', ':']))
            .map(str::trim)
            .filter(|dir| !dir.is_empty())
            .filter_map(|dir| match dir.strip_prefix("~/") {
                Some(rest) => home.map(|h| h.join(rest)),
                None if Path::new(dir).is_absolute() => Some(PathBuf::from(dir)),
                None => Some(cwd.join(dir)),
            })
            .filter(|dir| plain(dir) && dir.parent().is_some())
            .collect();
        Area {
            home: home.map(Path::to_path_buf),
            cwd: cwd.to_path_buf(),
            chosen,
        }
    }

    /// The base `glob` is expanded under and the roots its files must lie
    /// under; or why it is not searched (naming the pattern).
    pub fn roots_of(&self, glob: &wit::TranscriptGlob) -> Result<(PathBuf, Roots), String> {
        glob::check(&glob.pattern)?;
        let base = match glob.base {
            wit::GlobBase::Home => self
                .home
                .clone()
                .ok_or_else(|| format!("no home directory, so {} is not searched", glob.pattern))?,
            wit::GlobBase::Cwd => self.cwd.clone(),
            wit::GlobBase::Absolute => PathBuf::from("/"),
        };
        let literal = glob::literal_root(&base, &glob.pattern);
        // A pattern without wildcards names one file: its directory is
        // the root.
        let dir = if glob::segments(&glob.pattern)
            .iter()
            .any(|s| s.contains(['*', '?']))
        {
            literal
        } else {
            literal.parent().map_or(literal.clone(), Path::to_path_buf)
        };
        let from = self.source_of(glob.base, &dir).ok_or_else(|| {
            format!(
                "the transcript pattern {} names {}, outside the CLI's own directories (below home for a home-relative pattern; the project; a directory a variable the component declared names); it is not searched",
                glob.pattern,
                dir.display()
            )
        })?;
        if dir.starts_with(&self.cwd) && !stays_inside(&dir, &self.cwd) {
            return Err(format!(
                "the transcript pattern {} leads through a link in the project to {}; it is not searched",
                glob.pattern,
                std::fs::canonicalize(&dir).unwrap_or(dir).display()
            ));
        }
        let home = self.home.clone().unwrap_or_default();
        let mut roots = Roots::new(secret_stores(&home));
        roots
            .add("the transcript directory", Sourced::new(dir, from))
            .map_err(|refused| format!("{}: {refused}", glob.pattern))?;
        Ok((base, roots))
    }

    /// Who chose `dir` as a transcript directory, if anyone may have.
    fn source_of(&self, base: wit::GlobBase, dir: &Path) -> Option<Provenance> {
        if !plain(dir) {
            return None;
        }
        let under_home = self
            .home
            .as_ref()
            .is_some_and(|h| dir.starts_with(h) && dir != h);
        let in_project = dir.starts_with(&self.cwd);
        match base {
            // The component's own convention, below home.
            wit::GlobBase::Home if under_home => Some(Provenance::Output),
            wit::GlobBase::Cwd if in_project => Some(Provenance::Operator),
            wit::GlobBase::Absolute if self.chosen.iter().any(|c| dir.starts_with(c)) => {
                Some(Provenance::User)
            }
            wit::GlobBase::Absolute if in_project => Some(Provenance::Operator),
            _ => None,
        }
    }
}

/// Absolute and without `..`.
fn plain(path: &Path) -> bool {
    path.is_absolute() && !path.components().any(|c| c == Component::ParentDir)
}

/// Whether `dir` (lexically under `cwd`) still is with links resolved: a
/// checkout may commit a link that leads out. A directory that does not
/// exist yet is taken as it reads.
fn stays_inside(dir: &Path, cwd: &Path) -> bool {
    match (std::fs::canonicalize(dir), std::fs::canonicalize(cwd)) {
        (Ok(dir), Ok(cwd)) => dir.starts_with(cwd),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::glob::{Budget, Scope, expand};

    fn glob(base: wit::GlobBase, pattern: &str) -> wit::TranscriptGlob {
        wit::TranscriptGlob {
            base,
            pattern: pattern.to_string(),
            format: "jsonl".to_string(),
            parser: "p".to_string(),
        }
    }

    #[test]
    fn a_component_cannot_point_drover_at_a_users_secrets() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let cwd = dir.path().join("project");
        for d in [".ssh", ".claude/projects/-w", "elsewhere"] {
            std::fs::create_dir_all(home.join(d)).expect("mkdir");
        }
        std::fs::create_dir_all(&cwd).expect("mkdir");
        std::fs::write(home.join(".ssh/id_rsa"), "KEY").expect("write");
        std::fs::write(home.join(".claude/projects/-w/s.jsonl"), "{}").expect("write");
        std::fs::write(home.join("elsewhere/x.jsonl"), "{}").expect("write");
        std::os::unix::fs::symlink(home.join("elsewhere"), home.join(".claude/projects/out"))
            .expect("link");
        std::os::unix::fs::symlink(home.join(".ssh"), cwd.join("keys")).expect("link");
        let area = Area::new(Some(&home), &cwd, &[]);
        let home_text = home.display().to_string();

        for (base, pattern) in [
            (wit::GlobBase::Absolute, format!("{home_text}/.ssh/id_rsa")),
            (wit::GlobBase::Absolute, format!("{home_text}/.ssh/*")),
            (wit::GlobBase::Absolute, "/etc/*".to_string()),
            (wit::GlobBase::Home, ".ssh/id_rsa".to_string()),
            (wit::GlobBase::Home, "**/*".to_string()),
            (wit::GlobBase::Home, ".claude/../.ssh/*".to_string()),
            (wit::GlobBase::Cwd, "../home/.ssh/*".to_string()),
            (wit::GlobBase::Cwd, "keys/*".to_string()),
        ] {
            let refused = area.roots_of(&glob(base, &pattern));
            assert!(refused.is_err(), "{pattern} was let through");
            assert!(
                refused
                    .err()
                    .is_some_and(|why| why.contains(pattern.as_str())),
                "the refusal names {pattern}"
            );
        }

        // The CLI's own directory is walked, but a link out of it is not.
        let (base, roots) = area
            .roots_of(&glob(wit::GlobBase::Home, ".claude/projects/*/*.jsonl"))
            .expect("the CLI's own directory");
        let mut warned = Vec::new();
        let found = expand(
            &base,
            ".claude/projects/*/*.jsonl",
            Scope::Confined(&roots),
            &mut Budget::new(),
            &mut |p: &Path, m: String| warned.push(format!("{}: {m}", p.display())),
        );
        let names: Vec<_> = found.iter().map(|f| f.path.clone()).collect();
        assert_eq!(names, [home.join(".claude/projects/-w/s.jsonl")]);
        assert!(
            warned.iter().any(|w| w.contains("projects/out")),
            "{warned:?}"
        );
    }

    #[test]
    fn a_directory_the_user_named_in_a_declared_variable_is_the_clis() {
        let dir = tempfile::tempdir().expect("tempdir");
        let home = dir.path().join("home");
        let srv = dir.path().join("srv/ai");
        std::fs::create_dir_all(srv.join("projects")).expect("mkdir");
        let env = [(
            "CLAUDE_CONFIG_DIR".to_string(),
            format!("{},{}", srv.display(), home.join(".alt").display()),
        )];
        let area = Area::new(Some(&home), &dir.path().join("project"), &env);
        let pattern = format!("{}/projects/*/*.jsonl", srv.display());
        assert!(
            area.roots_of(&glob(wit::GlobBase::Absolute, &pattern))
                .is_ok()
        );
        let other = format!("{}/other/*.jsonl", dir.path().join("srv").display());
        assert!(
            area.roots_of(&glob(wit::GlobBase::Absolute, &other))
                .is_err()
        );
    }

    #[test]
    fn a_pattern_with_too_many_double_stars_is_refused_by_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let area = Area::new(Some(dir.path()), dir.path(), &[]);
        let pattern = format!(".x/{}*.jsonl", "**/".repeat(24));
        let why = area
            .roots_of(&glob(wit::GlobBase::Home, &pattern))
            .expect_err("refused");
        assert!(why.contains(&pattern) && why.contains("24 `**`"), "{why}");
    }
}
