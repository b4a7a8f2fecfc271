//! drover adapter for Claude Code.
//!
//! Facts it encodes come from Claude Code 2.1.332 driven offline (see
//! `docs/adapters/claude.md`): `-p --output-format json` prints one result
//! object, hooks live in `.claude/settings.json`, transcripts in
//! `~/.claude/projects/<slug>/<session>.jsonl`.

mod commands;
mod faults;
mod hooks;
#[cfg(test)]
mod real;
mod screen;
mod turn;
pub mod usage;

use drover_kit::faults::FaultRule;
use drover_kit::screen::ScreenRule;
use drover_kit::usage::RowParser;
use drover_kit::{
    Adapter, AdapterError, CLI_AND_ACP_CAPABILITIES, Command, Fault, GlobBase, HookEditor,
    HookEvent, LaunchRequest, LocationContext, Metadata, ParserSpec, Profile, TranscriptGlob,
    TurnOutput, TurnResult, hookcfg, prompt,
};

pub struct Claude;

/// The usage parser name profiles use for Claude transcripts.
pub const PARSER: &str = "claude-jsonl";

/// Transcripts under a config directory: each session's conversation, and
/// (since Claude Code 2.1.2) each subagent's beside it in
/// `<session>/subagents/agent-<id>.jsonl` (its `.meta.json` sidecar carries
/// no usage).
const TRANSCRIPTS: [&str; 2] = ["projects/*/*.jsonl", "projects/*/*/subagents/*.jsonl"];

impl Adapter for Claude {
    const METADATA: Metadata = Metadata {
        capabilities: CLI_AND_ACP_CAPABILITIES,
        dialects: &["claude-settings-json"],
        usage_parsers: &[ParserSpec {
            name: PARSER,
            needles: &["\"usage\""],
        }],
        location_env: &["CLAUDE_CONFIG_DIR"],
        limitations: &["an interactive pane cannot tell done from idle; the Stop hook can"],
        ..Metadata::new("claude", env!("CARGO_PKG_VERSION"))
    };
    const FAULT_RULES: &'static [FaultRule] = faults::RULES;
    const SCREEN_RULES: &'static [ScreenRule] = screen::RULES;
    const HOOK_EDITOR: Option<HookEditor> = Some(hookcfg::JSON);

    fn render_prompt(profile: &Profile, text: &str) -> Result<String, AdapterError> {
        prompt::render_profile(profile, text)
    }

    fn classify_fault(profile: &Profile, lines: &[String]) -> Option<Fault> {
        faults::classify(profile, lines)
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
        commands::acp(profile, request)
    }

    fn parse_turn(profile: &Profile, output: &TurnOutput) -> Result<TurnResult, AdapterError> {
        Ok(if drover_kit::text_output(profile) {
            turn::parse_text(output)
        } else {
            turn::parse(output)
        })
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

    fn usage_parser(name: &str) -> Option<Box<dyn RowParser>> {
        usage::parser(name)
    }
}

/// The [`TRANSCRIPTS`] under `~/.claude` and `~/.config/claude`;
/// `CLAUDE_CONFIG_DIR`, which may list several directories separated by
/// commas, replaces both.
fn transcript_globs(context: &LocationContext) -> Vec<TranscriptGlob> {
    let glob = |base: GlobBase, pattern: String| TranscriptGlob {
        base,
        pattern,
        format: "jsonl".to_string(),
        parser: PARSER.to_string(),
    };
    let config_dir = context
        .env
        .iter()
        .find(|(k, v)| k == "CLAUDE_CONFIG_DIR" && !v.is_empty())
        .map(|(_, v)| v.clone());
    let roots: Vec<(GlobBase, String)> = match config_dir {
        Some(dirs) => dirs
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| (GlobBase::Absolute, d.trim_end_matches('/').to_string()))
            .collect(),
        None => vec![
            (GlobBase::Home, ".claude".to_string()),
            (GlobBase::Home, ".config/claude".to_string()),
        ],
    };
    roots
        .into_iter()
        .flat_map(|(base, dir)| {
            TRANSCRIPTS
                .iter()
                .map(move |pattern| glob(base, format!("{dir}/{pattern}")))
        })
        .collect()
}

// Exported by `component/`, so that the generic adapter can link this
// library too (one component cannot export the world twice).

#[cfg(test)]
mod tests_support {
    use drover_kit::Profile;
    use drover_kit::testing::ProfileParts;

    /// The built-in claude profile, as the engine passes it.
    pub fn profile() -> Profile {
        Profile::new("claude", "claude", "claude-settings-json", "claude-jsonl")
            .bypass("--permission-mode bypassPermissions")
            .hooks("SessionStart Stop SessionEnd PreCompact")
    }
}
