//! Common pane shapes, for CLIs no component knows: the interrupt hints and
//! spinners of the TUIs drover knows, the permission and trust prompts they
//! share, and their empty input lines. Working evidence first, then
//! blocking prompts, then idle: a seat is never idle while visibly busy. It
//! cannot tell done from idle, nor always a CLI's own dialog from a
//! question.

use drover_kit::screen::{Region, ScreenRule};
use drover_kit::{PromptKind, SeatState};

pub const RULES: &[ScreenRule] = &[
    ScreenRule::new(
        "generic/v1/interrupt-hint",
        Region::Bottom(10),
        r"(?i)\b(?:esc|ctrl\+c)\s+(?:again\s+)?to\s+(?:interrupt|cancel|stop)\b",
        SeatState::Working,
    ),
    ScreenRule::new(
        "generic/v1/braille-spinner",
        Region::Bottom(10),
        r"^\s*[\x{2801}-\x{28FF}]\s+\S",
        SeatState::Working,
    ),
    ScreenRule::new(
        "generic/v1/star-spinner",
        Region::Bottom(10),
        r"^\s*[·✢✳✶✻✽]\s+\S[^\n]*(?:…|\.\.\.)",
        SeatState::Working,
    ),
    ScreenRule::new(
        "generic/v1/retrying",
        Region::Bottom(10),
        r"(?i)\bretrying in \d+\s*s\b",
        SeatState::Working,
    ),
    ScreenRule::blocked(
        "generic/v1/trust",
        Region::All,
        r"(?i)do you trust (?:the (?:files|contents) (?:in|of) )?this (?:folder|directory|workspace)\?",
        PromptKind::TrustDialog,
    ),
    ScreenRule::blocked(
        "generic/v1/permission",
        Region::Bottom(16),
        r"(?i)^\s*│?\s*(?:do you want to (?:proceed|allow|run|make this edit)|allow (?:this|execution|once)\b.*\?|apply this change\?)",
        PromptKind::Permission,
    ),
    ScreenRule::blocked(
        "generic/v1/permission-choice",
        Region::Bottom(14),
        r"^\s*│?\s*[❯›>●]\s*1\.\s+(?:Yes|Allow)\b",
        PromptKind::Permission,
    ),
    ScreenRule::blocked(
        "generic/v1/yes-no",
        Region::Bottom(4),
        r"(?i)\((?:y/n|yes/no)\)\s*[:?]?\s*$",
        PromptKind::Question,
    ),
    ScreenRule::blocked(
        "generic/v1/choice",
        Region::Bottom(14),
        r"^\s*│?\s*[❯›]\s*\d+\.\s+\S",
        PromptKind::Question,
    ),
    ScreenRule::new(
        "generic/v1/prompt",
        Region::Bottom(8),
        r"^\s*│?\s*[❯›>]\s*│?\s*$",
        SeatState::Idle,
    ),
    ScreenRule::new(
        "generic/v1/type-hint",
        Region::Bottom(8),
        r"(?i)^\s*│?\s*[>*!]?\s*type your (?:message|request|prompt)\b",
        SeatState::Idle,
    ),
    ScreenRule::new(
        "generic/v1/shortcuts",
        Region::Bottom(4),
        r"(?i)^\s*\?\s+for shortcuts\b",
        SeatState::Idle,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn state(text: &str) -> (SeatState, Option<PromptKind>) {
        let (state, kind, _) = drover_kit::testing::state(RULES, text);
        (state, kind)
    }

    #[test]
    fn common_shapes_read_as_their_states() {
        let idle = "● done\n────────\n❯ \n────────\n  ⏵⏵ auto mode on (shift+tab to cycle)\n";
        assert_eq!(state(idle), (SeatState::Idle, None));
        let working = "● x\n\n✻ Thinking… (esc to interrupt)\n\n────\n❯ \n────\n";
        assert_eq!(state(working).0, SeatState::Working);
        assert_eq!(state("⠋ Generating answer\n> \n").0, SeatState::Working);
        let permission = " Do you want to proceed?\n ❯ 1. Yes\n   2. No\n";
        assert_eq!(
            state(permission),
            (SeatState::Blocked, Some(PromptKind::Permission))
        );
        let trust = "Do you trust the files in this folder?\n❯ 1. Yes, proceed\n";
        assert_eq!(
            state(trust),
            (SeatState::Blocked, Some(PromptKind::TrustDialog))
        );
        assert_eq!(
            state("Overwrite config? (y/n)\n").1,
            Some(PromptKind::Question)
        );
        assert_eq!(
            state("Type your message or @path/to/file\n").0,
            SeatState::Idle
        );
        assert_eq!(state("some output\n").0, SeatState::Unknown);
    }

    #[test]
    fn a_question_in_prose_above_an_idle_prompt_is_idle() {
        let s = "● Shall I go on? Type y or n.\n  1. Yes, refactor\n  2. No\n\n────────\n❯ \n────────\n";
        assert_eq!(state(s).0, SeatState::Idle);
    }
}
