//! drover adapter for Google Gemini CLI.
//!
//! Facts it encodes come from Gemini CLI 0.61.0 driven offline (see
//! `docs/adapters/gemini.md`): `-p --output-format json` prints one
//! pretty-printed result object, errors go to stderr ending with
//! `An unexpected critical error occurred:[object Object]`, hooks live in
//! `.gemini/settings.json`, chats in
//! `~/.gemini/tmp/<project>/chats/session-*.jsonl`.

mod commands;
mod faults;
mod hooks;
#[cfg(test)]
mod real;
mod screen;
mod turn;
pub mod usage;

#[cfg(test)]
mod robustness;

use drover_kit::faults::FaultRule;
use drover_kit::screen::ScreenRule;
use drover_kit::usage::RowParser;
use drover_kit::{
    Adapter, AdapterError, CLI_AND_ACP_CAPABILITIES, Command, GlobBase, HookEditor, HookEvent,
    LaunchRequest, LocationContext, Metadata, ParserSpec, Profile, TranscriptGlob, TurnOutput,
    TurnResult, hookcfg, prompt,
};

pub struct Gemini;

/// The usage parser name profiles use for Gemini chat recordings.
pub const PARSER: &str = "gemini-chat";

/// The environment variable that replaces the home directory Gemini CLI
/// puts `.gemini/` under.
const HOME_ENV: &str = "GEMINI_CLI_HOME";

impl Adapter for Gemini {
    const METADATA: Metadata = Metadata {
        capabilities: CLI_AND_ACP_CAPABILITIES,
        dialects: &["gemini-settings-json"],
        // No needles: legacy `session-*.json` chats are one pretty-printed
        // document whose lines carry no marker, so every line must arrive.
        usage_parsers: &[ParserSpec {
            name: PARSER,
            needles: &[],
        }],
        location_env: &[HOME_ENV],
        limitations: &[
            "an interactive pane cannot tell done from idle; the AfterAgent hook can",
            "no hook fires when a turn fails: failures are seen only on the pane or in a headless turn's stderr",
            "while the CLI retries a failing API call the pane shows only a spinner, so it reads as working",
            "subagent hook events are not marked: Gemini payloads carry no subagent field",
        ],
        ..Metadata::new("gemini", env!("CARGO_PKG_VERSION"))
    };
    const FAULT_RULES: &'static [FaultRule] = faults::RULES;
    const SCREEN_RULES: &'static [ScreenRule] = screen::RULES;
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
        commands::acp(profile, request)
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
        let root = context
            .env
            .iter()
            .find(|(k, v)| k == HOME_ENV && !v.is_empty())
            .map(|(_, v)| v.trim_end_matches('/').to_string());
        let (base, prefix) = match root {
            Some(dir) => (GlobBase::Absolute, format!("{dir}/.gemini/tmp")),
            None => (GlobBase::Home, ".gemini/tmp".to_string()),
        };
        let glob = |pattern: &str, format: &str| TranscriptGlob {
            base,
            pattern: format!("{prefix}/{pattern}"),
            format: format.to_string(),
            parser: PARSER.to_string(),
        };
        vec![
            glob("*/chats/session-*.jsonl", "jsonl"),
            // Subagent chats sit in a folder named after the parent session.
            glob("*/chats/*/*.jsonl", "jsonl"),
            // Chats written before Gemini CLI moved to JSONL (April 2026).
            glob("*/chats/session-*.json", "json"),
        ]
    }

    fn usage_parser(name: &str) -> Option<Box<dyn RowParser>> {
        usage::parser(name)
    }
}

// Exported by `component/`, so that the generic adapter can link this
// library too (one component cannot export the world twice).

#[cfg(test)]
mod tests_support {
    use drover_kit::Profile;
    use drover_kit::testing::ProfileParts;

    /// The built-in gemini profile, as the engine passes it.
    pub fn profile() -> Profile {
        Profile::new("gemini", "gemini", "gemini-settings-json", "gemini-chat")
            .launch("-i")
            .bypass("--approval-mode=yolo")
            .hooks("SessionStart AfterAgent=Stop SessionEnd Notification PreCompress=PreCompact")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::{AdapterError, HookInstall};

    fn context(env: &[(&str, &str)]) -> LocationContext {
        drover_kit::testing::location_context("/work", env)
    }

    #[test]
    fn describe_lists_what_is_implemented() {
        let d = Gemini::describe();
        assert_eq!(d.name, "gemini");
        assert_eq!(d.capabilities.len(), 10);
        assert!(d.capabilities.contains(&drover_kit::Capability::Acp));
        assert_eq!(d.dialects, ["gemini-settings-json"]);
        assert_eq!(d.usage_parsers.len(), 1);
        assert_eq!(d.usage_parsers[0].name, "gemini-chat");
        assert_eq!(d.location_env, ["GEMINI_CLI_HOME"]);
        assert!(!d.limitations.is_empty());
    }

    #[test]
    fn transcripts_live_under_the_home_or_gemini_cli_home() {
        let globs = Gemini::transcript_locations(&profile(), &context(&[]));
        let patterns: Vec<(GlobBase, &str, &str)> = globs
            .iter()
            .map(|g| (g.base, g.pattern.as_str(), g.format.as_str()))
            .collect();
        assert_eq!(
            patterns,
            [
                (
                    GlobBase::Home,
                    ".gemini/tmp/*/chats/session-*.jsonl",
                    "jsonl"
                ),
                (GlobBase::Home, ".gemini/tmp/*/chats/*/*.jsonl", "jsonl"),
                (GlobBase::Home, ".gemini/tmp/*/chats/session-*.json", "json"),
            ]
        );
        assert!(globs.iter().all(|g| g.parser == "gemini-chat"));
        let moved =
            Gemini::transcript_locations(&profile(), &context(&[("GEMINI_CLI_HOME", "/srv/g/")]));
        assert_eq!(moved[0].base, GlobBase::Absolute);
        assert_eq!(
            moved[0].pattern,
            "/srv/g/.gemini/tmp/*/chats/session-*.jsonl"
        );
        let empty = Gemini::transcript_locations(&profile(), &context(&[("GEMINI_CLI_HOME", "")]));
        assert_eq!(empty[0].base, GlobBase::Home);
    }

    #[test]
    fn hook_config_goes_through_the_gemini_dialect() {
        let request = HookInstall {
            dialect: "gemini-settings-json".to_string(),
            relay_command: "/opt/drover hook --cli gemini".to_string(),
            events: profile().hook_events,
            marker: "drover hook".to_string(),
        };
        let user = include_str!("../fixtures/settings.user.json");
        let installed = Gemini::install_hooks(user, &request).expect("installs");
        assert!(installed.changed);
        let value: serde_json::Value = serde_json::from_str(&installed.text).expect("json");
        // The user's own recorder hook and settings stay, drover's entry follows it.
        assert_eq!(value["security"]["auth"]["selectedType"], "gemini-api-key");
        assert_eq!(
            value["hooks"]["AfterAgent"][0]["hooks"][0]["name"],
            "rec-AfterAgent"
        );
        assert_eq!(value["hooks"]["AfterAgent"][1]["matcher"], "");
        assert_eq!(
            value["hooks"]["AfterAgent"][1]["hooks"][0]["command"],
            "/opt/drover hook --cli gemini AfterAgent"
        );
        assert_eq!(
            value["hooks"]["PreCompress"][0]["hooks"][0]["timeout"],
            60000
        );
        let status = Gemini::detect_hooks(&installed.text, &request).expect("detects");
        assert_eq!(status.registered.len(), 5);
        assert!(status.missing.is_empty());
        let again = Gemini::install_hooks(&installed.text, &request).expect("idempotent");
        assert!(!again.changed);
        let removed = Gemini::remove_hooks(&installed.text, &request).expect("removes");
        let back: serde_json::Value = serde_json::from_str(&removed.text).expect("json");
        let original: serde_json::Value = serde_json::from_str(user).expect("json");
        assert_eq!(back, original);
        assert!(matches!(
            Gemini::install_hooks("{\"hooks\": []}", &request),
            Err(AdapterError::InvalidInput(_))
        ));
    }
}
