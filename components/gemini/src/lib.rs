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

use drover_kit::{
    AdapterError, Capability, Command, Description, Fault, GlobBase, Guest, HookEdit, HookEvent,
    HookInstall, HookStatus, LaunchRequest, LocationContext, Profile, Screen, ScreenReading,
    TranscriptGlob, TurnOutput, TurnResult, UsageParser, hookcfg, prompt,
};

pub struct Gemini;

/// The usage parser name profiles use for Gemini chat recordings.
pub const PARSER: &str = "gemini-chat";

/// The environment variable that replaces the home directory Gemini CLI
/// puts `.gemini/` under.
const HOME_ENV: &str = "GEMINI_CLI_HOME";

impl Guest for Gemini {
    type Tally = drover_kit::usage::ChunkedTally<usage::Parsers>;

    fn describe() -> Description {
        Description {
            name: "gemini".to_string(),
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
            dialects: vec!["gemini-settings-json".to_string()],
            // No needles: legacy `session-*.json` chats are one pretty-printed
            // document whose lines carry no marker, so every line must arrive.
            usage_parsers: vec![UsageParser {
                name: PARSER.to_string(),
                needles: Vec::new(),
            }],
            location_env: vec![HOME_ENV.to_string()],
            limitations: vec![
                "an interactive pane cannot tell done from idle; the AfterAgent hook can".to_string(),
                "no hook fires when a turn fails: failures are seen only on the pane or in a headless turn's stderr".to_string(),
                "while the CLI retries a failing API call the pane shows only a spinner, so it reads as working".to_string(),
                "subagent hook events are not marked: Gemini payloads carry no subagent field".to_string(),
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

    fn classify_fault(profile: Profile, lines: Vec<String>) -> Option<Fault> {
        drover_kit::faults::classify(faults::RULES, &profile.env_fault_patterns, &lines)
    }

    fn read_screen(_profile: Profile, screen: Screen) -> ScreenReading {
        drover_kit::screen::read(screen::RULES, &screen)
    }
}

#[cfg(target_arch = "wasm32")]
drover_kit::export!(Gemini);

#[cfg(test)]
mod tests_support {
    use drover_kit::Profile;

    /// The built-in gemini profile, as the engine passes it.
    pub fn profile() -> Profile {
        Profile {
            name: "gemini".to_string(),
            binary: "gemini".to_string(),
            prompt_template: "{prompt}".to_string(),
            launch_args: vec!["-i".to_string()],
            bypass_args: vec!["--approval-mode=yolo".to_string()],
            model_flag: "--model".to_string(),
            dialect: "gemini-settings-json".to_string(),
            hook_events: [
                ("SessionStart", "SessionStart"),
                ("AfterAgent", "Stop"),
                ("SessionEnd", "SessionEnd"),
                ("Notification", "Notification"),
                ("PreCompress", "PreCompact"),
            ]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
            usage_parser: "gemini-chat".to_string(),
            env_fault_patterns: vec![],
            turn_args: vec![],
            settings: vec![],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;

    fn context(env: &[(&str, &str)]) -> LocationContext {
        LocationContext {
            home: "/home/u".to_string(),
            cwd: "/work".to_string(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn describe_lists_what_is_implemented() {
        let d = Gemini::describe();
        assert_eq!(d.name, "gemini");
        assert_eq!(d.capabilities.len(), 9);
        assert_eq!(d.dialects, ["gemini-settings-json"]);
        assert_eq!(d.usage_parsers.len(), 1);
        assert_eq!(d.usage_parsers[0].name, "gemini-chat");
        assert_eq!(d.location_env, ["GEMINI_CLI_HOME"]);
        assert!(!d.limitations.is_empty());
    }

    #[test]
    fn transcripts_live_under_the_home_or_gemini_cli_home() {
        let globs = Gemini::transcript_locations(profile(), context(&[]));
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
            Gemini::transcript_locations(profile(), context(&[("GEMINI_CLI_HOME", "/srv/g/")]));
        assert_eq!(moved[0].base, GlobBase::Absolute);
        assert_eq!(
            moved[0].pattern,
            "/srv/g/.gemini/tmp/*/chats/session-*.jsonl"
        );
        let empty = Gemini::transcript_locations(profile(), context(&[("GEMINI_CLI_HOME", "")]));
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
        let installed = Gemini::install_hooks(user.to_string(), request.clone()).expect("installs");
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
        let status =
            Gemini::detect_hooks(installed.text.clone(), request.clone()).expect("detects");
        assert_eq!(status.registered.len(), 5);
        assert!(status.missing.is_empty());
        let again =
            Gemini::install_hooks(installed.text.clone(), request.clone()).expect("idempotent");
        assert!(!again.changed);
        let removed = Gemini::remove_hooks(installed.text, request.clone()).expect("removes");
        let back: serde_json::Value = serde_json::from_str(&removed.text).expect("json");
        let original: serde_json::Value = serde_json::from_str(user).expect("json");
        assert_eq!(back, original);
        assert!(matches!(
            Gemini::install_hooks("{\"hooks\": []}".to_string(), request),
            Err(AdapterError::InvalidInput(_))
        ));
    }
}
