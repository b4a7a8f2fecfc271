//! Grok TUI screen rules (v1), from the 0.2.111 panes in
//! tests/fixtures/real/grok/. Order: blocking prompts (a permission prompt
//! keeps the turn's spinner and `[stop]` on screen), busy evidence, idle.

use drover_kit::dialog::{Keyed, Menu};
use drover_kit::screen::{Region, ScreenRule};
use drover_kit::{ChoiceKind, PromptKind, SeatState};

/// The folder-trust dialog (only without `--trust`; fixtures/first-run/,
/// README there) highlights neither row and ignores arrows: it is
/// answered by the keys it names.
const TRUST_OPTIONS: &[Keyed] = &[
    Keyed::new("Yes, proceed", ChoiceKind::AllowOnce, &["y"]),
    // Grok exits.
    Keyed::new("No, quit", ChoiceKind::RejectOnce, &["n"]),
];

pub const RULES: &[ScreenRule] = &[
    ScreenRule::dialog(
        "grok/v1/trust",
        Region::All,
        r"^\s*Do you trust the contents of this directory\?",
        PromptKind::TrustDialog,
        Menu::Keys(TRUST_OPTIONS),
    ),
    // Its `N (●) label` rows are not a menu the kit reads (no `N.`), so
    // the permission prompt stays without options.
    ScreenRule::blocked(
        "grok/v1/permission",
        Region::Bottom(16),
        r"^\s*┃?\s*\d+ \([●○]\) (?:Yes, proceed|No, reject)\b",
        PromptKind::Permission,
    ),
    ScreenRule::blocked(
        "grok/v1/select-footer",
        Region::Bottom(3),
        r"^\s*\d+/\d+:select\b",
        PromptKind::Question,
    ),
    ScreenRule::new(
        "grok/v1/esc-cancel",
        Region::Bottom(3),
        r"│\s*Esc:cancel\s*│",
        SeatState::Working,
    ),
    ScreenRule::new(
        "grok/v1/waiting",
        Region::Bottom(12),
        r"^\s*\S\s+(?:Waiting for response|Thinking|Running|Compacting)…",
        SeatState::Working,
    ),
    ScreenRule::new(
        "grok/v1/footer",
        Region::Bottom(3),
        r"^\s*Shift\+Tab:mode\s*│\s*Ctrl\+x:shortcuts\s*$",
        SeatState::Idle,
    ),
    ScreenRule::new(
        "grok/v1/welcome",
        Region::Bottom(3),
        r"Logged in with (?:API key|\w+)\s*│",
        SeatState::Idle,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn first_run(name: &str) -> String {
        drover_kit::testing::first_run_fixture(env!("CARGO_MANIFEST_DIR"), name)
    }

    #[test]
    fn every_first_run_dialog_reads_as_a_question_at_both_widths() {
        use drover_kit::testing::{DialogCase, assert_dialogs};
        let mut cases = Vec::new();
        for w in ["w220", "w80"] {
            cases.push(DialogCase {
                fixture: &*Box::leak(format!("no-trust-flag-01-trust-{w}").into_boxed_str()),
                rule: "grok/v1/trust",
                kind: PromptKind::TrustDialog,
                text: "Do you trust the contents of this directory?",
                choices: &[
                    ("Yes, proceed", ChoiceKind::AllowOnce, "y"),
                    ("No, quit", ChoiceKind::RejectOnce, "n"),
                ],
            });
        }
        assert_dialogs(RULES, &cases, first_run);
        for idle in [
            "01-idle-w220",
            "01-idle-w80",
            "02-replied-w220",
            "02-replied-w80",
        ] {
            let (seat, _, rule) = drover_kit::testing::state(RULES, &first_run(idle));
            assert_eq!(seat, SeatState::Idle, "{idle}: {rule}");
        }
    }

    #[test]
    fn every_rule_compiles_and_fires() {
        let samples = [
            (
                "   Do you trust the contents of this directory?\n",
                "grok/v1/trust",
            ),
            ("  ┃  2 (○) Yes, proceed\n", "grok/v1/permission"),
            ("  1/2:select  │  Ctrl+c:cancel\n", "grok/v1/select-footer"),
            (
                "  Shift+Tab:mode  │  Esc:cancel  │  Ctrl+x:shortcuts\n",
                "grok/v1/esc-cancel",
            ),
            ("    ⠦ Waiting for response… 2.3s\n", "grok/v1/waiting"),
            ("  Shift+Tab:mode  │  Ctrl+x:shortcuts\n", "grok/v1/footer"),
            ("     Logged in with API key  │  Beta\n", "grok/v1/welcome"),
        ];
        drover_kit::testing::assert_every_rule_fires(RULES, &samples);
    }
}
