//! Screen reading: which state a pane shows, as ordered rules over regions.
//!
//! Rules are data: an id (versioned, e.g. `claude/v1/spinner`), the region of
//! the screen it looks at, a regex, and the state (and prompt kind) it means.
//! The first rule that matches decides, so adapters list "working" evidence
//! (spinners, "esc to interrupt") before prompts and prompts before idle: a
//! seat is never idle while it is visibly busy. Blocked rules look inside the
//! prompt box or at numbered choices, so prose that merely asks a question in
//! the transcript does not read as a blocking prompt.

use crate::dialog::Menu;
use crate::patterns::{ascii_spaces, compiled};

use crate::{PromptKind, Screen, ScreenReading, SeatState};

#[derive(Clone, Copy, Debug)]
pub enum Region {
    /// The last `n` non-blank rows.
    Bottom(usize),
    /// The first `n` rows.
    Top(usize),
    /// Every row.
    All,
    /// The pane or window title.
    Title,
    /// The rows of the last box drawn with `╭…╰` or `┌…└` corners.
    PromptBox,
}

pub struct ScreenRule {
    pub id: &'static str,
    pub region: Region,
    pub pattern: &'static str,
    pub state: SeatState,
    pub prompt_kind: Option<PromptKind>,
    /// For a blocked rule: how to read the dialog's options.
    pub menu: Option<Menu>,
}

impl ScreenRule {
    pub const fn new(
        id: &'static str,
        region: Region,
        pattern: &'static str,
        state: SeatState,
    ) -> ScreenRule {
        ScreenRule {
            id,
            region,
            pattern,
            state,
            prompt_kind: None,
            menu: None,
        }
    }

    pub const fn blocked(
        id: &'static str,
        region: Region,
        pattern: &'static str,
        kind: PromptKind,
    ) -> ScreenRule {
        ScreenRule {
            id,
            region,
            pattern,
            state: SeatState::Blocked,
            prompt_kind: Some(kind),
            menu: None,
        }
    }

    /// A blocked rule whose dialog's options `menu` reads, so the engine
    /// can show them and choose one when a person or the policy answers.
    pub const fn dialog(
        id: &'static str,
        region: Region,
        pattern: &'static str,
        kind: PromptKind,
        menu: Menu,
    ) -> ScreenRule {
        ScreenRule {
            id,
            region,
            pattern,
            state: SeatState::Blocked,
            prompt_kind: Some(kind),
            menu: Some(menu),
        }
    }
}

/// Applies `rules` in order; `unknown` (rule `none`) when nothing matches.
/// Non-ASCII spaces (tmux captures Claude's `❯` prompt with a no-break
/// space after it) are read as ASCII spaces.
pub fn read(rules: &[ScreenRule], screen: &Screen) -> ScreenReading {
    let spaced: Vec<_> = screen.rows.iter().map(|r| ascii_spaces(r)).collect();
    let rows: Vec<&str> = spaced.iter().map(|r| r.trim_end()).collect();
    let title = ascii_spaces(&screen.title);
    for rule in rules {
        let Some(regex) = compiled(rule.pattern) else {
            continue;
        };
        let candidates = region_rows(rule.region, &rows, &title);
        if let Some((at, hit)) = candidates.iter().find(|(_, row)| regex.is_match(row)) {
            let dialog = rule
                .menu
                .zip(*at)
                .and_then(|(menu, at)| crate::dialog::read(menu, &rows, at));
            return ScreenReading {
                state: rule.state,
                prompt_kind: rule.prompt_kind,
                rule: rule.id.to_string(),
                evidence: hit.trim().to_string(),
                dialog,
            };
        }
    }
    ScreenReading {
        state: SeatState::Unknown,
        prompt_kind: None,
        rule: "none".to_string(),
        evidence: String::new(),
        dialog: None,
    }
}

/// The rows a region covers, each with its index in `rows` (none for the
/// title).
fn region_rows<'a>(
    region: Region,
    rows: &[&'a str],
    title: &'a str,
) -> Vec<(Option<usize>, &'a str)> {
    let indexed = || rows.iter().copied().enumerate().map(|(i, r)| (Some(i), r));
    match region {
        Region::All => indexed().collect(),
        Region::Top(n) => indexed().take(n).collect(),
        Region::Bottom(n) => {
            let mut tail: Vec<_> = indexed()
                .rev()
                .filter(|(_, r)| !r.trim().is_empty())
                .take(n)
                .collect();
            tail.reverse();
            tail
        }
        Region::Title => vec![(None, title)],
        Region::PromptBox => prompt_box(rows)
            .map(|range| range.map(|i| (Some(i), rows[i])).collect())
            .unwrap_or_default(),
    }
}

fn prompt_box(rows: &[&str]) -> Option<std::ops::RangeInclusive<usize>> {
    let is_top = |r: &str| {
        let t = r.trim_start();
        t.starts_with('╭') || t.starts_with('┌')
    };
    let is_bottom = |r: &str| {
        let t = r.trim_start();
        t.starts_with('╰') || t.starts_with('└')
    };
    let end = rows.iter().rposition(|r| is_bottom(r))?;
    let start = rows[..end].iter().rposition(|r| is_top(r))?;
    Some(start..=end)
}

/// Splits captured pane text into rows for a [`Screen`].
pub fn rows_of(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULES: &[ScreenRule] = &[
        ScreenRule::new(
            "t/v1/busy",
            Region::Bottom(6),
            r"esc to interrupt",
            SeatState::Working,
        ),
        ScreenRule::blocked(
            "t/v1/permission",
            Region::PromptBox,
            r"Do you want to (proceed|allow)",
            PromptKind::Permission,
        ),
        ScreenRule::new(
            "t/v1/ready",
            Region::Bottom(4),
            r"^\s*❯\s*$",
            SeatState::Idle,
        ),
    ];

    fn screen(text: &str) -> Screen {
        Screen {
            rows: rows_of(text),
            title: String::new(),
        }
    }

    #[test]
    fn busy_beats_idle() {
        let s = screen("● hello\n✻ Thinking… (esc to interrupt)\n\n❯ \n\n");
        let reading = read(RULES, &s);
        assert_eq!(
            (reading.state, reading.rule.as_str()),
            (SeatState::Working, "t/v1/busy")
        );
        let idle = read(RULES, &screen("● hello\n\n❯ \n"));
        assert_eq!(idle.state, SeatState::Idle);
        assert_eq!(idle.evidence, "❯");
    }

    #[test]
    fn questions_in_prose_are_not_prompts() {
        let prose = screen("● Do you want to proceed with the refactor? I can do it.\n\n❯ \n");
        assert_eq!(read(RULES, &prose).state, SeatState::Idle);
        let boxed = screen(
            "╭──────────╮\n│ Bash command │\n│ Do you want to proceed? │\n│ ❯ 1. Yes │\n╰──────────╯\n",
        );
        let reading = read(RULES, &boxed);
        assert_eq!(
            (reading.state, reading.prompt_kind),
            (SeatState::Blocked, Some(PromptKind::Permission))
        );
    }

    #[test]
    fn no_break_spaces_read_as_spaces() {
        // `❯` + U+00A0, as tmux captures Claude Code's prompt row.
        let s = screen("● hello\n\n❯\u{a0}\n");
        let reading = read(RULES, &s);
        assert_eq!(
            (reading.state, reading.evidence.as_str()),
            (SeatState::Idle, "❯")
        );
        let busy = screen("✻ Thinking…\u{a0}(esc\u{a0}to\u{a0}interrupt)\n❯ \n");
        assert_eq!(read(RULES, &busy).state, SeatState::Working);
    }

    #[test]
    fn nothing_matching_is_unknown() {
        let reading = read(RULES, &screen("random\ntext"));
        assert_eq!(
            (reading.state, reading.rule.as_str()),
            (SeatState::Unknown, "none")
        );
    }
}
