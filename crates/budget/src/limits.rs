//! The `[budget]` section of the user's `config.toml` and of a trusted
//! project's `.drover/config.toml`:
//!
//! ```toml
//! [budget]
//! seat = { usd = 2.0 }                  # each seat, over its life
//! day = { usd = 20.0 }                  # the project, since local midnight
//! project = { usd = 500.0, tokens = 90_000_000 }
//! role.reviewer = { usd = 5.0 }         # every seat of a role together
//! team.frontend = { seats = ["fe1", "fe2"], usd = 8.0 }
//! ```
//!
//! `usd` is priced like `drover usage`; `tokens` are weighted like `drover
//! run --budget` (cache reads count a tenth). Both files' limits apply, so
//! the stricter one decides; an untrusted project's section is set aside
//! (a checkout must not decide what a person is asked, or when). A broken
//! section is an error naming its file, line and field: budgets guard
//! money, so they fail closed rather than being skipped.

use std::fmt;

use drover_config::{Config, ConfigFile};
use drover_gate::Provenance;

/// What a limit counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Level {
    /// Each seat, over its life (from `drover up` to `down`).
    Seat,
    /// Every seat of a role together.
    Role(String),
    /// A named set of seats together.
    Team { name: String, seats: Vec<String> },
    /// Everything the project's sessions spent.
    Project,
    /// The project's spend since local midnight.
    Day,
}

impl Level {
    /// How people and the journal name it: `seat`, `role reviewer`, `team
    /// frontend`, `project`, `day`.
    pub fn name(&self) -> String {
        match self {
            Level::Seat => "seat".to_string(),
            Level::Role(role) => format!("role {role}"),
            Level::Team { name, .. } => format!("team {name}"),
            Level::Project => "project".to_string(),
            Level::Day => "day".to_string(),
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// One limit, as a settings file sets it.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    pub level: Level,
    pub usd: Option<f64>,
    pub tokens: Option<u64>,
    /// `path:line` of the table that set it.
    pub at: String,
}

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{at}: {message}")]
pub struct LimitError {
    /// `path:line: field`.
    pub at: String,
    pub message: String,
}

/// Every limit both files set, user first, and what was set aside (an
/// untrusted project's section), worded for people.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Limits {
    pub limits: Vec<Limit>,
    pub set_aside: Vec<String>,
}

impl Limits {
    pub fn from_config(config: &Config) -> Result<Limits, LimitError> {
        let mut out = Limits::default();
        for file in config.files() {
            if file.get(&["budget"]).is_none() {
                continue;
            }
            if file.provenance() == Provenance::UntrustedProject {
                out.set_aside.push(format!(
                    "{}: [budget] is ignored until you trust this project (`drover trust`)",
                    file.locate(&["budget"])
                ));
                continue;
            }
            out.limits.extend(of_file(file)?);
        }
        Ok(out)
    }

    pub fn is_empty(&self) -> bool {
        self.limits.is_empty()
    }
}

const LEVELS: &str = "seat, day, project, role.<name>, team.<name>";

fn of_file(file: &ConfigFile) -> Result<Vec<Limit>, LimitError> {
    let err = |keys: &[&str], message: String| LimitError {
        at: file.locate(keys),
        message,
    };
    let Some(table) = file.get(&["budget"]).and_then(toml::Value::as_table) else {
        return Err(err(&["budget"], "must be a table".to_string()));
    };
    let mut limits = Vec::new();
    for (key, value) in table {
        match key.as_str() {
            "seat" | "day" | "project" => {
                let level = match key.as_str() {
                    "seat" => Level::Seat,
                    "day" => Level::Day,
                    _ => Level::Project,
                };
                limits.push(limit(file, &["budget", key], value, level)?);
            }
            "role" | "team" => {
                let Some(named) = value.as_table() else {
                    return Err(err(
                        &["budget", key],
                        format!("must be a table of {key} names (`{key}.NAME = {{ usd = 5.0 }}`)"),
                    ));
                };
                for (name, value) in named {
                    let keys = ["budget", key.as_str(), name.as_str()];
                    let level = if key == "role" {
                        Level::Role(name.clone())
                    } else {
                        Level::Team {
                            name: name.clone(),
                            seats: team_seats(file, &keys, value)?,
                        }
                    };
                    limits.push(limit(file, &keys, value, level)?);
                }
            }
            other => {
                return Err(err(
                    &["budget", other],
                    format!("not a budget level (one of {LEVELS})"),
                ));
            }
        }
    }
    Ok(limits)
}

fn team_seats(
    file: &ConfigFile,
    keys: &[&str],
    value: &toml::Value,
) -> Result<Vec<String>, LimitError> {
    // A missing field has no line of its own: its table's line names it.
    let at = |field: &str| {
        let mut path = keys.to_vec();
        path.push(field);
        match file.line(&path) {
            Some(_) => file.locate(&path),
            None => format!("{}.{field}", file.locate(keys)),
        }
    };
    let Some(list) = value.get("seats").and_then(toml::Value::as_array) else {
        return Err(LimitError {
            at: at("seats"),
            message: "a team needs `seats`, a list of seat nicknames".to_string(),
        });
    };
    list.iter()
        .map(|seat| {
            seat.as_str()
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .ok_or_else(|| LimitError {
                    at: at("seats"),
                    message: format!("{seat} is not a seat nickname"),
                })
        })
        .collect()
}

fn limit(
    file: &ConfigFile,
    keys: &[&str],
    value: &toml::Value,
    level: Level,
) -> Result<Limit, LimitError> {
    let at = |field: Option<&str>| {
        let mut path = keys.to_vec();
        path.extend(field);
        file.locate(&path)
    };
    let Some(table) = value.as_table() else {
        return Err(LimitError {
            at: at(None),
            message: "must be a table (`{ usd = 5.0 }` or `{ tokens = 2000000 }`)".to_string(),
        });
    };
    let mut usd = None;
    let mut tokens = None;
    for (field, value) in table {
        match field.as_str() {
            "usd" => {
                let dollars = match value {
                    toml::Value::Float(f) => Some(*f),
                    toml::Value::Integer(i) => Some(*i as f64),
                    _ => None,
                };
                usd = Some(
                    dollars
                        .filter(|d| d.is_finite() && *d > 0.0)
                        .ok_or_else(|| LimitError {
                            at: at(Some("usd")),
                            message: format!("{value} is not a positive number of dollars"),
                        })?,
                );
            }
            "tokens" => {
                tokens = Some(
                    value
                        .as_integer()
                        .filter(|t| *t > 0)
                        .and_then(|t| u64::try_from(t).ok())
                        .ok_or_else(|| LimitError {
                            at: at(Some("tokens")),
                            message: format!("{value} is not a positive number of tokens"),
                        })?,
                );
            }
            "seats" if matches!(level, Level::Team { .. }) => {}
            other => {
                return Err(LimitError {
                    at: at(Some(other)),
                    message: "not a budget field (usd, tokens; a team also has seats)".to_string(),
                });
            }
        }
    }
    if usd.is_none() && tokens.is_none() {
        return Err(LimitError {
            at: at(None),
            message: "sets no limit: give `usd`, `tokens` or both".to_string(),
        });
    }
    Ok(Limit {
        level,
        usd,
        tokens,
        at: file.locate(keys),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_config::Scope;
    use std::path::Path;

    fn limits(text: &str) -> Result<Vec<Limit>, LimitError> {
        let file = ConfigFile::parse(
            Path::new("/u/config.toml"),
            Scope::User,
            text.to_string(),
            |_, _| false,
        )
        .expect("toml");
        of_file(&file)
    }

    #[test]
    fn every_level_reads_with_its_limits() {
        let read = limits(
            "[budget]\nseat = { usd = 2 }\nday = { usd = 1.5 }\nproject = { tokens = 900 }\nrole.reviewer = { usd = 3.0, tokens = 10 }\nteam.fe = { seats = [\"a\", \"b\"], usd = 4.0 }\n",
        )
        .expect("valid");
        let levels: Vec<(String, Option<f64>, Option<u64>)> = read
            .iter()
            .map(|l| (l.level.name(), l.usd, l.tokens))
            .collect();
        assert_eq!(
            levels,
            vec![
                ("day".to_string(), Some(1.5), None),
                ("project".to_string(), None, Some(900)),
                ("role reviewer".to_string(), Some(3.0), Some(10)),
                ("seat".to_string(), Some(2.0), None),
                ("team fe".to_string(), Some(4.0), None),
            ]
        );
        let team = read
            .iter()
            .find(|l| l.level.name() == "team fe")
            .expect("team");
        assert_eq!(
            team.level,
            Level::Team {
                name: "fe".to_string(),
                seats: vec!["a".to_string(), "b".to_string()]
            }
        );
        assert_eq!(team.at, "/u/config.toml:6: budget.team.fe");
    }

    #[test]
    fn each_mistake_names_its_file_line_and_field() {
        let cases = [
            (
                "[budget]\nweek = { usd = 1 }\n",
                "/u/config.toml:2: budget.week",
                "not a budget level",
            ),
            (
                "[budget]\nday = { usd = -1 }\n",
                "/u/config.toml:2: budget.day.usd",
                "not a positive number of dollars",
            ),
            (
                "[budget]\nday = { usd = \"1\" }\n",
                "/u/config.toml:2: budget.day.usd",
                "not a positive number",
            ),
            (
                "[budget]\nday = { tokens = 0 }\n",
                "/u/config.toml:2: budget.day.tokens",
                "not a positive number of tokens",
            ),
            (
                "[budget]\nday = { dollars = 1 }\n",
                "/u/config.toml:2: budget.day.dollars",
                "not a budget field",
            ),
            (
                "[budget]\nday = {}\n",
                "/u/config.toml:2: budget.day",
                "sets no limit",
            ),
            (
                "[budget]\nday = 5\n",
                "/u/config.toml:2: budget.day",
                "must be a table",
            ),
            (
                "[budget]\nteam.fe = { usd = 1 }\n",
                "/u/config.toml:2: budget.team.fe.seats",
                "needs `seats`",
            ),
            (
                "[budget]\nteam.fe = { seats = [1], usd = 1 }\n",
                "/u/config.toml:2: budget.team.fe.seats",
                "not a seat nickname",
            ),
            (
                "[budget]\nrole = 3\n",
                "/u/config.toml:2: budget.role",
                "table of role names",
            ),
            (
                "[budget]\nseat = { usd = 1, seats = [\"a\"] }\n",
                "/u/config.toml:2: budget.seat.seats",
                "not a budget field",
            ),
        ];
        for (text, at, message) in cases {
            let e = limits(text).expect_err(text);
            assert_eq!(e.at, at, "{text}");
            assert!(e.message.contains(message), "{text}: {}", e.message);
        }
    }

    #[test]
    fn an_untrusted_projects_budget_is_set_aside() {
        let project = ConfigFile::parse(
            Path::new("/p/.drover/config.toml"),
            Scope::Project,
            "[budget]\nday = { usd = 1000 }\n".to_string(),
            |_, _| false,
        )
        .expect("toml");
        let config = Config {
            user: None,
            project: Some(project),
        };
        let read = Limits::from_config(&config).expect("valid");
        assert!(read.limits.is_empty());
        assert_eq!(read.set_aside.len(), 1);
        assert!(read.set_aside[0].starts_with("/p/.drover/config.toml:1: budget"));
    }
}
