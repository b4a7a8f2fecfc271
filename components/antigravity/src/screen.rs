//! agy screen rules (v1). No pane was captured by drover; rows come from
//! public issue reports, bmad-loop's trust-dialog report and a peer screen
//! manifest (docs/adapters/antigravity.md). Order: busy evidence, blocking
//! prompts, idle.

use drover_kit::screen::{Region, ScreenRule};
use drover_kit::{PromptKind, SeatState};

pub const RULES: &[ScreenRule] = &[
    ScreenRule::new(
        "antigravity/v1/spinner",
        Region::Bottom(10),
        r"^\s*[\x{2800}-\x{28FF}]+\s+\w+ing\b",
        SeatState::Working,
    ),
    ScreenRule::new(
        "antigravity/v1/background-tasks",
        Region::Bottom(5),
        r"(?i)·\s*[1-9][0-9]*\s+tasks?\b",
        SeatState::Working,
    ),
    ScreenRule::blocked(
        "antigravity/v1/trust",
        Region::All,
        r"(?i)^\s*(?:do you trust the contents of this project\?|>?\s*yes, i trust this folder)",
        PromptKind::TrustDialog,
    ),
    ScreenRule::blocked(
        "antigravity/v1/permission",
        Region::Bottom(14),
        r"(?i)^\s*(?:requesting permission for:|do you want to proceed\?)",
        PromptKind::Permission,
    ),
    ScreenRule::blocked(
        "antigravity/v1/file-access",
        Region::Bottom(14),
        r"(?i)^\s*(?:>|❯)?\s*1\.\s+yes, allow access\b",
        PromptKind::Permission,
    ),
    ScreenRule::new(
        "antigravity/v1/shortcuts",
        Region::Bottom(4),
        r"^\s*\?\s+for shortcuts\s*$",
        SeatState::Idle,
    ),
    ScreenRule::new(
        "antigravity/v1/prompt",
        Region::Bottom(6),
        r"^\s*>\s*$",
        SeatState::Idle,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn state(text: &str) -> (SeatState, Option<PromptKind>, String) {
        drover_kit::testing::state(RULES, text)
    }

    #[test]
    fn reads_each_state() {
        assert_eq!(
            state(include_str!("../fixtures/screen-idle.txt")).0,
            SeatState::Idle
        );
        let working = include_str!("../fixtures/screen-working.txt");
        drover_kit::testing::assert_rule_states(
            state,
            &[(working, SeatState::Working, None, "antigravity/v1/spinner")],
        );
        assert_eq!(
            state(include_str!("../fixtures/screen-permission.txt")).1,
            Some(PromptKind::Permission)
        );
        assert_eq!(
            state(include_str!("../fixtures/screen-trust.txt")).1,
            Some(PromptKind::TrustDialog)
        );
        let file_access = "● Create(/tmp/x.txt)\n\nFile access\n────────\n 1. Yes, allow access\n 2. Yes, and always allow non-workspace access\n 3. No, deny access\n";
        assert_eq!(state(file_access).1, Some(PromptKind::Permission));
    }

    #[test]
    fn a_spinner_beats_the_idle_prompt_below_it() {
        let working = include_str!("../fixtures/screen-working.txt");
        assert!(working.contains("? for shortcuts"));
        assert_eq!(state(working).0, SeatState::Working);
    }

    #[test]
    fn a_question_in_prose_above_an_idle_prompt_is_idle() {
        let s = "● Do you want to proceed? I can also requesting permission for: nothing.\n\n  >\n? for shortcuts\n";
        assert_eq!(state(s).0, SeatState::Idle);
    }

    #[test]
    fn every_rule_compiles_and_fires() {
        let samples = [
            ("⠋ Thinking…\n", "antigravity/v1/spinner"),
            (
                "● done\n  agy · 2 tasks\n",
                "antigravity/v1/background-tasks",
            ),
            (
                "> Yes, I trust this folder\n  No, exit\n",
                "antigravity/v1/trust",
            ),
            (
                "Requesting permission for:\n  ls\n",
                "antigravity/v1/permission",
            ),
            (" 1. Yes, allow access\n", "antigravity/v1/file-access"),
            ("● ok\n? for shortcuts\n", "antigravity/v1/shortcuts"),
            ("● ok\n  >\n", "antigravity/v1/prompt"),
        ];
        drover_kit::testing::assert_every_rule_fires(RULES, &samples);
    }
}
