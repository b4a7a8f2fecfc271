//! Claude Code screen rules (v1, for the 2.x TUI with `❯` prompt).
//!
//! Order matters: busy evidence first, then blocking prompts, then idle.
//! Every dialog Claude Code shows on a fresh config home before its prompt
//! (fixtures/first-run/, README there) reads as blocked with its options;
//! its menus take arrows and Enter, never digits.

use drover_kit::dialog::{Keyed, Listed, Menu};
use drover_kit::screen::{Region, ScreenRule};
use drover_kit::{ChoiceKind, PromptKind, SeatState};

const THEMES: &[Listed] = &[
    Listed::new(r"Auto \(match terminal\)$", ChoiceKind::AllowOnce),
    Listed::new(r"^(?:✔ )?Dark mode$", ChoiceKind::Other),
    Listed::new(r"^(?:✔ )?Light mode$", ChoiceKind::Other),
    Listed::new(
        r"^(?:✔ )?Dark mode \(colorblind-friendly\)$",
        ChoiceKind::Other,
    ),
    Listed::new(
        r"^(?:✔ )?Light mode \(colorblind-friendly\)$",
        ChoiceKind::Other,
    ),
    Listed::new(
        r"^(?:✔ )?Dark mode \(ANSI colors only\)$",
        ChoiceKind::Other,
    ),
    Listed::new(
        r"^(?:✔ )?Light mode \(ANSI colors only\)$",
        ChoiceKind::Other,
    ),
];
const API_KEY: &[Listed] = &[
    Listed::new(r"^Yes$", ChoiceKind::AllowOnce),
    Listed::new(r"^No \(recommended\)$", ChoiceKind::RejectOnce),
];
const CONTINUE: &[Keyed] = &[Keyed::new("Continue", ChoiceKind::AllowOnce, &["enter"])];
const TRUST: &[Listed] = &[
    Listed::new(r"^No, exit$", ChoiceKind::RejectOnce),
    Listed::new(r"^Yes, I trust this folder$", ChoiceKind::AllowOnce),
];
const BYPASS: &[Listed] = &[
    Listed::new(r"^No, exit$", ChoiceKind::RejectOnce),
    Listed::new(r"^Yes, I accept$", ChoiceKind::AllowOnce),
];

pub const RULES: &[ScreenRule] = &[
    ScreenRule::new(
        "claude/v1/esc-to-interrupt",
        Region::Bottom(10),
        r"(?i)\besc to interrupt\b",
        SeatState::Working,
    ),
    ScreenRule::new(
        "claude/v1/spinner",
        Region::Bottom(10),
        r"^\s*[·✢✳✶✻✽]\s+\S[^\n]*…",
        SeatState::Working,
    ),
    ScreenRule::new(
        "claude/v1/retrying",
        Region::Bottom(10),
        r"(?i)\bretrying in \d+s\b",
        SeatState::Working,
    ),
    // 2.1.332's folder trust: "No, exit" first and highlighted.
    ScreenRule::dialog(
        "claude/v1/trust",
        Region::All,
        r"(?i)is this a project you created or one you trust",
        PromptKind::TrustDialog,
        Menu::Listed(TRUST),
    ),
    // The older wording, a numbered menu.
    ScreenRule::dialog(
        "claude/v1/trust-numbered",
        Region::All,
        r"(?i)do you trust the files in this folder|yes, i trust this folder",
        PromptKind::TrustDialog,
        Menu::Numbered,
    ),
    // The one-time warning `--permission-mode bypassPermissions` opens on
    // until `skipDangerousModePermissionPrompt` is set.
    ScreenRule::dialog(
        "claude/v1/bypass",
        Region::All,
        r"^\s*WARNING: Claude Code running in Bypass Permissions mode",
        PromptKind::Other,
        Menu::Listed(BYPASS),
    ),
    ScreenRule::dialog(
        "claude/v1/theme",
        Region::All,
        r"^\s*Choose the text style that looks best with your terminal",
        PromptKind::Other,
        Menu::Listed(THEMES),
    ),
    ScreenRule::dialog(
        "claude/v1/security-notes",
        Region::All,
        r"^\s*Press Enter to continue\s*$",
        PromptKind::Other,
        Menu::Keys(CONTINUE),
    ),
    ScreenRule::dialog(
        "claude/v1/login",
        Region::All,
        r"^\s*Select login method:",
        PromptKind::Other,
        Menu::Numbered,
    ),
    ScreenRule::dialog(
        "claude/v1/api-key",
        Region::Bottom(14),
        r"(?i)^\s*│?\s*do you want to use this api key\?",
        PromptKind::Other,
        Menu::Listed(API_KEY),
    ),
    // First run without ~/.claude.json: any other onboarding screen
    // (2.1.332 shows "Welcome to Claude Code v…" on its first row) waits
    // for the user.
    ScreenRule::blocked(
        "claude/v1/onboarding",
        Region::Top(2),
        r"^\s*Welcome to Claude Code v\d",
        PromptKind::Other,
    ),
    ScreenRule::dialog(
        "claude/v1/resume-choice",
        Region::Bottom(14),
        r"(?i)^\s*│?\s*❯?\s*\d\.\s+resume (from summary|full session)",
        PromptKind::ResumeChoice,
        Menu::Numbered,
    ),
    ScreenRule::dialog(
        "claude/v1/permission",
        Region::Bottom(14),
        r"^\s*│?\s*❯\s*1\.\s+Yes\b",
        PromptKind::Permission,
        Menu::Numbered,
    ),
    ScreenRule::dialog(
        "claude/v1/question",
        Region::Bottom(14),
        r"^\s*│?\s*❯\s*\d+\.\s+\S",
        PromptKind::Question,
        Menu::Numbered,
    ),
    ScreenRule::new(
        "claude/v1/prompt",
        Region::Bottom(8),
        r#"^\s*│?\s*[❯>]\s*(?:Try "[^"]*"|Resend your message to try again|Once fixed, resend your message)?\s*│?\s*$"#,
        SeatState::Idle,
    ),
    ScreenRule::new(
        "claude/v1/shortcuts",
        Region::Bottom(4),
        r"^\s*(?:\? for shortcuts|⏵⏵ .*\(shift\+tab to cycle\))",
        SeatState::Idle,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn state(text: &str) -> (SeatState, Option<PromptKind>, String) {
        drover_kit::testing::state(RULES, text)
    }

    // Screens modelled on Claude Code 2.1.332 panes (docs/adapters/claude.md).
    const IDLE: &str = "╭───╮\n│ ✻ Welcome │\n╰───╯\n\n● TMUXOK\n\n────────────────\n❯ \n────────────────\n  ⏵⏵ auto mode on (shift+tab to cycle)\n";
    const WORKING: &str = "● Reading files\n\n✻ Pondering… (3s · ↑ 120 tokens · esc to interrupt)\n\n────────────────\n❯ \n────────────────\n  ⏵⏵ auto mode on (shift+tab to cycle)\n";
    const PERMISSION: &str = "● Bash(echo hi > hi.txt)\n────────────────\n Bash command\n\n   echo hi > hi.txt\n\n Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and don't ask again\n   3. No, and tell Claude what to do differently (esc)\n";
    const TRUST: &str = " Do you trust the files in this folder?\n\n /home/project\n\n ❯ 1. Yes, proceed\n   2. No, exit\n";

    #[test]
    fn reads_each_state() {
        assert_eq!(state(IDLE).0, SeatState::Idle);
        drover_kit::testing::assert_rule_states(
            state,
            &[(
                WORKING,
                SeatState::Working,
                None,
                "claude/v1/esc-to-interrupt",
            )],
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
        const THEME: &[(&str, ChoiceKind, &str)] = &[
            ("✔ Auto (match terminal)", ChoiceKind::AllowOnce, "enter"),
            ("Dark mode", ChoiceKind::Other, "down enter"),
            ("Light mode", ChoiceKind::Other, "down down enter"),
            (
                "Dark mode (colorblind-friendly)",
                ChoiceKind::Other,
                "down down down enter",
            ),
            (
                "Light mode (colorblind-friendly)",
                ChoiceKind::Other,
                "down down down down enter",
            ),
            (
                "Dark mode (ANSI colors only)",
                ChoiceKind::Other,
                "down down down down down enter",
            ),
            (
                "Light mode (ANSI colors only)",
                ChoiceKind::Other,
                "down down down down down down enter",
            ),
        ];
        const KEY: &[(&str, ChoiceKind, &str)] = &[
            ("Yes", ChoiceKind::AllowOnce, "up enter"),
            ("No (recommended)", ChoiceKind::RejectOnce, "enter"),
        ];
        let mut cases = Vec::new();
        for w in ["w220", "w80"] {
            cases.extend([
                DialogCase {
                    fixture: &*Box::leak(format!("01-theme-{w}").into_boxed_str()),
                    rule: "claude/v1/theme",
                    kind: PromptKind::Other,
                    text: "Choose the text style that looks best with your terminal",
                    choices: THEME,
                },
                DialogCase {
                    fixture: &*Box::leak(format!("02-api-key-{w}").into_boxed_str()),
                    rule: "claude/v1/api-key",
                    kind: PromptKind::Other,
                    text: "Do you want to use this API key?",
                    choices: KEY,
                },
                DialogCase {
                    fixture: &*Box::leak(format!("seeded-onboarded-api-key-{w}").into_boxed_str()),
                    rule: "claude/v1/api-key",
                    kind: PromptKind::Other,
                    text: "Do you want to use this API key?",
                    choices: KEY,
                },
                DialogCase {
                    fixture: &*Box::leak(format!("03-security-{w}").into_boxed_str()),
                    rule: "claude/v1/security-notes",
                    kind: PromptKind::Other,
                    text: "Press Enter to continue",
                    choices: &[("Continue", ChoiceKind::AllowOnce, "enter")],
                },
                DialogCase {
                    fixture: &*Box::leak(format!("04-trust-{w}").into_boxed_str()),
                    rule: "claude/v1/trust",
                    kind: PromptKind::TrustDialog,
                    text: "Quick safety check: Is this a project you created or one you trust?",
                    choices: &[
                        ("No, exit", ChoiceKind::RejectOnce, "enter"),
                        (
                            "Yes, I trust this folder",
                            ChoiceKind::AllowOnce,
                            "down enter",
                        ),
                    ],
                },
                DialogCase {
                    fixture: &*Box::leak(format!("05-bypass-{w}").into_boxed_str()),
                    rule: "claude/v1/bypass",
                    kind: PromptKind::Other,
                    text: "WARNING: Claude Code running in Bypass Permissions mode",
                    choices: &[
                        ("No, exit", ChoiceKind::RejectOnce, "enter"),
                        ("Yes, I accept", ChoiceKind::AllowOnce, "down enter"),
                    ],
                },
                DialogCase {
                    fixture: &*Box::leak(format!("branch-login-{w}").into_boxed_str()),
                    rule: "claude/v1/login",
                    kind: PromptKind::Other,
                    text: "Select login method:",
                    choices: &[
                        (
                            "Claude account with subscription · Individual, Team, or Enterprise",
                            ChoiceKind::Other,
                            "enter",
                        ),
                        (
                            "Anthropic Console account · API usage billing",
                            ChoiceKind::Other,
                            "down enter",
                        ),
                        (
                            "3rd-party platform · Bedrock, Microsoft Foundry, Google Vertex AI",
                            ChoiceKind::Other,
                            "down down enter",
                        ),
                    ],
                },
            ]);
        }
        assert_dialogs(RULES, &cases, first_run);
        for idle in [
            "06-idle-w220",
            "06-idle-w80",
            "07-replied-w220",
            "07-replied-w80",
        ] {
            assert_eq!(state(&first_run(idle)).0, SeatState::Idle, "{idle}");
        }
    }

    #[test]
    fn a_spinner_without_the_hint_is_still_working() {
        let s = "● x\n\n✶ Thinking…\n\n❯ \n";
        assert_eq!(state(s).0, SeatState::Working);
    }

    #[test]
    fn a_question_in_prose_above_an_idle_prompt_is_idle() {
        let s = "● Would you like me to proceed? Do you want to proceed?\n  1. Yes, refactor\n  2. No\n\n────────\n❯ \n────────\n";
        assert_eq!(state(s).0, SeatState::Idle);
    }
}
