//! drover-config: drover's settings files: the project's `.drover/config.toml` and the
//! user's `config.toml` (beside the user profiles, `~/.config/drover/`).
//!
//! This module only finds, reads and parses them, and says where a value
//! came from (which file, which line, and its [`Provenance`]); each feature
//! reads its own section (`[workspace]`, `[run]`, `[[notify]]`, …) and
//! validates it. A value set in the project wins over the user's for single
//! settings; lists of tables (`[[notify]]`) come from both files, user first.
//!
//! Each file is read once, bounded ([`drover_gate::read`]: a FIFO or a device
//! at `.drover/config.toml` is refused, not waited on), and the project
//! file's provenance is decided then, from the digest of exactly the bytes
//! parsed: a file swapped after the load can change nothing. A setting that
//! decides what runs or where drover connects is read with
//! [`Config::get_for`], which sets an untrusted project's value aside.

use std::path::{Path, PathBuf};

use drover_gate::{Cleared, Effect, Provenance, Refused, Sourced};
use sha2::{Digest, Sha256};
use toml::de::{DeTable, DeValue};

/// Which file a setting came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    User,
    Project,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: cannot read: {reason}")]
    Read { path: String, reason: String },
    #[error("{path}{}: invalid TOML: {message}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    Syntax {
        path: String,
        line: Option<usize>,
        message: String,
    },
}

/// One parsed settings file.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    pub path: PathBuf,
    pub scope: Scope,
    /// Decided once, at load, from the bytes parsed.
    provenance: Provenance,
    /// SHA-256 of the bytes parsed, as trust records hold it.
    digest: String,
    text: String,
    table: toml::Table,
}

impl ConfigFile {
    /// Reads and parses `path`; `Ok(None)` when it does not exist.
    /// `trusts(path, sha256)` says whether the user trusts a project file
    /// with these bytes (the trust store lives above this crate); it is
    /// asked about the digest of the bytes read here, never the file again.
    pub fn read(
        path: &Path,
        scope: Scope,
        trusts: impl FnOnce(&Path, &str) -> bool,
    ) -> Result<Option<ConfigFile>, ConfigError> {
        let unreadable = |e: std::io::Error| ConfigError::Read {
            path: path.display().to_string(),
            reason: e.to_string(),
        };
        // The user's own file may be a link (dotfiles managers make them);
        // a checkout's may not.
        let target = match scope {
            Scope::User => match std::fs::canonicalize(path) {
                Ok(target) => target,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(unreadable(e)),
            },
            Scope::Project => path.to_path_buf(),
        };
        let text =
            match drover_gate::read::read_text_bounded(&target, drover_gate::read::SETTINGS_MAX) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(unreadable(e)),
            };
        ConfigFile::parse(path, scope, text, trusts).map(Some)
    }

    /// Parses `text` as the file at `path`; `trusts` as for [`ConfigFile::read`].
    pub fn parse(
        path: &Path,
        scope: Scope,
        text: String,
        trusts: impl FnOnce(&Path, &str) -> bool,
    ) -> Result<ConfigFile, ConfigError> {
        let table = text
            .parse::<toml::Table>()
            .map_err(|e| ConfigError::Syntax {
                path: path.display().to_string(),
                line: e.span().map(|s| line_of(&text, s.start)),
                message: e.message().to_string(),
            })?;
        let digest = digest(text.as_bytes());
        let provenance = match scope {
            Scope::User => Provenance::User,
            Scope::Project if trusts(path, &digest) => Provenance::TrustedProject,
            Scope::Project => Provenance::UntrustedProject,
        };
        Ok(ConfigFile {
            path: path.to_path_buf(),
            scope,
            provenance,
            digest,
            text,
            table,
        })
    }

    pub fn table(&self) -> &toml::Table {
        &self.table
    }

    /// The file's text as read and parsed.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// SHA-256 of the bytes parsed.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// Where every value of this file comes from, for the gate.
    pub fn provenance(&self) -> Provenance {
        self.provenance
    }

    /// The value at a dotted path of keys (`["workspace", "default"]`).
    pub fn get(&self, keys: &[&str]) -> Option<&toml::Value> {
        let (first, rest) = keys.split_first()?;
        let mut value = self.table.get(*first)?;
        for key in rest {
            value = value.get(*key)?;
        }
        Some(value)
    }

    /// [`ConfigFile::get`], with the file's provenance.
    pub fn sourced(&self, keys: &[&str]) -> Option<Sourced<&toml::Value>> {
        self.get(keys).map(|v| Sourced::new(v, self.provenance))
    }

    /// The line a dotted path (array items by index: `["notify", "1", "url"]`)
    /// starts on, for error messages.
    pub fn line(&self, keys: &[&str]) -> Option<usize> {
        let root = DeTable::parse(&self.text).ok()?;
        let mut span = root.span();
        let mut value: Option<&DeValue<'_>> = None;
        let mut table = Some(root.get_ref());
        for key in keys {
            let next = match (table, value) {
                (Some(t), _) => t
                    .iter()
                    .find(|(k, _)| k.get_ref().as_ref() == *key)
                    .map(|(_, v)| v),
                (None, Some(DeValue::Array(items))) => {
                    key.parse::<usize>().ok().and_then(|n| items.get(n))
                }
                _ => None,
            }?;
            span = next.span();
            value = Some(next.get_ref());
            table = match next.get_ref() {
                DeValue::Table(t) => Some(t),
                _ => None,
            };
        }
        Some(line_of(&self.text, span.start))
    }

    /// `path:line: field` for error messages about `keys`.
    pub fn locate(&self, keys: &[&str]) -> String {
        let field = keys.join(".");
        match self.line(keys) {
            Some(line) => format!("{}:{line}: {field}", self.path.display()),
            None => format!("{}: {field}", self.path.display()),
        }
    }
}

/// What to tell the user about a setting the gate set aside.
pub fn set_aside(refused: &Refused) -> String {
    format!(
        "{refused}: ignored until you trust this project (review it with `drover trust --show`, then run `drover trust`)"
    )
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Both settings files of a project, either of which may be absent.
#[derive(Debug, Clone, Default)]
pub struct Config {
    pub user: Option<ConfigFile>,
    pub project: Option<ConfigFile>,
}

impl Config {
    /// Both files, each read once; `trusts` as for [`ConfigFile::read`].
    pub fn load(
        project: &Path,
        trusts: impl FnOnce(&Path, &str) -> bool,
    ) -> Result<Config, ConfigError> {
        let user = match user_dir() {
            Some(dir) => ConfigFile::read(&dir.join("config.toml"), Scope::User, |_, _| false)?,
            None => None,
        };
        let project = ConfigFile::read(&project_path(project), Scope::Project, trusts)?;
        Ok(Config { user, project })
    }

    /// The files present, user first.
    pub fn files(&self) -> impl Iterator<Item = &ConfigFile> {
        self.user.iter().chain(self.project.iter())
    }

    /// A single setting: the project's value if it sets one, else the user's.
    /// Only for settings that decide nothing outside the sandbox; the rest
    /// go through [`Config::get_for`].
    pub fn get(&self, keys: &[&str]) -> Option<(&toml::Value, &ConfigFile)> {
        self.project
            .iter()
            .chain(self.user.iter())
            .find_map(|file| file.get(keys).map(|v| (v, file)))
    }

    /// A single setting that drives `effect` (what runs, where drover
    /// connects): the project's value if it sets one and the gate lets it
    /// drive `effect` (the project is trusted), else the user's; with what
    /// was set aside on the way ([`set_aside`] words it).
    pub fn get_for(
        &self,
        effect: Effect,
        keys: &[&str],
    ) -> (Option<(Cleared<&toml::Value>, &ConfigFile)>, Vec<Refused>) {
        let mut refused = Vec::new();
        for file in self.project.iter().chain(self.user.iter()) {
            let Some(value) = file.sourced(keys) else {
                continue;
            };
            match drover_gate::clear(effect, &file.locate(keys), value) {
                Ok(cleared) => return (Some((cleared, file)), refused),
                Err(r) => refused.push(r),
            }
        }
        (None, refused)
    }

    /// Every item of an array of tables (`[[notify]]`) from both files, user
    /// first, each with its file and index within that file.
    pub fn items(&self, key: &str) -> Vec<(&toml::Value, &ConfigFile, usize)> {
        let mut out = Vec::new();
        for file in self.files() {
            if let Some(toml::Value::Array(items)) = file.table.get(key) {
                out.extend(items.iter().enumerate().map(|(n, v)| (v, file, n)));
            }
        }
        out
    }
}

/// `$XDG_CONFIG_HOME/drover`, else `~/.config/drover`: user profiles,
/// adapters and `config.toml` live here.
pub fn user_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var("XDG_CONFIG_HOME")
        .map(|d| d.join("drover"))
        .or_else(|| var("HOME").map(|h| h.join(".config").join("drover")))
}

/// `<project>/.drover/config.toml`.
pub fn project_path(project: &Path) -> PathBuf {
    project.join(".drover").join("config.toml")
}

/// The SHA-256 of `bytes` in hex: what trust is recorded under, and the
/// compile cache's key.
pub fn digest(bytes: &[u8]) -> String {
    drover_types::text::hex(&Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> ConfigFile {
        ConfigFile::parse(
            Path::new("/p/config.toml"),
            Scope::Project,
            text.to_string(),
            |_, _| true,
        )
        .expect("valid toml")
    }

    #[test]
    fn lines_are_found_for_nested_keys_and_array_items() {
        let f = file(
            "[workspace]\ndefault = \"tmux\"\n\n[[notify]]\nkind = \"webhook\"\n\n[[notify]]\nkind = \"command\"\nargv = [\"x\"]\n",
        );
        assert_eq!(f.line(&["workspace", "default"]), Some(2));
        assert_eq!(f.line(&["notify", "1", "argv"]), Some(9));
        assert_eq!(f.line(&["notify", "7"]), None);
        assert_eq!(
            f.locate(&["notify", "0", "kind"]),
            "/p/config.toml:5: notify.0.kind"
        );
    }

    #[test]
    fn syntax_errors_name_the_file_and_line() {
        let e = ConfigFile::parse(
            Path::new("/p/config.toml"),
            Scope::Project,
            "a = 1\nb = = 2\n".to_string(),
            |_, _| true,
        )
        .expect_err("invalid toml");
        let text = e.to_string();
        assert!(text.starts_with("/p/config.toml:2: invalid TOML"), "{text}");
    }

    #[test]
    fn project_values_win_and_lists_come_from_both() {
        let user = ConfigFile::parse(
            Path::new("/u/config.toml"),
            Scope::User,
            "[run]\ncli = \"codex\"\n[[notify]]\nkind = \"desktop\"\n".to_string(),
            |_, _| false,
        )
        .expect("valid");
        let project = file("[run]\ncli = \"gemini\"\n[[notify]]\nkind = \"tmux\"\n");
        let config = Config {
            user: Some(user),
            project: Some(project),
        };
        let (value, from) = config.get(&["run", "cli"]).expect("set");
        assert_eq!(value.as_str(), Some("gemini"));
        assert_eq!(from.scope, Scope::Project);
        let kinds: Vec<_> = config
            .items("notify")
            .iter()
            .map(|(v, f, _)| (v.get("kind").and_then(|k| k.as_str()), f.scope))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (Some("desktop"), Scope::User),
                (Some("tmux"), Scope::Project)
            ]
        );
    }

    #[test]
    fn provenance_is_decided_from_the_digest_of_the_bytes_parsed() {
        let text = "[workspace]\ndefault = \"ray\"\n";
        let mut asked = None;
        let f = ConfigFile::parse(
            Path::new("/p/.drover/config.toml"),
            Scope::Project,
            text.to_string(),
            |path, digest| {
                asked = Some((path.to_path_buf(), digest.to_string()));
                false
            },
        )
        .expect("valid");
        assert_eq!(f.provenance(), Provenance::UntrustedProject);
        let digest = digest(text.as_bytes());
        assert_eq!(
            asked,
            Some((PathBuf::from("/p/.drover/config.toml"), digest.clone()))
        );
        assert_eq!(f.digest(), digest);
        let trusted = ConfigFile::parse(
            Path::new("/p/.drover/config.toml"),
            Scope::Project,
            text.to_string(),
            |_, d| d == digest,
        )
        .expect("valid");
        assert_eq!(trusted.provenance(), Provenance::TrustedProject);
        let user = ConfigFile::parse(
            Path::new("/u/config.toml"),
            Scope::User,
            text.to_string(),
            |_, _| false,
        )
        .expect("valid");
        assert_eq!(user.provenance(), Provenance::User);
    }

    #[test]
    fn an_untrusted_projects_setting_is_set_aside_for_the_users() {
        let parse = |text: &str, scope, trusted: bool| {
            ConfigFile::parse(
                Path::new(if scope == Scope::User {
                    "/u/config.toml"
                } else {
                    "/p/config.toml"
                }),
                scope,
                text.to_string(),
                move |_, _| trusted,
            )
            .expect("valid")
        };
        let config = |trusted| Config {
            user: Some(parse(
                "[workspace]\ndefault = \"tmux\"\n",
                Scope::User,
                false,
            )),
            project: Some(parse(
                "[workspace]\ndefault = \"ray\"\n",
                Scope::Project,
                trusted,
            )),
        };
        let untrusted = config(false);
        let (found, refused) = untrusted.get_for(Effect::Spawn, &["workspace", "default"]);
        let (value, file) = found.expect("the user's");
        assert_eq!(value.as_str(), Some("tmux"));
        assert_eq!(file.scope, Scope::User);
        assert_eq!(refused.len(), 1);
        let note = set_aside(&refused[0]);
        assert!(
            note.contains("/p/config.toml:2: workspace.default")
                && note.contains("untrusted project settings")
                && note.contains("drover trust"),
            "{note}"
        );
        let trusted = config(true);
        let (found, refused) = trusted.get_for(Effect::Spawn, &["workspace", "default"]);
        assert_eq!(found.map(|(v, _)| v.as_str()), Some(Some("ray")));
        assert!(refused.is_empty());
    }

    #[test]
    fn a_project_config_that_is_not_a_regular_file_is_refused_not_waited_on() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = ConfigFile::read(&path, Scope::Project, |_, _| true).expect_err("a FIFO");
        assert!(e.to_string().contains("FIFO"), "{e}");
        let link = dir.path().join("linked.toml");
        let real = dir.path().join("real.toml");
        std::fs::write(&real, "a = 1\n").expect("write");
        std::os::unix::fs::symlink(&real, &link).expect("link");
        let e = ConfigFile::read(&link, Scope::Project, |_, _| true).expect_err("a link");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        // The user's own file may be a link.
        let user = ConfigFile::read(&link, Scope::User, |_, _| false)
            .expect("read")
            .expect("present");
        assert_eq!(user.get(&["a"]).and_then(toml::Value::as_integer), Some(1));
    }
}
