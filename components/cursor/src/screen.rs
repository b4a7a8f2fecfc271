//! cursor-agent screen rules (v1). No pane was captured by drover; rows come
//! from a peer screen manifest (herdr `cursor.toml`, 2026-08) and trust
//! dialogs quoted in integrators' reports (docs/adapters/cursor.md).
//!
//! Order: the trust dialog and the live approval choices come first,
//! because cursor-agent keeps its "ctrl+c to stop" hint on screen while it
//! waits for an approval (the peer manifest ranks approval above busy for
//! that reason); the choice rows only exist while the prompt is live. Then
//! busy evidence, then the approval questions. No idle rule: no idle marker
//! of this TUI is known, so a quiet pane reads as unknown.

use drover_kit::screen::{Region, ScreenRule};
use drover_kit::{PromptKind, SeatState};

pub const RULES: &[ScreenRule] = &[
    ScreenRule::blocked(
        "cursor/v1/trust",
        Region::All,
        r"(?i)^\s*(?:⚠\s*)?(?:workspace trust required|do you trust the contents of this directory\?)|\[a\] trust this workspace",
        PromptKind::TrustDialog,
    ),
    ScreenRule::blocked(
        "cursor/v1/run-choices",
        Region::Bottom(8),
        r"(?i)skip \(esc or n\)|\(y\)\s*\(enter\)",
        PromptKind::Permission,
    ),
    ScreenRule::blocked(
        "cursor/v1/write-choices",
        Region::Bottom(8),
        r"(?i)proceed \(y\)|reject & propose changes|esc or n or p",
        PromptKind::Permission,
    ),
    ScreenRule::new(
        "cursor/v1/ctrl-c-to-stop",
        Region::Bottom(6),
        r"(?i)ctrl\+c to stop",
        SeatState::Working,
    ),
    ScreenRule::new(
        "cursor/v1/background-tasks",
        Region::Bottom(5),
        r"(?i)\b[1-9][0-9]*\s+background\s+tasks?\b",
        SeatState::Working,
    ),
    ScreenRule::new(
        "cursor/v1/spinner",
        Region::Bottom(8),
        r"^\s*(?:⬡|⬢|[\x{2800}-\x{28FF}]+)\s+\w+ing\b",
        SeatState::Working,
    ),
    ScreenRule::blocked(
        "cursor/v1/approval",
        Region::Bottom(8),
        r"(?i)^\s*(?:run this command\?|write to this file\?|waiting for approval)",
        PromptKind::Permission,
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
            state(include_str!("../fixtures/screen-working.txt")).0,
            SeatState::Working
        );
        assert_eq!(
            state(include_str!("../fixtures/screen-approval.txt")),
            (
                SeatState::Blocked,
                Some(PromptKind::Permission),
                "cursor/v1/run-choices".to_string()
            )
        );
        assert_eq!(
            state(include_str!("../fixtures/screen-trust.txt")).1,
            Some(PromptKind::TrustDialog)
        );
    }

    #[test]
    fn a_live_approval_beats_the_stop_hint_but_a_stale_question_does_not() {
        let live = "  Run this command?\n  → Run (once) (y) (enter)\n    Skip (esc or n)\n\n ctrl+c to stop\n";
        assert_eq!(state(live).0, SeatState::Blocked);
        let answered =
            "  Run this command?\n  ✓ ran npm test\n\n  ⬢ Reading logs\n ctrl+c to stop\n";
        assert_eq!(state(answered).0, SeatState::Working);
    }

    #[test]
    fn a_quiet_pane_is_unknown_and_prose_is_not_a_prompt() {
        assert_eq!(
            state("● Done. Want me to run this command? (y) later\n").0,
            SeatState::Unknown
        );
        assert_eq!(state("All tests pass.\n").0, SeatState::Unknown);
    }

    #[test]
    fn every_rule_compiles_and_fires() {
        let samples = [
            ("⚠ Workspace Trust Required\n", "cursor/v1/trust"),
            ("    Skip (esc or n)\n", "cursor/v1/run-choices"),
            (
                "  Write to this file?\n  Proceed (y)\n",
                "cursor/v1/write-choices",
            ),
            ("  ctrl+c to stop\n", "cursor/v1/ctrl-c-to-stop"),
            ("  2 background tasks\n", "cursor/v1/background-tasks"),
            ("  ⬡ Thinking\n", "cursor/v1/spinner"),
            ("  Waiting for approval...\n", "cursor/v1/approval"),
        ];
        drover_kit::testing::assert_every_rule_fires(RULES, &samples);
    }
}
