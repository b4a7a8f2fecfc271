//! drover adapter for the Cursor agent CLI (`cursor-agent`, also installed
//! as `agent`).
//!
//! Cursor was not run in drover's reference measurements. The facts this
//! crate encodes come from Cursor's CLI docs (output format, parameters,
//! hooks), Cursor's changelog as quoted by integrators, and third-party
//! captures of `cursor-agent -p --output-format json` and of its screens.
//! `docs/adapters/cursor.md` says which fact came from where.

mod commands;
mod faults;
mod hookcfg;
mod hooks;
mod screen;
mod turn;
pub mod usage;

use drover_kit::faults::FaultRule;
use drover_kit::screen::ScreenRule;
use drover_kit::usage::RowParser;
use drover_kit::{
    Adapter, AdapterError, CLI_CAPABILITIES, Command, Fault, GlobBase, HookEditor, HookEvent,
    LaunchRequest, LocationContext, Metadata, ParserSpec, Profile, TranscriptGlob, TurnOutput,
    TurnResult, prompt,
};

pub struct Cursor;

/// Reads `cursor-agent --output-format json` result objects saved one per
/// line. Cursor's own transcripts carry no token counts.
pub const PARSER: &str = "cursor-json";

impl Adapter for Cursor {
    const METADATA: Metadata = Metadata {
        capabilities: CLI_CAPABILITIES,
        dialects: &[hookcfg::DIALECT],
        usage_parsers: &[ParserSpec {
            name: PARSER,
            needles: &["\"usage\""],
        }],
        limitations: &[
            "a pane is never read as idle: no idle marker of the cursor-agent TUI is known; a pane without busy or prompt evidence reads as unknown",
            "agent transcripts carry no token counts; usage comes only from headless json results (no model name, no call count)",
            "a headless run refused for workspace trust exits 0 with a plain-text notice; it reads as blocked on the trust dialog",
            "whether the cached part is inside inputTokens is undocumented; input is taken as reported",
        ],
        ..Metadata::new("cursor", env!("CARGO_PKG_VERSION"))
    };
    const FAULT_RULES: &'static [FaultRule] = faults::RULES;

    fn classify_fault(profile: &Profile, lines: &[String]) -> Option<Fault> {
        faults::classify(profile, lines)
    }
    const SCREEN_RULES: &'static [ScreenRule] = screen::RULES;
    const HOOK_EDITOR: Option<HookEditor> = Some(hookcfg::EDITOR);

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

    fn transcript_locations(_profile: &Profile, _context: &LocationContext) -> Vec<TranscriptGlob> {
        transcript_globs()
    }

    fn usage_parser(name: &str) -> Option<Box<dyn RowParser>> {
        usage::parser(name)
    }
}

/// Agent transcripts under `~/.cursor/projects/<project>/agent-transcripts/`:
/// legacy flat `*.txt`, newer `*.jsonl` (flat or in per-conversation
/// directories), and session stores `~/.cursor/chats/*/*/store.db`
/// (codeburn's cursor-agent provider notes). None carries token counts, so
/// they are returned with parser `none` for probe-adapter only.
fn transcript_globs() -> Vec<TranscriptGlob> {
    let glob = |pattern: &str, format: &str| TranscriptGlob {
        base: GlobBase::Home,
        pattern: pattern.to_string(),
        format: format.to_string(),
        parser: "none".to_string(),
    };
    vec![
        glob(".cursor/projects/*/agent-transcripts/*.jsonl", "jsonl"),
        glob(".cursor/projects/*/agent-transcripts/*/*.jsonl", "jsonl"),
        glob(".cursor/projects/*/agent-transcripts/*.txt", "text"),
        glob(".cursor/chats/*/*/store.db", "sqlite"),
    ]
}

// Exported by `component/`, so that the generic adapter can link this
// library too (one component cannot export the world twice).

#[cfg(test)]
mod tests_support {
    use drover_kit::Profile;
    use drover_kit::testing::ProfileParts;

    /// The built-in cursor profile (profiles/cursor.toml), as the engine
    /// passes it.
    pub fn profile() -> Profile {
        Profile::new("cursor", "cursor-agent", "cursor-hooks-json", "none")
            .template("LOAD the FULL .agents/skills/{skill}/SKILL.md, read its entire contents and follow its directions exactly: {args}")
            .bypass("--force --trust")
            .hooks("stop=Stop sessionStart=SessionStart sessionEnd=SessionEnd")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::screen::rows_of;
    use drover_kit::{Capability, Screen};

    #[test]
    fn describe_lists_what_is_implemented() {
        let d = Cursor::describe();
        assert_eq!(d.name, "cursor");
        assert_eq!(d.dialects, ["cursor-hooks-json"]);
        assert_eq!(d.usage_parsers[0].name, "cursor-json");
        assert!(d.capabilities.contains(&Capability::HookConfig));
    }

    #[test]
    fn transcripts_are_findable_but_not_tallied() {
        let globs = transcript_globs();
        assert!(
            globs
                .iter()
                .all(|g| g.base == GlobBase::Home && g.parser == "none")
        );
        assert!(
            globs
                .iter()
                .any(|g| g.pattern == ".cursor/projects/*/agent-transcripts/*.jsonl")
        );
        assert!(globs.iter().any(|g| g.format == "sqlite"));
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let fixtures: [&[u8]; 5] = [
            include_bytes!("../fixtures/headless-success.json"),
            include_bytes!("../fixtures/hook-stop.json"),
            include_bytes!("../fixtures/hooks.user.json"),
            include_bytes!("../fixtures/screen-approval.txt"),
            include_bytes!("../fixtures/results.jsonl"),
        ];
        let inputs = drover_kit::testing::noise_and_prefixes(5, &fixtures);
        let profile = tests_support::profile();
        let request = drover_kit::HookInstall {
            dialect: hookcfg::DIALECT.to_string(),
            relay_command: "/opt/bin/drover hook --cli cursor".to_string(),
            events: vec![("stop".to_string(), "Stop".to_string())],
            marker: "drover hook".to_string(),
        };
        for bytes in &inputs {
            for native in ["stop", "sessionStart", "afterAgentResponse", "weird"] {
                let _ = hooks::parse(&profile, native, bytes);
            }
            let tally = drover_kit::usage::ChunkedTally::of::<Cursor>(PARSER);
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
            let _ = turn::parse(&drover_kit::testing::turn_output(&text, &text, Some(1)));
            let _ = hookcfg::install(&text, &request);
            let _ = hookcfg::remove(&text, &request);
        }
    }
}
