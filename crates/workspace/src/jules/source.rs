//! Which repository and branch a Jules session works on: the checkout's
//! git remote `origin` (a GitHub URL) and its current branch, read from
//! the git files directly. No `git` is run: a checkout's git config can
//! name programs git would start.

use std::path::{Path, PathBuf};

use super::api::plain;

/// Bytes of a git file read at most.
const FILE_MAX: u64 = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    pub owner: String,
    pub repo: String,
    pub branch: String,
}

/// The GitHub repository and branch of the checkout at `project`, or why
/// there is none.
pub fn of_checkout(project: &Path) -> Result<Repo, String> {
    let git = git_dir(project)?;
    let common = read_small(&git.join("commondir"))
        .map(|rel| {
            let rel = PathBuf::from(rel.trim());
            if rel.is_absolute() {
                rel
            } else {
                git.join(rel)
            }
        })
        .unwrap_or_else(|| git.clone());
    let config = read_small(&common.join("config"))
        .ok_or_else(|| format!("{} has no readable git config", project.display()))?;
    let url = origin_url(&config).ok_or_else(|| {
        format!(
            "{} has no git remote `origin`: Jules works on a GitHub repository (add one with `git remote add origin https://github.com/OWNER/REPO`)",
            project.display()
        )
    })?;
    let (owner, repo) = github(&url).ok_or_else(|| {
        format!(
            "the remote `origin` of {} is {url:?}, not a GitHub repository: Jules works only on GitHub repositories",
            project.display()
        )
    })?;
    let head = read_small(&git.join("HEAD"))
        .ok_or_else(|| format!("{} has no readable HEAD", git.display()))?;
    let branch = head
        .trim()
        .strip_prefix("ref: refs/heads/")
        .map(str::to_string)
        .filter(|b| !b.is_empty() && !b.chars().any(char::is_control))
        .ok_or_else(|| {
            format!(
                "{} is not on a branch (a detached HEAD): Jules starts from a branch",
                project.display()
            )
        })?;
    Ok(Repo {
        owner,
        repo,
        branch,
    })
}

/// `.git` as a directory, or the directory a `.git` file (a worktree, a
/// submodule) points at.
fn git_dir(project: &Path) -> Result<PathBuf, String> {
    let dot = project.join(".git");
    if dot.is_dir() {
        return Ok(dot);
    }
    let text =
        read_small(&dot).ok_or_else(|| format!("{} is not a git checkout", project.display()))?;
    let target = text
        .trim()
        .strip_prefix("gitdir:")
        .map(|t| PathBuf::from(t.trim()))
        .ok_or_else(|| format!("{} is not a gitdir link", dot.display()))?;
    Ok(if target.is_absolute() {
        target
    } else {
        project.join(target)
    })
}

fn read_small(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    file.take(FILE_MAX).read_to_string(&mut text).ok()?;
    Some(text)
}

/// `[remote "origin"] url = …` of a git config file.
fn origin_url(config: &str) -> Option<String> {
    let mut in_origin = false;
    for line in config.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            let section: String = line.chars().filter(|c| !c.is_whitespace()).collect();
            in_origin = section == "[remote\"origin\"]";
            continue;
        }
        if !in_origin {
            continue;
        }
        if let Some((key, value)) = line.split_once('=')
            && key.trim().eq_ignore_ascii_case("url")
        {
            return Some(value.trim().trim_matches('"').to_string());
        }
    }
    None
}

/// `owner` and `repo` of a GitHub URL in any of git's forms:
/// `https://github.com/o/r(.git)`, `git@github.com:o/r.git`,
/// `ssh://git@github.com/o/r.git`.
pub fn github(url: &str) -> Option<(String, String)> {
    let rest = url
        .strip_prefix("https://github.com/")
        .or_else(|| url.strip_prefix("http://github.com/"))
        .or_else(|| url.strip_prefix("git@github.com:"))
        .or_else(|| url.strip_prefix("ssh://git@github.com/"))
        .or_else(|| url.strip_prefix("git://github.com/"))?;
    let rest = rest.trim_end_matches('/');
    let rest = rest.strip_suffix(".git").unwrap_or(rest);
    let (owner, repo) = rest.split_once('/')?;
    (plain(owner) && plain(repo)).then(|| (owner.to_string(), repo.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_github_url_form_names_owner_and_repo() {
        for url in [
            "https://github.com/acme/widgets.git",
            "https://github.com/acme/widgets",
            "git@github.com:acme/widgets.git",
            "ssh://git@github.com/acme/widgets.git",
        ] {
            assert_eq!(
                github(url),
                Some(("acme".to_string(), "widgets".to_string())),
                "{url}"
            );
        }
        assert_eq!(github("https://gitlab.com/acme/widgets.git"), None);
        assert_eq!(github("https://github.com/acme/../x"), None);
    }

    #[test]
    fn origin_is_read_from_its_own_section_only() {
        let config = "[core]\n\turl = nope\n[remote \"upstream\"]\n\turl = https://github.com/a/b\n[remote \"origin\"]\n\turl = https://github.com/c/d.git\n";
        assert_eq!(
            origin_url(config).as_deref(),
            Some("https://github.com/c/d.git")
        );
        assert_eq!(origin_url("[remote \"upstream\"]\nurl = x\n"), None);
    }

    #[test]
    fn a_checkout_without_a_remote_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join(".git")).expect("git dir");
        std::fs::write(dir.path().join(".git/config"), "[core]\n").expect("config");
        std::fs::write(dir.path().join(".git/HEAD"), "ref: refs/heads/main\n").expect("HEAD");
        let why = of_checkout(dir.path()).expect_err("no origin");
        assert!(why.contains("no git remote `origin`"), "{why}");
        std::fs::write(
            dir.path().join(".git/config"),
            "[remote \"origin\"]\n\turl = git@github.com:acme/widgets.git\n",
        )
        .expect("config");
        assert_eq!(
            of_checkout(dir.path()),
            Ok(Repo {
                owner: "acme".to_string(),
                repo: "widgets".to_string(),
                branch: "main".to_string()
            })
        );
    }
}
