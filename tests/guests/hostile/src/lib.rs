//! A hostile adapter. `render-prompt` does what the prompt says:
//! `loop` spins forever, `alloc:<MiB>` allocates and touches that much
//! memory, `panic:<text>` panics, `read-file:<path>` tries to read a file,
//! `env` lists the environment, `huge:<MiB>` returns a string that large,
//! `stderr:<KiB>` writes that much to stderr; anything else is echoed, so a
//! test can check the engine still answers after each misdeed.
//!
//! Its `hostile-lines` usage parser (files `<cwd>/hostile-logs/*.log`) counts
//! `count <n>` lines as n input tokens, panics on a `panic` line and spins on
//! a `loop` line, for `drover usage`'s tests of failing files.

use drover_kit::usage::{Ledger, RowParser};
use drover_kit::{
    AdapterError, Command, Description, Fault, GlobBase, Guest, HookEdit, HookEvent, HookInstall,
    HookStatus, LaunchRequest, LocationContext, Profile, Screen, ScreenReading, SeatState,
    TranscriptGlob, TurnOutput, TurnResult, Usage, UsageParser, unsupported,
};

struct Hostile;

fn number(text: &str) -> usize {
    text.parse().unwrap_or(1)
}

impl Guest for Hostile {
    type Tally = drover_kit::usage::ChunkedTally<HostileParsers>;

    fn describe() -> Description {
        Description {
            name: "hostile".to_string(),
            adapter_version: "0.0.1".to_string(),
            wit_version: drover_kit::WIT_VERSION.to_string(),
            capabilities: vec![drover_kit::Capability::Prompt],
            dialects: vec![],
            usage_parsers: vec![UsageParser {
                name: "hostile-lines".to_string(),
                needles: vec!["count".to_string(), "panic".to_string(), "loop".to_string()],
            }],
            location_env: vec![],
            limitations: vec![],
        }
    }

    fn render_prompt(_profile: Profile, prompt: String) -> Result<String, AdapterError> {
        let (verb, arg) = prompt.split_once(':').unwrap_or((prompt.as_str(), ""));
        match verb {
            "loop" => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            "alloc" => {
                let mut blocks: Vec<Vec<u8>> = Vec::new();
                for _ in 0..number(arg) {
                    blocks.push(vec![1u8; 1 << 20]);
                }
                Ok(format!("allocated {} MiB", blocks.len()))
            }
            "panic" => panic!("{arg}"),
            "read-file" => Ok(match std::fs::read_to_string(arg) {
                Ok(text) => format!("read {} bytes", text.len()),
                Err(e) => format!("error: {e}"),
            }),
            "env" => Ok(format!(
                "vars={} args={} cwd={:?}",
                std::env::vars().count(),
                std::env::args().count(),
                std::env::current_dir().ok()
            )),
            "huge" => Ok("x".repeat(number(arg) << 20)),
            "stderr" => {
                let line = "y".repeat(1023);
                for _ in 0..number(arg) {
                    eprintln!("{line}");
                }
                Ok("wrote".to_string())
            }
            _ => Ok(format!("echo {prompt}")),
        }
    }

    fn interactive_command(_: Profile, _: LaunchRequest) -> Result<Command, AdapterError> {
        Err(unsupported("hostile"))
    }
    fn headless_command(_: Profile, _: LaunchRequest) -> Result<Command, AdapterError> {
        Err(unsupported("hostile"))
    }
    fn parse_turn(_: Profile, _: TurnOutput) -> Result<TurnResult, AdapterError> {
        Err(unsupported("hostile"))
    }
    fn install_hooks(_: String, _: HookInstall) -> Result<HookEdit, AdapterError> {
        Err(unsupported("hostile"))
    }
    fn remove_hooks(_: String, _: HookInstall) -> Result<HookEdit, AdapterError> {
        Err(unsupported("hostile"))
    }
    fn detect_hooks(_: String, _: HookInstall) -> Result<HookStatus, AdapterError> {
        Err(unsupported("hostile"))
    }
    fn parse_hook(_: Profile, native: String, payload: Vec<u8>) -> Result<HookEvent, AdapterError> {
        // A payload of "loop" hangs, anything else panics: this adapter is
        // for the relay's never-lose-an-event tests.
        if payload == b"loop" {
            loop {
                std::hint::black_box(());
            }
        }
        panic!("hostile parse-hook refused {native}")
    }
    fn transcript_locations(_: Profile, _: LocationContext) -> Vec<TranscriptGlob> {
        vec![TranscriptGlob {
            base: GlobBase::Cwd,
            pattern: "hostile-logs/*.log".to_string(),
            format: "jsonl".to_string(),
            parser: "hostile-lines".to_string(),
        }]
    }
    fn classify_fault(_: Profile, _: Vec<String>) -> Option<Fault> {
        None
    }
    fn read_screen(_: Profile, _: Screen) -> ScreenReading {
        ScreenReading {
            state: SeatState::Unknown,
            prompt_kind: None,
            rule: "hostile".to_string(),
            evidence: String::new(),
        }
    }
}

pub struct HostileParsers;
impl drover_kit::usage::ParserSet for HostileParsers {
    fn make(name: &str) -> Option<Box<dyn RowParser>> {
        (name == "hostile-lines").then(|| Box::new(Lines) as Box<dyn RowParser>)
    }
}

struct Lines;
impl RowParser for Lines {
    fn row(&mut self, line: &[u8], ledger: &mut Ledger) {
        let line = String::from_utf8_lossy(line);
        let line = line.trim();
        if line == "panic" {
            panic!("hostile-lines met a panic line");
        }
        if line == "loop" {
            loop {
                std::hint::black_box(());
            }
        }
        if let Some(n) = line.strip_prefix("count ").and_then(|n| n.parse().ok()) {
            let usage = Usage {
                input: n,
                requests: 1,
                ..Usage::ZERO
            };
            ledger.add("h", "2026-11-30", "hostile", &usage);
        }
    }
}

drover_kit::export!(Hostile);
