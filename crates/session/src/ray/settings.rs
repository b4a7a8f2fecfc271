//! Where the Ray cluster is and what each turn asks of it: the `[ray]`
//! section of `config.toml`, Ray's own `RAY_ADDRESS` convention, and the
//! command line's flags.
//!
//! ```toml
//! [ray]
//! address = "http://head:8265"   # the dashboard (Jobs REST API)
//! drover = "/opt/drover/drover"   # drover's path on the nodes
//! project = "/srv/work/app"       # this project's path on the nodes
//! num_cpus = 1                    # entrypoint_num_cpus of every turn
//! resources = { ssd = 0.1 }       # more entrypoint resources
//! place = "host_b"                # a custom resource every turn asks for
//!
//! [ray.cli.claude]
//! place = "gpu_box"               # only the claude profile's turns
//! ```
//!
//! The address: `--ray-address` > the project's `[ray] address` >
//! `RAY_API_SERVER_ADDRESS` > `RAY_ADDRESS` (as Ray's own `ray job` reads
//! them) > the user's `[ray] address` > `http://127.0.0.1:8265`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use drover_profile::config::{Config, ConfigFile};

/// The dashboard port Ray listens on unless told otherwise.
pub const DEFAULT_ADDRESS: &str = "http://127.0.0.1:8265";

/// How much of a placement resource a turn takes: enough to select the
/// nodes that have it, too little to limit how many turns run there (CPUs
/// do that).
pub const PLACE_SHARE: f64 = 0.001;

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{0}")]
    Config(#[from] drover_profile::config::ConfigError),
    #[error("{at}: {message}")]
    Field { at: String, message: String },
    #[error("{source_name}: {message}")]
    Address {
        source_name: String,
        message: String,
    },
}

/// The cluster and what a turn asks of it, resolved for one profile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settings {
    /// The dashboard's base URL, `http://host:port` (no trailing slash).
    pub address: String,
    /// Where the address came from: `flag`, `project`, `RAY_API_SERVER_ADDRESS`,
    /// `RAY_ADDRESS`, `user` or `default`.
    pub address_source: String,
    /// The drover binary the nodes run.
    pub drover: PathBuf,
    /// The project's directory on the nodes.
    pub project: PathBuf,
    pub num_cpus: f64,
    /// Entrypoint resources besides CPUs, placement included.
    pub resources: BTreeMap<String, f64>,
    /// The custom resource that pins turns, if any.
    pub place: Option<String>,
}

/// What the command line says.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub address: Option<String>,
    pub place: Option<String>,
}

impl Settings {
    /// Resolves the settings for `cli`'s turns in `project`.
    pub fn resolve(
        project: &Path,
        cli: &str,
        flags: &Overrides,
    ) -> Result<Settings, SettingsError> {
        let config = Config::load(project)?;
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Settings::from_parts(project, cli, flags, &config, env)
    }

    fn from_parts(
        project: &Path,
        cli: &str,
        flags: &Overrides,
        config: &Config,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Settings, SettingsError> {
        let from_file =
            |file: &Option<ConfigFile>| -> Result<Option<(String, String)>, SettingsError> {
                match file {
                    Some(f) => string(f, &["ray", "address"])
                        .map(|v| v.map(|v| (v, f.scope.as_str().to_string()))),
                    None => Ok(None),
                }
            };
        let (raw, source) = match &flags.address {
            Some(a) => (a.clone(), "flag".to_string()),
            None => match from_file(&config.project)? {
                Some(found) => found,
                None => match env("RAY_API_SERVER_ADDRESS")
                    .map(|v| (v, "RAY_API_SERVER_ADDRESS".to_string()))
                    .or_else(|| env("RAY_ADDRESS").map(|v| (v, "RAY_ADDRESS".to_string())))
                {
                    Some(found) => found,
                    None => from_file(&config.user)?
                        .unwrap_or_else(|| (DEFAULT_ADDRESS.to_string(), "default".to_string())),
                },
            },
        };
        let address = normalize_address(&raw).map_err(|message| SettingsError::Address {
            source_name: source_label(&source),
            message,
        })?;

        let drover = match setting_string(config, &["ray", "drover"])? {
            Some(path) => PathBuf::from(path),
            None => std::env::current_exe().unwrap_or_else(|_| PathBuf::from("drover")),
        };
        let remote_project = match setting_string(config, &["ray", "project"])? {
            Some(path) => PathBuf::from(path),
            None => project.to_path_buf(),
        };
        let num_cpus = match config.get(&["ray", "num_cpus"]) {
            None => 1.0,
            Some((value, file)) => {
                let n = value
                    .as_float()
                    .or_else(|| value.as_integer().map(|i| i as f64));
                match n {
                    Some(n) if n.is_finite() && n >= 0.0 => n,
                    _ => {
                        return Err(SettingsError::Field {
                            at: file.locate(&["ray", "num_cpus"]),
                            message: "expected a number of CPUs (0 or more)".to_string(),
                        });
                    }
                }
            }
        };
        let mut resources = BTreeMap::new();
        if let Some((value, file)) = config.get(&["ray", "resources"]) {
            let at = file.locate(&["ray", "resources"]);
            let Some(table) = value.as_table() else {
                return Err(SettingsError::Field {
                    at,
                    message: "expected a table of resource = amount".to_string(),
                });
            };
            for (name, amount) in table {
                let n = amount
                    .as_float()
                    .or_else(|| amount.as_integer().map(|i| i as f64));
                match n {
                    Some(n) if n.is_finite() && n > 0.0 => {
                        resources.insert(check_resource(name, &at)?, n);
                    }
                    _ => {
                        return Err(SettingsError::Field {
                            at: file.locate(&["ray", "resources", name.as_str()]),
                            message: format!("{name}: expected an amount above 0"),
                        });
                    }
                }
            }
        }
        let place = match &flags.place {
            Some(p) => Some(check_resource(p, "--place")?),
            None => match setting_string(config, &["ray", "cli", cli, "place"])? {
                Some(p) => Some(p),
                None => setting_string(config, &["ray", "place"])?,
            },
        };
        if let Some(p) = &place {
            resources.insert(p.clone(), PLACE_SHARE);
        }
        Ok(Settings {
            address,
            address_source: source,
            drover,
            project: remote_project,
            num_cpus,
            resources,
            place,
        })
    }
}

fn source_label(source: &str) -> String {
    match source {
        "flag" => "--ray-address".to_string(),
        "project" => "[ray] address in .drover/config.toml".to_string(),
        "user" => "[ray] address in the user's config.toml".to_string(),
        other => other.to_string(),
    }
}

fn string(file: &ConfigFile, keys: &[&str]) -> Result<Option<String>, SettingsError> {
    match file.get(keys) {
        None => Ok(None),
        Some(toml::Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.trim().to_string())),
        Some(_) => Err(SettingsError::Field {
            at: file.locate(keys),
            message: "expected a non-empty string".to_string(),
        }),
    }
}

/// A single setting, the project's winning over the user's.
fn setting_string(config: &Config, keys: &[&str]) -> Result<Option<String>, SettingsError> {
    for file in [&config.project, &config.user].into_iter().flatten() {
        if let Some(value) = string(file, keys)? {
            return Ok(Some(value));
        }
    }
    Ok(None)
}

/// Ray resource names are free-form, but this one ends up in JSON and in
/// messages: printable, no spaces, bounded.
fn check_resource(name: &str, at: &str) -> Result<String, SettingsError> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':' | '/'));
    if ok {
        Ok(name.to_string())
    } else {
        Err(SettingsError::Field {
            at: at.to_string(),
            message: format!(
                "{name:?} is not a Ray resource name (letters, digits, '_', '-', '.', ':', '/')"
            ),
        })
    }
}

/// `http://host:port` from what a user may write: a URL, or `host:port`
/// (Ray's client prepends `http://` too). `ray://` is the Ray Client's
/// port, not the dashboard's; HTTPS needs TLS, which drover does not link.
pub fn normalize_address(raw: &str) -> Result<String, String> {
    let raw = raw.trim().trim_end_matches('/');
    if raw.is_empty() {
        return Err("the Ray address is empty".to_string());
    }
    if raw.starts_with("ray://") {
        return Err(format!(
            "{raw} is a Ray Client address; the Jobs API is served by the dashboard (e.g. http://HEAD:8265)"
        ));
    }
    if raw.starts_with("https://") {
        return Err(format!(
            "{raw}: drover speaks plain HTTP to the Ray dashboard (reach it over the cluster's network or an SSH tunnel)"
        ));
    }
    if raw == "auto" || raw == "local" {
        return Err(format!(
            "RAY_ADDRESS={raw} names a local GCS, not a dashboard; give the dashboard's URL (e.g. {DEFAULT_ADDRESS})"
        ));
    }
    let rest = raw.strip_prefix("http://").unwrap_or(raw);
    if rest.contains("://") {
        return Err(format!("{raw} is not an http:// address"));
    }
    let host_port = rest.split('/').next().unwrap_or_default();
    if host_port.is_empty()
        || host_port
            .chars()
            .any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(format!("{raw} names no host"));
    }
    Ok(format!("http://{rest}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_profile::config::Scope;

    fn config(project: Option<&str>, user: Option<&str>) -> Config {
        let parse = |text: &str, scope, path: &str| {
            ConfigFile::parse(Path::new(path), scope, text.to_string()).expect("valid toml")
        };
        Config {
            project: project.map(|t| parse(t, Scope::Project, "/p/.drover/config.toml")),
            user: user.map(|t| parse(t, Scope::User, "/u/config.toml")),
        }
    }

    fn resolve(
        flags: &Overrides,
        config: &Config,
        env: &[(&str, &str)],
    ) -> Result<Settings, SettingsError> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::from_parts(Path::new("/p"), "claude", flags, config, |name| {
            env.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn the_address_follows_flag_project_env_user_default() {
        let both = config(
            Some("[ray]\naddress = \"http://project:8265\"\n"),
            Some("[ray]\naddress = \"user:8265\"\n"),
        );
        let user_only = config(None, Some("[ray]\naddress = \"user:8265\"\n"));
        let flag = Overrides {
            address: Some("http://flag:1/".to_string()),
            place: None,
        };
        let env = [("RAY_ADDRESS", "http://env:8265")];
        let pick = |flags: &Overrides, config: &Config, env: &[(&str, &str)]| {
            let s = resolve(flags, config, env).expect("resolves");
            (s.address, s.address_source)
        };
        let none = Overrides::default();
        assert_eq!(
            pick(&flag, &both, &env),
            ("http://flag:1".into(), "flag".into())
        );
        assert_eq!(
            pick(&none, &both, &env),
            ("http://project:8265".into(), "project".into())
        );
        assert_eq!(
            pick(&none, &user_only, &env),
            ("http://env:8265".into(), "RAY_ADDRESS".into())
        );
        assert_eq!(
            pick(
                &none,
                &user_only,
                &[("RAY_API_SERVER_ADDRESS", "api:1"), ("RAY_ADDRESS", "x:2")]
            ),
            ("http://api:1".into(), "RAY_API_SERVER_ADDRESS".into())
        );
        assert_eq!(
            pick(&none, &user_only, &[]),
            ("http://user:8265".into(), "user".into())
        );
        assert_eq!(
            pick(&none, &config(None, None), &[]),
            (DEFAULT_ADDRESS.into(), "default".into())
        );
    }

    #[test]
    fn addresses_that_are_not_a_dashboard_are_refused_naming_their_source() {
        for (raw, needle) in [
            ("ray://head:10001", "Ray Client"),
            ("https://head:8265", "plain HTTP"),
            ("auto", "local GCS"),
            ("ftp://x", "not an http"),
        ] {
            let e = resolve(
                &Overrides::default(),
                &config(None, None),
                &[("RAY_ADDRESS", raw)],
            )
            .expect_err(raw)
            .to_string();
            assert!(e.starts_with("RAY_ADDRESS: ") && e.contains(needle), "{e}");
        }
    }

    #[test]
    fn placement_comes_from_flag_then_profile_then_section() {
        let c = config(
            Some(
                "[ray]\nplace = \"host_c\"\nnum_cpus = 0.5\nresources = { ssd = 2 }\n[ray.cli.claude]\nplace = \"host_b\"\n",
            ),
            None,
        );
        let s = resolve(&Overrides::default(), &c, &[]).expect("resolves");
        assert_eq!(s.place.as_deref(), Some("host_b"));
        assert_eq!(s.num_cpus, 0.5);
        assert_eq!(s.resources.get("ssd"), Some(&2.0));
        assert_eq!(s.resources.get("host_b"), Some(&PLACE_SHARE));
        let flag = Overrides {
            address: None,
            place: Some("host_d".to_string()),
        };
        let s = resolve(&flag, &c, &[]).expect("resolves");
        assert_eq!(s.place.as_deref(), Some("host_d"));
        assert!(!s.resources.contains_key("host_b"));
        let other =
            Settings::from_parts(Path::new("/p"), "codex", &Overrides::default(), &c, |_| {
                None
            })
            .expect("resolves");
        assert_eq!(other.place.as_deref(), Some("host_c"));
    }

    #[test]
    fn bad_fields_name_file_line_and_field() {
        let c = config(Some("[ray]\nnum_cpus = \"two\"\n"), None);
        let e = resolve(&Overrides::default(), &c, &[])
            .expect_err("bad")
            .to_string();
        assert!(
            e.starts_with("/p/.drover/config.toml:2: ray.num_cpus:"),
            "{e}"
        );
        let c = config(Some("[ray]\nresources = { \"a b\" = 1 }\n"), None);
        let e = resolve(&Overrides::default(), &c, &[])
            .expect_err("bad")
            .to_string();
        assert!(e.contains("not a Ray resource name"), "{e}");
        let flag = Overrides {
            address: None,
            place: Some("x y".to_string()),
        };
        let e = resolve(&flag, &config(None, None), &[])
            .expect_err("bad")
            .to_string();
        assert!(e.starts_with("--place: "), "{e}");
    }
}
