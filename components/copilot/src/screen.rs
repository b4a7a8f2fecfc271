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

use drover_kit::dialog::{Listed, Menu};
use drover_kit::screen::{Region, ScreenRule};
use drover_kit::{ChoiceKind, PromptKind, SeatState};

/// The folder-trust dialog (fixtures/first-run/, README there): arrows
/// and Enter, verified.
const TRUST_OPTIONS: &[Listed] = &[
    Listed::new(r"^Yes$", ChoiceKind::AllowOnce),
    // Writes the folder into ~/.copilot/config.json: not asked again.
    Listed::new(r"^Yes, and remember this folder\b", ChoiceKind::AllowAlways),
    // Copilot exits.
    Listed::new(r"^No\b", ChoiceKind::RejectOnce),
];

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
    // The question row, so it is the dialog's text; the box title below
    // stands in when the question is out of view.
    ScreenRule::dialog(
        "copilot/v1/trust-question",
        Region::All,
        r"(?i)^\s*│?\s*do you trust the files in this folder\?",
        PromptKind::TrustDialog,
        Menu::Listed(TRUST_OPTIONS),
    ),
    ScreenRule::dialog(
        "copilot/v1/trust",
        Region::All,
        r"(?i)^\s*│?\s*confirm folder trust",
        PromptKind::TrustDialog,
        Menu::Listed(TRUST_OPTIONS),
    ),
    ScreenRule::dialog(
        "copilot/v1/permission",
        Region::Bottom(14),
        r"(?i)^\s*│?\s*do you want to (?:run this command|allow|proceed)\b",
        PromptKind::Permission,
        Menu::Numbered,
    ),
    ScreenRule::dialog(
        "copilot/v1/numbered-yes",
        Region::Bottom(14),
        r"^\s*│?\s*❯\s*1\.\s+Yes\b",
        PromptKind::Permission,
        Menu::Numbered,
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

    fn first_run(name: &str) -> String {
        drover_kit::testing::first_run_fixture(env!("CARGO_MANIFEST_DIR"), name)
    }

    #[test]
    fn every_first_run_dialog_reads_as_a_question_at_both_widths() {
        use drover_kit::testing::{DialogCase, assert_dialogs};
        let mut cases = Vec::new();
        for w in ["w220", "w80"] {
            cases.push(DialogCase {
                fixture: &*Box::leak(format!("02-trust-{w}").into_boxed_str()),
                rule: "copilot/v1/trust-question",
                kind: PromptKind::TrustDialog,
                text: "Do you trust the files in this folder?",
                choices: &[
                    ("Yes", ChoiceKind::AllowOnce, "enter"),
                    (
                        "Yes, and remember this folder for future sessions",
                        ChoiceKind::AllowAlways,
                        "down enter",
                    ),
                    ("No (Esc)", ChoiceKind::RejectOnce, "down down enter"),
                ],
            });
        }
        assert_dialogs(RULES, &cases, first_run);
        for idle in [
            "03-idle-w220",
            "03-idle-w80",
            "04-replied-w220",
            "04-replied-w80",
        ] {
            assert_eq!(state(&first_run(idle)).0, SeatState::Idle, "{idle}");
        }
        // The launch animation takes no input: nothing may be typed yet.
        for splash in ["01-splash-w220", "01-splash-w80"] {
            assert_ne!(state(&first_run(splash)).0, SeatState::Idle, "{splash}");
        }
    }

    #[test]
    fn older_dialogs_read_their_options() {
        use drover_kit::testing::{DialogCase, assert_dialogs};
        let fixture = |name: &str| match name {
            "trust" => TRUST.to_string(),
            _ => PERMISSION.to_string(),
        };
        assert_dialogs(
            RULES,
            &[
                DialogCase {
                    fixture: "trust",
                    rule: "copilot/v1/trust-question",
                    kind: PromptKind::TrustDialog,
                    text: "Do you trust the files in this folder?",
                    choices: &[
                        ("Yes", ChoiceKind::AllowOnce, "enter"),
                        (
                            "Yes, and remember this folder for future sessions",
                            ChoiceKind::AllowAlways,
                            "down enter",
                        ),
                        ("No (Esc)", ChoiceKind::RejectOnce, "down down enter"),
                    ],
                },
                DialogCase {
                    fixture: "permission",
                    rule: "copilot/v1/permission",
                    kind: PromptKind::Permission,
                    text: "Do you want to run this command?",
                    choices: &[
                        ("Yes", ChoiceKind::AllowOnce, "enter"),
                        (
                            "No, and tell Copilot what to do differently (Esc)",
                            ChoiceKind::RejectOnce,
                            "down enter",
                        ),
                    ],
                },
            ],
            fixture,
        );
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
            (
                "│ Do you trust the files in this folder? │\n",
                "copilot/v1/trust-question",
            ),
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
