//! drover-trust: whether the user trusts a project's own settings, and
//! the [`policy`] that answers a seat's questions with them.
//!
//! A checkout can carry `.drover/profiles/*.toml`, `.drover/config.toml` and
//! components (`.drover/adapters/*.wasm`, or a `.wasm` a project profile
//! names), and those decide what runs outside the sandbox: a profile's
//! `binary`, its argv pieces and environment, a notifier's command or URL, a
//! component's choice of the CLI's arguments. Like direnv's `direnv allow`
//! and mise's `mise trust`, drover uses them only once the user has looked
//! and agreed: `drover trust` records the SHA-256 of each such file in the
//! user's config directory (`trust.json`), and a file whose bytes differ from
//! what was recorded needs trust again. A component needs trust only to
//! launch (`drover_drive::launch`); parsing with it needs none (it is sandboxed).
//! User-level and built-in profiles and components need none (the user
//! wrote or installed them). `DROVER_TRUST_ALL=1` trusts every
//! project, for CI and containers that run only their own checkout.
//!
//! The API for features that read project settings: [`Trust::load`] once,
//! then [`Trust::require_profile`] before using a profile; settings files
//! are read through [`load_config`], which decides the project file's
//! provenance once from the bytes it parsed, and each feature sets aside
//! what an untrusted file may not decide (its workspace, CLI, `[ray]`
//! cluster, `[[notify]]` commands and webhooks, `[policy]` allow decisions).

pub mod policy;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use drover_config::{Config, ConfigError, ConfigFile, Scope};
use drover_gate::read::{SETTINGS_MAX, read_bounded};
use drover_profile::{Profile, ProfileSource};

/// Set to `1` to trust every project's settings without asking.
pub const ENV_TRUST_ALL: &str = "DROVER_TRUST_ALL";

const STORE_VERSION: u32 = 1;

/// The user's trust records: `<config dir>/trust.json`.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Store {
    version: u32,
    /// Canonical project path -> its record.
    projects: BTreeMap<String, Record>,
}

#[derive(Debug, Default, Clone, Serialize, Deserialize, PartialEq)]
pub struct Record {
    /// When the user last ran `drover trust` here (ns since the epoch).
    pub trusted_ns: u64,
    /// Project-relative path -> SHA-256 of the bytes the user trusted.
    pub files: BTreeMap<String, String>,
}

#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("no user config directory (set HOME or XDG_CONFIG_HOME) to keep trust records in")]
    NoConfigDir,
    #[error("{path}: {reason}")]
    Store { path: PathBuf, reason: String },
    #[error("project {path}: {reason}")]
    Project { path: PathBuf, reason: String },
}

/// A refusal: the project file is not trusted, and what it wants to run.
#[derive(Debug)]
pub struct Untrusted {
    /// Project-relative path of the file.
    pub file: String,
    /// Whether it was trusted once and has changed since.
    pub changed: bool,
    pub wants: Vec<String>,
}

impl fmt::Display for Untrusted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "this project's {} {}; it wants to run:",
            self.file,
            if self.changed {
                "changed since you trusted it"
            } else {
                "is not trusted yet"
            }
        )?;
        for want in &self.wants {
            writeln!(f, "  {want}")?;
        }
        write!(
            f,
            "Review it with `drover trust --show`, then run `drover trust` to allow it ({ENV_TRUST_ALL}=1 trusts every project, for CI and containers)."
        )
    }
}

impl std::error::Error for Untrusted {}

/// What the user trusts in one project.
#[derive(Debug)]
pub struct Trust {
    project: PathBuf,
    key: String,
    record: Option<Record>,
    all: bool,
}

pub use drover_profile::registry::digest;

/// Whether `DROVER_TRUST_ALL=1` is set.
pub fn trust_all() -> bool {
    std::env::var_os(ENV_TRUST_ALL).is_some_and(|v| v == "1")
}

fn store_path() -> Option<PathBuf> {
    drover_config::user_dir().map(|d| d.join("trust.json"))
}

fn read_store(path: &Path) -> Result<Store, TrustError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Store::default()),
        Err(e) => {
            return Err(TrustError::Store {
                path: path.to_path_buf(),
                reason: e.to_string(),
            });
        }
    };
    let store: Store = serde_json::from_str(&text).map_err(|e| TrustError::Store {
        path: path.to_path_buf(),
        reason: format!("not a drover trust file: {e}"),
    })?;
    if store.version != STORE_VERSION {
        return Err(TrustError::Store {
            path: path.to_path_buf(),
            reason: format!(
                "version {} (this drover reads version {STORE_VERSION})",
                store.version
            ),
        });
    }
    Ok(store)
}

fn project_key(project: &Path) -> Result<String, TrustError> {
    project
        .canonicalize()
        .map(|p| p.to_string_lossy().into_owned())
        .map_err(|e| TrustError::Project {
            path: project.to_path_buf(),
            reason: e.to_string(),
        })
}

impl Trust {
    /// The user's trust in `project`. An unreadable store trusts nothing
    /// (and says why in the error of the first refusal's caller).
    pub fn load(project: &Path) -> Result<Trust, TrustError> {
        let key = project_key(project)?;
        let all = trust_all();
        let record = match store_path() {
            Some(path) if !all => read_store(&path)?.projects.remove(&key),
            _ => None,
        };
        Ok(Trust {
            project: project.to_path_buf(),
            key,
            record,
            all,
        })
    }

    /// Whether everything is trusted by `DROVER_TRUST_ALL=1`.
    pub fn all(&self) -> bool {
        self.all
    }

    pub fn record(&self) -> Option<&Record> {
        self.record.as_ref()
    }

    /// The project path as the trust store keys it.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// `file` relative to the project, as records name it.
    pub fn relative(&self, file: &Path) -> String {
        file.strip_prefix(&self.project)
            .unwrap_or(file)
            .to_string_lossy()
            .into_owned()
    }

    /// Whether a project file with these bytes is trusted.
    pub fn trusts(&self, file: &Path, bytes: &[u8]) -> bool {
        self.trusts_digest(file, &digest(bytes))
    }

    /// Whether a project file whose bytes have this SHA-256 is trusted.
    pub fn trusts_digest(&self, file: &Path, sha256: &str) -> bool {
        self.all
            || self.record.as_ref().is_some_and(|r| {
                r.files.get(&self.relative(file)).map(String::as_str) == Some(sha256)
            })
    }

    /// Refuses a project profile the user has not trusted. User and
    /// built-in profiles pass.
    pub fn require_profile(&self, profile: &Profile) -> Result<(), Untrusted> {
        let ProfileSource::Project(path) = &profile.source else {
            return Ok(());
        };
        if self.all {
            return Ok(());
        }
        let wants = wants(profile);
        // The bytes the catalog parsed, so a file swapped since cannot slip by.
        let trusted = self.record.as_ref().is_some_and(|r| {
            profile.sha256.is_some() && r.files.get(&self.relative(path)) == profile.sha256.as_ref()
        });
        if trusted {
            return Ok(());
        }
        let relative = self.relative(path);
        Err(Untrusted {
            changed: self
                .record
                .as_ref()
                .is_some_and(|r| r.files.contains_key(&relative)),
            file: relative,
            wants,
        })
    }
}

/// The project's and the user's `config.toml`, each read once, the
/// project's trusted or not by the digest of the bytes read (an unreadable
/// trust store trusts nothing). Every feature that reads settings loads
/// them through here, so each value carries its file's provenance.
pub fn load_config(project: &Path) -> Result<Config, ConfigError> {
    let trust = Trust::load(project).ok();
    Config::load(project, |file, sha256| {
        trust
            .as_ref()
            .is_some_and(|t| t.trusts_digest(file, sha256))
    })
}

/// The project's `config.toml` alone, as [`load_config`] reads it.
pub fn load_project_config(project: &Path) -> Result<Option<ConfigFile>, ConfigError> {
    let trust = Trust::load(project).ok();
    ConfigFile::read(
        &drover_config::project_path(project),
        Scope::Project,
        |file, sha256| {
            trust
                .as_ref()
                .is_some_and(|t| t.trusts_digest(file, sha256))
        },
    )
}

/// What a profile would run outside the sandbox, one line each.
pub fn wants(profile: &Profile) -> Vec<String> {
    let list = |items: &[String]| {
        items
            .iter()
            .map(|a| drover_workspace::shell_quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = vec![format!("binary: {}", profile.binary)];
    for (field, items) in [
        ("launch_args", &profile.launch_args),
        ("bypass_args", &profile.bypass_args),
        ("[turn] args", &profile.turn.args),
        ("[turn] argv", &profile.turn.argv),
        ("[turn] resume", &profile.turn.resume),
        ("[turn] session_id", &profile.turn.session_id),
    ] {
        if !items.is_empty() {
            out.push(format!("{field}: {}", list(items)));
        }
    }
    if profile.model_flag != "--model" {
        out.push(format!("model_flag: {}", profile.model_flag));
    }
    if !profile.component_env.is_empty() {
        out.push(format!(
            "component_env (the component may set): {}",
            profile.component_env.join(", ")
        ));
    }
    if let drover_profile::ComponentRef::File(path) = &profile.component {
        out.push(format!("component: {}", path.display()));
    }
    for (table, env) in [("env", &profile.env), ("[turn] env", &profile.turn.env)] {
        for (k, v) in env {
            out.push(format!("{table}: {k}={}", drover_workspace::shell_quote(v)));
        }
    }
    out
}

/// What a project component contributes to a launch, one line each: that
/// it chooses the CLI's arguments (and whether it takes the place of the
/// built-in component of its name), the variables its profiles let it set
/// (`component_env`), and, when known, the variables it reads
/// (`location-env`).
pub fn component_wants(name: &str, profiles: &[&Profile], reads: Option<&[String]>) -> Vec<String> {
    let mut wants = vec![if drover_profile::builtin::find(name).is_some() {
        format!(
            "component {name}: SHADOWS the built-in {name} component; it chooses the CLI's arguments"
        )
    } else {
        format!("component {name}: chooses the CLI's arguments")
    }];
    let mut sets: Vec<&str> = profiles
        .iter()
        .flat_map(|p| p.component_env.iter().map(String::as_str))
        .collect();
    sets.sort_unstable();
    sets.dedup();
    wants.push(format!(
        "may set env: {}",
        if sets.is_empty() {
            "nothing".to_string()
        } else {
            sets.join(", ")
        }
    ));
    if let Some(reads) = reads {
        wants.push(format!(
            "reads env: {}",
            if reads.is_empty() {
                "nothing".to_string()
            } else {
                reads.join(", ")
            }
        ));
    }
    wants
}

/// What a settings file would run, connect to or allow: the workspace and
/// CLI it picks, its `[ray]` cluster (address, drover's path and the
/// project's on the nodes, placement), its `[[notify]]` commands and
/// webhooks, and its `[policy]` decisions that allow without asking, one
/// line each.
pub fn config_wants(file: &ConfigFile) -> Vec<String> {
    let mut wants = setting_wants(file);
    wants.extend(notify_wants(file));
    wants.extend(policy_wants(file));
    wants
}

/// The settings an untrusted project's file is not allowed to decide
/// (drover sets them aside until it is trusted): each is listed with its value.
const OUTSIDE_SETTINGS: &[&[&str]] = &[&["workspace", "default"], &["run", "cli"]];

fn setting_wants(file: &ConfigFile) -> Vec<String> {
    let mut wants: Vec<String> = OUTSIDE_SETTINGS
        .iter()
        .filter_map(|keys| {
            let value = file.get(keys)?;
            let (table, key) = keys.split_first()?;
            Some(format!("[{table}] {} = {value}", key.join(".")))
        })
        .collect();
    if let Some(ray) = file.get(&["ray"]).and_then(toml::Value::as_table) {
        wants.extend(table_lines("ray", ray));
    }
    wants
}

/// `[name] key = value` for each plain value of a table, recursing into
/// sub-tables (`[ray.cli.claude] place = …`).
fn table_lines(name: &str, table: &toml::Table) -> Vec<String> {
    let mut plain = Vec::new();
    let mut nested = Vec::new();
    for (key, value) in table {
        match value {
            toml::Value::Table(inner) => {
                nested.extend(table_lines(&format!("{name}.{key}"), inner))
            }
            other => plain.push(format!("[{name}] {key} = {other}")),
        }
    }
    plain.extend(nested);
    plain
}

fn policy_wants(file: &ConfigFile) -> Vec<String> {
    let Some(policy) = file.table().get("policy").and_then(toml::Value::as_table) else {
        return Vec::new();
    };
    let allows = |v: Option<&toml::Value>| {
        matches!(
            v.and_then(toml::Value::as_str),
            Some("allow" | "allow-always")
        )
    };
    let mut wants = Vec::new();
    if allows(policy.get("default")) {
        wants.push("[policy] default = allow".to_string());
    }
    if let Some(toml::Value::Array(rules)) = policy.get("rule") {
        for rule in rules.iter().filter_map(toml::Value::as_table) {
            if allows(rule.get("decision")) {
                let fields: Vec<String> = rule.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                wants.push(format!("[[policy.rule]] {}", fields.join(", ")));
            }
        }
    }
    wants
}

fn notify_wants(file: &ConfigFile) -> Vec<String> {
    let Some(toml::Value::Array(items)) = file.table().get("notify") else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(toml::Value::as_table)
        .filter(|t| {
            matches!(
                t.get("kind").and_then(toml::Value::as_str),
                Some("command" | "webhook")
            ) || t.contains_key("argv")
                || t.contains_key("url")
        })
        .map(|t| {
            let fields: Vec<String> = t.iter().map(|(k, v)| format!("{k} = {v}")).collect();
            format!("[[notify]] {}", fields.join(", "))
        })
        .collect()
}

/// The project files trust covers: every `.drover/profiles/*.toml`,
/// `.drover/config.toml`, every `.drover/adapters/*.wasm` and every `.wasm` a
/// project profile names, with their bytes. Each must be a regular file (a
/// checkout may commit a FIFO, a link to `/dev/zero`) within its cap.
pub fn project_files(project: &Path) -> Result<Vec<(PathBuf, Vec<u8>)>, TrustError> {
    let io = |path: &Path, e: std::io::Error| TrustError::Project {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    drover_state::refuse_links(project, &[".drover", ".drover/profiles"]).map_err(|e| {
        TrustError::Project {
            path: project.to_path_buf(),
            reason: e.to_string(),
        }
    })?;
    let mut files = Vec::new();
    let profiles = drover_profile::project_dir(project);
    match std::fs::read_dir(&profiles) {
        Ok(entries) => {
            let mut paths: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "toml"))
                .collect();
            paths.sort();
            for path in paths {
                let bytes = read_bounded(&path, SETTINGS_MAX).map_err(|e| io(&path, e))?;
                files.push((path, bytes));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(&profiles, e)),
    }
    let config = drover_config::project_path(project);
    match read_bounded(&config, SETTINGS_MAX) {
        Ok(bytes) => files.push((config, bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(&config, e)),
    }
    files.extend(project_components(project, &files)?);
    Ok(files)
}

/// The project's components: `.drover/adapters/*.wasm`, then each `.wasm`
/// a project profile among `profiles` names by path, once each.
fn project_components(
    project: &Path,
    profiles: &[(PathBuf, Vec<u8>)],
) -> Result<Vec<(PathBuf, Vec<u8>)>, TrustError> {
    let fail = |path: &Path, reason: String| TrustError::Project {
        path: path.to_path_buf(),
        reason,
    };
    drover_state::refuse_links(project, &[".drover", ".drover/adapters"])
        .map_err(|e| fail(project, e.to_string()))?;
    let adapters = drover_profile::registry::project_adapters_dir(project);
    let mut paths: Vec<PathBuf> = match std::fs::read_dir(&adapters) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(fail(&adapters, e.to_string())),
    };
    paths.sort();
    for (path, bytes) in profiles {
        if path.extension().is_none_or(|x| x != "toml") {
            continue;
        }
        let text = String::from_utf8_lossy(bytes);
        if let Ok(profile) = Profile::parse(&text, &ProfileSource::Project(path.clone()))
            && let drover_profile::ComponentRef::File(named) = &profile.component
            && !paths.contains(named)
        {
            paths.push(named.clone());
        }
    }
    let mut files = Vec::new();
    for path in paths {
        match drover_gate::read::read_bounded(&path, drover_gate::read::COMPONENT_MAX) {
            Ok(bytes) => files.push((path, bytes)),
            // A profile naming a missing file fails when it is used; there
            // is nothing here to trust.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(fail(&path, e.to_string())),
        }
    }
    Ok(files)
}

/// Records the current bytes of `files` as trusted for the project.
pub fn record(project: &Path, files: &[(PathBuf, Vec<u8>)]) -> Result<Record, TrustError> {
    let path = store_path().ok_or(TrustError::NoConfigDir)?;
    let key = project_key(project)?;
    let mut store = read_store(&path)?;
    store.version = STORE_VERSION;
    let record = Record {
        trusted_ns: drover_run::now_ns(),
        files: files
            .iter()
            .map(|(file, bytes)| {
                (
                    file.strip_prefix(project)
                        .unwrap_or(file)
                        .to_string_lossy()
                        .into_owned(),
                    digest(bytes),
                )
            })
            .collect(),
    };
    store.projects.insert(key, record.clone());
    write_store(&path, &store)?;
    Ok(record)
}

/// Forgets the project: its settings need trust again.
pub fn revoke(project: &Path) -> Result<bool, TrustError> {
    let path = store_path().ok_or(TrustError::NoConfigDir)?;
    let key = project_key(project)?;
    let mut store = read_store(&path)?;
    let removed = store.projects.remove(&key).is_some();
    if removed {
        write_store(&path, &store)?;
    }
    Ok(removed)
}

fn write_store(path: &Path, store: &Store) -> Result<(), TrustError> {
    drover_run::write_json_atomic(path, store).map_err(|e| TrustError::Store {
        path: path.to_path_buf(),
        reason: format!("cannot write: {e}"),
    })
}
