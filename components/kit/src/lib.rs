//! Shared guest-side code for drover adapter components: the SDK.
//!
//! The WIT bindings are generated here once (`src/bindings.rs`). An adapter crate implements
//! [`Adapter`] (every function has a default, so it writes only what its CLI
//! needs) and exports itself with [`export!`]; it uses the generated types
//! directly. The helper
//! modules hold the CLI-independent logic (prompt templates, payload field
//! lookup, hook-config editing per dialect, fault and screen rule engines,
//! usage bookkeeping) so that an adapter crate is mostly data about its CLI.
//!
//! The bindings also compile natively, which is how adapter logic is unit
//! tested with plain `cargo test` and benchmarked against the sandboxed build.

// wit-bindgen's output for `wit/adapter.wit` (world `adapter`), generated
// ahead of time (tests/bindings.rs keeps it equal to the generator's output
// and says how to write it again): the `generate!` macro would compile
// wit-bindgen's code generator on every first build.
include!("bindings.rs");
mod adapter;
pub mod claims;
pub mod claude_hooks;
pub mod dialog;
pub mod faults;
pub mod hookcfg;
pub mod launch;
pub mod locations;
pub mod output;
pub mod patterns;
pub mod payload;
pub mod prompt;
pub mod resets;
pub mod screen;
pub mod shell;
#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "tz")]
pub mod tz;
pub mod usage;

pub use adapter::{
    Adapter, CLI_AND_ACP_CAPABILITIES, CLI_CAPABILITIES, CommandBuilder, Exports, HookEditor,
    Metadata, NO_SCREEN_RULE, ParserSpec, not_implemented,
};
pub use drover::adapter::types::*;
pub use exports::drover::adapter::requests::{Request, RequestTail};

/// The WIT package version this kit was generated from; `describe` reports it.
/// Read from the same file as the bindings (also where `drover adapter new`
/// puts it beside a vendored kit), so the two cannot disagree.
pub const WIT_VERSION: &str = package_version(include_str!("../../../wit/adapter.wit"));

/// The `X.Y.Z` of a WIT text's `package drover:adapter@X.Y.Z;` line; without
/// one the kit does not compile.
const fn package_version(wit: &str) -> &str {
    const PREFIX: &[u8] = b"package drover:adapter@";
    let bytes = wit.as_bytes();
    let mut line = 0;
    while line < bytes.len() {
        let mut end = line;
        while end < bytes.len() && bytes[end] != b'\n' {
            end += 1;
        }
        let mut i = 0;
        while i < PREFIX.len() && line + i < end && bytes[line + i] == PREFIX[i] {
            i += 1;
        }
        if i == PREFIX.len() && end > line + i && bytes[end - 1] == b';' {
            let (_, rest) = bytes.split_at(line + i);
            let (version, _) = rest.split_at(end - 1 - (line + i));
            if let Ok(version) = std::str::from_utf8(version) {
                return version;
            }
        }
        line = end + 1;
    }
    panic!("the WIT has no `package drover:adapter@X.Y.Z;` line")
}

/// Shorthand for an `invalid-input` error.
pub fn invalid(message: impl Into<String>) -> AdapterError {
    AdapterError::InvalidInput(message.into())
}

/// Shorthand for an `unsupported` error.
pub fn unsupported(message: impl Into<String>) -> AdapterError {
    AdapterError::Unsupported(message.into())
}

/// Looks up a free-form `[component_settings]` entry of the profile.
pub fn setting<'a>(profile: &'a Profile, key: &str) -> Option<&'a str> {
    profile
        .settings
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Whether the profile asked for plain-text output from headless turns
/// (`[turn] output = "text"`). Only then may a turn that printed none of the
/// CLI's structured output be read as text; when the adapter asked the CLI
/// for JSON, such a turn did not say how it ended.
pub fn text_output(profile: &Profile) -> bool {
    profile.turn_output == "text"
}

/// The argv pieces every launch shares: bypass args (or their replacement)
/// and the model flag.
pub fn common_launch_tail(profile: &Profile, request: &LaunchRequest) -> Vec<String> {
    let mut argv = Vec::new();
    match &request.extra_args {
        Some(extra) => argv.extend(extra.iter().cloned()),
        None => argv.extend(profile.bypass_args.iter().cloned()),
    }
    if !request.model.is_empty() {
        argv.push(profile.model_flag.clone());
        argv.push(request.model.clone());
    }
    argv
}

/// `acp-command` for a CLI whose ACP mode is a flag or subcommand that takes
/// the usual options: the binary, `mode` (e.g. `--acp`), then the bypass
/// args (or their replacement) and the model. The conversation is not on
/// the argv: a resumed one is loaded over the protocol.
pub fn acp_launch(profile: &Profile, request: &LaunchRequest, mode: &[&str]) -> Command {
    let mut argv = vec![profile.binary.clone()];
    argv.extend(mode.iter().map(|arg| arg.to_string()));
    argv.extend(common_launch_tail(profile, request));
    plain_command(argv)
}

/// A `command` with no extra environment and stdin closed.
pub fn plain_command(argv: Vec<String>) -> Command {
    Command {
        argv,
        env: Vec::new(),
        stdin: None,
    }
}

impl Usage {
    pub const ZERO: Usage = Usage {
        input: 0,
        output: 0,
        cache_read: 0,
        cache_write: 0,
        reasoning: 0,
        requests: 0,
    };

    pub fn add(&mut self, other: &Usage) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
        self.reasoning = self.reasoning.saturating_add(other.reasoning);
        self.requests = self.requests.saturating_add(other.requests);
    }

    /// Field-wise `self - other`, floored at zero.
    pub fn minus(&self, other: &Usage) -> Usage {
        Usage {
            input: self.input.saturating_sub(other.input),
            output: self.output.saturating_sub(other.output),
            cache_read: self.cache_read.saturating_sub(other.cache_read),
            cache_write: self.cache_write.saturating_sub(other.cache_write),
            reasoning: self.reasoning.saturating_sub(other.reasoning),
            requests: self.requests.saturating_sub(other.requests),
        }
    }

    pub fn is_zero(&self) -> bool {
        *self == Usage::ZERO
    }
}

impl UsageReport {
    /// The sum over all entries.
    pub fn total(&self) -> Usage {
        let mut total = Usage::ZERO;
        for entry in &self.entries {
            total.add(&entry.usage);
        }
        total
    }

    /// A report with a single entry.
    pub fn single(session: &str, model: &str, usage: Usage) -> UsageReport {
        UsageReport {
            entries: vec![UsageEntry {
                session: session.to_string(),
                day: String::new(),
                model: model.to_string(),
                usage,
            }],
            rejected_rows: 0,
        }
    }
}

impl Profile {
    /// A profile with `{prompt}` as its template, `--model` as its model
    /// flag and every list empty: what a built-in profile leaves unsaid.
    pub fn new(name: &str, binary: &str, dialect: &str, usage_parser: &str) -> Profile {
        Profile {
            name: name.to_string(),
            binary: binary.to_string(),
            prompt_template: "{prompt}".to_string(),
            launch_args: Vec::new(),
            bypass_args: Vec::new(),
            model_flag: "--model".to_string(),
            dialect: dialect.to_string(),
            hook_events: Vec::new(),
            usage_parser: usage_parser.to_string(),
            env_fault_patterns: Vec::new(),
            turn_args: Vec::new(),
            settings: Vec::new(),
            turn_argv: Vec::new(),
            turn_resume: Vec::new(),
            turn_session_id: Vec::new(),
            turn_output: String::new(),
        }
    }
}

impl TurnResult {
    /// A turn that succeeded with `reply`.
    pub fn replied(reply: String, conversation_id: Option<String>) -> TurnResult {
        TurnResult {
            outcome: TurnOutcome::Success,
            reply: Some(reply),
            conversation_id,
            error: None,
            usage: None,
            prompt_kind: None,
        }
    }

    /// A turn whose output did not say how it ended: `unknown` when the
    /// process exited 0, `failed` otherwise, with the CLI's `error` sentence.
    pub fn no_result(
        exit_code: Option<i32>,
        conversation_id: Option<String>,
        error: Option<String>,
    ) -> TurnResult {
        TurnResult {
            outcome: if exit_code == Some(0) {
                TurnOutcome::Unknown
            } else {
                TurnOutcome::Failed
            },
            reply: None,
            conversation_id,
            error,
            usage: None,
            prompt_kind: None,
        }
    }
}

impl HookEvent {
    /// An event of `kind` with every optional field empty.
    pub fn new(kind: CanonicalEvent, native: &str) -> HookEvent {
        HookEvent {
            kind,
            native: native.to_string(),
            session_id: None,
            transcript_path: None,
            cwd: None,
            subagent: false,
            reason: None,
            prompt_kind: None,
            last_message: None,
            fields_found: Vec::new(),
        }
    }
}

impl CanonicalEvent {
    /// Parses the canonical names profiles use in `[hooks.events]`.
    pub fn from_name(name: &str) -> Option<CanonicalEvent> {
        Some(match name {
            "SessionStart" => CanonicalEvent::SessionStart,
            "UserPromptSubmit" | "PromptSubmit" => CanonicalEvent::PromptSubmit,
            "Stop" => CanonicalEvent::Stop,
            "StopFailure" => CanonicalEvent::StopFailure,
            "SubagentStop" => CanonicalEvent::SubagentStop,
            "SessionEnd" => CanonicalEvent::SessionEnd,
            "PreCompact" => CanonicalEvent::PreCompact,
            "Notification" => CanonicalEvent::Notification,
            "PermissionRequest" => CanonicalEvent::PermissionRequest,
            "PreToolUse" | "ToolStart" => CanonicalEvent::ToolStart,
            "PostToolUse" | "ToolEnd" => CanonicalEvent::ToolEnd,
            _ => return None,
        })
    }
}

/// The canonical kind the profile's `[hooks.events]` map assigns to a native
/// event, if it maps it.
pub fn mapped_kind(profile: &Profile, native: &str) -> Option<CanonicalEvent> {
    profile
        .hook_events
        .iter()
        .find(|(n, _)| n == native)
        .and_then(|(_, canonical)| CanonicalEvent::from_name(canonical))
}

#[cfg(test)]
mod tests {
    #[test]
    fn wit_version_is_the_wit_files_package_version() {
        let wit = include_str!("../../../wit/adapter.wit");
        let package = wit.lines().find(|l| l.starts_with("package "));
        let expected = format!("package drover:adapter@{};", super::WIT_VERSION);
        assert_eq!(package, Some(expected.as_str()));
    }
}
