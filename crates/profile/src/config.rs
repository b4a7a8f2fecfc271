//! drover's settings files: the project's `.drover/config.toml` and the
//! user's `config.toml` (beside the user profiles, `~/.config/drover/`).
//!
//! This module only finds, reads and parses them, and says where a value
//! came from (which file, which line); each feature reads its own section
//! (`[workspace]`, `[run]`, `[[notify]]`, …) and validates it. A value set in
//! the project wins over the user's for single settings; lists of tables
//! (`[[notify]]`) come from both files, user first.

use std::path::{Path, PathBuf};

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
    text: String,
    table: toml::Table,
}

impl ConfigFile {
    /// Reads and parses `path`; `Ok(None)` when it does not exist.
    pub fn read(path: &Path, scope: Scope) -> Result<Option<ConfigFile>, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(ConfigError::Read {
                    path: path.display().to_string(),
                    reason: e.to_string(),
                });
            }
        };
        ConfigFile::parse(path, scope, text).map(Some)
    }

    pub fn parse(path: &Path, scope: Scope, text: String) -> Result<ConfigFile, ConfigError> {
        let table = text
            .parse::<toml::Table>()
            .map_err(|e| ConfigError::Syntax {
                path: path.display().to_string(),
                line: e.span().map(|s| line_of(&text, s.start)),
                message: e.message().to_string(),
            })?;
        Ok(ConfigFile {
            path: path.to_path_buf(),
            scope,
            text,
            table,
        })
    }

    pub fn table(&self) -> &toml::Table {
        &self.table
    }

    /// The file's bytes as read (for hashing, e.g. by trust records).
    pub fn text(&self) -> &str {
        &self.text
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
    pub fn load(project: &Path) -> Result<Config, ConfigError> {
        let user = match user_dir() {
            Some(dir) => ConfigFile::read(&dir.join("config.toml"), Scope::User)?,
            None => None,
        };
        let project = ConfigFile::read(&project_path(project), Scope::Project)?;
        Ok(Config { user, project })
    }

    /// The files present, user first.
    pub fn files(&self) -> impl Iterator<Item = &ConfigFile> {
        self.user.iter().chain(self.project.iter())
    }

    /// A single setting: the project's value if it sets one, else the user's.
    pub fn get(&self, keys: &[&str]) -> Option<(&toml::Value, &ConfigFile)> {
        self.project
            .iter()
            .chain(self.user.iter())
            .find_map(|file| file.get(keys).map(|v| (v, file)))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> ConfigFile {
        ConfigFile::parse(
            Path::new("/p/config.toml"),
            Scope::Project,
            text.to_string(),
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
}
