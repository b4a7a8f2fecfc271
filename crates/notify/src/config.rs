//! `[[notify]]` entries from `.drover/config.toml` and the user's
//! `config.toml` (both files' entries apply, user first). Each entry is
//! checked on its own: a bad one is reported with its file, line and field
//! and skipped, and never stops the others.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use sha2::{Digest, Sha256};

use drover_config::{Config, ConfigFile};
use drover_gate::{Effect, Provenance, Sourced};

/// The events an entry can ask for.
pub const EVENTS: &[&str] = &[
    "blocked",
    "budget",
    "suspended",
    "resumed",
    "done",
    "completed",
    "stalled",
    "timeout",
    "crashed",
    "over_budget",
    "fault",
];

/// `on` when an entry does not say: everything but `done`, which every
/// completed turn also reports as `completed`.
const DEFAULT_ON: &[&str] = &[
    "blocked",
    "budget",
    "suspended",
    "resumed",
    "completed",
    "stalled",
    "timeout",
    "crashed",
    "over_budget",
    "fault",
];

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Target {
    /// The platform's notifier (`notify-send`, `osascript`).
    Desktop,
    /// `display-message` on the run's tmux session.
    Tmux,
    /// `notification.show` on the herdr server holding the run's panes.
    Herdr,
    /// POST one JSON document per event.
    Webhook {
        url: String,
        /// Reported by name only: values are often secrets.
        #[serde(serialize_with = "header_names")]
        headers: BTreeMap<String, String>,
    },
    /// Run `argv` with the JSON document on stdin.
    Command { argv: Vec<String> },
}

fn header_names<S: serde::Serializer>(
    headers: &BTreeMap<String, String>,
    out: S,
) -> Result<S::Ok, S::Error> {
    out.collect_seq(headers.keys())
}

impl Target {
    pub fn kind(&self) -> &'static str {
        match self {
            Target::Desktop => "desktop",
            Target::Tmux => "tmux",
            Target::Herdr => "herdr",
            Target::Webhook { .. } => "webhook",
            Target::Command { .. } => "command",
        }
    }
}

/// One usable `[[notify]]` entry.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    /// Stable across runs while the entry's text stays the same: the ledger
    /// records what was sent per event and entry.
    pub id: String,
    /// `path:line` of the entry.
    pub at: String,
    pub scope: &'static str,
    /// Its file's provenance: a command or webhook is cleared against it
    /// when it is delivered.
    #[serde(skip)]
    pub from: Provenance,
    pub on: Vec<String>,
    #[serde(flatten)]
    pub target: Target,
}

impl Entry {
    /// The first of `events` this entry asks for.
    pub fn wants<'a>(&self, events: &[&'a str]) -> Option<&'a str> {
        events
            .iter()
            .copied()
            .find(|e| self.on.iter().any(|o| o == e))
    }
}

/// Every entry of both files, and what was wrong with the rest.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Notifiers {
    pub entries: Vec<Entry>,
    pub errors: Vec<String>,
    /// Entries set aside (with why), e.g. a project's command before trust.
    pub ignored: Vec<String>,
}

impl Notifiers {
    pub fn load(project: &Path) -> Notifiers {
        match drover_trust::load_config(project) {
            Ok(config) => Notifiers::from_config(&config),
            Err(e) => Notifiers {
                errors: vec![e.to_string()],
                ..Notifiers::default()
            },
        }
    }

    /// The entries of `config`; a project's commands and webhooks only when
    /// its file is trusted (its provenance, decided when it was read).
    pub fn from_config(config: &Config) -> Notifiers {
        let mut out = Notifiers::default();
        for (value, file, index) in config.items("notify") {
            match parse(value, file, index) {
                Ok(entry) => match entry.check() {
                    Err(refused) => out.ignored.push(format!(
                        "{}; or put this entry in the user config ({})",
                        drover_config::set_aside(&refused),
                        drover_config::user_dir()
                            .map(|d| d.join("config.toml").display().to_string())
                            .unwrap_or_else(|| "~/.config/drover/config.toml".to_string())
                    )),
                    Ok(()) => out.entries.push(entry),
                },
                Err(e) => out.errors.push(e),
            }
        }
        out
    }
}

impl Entry {
    /// The effect this entry itself has outside drover: a command starts a
    /// process, a webhook connects; the other kinds show a message through
    /// what the run already uses.
    pub fn effect(&self) -> Option<Effect> {
        match &self.target {
            Target::Command { .. } => Some(Effect::Spawn),
            Target::Webhook { .. } => Some(Effect::Connect),
            Target::Desktop | Target::Tmux | Target::Herdr => None,
        }
    }

    /// Whether the gate lets the entry's effect happen (delivery clears it
    /// again, on the value it uses).
    pub fn check(&self) -> Result<(), drover_gate::Refused> {
        match self.effect() {
            Some(effect) => {
                drover_gate::clear(effect, &self.at, Sourced::new((), self.from)).map(|_| ())
            }
            None => Ok(()),
        }
    }
}

fn parse(value: &toml::Value, file: &ConfigFile, index: usize) -> Result<Entry, String> {
    let n = index.to_string();
    let at = |field: &str| {
        if field.is_empty() {
            file.locate(&["notify", &n])
        } else {
            file.locate(&["notify", &n, field])
        }
    };
    let table = value
        .as_table()
        .ok_or_else(|| format!("{}: must be a table ([[notify]])", at("")))?;
    for key in table.keys() {
        if !["kind", "on", "url", "headers", "argv"].contains(&key.as_str()) {
            return Err(format!(
                "{}: unknown field (kind, on, url, headers, argv)",
                at(key)
            ));
        }
    }
    let string = |field: &str| -> Result<Option<String>, String> {
        match table.get(field) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("{}: must be a string", at(field))),
        }
    };
    let kind = string("kind")?.ok_or_else(|| {
        format!(
            "{}: missing (desktop, tmux, herdr, webhook, command)",
            at("kind")
        )
    })?;
    let on = match table.get("on") {
        None => DEFAULT_ON.iter().map(|s| s.to_string()).collect(),
        Some(toml::Value::Array(items)) => {
            let mut on = Vec::new();
            for item in items {
                match item.as_str() {
                    Some(e) if EVENTS.contains(&e) => on.push(e.to_string()),
                    _ => {
                        return Err(format!(
                            "{}: {item} is not an event ({})",
                            at("on"),
                            EVENTS.join(", ")
                        ));
                    }
                }
            }
            on
        }
        Some(_) => return Err(format!("{}: must be a list of events", at("on"))),
    };
    let refuse = |field: &str| -> Result<(), String> {
        if table.contains_key(field) {
            Err(format!("{}: not a field of a {kind} notifier", at(field)))
        } else {
            Ok(())
        }
    };
    let target = match kind.as_str() {
        "desktop" | "tmux" | "herdr" => {
            for field in ["url", "headers", "argv"] {
                refuse(field)?;
            }
            match kind.as_str() {
                "desktop" => Target::Desktop,
                "tmux" => Target::Tmux,
                _ => Target::Herdr,
            }
        }
        "webhook" => {
            refuse("argv")?;
            let url = string("url")?.ok_or_else(|| format!("{}: missing", at("url")))?;
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!("{}: {url:?} is not an http(s) URL", at("url")));
            }
            let mut headers = BTreeMap::new();
            match table.get("headers") {
                None => {}
                Some(toml::Value::Table(t)) => {
                    for (name, value) in t {
                        let valid_name = !name.is_empty()
                            && name
                                .bytes()
                                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
                        match value.as_str() {
                            Some(v) if valid_name && !v.contains(['\r', '\n']) => {
                                headers.insert(name.clone(), v.to_string());
                            }
                            _ => {
                                return Err(format!(
                                    "{}: header {name:?} must be a name of letters, digits and '-' with a one-line string value",
                                    at("headers")
                                ));
                            }
                        }
                    }
                }
                Some(_) => return Err(format!("{}: must be a table of strings", at("headers"))),
            }
            Target::Webhook { url, headers }
        }
        "command" => {
            for field in ["url", "headers"] {
                refuse(field)?;
            }
            let argv: Vec<String> = match table.get("argv") {
                Some(toml::Value::Array(items)) => items
                    .iter()
                    .map(|i| i.as_str().map(str::to_string))
                    .collect::<Option<_>>()
                    .ok_or_else(|| format!("{}: must be a list of strings", at("argv")))?,
                None => return Err(format!("{}: missing", at("argv"))),
                Some(_) => return Err(format!("{}: must be a list of strings", at("argv"))),
            };
            if argv.first().is_none_or(|p| p.is_empty()) {
                return Err(format!("{}: names no program", at("argv")));
            }
            Target::Command { argv }
        }
        other => {
            return Err(format!(
                "{}: {other:?} is not a notifier (desktop, tmux, herdr, webhook, command)",
                at("kind")
            ));
        }
    };
    let digest = Sha256::digest(format!("{}:{value}", file.scope.as_str()).as_bytes());
    Ok(Entry {
        id: drover_types::text::hex(&digest[..6]),
        at: at(""),
        scope: file.scope.as_str(),
        from: file.provenance(),
        on,
        target,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_config::Scope;
    use std::path::PathBuf;

    fn config(user: &str, project: &str) -> Config {
        let file = |path: &str, scope, text: &str| {
            (!text.is_empty()).then(|| {
                ConfigFile::parse(&PathBuf::from(path), scope, text.to_string(), |_, _| false)
                    .expect("toml")
            })
        };
        Config {
            user: file("/u/config.toml", Scope::User, user),
            project: file("/p/.drover/config.toml", Scope::Project, project),
        }
    }

    fn notifiers(user: &str, project: &str) -> Notifiers {
        Notifiers::from_config(&config(user, project))
    }

    #[test]
    fn entries_parse_with_defaults_and_both_files_apply() {
        let n = notifiers(
            "[[notify]]\nkind = \"webhook\"\nurl = \"http://127.0.0.1:9/x\"\nheaders = { Authorization = \"Bearer t\" }\non = [\"blocked\", \"completed\"]\n",
            "[[notify]]\nkind = \"desktop\"\n",
        );
        assert!(n.errors.is_empty(), "{:?}", n.errors);
        assert_eq!(n.entries.len(), 2);
        assert_eq!(n.entries[0].on, ["blocked", "completed"]);
        assert_eq!(n.entries[0].at, "/u/config.toml:1: notify.0");
        assert!(
            matches!(&n.entries[0].target, Target::Webhook { headers, .. } if headers["Authorization"] == "Bearer t")
        );
        assert_eq!(n.entries[1].target, Target::Desktop);
        assert!(!n.entries[1].on.contains(&"done".to_string()));
        assert_eq!(n.entries[1].wants(&["stalled", "fault"]), Some("stalled"));
        assert_eq!(n.entries[1].wants(&["done"]), None);
    }

    #[test]
    fn a_projects_commands_and_webhooks_wait_for_trust() {
        let n = notifiers(
            "",
            "[[notify]]\nkind = \"command\"\nargv = [\"sh\", \"-c\", \"cat\"]\n\n[[notify]]\nkind = \"tmux\"\n",
        );
        assert_eq!(n.entries.len(), 1);
        assert_eq!(n.entries[0].target, Target::Tmux);
        assert_eq!(n.ignored.len(), 1);
        assert!(
            n.ignored[0].contains("start a process with /p/.drover/config.toml:1: notify.0 from untrusted project settings")
                && n.ignored[0].contains("drover trust"),
            "{:?}",
            n.ignored
        );
    }

    #[test]
    fn bad_entries_name_their_file_line_and_field_and_spare_the_rest() {
        let n = notifiers(
            "[[notify]]\nkind = \"pager\"\n\n[[notify]]\nkind = \"webhook\"\nurl = \"ftp://x\"\n\n[[notify]]\nkind = \"command\"\non = [\"exploded\"]\nargv = [\"x\"]\n\n[[notify]]\nkind = \"desktop\"\nargv = [\"x\"]\n\n[[notify]]\nkind = \"tmux\"\n",
            "",
        );
        assert_eq!(n.entries.len(), 1, "{:?}", n.errors);
        assert_eq!(
            n.errors,
            [
                "/u/config.toml:2: notify.0.kind: \"pager\" is not a notifier (desktop, tmux, herdr, webhook, command)",
                "/u/config.toml:6: notify.1.url: \"ftp://x\" is not an http(s) URL",
                "/u/config.toml:10: notify.2.on: \"exploded\" is not an event (blocked, budget, suspended, resumed, done, completed, stalled, timeout, crashed, over_budget, fault)",
                "/u/config.toml:15: notify.3.argv: not a field of a desktop notifier",
            ]
        );
    }
}
