//! drover adapter for opencode.
//!
//! Facts it encodes come from opencode 1.18.33 driven offline (see
//! `docs/adapters/opencode.md`): `opencode run --format json` prints JSONL
//! events, there are no command hooks (a JS plugin in `.opencode/plugin/`
//! receives the bus events instead), and messages with their token counts
//! live in the SQLite database `~/.local/share/opencode/opencode.db`.

mod commands;
mod faults;
mod hooks;
mod plugin;
#[cfg(test)]
mod real;
mod screen;
mod turn;
pub mod usage;

use drover_kit::faults::FaultRule;
use drover_kit::screen::ScreenRule;
use drover_kit::usage::RowParser;
use drover_kit::{
    Adapter, AdapterError, CLI_AND_ACP_CAPABILITIES, Command, GlobBase, HookEditor, HookEvent,
    LaunchRequest, LocationContext, Metadata, ParserSpec, Profile, TranscriptGlob, TurnOutput,
    TurnResult, prompt,
};

pub struct Opencode;

impl Adapter for Opencode {
    const METADATA: Metadata = Metadata {
        capabilities: CLI_AND_ACP_CAPABILITIES,
        dialects: &[plugin::DIALECT],
        usage_parsers: &[
            ParserSpec {
                name: usage::DB,
                needles: usage::DB_NEEDLES,
            },
            ParserSpec {
                name: usage::JSON,
                needles: &["\"step_finish\""],
            },
        ],
        location_env: &["XDG_DATA_HOME"],
        limitations: &[
            "an interactive pane cannot tell done from idle; the plugin's session.idle can",
            "opencode has no session-end event; process or window exit has to stand for it",
            "relayed bus events carry no transcript path and no last assistant message",
            "a conversation cannot be started with a preset id: opencode picks its own ses_… ids",
            "headless usage has no model name: run's step events do not carry it",
        ],
        ..Metadata::new("opencode", env!("CARGO_PKG_VERSION"))
    };
    const FAULT_RULES: &'static [FaultRule] = faults::RULES;
    const SCREEN_RULES: &'static [ScreenRule] = screen::RULES;
    const HOOK_EDITOR: Option<HookEditor> = Some(plugin::EDITOR);

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
        // XDG_DATA_HOME counts only when absolute (the XDG spec ignores a
        // relative value, and so does opencode's xdg-basedir).
        let data_home = context
            .env
            .iter()
            .find(|(k, v)| k == "XDG_DATA_HOME" && v.starts_with('/'))
            .map(|(_, v)| v.trim_end_matches('/').to_string());
        let (base, pattern) = match data_home {
            Some(dir) => (GlobBase::Absolute, format!("{dir}/opencode/opencode.db")),
            None => (
                GlobBase::Home,
                ".local/share/opencode/opencode.db".to_string(),
            ),
        };
        vec![TranscriptGlob {
            base,
            pattern,
            format: "sqlite".to_string(),
            parser: usage::DB.to_string(),
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

    /// The built-in opencode profile, as the engine passes it.
    pub fn profile() -> Profile {
        Profile::new("opencode", "opencode", "opencode-plugin", "opencode-db")
            .template("Use the {skill} skill now: {args}")
            .bypass("--auto")
            .hooks("session.idle=Stop session.error=StopFailure session.created=SessionStart permission.updated=PermissionRequest permission.asked=PermissionRequest")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::CanonicalEvent;
    use drover_kit::HookInstall;

    fn context(env: &[(&str, &str)]) -> LocationContext {
        drover_kit::testing::location_context("/home/p", env)
    }

    #[test]
    fn the_database_follows_xdg_data_home() {
        let globs = |env: &[(&str, &str)]| {
            Opencode::transcript_locations(&tests_support::profile(), &context(env))
                .into_iter()
                .map(|g| (g.base, g.pattern, g.format, g.parser))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            globs(&[]),
            [(
                GlobBase::Home,
                ".local/share/opencode/opencode.db".to_string(),
                "sqlite".to_string(),
                "opencode-db".to_string()
            )]
        );
        assert_eq!(
            globs(&[("XDG_DATA_HOME", "/tmp/t/home/.local/share/")])[0].1,
            "/tmp/t/home/.local/share/opencode/opencode.db"
        );
        assert_eq!(globs(&[("XDG_DATA_HOME", "/x")])[0].0, GlobBase::Absolute);
        assert_eq!(
            globs(&[("XDG_DATA_HOME", "relative/dir")])[0].0,
            GlobBase::Home
        );
    }

    #[test]
    fn describe_lists_both_parsers_and_the_plugin_dialect() {
        let d = Opencode::describe();
        assert_eq!(d.name, "opencode");
        assert_eq!(d.dialects, ["opencode-plugin"]);
        let names: Vec<_> = d.usage_parsers.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["opencode-db", "opencode-json"]);
        assert_eq!(d.location_env, ["XDG_DATA_HOME"]);
    }

    #[test]
    fn installed_plugin_relays_what_parse_hook_reads() {
        let request = HookInstall {
            dialect: "opencode-plugin".to_string(),
            relay_command: "/opt/drover hook --cli opencode".to_string(),
            events: tests_support::profile().hook_events,
            marker: "drover hook".to_string(),
        };
        let installed = Opencode::install_hooks("", &request).expect("installs");
        let status = Opencode::detect_hooks(&installed.text, &request).expect("detects");
        assert_eq!(status.registered.len(), 5);
        // The payload shape the plugin builds, for the event it relays.
        assert!(
            installed
                .text
                .contains("{ type: event.type, properties, session_id: sessionID, cwd }")
        );
        let payload = br#"{"type":"session.idle","properties":{"sessionID":"ses_1"},"session_id":"ses_1","cwd":"/w"}"#;
        let event =
            Opencode::parse_hook(&tests_support::profile(), "session.idle", payload.as_ref())
                .expect("parses");
        assert_eq!(
            (event.kind, event.session_id.as_deref()),
            (CanonicalEvent::Stop, Some("ses_1"))
        );
        assert_eq!(
            Opencode::remove_hooks(&installed.text, &request)
                .expect("removes")
                .text,
            ""
        );
    }

    /// What these parsers look for, spliced into hostile input (the kit adds
    /// JSON's punctuation and a few tokens that break text).
    const TOKENS: &[&str] = &[
        "\"tokens\":",
        "\"role\":\"assistant\"",
        "\"data\":",
        "\"id\":",
        "\"cache\":{\"read\":",
        "\"time\":{\"created\":",
        "\"type\":\"step_finish\"",
        "\"part\":",
        "\"properties\":",
        "\"sessionID\":",
        "\"info\":{\"parentID\":",
        "\"error\":",
        "┃",
        "△ Permission required",
        "esc interrupt",
        "Ask anything",
        "Error: ",
    ];

    fn exercise(bytes: &[u8]) {
        let profile = tests_support::profile();
        let natives = [
            "session.idle",
            "session.error",
            "session.created",
            "permission.asked",
            "x",
        ];
        drover_kit::testing::exercise_reads::<Opencode>(
            &profile,
            &natives,
            &[usage::DB, usage::JSON],
            "opencode.db",
            0,
            bytes,
        );
        let text = String::from_utf8_lossy(bytes);
        let request = HookInstall {
            dialect: "opencode-plugin".to_string(),
            relay_command: "drover hook".to_string(),
            events: profile.hook_events.clone(),
            marker: "drover hook".to_string(),
        };
        let _ = Opencode::detect_hooks(text.as_ref(), &request);
        let _ = Opencode::remove_hooks(text.as_ref(), &request);
    }

    #[test]
    fn hostile_input_never_panics() {
        let fixtures: [&[u8]; 6] = [
            include_bytes!("../fixtures/db-messages.jsonl"),
            include_bytes!("../fixtures/run-success.jsonl"),
            include_bytes!("../fixtures/hook-session-created.json"),
            include_bytes!("../fixtures/screen-permission.txt"),
            include_bytes!("../fixtures/screen-working.txt"),
            include_bytes!("../fixtures/plugin.record.js"),
        ];
        drover_kit::testing::survive_hostile_input(
            0x0dd5_eed5_1234_5678,
            TOKENS,
            &fixtures,
            exercise,
        );
    }
}
