//! Claims five capabilities and fails each in a different way, so the
//! conformance suite of `drover adapter check` has something to catch:
//! `prompt` is declined, a blank `screen` reads as blocked, every line
//! (prose too) is a `faults` auth error, `hook-payloads` panics on any
//! payload, and the `usage` parser reports zero (not none) for data without
//! usage.

use drover_kit::usage::{Ledger, RowParser};
use drover_kit::{
    Adapter, AdapterError, Capability, Fault, FaultKind, HookEvent, Metadata, ParserSpec, Profile,
    Screen, ScreenReading, SeatState,
};

struct Liar;

impl Adapter for Liar {
    const METADATA: Metadata = Metadata {
        capabilities: &[
            Capability::Prompt,
            Capability::HookPayloads,
            Capability::Usage,
            Capability::Faults,
            Capability::Screen,
        ],
        usage_parsers: &[ParserSpec {
            name: "liar-lines",
            needles: &[],
        }],
        ..Metadata::new("liar", "0.0.1")
    };

    fn render_prompt(_: &Profile, _: &str) -> Result<String, AdapterError> {
        Err(AdapterError::Unsupported("not today".to_string()))
    }

    fn parse_hook(_: &Profile, native: &str, _: &[u8]) -> Result<HookEvent, AdapterError> {
        panic!("liar cannot read {native}")
    }

    fn classify_fault(_: &Profile, lines: &[String]) -> Option<Fault> {
        lines.last().map(|line| Fault {
            kind: FaultKind::Auth,
            evidence: line.clone(),
            retry_after_secs: None,
            rule: "liar/everything".to_string(),
        })
    }

    fn read_screen(_: &Profile, _: &Screen) -> ScreenReading {
        ScreenReading {
            state: SeatState::Blocked,
            prompt_kind: None,
            rule: "liar/always-blocked".to_string(),
            evidence: String::new(),
            dialog: None,
        }
    }

    fn usage_parser(name: &str) -> Option<Box<dyn RowParser>> {
        (name == "liar-lines").then(|| Box::new(Rows) as Box<dyn RowParser>)
    }
}

/// Marks usage as seen whatever it reads, and counts nothing.
struct Rows;

impl RowParser for Rows {
    fn row(&mut self, _line: &[u8], ledger: &mut Ledger) {
        ledger.mark_seen();
    }
}

drover_kit::export!(Liar);
