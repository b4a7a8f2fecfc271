//! Claude Code screen rules (v1, for the 2.x TUI with `❯` prompt).
//!
//! Order matters: busy evidence first, then blocking prompts, then idle.

use drover_kit::screen::{Region, ScreenRule};
use drover_kit::{PromptKind, SeatState};

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
    ScreenRule::blocked(
        "claude/v1/trust",
        Region::All,
        r"(?i)do you trust the files in this folder|yes, i trust this folder|is this a project you created or one you trust",
        PromptKind::TrustDialog,
    ),
    // First run without ~/.claude.json: the onboarding screen (2.1.332
    // shows "Welcome to Claude Code v…" on its first row) waits for the user.
    ScreenRule::blocked(
        "claude/v1/onboarding",
        Region::Top(2),
        r"^\s*Welcome to Claude Code v\d",
        PromptKind::Other,
    ),
    ScreenRule::blocked(
        "claude/v1/api-key",
        Region::Bottom(14),
        r"(?i)^\s*│?\s*do you want to use this api key\?",
        PromptKind::Other,
    ),
    ScreenRule::blocked(
        "claude/v1/resume-choice",
        Region::Bottom(14),
        r"(?i)^\s*│?\s*❯?\s*\d\.\s+resume (from summary|full session)",
        PromptKind::ResumeChoice,
    ),
    ScreenRule::blocked(
        "claude/v1/permission",
        Region::Bottom(14),
        r"^\s*│?\s*❯\s*1\.\s+Yes\b",
        PromptKind::Permission,
    ),
    ScreenRule::blocked(
        "claude/v1/question",
        Region::Bottom(14),
        r"^\s*│?\s*❯\s*\d+\.\s+\S",
        PromptKind::Question,
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
