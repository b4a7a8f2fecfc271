//! opencode screen rules (v1, for the 1.x TUI).
//!
//! The input box stays on screen while a turn runs (its placeholder `Ask
//! anything…` included), so the busy hint under it (`esc interrupt`, `esc
//! again to interrupt` after one Esc) must decide before the idle rule.
//! Permission and question prompts replace the input box and come first.

use drover_kit::screen::{Region, ScreenRule};
use drover_kit::{PromptKind, SeatState};

pub const RULES: &[ScreenRule] = &[
    ScreenRule::blocked(
        "opencode/v1/permission",
        Region::Bottom(30),
        r"^\s*[┃│]?\s*△\s+Permission required\s*$",
        PromptKind::Permission,
    ),
    ScreenRule::blocked(
        "opencode/v1/permission-options",
        Region::Bottom(12),
        r"^\s*[┃│]?\s*Allow once\s+Allow always\s+Reject\b",
        PromptKind::Permission,
    ),
    ScreenRule::blocked(
        "opencode/v1/question",
        Region::Bottom(12),
        r"↑↓\s+select\b.*\benter\s+(?:submit|confirm|toggle)\b.*\besc\s+dismiss\b",
        PromptKind::Question,
    ),
    ScreenRule::new(
        "opencode/v1/esc-interrupt",
        Region::Bottom(8),
        r"(?i)\besc (?:again to )?interrupt\b",
        SeatState::Working,
    ),
    ScreenRule::new(
        "opencode/v1/retrying",
        Region::Bottom(8),
        r"(?i)\bretrying in \d+s\b",
        SeatState::Working,
    ),
    ScreenRule::new(
        "opencode/v1/prompt",
        Region::Bottom(12),
        r"^\s*[┃│]?\s*Ask anything\b",
        SeatState::Idle,
    ),
    // In a session the input box is empty (no placeholder) once a turn has
    // run; the status line under it then shows the command hint, with no
    // busy hint before it (1.18.33).
    ScreenRule::new(
        "opencode/v1/session-footer",
        Region::Bottom(2),
        r"\bctrl\+p commands\b",
        SeatState::Idle,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    drover_kit::testing::screen_fixtures! {
        RULES; IDLE = "idle", WORKING = "working", PERMISSION = "permission",
        QUESTION = "question",
    }

    #[test]
    fn reads_each_state() {
        drover_kit::testing::assert_rule_states(
            state,
            &[
                (IDLE, SeatState::Idle, None, "opencode/v1/prompt"),
                (
                    WORKING,
                    SeatState::Working,
                    None,
                    "opencode/v1/esc-interrupt",
                ),
                (
                    PERMISSION,
                    SeatState::Blocked,
                    Some(PromptKind::Permission),
                    "opencode/v1/permission",
                ),
                (
                    QUESTION,
                    SeatState::Blocked,
                    Some(PromptKind::Question),
                    "opencode/v1/question",
                ),
            ],
        );
    }

    fn first_run(name: &str) -> String {
        drover_kit::testing::first_run_fixture(env!("CARGO_MANIFEST_DIR"), name)
    }

    /// A fresh opencode shows no dialog (fixtures/first-run/README.md):
    /// its home screen and its first reply must read idle, or drover would
    /// never type into it.
    #[test]
    fn every_first_run_screen_reads_idle_at_both_widths() {
        for idle in [
            "01-idle-w220",
            "01-idle-w80",
            "02-replied-w220",
            "02-replied-w80",
        ] {
            let (seat, _, rule) = state(&first_run(idle));
            assert_eq!(seat, SeatState::Idle, "{idle}: {rule}");
        }
        // Blank while it installs its plugin: not ready for input.
        assert_ne!(state(&"\n".repeat(24)).0, SeatState::Idle);
    }

    #[test]
    fn busy_hints_beat_the_visible_placeholder() {
        let armed = IDLE.replace("tab agents", "esc again to interrupt");
        assert_eq!(state(&armed).0, SeatState::Working);
        let retry = IDLE.replace("tab agents", "Rate limited [retrying in 5s attempt #2]");
        assert_eq!(state(&retry).0, SeatState::Working);
    }

    #[test]
    fn prose_about_permissions_is_not_a_prompt() {
        let prose = IDLE.replace(
            "TMUXOK",
            "I would ask: Permission required? You can Allow once  Allow always  Reject in the dialog.",
        );
        assert_eq!(state(&prose).0, SeatState::Idle);
        assert_eq!(state("nothing here\n").0, SeatState::Unknown);
    }
}
