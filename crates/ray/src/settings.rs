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
//! warm = true                     # turns go to long-lived workers (false: a job per turn)
//! idle = 30                       # seconds a warm worker waits for its next turn
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
use std::time::Duration;

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
    /// Turns go to long-lived worker jobs that take turns as they come
    /// (`[ray] warm`, default true); false submits one job per turn.
    pub warm: bool,
    /// How long a warm worker waits for its seat's next turn before it
    /// leaves and gives its CPUs back (`[ray] idle`, seconds, default 30).
    #[serde(rename = "idle_s", serialize_with = "seconds")]
    pub idle: Duration,
    /// Settings set aside: an untrusted project's `[ray]` values.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
}

/// How long a warm worker waits for its next turn by default. An idle
/// worker holds its CPUs, which no other job (another project's worker
/// included) gets meanwhile: long enough for a seat's next message in a
/// working session, short enough to give a cluster back soon.
pub const DEFAULT_IDLE: Duration = Duration::from_secs(30);
/// The longest `[ray] idle`: a day.
const IDLE_MAX_S: f64 = 86_400.0;

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
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

    /// `exec DROVER --project PROJECT ray-turn`, the entrypoint of a job
    /// that runs one turn, for Ray to start on a node: cleared as a process
    /// drover starts.
    pub fn entrypoint(&self) -> Result<Cleared<String>, Refused> {
        self.entrypoint_of("ray-turn")
    }

    /// `exec DROVER --project PROJECT ray-worker`, the entrypoint of a
    /// long-lived worker job that takes turns as they come.
    pub fn worker_entrypoint(&self) -> Result<Cleared<String>, Refused> {
        self.entrypoint_of("ray-worker")
    }

    fn entrypoint_of(&self, command: &str) -> Result<Cleared<String>, Refused> {
        drover_gate::clear(
            Effect::Spawn,
            "the Ray entrypoint (drover's and the project's paths on the nodes)",
            Sourced::new(
                format!(
                    "exec {} --project {} {command}",
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
        let warm_setting = setting(&["ray", "warm"]);
        let idle_setting = setting(&["ray", "idle"]);
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
        let warm = match &warm_setting {
            None => true,
            Some((value, file)) => value.as_bool().ok_or_else(|| SettingsError::Field {
                at: file.locate(&["ray", "warm"]),
                message: "expected true or false".to_string(),
            })?,
        };
        let idle = match &idle_setting {
            None => DEFAULT_IDLE,
            Some((value, file)) => {
                let n = value
                    .as_float()
                    .or_else(|| value.as_integer().map(|i| i as f64));
                match n {
                    Some(n) if n.is_finite() && (0.0..=IDLE_MAX_S).contains(&n) => {
                        Duration::from_secs_f64(n)
                    }
                    _ => {
                        return Err(SettingsError::Field {
                            at: file.locate(&["ray", "idle"]),
                            message: format!(
                                "expected seconds a warm worker waits for its next turn, 0 to {IDLE_MAX_S}"
                            ),
                        });
                    }
                }
            }
        };
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
            warm,
            idle,
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
mod tests;
