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

use drover_kit::{
    AdapterError, Capability, Command, Description, Fault, GlobBase, Guest, HookEdit, HookEvent,
    HookInstall, HookStatus, LaunchRequest, LocationContext, Profile, Screen, ScreenReading,
    TranscriptGlob, TurnOutput, TurnResult, UsageParser, hookcfg, prompt,
};

pub struct Claude;

/// The usage parser name profiles use for Claude transcripts.
pub const PARSER: &str = "claude-jsonl";

/// Transcripts under a config directory: each session's conversation, and
/// (since Claude Code 2.1.2) each subagent's beside it in
/// `<session>/subagents/agent-<id>.jsonl` (its `.meta.json` sidecar carries
/// no usage).
const TRANSCRIPTS: [&str; 2] = ["projects/*/*.jsonl", "projects/*/*/subagents/*.jsonl"];

impl Guest for Claude {
    type Tally = drover_kit::usage::ChunkedTally<usage::Parsers>;

    fn describe() -> Description {
        Description {
            name: "claude".to_string(),
            adapter_version: env!("CARGO_PKG_VERSION").to_string(),
            wit_version: drover_kit::WIT_VERSION.to_string(),
            capabilities: vec![
                Capability::Prompt,
                Capability::Commands,
                Capability::Headless,
                Capability::HookConfig,
                Capability::HookPayloads,
                Capability::Transcripts,
                Capability::Usage,
                Capability::Faults,
                Capability::Screen,
            ],
            dialects: vec!["claude-settings-json".to_string()],
            usage_parsers: vec![UsageParser {
                name: PARSER.to_string(),
                needles: vec!["\"usage\"".to_string()],
            }],
            location_env: vec!["CLAUDE_CONFIG_DIR".to_string()],
            limitations: vec![
                "an interactive pane cannot tell done from idle; the Stop hook can".to_string(),
            ],
        }
    }

    fn render_prompt(profile: Profile, text: String) -> Result<String, AdapterError> {
        prompt::render(&profile.prompt_template, &text)
    }

    fn interactive_command(
        profile: Profile,
        request: LaunchRequest,
    ) -> Result<Command, AdapterError> {
        commands::interactive(&profile, &request)
    }

    fn headless_command(profile: Profile, request: LaunchRequest) -> Result<Command, AdapterError> {
        commands::headless(&profile, &request)
    }

    fn parse_turn(_profile: Profile, output: TurnOutput) -> Result<TurnResult, AdapterError> {
        Ok(turn::parse(&output))
    }

    fn install_hooks(existing: String, request: HookInstall) -> Result<HookEdit, AdapterError> {
        hookcfg::install(&existing, &request)
    }

    fn remove_hooks(existing: String, request: HookInstall) -> Result<HookEdit, AdapterError> {
        hookcfg::remove(&existing, &request)
    }

    fn detect_hooks(existing: String, request: HookInstall) -> Result<HookStatus, AdapterError> {
        hookcfg::detect(&existing, &request)
    }

    fn parse_hook(
        profile: Profile,
        native_event: String,
        payload: Vec<u8>,
    ) -> Result<HookEvent, AdapterError> {
        hooks::parse(&profile, &native_event, &payload)
    }

    fn transcript_locations(_profile: Profile, context: LocationContext) -> Vec<TranscriptGlob> {
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
            // CLAUDE_CONFIG_DIR may list several directories separated by commas.
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

    fn classify_fault(profile: Profile, lines: Vec<String>) -> Option<Fault> {
        drover_kit::faults::classify(faults::RULES, &profile.env_fault_patterns, &lines)
    }

    fn read_screen(_profile: Profile, screen: Screen) -> ScreenReading {
        drover_kit::screen::read(screen::RULES, &screen)
    }
}

#[cfg(target_arch = "wasm32")]
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
