//! drover adapter for Muse Code (Meta), built from its public sources: no
//! Muse binary could be run here, so every fact below names where it was
//! read in `docs/adapters/muse.md`, and `drover probe-adapter muse --probe`
//! is how a user with the real binary checks them.
//!
//! Headless turns are `muse exec --json`: JSON-lines envelopes on stdout
//! (`run.output.delta`, `run.terminal.*`, `task.lifecycle.*`), no token
//! counts there; usage is in the session log
//! `$XDG_DATA_HOME/muse/sessions/YYYY/MM/DD/<session>/session.jsonl`,
//! subagents in `subagent/<child>/session.jsonl` below it. Hooks are
//! Claude Code's shape in `.muse/hooks.json` (and the user's
//! `~/.config/muse/settings.json`).

mod commands;
mod faults;
mod hooks;
mod turn;
pub mod usage;

use drover_kit::usage::RowParser;
use drover_kit::{
    Adapter, AdapterError, Capability, Command, Fault, GlobBase, HookEditor, HookEvent,
    LaunchRequest, LocationContext, Metadata, ParserSpec, Profile, TranscriptGlob, TurnOutput,
    TurnResult, hookcfg, prompt,
};

pub struct Muse;

/// The usage parser name profiles use for Muse session logs.
pub const PARSER: &str = "muse-session";

/// Session logs and their subagents' below `muse/sessions` of the data
/// directory.
const SESSIONS: [&str; 2] = [
    "muse/sessions/*/*/*/*/session.jsonl",
    "muse/sessions/*/*/*/*/subagent/*/session.jsonl",
];

impl Adapter for Muse {
    const METADATA: Metadata = Metadata {
        capabilities: &[
            Capability::Prompt,
            Capability::Commands,
            Capability::Headless,
            Capability::HookConfig,
            Capability::HookPayloads,
            Capability::Transcripts,
            Capability::Usage,
            Capability::Faults,
            Capability::Acp,
        ],
        dialects: &["muse-hooks-json"],
        usage_parsers: &[ParserSpec {
            name: PARSER,
            needles: &["\"model_completed\""],
        }],
        location_env: &["XDG_DATA_HOME"],
        limitations: &[
            "built from Muse's public sources, not yet run against the real binary: `drover probe-adapter muse --probe` checks it",
            "reads no panes: Muse's TUI was never seen, so a tmux seat learns only from hooks",
            "`muse exec` resumes only with [component_settings] resume_flag, once `muse exec --help` lists such a flag",
            "hooks run with a cleared environment, and a project's .muse/hooks.json only in a workspace Muse trusts",
        ],
        ..Metadata::new("muse", env!("CARGO_PKG_VERSION"))
    };
    const HOOK_EDITOR: Option<HookEditor> = Some(hookcfg::JSON);

    fn render_prompt(profile: &Profile, text: &str) -> Result<String, AdapterError> {
        prompt::render_profile(profile, text)
    }

    fn interactive_command(
        profile: &Profile,
        request: &LaunchRequest,
    ) -> Result<Command, AdapterError> {
        commands::interactive(profile, request)
    }

    fn headless_command(
        profile: &Profile,
        request: &LaunchRequest,
    ) -> Result<Command, AdapterError> {
        commands::headless(profile, request)
    }

    fn acp_command(profile: &Profile, request: &LaunchRequest) -> Result<Command, AdapterError> {
        commands::serve(profile, request)
    }

    fn parse_turn(_profile: &Profile, output: &TurnOutput) -> Result<TurnResult, AdapterError> {
        Ok(turn::parse(output))
    }

    fn parse_hook(
        profile: &Profile,
        native_event: &str,
        payload: &[u8],
    ) -> Result<HookEvent, AdapterError> {
        hooks::parse(profile, native_event, payload)
    }

    fn transcript_locations(_profile: &Profile, context: &LocationContext) -> Vec<TranscriptGlob> {
        transcript_globs(context)
    }

    fn classify_fault(profile: &Profile, lines: &[String]) -> Option<Fault> {
        faults::classify(profile, lines)
    }

    fn usage_parser(name: &str) -> Option<Box<dyn RowParser>> {
        (name == PARSER).then(|| Box::new(usage::Sessions::default()) as Box<dyn RowParser>)
    }
}

/// [`SESSIONS`] below `$XDG_DATA_HOME`, else `~/.local/share`.
fn transcript_globs(context: &LocationContext) -> Vec<TranscriptGlob> {
    let data = context
        .env
        .iter()
        .find(|(k, v)| k == "XDG_DATA_HOME" && !v.is_empty())
        .map(|(_, v)| v.trim_end_matches('/').to_string());
    let (base, root) = match data {
        Some(dir) => (GlobBase::Absolute, dir),
        None => (GlobBase::Home, ".local/share".to_string()),
    };
    SESSIONS
        .iter()
        .map(|pattern| TranscriptGlob {
            base,
            pattern: format!("{root}/{pattern}"),
            format: "jsonl".to_string(),
            parser: PARSER.to_string(),
        })
        .collect()
}

#[cfg(test)]
mod tests_support {
    use drover_kit::Profile;
    use drover_kit::testing::ProfileParts;

    /// The built-in profile's parts (profiles/muse.toml).
    pub fn profile() -> Profile {
        Profile::new("muse", "muse", "muse-hooks-json", super::PARSER)
            .bypass("--disable-approval")
            .hooks("SessionStart Stop StopFailure SessionEnd PermissionRequest UserPromptSubmit=PromptSubmit PreToolUse=ToolStart PostToolUse=ToolEnd")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_logs_are_under_the_data_directory() {
        let home = LocationContext {
            home: "/h".into(),
            cwd: "/w".into(),
            env: vec![],
        };
        let globs = transcript_globs(&home);
        assert_eq!(globs.len(), 2);
        assert!(matches!(globs[0].base, GlobBase::Home));
        assert_eq!(
            globs[0].pattern,
            ".local/share/muse/sessions/*/*/*/*/session.jsonl"
        );
        let chosen = LocationContext {
            env: vec![("XDG_DATA_HOME".into(), "/data/".into())],
            ..home
        };
        let globs = transcript_globs(&chosen);
        assert!(matches!(globs[1].base, GlobBase::Absolute));
        assert_eq!(
            globs[1].pattern,
            "/data/muse/sessions/*/*/*/*/subagent/*/session.jsonl"
        );
    }
}
