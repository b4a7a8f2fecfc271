//! drover adapter for Qwen Code.
//!
//! Facts it encodes come from Qwen Code 0.24.4 driven offline (see
//! `docs/adapters/qwen.md`): `-p --output-format json` prints a JSON array of
//! Claude-SDK-like messages ending in a `result`, hooks are Claude-style in
//! `.qwen/settings.json`, transcripts live in
//! `~/.qwen/projects/<slug>/chats/<session>.jsonl` with Gemini-style
//! `usageMetadata`.

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
    Adapter, AdapterError, CLI_AND_ACP_CAPABILITIES, Command, HookEditor, HookEvent, LaunchRequest,
    LocationContext, Metadata, ParserSpec, Profile, TranscriptGlob, TurnOutput, TurnResult,
    acp_launch, hookcfg, prompt,
};

pub struct Qwen;

/// The usage parser name profiles use for Qwen chat transcripts.
pub const PARSER: &str = "qwen-chat";

/// Environment variables that move Qwen's data, strongest first:
/// `QWEN_RUNTIME_DIR` moves runtime output (the `projects/` tree),
/// `QWEN_HOME` moves the whole `~/.qwen`.
const LOCATION_ENV: &[&str] = &["QWEN_RUNTIME_DIR", "QWEN_HOME"];

impl Adapter for Qwen {
    const METADATA: Metadata = Metadata {
        capabilities: CLI_AND_ACP_CAPABILITIES,
        dialects: &["claude-settings-json"],
        usage_parsers: &[
            ParserSpec {
                name: PARSER,
                needles: &["\"usageMetadata\""],
            },
            ParserSpec {
                name: usage::RECORD_PARSER,
                needles: &["\"models\""],
            },
        ],
        location_env: LOCATION_ENV,
        limitations: &[
            "an interactive pane cannot tell done from idle; the Stop hook can",
            "a headless turn against an unreachable API prints nothing and never gives up; only the engine's deadline ends it",
            "headless usage counts every API call of the process, including Qwen's managed-auto-memory-extractor; the chat transcript (qwen-chat) misses those calls, ~/.qwen/usage_record.jsonl (qwen-usage-record) has them but covers headless runs only",
            "transcript-locations offers the files of the profile's usage parser only, so the chats and usage_record.jsonl are never added together",
        ],
        ..Metadata::new("qwen", env!("CARGO_PKG_VERSION"))
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
        Ok(acp_launch(profile, request, &["--acp"]))
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

    fn transcript_locations(profile: &Profile, context: &LocationContext) -> Vec<TranscriptGlob> {
        let (base, prefix) = drover_kit::locations::data_dir(context, LOCATION_ENV, ".qwen/");
        // The two parsers describe the same calls: offer one set of files.
        let (pattern, parser) = if profile.usage_parser == usage::RECORD_PARSER {
            (format!("{prefix}usage_record.jsonl"), usage::RECORD_PARSER)
        } else {
            (format!("{prefix}projects/*/chats/*.jsonl"), PARSER)
        };
        vec![TranscriptGlob {
            base,
            pattern,
            format: "jsonl".to_string(),
            parser: parser.to_string(),
        }]
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

    /// The built-in qwen profile, as the engine passes it.
    pub fn profile() -> Profile {
        Profile::new("qwen", "qwen", "claude-settings-json", "qwen-chat")
            .bypass("--approval-mode yolo")
            .hooks("SessionStart Stop StopFailure SessionEnd Notification PermissionRequest SubagentStop PreCompact")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::GlobBase;
    use drover_kit::{CanonicalEvent, HookInstall};

    fn context(env: &[(&str, &str)]) -> LocationContext {
        drover_kit::testing::location_context("/home/p", env)
    }

    fn globs(env: &[(&str, &str)]) -> Vec<(GlobBase, String)> {
        Qwen::transcript_locations(&tests_support::profile(), &context(env))
            .into_iter()
            .map(|g| {
                assert_eq!((g.format.as_str(), g.parser.as_str()), ("jsonl", PARSER));
                (g.base, g.pattern)
            })
            .collect()
    }

    #[test]
    fn transcripts_follow_the_location_variables() {
        assert_eq!(
            globs(&[]),
            [(GlobBase::Home, ".qwen/projects/*/chats/*.jsonl".to_string())]
        );
        assert_eq!(
            globs(&[("QWEN_HOME", "/srv/qwen/")]),
            [(
                GlobBase::Absolute,
                "/srv/qwen/projects/*/chats/*.jsonl".to_string()
            )]
        );
        // The runtime dir wins over QWEN_HOME; `~/` is home-relative.
        assert_eq!(
            globs(&[("QWEN_HOME", "/srv/qwen"), ("QWEN_RUNTIME_DIR", "~/rt")]),
            [(GlobBase::Home, "rt/projects/*/chats/*.jsonl".to_string())]
        );
        assert_eq!(
            globs(&[("QWEN_HOME", "./.q")]),
            [(GlobBase::Cwd, ".q/projects/*/chats/*.jsonl".to_string())]
        );
        assert_eq!(
            globs(&[("QWEN_HOME", "~")]),
            [(GlobBase::Home, "projects/*/chats/*.jsonl".to_string())]
        );
        assert_eq!(
            globs(&[("QWEN_HOME", "/")]),
            [(GlobBase::Absolute, "/projects/*/chats/*.jsonl".to_string())]
        );
        assert_eq!(
            globs(&[("QWEN_HOME", "~/")])[0].1,
            "projects/*/chats/*.jsonl"
        );
        assert_eq!(globs(&[("QWEN_HOME", "  ")]), globs(&[]));
    }

    #[test]
    fn describe_lists_what_is_implemented() {
        let d = Qwen::describe();
        assert_eq!(d.name, "qwen");
        assert_eq!(d.capabilities.len(), 10);
        assert!(d.capabilities.contains(&drover_kit::Capability::Acp));
        assert_eq!(d.dialects, ["claude-settings-json"]);
        assert_eq!(d.usage_parsers[0].name, PARSER);
        assert_eq!(d.location_env, ["QWEN_RUNTIME_DIR", "QWEN_HOME"]);
    }

    #[test]
    fn hook_config_round_trips_through_the_kit_dialect() {
        let request = HookInstall {
            dialect: "claude-settings-json".to_string(),
            relay_command: "/opt/drover hook --cli qwen".to_string(),
            events: tests_support::profile().hook_events,
            marker: "drover hook".to_string(),
        };
        // The settings shape that worked with Qwen Code 0.24.4 (reference
        // real-cli-configs/qwen.settings.json), one user hook kept.
        let user = include_str!("../fixtures/settings.user.json");
        let installed = Qwen::install_hooks(user, &request).expect("installs");
        assert!(installed.changed);
        let value: serde_json::Value = serde_json::from_str(&installed.text).expect("json");
        assert_eq!(
            value["hooks"]["Stop"][0]["hooks"][0]["command"],
            "/usr/local/bin/notify Stop"
        );
        assert_eq!(
            value["hooks"]["Stop"][1]["hooks"][0]["command"],
            "/opt/drover hook --cli qwen Stop"
        );
        assert_eq!(value["security"]["folderTrust"]["enabled"], false);
        let status = Qwen::detect_hooks(&installed.text, &request).expect("detects");
        assert_eq!(status.registered.len(), 8);
        assert!(status.missing.is_empty());
        let again = Qwen::install_hooks(&installed.text, &request).expect("idempotent");
        assert!(!again.changed);
        let removed = Qwen::remove_hooks(&installed.text, &request).expect("removes");
        let back: serde_json::Value = serde_json::from_str(&removed.text).expect("json");
        let original: serde_json::Value = serde_json::from_str(user).expect("json");
        assert_eq!(back, original);
        // Stop in the profile maps to the canonical Stop event.
        let event = Qwen::parse_hook(&tests_support::profile(), "Stop", b"{}").expect("parses");
        assert_eq!(event.kind, CanonicalEvent::Stop);
    }

    /// What these parsers look for, spliced into hostile input (the kit adds
    /// JSON's punctuation and a few tokens that break text).
    const TOKENS: &[&str] = &[
        "\"usageMetadata\"",
        "\"type\":\"assistant\"",
        "\"uuid\":",
        "\"promptTokenCount\":",
        "\"thoughtsTokenCount\":",
        "\"session_id\":",
        "\"result\"",
        "\"stats\":{\"models\":{\"m\":",
        "╭",
        "╰",
        "│",
        "⠏",
        "◆",
        "esc to cancel",
        "[API Error: ",
        "Type your message or @path/to/file",
    ];

    fn exercise(bytes: &[u8]) {
        let profile = tests_support::profile();
        let natives = ["Stop", "Notification", "StopFailure", "Unknown"];
        drover_kit::testing::exercise_reads::<Qwen>(
            &profile,
            &natives,
            &[PARSER],
            "x.jsonl",
            1,
            bytes,
        );
    }

    #[test]
    fn hostile_input_never_panics() {
        let fixtures: [&[u8]; 6] = [
            include_bytes!("../fixtures/chat.jsonl"),
            include_bytes!("../fixtures/headless-success.json"),
            include_bytes!("../fixtures/hook-stop.json"),
            include_bytes!("../fixtures/screen-permission.txt"),
            include_bytes!("../fixtures/screen-working.txt"),
            include_bytes!("../fixtures/settings.user.json"),
        ];
        drover_kit::testing::survive_hostile_input(
            0x9e37_79b9_7f4a_7c15,
            TOKENS,
            &fixtures,
            exercise,
        );
    }
}
