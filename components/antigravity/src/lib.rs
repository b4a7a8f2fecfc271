//! drover adapter for Google Antigravity CLI (`agy`).
//!
//! agy was not run in drover's reference measurements. The facts this crate
//! encodes come from bmad-loop's antigravity profile (agy >= 1.1.3), the
//! google-antigravity/antigravity-cli docs, release notes and completions,
//! and third-party captures of `agy --print --output-format stream-json`
//! (agy 1.1.17). `docs/adapters/antigravity.md` says which fact came from
//! where.

mod commands;
mod faults;
mod hooks;
mod screen;
mod turn;
pub mod usage;

use drover_kit::screen::ScreenRule;
use drover_kit::usage::RowParser;
use drover_kit::{
    Adapter, AdapterError, Capability, Command, Fault, GlobBase, HookEditor, HookEvent,
    LaunchRequest, LocationContext, Metadata, Profile, TranscriptGlob, TurnOutput, TurnResult,
    hookcfg, prompt,
};

pub struct Antigravity;

/// agy's transcripts carry no token counts, so there is no usage parser.
pub const PARSER: &str = "none";

/// The hook-config dialect agy reads from `.agents/hooks.json`.
pub const DIALECT: &str = "antigravity-hooks-json";

impl Adapter for Antigravity {
    const METADATA: Metadata = Metadata {
        capabilities: &[
            Capability::Prompt,
            Capability::Commands,
            Capability::Headless,
            Capability::HookConfig,
            Capability::HookPayloads,
            Capability::Transcripts,
            Capability::Faults,
            Capability::Screen,
        ],
        dialects: &[DIALECT],
        limitations: &[
            "an interactive pane cannot tell done from idle; agy fires only Stop (no SessionStart/SessionEnd hooks)",
            "transcripts (transcript_full.jsonl) carry no token counts: usage is read only from headless stream-json results",
            "trust is exact-path: every new workspace path (a worktree too) stops at the trust dialog, which --dangerously-skip-permissions does not bypass",
            "headless mode cannot ask for a permission: a tool that needs one is auto-denied and the turn reads as blocked",
        ],
        ..Metadata::new("antigravity", env!("CARGO_PKG_VERSION"))
    };
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

    fn transcript_locations(_profile: &Profile, _context: &LocationContext) -> Vec<TranscriptGlob> {
        transcript_globs()
    }

    fn classify_fault(profile: &Profile, lines: &[String]) -> Option<Fault> {
        faults::classify(profile, lines)
    }

    fn usage_parser(name: &str) -> Option<Box<dyn RowParser>> {
        usage::parser(name)
    }
}

/// `~/.gemini/antigravity-cli/brain/<conversationId>/.system_generated/logs/
/// transcript_full.jsonl` (bmad-loop; SpecStory's agy integration reads the
/// same path). Returned with parser `none` so probe-adapter can find it.
fn transcript_globs() -> Vec<TranscriptGlob> {
    vec![TranscriptGlob {
        base: GlobBase::Home,
        pattern: ".gemini/antigravity-cli/brain/*/.system_generated/logs/transcript_full.jsonl"
            .to_string(),
        format: "jsonl".to_string(),
        parser: PARSER.to_string(),
    }]
}

// Exported by `component/`, so that the generic adapter can link this
// library too (one component cannot export the world twice).

#[cfg(test)]
mod tests_support {
    use drover_kit::Profile;
    use drover_kit::testing::ProfileParts;

    /// The built-in antigravity profile (profiles/antigravity.toml), as the
    /// engine passes it.
    pub fn profile() -> Profile {
        Profile::new("antigravity", "agy", "antigravity-hooks-json", "none")
            .launch("-i")
            .bypass("--dangerously-skip-permissions")
            .hooks("Stop")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::screen::rows_of;
    use drover_kit::{CanonicalEvent, HookInstall, Screen};

    #[test]
    fn describe_lists_what_is_implemented() {
        let d = Antigravity::describe();
        assert_eq!(d.name, "antigravity");
        assert_eq!(d.dialects, ["antigravity-hooks-json"]);
        assert!(d.usage_parsers.is_empty());
        assert!(d.capabilities.contains(&Capability::Headless));
        assert!(!d.capabilities.contains(&Capability::Usage));
    }

    #[test]
    fn transcripts_are_findable_but_not_tallied() {
        let globs = transcript_globs();
        assert_eq!(globs[0].base, GlobBase::Home);
        assert!(
            globs[0]
                .pattern
                .ends_with("/.system_generated/logs/transcript_full.jsonl")
        );
        assert_eq!(
            (globs[0].format.as_str(), globs[0].parser.as_str()),
            ("jsonl", "none")
        );
        // bmad-loop §5.7: the transcript has no token candidates.
        let tally = drover_kit::usage::ChunkedTally::of::<Antigravity>("none");
        tally
            .feed(include_bytes!("../fixtures/transcript_full.jsonl").as_ref())
            .expect("accepted");
        assert_eq!(tally.finish(), None);
    }

    #[test]
    fn hooks_install_under_the_drover_group() {
        let request = HookInstall {
            dialect: DIALECT.to_string(),
            relay_command: "/opt/bin/drover hook --cli antigravity".to_string(),
            events: vec![("Stop".to_string(), "Stop".to_string())],
            marker: "drover hook".to_string(),
        };
        let user = "{\n  \"lint-checker\": {\"Stop\": [{\"type\": \"command\", \"command\": \"lint\"}]}\n}\n";
        let edit = Antigravity::install_hooks(user, &request).expect("installs");
        let value: serde_json::Value = serde_json::from_str(&edit.text).expect("json");
        assert_eq!(value["lint-checker"]["Stop"][0]["command"], "lint");
        assert_eq!(
            value["drover"]["Stop"][0]["command"],
            "/opt/bin/drover hook --cli antigravity Stop"
        );
        assert_eq!(value["drover"]["Stop"][0]["timeout"], 60);
        let status = Antigravity::detect_hooks(&edit.text, &request).expect("detects");
        assert_eq!(status.registered, ["Stop"]);
        let removed = Antigravity::remove_hooks(&edit.text, &request).expect("removes");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&removed.text).expect("json"),
            serde_json::from_str::<serde_json::Value>(user).expect("json")
        );
        let e = hooks::parse(
            &tests_support::profile(),
            "Stop",
            include_bytes!("../fixtures/hook-stop.json"),
        )
        .expect("parses");
        assert_eq!(e.kind, CanonicalEvent::Stop);
    }

    #[test]
    fn arbitrary_bytes_never_panic() {
        let fixtures: [&[u8]; 4] = [
            include_bytes!("../fixtures/headless-denied.jsonl"),
            include_bytes!("../fixtures/hook-stop.json"),
            include_bytes!("../fixtures/transcript_full.jsonl"),
            include_bytes!("../fixtures/screen-permission.txt"),
        ];
        let inputs = drover_kit::testing::noise_and_prefixes(3, &fixtures);
        let profile = tests_support::profile();
        for bytes in &inputs {
            let _ = hooks::parse(&profile, "Stop", bytes);
            let tally = drover_kit::usage::ChunkedTally::of::<Antigravity>(PARSER);
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
            let _ = turn::parse(&drover_kit::testing::turn_output(&text, &text, Some(0)));
        }
    }
}
