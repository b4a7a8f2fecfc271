//! Codex screen rules (v1, for the 0.171 TUI: `›` composer with the
//! `Ask Codex` placeholder, `• Working (3s • esc to interrupt)` status line).
//!
//! Order matters: busy evidence first, then blocking screens, then idle.
//! Codex's dialogs are not boxed; the blocked rules match whole lines of a
//! dialog (its title, or a numbered option with the `›` highlight) so a reply
//! (`• …`) that talks about approvals does not read as one.

use drover_kit::screen::{Region, ScreenRule};
use drover_kit::{PromptKind, SeatState};

pub const RULES: &[ScreenRule] = &[
    ScreenRule::new(
        "codex/v1/esc-to-interrupt",
        Region::Bottom(10),
        r"(?i)\besc to interrupt\b",
        SeatState::Working,
    ),
    ScreenRule::new(
        "codex/v1/working",
        Region::Bottom(10),
        r"^\s*(?:[•◦]\s*)?Working \(",
        SeatState::Working,
    ),
    // The endless network retry is a turn still in progress; classify-fault
    // reports the fault.
    ScreenRule::new(
        "codex/v1/reconnecting",
        Region::Bottom(10),
        r"^\s*(?:[•◦■]\s*)?Reconnecting\.\.\.",
        SeatState::Working,
    ),
    // While a reply streams the pane may show no status line; the title
    // still spins (braille frames).
    ScreenRule::new(
        "codex/v1/title-spinner",
        Region::Title,
        r"^\s*[\x{2801}-\x{28FF}]",
        SeatState::Working,
    ),
    ScreenRule::blocked(
        "codex/v1/trust",
        Region::All,
        r"^\s*(?:>\s*)?(?:Do you trust the contents of this directory\?|You are running Codex in )|^\s*(?:[›>]\s*)?1\.\s+(?:Yes, allow|Allow) Codex to work in this folder",
        PromptKind::TrustDialog,
    ),
    ScreenRule::blocked(
        "codex/v1/hooks-review",
        Region::All,
        r"^\s*(?:⚠\s*)?(?:Hooks need review\s*$|\d+ hooks? needs? review\b)|^\s*(?:›\s*)?\d\.\s+Trust all and continue\b",
        PromptKind::HooksReview,
    ),
    ScreenRule::blocked(
        "codex/v1/model-nudge",
        Region::All,
        r"^\s*(?:Meet GPT-\S|(?:›\s*)?\d\.\s+(?:Try new model|Use existing model|Keep current model)\b)",
        PromptKind::ModelNudge,
    ),
    ScreenRule::blocked(
        "codex/v1/permission",
        Region::Bottom(16),
        r"^\s*(?:›\s*)?1\.\s+Yes\b.*\(y\)\s*$|^\s*(?:›\s*)?\d\.\s+No, and tell Codex what to do differently\b",
        PromptKind::Permission,
    ),
    // Any other dialog (update offer, pickers) waits for a key too.
    ScreenRule::blocked(
        "codex/v1/dialog",
        Region::Bottom(4),
        r"(?i)^\s*press enter to (?:confirm|continue|select)\b",
        PromptKind::Other,
    ),
    ScreenRule::new(
        "codex/v1/prompt",
        Region::Bottom(6),
        r"^\s*›\s*(?:Ask Codex\b.*)?$",
        SeatState::Idle,
    ),
    ScreenRule::new(
        "codex/v1/footer",
        Region::Bottom(3),
        r"^\s*(?:\? for shortcuts|\d+% context left)",
        SeatState::Idle,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::Screen;
    use drover_kit::screen::{read, rows_of};

    fn reading(text: &str, title: &str) -> (SeatState, Option<PromptKind>, String) {
        let r = read(
            RULES,
            &Screen {
                rows: rows_of(text),
                title: title.to_string(),
            },
        );
        (r.state, r.prompt_kind, r.rule)
    }

    fn state(text: &str) -> (SeatState, Option<PromptKind>, String) {
        reading(text, "codex")
    }

    drover_kit::testing::screen_fixtures!(
        IDLE = "idle",
        WORKING = "working",
        RECONNECTING = "reconnecting",
        HOOKS = "hooks-review",
        NUDGE = "model-nudge",
        TRUST = "trust",
        APPROVAL = "approval"
    );

    #[test]
    fn reads_each_state() {
        drover_kit::testing::assert_rule_states(
            state,
            &[
                (IDLE, SeatState::Idle, None, "codex/v1/prompt"),
                (
                    WORKING,
                    SeatState::Working,
                    None,
                    "codex/v1/esc-to-interrupt",
                ),
            ],
        );
        assert_eq!(state(RECONNECTING).0, SeatState::Working);
        drover_kit::testing::assert_rule_states(
            state,
            &[
                (
                    HOOKS,
                    SeatState::Blocked,
                    Some(PromptKind::HooksReview),
                    "codex/v1/hooks-review",
                ),
                (
                    NUDGE,
                    SeatState::Blocked,
                    Some(PromptKind::ModelNudge),
                    "codex/v1/model-nudge",
                ),
                (
                    TRUST,
                    SeatState::Blocked,
                    Some(PromptKind::TrustDialog),
                    "codex/v1/trust",
                ),
                (
                    APPROVAL,
                    SeatState::Blocked,
                    Some(PromptKind::Permission),
                    "codex/v1/permission",
                ),
            ],
        );
    }

    #[test]
    fn busy_lines_beat_the_idle_composer() {
        // Both show the composer and footer; neither may read idle.
        let working_no_hint =
            "• Ran ls\n\n• Working (4s)\n\n› Ask Codex to do anything\n\n  ? for shortcuts\n";
        assert_eq!(state(working_no_hint).0, SeatState::Working);
        let streaming = "› fix it\n\n• Looking at the code now\n\n› Ask Codex to do anything\n";
        assert_eq!(reading(streaming, "⠏ ⠏ | codex").0, SeatState::Working);
        assert_eq!(reading(streaming, "codex").0, SeatState::Idle);
    }

    #[test]
    fn other_placeholders_and_drafts_still_read_idle_by_the_footer() {
        let draft = "• TMUXOK\n\n› half-typed draft\n\n  ? for shortcuts                        100% context left\n";
        drover_kit::testing::assert_rule_states(
            state,
            &[(draft, SeatState::Idle, None, "codex/v1/footer")],
        );
    }

    #[test]
    fn a_question_in_prose_above_an_idle_prompt_is_idle() {
        let s = "› refactor the parser\n\n• Would you like to run the following command? Would you like me to proceed?\n  1. Yes, proceed with the refactor\n  2. No\n\n› Ask Codex to do anything\n\n  ? for shortcuts\n";
        assert_eq!(state(s).0, SeatState::Idle);
        let about_hooks = "• The Hooks need review screen appears on first start.\n\n› Ask Codex to do anything\n";
        assert_eq!(state(about_hooks).0, SeatState::Idle);
    }

    #[test]
    fn unknown_dialogs_block_and_nothing_is_unknown() {
        let update = "  ✨ Update available! 0.171.0 -> 0.172.0\n\n› 1. Update now\n  2. Skip\n  3. Skip until next version\n\n  Press enter to continue\n";
        drover_kit::testing::assert_rule_states(
            state,
            &[(
                update,
                SeatState::Blocked,
                Some(PromptKind::Other),
                "codex/v1/dialog",
            )],
        );
        assert_eq!(state("$ \n").0, SeatState::Unknown);
    }
}
