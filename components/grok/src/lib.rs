//! drover adapter for Grok CLI (xAI's "Grok Build", `grok`).
//!
//! Facts it encodes come from Grok 0.2.111 driven offline (see
//! `docs/adapters/grok.md`): `-p --output-format json` prints one JSON object
//! with the reply, the session id and the prompt's usage; hooks are
//! Claude-style files under `.grok/hooks/` with camelCase payloads; sessions
//! live in `~/.grok/sessions/<url-encoded cwd>/<session>/`, where
//! `updates.jsonl` carries one usage line per turn; `~/.grok/logs/unified.jsonl`
//! logs every model call's tokens.

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
    Adapter, AdapterError, CLI_AND_ACP_CAPABILITIES, Command, Fault, HookEditor, HookEvent,
    LaunchRequest, LocationContext, Metadata, ParserSpec, Profile, TranscriptGlob, TurnOutput,
    TurnResult, hookcfg, prompt,
};

pub struct Grok;

pub const DIALECT: &str = "grok-hooks-json";

/// `GROK_HOME` moves the whole `~/.grok`.
const LOCATION_ENV: &[&str] = &["GROK_HOME"];

impl Adapter for Grok {
    const METADATA: Metadata = Metadata {
        capabilities: CLI_AND_ACP_CAPABILITIES,
        dialects: &[DIALECT],
        usage_parsers: &[
            ParserSpec {
                name: usage::UPDATES_PARSER,
                needles: &["\"turn_completed\""],
            },
            ParserSpec {
                name: usage::LOG_PARSER,
                needles: &["\"shell.turn.inference_done\""],
            },
        ],
        location_env: LOCATION_ENV,
        limitations: &[
            "an interactive pane cannot tell done from idle; the Stop hook can",
            "a headless turn against an unreachable API prints nothing and never gives up; only the engine's deadline ends it",
            "grok-updates (the session files) misses the headless turns whose process exited before writing its usage line (one in four, measured); grok-log (~/.grok/logs/unified.jsonl) has every call but no model names",
            "transcript-locations offers the files of the profile's usage parser only, so the session files and the log are never added together",
            "the session-title side call on each session's first prompt is in no file grok writes",
        ],
        ..Metadata::new("grok", env!("CARGO_PKG_VERSION"))
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
        Ok(commands::acp(profile, request))
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
        let (base, prefix) = drover_kit::locations::data_dir(context, &["GROK_HOME"], ".grok/");
        // The two parsers describe the same calls: offer one set of files.
        let (pattern, parser) = if profile.usage_parser == usage::LOG_PARSER {
            (format!("{prefix}logs/unified*.jsonl"), usage::LOG_PARSER)
        } else {
            (
                format!("{prefix}sessions/*/*/updates.jsonl"),
                usage::UPDATES_PARSER,
            )
        };
        vec![TranscriptGlob {
            base,
            pattern,
            format: "jsonl".to_string(),
            parser: parser.to_string(),
        }]
    }

    fn classify_fault(profile: &Profile, lines: &[String]) -> Option<Fault> {
        let lines = faults::sentences(lines);
        drover_kit::faults::classify_at(
            faults::RULES,
            &profile.env_fault_patterns,
            &lines,
            &drover_kit::resets::Clock::of(profile, None),
        )
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

    /// The built-in grok profile, as the engine passes it.
    pub fn profile() -> Profile {
        Profile::new("grok", "grok", crate::DIALECT, crate::usage::UPDATES_PARSER)
            .bypass("--always-approve --trust")
            .hooks("SessionStart Stop StopFailure SubagentStop SessionEnd PreCompact Notification")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::GlobBase;
    use drover_kit::HookInstall;

    fn globs(env: &[(&str, &str)], parser: &str) -> Vec<(GlobBase, String, String)> {
        let mut profile = tests_support::profile();
        profile.usage_parser = parser.to_string();
        let context = LocationContext {
            home: "/h".to_string(),
            cwd: "/w".to_string(),
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        Grok::transcript_locations(&profile, &context)
            .into_iter()
            .map(|g| (g.base, g.pattern, g.parser))
            .collect()
    }

    #[test]
    fn transcripts_follow_grok_home_and_the_profiles_parser() {
        assert_eq!(
            globs(&[], usage::UPDATES_PARSER),
            [(
                GlobBase::Home,
                ".grok/sessions/*/*/updates.jsonl".to_string(),
                "grok-updates".to_string()
            )]
        );
        assert_eq!(
            globs(&[], usage::LOG_PARSER),
            [(
                GlobBase::Home,
                ".grok/logs/unified*.jsonl".to_string(),
                "grok-log".to_string()
            )]
        );
        assert_eq!(
            globs(&[("GROK_HOME", "/srv/g/")], usage::UPDATES_PARSER)[0].1,
            "/srv/g/sessions/*/*/updates.jsonl"
        );
        assert_eq!(
            globs(&[("GROK_HOME", "~/g")], usage::UPDATES_PARSER)[0].1,
            "g/sessions/*/*/updates.jsonl"
        );
        assert_eq!(
            globs(&[("GROK_HOME", "./g")], usage::UPDATES_PARSER)[0].0,
            GlobBase::Cwd
        );
        assert_eq!(
            globs(&[("GROK_HOME", " ")], usage::UPDATES_PARSER),
            globs(&[], usage::UPDATES_PARSER)
        );
    }

    #[test]
    fn hook_config_is_a_file_of_drovers_own() {
        let request = HookInstall {
            dialect: DIALECT.to_string(),
            relay_command: "/opt/drover hook --cli grok".to_string(),
            events: tests_support::profile().hook_events,
            marker: "drover hook".to_string(),
        };
        let installed = Grok::install_hooks("", &request).expect("installs");
        let doc: serde_json::Value = serde_json::from_str(&installed.text).expect("json");
        // Grok's shape: no matcher (grok warns about one on Stop).
        assert_eq!(
            doc["hooks"]["Stop"],
            serde_json::json!([{"hooks": [{"type": "command", "command": "/opt/drover hook --cli grok Stop"}]}])
        );
        let status = Grok::detect_hooks(&installed.text, &request).expect("detects");
        assert!(status.missing.is_empty(), "{status:?}");
        let removed = Grok::remove_hooks(&installed.text, &request).expect("removes");
        let left: serde_json::Value = serde_json::from_str(&removed.text).unwrap_or_default();
        assert!(
            left["hooks"].as_object().is_none_or(|h| h.is_empty()),
            "{left}"
        );
    }
}
