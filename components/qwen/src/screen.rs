//! Qwen Code screen rules (v1, for the Ink TUI of 0.24.x).
//!
//! Order matters. A pending tool confirmation comes first: while it waits
//! Qwen keeps a frozen `⠏` spinner on screen (without "esc to cancel"), so
//! the spinner rule must not claim it. Then busy evidence (the braille
//! spinner line `⠋ … (3s · esc to cancel)`), then the other prompts, then
//! the ready input box (`> Type your message or @path/to/file`).

use drover_kit::screen::{Region, ScreenRule};
use drover_kit::{PromptKind, SeatState};

pub const RULES: &[ScreenRule] = &[
    ScreenRule::blocked(
        "qwen/v1/permission-options",
        Region::Bottom(20),
        r"^\s*│?\s*(?:[●○◯❯›>]\s*)?\d+\.\s+(?:Yes, allow once|Yes, allow always|Always allow\b|No, suggest changes \(esc\))",
        PromptKind::Permission,
    ),
    ScreenRule::blocked(
        "qwen/v1/permission-question",
        Region::Bottom(20),
        r"^\s*│\s*(?:Apply this change\?|Allow execution of: .*\?|Do you want to proceed\?)\s*│?\s*$",
        PromptKind::Permission,
    ),
    ScreenRule::blocked(
        "qwen/v1/waiting-confirmation",
        Region::Bottom(10),
        r"(?i)^\s*⠏?\s*waiting for user confirmation",
        PromptKind::Permission,
    ),
    ScreenRule::new(
        "qwen/v1/esc-to-cancel",
        Region::Bottom(10),
        r"(?i)\besc to cancel\b",
        SeatState::Working,
    ),
    ScreenRule::new(
        "qwen/v1/spinner",
        Region::Bottom(10),
        r"^\s*[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]\s+\S",
        SeatState::Working,
    ),
    ScreenRule::new(
        "qwen/v1/retrying",
        Region::Bottom(10),
        r"(?i)\bretrying in \d+s\b",
        SeatState::Working,
    ),
    ScreenRule::blocked(
        "qwen/v1/trust",
        Region::All,
        r"(?i)^\s*│?\s*(?:do you trust this folder\?|(?:[●○❯]\s*)?\d\.\s+(?:trust folder \(|don't trust \(esc\)))",
        PromptKind::TrustDialog,
    ),
    ScreenRule::blocked(
        "qwen/v1/auth",
        Region::Bottom(20),
        r"(?i)^\s*│?\s*(?:how would you like to authenticate|get started|connect a provider)\b",
        PromptKind::Other,
    ),
    ScreenRule::blocked(
        "qwen/v1/choice",
        Region::Bottom(14),
        r"^\s*│\s*[●❯›]\s*\d+\.\s+\S",
        PromptKind::Question,
    ),
    ScreenRule::new(
        "qwen/v1/prompt",
        Region::Bottom(8),
        r"^\s*│?\s*[>*!]?\s*Type your (?:message or @path/to/file|shell command)",
        SeatState::Idle,
    ),
    // Typed text, or the follow-up Qwen proposes after a reply (`> OK`), in
    // the unboxed input row of 0.24.4; transcript rows are indented.
    ScreenRule::new(
        "qwen/v1/typed-input",
        Region::Bottom(5),
        r"^>\s+\S",
        SeatState::Idle,
    ),
    ScreenRule::new(
        "qwen/v1/empty-prompt",
        Region::Bottom(8),
        r"^\s*│\s*>\s*│?\s*$",
        SeatState::Idle,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    drover_kit::testing::screen_fixtures! {
        RULES; IDLE = "idle", WORKING = "working", PERMISSION = "permission", TRUST = "trust",
    }

    #[test]
    fn reads_each_state() {
        drover_kit::testing::assert_rule_states(
            state,
            &[
                (IDLE, SeatState::Idle, None, "qwen/v1/prompt"),
                (WORKING, SeatState::Working, None, "qwen/v1/esc-to-cancel"),
            ],
        );
        assert_eq!(state(PERMISSION).0, SeatState::Blocked);
        assert_eq!(state(PERMISSION).1, Some(PromptKind::Permission));
        assert_eq!(state(TRUST).1, Some(PromptKind::TrustDialog));
    }

    #[test]
    fn a_spinner_without_the_hint_is_still_working_even_above_the_prompt() {
        let s = "◆ Reading files\n\n  ⠼ Reticulating splines\n\n╭────────────────────────────────────╮\n│ >   Type your message or @path/to/file │\n╰────────────────────────────────────╯\n";
        drover_kit::testing::assert_rule_states(
            state,
            &[(s, SeatState::Working, None, "qwen/v1/spinner")],
        );
        let retry = "✕ [API Error: 429 Rate limit reached for requests]\nRetrying in 60s (attempt 1/10)\n╭──╮\n│ >   Type your message or @path/to/file │\n╰──╯\n";
        assert_eq!(state(retry).0, SeatState::Working);
    }

    #[test]
    fn questions_in_prose_above_an_idle_prompt_are_idle() {
        let s = "◆ Do you want to proceed? Would you like me to apply this change?\n  1. Yes, refactor it\n  2. No\nAllow execution of: 'rm'?\n\n╭──────────────────────────╮\n│ >   Type your message or @path/to/file │\n╰──────────────────────────╯\n";
        assert_eq!(state(s).0, SeatState::Idle);
    }

    #[test]
    fn a_frozen_confirmation_spinner_is_not_work() {
        let s = "╭──────────────────────────────╮\n│ ?  Shell rm -rf build         │\n│ Allow execution of: 'rm'?     │\n│ ● 1. Yes, allow once          │\n│   2. Always allow in this project │\n│   3. No, suggest changes (esc) │\n╰──────────────────────────────╯\n  ⠏ Waiting for user confirmation...\n";
        drover_kit::testing::assert_rule_states(
            state,
            &[(
                s,
                SeatState::Blocked,
                Some(PromptKind::Permission),
                "qwen/v1/permission-options",
            )],
        );
        assert_eq!(
            state("  ⠏ Waiting for user confirmation...\n").1,
            Some(PromptKind::Permission)
        );
    }

    #[test]
    fn nothing_known_is_unknown() {
        assert_eq!(state("random\ntext\n").0, SeatState::Unknown);
        assert_eq!(state("").2, "none");
    }
}
