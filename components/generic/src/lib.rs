//! drover's generic adapter: drives a CLI that no component knows, from its
//! profile alone. bmad-loop's guide promises that a CLI fitting the pane +
//! hook transport "needs no code: reuse the generic adapter with a
//! profile"; this is that adapter.
//!
//! Everything is chosen from the profile's data: the hook dialect picks the
//! family (one of the built-in adapters, linked here as libraries) whose
//! hook-config editing, payload parsing and fault rules apply; the usage
//! parser picks the tally; `[turn]` (argv template, resume and session-id
//! argv, output format) builds and reads headless turns; panes are read by
//! common shapes (`screen.rs`). The profile's own `env_fault_patterns` are
//! applied with the family's rules.

mod commands;
mod family;
mod logged;
mod printed;
mod screen;
mod turn;

use drover_kit::faults::FaultRule;
use drover_kit::screen::ScreenRule;
use drover_kit::usage::RowParser;
use drover_kit::{
    Adapter, AdapterError, Capability, Command, Fault, HookEdit, HookEvent, HookInstall,
    HookStatus, LaunchRequest, Metadata, ParserSpec, Profile, TurnOutput, TurnResult, prompt,
    unsupported,
};

use drover_kit::{LocationContext, TranscriptGlob};
use family::Family;
use logged::{Logged, LoggedParser};

pub struct Generic;

/// What the generic path cannot tell apart (and cannot do).
const LIMITATIONS: &[&str] = &[
    "reads panes by common shapes only: cannot tell done from idle, and may read a CLI's own dialog as a question or miss it",
    "knows a turn ended only from the dialect's Stop hook on tmux, and from the process exit headless",
    "finds transcripts only where a [usage] table says its CLI writes them; otherwise usage comes from the CLI's output, the transcript path its hooks report, or paths given to drover usage",
    "without [turn] argv, runs on tmux only",
];

/// Every built-in dialect and usage parser, whichever family owns it.
const DIALECTS: &[&str] = &[
    "claude-settings-json",
    "codex-hooks-json",
    "gemini-settings-json",
    "copilot-settings-json",
    "antigravity-hooks-json",
    "opencode-plugin",
    "cursor-hooks-json",
    "grok-hooks-json",
];

macro_rules! parsers_of {
    ($($adapter:path [$($n:literal),+]),+ $(,)?) => {
        &[$($(<$adapter as Adapter>::METADATA.usage_parsers[$n],)+)+]
    };
}

const PARSERS: &[ParserSpec] = parsers_of![
    drover_claude::Claude[0],
    drover_codex::Codex[0],
    drover_gemini::Gemini[0],
    drover_copilot::Copilot[0],
    drover_cursor::Cursor[0],
    drover_opencode::Opencode[0, 1],
    drover_qwen::Qwen[0, 1],
    drover_grok::Grok[0, 1],
];

/// The family of the profile's hook dialect.
fn family_of(profile: &Profile) -> Result<Family, AdapterError> {
    Family::of_dialect(&profile.dialect).ok_or_else(|| {
        unsupported(format!(
            "the generic adapter knows the built-in hook dialects only, not '{}'",
            profile.dialect
        ))
    })
}

/// The family of a hook request's dialect.
fn family_of_request(request: &HookInstall) -> Result<Family, AdapterError> {
    Family::of_dialect(&request.dialect).ok_or_else(|| {
        unsupported(format!(
            "the generic adapter knows the built-in hook dialects only, not '{}'",
            request.dialect
        ))
    })
}

impl Adapter for Generic {
    const METADATA: Metadata = Metadata {
        capabilities: &[
            Capability::Prompt,
            Capability::Commands,
            Capability::Headless,
            Capability::HookConfig,
            Capability::HookPayloads,
            Capability::Usage,
            Capability::Faults,
            Capability::Screen,
        ],
        dialects: DIALECTS,
        usage_parsers: PARSERS,
        limitations: LIMITATIONS,
        ..Metadata::new("generic", env!("CARGO_PKG_VERSION"))
    };
    const SCREEN_RULES: &'static [ScreenRule] = screen::RULES;

    fn render_prompt(profile: &Profile, text: &str) -> Result<String, AdapterError> {
        prompt::render(&profile.prompt_template, text)
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
        turn::parse(profile, output)
    }

    fn install_hooks(existing: &str, request: &HookInstall) -> Result<HookEdit, AdapterError> {
        family_of_request(request)?.install_hooks(existing, request)
    }

    fn remove_hooks(existing: &str, request: &HookInstall) -> Result<HookEdit, AdapterError> {
        family_of_request(request)?.remove_hooks(existing, request)
    }

    fn detect_hooks(existing: &str, request: &HookInstall) -> Result<HookStatus, AdapterError> {
        family_of_request(request)?.detect_hooks(existing, request)
    }

    fn parse_hook(
        profile: &Profile,
        native_event: &str,
        payload: &[u8],
    ) -> Result<HookEvent, AdapterError> {
        family_of(profile)?.parse_hook(profile, native_event, payload)
    }

    /// The family's rules plus the profile's patterns. A hookless profile's
    /// family is the one whose output format its `[turn] output` names (a
    /// fork prints its parent's errors); without one, the profile's
    /// patterns alone.
    fn classify_fault(profile: &Profile, lines: &[String]) -> Option<Fault> {
        let family = Family::of_dialect(&profile.dialect)
            .or_else(|| Family::of_turn_format(&profile.turn_output));
        match family {
            Some(family) => family.classify_fault(profile, lines),
            None => {
                const NO_RULES: &[FaultRule] = &[];
                drover_kit::faults::classify(NO_RULES, &profile.env_fault_patterns, lines)
            }
        }
    }

    /// The profile's `[usage]` table names where its CLI writes its logs.
    fn transcript_locations(profile: &Profile, _context: &LocationContext) -> Vec<TranscriptGlob> {
        Logged::locations(profile)
    }

    fn usage_parser(name: &str) -> Option<Box<dyn RowParser>> {
        if let Some(table) = Logged::of_parser(name) {
            return Some(Box::new(LoggedParser::new(table)));
        }
        Family::of_parser(name)?.usage_parser(name)
    }
}

// The generic adapter is a component of its own.
drover_kit::export!(Generic);

#[cfg(test)]
mod tests_support {
    use drover_kit::Profile;
    use drover_kit::testing::ProfileParts;

    /// A profile for a CLI no component knows, in bmad-loop's schema plus
    /// drover's `[turn]`.
    pub fn profile() -> Profile {
        let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
        Profile {
            env_fault_patterns: strings(&["^ACME-E\\d+"]),
            turn_argv: strings(&["-p", "{prompt}", "--output-format", "json"]),
            turn_resume: strings(&["--resume", "{id}"]),
            turn_session_id: strings(&["--session-id={id}"]),
            turn_output: "claude-json".to_string(),
            ..Profile::new("acme", "acme", "claude-settings-json", "claude-jsonl")
                .launch("-i")
                .bypass("--yolo")
                .hooks("Stop")
                .turn("--verbose")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tests_support::profile;

    #[test]
    fn every_family_parser_is_listed_once() {
        let mut listed: Vec<&str> = PARSERS.iter().map(|p| p.name).collect();
        let mut owned: Vec<&str> = Family::ALL
            .iter()
            .flat_map(|f| f.metadata().usage_parsers.iter().map(|p| p.name))
            .collect();
        listed.sort_unstable();
        owned.sort_unstable();
        owned.dedup();
        assert_eq!(listed, owned);
        let mut dialects: Vec<&str> = Family::ALL
            .iter()
            .flat_map(|f| f.metadata().dialects.iter().copied())
            .collect();
        dialects.sort_unstable();
        dialects.dedup();
        let mut ours = DIALECTS.to_vec();
        ours.sort_unstable();
        assert_eq!(ours, dialects);
    }

    #[test]
    fn the_dialect_picks_payload_parsing_and_faults() {
        let payload = br#"{"session_id":"s-9","transcript_path":"/t/s-9.jsonl","cwd":"/w","hook_event_name":"Stop"}"#;
        let event = Generic::parse_hook(&profile(), "Stop", payload).expect("parses");
        assert_eq!(event.kind, drover_kit::CanonicalEvent::Stop);
        assert_eq!(event.session_id.as_deref(), Some("s-9"));
        assert_eq!(event.transcript_path.as_deref(), Some("/t/s-9.jsonl"));
        // Claude's rules and the profile's own pattern.
        let overload = ["API Error: 529 Overloaded. This is a server-side issue".to_string()];
        assert_eq!(
            Generic::classify_fault(&profile(), &overload).map(|f| f.kind),
            Some(drover_kit::FaultKind::Overload)
        );
        let own = ["ACME-E42 quota exhausted for today".to_string()];
        assert_eq!(
            Generic::classify_fault(&profile(), &own).map(|f| f.rule),
            Some("profile:0".to_string())
        );
        let mut unknown = profile();
        unknown.dialect = "vim-json".to_string();
        assert!(Generic::parse_hook(&unknown, "Stop", payload).is_err());
    }

    #[test]
    fn a_hookless_profile_gets_the_fault_rules_of_its_output_format() {
        let mut hookless = profile();
        hookless.dialect = "none".to_string();
        hookless.turn_output = "claude-json".to_string();
        let overload = ["API Error: 529 Overloaded. This is a server-side issue".to_string()];
        assert_eq!(
            Generic::classify_fault(&hookless, &overload).map(|f| f.kind),
            Some(drover_kit::FaultKind::Overload)
        );
        // Plain text names no family: the profile's patterns alone.
        hookless.turn_output = "text".to_string();
        assert_eq!(Generic::classify_fault(&hookless, &overload), None);
        let own = ["ACME-E42 quota exhausted for today".to_string()];
        assert!(Generic::classify_fault(&hookless, &own).is_some());
    }

    #[test]
    fn the_output_format_picks_the_turn_reader() {
        let result = r#"{"type":"result","subtype":"success","is_error":false,"result":"OK","session_id":"s-1","num_turns":1,"usage":{"input_tokens":10,"output_tokens":2,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}"#;
        let output = TurnOutput {
            stdout: result.to_string(),
            stderr: String::new(),
            exit_code: Some(0),
            prior_usage: None,
        };
        let r = Generic::parse_turn(&profile(), &output).expect("reads");
        assert_eq!(r.reply.as_deref(), Some("OK"));
        assert_eq!(r.usage.expect("usage").total().input, 10);
        let mut text = profile();
        text.turn_output = "text".to_string();
        let r = Generic::parse_turn(&text, &output).expect("reads");
        assert_eq!(r.reply.as_deref(), Some(result));
    }
}
