//! Grok TUI screen rules (v1), from the 0.2.111 panes in
//! tests/fixtures/real/grok/. Order: blocking prompts (a permission prompt
//! keeps the turn's spinner and `[stop]` on screen), busy evidence, idle.

use drover_kit::screen::{Region, ScreenRule};
use drover_kit::{PromptKind, SeatState};

pub const RULES: &[ScreenRule] = &[
    ScreenRule::blocked(
        "grok/v1/trust",
        Region::All,
        r"^\s*Do you trust the contents of this directory\?",
        PromptKind::TrustDialog,
    ),
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
