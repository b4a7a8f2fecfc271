//! The `jules` workspace: a seat whose turns run in Google's cloud, driven
//! through the Jules REST API (`jules.googleapis.com/v1alpha`). There is no
//! local process or pane: a turn is a session (or a message to one) that
//! drover polls ([`client`]); the driver that maps its states onto seat
//! states is `drover_drive::jules`.
//!
//! Where the API is and which key it gets come only from the user: the key
//! from `JULES_API_KEY`, else `[jules] api_key` in the user's
//! `config.toml`; the address from `DROVER_JULES_URL`, else `[jules] url`
//! there, else Google's. A project's `[jules]` is never read, trusted or
//! not: it would choose where the user's key and prompts go.
//!
//! ```toml
//! # ~/.config/drover/config.toml
//! [jules]
//! api_key = "…"      # or JULES_API_KEY
//! url = "https://jules.googleapis.com/v1alpha"
//! poll_s = 10        # seconds between two looks at a session
//! auto_pr = true     # Jules opens a pull request (false: a patch only)
//! ```

pub mod api;
pub mod client;
pub mod source;

use std::time::Duration;

use serde::Serialize;

use drover_config::Config;
use drover_gate::{Cleared, Effect, Provenance, Refused, Sourced};

pub use client::{Client, JulesError};

/// Google's endpoint.
pub const DEFAULT_URL: &str = "https://jules.googleapis.com/v1alpha";
pub const KEY_ENV: &str = "JULES_API_KEY";
pub const URL_ENV: &str = "DROVER_JULES_URL";
/// How often a session is looked at by default. The API publishes no
/// polling guidance; a session takes minutes, and every look is two
/// requests against the key's quota.
pub const DEFAULT_POLL: Duration = Duration::from_secs(10);

/// Where requests go and the key they carry.
#[derive(Clone)]
pub struct Endpoint {
    pub url: String,
    pub key: String,
}

impl std::fmt::Debug for Endpoint {
    // The key never reaches a log or an error message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &self.url)
            .field("key", &"…")
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{at}: {message}")]
    Field { at: String, message: String },
    #[error(
        "no Jules API key: set {KEY_ENV}, or `api_key` under [jules] in your own config.toml (a project's is never used); create one at https://jules.google.com/settings#api"
    )]
    NoKey,
    #[error(transparent)]
    Refused(#[from] Refused),
}

/// The Jules settings, resolved from the user's environment and config.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub url: String,
    /// `DROVER_JULES_URL`, `user` or `default`.
    pub url_source: &'static str,
    /// `JULES_API_KEY`, `user`, or `None` when no key is configured.
    pub key_source: Option<&'static str>,
    #[serde(skip)]
    key: Option<String>,
    #[serde(rename = "poll_s", serialize_with = "seconds")]
    pub poll: Duration,
    /// Sessions are created with `automationMode: AUTO_CREATE_PR`.
    pub auto_pr: bool,
    /// A project's `[jules]`, set aside.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl Settings {
    pub fn resolve(config: &Config) -> Result<Settings, SettingsError> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Settings::from_parts(config, env)
    }

    fn from_parts(
        config: &Config,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Settings, SettingsError> {
        let mut ignored = Vec::new();
        if let Some(project) = &config.project
            && project.get(&["jules"]).is_some()
        {
            ignored.push(format!(
                "{}: [jules] is never read from a project (it would choose where your Jules key and prompts go); set it in your own config.toml",
                project.locate(&["jules"])
            ));
        }
        let user = config.user.as_ref();
        let user_text = |key: &str| -> Result<Option<String>, SettingsError> {
            let Some(file) = user else { return Ok(None) };
            let keys = ["jules", key];
            match file.get(&keys) {
                None => Ok(None),
                Some(toml::Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
                Some(_) => Err(SettingsError::Field {
                    at: file.locate(&keys),
                    message: "must be a non-empty string".to_string(),
                }),
            }
        };
        let (url, url_source) = match (env(URL_ENV), user_text("url")?) {
            (Some(url), _) => (url, URL_ENV),
            (None, Some(url)) => (url, "user"),
            (None, None) => (DEFAULT_URL.to_string(), "default"),
        };
        let url = checked_url(&url).map_err(|message| SettingsError::Field {
            at: match url_source {
                "user" => user.map_or_else(String::new, |f| f.locate(&["jules", "url"])),
                other => other.to_string(),
            },
            message,
        })?;
        let (key, key_source) = match (env(KEY_ENV), user_text("api_key")?) {
            (Some(key), _) => (Some(key), Some(KEY_ENV)),
            (None, Some(key)) => (Some(key), Some("user")),
            (None, None) => (None, None),
        };
        let poll = match user.and_then(|f| f.get(&["jules", "poll_s"]).map(|v| (v, f))) {
            None => DEFAULT_POLL,
            Some((value, file)) => {
                let seconds = value
                    .as_float()
                    .or_else(|| value.as_integer().map(|i| i as f64));
                match seconds {
                    Some(s) if s.is_finite() && (0.01..=3600.0).contains(&s) => {
                        Duration::from_secs_f64(s)
                    }
                    _ => {
                        return Err(SettingsError::Field {
                            at: file.locate(&["jules", "poll_s"]),
                            message: "must be a number of seconds from 0.01 to 3600".to_string(),
                        });
                    }
                }
            }
        };
        let auto_pr = match user.and_then(|f| f.get(&["jules", "auto_pr"]).map(|v| (v, f))) {
            None => true,
            Some((toml::Value::Boolean(b), _)) => *b,
            Some((_, file)) => {
                return Err(SettingsError::Field {
                    at: file.locate(&["jules", "auto_pr"]),
                    message: "must be true or false".to_string(),
                });
            }
        };
        Ok(Settings {
            auto_pr,
            url,
            url_source,
            key_source,
            key: key.map(|k| k.trim().to_string()),
            poll,
            ignored,
        })
    }

    pub fn has_key(&self) -> bool {
        self.key.is_some()
    }

    /// A client of the API, the address and key cleared to connect. Both
    /// come from the user (or drover's default address): the gate would
    /// refuse anything a checkout chose.
    pub fn client(&self) -> Result<Client, SettingsError> {
        let key = self.key.clone().ok_or(SettingsError::NoKey)?;
        let from = match self.url_source {
            "default" => Provenance::Builtin,
            _ => Provenance::User,
        };
        let endpoint = drover_gate::clear(
            Effect::Connect,
            "the Jules API address and key",
            Sourced::new(
                Endpoint {
                    url: self.url.clone(),
                    key,
                },
                from,
            ),
        )?;
        Ok(Client::new(&endpoint))
    }

    /// A client for an endpoint some other source names: only what the
    /// gate lets connect.
    pub fn client_for(endpoint: Sourced<Endpoint>) -> Result<Client, Refused> {
        let endpoint: Cleared<Endpoint> =
            drover_gate::clear(Effect::Connect, "the Jules API address and key", endpoint)?;
        Ok(Client::new(&endpoint))
    }
}

/// An `http(s)://` base URL without a query or fragment.
fn checked_url(url: &str) -> Result<String, String> {
    let url = url.trim().trim_end_matches('/');
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .ok_or_else(|| format!("{url:?} is not an http:// or https:// URL"))?;
    if rest.is_empty() || rest.contains(['?', '#', ' ']) || rest.chars().any(char::is_control) {
        return Err(format!("{url:?} is not a base URL"));
    }
    // The key travels in a header: in clear only to this machine (a local
    // stand-in), never across a network.
    let host = rest.split('/').next().unwrap_or_default();
    let host = host.rsplit_once(':').map_or(host, |(h, port)| {
        if port.chars().all(|c| c.is_ascii_digit()) {
            h
        } else {
            host
        }
    });
    let local = matches!(host, "127.0.0.1" | "localhost" | "[::1]");
    if url.starts_with("http://") && !local {
        return Err(format!(
            "{url:?} is plain http to another machine, which would send the API key in clear; use https://"
        ));
    }
    Ok(url.to_string())
}

/// The jules row of `drover mux` and `doctor`: whether a key is configured
/// and whether the API answers it.
#[derive(Debug, Clone, Default)]
pub struct Row {
    pub available: bool,
    pub version: Option<String>,
    pub summary: String,
}

/// Asks the API once (one page of sources) when a key is configured.
pub fn row(config: &Config) -> Row {
    let settings = match Settings::resolve(config) {
        Ok(s) => s,
        Err(e) => {
            return Row {
                summary: e.to_string(),
                ..Row::default()
            };
        }
    };
    let Some(key_source) = settings.key_source else {
        return Row {
            summary: format!(
                "no Jules API key configured (set {KEY_ENV} or [jules] api_key in your config.toml)"
            ),
            ..Row::default()
        };
    };
    let answer = settings
        .client()
        .map_err(|e| e.to_string())
        .and_then(|c| c.ping().map_err(|e| e.to_string()));
    match answer {
        Ok(_) => Row {
            available: true,
            version: Some("Jules REST API v1alpha".to_string()),
            summary: format!(
                "turns as Jules sessions at {} ({}), key from {key_source}",
                settings.url, settings.url_source
            ),
        },
        Err(e) => Row {
            summary: format!("key from {key_source}, but the API does not answer it: {e}"),
            ..Row::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_config::{ConfigFile, Scope};

    fn config(user: Option<&str>, project: Option<&str>) -> Config {
        let file = |text: &str, scope| {
            ConfigFile::parse(
                std::path::Path::new("/x/config.toml"),
                scope,
                text.to_string(),
                |_, _| false,
            )
            .expect("parses")
        };
        Config {
            user: user.map(|t| file(t, Scope::User)),
            project: project.map(|t| file(t, Scope::Project)),
        }
    }

    #[test]
    fn a_projects_jules_table_is_never_used() {
        let c = config(
            None,
            Some("[jules]\nurl = \"http://evil.example\"\napi_key = \"k\"\n"),
        );
        let s = Settings::from_parts(&c, |_| None).expect("resolves");
        assert_eq!(s.url, DEFAULT_URL);
        assert!(!s.has_key());
        assert_eq!(s.ignored.len(), 1);
        assert!(matches!(s.client(), Err(SettingsError::NoKey)));
    }

    #[test]
    fn the_environment_beats_the_users_file() {
        let c = config(
            Some(
                "[jules]\nurl = \"http://127.0.0.1:9/v1alpha\"\napi_key = \"file\"\npoll_s = 0.5\n",
            ),
            None,
        );
        let s = Settings::from_parts(&c, |_| None).expect("resolves");
        assert_eq!(
            (s.url.as_str(), s.key_source, s.poll),
            (
                "http://127.0.0.1:9/v1alpha",
                Some("user"),
                Duration::from_millis(500)
            )
        );
        let s =
            Settings::from_parts(&c, |name| Some(format!("https://env/{name}"))).expect("resolves");
        assert_eq!(s.url_source, URL_ENV);
        assert_eq!(s.key_source, Some(KEY_ENV));
        let bad = config(Some("[jules]\npoll_s = 0\n"), None);
        assert!(Settings::from_parts(&bad, |_| None).is_err());
    }

    #[test]
    fn the_key_goes_in_clear_only_to_this_machine() {
        assert!(checked_url("http://127.0.0.1:8080/v1alpha").is_ok());
        assert!(checked_url("http://localhost/v1alpha").is_ok());
        assert!(checked_url("https://jules.example/v1alpha").is_ok());
        let refused = checked_url("http://jules.example/v1alpha").expect_err("plain http out");
        assert!(refused.contains("in clear"), "{refused}");
        assert!(checked_url("http://127.0.0.1.evil.example/v1").is_err());
    }

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let e = Endpoint {
            url: "u".to_string(),
            key: "secret".to_string(),
        };
        assert!(!format!("{e:?}").contains("secret"));
    }
}
