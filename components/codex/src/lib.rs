//! drover adapter for OpenAI Codex CLI.
//!
//! Facts it encodes come from Codex CLI 0.171.0 driven offline (see
//! `docs/adapters/codex.md`): `codex exec --json` prints JSONL thread events,
//! hooks live in `.codex/hooks.json` (Claude-style, and skipped unless
//! trusted or run with `--dangerously-bypass-hook-trust`), transcripts in
//! `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`.

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
    TurnResult, hookcfg,
};

pub struct Codex;

/// The usage parser name profiles use for Codex rollout files.
pub const PARSER: &str = "codex-rollout";

/// The variable that moves Codex's data dir (default `~/.codex`).
const CODEX_HOME: &str = "CODEX_HOME";

impl Adapter for Codex {
    const METADATA: Metadata = Metadata {
        capabilities: CLI_CAPABILITIES,
        dialects: &["codex-hooks-json"],
        usage_parsers: &[ParserSpec {
            name: PARSER,
            needles: usage::NEEDLES,
        }],
        location_env: &[CODEX_HOME],
        limitations: &[
            "an interactive pane cannot tell done from idle; the Stop hook can",
            "Codex has no StopFailure or Notification hook: a failed turn fires no hook, the failure shows only in the pane (■ …) and in exec output",
            "while a reply streams the TUI may show no busy line; only a spinner in the pane title tells it from idle",
            "exec --json does not say how many API calls a turn made: parse-turn counts one per completed turn; the rollout parser counts them exactly",
            "after a resume exec reports thread-cumulative usage; per-turn figures need prior-usage from the engine",
            "a closed port never fails: Codex keeps printing 'Reconnecting... waiting for network', so the engine's deadline must end the turn",
            "SessionEnd fires only when the TUI runs without its app-server daemon (features.daemon_auto_start=false)",
        ],
        ..Metadata::new("codex", env!("CARGO_PKG_VERSION"))
    };
    const FAULT_RULES: &'static [FaultRule] = faults::RULES;
    const SCREEN_RULES: &'static [ScreenRule] = screen::RULES;
    const HOOK_EDITOR: Option<HookEditor> = Some(hookcfg::JSON);

    fn render_prompt(profile: &Profile, text: &str) -> Result<String, AdapterError> {
        commands::render(profile, text)
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

    fn parse_turn(profile: &Profile, output: &TurnOutput) -> Result<TurnResult, AdapterError> {
        Ok(if drover_kit::text_output(profile) {
            turn::parse_text(output)
        } else {
            turn::parse(output)
        })
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

/// Live sessions under `sessions/YYYY/MM/DD/`, plus `archived_sessions/`
/// (flat), where Codex moves a session the user archives.
fn transcript_globs(context: &LocationContext) -> Vec<TranscriptGlob> {
    let glob = |base: GlobBase, pattern: String| TranscriptGlob {
        base,
        pattern,
        format: "jsonl".to_string(),
        parser: PARSER.to_string(),
    };
    let codex_home = context
        .env
        .iter()
        .find(|(k, v)| k == CODEX_HOME && !v.trim().is_empty())
        .map(|(_, v)| v.trim());
    let (base, dir) = match codex_home {
        None => (GlobBase::Home, ".codex".to_string()),
        Some(dir) if dir.starts_with('/') => {
            (GlobBase::Absolute, dir.trim_end_matches('/').to_string())
        }
        Some(dir) => match dir.strip_prefix("~/") {
            Some(rest) => (GlobBase::Home, rest.trim_end_matches('/').to_string()),
            // Codex resolves a relative CODEX_HOME against its working directory.
            None => (
                GlobBase::Cwd,
                dir.trim_start_matches("./")
                    .trim_end_matches('/')
                    .to_string(),
            ),
        },
    };
    vec![
        glob(base, format!("{dir}/sessions/*/*/*/rollout-*.jsonl")),
        glob(base, format!("{dir}/archived_sessions/rollout-*.jsonl")),
    ]
}

// Exported by `component/`, so that the generic adapter can link this
// library too (one component cannot export the world twice).

#[cfg(test)]
mod tests_support {
    use drover_kit::Profile;
    use drover_kit::testing::ProfileParts;

    /// The built-in codex profile (`profiles/codex.toml`), as the engine passes it.
    pub fn profile() -> Profile {
        Profile::new("codex", "codex", "codex-hooks-json", "codex-rollout")
            .template("Use the ${skill} skill now, and use subagents as needed: {args}")
            .launch("-c features.daemon_auto_start=false")
            .bypass("--dangerously-bypass-approvals-and-sandbox --dangerously-bypass-hook-trust")
            .hooks("SessionStart Stop SessionEnd PreCompact PermissionRequest SubagentStop")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::testing::{Xorshift64, cuts};
    use drover_kit::{CanonicalEvent, Screen, SeatState};

    const PROFILE_TOML: &str = include_str!("../../../profiles/codex.toml");
    const DOC: &str = include_str!("../../../docs/adapters/codex.md");

    fn context(env: &[(&str, &str)]) -> LocationContext {
        drover_kit::testing::location_context("/w", env)
    }

    fn patterns(globs: &[TranscriptGlob]) -> Vec<(GlobBase, &str)> {
        globs.iter().map(|g| (g.base, g.pattern.as_str())).collect()
    }

    #[test]
    fn transcripts_follow_codex_home() {
        let default = Codex::transcript_locations(&profile(), &context(&[]));
        assert_eq!(
            patterns(&default),
            [
                (GlobBase::Home, ".codex/sessions/*/*/*/rollout-*.jsonl"),
                (GlobBase::Home, ".codex/archived_sessions/rollout-*.jsonl"),
            ]
        );
        assert!(
            default
                .iter()
                .all(|g| g.format == "jsonl" && g.parser == "codex-rollout")
        );
        let moved =
            Codex::transcript_locations(&profile(), &context(&[("CODEX_HOME", "/t/home/.codex/")]));
        assert_eq!(moved[0].base, GlobBase::Absolute);
        assert_eq!(
            moved[0].pattern,
            "/t/home/.codex/sessions/*/*/*/rollout-*.jsonl"
        );
        let relative =
            Codex::transcript_locations(&profile(), &context(&[("CODEX_HOME", "./state")]));
        assert_eq!(
            patterns(&relative)[1],
            (GlobBase::Cwd, "state/archived_sessions/rollout-*.jsonl")
        );
        let tilde = Codex::transcript_locations(&profile(), &context(&[("CODEX_HOME", "~/alt")]));
        assert_eq!(
            patterns(&tilde)[0],
            (GlobBase::Home, "alt/sessions/*/*/*/rollout-*.jsonl")
        );
        let blank = Codex::transcript_locations(&profile(), &context(&[("CODEX_HOME", " ")]));
        assert_eq!(blank[0].base, GlobBase::Home);
    }

    #[test]
    fn describe_lists_what_is_implemented() {
        let d = Codex::describe();
        assert_eq!(d.name, "codex");
        assert_eq!(d.wit_version, drover_kit::WIT_VERSION);
        assert_eq!(d.capabilities.len(), 9);
        assert_eq!(d.dialects, ["codex-hooks-json"]);
        assert_eq!(d.location_env, ["CODEX_HOME"]);
        let parser = &d.usage_parsers[0];
        assert_eq!(parser.name, PARSER);
        // Every row the parser reads must survive the engine's needle filter.
        for row in [
            r#"{"type":"event_msg","payload":{"type":"token_count","info":null}}"#,
            r#"{"type":"turn_context","payload":{"model":"gpt-5.5"}}"#,
            r#"{"type":"session_meta","payload":{"id":"t"}}"#,
            r#"{"type": "token_usage_record", "payload": {}}"#,
        ] {
            assert!(
                parser.needles.iter().any(|n| row.contains(n.as_str())),
                "{row}"
            );
        }
    }

    #[test]
    fn the_profile_file_matches_the_built_in_profile() {
        let p = profile();
        let line = |key: &str| {
            PROFILE_TOML
                .lines()
                .find(|l| l.starts_with(&format!("{key} =")))
                .unwrap_or_else(|| panic!("profile has no {key}"))
        };
        let quoted = |v: &str| format!("\"{v}\"");
        assert!(line("prompt_template").contains(&quoted(&p.prompt_template)));
        assert!(line("binary").contains(&quoted(&p.binary)));
        assert!(line("usage_parser").contains(&quoted(&p.usage_parser)));
        assert!(line("dialect").contains(&quoted(&p.dialect)));
        let bypass = line("bypass_args");
        assert!(
            p.bypass_args.iter().all(|a| bypass.contains(&quoted(a))),
            "{bypass}"
        );
        let launch = line("launch_args");
        assert!(
            p.launch_args.iter().all(|a| launch.contains(&quoted(a))),
            "{launch}"
        );
        for (native, canonical) in &p.hook_events {
            assert!(
                PROFILE_TOML.contains(&format!("{native} = \"{canonical}\"")),
                "{native}"
            );
            assert!(
                CanonicalEvent::from_name(canonical).is_some(),
                "{canonical}"
            );
        }
    }

    #[test]
    fn no_line_of_the_profile_or_the_docs_reads_as_a_fault() {
        // Both files quote every fault sentence; none of them may classify.
        for line in PROFILE_TOML.lines().chain(DOC.lines()) {
            let fault = Codex::classify_fault(&profile(), &[line.to_string()]);
            assert_eq!(fault, None, "{line}");
        }
    }

    /// Deterministic pseudo-random bytes (xorshift), biased towards the
    /// characters the parsers branch on.
    fn noise(seed: u64, len: usize) -> Vec<u8> {
        const ALPHABET: &[u8] = b"{}[]\":,0123456789 \n\\-.tuenvlfrsa_\xe2\x80\x99\xff";
        let mut rng = Xorshift64::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        (0..len)
            .map(|_| {
                let state = rng.next_u64();
                if state.is_multiple_of(3) {
                    state as u8
                } else {
                    ALPHABET[(state >> 8) as usize % ALPHABET.len()]
                }
            })
            .collect()
    }

    #[test]
    fn hostile_bytes_never_panic() {
        let fixtures: [&str; 6] = [
            include_str!("../fixtures/rollout-resumed.jsonl"),
            include_str!("../fixtures/rollout-records-only.jsonl"),
            include_str!("../fixtures/exec-success.jsonl"),
            include_str!("../fixtures/hook-stop.json"),
            include_str!("../fixtures/screen-working.txt"),
            include_str!("../fixtures/screen-hooks-review.txt"),
        ];
        let mut inputs: Vec<Vec<u8>> = (0..300)
            .map(|seed| noise(seed, (seed as usize * 7) % 700))
            .collect();
        for fixture in fixtures {
            let bytes = fixture.as_bytes();
            for cut in cuts(bytes.len(), 12) {
                inputs.push(bytes[..cut].to_vec());
                inputs.push(bytes[cut..].to_vec());
            }
        }
        for (n, input) in inputs.iter().enumerate() {
            let _ = Codex::parse_hook(&profile(), "Stop", input);
            let tally = drover_kit::usage::ChunkedTally::of::<Codex>(PARSER);
            tally.begin_file("rollout-x.jsonl");
            for chunk in input.chunks(29) {
                tally.feed(chunk).expect("feeds");
            }
            let _ = tally.finish();
            let text = String::from_utf8_lossy(input);
            let reading = Codex::read_screen(
                &profile(),
                &Screen {
                    rows: text.lines().map(str::to_string).collect(),
                    title: text.to_string(),
                },
            );
            assert!(matches!(
                reading.state,
                SeatState::Working
                    | SeatState::Idle
                    | SeatState::Blocked
                    | SeatState::Unknown
                    | SeatState::Done
            ));
            // The regex-heavy readers are slow unoptimized; a sample suffices.
            if !n.is_multiple_of(4) {
                continue;
            }
            let _ = Codex::parse_turn(
                &profile(),
                &TurnOutput {
                    stdout: text.to_string(),
                    stderr: text.to_string(),
                    exit_code: Some(1),
                    prior_usage: None,
                },
            );
            let _ = Codex::classify_fault(
                &profile(),
                &text.lines().map(str::to_string).collect::<Vec<_>>(),
            );
        }
    }
}
