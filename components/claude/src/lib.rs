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
    Adapter, AdapterError, CLI_CAPABILITIES, Command, GlobBase, HookEditor, HookEvent,
    LaunchRequest, LocationContext, Metadata, ParserSpec, Profile, TranscriptGlob, TurnOutput,
    TurnResult, hookcfg, prompt,
};

pub struct Claude;

/// The usage parser name profiles use for Claude transcripts.
pub const PARSER: &str = "claude-jsonl";

impl Adapter for Claude {
    const METADATA: Metadata = Metadata {
        capabilities: CLI_CAPABILITIES,
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
        prompt::render(&profile.prompt_template, text)
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

    fn usage_parser(name: &str) -> Option<Box<dyn RowParser>> {
        usage::parser(name)
    }
}

/// `~/.claude/projects/<slug>/<session>.jsonl` (or under `~/.config/claude`);
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
    match config_dir {
        Some(dirs) => dirs
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| {
                glob(
                    GlobBase::Absolute,
                    format!("{}/projects/*/*.jsonl", d.trim_end_matches('/')),
                )
            })
            .collect(),
        None => vec![
            glob(GlobBase::Home, ".claude/projects/*/*.jsonl".to_string()),
            glob(
                GlobBase::Home,
                ".config/claude/projects/*/*.jsonl".to_string(),
            ),
        ],
    }
}

drover_kit::export!(Claude);

#[cfg(test)]
mod tests_support {
    use drover_kit::Profile;

    /// The built-in claude profile, as the engine passes it.
    pub fn profile() -> Profile {
        Profile {
            name: "claude".to_string(),
            binary: "claude".to_string(),
            prompt_template: "{prompt}".to_string(),
            launch_args: vec![],
            bypass_args: vec![
                "--permission-mode".to_string(),
                "bypassPermissions".to_string(),
            ],
            model_flag: "--model".to_string(),
            dialect: "claude-settings-json".to_string(),
            hook_events: [
                ("SessionStart", "SessionStart"),
                ("Stop", "Stop"),
                ("SessionEnd", "SessionEnd"),
                ("PreCompact", "PreCompact"),
            ]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
            usage_parser: "claude-jsonl".to_string(),
            env_fault_patterns: vec![],
            turn_args: vec![],
            settings: vec![],
        }
    }
}
