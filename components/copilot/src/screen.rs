//! Copilot CLI screen rules (v1), from panes captured with 1.0.102
//! (tests/fixtures/real/copilot/pane-*.txt) and, for older versions, public
//! issue reports and peer screen manifests (docs/adapters/copilot.md).
//! Order: older versions' busy evidence, blocking prompts, 1.0.102's busy
//! row (it stays on screen under a dialog), idle.
//!
//! 1.0.102's busy line is the status row `◎ Working esc esc edit prompt`
//! (`● Working · 71 B esc esc interrupt` while output streams); older
//! versions print `◉ Thinking (Esc to cancel · 1.2 KiB)`, where only the
//! parenthesised hint counts, because selection dialogs print a bare
//! "Esc to cancel" in their footer.

use drover_kit::screen::{Region, ScreenRule};
use drover_kit::{PromptKind, SeatState};

pub const RULES: &[ScreenRule] = &[
    ScreenRule::new(
        "copilot/v1/esc-to-cancel",
        Region::Bottom(10),
        r"(?i)\(esc (?:again )?to (?:cancel|interrupt)\b",
        SeatState::Working,
    ),
    ScreenRule::new(
        "copilot/v1/esc-to-stop",
        Region::Bottom(10),
        r"(?i)^\s*esc to stop\s*$",
        SeatState::Working,
    ),
    ScreenRule::new(
        "copilot/v1/cancelling",
        Region::Bottom(10),
        r"^\s*●\s*Cancelling\b",
        SeatState::Working,
    ),
    ScreenRule::blocked(
        "copilot/v1/trust",
        Region::All,
        r"(?i)^\s*│?\s*(?:confirm folder trust|do you trust the files in this folder\?)",
        PromptKind::TrustDialog,
    ),
    ScreenRule::blocked(
        "copilot/v1/permission",
        Region::Bottom(14),
        r"(?i)^\s*│?\s*do you want to (?:run this command|allow|proceed)\b",
        PromptKind::Permission,
    ),
    ScreenRule::blocked(
        "copilot/v1/numbered-yes",
        Region::Bottom(14),
        r"^\s*│?\s*❯\s*1\.\s+Yes\b",
        PromptKind::Permission,
    ),
    ScreenRule::blocked(
        "copilot/v1/selection",
        Region::Bottom(8),
        r"(?i)\benter to (?:select|confirm|submit)\b",
        PromptKind::Question,
    ),
    // After the dialogs: 1.0.102 keeps its Working row on screen under an
    // approval dialog.
    ScreenRule::new(
        "copilot/v1/esc-esc",
        Region::Bottom(3),
        r"(?i)\besc esc (?:interrupt|edit prompt)\b",
        SeatState::Working,
    ),
    ScreenRule::new(
        "copilot/v1/prompt-hint",
        Region::Bottom(8),
        r"(?i)type @ to mention files",
        SeatState::Idle,
    ),
    ScreenRule::new(
        "copilot/v1/prompt",
        Region::Bottom(8),
        r"^\s*│?\s*❯\s*│?\s*$",
        SeatState::Idle,
    ),
    ScreenRule::new(
        "copilot/v1/status-bar",
        Region::Bottom(4),
        r"(?i)shift\+tab (?:to )?switch mode",
        SeatState::Idle,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    // Screens modelled on rows quoted in github/copilot-cli issues
    // (fixtures/README.md).
    drover_kit::testing::screen_fixtures! {
        RULES; IDLE = "idle", WORKING = "working", PERMISSION = "permission", TRUST = "trust",
    }

    #[test]
    fn reads_each_state() {
        drover_kit::testing::assert_rule_states(
            state,
            &[
                (IDLE, SeatState::Idle, None, "copilot/v1/prompt-hint"),
                (
                    WORKING,
                    SeatState::Working,
                    None,
                    "copilot/v1/esc-to-cancel",
                ),
            ],
        );
        assert_eq!(state(PERMISSION).1, Some(PromptKind::Permission));
        assert_eq!(state(TRUST).1, Some(PromptKind::TrustDialog));
    }

    #[test]
    fn working_wins_over_the_idle_prompt_below_it() {
        // The prompt box stays visible while the agent works.
        assert!(WORKING.contains("Type @ to mention files"));
        assert_eq!(state(WORKING).0, SeatState::Working);
    }

    #[test]
    fn a_dialog_footer_is_not_the_busy_hint() {
        let picker = "╭────╮\n│ Select a model │\n│ ❯ gpt-5.4 │\n│   claude-sonnet-4.6 │\n╰────╯\n ↑↓ to navigate · Enter to select · Esc to cancel\n";
        assert_eq!(state(picker).0, SeatState::Blocked);
    }

    #[test]
    fn a_question_in_prose_above_an_idle_prompt_is_idle() {
        let s = "● Do you want to run this command? I can do it next.\n  1. Yes, refactor\n\n────────\n❯ \n────────\n shift+tab switch mode\n";
        assert_eq!(state(s).0, SeatState::Idle);
    }

    #[test]
    fn every_rule_compiles_and_fires() {
        let samples = [
            (
                " ◎ Working esc esc edit prompt        gpt-4.1\n",
                "copilot/v1/esc-esc",
            ),
            (
                "◉ Thinking (Esc to cancel · 1.2 KiB)\n",
                "copilot/v1/esc-to-cancel",
            ),
            ("● Running tests\nEsc to stop\n", "copilot/v1/esc-to-stop"),
            ("● Cancelling\n", "copilot/v1/cancelling"),
            ("│ Confirm folder trust │\n", "copilot/v1/trust"),
            (
                "│ Do you want to run this command? │\n",
                "copilot/v1/permission",
            ),
            ("│ ❯ 1. Yes │\n", "copilot/v1/numbered-yes"),
            (
                " ↑↓ to navigate · Enter to select · Esc to cancel\n",
                "copilot/v1/selection",
            ),
            (
                "❯  Type @ to mention files, / for commands, or ? for shortcuts\n",
                "copilot/v1/prompt-hint",
            ),
            ("● done\n❯ \n", "copilot/v1/prompt"),
            ("● done\n shift+tab switch mode\n", "copilot/v1/status-bar"),
        ];
        drover_kit::testing::assert_every_rule_fires(RULES, &samples);
    }
}
