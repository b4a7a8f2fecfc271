//! drover adapter for GitHub Copilot CLI.
//!
//! Checked against Copilot CLI 1.0.102 driven offline in its
//! bring-your-own-provider mode (tests/fixtures/real/copilot, `real.rs`).
//! Older facts come from bmad-loop's copilot profile (verified against
//! 1.0.63), Copilot's public hooks and programmatic references, its changelog
//! up to 1.0.78, the public `github/copilot-sdk` event schema, and a
//! third-party capture of `copilot -p --output-format json` (1.0.36).
//! `docs/adapters/copilot.md` says which fact came from where.

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
    Adapter, AdapterError, CLI_CAPABILITIES, Command, Fault, GlobBase, HookEditor, HookEvent,
    LaunchRequest, LocationContext, Metadata, ParserSpec, Profile, TranscriptGlob, TurnOutput,
    TurnResult, hookcfg, prompt,
};

pub struct Copilot;

/// The usage parser name profiles use for `events.jsonl` session logs.
pub const PARSER: &str = "copilot-events";

/// The hook-config dialect Copilot reads from `.github/copilot/settings.json`.
pub const DIALECT: &str = "copilot-settings-json";

impl Adapter for Copilot {
    const METADATA: Metadata = Metadata {
        capabilities: CLI_CAPABILITIES,
        dialects: &[DIALECT],
        usage_parsers: &[ParserSpec {
            name: PARSER,
            needles: &["\"modelMetrics\"", "\"session.usage_record\""],
        }],
        location_env: &["COPILOT_HOME"],
        limitations: &[
            "an interactive pane cannot tell done from idle; agentStop fires once per response turn, not once per task",
            "headless `--output-format json` output carries no token counts: turn usage is none and comes from events.jsonl (per-call session.usage_record lines, 1.0.102; older versions only write session.shutdown totals, about a second after agentStop)",
            "a subagent's agentStop is recognised only by its empty transcriptPath or toolu_ session id",
            "session.shutdown snapshots are read as per-model cumulative counters; a later lifecycle whose counters all grow is counted as a continuation",
        ],
        ..Metadata::new("copilot", env!("CARGO_PKG_VERSION"))
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

/// `~/.copilot/session-state/<session>/events.jsonl`; `COPILOT_HOME` replaces
/// `~/.copilot` (programmatic reference; `--config-dir` is its deprecated
/// spelling and cannot be seen from here).
fn transcript_globs(context: &LocationContext) -> Vec<TranscriptGlob> {
    let glob = |base: GlobBase, pattern: String| TranscriptGlob {
        base,
        pattern,
        format: "jsonl".to_string(),
        parser: PARSER.to_string(),
    };
    let home_dir = context
        .env
        .iter()
        .find(|(k, v)| k == "COPILOT_HOME" && !v.trim().is_empty())
        .map(|(_, v)| v.trim().trim_end_matches('/').to_string());
    match home_dir {
        Some(dir) => vec![glob(
            GlobBase::Absolute,
            format!("{dir}/session-state/*/events.jsonl"),
        )],
        None => vec![glob(
            GlobBase::Home,
            ".copilot/session-state/*/events.jsonl".to_string(),
        )],
    }
}

// Exported by `component/`, so that the generic adapter can link this
// library too (one component cannot export the world twice).

#[cfg(test)]
mod tests_support {
    use drover_kit::Profile;
    use drover_kit::testing::ProfileParts;

    /// The built-in copilot profile (profiles/copilot.toml), as the engine
    /// passes it.
    pub fn profile() -> Profile {
        Profile::new("copilot", "copilot", "copilot-settings-json", "copilot-events")
            .template("LOAD the FULL .agents/skills/{skill}/SKILL.md, read its entire contents and follow its directions exactly, using subagents as needed: {args}")
            .launch("-i")
            .bypass("--allow-all-tools --allow-all-paths")
            .hooks("agentStop=Stop sessionStart=SessionStart sessionEnd=SessionEnd errorOccurred=StopFailure notification=Notification")
            .turn("--no-ask-user")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::screen::rows_of;
    use drover_kit::{Capability, LocationContext, Screen};

    #[test]
    fn describe_lists_what_is_implemented() {
        let d = Copilot::describe();
        assert_eq!(d.name, "copilot");
        assert_eq!(d.dialects, ["copilot-settings-json"]);
        assert_eq!(d.usage_parsers[0].name, "copilot-events");
        assert!(d.capabilities.contains(&Capability::Usage));
        assert_eq!(d.location_env, ["COPILOT_HOME"]);
    }

    #[test]
    fn transcripts_move_with_copilot_home() {
        let mut ctx = LocationContext {
            home: "/home/u".to_string(),
            cwd: "/w".to_string(),
            env: vec![],
        };
        let default = transcript_globs(&ctx);
        assert_eq!(default[0].base, GlobBase::Home);
        assert_eq!(default[0].pattern, ".copilot/session-state/*/events.jsonl");
        ctx.env
            .push(("COPILOT_HOME".to_string(), "/srv/copilot/".to_string()));
        let moved = transcript_globs(&ctx);
        assert_eq!(moved[0].base, GlobBase::Absolute);
        assert_eq!(
            moved[0].pattern,
            "/srv/copilot/session-state/*/events.jsonl"
        );
        assert_eq!(
            (moved[0].format.as_str(), moved[0].parser.as_str()),
            ("jsonl", PARSER)
        );
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let fixtures: [&[u8]; 5] = [
            include_bytes!("../fixtures/headless-pong.jsonl"),
            include_bytes!("../fixtures/events.jsonl"),
            include_bytes!("../fixtures/events-cumulative.jsonl"),
            include_bytes!("../fixtures/hook-agentstop.json"),
            include_bytes!("../fixtures/screen-permission.txt"),
        ];
        let inputs = drover_kit::testing::noise_and_prefixes(1, &fixtures);
        let profile = tests_support::profile();
        for bytes in &inputs {
            for native in [
                "agentStop",
                "errorOccurred",
                "notification",
                "sessionEnd",
                "weird",
            ] {
                let _ = hooks::parse(&profile, native, bytes);
            }
            let tally = drover_kit::usage::ChunkedTally::of::<Copilot>(PARSER);
            tally.begin_file("/h/.copilot/session-state/s/events.jsonl");
            for chunk in bytes.chunks(61) {
                let _ = tally.feed(chunk);
            }
            let _ = tally.finish();
            let text = String::from_utf8_lossy(bytes);
            let _ = drover_kit::screen::read(
                screen::RULES,
                &Screen {
                    rows: rows_of(&text),
                    title: text.to_string(),
                },
            );
            let _ = turn::parse(&drover_kit::testing::turn_output(&text, "", Some(1)));
        }
    }
}
