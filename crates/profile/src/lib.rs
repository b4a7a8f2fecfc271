//! drover-profile: CLI profiles, data that binds a CLI binary to its adapter
//! component, with the built-in catalog (the components and profiles compiled
//! in), drover's config directories, and the registry that binds a profile to
//! its loaded component.
//!
//! Built-in profiles are embedded; `~/.config/drover/profiles/*.toml` and then
//! `<project>/.drover/profiles/*.toml` override them by `name`. A bmad-loop
//! profile loads unchanged (same fields and meanings, its coercions and its
//! string `adapter` kind included); drover's own fields are `component`,
//! `aliases`, `[turn]`, `[sandbox]`, `[component_settings]` and
//! `component_env`.

pub mod builtin;
mod coerce;
mod error;
pub mod known;
mod paths;
pub mod registry;
mod schema;
mod template;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use error::{LookupError, ProfileError};

/// A finding that does not stop a profile from loading (a coerced value, an
/// old field name). Same shape as an error: file, line, field, message.
pub type ProfileWarning = ProfileError;

use drover_sandbox::Limits;
use drover_types::wit;

/// Where a profile came from.
#[derive(Debug, Clone, PartialEq)]
pub enum ProfileSource {
    Builtin(&'static str),
    User(PathBuf),
    Project(PathBuf),
}

impl ProfileSource {
    pub fn path(&self) -> Option<&Path> {
        match self {
            ProfileSource::Builtin(_) => None,
            ProfileSource::User(p) | ProfileSource::Project(p) => Some(p),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            ProfileSource::Builtin(_) => "built-in",
            ProfileSource::User(_) => "user",
            ProfileSource::Project(_) => "project",
        }
    }
}

impl fmt::Display for ProfileSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProfileSource::Builtin(file) => write!(f, "<built-in>/{file}"),
            ProfileSource::User(p) | ProfileSource::Project(p) => write!(f, "{}", p.display()),
        }
    }
}

/// Which component implements a profile's logic.
#[derive(Debug, Clone, PartialEq)]
pub enum ComponentRef {
    /// A name: a project or user adapter file of that name, else built-in.
    Builtin(String),
    /// A `.wasm` file (relative paths resolved against the profile's directory).
    File(PathBuf),
    /// No `component` field: the component named like the profile if there
    /// is one, else the generic adapter, driven by the profile's data.
    Implicit(String),
}

impl fmt::Display for ComponentRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ComponentRef::Builtin(name) | ComponentRef::Implicit(name) => write!(f, "{name}"),
            ComponentRef::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// bmad-loop's `adapter` field: which kind of driver runs the CLI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AdapterKind {
    /// A pane plus hook signals (headless turns too, in drover).
    Generic,
    /// bmad-loop's HTTP/SSE driver for opencode; drover drives opencode with
    /// its `opencode` component instead.
    OpencodeHttp,
}

impl AdapterKind {
    pub const NAMES: &[&str] = &["generic", "opencode-http"];

    pub fn as_str(self) -> &'static str {
        match self {
            AdapterKind::Generic => "generic",
            AdapterKind::OpencodeHttp => "opencode-http",
        }
    }
}

/// What a seat's long-lived agent (`--workspace acp`) speaks on its stdio:
/// the Agent Client Protocol, or Muse's session protocol (`muse serve`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgentProtocol {
    #[default]
    Acp,
    Msp,
}

impl AgentProtocol {
    pub const NAMES: &[&str] = &["acp", "msp"];
}

#[derive(Debug, Clone, PartialEq)]
pub struct Hooks {
    /// A hook-config dialect, or `none` for a hookless CLI.
    pub dialect: String,
    /// Project-relative path of the hook config file.
    pub config_path: String,
    /// Native event -> canonical event, in file order.
    pub events: Vec<(String, String)>,
}

/// `[turn]`: how headless turns run. `args` and `env` apply to every
/// component; the rest tells the generic adapter how to run a turn of a CLI
/// no component knows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Turn {
    /// Extra argv for headless turns.
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// The turn's argv after the binary; `{prompt}` is the rendered prompt
    /// (without one, the prompt goes to stdin).
    pub argv: Vec<String>,
    /// Argv that continues a conversation; `{id}` is its id.
    pub resume: Vec<String>,
    /// Argv that starts a conversation with a chosen id; `{id}` is the id.
    pub session_id: Vec<String>,
    /// How to read the turn's stdout: `text`, `json` or a CLI family's
    /// format (`claude-json`, …); empty = not set.
    pub output: String,
    /// Regexes of lines that are not the reply (a banner, warnings, a
    /// token line), for plain-text output.
    pub drop: Vec<String>,
    /// A regex whose `reply` group is the reply in plain-text output.
    pub reply: Option<String>,
    /// `[turn.usage]`: count (`input`, `output`, …) -> a regex whose group
    /// is that count as the CLI prints it (`3.1k`). Figures read this way
    /// are marked approximate.
    pub usage: BTreeMap<String, String>,
}

impl Turn {
    /// How the `[turn]` text settings reach a component: as
    /// `[component_settings]` entries under `turn.` (the adapter world's
    /// profile record has no fields for them; the generic adapter reads them).
    pub fn text_settings(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if !self.drop.is_empty() {
            out.push((SETTING_DROP.to_string(), self.drop.join("\n")));
        }
        if let Some(reply) = &self.reply {
            out.push((SETTING_REPLY.to_string(), reply.clone()));
        }
        for (count, pattern) in &self.usage {
            out.push((format!("{SETTING_USAGE}{count}"), pattern.clone()));
        }
        out
    }

    /// Whether usage may come from the CLI's printed text: such figures
    /// are estimates (rounded, `3.1k`), never counts.
    pub fn usage_is_printed(&self) -> bool {
        !self.usage.is_empty()
    }
}

/// The component settings `[turn]`'s text fields travel as.
pub const SETTING_DROP: &str = "turn.drop";
pub const SETTING_REPLY: &str = "turn.reply";
pub const SETTING_USAGE: &str = "turn.usage.";

/// `[sandbox]`: per-profile overrides of the component limits.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SandboxOverrides {
    pub call_timeout: Option<Duration>,
    pub memory_bytes: Option<usize>,
}

/// `[resume]`: what a seat does when its turn ends in a rate limit or a
/// quota: wait for the reset the CLI stated (or back off) and send again.
#[derive(Debug, Clone, PartialEq)]
pub struct Resume {
    /// `on_limit`: whether it resumes at all (default true).
    pub on_limit: bool,
    /// `attempts`: resumptions of one message before giving up (default 3).
    pub attempts: u32,
    /// `message`: what is sent on resuming; the interrupted prompt when
    /// unset.
    pub message: Option<String>,
}

impl Default for Resume {
    fn default() -> Resume {
        Resume {
            on_limit: true,
            attempts: RESUME_ATTEMPTS,
            message: None,
        }
    }
}

/// `[resume] attempts` when a profile does not set it.
pub const RESUME_ATTEMPTS: u32 = 3;

#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub name: String,
    pub binary: String,
    pub hooks: Hooks,
    pub skill_tree: String,
    pub prompt_template: String,
    pub launch_args: Vec<String>,
    pub bypass_args: Vec<String>,
    pub model_flag: String,
    pub env: BTreeMap<String, String>,
    pub usage_parser: String,
    pub usage_grace: Duration,
    /// How long a pane's screen may read as nothing known (no adapter rule
    /// matches) before drover gives up on it; nothing is typed meanwhile.
    pub ready_timeout: Duration,
    /// A hookless seat on a pane: how long its screen must read idle
    /// without changing for its turn to count as ended (`screen_settle_s`).
    pub screen_settle: Duration,
    pub stop_without_result_nudges: Option<u32>,
    pub subagent_stop_without_transcript: bool,
    pub first_run_note: String,
    pub seed_files: Vec<String>,
    pub env_fault_patterns: Vec<String>,
    /// Indexes of `env_fault_patterns` that match their own line in the
    /// profile file (reported by `validate`; bmad-loop's claude pattern does).
    pub self_matching_patterns: Vec<usize>,
    /// bmad-loop's driver kind (default `generic`; `opencode-http` when
    /// absent with dialect `none`).
    pub adapter: AdapterKind,
    pub component: ComponentRef,
    pub aliases: Vec<String>,
    pub turn: Turn,
    /// `agent_protocol`: what the agent of an acp seat speaks.
    pub agent_protocol: AgentProtocol,
    pub sandbox: SandboxOverrides,
    pub resume: Resume,
    /// `[component_settings]`: free-form settings only the component reads.
    pub component_settings: BTreeMap<String, String>,
    /// `component_env`: the environment variables the component may set in
    /// a launch command. Reviewed with the profile (built-in, the user's, or
    /// trusted with the project), so a component sets only what its profile
    /// allows; anything else it asks for is refused.
    pub component_env: Vec<String>,
    /// What loaded but deserves a look (coercions, old names).
    pub warnings: Vec<ProfileWarning>,
    pub source: ProfileSource,
    /// SHA-256 of the file's bytes as parsed (user and project profiles),
    /// which trust records are compared with.
    pub sha256: Option<String>,
}

impl Profile {
    /// Parses one profile file's text.
    pub fn parse(text: &str, source: &ProfileSource) -> Result<Profile, ProfileError> {
        schema::parse(text, source)
    }

    pub fn hookless(&self) -> bool {
        self.hooks.dialect == "none"
    }

    /// The component limits: defaults, then this profile's overrides.
    pub fn limits(&self) -> Limits {
        let mut limits = Limits::default();
        if let Some(t) = self.sandbox.call_timeout {
            limits.call_timeout = t;
        }
        if let Some(m) = self.sandbox.memory_bytes {
            limits.memory_bytes = m;
        }
        limits
    }

    /// The profile as the adapter world sees it.
    pub fn to_wit(&self) -> wit::Profile {
        wit::Profile {
            name: self.name.clone(),
            binary: self.binary.clone(),
            prompt_template: self.prompt_template.clone(),
            launch_args: self.launch_args.clone(),
            bypass_args: self.bypass_args.clone(),
            model_flag: self.model_flag.clone(),
            dialect: self.hooks.dialect.clone(),
            hook_events: self.hooks.events.clone(),
            usage_parser: self.usage_parser.clone(),
            env_fault_patterns: self.env_fault_patterns.clone(),
            turn_args: self.turn.args.clone(),
            settings: self
                .component_settings
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .chain(self.turn.text_settings())
                .chain(
                    (!self.component_settings.contains_key(TIMEZONE_SETTING))
                        .then(|| (TIMEZONE_SETTING.to_string(), host_offset())),
                )
                .collect(),
            turn_argv: self.turn.argv.clone(),
            turn_resume: self.turn.resume.clone(),
            turn_session_id: self.turn.session_id.clone(),
            turn_output: self.turn.output.clone(),
        }
    }
}

/// The `[component_settings]` entry a component reads a zone-less time in
/// (a reset time "at 3:45 PM"): the host's offset unless the profile sets it.
pub const TIMEZONE_SETTING: &str = "timezone";

/// This machine's UTC offset now, `+01:00`; UTC when it cannot tell. Taken
/// at each turn, so a daylight-saving change is seen by the next one.
fn host_offset() -> String {
    let seconds = jiff::tz::TimeZone::try_system()
        .map(|tz| tz.to_offset(jiff::Timestamp::now()).seconds())
        .unwrap_or(0);
    let sign = if seconds < 0 { '-' } else { '+' };
    let minutes = seconds.unsigned_abs() / 60;
    format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
}

/// `screen_settle_s` when a profile does not set it: longer than a CLI's
/// pause between printing its reply and showing its prompt again.
pub const SCREEN_SETTLE_S: f64 = 2.0;

/// `ready_timeout_s` when a profile does not set it: long enough for a
/// CLI that installs plugins on its first start.
pub const READY_TIMEOUT_S: f64 = 45.0;

/// Built-in aliases (bmad-loop's names and common spellings).
const BUILTIN_ALIASES: &[(&str, &str)] = &[
    ("claude-code", "claude"),
    ("claude-code-tmux", "claude"),
    ("codex-cli", "codex"),
    ("gemini-cli", "gemini"),
    ("copilot-cli", "copilot"),
    ("agy", "antigravity"),
    ("opencode-http", "opencode"),
    ("qwen-code", "qwen"),
    ("cursor-agent", "cursor"),
    ("grok-cli", "grok"),
];

/// Every profile visible from a project, after overrides.
#[derive(Debug, Default)]
pub struct Catalog {
    profiles: Vec<Profile>,
    errors: Vec<ProfileError>,
}

/// Where user-level profiles live: `$XDG_CONFIG_HOME/drover/profiles` or
/// `~/.config/drover/profiles`.
pub fn user_dir() -> Option<PathBuf> {
    drover_config::user_dir().map(|d| d.join("profiles"))
}

pub fn project_dir(project: &Path) -> PathBuf {
    project.join(".drover").join("profiles")
}

impl Catalog {
    /// Loads built-ins, then user, then project profiles. Files that fail are
    /// kept as errors; see [`Catalog::get`].
    pub fn load(project: &Path) -> Catalog {
        let mut catalog = Catalog::default();
        for (file, text) in crate::builtin::PROFILES {
            catalog.add(Profile::parse(text, &ProfileSource::Builtin(file)));
        }
        if let Some(dir) = user_dir() {
            catalog.load_dir(&dir, ProfileSource::User);
        }
        catalog.load_project(project);
        catalog
    }

    /// Like [`Catalog::load`], but parses only the built-in profile `name`
    /// (or its alias) names, for the hook relay, which needs one profile and
    /// runs on every hook call. User and project profiles are all read, since
    /// any of them may override or alias it.
    pub fn load_for(project: &Path, name: &str) -> Catalog {
        let target = BUILTIN_ALIASES
            .iter()
            .find(|(alias, _)| *alias == name)
            .map_or(name, |(_, t)| *t);
        let file = format!("{target}.toml");
        let mut catalog = Catalog::default();
        let mut found = false;
        for (builtin, text) in crate::builtin::PROFILES {
            if *builtin == file {
                catalog.add(Profile::parse(text, &ProfileSource::Builtin(builtin)));
                found = true;
            }
        }
        if !found {
            return Catalog::load(project);
        }
        if let Some(dir) = user_dir() {
            catalog.load_dir(&dir, ProfileSource::User);
        }
        catalog.load_project(project);
        catalog
    }

    /// The project's profiles, unless `.drover` or `.drover/profiles` is a
    /// link (a checkout must not point drover at files elsewhere).
    fn load_project(&mut self, project: &Path) {
        if let Err(e) = drover_state::refuse_links(project, &[".drover", ".drover/profiles"]) {
            self.errors.push(ProfileError {
                source: project_dir(project).display().to_string(),
                line: None,
                field: None,
                message: e.to_string(),
            });
            return;
        }
        self.load_dir(&project_dir(project), ProfileSource::Project);
    }

    fn load_dir(&mut self, dir: &Path, source: fn(PathBuf) -> ProfileSource) {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => {
                self.errors.push(ProfileError {
                    source: dir.display().to_string(),
                    line: None,
                    field: None,
                    message: format!("cannot read the directory: {e}"),
                });
                return;
            }
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for path in files {
            let origin = source(path.clone());
            // A checkout's file may be a FIFO, a device or a link out: read
            // only a regular file, and only so much. The user's own files
            // may be links (dotfiles).
            let text = if matches!(origin, ProfileSource::Project(_)) {
                drover_gate::read::read_text_bounded(&path, drover_gate::read::SETTINGS_MAX)
            } else {
                std::fs::read_to_string(&path)
            };
            match text {
                Ok(text) => self.add(Profile::parse(&text, &origin)),
                Err(e) => self.errors.push(ProfileError {
                    source: path.display().to_string(),
                    line: None,
                    field: None,
                    message: format!("cannot read: {e}"),
                }),
            }
        }
    }

    /// Adds a profile; one of the same name replaces the earlier one. A user
    /// or project profile named like a built-in alias (bmad-loop's
    /// `opencode-http`, say) replaces the built-in profile the alias means,
    /// and answers to that profile's name too.
    fn add(&mut self, parsed: Result<Profile, ProfileError>) {
        let mut profile = match parsed {
            Ok(profile) => profile,
            Err(e) => return self.errors.push(e),
        };
        if let Some(existing) = self.profiles.iter_mut().find(|p| p.name == profile.name) {
            *existing = profile;
            return;
        }
        let aliased = BUILTIN_ALIASES
            .iter()
            .find(|(alias, _)| *alias == profile.name)
            .map(|(_, target)| *target);
        let replaced = aliased.and_then(|target| {
            self.profiles
                .iter_mut()
                .find(|p| p.name == target && matches!(p.source, ProfileSource::Builtin(_)))
        });
        match replaced {
            Some(builtin) => {
                if !profile.aliases.contains(&builtin.name) {
                    profile.aliases.push(builtin.name.clone());
                }
                *builtin = profile;
            }
            None => self.profiles.push(profile),
        }
    }

    pub fn profiles(&self) -> &[Profile] {
        &self.profiles
    }

    pub fn errors(&self) -> &[ProfileError] {
        &self.errors
    }

    /// The profile a name (or alias) means. Refuses while any profile file is
    /// broken: a broken override must not silently fall back to the built-in.
    pub fn get(&self, name: &str) -> Result<&Profile, LookupError> {
        if !self.errors.is_empty() {
            return Err(LookupError::Broken {
                name: name.to_string(),
                errors: self
                    .errors
                    .iter()
                    .map(|e| format!("  {e}"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            });
        }
        self.find(name).ok_or_else(|| LookupError::Unknown {
            name: name.to_string(),
            available: self
                .profiles
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// Lookup that ignores load errors (for reporting commands).
    pub fn find(&self, name: &str) -> Option<&Profile> {
        if let Some(p) = self.profiles.iter().find(|p| p.name == name) {
            return Some(p);
        }
        if let Some(p) = self
            .profiles
            .iter()
            .find(|p| p.aliases.iter().any(|a| a == name))
        {
            return Some(p);
        }
        BUILTIN_ALIASES
            .iter()
            .find(|(alias, _)| *alias == name)
            .and_then(|(_, target)| self.profiles.iter().find(|p| p.name == *target))
    }
}

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
