//! Qwen Code screen rules (v1, for the Ink TUI of 0.24.x).
//!
//! Order matters. A pending tool confirmation comes first: while it waits
//! Qwen keeps a frozen `⠏` spinner on screen (without "esc to cancel"), so
//! the spinner rule must not claim it. Then busy evidence (the braille
//! spinner line `⠋ … (3s · esc to cancel)`), then the other prompts, then
//! the ready input box (`> Type your message or @path/to/file`).
//!
//! With the three `OPENAI_*` variables set Qwen shows no first-run dialog;
//! the provider and opt-in trust dialogs it shows otherwise
//! (fixtures/first-run/, README there) read with their options.

use drover_kit::dialog::{Keyed, Listed, Menu};
use drover_kit::screen::{Region, ScreenRule};
use drover_kit::{ChoiceKind, PromptKind, SeatState};

/// Digits and Esc are what answered the trust dialog in the captures
/// (arrows were not tried there); `2` picks the parent the same way.
const TRUST_OPTIONS: &[Keyed] = &[
    Keyed::new("Trust folder", ChoiceKind::AllowOnce, &["1"]),
    // Trusts more than asked: not what an unattended yes means.
    Keyed::new("Trust parent folder", ChoiceKind::Other, &["2"]),
    Keyed::new("Don't trust", ChoiceKind::RejectOnce, &["escape"]),
];
/// Every choice leads to a wizard that wants a typed key or URL: none lets
/// an unattended seat proceed.
const PROVIDERS: &[Listed] = &[
    Listed::new(r"^Alibaba ModelStudio$", ChoiceKind::Other),
    Listed::new(r"^Third-party Providers$", ChoiceKind::Other),
    Listed::new(r"^Custom Provider$", ChoiceKind::Other),
];

pub const RULES: &[ScreenRule] = &[
    ScreenRule::dialog(
        "qwen/v1/permission-options",
        Region::Bottom(20),
        r"^\s*│?\s*(?:[●○◯❯›>]\s*)?\d+\.\s+(?:Yes, allow once|Yes, allow always|Always allow\b|No, suggest changes \(esc\))",
        PromptKind::Permission,
        Menu::Numbered,
    ),
    ScreenRule::dialog(
        "qwen/v1/permission-question",
        Region::Bottom(20),
        r"^\s*│\s*(?:Apply this change\?|Allow execution of: .*\?|Do you want to proceed\?)\s*│?\s*$",
        PromptKind::Permission,
        Menu::Numbered,
    ),
    ScreenRule::blocked(
        "qwen/v1/waiting-confirmation",
        Region::Bottom(10),
        r"(?i)^\s*⠏?\s*waiting for user confirmation",
        PromptKind::Permission,
    ),
    ScreenRule::new(
        "qwen/v1/esc-to-cancel",
        Region::Bottom(10),
        r"(?i)\besc to cancel\b",
        SeatState::Working,
    ),
    ScreenRule::new(
        "qwen/v1/spinner",
        Region::Bottom(10),
        r"^\s*[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]\s+\S",
        SeatState::Working,
    ),
    ScreenRule::new(
        "qwen/v1/retrying",
        Region::Bottom(10),
        r"(?i)\bretrying in \d+s\b",
        SeatState::Working,
    ),
    // Opt-in (`security.folderTrust.enabled`). Near the bottom only: an
    // answered box left above the prompt must not count.
    ScreenRule::dialog(
        "qwen/v1/trust",
        Region::Bottom(20),
        r"(?i)^\s*│?\s*do you trust (?:the files in )?this folder\?",
        PromptKind::TrustDialog,
        Menu::Keys(TRUST_OPTIONS),
    ),
    // The title scrolled off a short pane: its options still show.
    ScreenRule::dialog(
        "qwen/v1/trust-options",
        Region::Bottom(12),
        r"(?i)^\s*│?\s*(?:[●○❯›]\s*)?\d\.\s+(?:trust folder \(|don't trust \(esc\))",
        PromptKind::TrustDialog,
        Menu::Keys(TRUST_OPTIONS),
    ),
    // Without OPENAI_MODEL (or the key or base URL) in the environment.
    ScreenRule::dialog(
        "qwen/v1/provider",
        Region::Bottom(24),
        r"^\s*│?\s*Connect a Provider\s*│?$",
        PromptKind::Other,
        Menu::Listed(PROVIDERS),
    ),
    // Older wordings, numbered like Gemini's.
    ScreenRule::dialog(
        "qwen/v1/auth",
        Region::Bottom(20),
        r"(?i)^\s*│?\s*(?:how would you like to authenticate|get started|connect a provider)\b",
        PromptKind::Other,
        Menu::Numbered,
    ),
    ScreenRule::dialog(
        "qwen/v1/choice",
        Region::Bottom(14),
        r"^\s*│\s*[●❯›]\s*\d+\.\s+\S",
        PromptKind::Question,
        Menu::Numbered,
    ),
    ScreenRule::new(
        "qwen/v1/prompt",
        Region::Bottom(8),
        r"^\s*│?\s*[>*!]?\s*Type your (?:message or @path/to/file|shell command)",
        SeatState::Idle,
    ),
    // Typed text, or the follow-up Qwen proposes after a reply (`> OK`), in
    // the unboxed input row of 0.24.4; transcript rows are indented.
    ScreenRule::new(
        "qwen/v1/typed-input",
        Region::Bottom(5),
        r"^>\s+\S",
        SeatState::Idle,
    ),
    ScreenRule::new(
        "qwen/v1/empty-prompt",
        Region::Bottom(8),
        r"^\s*│\s*>\s*│?\s*$",
        SeatState::Idle,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    drover_kit::testing::screen_fixtures! {
        RULES; IDLE = "idle", WORKING = "working", PERMISSION = "permission", TRUST = "trust",
    }

    #[test]
    fn reads_each_state() {
        drover_kit::testing::assert_rule_states(
            state,
            &[
                (IDLE, SeatState::Idle, None, "qwen/v1/prompt"),
                (WORKING, SeatState::Working, None, "qwen/v1/esc-to-cancel"),
            ],
        );
        assert_eq!(state(PERMISSION).0, SeatState::Blocked);
        assert_eq!(state(PERMISSION).1, Some(PromptKind::Permission));
        assert_eq!(state(TRUST).1, Some(PromptKind::TrustDialog));
    }

    fn first_run(name: &str) -> String {
        drover_kit::testing::first_run_fixture(env!("CARGO_MANIFEST_DIR"), name)
    }

    #[test]
    fn every_first_run_dialog_reads_as_a_question_at_both_widths() {
        use drover_kit::testing::{DialogCase, assert_dialogs};
        const TRUST_CHOICES: &[(&str, ChoiceKind, &str)] = &[
            ("Trust folder", ChoiceKind::AllowOnce, "1"),
            ("Trust parent folder", ChoiceKind::Other, "2"),
            ("Don't trust", ChoiceKind::RejectOnce, "escape"),
        ];
        const PROVIDER_CHOICES: &[(&str, ChoiceKind, &str)] = &[
            ("Alibaba ModelStudio", ChoiceKind::Other, "enter"),
            ("Third-party Providers", ChoiceKind::Other, "down enter"),
            ("Custom Provider", ChoiceKind::Other, "down down enter"),
        ];
        let mut cases = Vec::new();
        for w in ["w220", "w80"] {
            cases.extend([
                DialogCase {
                    fixture: &*Box::leak(format!("extra-trust-{w}").into_boxed_str()),
                    rule: "qwen/v1/trust",
                    kind: PromptKind::TrustDialog,
                    text: "Do you trust this folder?",
                    choices: TRUST_CHOICES,
                },
                DialogCase {
                    fixture: &*Box::leak(format!("extra-auth-provider-{w}").into_boxed_str()),
                    rule: "qwen/v1/provider",
                    kind: PromptKind::Other,
                    text: "Connect a Provider",
                    choices: PROVIDER_CHOICES,
                },
            ]);
        }
        // After Esc it stays, with a notice inside the box.
        cases.push(DialogCase {
            fixture: "extra-auth-provider-esc-w80",
            rule: "qwen/v1/provider",
            kind: PromptKind::Other,
            text: "Connect a Provider",
            choices: PROVIDER_CHOICES,
        });
        assert_dialogs(RULES, &cases, first_run);
        for idle in [
            "01-idle-w220",
            "01-idle-w80",
            "02-replied-w220",
            "02-replied-w80",
        ] {
            assert_eq!(state(&first_run(idle)).0, SeatState::Idle, "{idle}");
        }
    }

    #[test]
    fn tool_permissions_read_their_numbered_options() {
        use drover_kit::testing::{DialogCase, assert_dialogs};
        assert_dialogs(
            RULES,
            &[DialogCase {
                fixture: "permission",
                rule: "qwen/v1/permission-options",
                kind: PromptKind::Permission,
                text: "Allow execution of: 'echo'?",
                // The kit reads `Always allow …` as other, not always.
                choices: &[
                    ("Yes, allow once", ChoiceKind::AllowOnce, "enter"),
                    (
                        "Always allow in this project",
                        ChoiceKind::Other,
                        "down enter",
                    ),
                    (
                        "Always allow for this user",
                        ChoiceKind::Other,
                        "down down enter",
                    ),
                    (
                        "No, suggest changes (esc)",
                        ChoiceKind::RejectOnce,
                        "down down down enter",
                    ),
                ],
            }],
            |_| PERMISSION.to_string(),
        );
        let trust = drover_kit::screen::read(RULES, &drover_kit::testing::screen(TRUST));
        assert_eq!(trust.rule, "qwen/v1/trust");
        assert_eq!(
            trust.dialog.map(|d| d.text),
            Some("Do you trust this folder?".to_string())
        );
    }

    #[test]
    fn a_spinner_without_the_hint_is_still_working_even_above_the_prompt() {
        let s = "◆ Reading files\n\n  ⠼ Reticulating splines\n\n╭────────────────────────────────────╮\n│ >   Type your message or @path/to/file │\n╰────────────────────────────────────╯\n";
        drover_kit::testing::assert_rule_states(
            state,
            &[(s, SeatState::Working, None, "qwen/v1/spinner")],
        );
        let retry = "✕ [API Error: 429 Rate limit reached for requests]\nRetrying in 60s (attempt 1/10)\n╭──╮\n│ >   Type your message or @path/to/file │\n╰──╯\n";
        assert_eq!(state(retry).0, SeatState::Working);
    }

    #[test]
    fn questions_in_prose_above_an_idle_prompt_are_idle() {
        let s = "◆ Do you want to proceed? Would you like me to apply this change?\n  1. Yes, refactor it\n  2. No\nAllow execution of: 'rm'?\n\n╭──────────────────────────╮\n│ >   Type your message or @path/to/file │\n╰──────────────────────────╯\n";
        assert_eq!(state(s).0, SeatState::Idle);
    }

    #[test]
    fn a_frozen_confirmation_spinner_is_not_work() {
        let s = "╭──────────────────────────────╮\n│ ?  Shell rm -rf build         │\n│ Allow execution of: 'rm'?     │\n│ ● 1. Yes, allow once          │\n│   2. Always allow in this project │\n│   3. No, suggest changes (esc) │\n╰──────────────────────────────╯\n  ⠏ Waiting for user confirmation...\n";
        drover_kit::testing::assert_rule_states(
            state,
            &[(
                s,
                SeatState::Blocked,
                Some(PromptKind::Permission),
                "qwen/v1/permission-options",
            )],
        );
        assert_eq!(
            state("  ⠏ Waiting for user confirmation...\n").1,
            Some(PromptKind::Permission)
        );
    }

    #[test]
    fn nothing_known_is_unknown() {
        assert_eq!(state("random\ntext\n").0, SeatState::Unknown);
        assert_eq!(state("").2, "none");
    }
}
