//! Codex screen rules (v1, for the 0.171 TUI: `›` composer with the
//! `Ask Codex` placeholder, `• Working (3s • esc to interrupt)` status line).
//!
//! Order matters: busy evidence first, then blocking screens, then idle.
//! Codex's dialogs are not boxed; the blocked rules match whole lines of a
//! dialog (its title, or a numbered option with the `›` highlight) so a reply
//! (`• …`) that talks about approvals does not read as one.
//!
//! The first-run dialogs of 0.171 (fixtures/first-run/, README there) read
//! with their options and the keys verified on them: arrows and Enter on
//! folder trust (there `1` only moves the highlight), digits on the model
//! nudge.

use drover_kit::dialog::{Keyed, Listed, Menu};
use drover_kit::screen::{Region, ScreenRule};
use drover_kit::{ChoiceKind, PromptKind, SeatState};

const FOLDER_ACCESS: &[Listed] = &[
    Listed::new(r"^Trust and continue$", ChoiceKind::AllowOnce),
    // Declines: nothing is written and the command center opens.
    Listed::new(r"^Back to Agent Command Center$", ChoiceKind::RejectOnce),
];
/// Enter (and Esc) take the highlighted `Try new model`, which rewrites
/// `model` in the user's config.toml; keeping the configured model is the
/// unattended choice.
const MODEL_NUDGE: &[Keyed] = &[
    Keyed::new("Try new model", ChoiceKind::Other, &["1"]),
    Keyed::new("Use existing model", ChoiceKind::AllowOnce, &["2"]),
];
const HOOKS_REVIEW: &[Listed] = &[
    Listed::new(r"^Review(?: hooks)?$", ChoiceKind::Other),
    Listed::new(r"^Trust all and continue$", ChoiceKind::AllowOnce),
    // Goes on with the hooks off.
    Listed::new(r"^Continue without trusting\b", ChoiceKind::RejectOnce),
];
/// Where declining folder trust lands: `n` opens the trust dialog again.
const COMMAND_CENTER: &[Keyed] = &[Keyed::new("New", ChoiceKind::AllowOnce, &["n"])];

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
    // 0.171's folder trust, titled `Folder access`.
    ScreenRule::dialog(
        "codex/v1/folder-access",
        Region::Bottom(16),
        r"^\s*Trust this folder\?",
        PromptKind::TrustDialog,
        Menu::Listed(FOLDER_ACCESS),
    ),
    // Older wordings.
    ScreenRule::dialog(
        "codex/v1/trust",
        Region::All,
        r"^\s*(?:>\s*)?(?:Do you trust the contents of this directory\?|You are running Codex in )|^\s*(?:[›>]\s*)?1\.\s+(?:Yes, allow|Allow) Codex to work in this folder",
        PromptKind::TrustDialog,
        Menu::Numbered,
    ),
    ScreenRule::dialog(
        "codex/v1/hooks-review",
        Region::All,
        r"^\s*(?:⚠\s*)?(?:Hooks need review\s*$|\d+ hooks? needs? review\b)|^\s*(?:›\s*)?\d\.\s+Trust all and continue\b",
        PromptKind::HooksReview,
        Menu::Listed(HOOKS_REVIEW),
    ),
    ScreenRule::dialog(
        "codex/v1/model-nudge",
        Region::All,
        r"^\s*(?:Meet GPT-\S|(?:›\s*)?\d\.\s+(?:Try new model|Use existing model|Keep current model)\b)",
        PromptKind::ModelNudge,
        Menu::Keys(MODEL_NUDGE),
    ),
    // The question row first, so it is the dialog's text; a long command
    // can push it out of view, and then the options stand in.
    ScreenRule::dialog(
        "codex/v1/permission",
        Region::Bottom(16),
        r"^\s*Would you like to (?:run the following command|make the following edits)\?|^\s*(?:›\s*)?1\.\s+Yes\b.*\(y\)\s*$|^\s*(?:›\s*)?\d\.\s+No, and tell Codex what to do differently\b",
        PromptKind::Permission,
        Menu::Numbered,
    ),
    // Not idle: no composer, and the first prompt cannot be typed here.
    ScreenRule::dialog(
        "codex/v1/command-center",
        Region::Top(3),
        r"^\s*Agent command center\b",
        PromptKind::Other,
        Menu::Keys(COMMAND_CENTER),
    ),
    // Any other dialog (update offer, pickers) waits for a key too.
    ScreenRule::blocked(
        "codex/v1/dialog",
        Region::Bottom(4),
        r"(?i)^\s*press enter to (?:confirm|continue|select)\b",
        PromptKind::Other,
    ),
    // The composer Codex draws before its config has loaded (header
    // `loading`): the trust dialog may still replace it, so nothing may be
    // typed yet.
    ScreenRule::new(
        "codex/v1/loading",
        Region::Top(4),
        r"^\s{4,}loading$",
        SeatState::Unknown,
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
                    rule: "codex/v1/folder-access",
                    kind: PromptKind::TrustDialog,
                    text: "Trust this folder?",
                    choices: &[
                        ("Trust and continue", ChoiceKind::AllowOnce, "enter"),
                        (
                            "Back to Agent Command Center",
                            ChoiceKind::RejectOnce,
                            "down enter",
                        ),
                    ],
                },
                DialogCase {
                    fixture: &*Box::leak(format!("02-model-nudge-{w}").into_boxed_str()),
                    rule: "codex/v1/model-nudge",
                    kind: PromptKind::ModelNudge,
                    text: "Meet GPT-6 Sol",
                    choices: &[
                        ("Try new model", ChoiceKind::Other, "1"),
                        ("Use existing model", ChoiceKind::AllowOnce, "2"),
                    ],
                },
                // After declining trust.
                DialogCase {
                    fixture: &*Box::leak(format!("branch-command-center-{w}").into_boxed_str()),
                    rule: "codex/v1/command-center",
                    kind: PromptKind::Other,
                    text: "Agent command center",
                    choices: &[("New", ChoiceKind::AllowOnce, "n")],
                },
            ]);
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
        // The early composer before the trust dialog. At 80 columns its
        // header already shows the path and nothing on it tells it from the
        // ready composer, so only the wide one is checked.
        assert_eq!(
            state(&first_run("00-before-trust-w220")),
            (SeatState::Unknown, None, "codex/v1/loading".to_string())
        );
    }

    #[test]
    fn older_dialogs_read_their_options() {
        use drover_kit::testing::{DialogCase, assert_dialogs};
        let fixture = |name: &str| match name {
            "trust" => TRUST.to_string(),
            "hooks" => HOOKS.to_string(),
            _ => APPROVAL.to_string(),
        };
        assert_dialogs(
            RULES,
            &[
                DialogCase {
                    fixture: "trust",
                    rule: "codex/v1/trust",
                    kind: PromptKind::TrustDialog,
                    text: "Do you trust the contents of this directory?",
                    choices: &[
                        ("Yes, continue", ChoiceKind::AllowOnce, "enter"),
                        ("No, quit", ChoiceKind::RejectOnce, "down enter"),
                    ],
                },
                DialogCase {
                    fixture: "hooks",
                    rule: "codex/v1/hooks-review",
                    kind: PromptKind::HooksReview,
                    text: "Hooks need review",
                    choices: &[
                        ("Review", ChoiceKind::Other, "enter"),
                        (
                            "Trust all and continue",
                            ChoiceKind::AllowOnce,
                            "down enter",
                        ),
                        (
                            "Continue without trusting",
                            ChoiceKind::RejectOnce,
                            "down down enter",
                        ),
                    ],
                },
                DialogCase {
                    fixture: "approval",
                    rule: "codex/v1/permission",
                    kind: PromptKind::Permission,
                    text: "Would you like to run the following command?",
                    choices: &[
                        ("Yes, proceed (y)", ChoiceKind::AllowOnce, "enter"),
                        (
                            "Yes, and don't ask again for commands that start with `echo hi` (p)",
                            ChoiceKind::AllowAlways,
                            "down enter",
                        ),
                        (
                            "No, and tell Codex what to do differently (esc)",
                            ChoiceKind::RejectOnce,
                            "down down enter",
                        ),
                    ],
                },
            ],
            fixture,
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
