//! Gemini CLI screen rules (v1, for the 0.5x–0.61 Ink TUI).
//!
//! The input box keeps showing `Type your message or @path/to/file` while
//! the model works, so busy evidence comes first: `(esc to cancel, 3s)` and
//! a spinning `⠙ Executing Hooks: …` (a still one stays after the turn). Blocking dialogs come next; their options are
//! numbered radio rows whose highlighted row starts with `●`, which prose in
//! a reply never has. The braille spinner only counts after them because a
//! pending confirmation shows a still `⠏ Waiting for user confirmation...`
//! and the auth wait spins too. Replies are printed after `✦`.

use drover_kit::screen::{Region, ScreenRule};
use drover_kit::{PromptKind, SeatState};

/// A highlighted radio option: `● 1. <label>`, maybe inside a `│` box.
macro_rules! option {
    ($labels:literal) => {
        concat!(r"^\s*│?\s*●\s*\d+\.\s+(?:", $labels, ")")
    };
}

pub const RULES: &[ScreenRule] = &[
    ScreenRule::new(
        "gemini/v1/esc-to-cancel",
        Region::Bottom(12),
        r"\(esc to cancel, \d",
        SeatState::Working,
    ),
    // Only with its spinner: 0.61.0 leaves a still `Executing Hook(s): …`
    // line (the hooks the last turn ran) above the ready prompt.
    ScreenRule::new(
        "gemini/v1/executing-hooks",
        Region::Bottom(12),
        r"^\s*[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]\s+Executing Hooks?: \S",
        SeatState::Working,
    ),
    ScreenRule::blocked(
        "gemini/v1/question",
        Region::Bottom(24),
        r"^\s*│?\s*Enter to (?:submit|select) · .*Esc to cancel",
        PromptKind::Question,
    ),
    ScreenRule::blocked(
        "gemini/v1/permission",
        Region::Bottom(24),
        option!(
            r"Yes, allow (?:once|always)|Allow once|Allow (?:tool |all server tools )?for this session|Modify with external editor|No, suggest changes \(esc\)"
        ),
        PromptKind::Permission,
    ),
    ScreenRule::blocked(
        "gemini/v1/waiting-confirmation",
        Region::Bottom(12),
        r"^\s*(?:⠏\s+)?Waiting for user confirmation\.\.\.",
        PromptKind::Permission,
    ),
    ScreenRule::blocked(
        "gemini/v1/trust-title",
        Region::Bottom(30),
        r"^\s*│?\s*Do you trust (?:the files in )?this folder\?",
        PromptKind::TrustDialog,
    ),
    ScreenRule::blocked(
        "gemini/v1/trust",
        Region::Bottom(30),
        option!(r"Trust folder \(|Trust parent folder \(|Don't trust\b"),
        PromptKind::TrustDialog,
    ),
    ScreenRule::blocked(
        "gemini/v1/model-nudge",
        Region::Bottom(24),
        option!(r"Keep trying|Switch to \S+|Upgrade for higher limits"),
        PromptKind::ModelNudge,
    ),
    ScreenRule::blocked(
        "gemini/v1/loop-detection",
        Region::Bottom(24),
        option!(r"Keep loop detection enabled|Disable loop detection for this session"),
        PromptKind::Question,
    ),
    ScreenRule::blocked(
        "gemini/v1/auth",
        Region::Bottom(30),
        option!(r"Login with Google|Use Gemini API Key|Vertex AI"),
        PromptKind::Other,
    ),
    ScreenRule::blocked(
        "gemini/v1/auth-wait",
        Region::Bottom(12),
        r"^\s*│?\s*(?:[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]\s+)?Waiting for authentication\.\.\.",
        PromptKind::Other,
    ),
    ScreenRule::new(
        "gemini/v1/spinner",
        Region::Bottom(12),
        r"^\s*[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]\s+\S",
        SeatState::Working,
    ),
    ScreenRule::new(
        "gemini/v1/prompt",
        Region::Bottom(8),
        r"^\s*│?\s*[>*!]?\s*Type your message\b",
        SeatState::Idle,
    ),
    ScreenRule::new(
        "gemini/v1/typed-input",
        Region::Bottom(5),
        r"^\s*│?\s*[>*]\s+\S",
        SeatState::Idle,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    // Screens modelled on Gemini CLI 0.61.0 panes (docs/adapters/gemini.md
    // §4) and gemini-cli's UI snapshots; see fixtures/README.md.
    drover_kit::testing::screen_fixtures! {
        RULES; IDLE = "idle", WORKING = "working", HOOKS = "hooks", PERMISSION = "permission",
        PERMISSION_OLD = "permission-old", TRUST = "trust", AUTH = "auth",
        MODEL_NUDGE = "model-nudge", QUESTION = "question", PROSE = "prose", TYPED = "typed",
    }

    #[test]
    fn reads_each_state() {
        drover_kit::testing::assert_rule_states(
            state,
            &[
                (IDLE, SeatState::Idle, None, "gemini/v1/prompt"),
                (WORKING, SeatState::Working, None, "gemini/v1/esc-to-cancel"),
                (HOOKS, SeatState::Working, None, "gemini/v1/executing-hooks"),
                (
                    PERMISSION,
                    SeatState::Blocked,
                    Some(PromptKind::Permission),
                    "gemini/v1/permission",
                ),
            ],
        );
        assert_eq!(state(PERMISSION_OLD).1, Some(PromptKind::Permission));
        drover_kit::testing::assert_rule_states(
            state,
            &[
                (
                    TRUST,
                    SeatState::Blocked,
                    Some(PromptKind::TrustDialog),
                    "gemini/v1/trust-title",
                ),
                (
                    AUTH,
                    SeatState::Blocked,
                    Some(PromptKind::Other),
                    "gemini/v1/auth",
                ),
            ],
        );
        assert_eq!(state(MODEL_NUDGE).1, Some(PromptKind::ModelNudge));
        drover_kit::testing::assert_rule_states(
            state,
            &[
                (
                    QUESTION,
                    SeatState::Blocked,
                    Some(PromptKind::Question),
                    "gemini/v1/question",
                ),
                (TYPED, SeatState::Idle, None, "gemini/v1/typed-input"),
            ],
        );
    }

    #[test]
    fn never_idle_while_busy_though_the_input_box_shows() {
        for busy in [WORKING, HOOKS] {
            assert!(busy.contains("Type your message"));
            assert_eq!(state(busy).0, SeatState::Working);
        }
        let spinner_only = "⠼ Working...\n────\n >   Type your message or @path/to/file\n────\n";
        drover_kit::testing::assert_rule_states(
            state,
            &[(spinner_only, SeatState::Working, None, "gemini/v1/spinner")],
        );
        let one_hook = "⠙ Executing Hook: drover\n >   Type your message or @path/to/file\n";
        assert_eq!(state(one_hook).0, SeatState::Working);
    }

    #[test]
    fn a_still_spinner_beside_a_confirmation_is_blocked_not_working() {
        let waiting =
            "⠏ Waiting for user confirmation...\n────\n >   Type your message or @path/to/file\n";
        drover_kit::testing::assert_rule_states(
            state,
            &[(
                waiting,
                SeatState::Blocked,
                Some(PromptKind::Permission),
                "gemini/v1/waiting-confirmation",
            )],
        );
        let auth = "⠙ Waiting for authentication... (Press Esc or CTRL+C to cancel)\n";
        assert_eq!(state(auth).1, Some(PromptKind::Other));
    }

    #[test]
    fn questions_and_options_in_prose_are_not_prompts() {
        drover_kit::testing::assert_rule_states(
            state,
            &[(PROSE, SeatState::Idle, None, "gemini/v1/prompt")],
        );
        let prose_then_working = format!("{PROSE}\n⠋ Thinking... (esc to cancel, 1s)\n");
        assert_eq!(state(&prose_then_working).0, SeatState::Working);
    }

    #[test]
    fn nothing_known_is_unknown() {
        let shell = "$ gemini --resume 7c0e\nTo resume this session: gemini --resume 7c0e5d2a\n$ ";
        drover_kit::testing::assert_rule_states(
            state,
            &[(shell, SeatState::Unknown, None, "none")],
        );
    }
}
