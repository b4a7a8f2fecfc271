//! Gemini CLI screen rules (v1, for the 0.5x–0.61 Ink TUI).
//!
//! The input box keeps showing `Type your message or @path/to/file` while
//! the model works, so busy evidence comes first: `(esc to cancel, 3s)` and
//! a spinning `⠙ Executing Hooks: …` (a still one stays after the turn). Blocking dialogs come next; their options are
//! numbered radio rows whose highlighted row starts with `●`, which prose in
//! a reply never has. The braille spinner only counts after them because a
//! pending confirmation shows a still `⠏ Waiting for user confirmation...`
//! and the auth wait spins too. Replies are printed after `✦`.
//!
//! The first-run dialogs (fixtures/first-run/, README there) read with
//! their options. Answering trust relaunches Gemini in the same pane and
//! leaves the old trust box above what follows, so the dialogs that come
//! after it are tried first and trust looks only near the bottom. Radio
//! menus take arrows and Enter (digits too, but arrows are generic).

use drover_kit::dialog::{Keyed, Listed, Menu};
use drover_kit::screen::{Region, ScreenRule};
use drover_kit::{ChoiceKind, PromptKind, SeatState};

/// A highlighted radio option: `● 1. <label>`, maybe inside a `│` box.
macro_rules! option {
    ($labels:literal) => {
        concat!(r"^\s*│?\s*●\s*\d+\.\s+(?:", $labels, ")")
    };
}

/// The folder's name and its parent's are in the labels.
const TRUST_OPTIONS: &[Listed] = &[
    Listed::new(r"^Trust folder \(", ChoiceKind::AllowOnce),
    // Trusts more than asked: not what an unattended yes means.
    Listed::new(r"^Trust parent folder \(", ChoiceKind::Other),
    Listed::new(r"^Don't trust$", ChoiceKind::RejectOnce),
];
/// 0.61 says `Sign in with Google`, older ones `Login with Google`.
const AUTH_OPTIONS: &[Listed] = &[
    Listed::new(r"^(?:Sign in|Login) with Google$", ChoiceKind::Other),
    // With GEMINI_API_KEY set (drover's way) this is the one that proceeds.
    Listed::new(r"^Use Gemini API Key$", ChoiceKind::AllowOnce),
    Listed::new(r"^Vertex AI$", ChoiceKind::Other),
];
/// A text field pre-filled with GEMINI_API_KEY: Enter keeps it, Esc goes
/// back to the auth choice.
const API_KEY: &[Keyed] = &[
    Keyed::new("Submit", ChoiceKind::AllowOnce, &["enter"]),
    Keyed::new("Cancel", ChoiceKind::RejectOnce, &["escape"]),
];

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
    ScreenRule::dialog(
        "gemini/v1/permission",
        Region::Bottom(24),
        option!(
            r"Yes, allow (?:once|always)|Allow once|Allow (?:tool |all server tools )?for this session|Modify with external editor|No, suggest changes \(esc\)"
        ),
        PromptKind::Permission,
        Menu::Numbered,
    ),
    ScreenRule::dialog(
        "gemini/v1/model-nudge",
        Region::Bottom(24),
        option!(r"Keep trying|Switch to \S+|Upgrade for higher limits"),
        PromptKind::ModelNudge,
        Menu::Numbered,
    ),
    ScreenRule::dialog(
        "gemini/v1/loop-detection",
        Region::Bottom(24),
        option!(r"Keep loop detection enabled|Disable loop detection for this session"),
        PromptKind::Question,
        Menu::Numbered,
    ),
    // Auth and API key come after trust's relaunch, below its stale box:
    // tried before trust so the newest dialog wins.
    ScreenRule::dialog(
        "gemini/v1/auth",
        Region::Bottom(24),
        r"^\s*│?\s*How would you like to authenticate\b",
        PromptKind::Other,
        Menu::Listed(AUTH_OPTIONS),
    ),
    ScreenRule::dialog(
        "gemini/v1/api-key",
        Region::Bottom(24),
        r"^\s*│?\s*Enter Gemini API Key\s*│?$",
        PromptKind::Other,
        Menu::Keys(API_KEY),
    ),
    // Near the bottom only: after the relaunch the answered box stays on
    // screen above the banner and the prompt.
    ScreenRule::dialog(
        "gemini/v1/trust-title",
        Region::Bottom(20),
        r"^\s*│?\s*Do you trust (?:the files in )?this folder\?",
        PromptKind::TrustDialog,
        Menu::Listed(TRUST_OPTIONS),
    ),
    // The title scrolled off a short pane: its first option still shows.
    ScreenRule::dialog(
        "gemini/v1/trust",
        Region::Bottom(10),
        r"^\s*│?\s*(?:●\s*)?1\.\s+Trust folder \(",
        PromptKind::TrustDialog,
        Menu::Listed(TRUST_OPTIONS),
    ),
    // Any other radio menu (ask-user): after the known ones, before the
    // still `⠏ Waiting for user confirmation...` an ask-user shows too.
    ScreenRule::dialog(
        "gemini/v1/question",
        Region::Bottom(20),
        option!(r"\S"),
        PromptKind::Question,
        Menu::Numbered,
    ),
    // An ask-user whose options are out of view, or a free-text one.
    ScreenRule::blocked(
        "gemini/v1/question-footer",
        Region::Bottom(24),
        r"^\s*│?\s*Enter to (?:submit|select) · .*Esc to cancel",
        PromptKind::Question,
    ),
    ScreenRule::blocked(
        "gemini/v1/waiting-confirmation",
        Region::Bottom(12),
        r"^\s*(?:⠏\s+)?Waiting for user confirmation\.\.\.",
        PromptKind::Permission,
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

    fn first_run(name: &str) -> String {
        drover_kit::testing::first_run_fixture(env!("CARGO_MANIFEST_DIR"), name)
    }

    #[test]
    fn every_first_run_dialog_reads_as_a_question_at_both_widths() {
        use drover_kit::testing::{DialogCase, assert_dialogs};
        let mut cases = Vec::new();
        for w in ["w220", "w80"] {
            cases.extend([
                DialogCase {
                    fixture: &*Box::leak(format!("01-trust-{w}").into_boxed_str()),
                    rule: "gemini/v1/trust-title",
                    kind: PromptKind::TrustDialog,
                    text: "Do you trust the files in this folder?",
                    choices: &[
                        ("Trust folder (project)", ChoiceKind::AllowOnce, "enter"),
                        (
                            "Trust parent folder (user)",
                            ChoiceKind::Other,
                            "down enter",
                        ),
                        ("Don't trust", ChoiceKind::RejectOnce, "down down enter"),
                    ],
                },
                // At w220 the answered trust box is still above it.
                DialogCase {
                    fixture: &*Box::leak(format!("02-auth-method-{w}").into_boxed_str()),
                    rule: "gemini/v1/auth",
                    kind: PromptKind::Other,
                    text: "How would you like to authenticate for this project?",
                    choices: &[
                        ("Sign in with Google", ChoiceKind::Other, "up enter"),
                        ("Use Gemini API Key", ChoiceKind::AllowOnce, "enter"),
                        ("Vertex AI", ChoiceKind::Other, "down enter"),
                    ],
                },
                DialogCase {
                    fixture: &*Box::leak(format!("03-api-key-{w}").into_boxed_str()),
                    rule: "gemini/v1/api-key",
                    kind: PromptKind::Other,
                    text: "Enter Gemini API Key",
                    choices: &[
                        ("Submit", ChoiceKind::AllowOnce, "enter"),
                        ("Cancel", ChoiceKind::RejectOnce, "escape"),
                    ],
                },
            ]);
        }
        assert_dialogs(RULES, &cases, first_run);
        // The w220 ones keep the answered trust box in view.
        for idle in [
            "04-idle-w220",
            "04-idle-w80",
            "05-replied-w220",
            "05-replied-w80",
        ] {
            assert_eq!(state(&first_run(idle)).0, SeatState::Idle, "{idle}");
        }
    }

    #[test]
    fn the_answered_trust_box_above_a_relaunch_does_not_count() {
        // A taller pane keeps the whole old box, title included, in view.
        let trust = first_run("01-trust-w220");
        let old_box = trust.trim_end();
        let after = |name: &str| {
            let text = first_run(name);
            let rows: Vec<&str> = text.lines().collect();
            let below = rows.iter().position(|r| r.trim_start().starts_with('╰'));
            format!(
                "{old_box}\n{}",
                rows[below.expect("old box") + 1..].join("\n")
            )
        };
        assert_eq!(state(&after("05-replied-w220")).0, SeatState::Idle);
        assert_eq!(state(&after("04-idle-w220")).0, SeatState::Idle);
        assert_eq!(state(&after("02-auth-method-w220")).2, "gemini/v1/auth");
        assert_eq!(state(&after("03-api-key-w220")).2, "gemini/v1/api-key");
    }

    #[test]
    fn tool_and_other_dialogs_read_their_numbered_options() {
        use drover_kit::testing::{DialogCase, assert_dialogs};
        let fixture = |name: &str| match name {
            "permission" => PERMISSION.to_string(),
            "permission-old" => PERMISSION_OLD.to_string(),
            "trust" => TRUST.to_string(),
            "auth" => AUTH.to_string(),
            "model-nudge" => MODEL_NUDGE.to_string(),
            "question" => QUESTION.to_string(),
            other => panic!("{other}"),
        };
        assert_dialogs(
            RULES,
            &[
                DialogCase {
                    fixture: "permission",
                    rule: "gemini/v1/permission",
                    kind: PromptKind::Permission,
                    text: "Allow execution of: 'echo'?",
                    choices: &[
                        ("Allow once", ChoiceKind::AllowOnce, "enter"),
                        (
                            "Allow for this session",
                            ChoiceKind::AllowAlways,
                            "down enter",
                        ),
                        (
                            "No, suggest changes (esc)",
                            ChoiceKind::RejectOnce,
                            "down down enter",
                        ),
                    ],
                },
                DialogCase {
                    fixture: "permission-old",
                    rule: "gemini/v1/permission",
                    kind: PromptKind::Permission,
                    text: "Allow execution of: 'echo'?",
                    choices: &[
                        ("Yes, allow once", ChoiceKind::AllowOnce, "enter"),
                        (
                            "Yes, allow always ...",
                            ChoiceKind::AllowAlways,
                            "down enter",
                        ),
                        (
                            "No, suggest changes (esc)",
                            ChoiceKind::RejectOnce,
                            "down down enter",
                        ),
                    ],
                },
                DialogCase {
                    fixture: "trust",
                    rule: "gemini/v1/trust-title",
                    kind: PromptKind::TrustDialog,
                    text: "Do you trust the files in this folder?",
                    choices: &[
                        ("Trust folder (gemini)", ChoiceKind::AllowOnce, "enter"),
                        (
                            "Trust parent folder (work)",
                            ChoiceKind::Other,
                            "down enter",
                        ),
                        ("Don't trust", ChoiceKind::RejectOnce, "down down enter"),
                    ],
                },
                DialogCase {
                    fixture: "auth",
                    rule: "gemini/v1/auth",
                    kind: PromptKind::Other,
                    text: "How would you like to authenticate for this project?",
                    choices: &[
                        ("Login with Google", ChoiceKind::Other, "enter"),
                        ("Use Gemini API Key", ChoiceKind::AllowOnce, "down enter"),
                        ("Vertex AI", ChoiceKind::Other, "down down enter"),
                    ],
                },
                DialogCase {
                    fixture: "model-nudge",
                    rule: "gemini/v1/model-nudge",
                    kind: PromptKind::ModelNudge,
                    text: "We are currently experiencing high demand.",
                    choices: &[
                        ("Keep trying", ChoiceKind::Other, "enter"),
                        (
                            "Switch to gemini-3.5-flash-lite",
                            ChoiceKind::Other,
                            "down enter",
                        ),
                        ("Stop", ChoiceKind::Other, "down down enter"),
                    ],
                },
                DialogCase {
                    fixture: "question",
                    rule: "gemini/v1/question",
                    kind: PromptKind::Question,
                    text: "Select your preferred language:",
                    choices: &[
                        ("TypeScript", ChoiceKind::Other, "up up enter"),
                        ("JavaScript", ChoiceKind::Other, "up enter"),
                        ("Enter a custom value", ChoiceKind::Other, "enter"),
                    ],
                },
            ],
            fixture,
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
