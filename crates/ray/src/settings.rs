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
//!
//! A project's `[ray]` values count only once the user trusts the project
//! (`drover trust`): they say where the turn (its prompt included) is sent
//! and what the nodes run. An untrusted project's are set aside with a note
//! ([`Settings::ignored`]), so its address never beats the user's own
//! `RAY_ADDRESS`, and no client is made for an address the gate refuses
//! ([`Settings::jobs`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use drover_config::{Config, ConfigFile};
use drover_gate::{Cleared, Effect, Provenance, Refused, Sourced};

use super::jobs::Jobs;

/// The dashboard port Ray listens on unless told otherwise.
pub const DEFAULT_ADDRESS: &str = "http://127.0.0.1:8265";

/// How much of a placement resource a turn takes: enough to select the
/// nodes that have it, too little to limit how many turns run there (CPUs
/// do that).
pub const PLACE_SHARE: f64 = 0.001;

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("{0}")]
    Config(#[from] drover_config::ConfigError),
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
    /// The address's provenance: [`Settings::jobs`] clears it to connect.
    #[serde(skip)]
    pub address_from: Provenance,
    /// The drover binary the nodes run.
    pub drover: PathBuf,
    /// The project's directory on the nodes.
    pub project: PathBuf,
    /// Where `drover` and `project` came from: the entrypoint is cleared
    /// against it to start on a node.
    #[serde(skip)]
    pub entrypoint_from: Provenance,
    pub num_cpus: f64,
    /// Entrypoint resources besides CPUs, placement included.
    pub resources: BTreeMap<String, f64>,
    /// The custom resource that pins turns, if any.
    pub place: Option<String>,
    /// Settings set aside: an untrusted project's `[ray]` values.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
}

/// What the command line says.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub address: Option<String>,
    pub place: Option<String>,
}

/// A candidate Ray address: text from the command line or the environment,
/// or a settings file's value (checked once it wins).
enum Raw<'a> {
    Text(String),
    Setting(&'a toml::Value, &'a ConfigFile),
}

impl Settings {
    /// Resolves the settings for `cli`'s turns in `project`.
    pub fn resolve(
        project: &Path,
        cli: &str,
        flags: &Overrides,
    ) -> Result<Settings, SettingsError> {
        Settings::resolve_in(&drover_trust::load_config(project)?, project, cli, flags)
    }

    /// [`Settings::resolve`] from settings files the command already loaded.
    pub fn resolve_in(
        config: &Config,
        project: &Path,
        cli: &str,
        flags: &Overrides,
    ) -> Result<Settings, SettingsError> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Settings::from_parts(project, cli, flags, config, env)
    }

    /// A client of the cluster, the address cleared for a connection.
    pub fn jobs(&self) -> Result<Jobs, Refused> {
        let address = drover_gate::clear(
            Effect::Connect,
            "the Ray address",
            Sourced::new(self.address.clone(), self.address_from),
        )?;
        Ok(Jobs::new(&address))
    }

    /// `exec DROVER --project PROJECT ray-turn`, the job's entrypoint, for
    /// Ray to start on a node: cleared as a process drover starts.
    pub fn entrypoint(&self) -> Result<Cleared<String>, Refused> {
        drover_gate::clear(
            Effect::Spawn,
            "the Ray entrypoint (drover's and the project's paths on the nodes)",
            Sourced::new(
                format!(
                    "exec {} --project {} ray-turn",
                    crate::shell_quote(&self.drover.to_string_lossy()),
                    crate::shell_quote(&self.project.to_string_lossy())
                ),
                self.entrypoint_from,
            ),
        )
    }

    fn from_parts<'c>(
        project: &Path,
        cli: &str,
        flags: &Overrides,
        config: &'c Config,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Settings, SettingsError> {
        // The address, by precedence: the flag, a trusted project's, Ray's
        // own variables, the user's, the default. An untrusted project's is
        // skipped by the gate, so the user's own RAY_ADDRESS beats it.
        let keys = ["ray", "address"];
        let file_candidate = |file: &'static str, f: &'c Option<ConfigFile>| {
            f.as_ref().and_then(|f| {
                f.sourced(&keys).map(|v| {
                    (
                        f.locate(&keys),
                        v.map(|v| (Raw::Setting(v, f), file.to_string())),
                    )
                })
            })
        };
        let text = |what: &str, value: String, from: Provenance| {
            (
                what.to_string(),
                Sourced::new((Raw::Text(value), what.to_string()), from),
            )
        };
        let mut candidates = Vec::new();
        if let Some(a) = &flags.address {
            candidates.push((
                "--ray-address".to_string(),
                Sourced::new(
                    (Raw::Text(a.clone()), "flag".to_string()),
                    Provenance::Operator,
                ),
            ));
        }
        candidates.extend(file_candidate("project", &config.project));
        for name in ["RAY_API_SERVER_ADDRESS", "RAY_ADDRESS"] {
            candidates.extend(env(name).map(|v| text(name, v, Provenance::User)));
        }
        candidates.extend(file_candidate("user", &config.user));
        candidates.push((
            "default".to_string(),
            Sourced::new(
                (
                    Raw::Text(DEFAULT_ADDRESS.to_string()),
                    "default".to_string(),
                ),
                Provenance::Builtin,
            ),
        ));
        let (cleared, refused) = drover_gate::clear_first(Effect::Connect, candidates);
        let mut ignored: Vec<String> = refused.iter().map(drover_config::set_aside).collect();
        let address_from = cleared.as_ref().map_or(Provenance::Builtin, |c| c.from());
        let (raw, source) = match cleared.map(Cleared::into_inner) {
            Some((Raw::Text(text), source)) => (text, source),
            Some((Raw::Setting(value, file), source)) => {
                (string_value(file, &keys, value)?, source)
            }
            // The default is built in, and the table always allows it.
            None => (DEFAULT_ADDRESS.to_string(), "default".to_string()),
        };
        let address = normalize_address(&raw).map_err(|message| SettingsError::Address {
            source_name: source_label(&source),
            message,
        })?;

        // Everything else in `[ray]` decides where and how the turn's
        // process starts on the cluster: a project's counts once trusted.
        let mut setting = |keys: &[&str]| -> Option<(Cleared<&toml::Value>, &ConfigFile)> {
            let (found, refused) = config.get_for(Effect::Spawn, keys);
            ignored.extend(refused.iter().map(drover_config::set_aside));
            found
        };
        let drover_setting = setting(&["ray", "drover"]);
        let project_setting = setting(&["ray", "project"]);
        let num_cpus_setting = setting(&["ray", "num_cpus"]);
        let resources_setting = setting(&["ray", "resources"]);
        let place_setting = match setting(&["ray", "cli", cli, "place"]) {
            Some(found) => Some((found, vec!["ray", "cli", cli, "place"])),
            None => setting(&["ray", "place"]).map(|found| (found, vec!["ray", "place"])),
        };
        // The entrypoint is as trusted as the least trusted of its parts.
        let mut entrypoint_from = Provenance::Builtin;
        let drover = match &drover_setting {
            Some((value, file)) => {
                entrypoint_from = value.from();
                PathBuf::from(string_value(file, &["ray", "drover"], value)?)
            }
            None => std::env::current_exe().unwrap_or_else(|_| PathBuf::from("drover")),
        };
        let remote_project = match &project_setting {
            Some((value, file)) => {
                if entrypoint_from == Provenance::Builtin {
                    entrypoint_from = value.from();
                }
                PathBuf::from(string_value(file, &["ray", "project"], value)?)
            }
            None => project.to_path_buf(),
        };
        let num_cpus = match &num_cpus_setting {
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
        if let Some((value, file)) = &resources_setting {
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
            None => match &place_setting {
                Some(((value, file), keys)) => Some(string_value(file, keys, value)?),
                None => None,
            },
        };
        if let Some(p) = &place {
            resources.insert(p.clone(), PLACE_SHARE);
        }
        Ok(Settings {
            address,
            address_source: source,
            address_from,
            drover,
            project: remote_project,
            entrypoint_from,
            num_cpus,
            resources,
            place,
            ignored,
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

/// A setting's value as a non-empty string.
fn string_value(
    file: &ConfigFile,
    keys: &[&str],
    value: &toml::Value,
) -> Result<String, SettingsError> {
    match value {
        toml::Value::String(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
        _ => Err(SettingsError::Field {
            at: file.locate(keys),
            message: "expected a non-empty string".to_string(),
        }),
    }
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
    use drover_config::Scope;

    /// Settings files with the project's trusted.
    fn config(project: Option<&str>, user: Option<&str>) -> Config {
        config_trusting(project, user, true)
    }

    fn config_trusting(project: Option<&str>, user: Option<&str>, trusted: bool) -> Config {
        let parse = |text: &str, scope, path: &str| {
            ConfigFile::parse(Path::new(path), scope, text.to_string(), |_, _| trusted)
                .expect("valid toml")
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

    /// Break 3: an untrusted project's `[ray]` chose the cluster (and beat
    /// the user's RAY_ADDRESS) and what the nodes run.
    #[test]
    fn an_untrusted_projects_ray_settings_are_set_aside() {
        let project = "[ray]\naddress = \"http://evil:8265\"\ndrover = \"/bin/sh\"\nproject = \"/tmp\"\nnum_cpus = 0\nplace = \"x\"\n";
        let untrusted = config_trusting(Some(project), Some("[ray]\nnum_cpus = 2\n"), false);
        let s = resolve(
            &Overrides::default(),
            &untrusted,
            &[("RAY_ADDRESS", "http://mine:8265")],
        )
        .expect("resolves");
        assert_eq!(
            (
                s.address.as_str(),
                s.address_source.as_str(),
                s.address_from
            ),
            ("http://mine:8265", "RAY_ADDRESS", Provenance::User)
        );
        assert_ne!(s.drover, PathBuf::from("/bin/sh"));
        assert_eq!(s.project, PathBuf::from("/p"));
        assert_eq!(s.place, None);
        assert_eq!(s.num_cpus, 2.0);
        assert_eq!(s.ignored.len(), 5, "{:?}", s.ignored);
        assert!(
            s.ignored[0].contains("/p/.drover/config.toml:2: ray.address")
                && s.ignored[0].contains("drover trust"),
            "{:?}",
            s.ignored
        );
        assert!(
            s.entrypoint().expect("cleared").starts_with("exec '"),
            "the user's entrypoint"
        );
        // Without RAY_ADDRESS the default, never the project's.
        let s = resolve(&Overrides::default(), &untrusted, &[]).expect("resolves");
        assert_eq!(s.address, DEFAULT_ADDRESS);

        // Trusted, the project's settings are used, in the documented order.
        let trusted = config_trusting(Some(project), None, true);
        let s = resolve(
            &Overrides::default(),
            &trusted,
            &[("RAY_ADDRESS", "http://mine:8265")],
        )
        .expect("resolves");
        assert_eq!(
            (s.address.as_str(), s.address_from),
            ("http://evil:8265", Provenance::TrustedProject)
        );
        assert_eq!(s.drover, PathBuf::from("/bin/sh"));
        assert!(s.ignored.is_empty());
        assert!(s.jobs().is_ok());
    }

    #[test]
    fn a_client_is_made_only_for_an_address_the_gate_lets_through() {
        let mut s = resolve(&Overrides::default(), &config(None, None), &[]).expect("resolves");
        s.address_from = Provenance::UntrustedProject;
        s.entrypoint_from = Provenance::UntrustedProject;
        let refused = s.jobs().err().expect("refused");
        assert_eq!(refused.effect, Effect::Connect);
        assert!(s.entrypoint().is_err());
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
