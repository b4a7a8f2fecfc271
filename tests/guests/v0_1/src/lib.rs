//! An adapter of the 0.1 era: built against `wit/since_v0_1` with
//! wit-bindgen alone (no kit), so the engine's tests can prove a 0.1
//! component still loads and that arguments and answers cross the version
//! boundary intact. Each answer echoes what it was given.

wit_bindgen::generate!({
    world: "adapter",
    path: "../../../wit/since_v0_1",
});

use drover::adapter::host_log::{Level, log};
use drover::adapter::types::*;
use exports::drover::adapter::cli::{Guest, GuestTally};
use std::cell::Cell;

struct Old;

fn unsupported<T>(what: &str) -> Result<T, AdapterError> {
    Err(AdapterError::Unsupported(format!("v0.1 guest: no {what}")))
}

fn conversation(c: &Conversation) -> String {
    match c {
        Conversation::Fresh => "fresh".to_string(),
        Conversation::Preset(id) => format!("preset:{id}"),
        Conversation::Resume(id) => format!("resume:{id}"),
    }
}

impl Guest for Old {
    type Tally = Lines;

    fn describe() -> Description {
        Description {
            name: "old".to_string(),
            adapter_version: "0.1.0".to_string(),
            wit_version: "0.1.0".to_string(),
            capabilities: vec![Capability::Prompt, Capability::Headless, Capability::Screen],
            dialects: vec![],
            usage_parsers: vec![UsageParser {
                name: "lines".to_string(),
                needles: vec!["n".to_string()],
            }],
            location_env: vec!["OLD_HOME".to_string()],
            limitations: vec!["speaks drover:adapter@0.1".to_string()],
        }
    }

    fn render_prompt(profile: Profile, prompt: String) -> Result<String, AdapterError> {
        log(Level::Info, "rendering");
        Ok(format!("{} says: {prompt}", profile.name))
    }

    fn interactive_command(_: Profile, _: LaunchRequest) -> Result<Command, AdapterError> {
        unsupported("interactive-command")
    }

    fn headless_command(profile: Profile, request: LaunchRequest) -> Result<Command, AdapterError> {
        let mut argv = vec![profile.binary, conversation(&request.conversation)];
        argv.extend(request.extra_args.unwrap_or_default());
        Ok(Command {
            argv,
            env: profile.settings,
            stdin: Some(request.prompt),
        })
    }

    fn parse_turn(_: Profile, output: TurnOutput) -> Result<TurnResult, AdapterError> {
        let prior = output.prior_usage.map_or(0, |u| u.input);
        Ok(TurnResult {
            outcome: TurnOutcome::Blocked,
            reply: Some(output.stdout),
            conversation_id: None,
            error: Some(output.stderr),
            usage: Some(UsageReport {
                entries: vec![UsageEntry {
                    session: "s".to_string(),
                    day: "2026-12-01".to_string(),
                    model: "m".to_string(),
                    usage: Usage {
                        input: prior + 1,
                        output: 2,
                        cache_read: 3,
                        cache_write: 4,
                        reasoning: 5,
                        requests: 1,
                    },
                }],
                rejected_rows: 0,
            }),
            prompt_kind: Some(PromptKind::TrustDialog),
        })
    }

    fn install_hooks(_: String, _: HookInstall) -> Result<HookEdit, AdapterError> {
        unsupported("install-hooks")
    }

    fn remove_hooks(_: String, _: HookInstall) -> Result<HookEdit, AdapterError> {
        unsupported("remove-hooks")
    }

    fn detect_hooks(_: String, _: HookInstall) -> Result<HookStatus, AdapterError> {
        Err(AdapterError::InvalidInput(
            "v0.1 guest: refuses".to_string(),
        ))
    }

    fn parse_hook(_: Profile, native: String, payload: Vec<u8>) -> Result<HookEvent, AdapterError> {
        Ok(HookEvent {
            kind: CanonicalEvent::Stop,
            native,
            session_id: Some(String::from_utf8_lossy(&payload).into_owned()),
            transcript_path: None,
            cwd: None,
            subagent: true,
            reason: None,
            prompt_kind: Some(PromptKind::Question),
            last_message: None,
            fields_found: vec![],
        })
    }

    fn transcript_locations(_: Profile, context: LocationContext) -> Vec<TranscriptGlob> {
        context
            .env
            .into_iter()
            .map(|(_, dir)| TranscriptGlob {
                base: GlobBase::Absolute,
                pattern: format!("{dir}/*.log"),
                format: "jsonl".to_string(),
                parser: "lines".to_string(),
            })
            .collect()
    }

    fn classify_fault(_: Profile, lines: Vec<String>) -> Option<Fault> {
        lines.last().map(|line| Fault {
            kind: FaultKind::RateLimit,
            evidence: line.clone(),
            retry_after_secs: Some(30),
            rule: "old/v1/any".to_string(),
        })
    }

    fn read_screen(_: Profile, screen: Screen) -> ScreenReading {
        ScreenReading {
            state: SeatState::Idle,
            prompt_kind: None,
            rule: "old/v1/title".to_string(),
            evidence: screen.title,
        }
    }
}

/// Counts the lines fed as input tokens.
struct Lines {
    count: Cell<u64>,
}

impl GuestTally for Lines {
    fn new(_parser: String) -> Self {
        Lines {
            count: Cell::new(0),
        }
    }

    fn begin_file(&self, _name: String) {}

    fn feed(&self, chunk: Vec<u8>) -> Result<(), AdapterError> {
        let lines = chunk.iter().filter(|b| **b == b'\n').count() as u64;
        self.count.set(self.count.get() + lines);
        Ok(())
    }

    fn finish(&self) -> Option<UsageReport> {
        Some(UsageReport {
            entries: vec![UsageEntry {
                session: String::new(),
                day: String::new(),
                model: String::new(),
                usage: Usage {
                    input: self.count.get(),
                    output: 0,
                    cache_read: 0,
                    cache_write: 0,
                    reasoning: 0,
                    requests: 0,
                },
            }],
            rejected_rows: 0,
        })
    }
}

export!(Old);
