//! Reading a dialog's options off a screen: which options a blocked pane
//! offers, in screen order, which one the cursor is on, and the keys that
//! choose each from there (arrows to it, then `enter`).
//!
//! A rule names the menu one of three ways: [`Menu::Listed`] when the
//! CLI's dialog is known (the labels as patterns, each with what choosing
//! it means), [`Menu::Numbered`] for `1. Yes` / `2. No` menus whose labels
//! vary (a tool permission, a question), whose kinds are read from the
//! labels ([`kind_of_label`]), or [`Menu::Keys`] for a screen whose options
//! are keys it names in prose (`Press Enter to continue`, `y/n`).

use crate::patterns::compiled;
use crate::{Choice, ChoiceKind, Dialog};

/// How a dialog rule finds its options.
#[derive(Clone, Copy, Debug)]
pub enum Menu {
    /// Consecutive numbered rows (`1. Yes`, `2) No`) from the first at or
    /// around the matched row.
    Numbered,
    /// The options the rule names, in screen order: each is the first row
    /// at or below the previous one whose label matches.
    Listed(&'static [Listed]),
    /// Options the screen names as keys, not as rows: each pressed as given.
    Keys(&'static [Keyed]),
}

/// One option of a [`Menu::Keys`] dialog.
#[derive(Clone, Copy, Debug)]
pub struct Keyed {
    pub label: &'static str,
    pub kind: ChoiceKind,
    pub keys: &'static [&'static str],
}

impl Keyed {
    pub const fn new(
        label: &'static str,
        kind: ChoiceKind,
        keys: &'static [&'static str],
    ) -> Keyed {
        Keyed { label, kind, keys }
    }
}

/// One option of a [`Menu::Listed`] dialog.
#[derive(Clone, Copy, Debug)]
pub struct Listed {
    /// A regex over the option's label (cursor and number stripped).
    pub label: &'static str,
    pub kind: ChoiceKind,
}

impl Listed {
    pub const fn new(label: &'static str, kind: ChoiceKind) -> Listed {
        Listed { label, kind }
    }
}

/// Markers a TUI draws on the highlighted option.
const CURSORS: &[char] = &['❯', '›', '>', '▶', '▸', '→', '●', '◉', '⦿'];
/// Markers a TUI draws on the other options of a radio list.
const UNSELECTED: &[char] = &['○', '◯'];
/// Borders around a dialog's rows.
const BORDERS: &[char] = &['│', '┃', '║', '|'];

/// An option row: its label, its number when it has one, and whether the
/// cursor is on it.
#[derive(Debug, PartialEq)]
struct Row {
    label: String,
    number: Option<u32>,
    selected: bool,
}

fn strip_borders(row: &str) -> &str {
    row.trim()
        .trim_start_matches(BORDERS)
        .trim_end_matches(BORDERS)
        .trim()
}

/// Reads a row as a menu option: `❯ 1. Yes`, `  2. No`, `● Login`,
/// `○ Use an API key`. `None` for a row without a cursor, a radio mark or a
/// number (plain text is not an option).
fn option_row(row: &str) -> Option<Row> {
    let mut rest = strip_borders(row);
    let mut selected = false;
    let mut marked = false;
    if let Some(c) = rest.chars().next()
        && (CURSORS.contains(&c) || UNSELECTED.contains(&c))
    {
        selected = CURSORS.contains(&c);
        marked = true;
        rest = rest[c.len_utf8()..].trim_start();
    }
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let mut number = None;
    if !digits.is_empty() {
        let after = &rest[digits.len()..];
        if let Some(label) = after.strip_prefix(['.', ')'])
            && label.starts_with(' ')
        {
            number = digits.parse().ok();
            rest = label.trim_start();
        }
    }
    let label = rest.trim().to_string();
    if label.is_empty() || (!marked && number.is_none()) {
        return None;
    }
    Some(Row {
        label,
        number,
        selected,
    })
}

/// What choosing an option means, read from its label: `Yes, and don't ask
/// again` allows always, `Yes`/`Allow`/`Trust`/`Accept`/`Continue` allow
/// once, `No`/`Reject`/`Deny`/`Cancel`/`Exit`/`Quit` reject once.
pub fn kind_of_label(label: &str) -> ChoiceKind {
    let lower = label.to_lowercase();
    let starts = |words: &[&str]| {
        words.iter().any(|w| {
            lower.strip_prefix(w).is_some_and(|rest| {
                rest.chars()
                    .next()
                    .is_none_or(|c| !c.is_alphanumeric() && c != '\'')
            })
        })
    };
    let always = [
        "don't ask again",
        "do not ask again",
        "always",
        "for this session",
        "all ",
    ]
    .iter()
    .any(|w| lower.contains(w));
    if starts(&["yes", "allow", "approve", "proceed"]) && always {
        ChoiceKind::AllowAlways
    } else if starts(&[
        "yes", "allow", "approve", "proceed", "trust", "accept", "continue", "ok",
    ]) {
        ChoiceKind::AllowOnce
    } else if starts(&[
        "no", "reject", "deny", "decline", "cancel", "exit", "quit", "don't", "do not",
    ]) {
        ChoiceKind::RejectOnce
    } else {
        ChoiceKind::Other
    }
}

/// The dialog `menu` describes, read from `rows` around the row at `hit`
/// (the row the rule matched). `None` when no option is found.
pub fn read(menu: Menu, rows: &[&str], hit: usize) -> Option<Dialog> {
    if let Menu::Keys(keyed) = menu {
        return (!keyed.is_empty()).then(|| Dialog {
            text: strip_borders(rows[hit]).to_string(),
            choices: keyed
                .iter()
                .map(|k| Choice {
                    label: k.label.to_string(),
                    kind: k.kind,
                    keys: k.keys.iter().map(|s| s.to_string()).collect(),
                })
                .collect(),
        });
    }
    let found: Vec<(usize, Row, ChoiceKind)> = match menu {
        Menu::Numbered => numbered(rows, hit)
            .into_iter()
            .map(|(at, row)| {
                let kind = kind_of_label(&row.label);
                (at, row, kind)
            })
            .collect(),
        Menu::Listed(listed) => listed_rows(listed, rows, hit)?,
        Menu::Keys(_) => return None,
    };
    let first = found.first()?.0;
    let text = if hit < first && option_row(rows[hit]).is_none() {
        strip_borders(rows[hit]).to_string()
    } else {
        question_above(rows, first)
    };
    let cursor = found.iter().position(|(_, row, _)| row.selected);
    let choices = found
        .iter()
        .enumerate()
        .map(|(at, (_, row, kind))| Choice {
            label: row.label.clone(),
            kind: *kind,
            keys: cursor.map_or_else(Vec::new, |from| keys(from, at)),
        })
        .collect();
    Some(Dialog { text, choices })
}

/// Arrows from the highlighted option to option `to`, then `enter`.
fn keys(from: usize, to: usize) -> Vec<String> {
    let arrow = if to > from { "down" } else { "up" };
    let mut keys = vec![arrow.to_string(); from.abs_diff(to)];
    keys.push("enter".to_string());
    keys
}

/// Rows above a matched option searched for its menu's first option.
const LOOKBACK: usize = 24;

fn numbered(rows: &[&str], hit: usize) -> Vec<(usize, Row)> {
    let numbered_at = |at: usize| option_row(rows[at]).filter(|r| r.number.is_some());
    // The menu's first option: at or above the hit when the hit is an
    // option (the cursor may be on option 3), else the first below it.
    let start = if numbered_at(hit).is_some() {
        (hit.saturating_sub(LOOKBACK)..=hit)
            .rev()
            .find(|&at| numbered_at(at).is_some_and(|r| r.number == Some(1)))
    } else {
        (hit..rows.len()).find(|&at| numbered_at(at).is_some_and(|r| r.number == Some(1)))
    };
    let Some(start) = start else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut next = 1;
    for (at, text) in rows.iter().enumerate().skip(start) {
        match option_row(text).filter(|r| r.number.is_some()) {
            Some(row) if row.number == Some(next) => {
                out.push((at, row));
                next += 1;
            }
            Some(_) => break,
            // A wrapped label or a blank row inside the menu; a border or
            // a hint line ends it only when no numbered row follows.
            None => continue,
        }
    }
    out
}

fn listed_rows(
    listed: &[Listed],
    rows: &[&str],
    hit: usize,
) -> Option<Vec<(usize, Row, ChoiceKind)>> {
    let mut out = Vec::new();
    let mut from = hit;
    for option in listed {
        let pattern = compiled(option.label)?;
        let (at, row) = (from..rows.len()).find_map(|at| {
            let row = option_row(rows[at]).or_else(|| {
                // An unmarked, unnumbered option row of a menu whose other
                // rows are marked: the label alone.
                let label = strip_borders(rows[at]);
                (!label.is_empty()).then(|| Row {
                    label: label.to_string(),
                    number: None,
                    selected: false,
                })
            })?;
            pattern.is_match(&row.label).then_some((at, row))
        })?;
        out.push((at, row, option.kind));
        from = at + 1;
    }
    Some(out)
}

/// The nearest row of text above the options (the question they answer).
fn question_above(rows: &[&str], first: usize) -> String {
    rows[..first]
        .iter()
        .rev()
        .map(|r| strip_borders(r))
        .find(|r| r.chars().any(char::is_alphanumeric))
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str) -> Vec<&str> {
        text.lines().collect()
    }

    fn summary(d: &Dialog) -> Vec<(String, ChoiceKind, String)> {
        d.choices
            .iter()
            .map(|c| (c.label.clone(), c.kind, c.keys.join(" ")))
            .collect()
    }

    #[test]
    fn a_numbered_menu_reads_its_options_kinds_and_keys() {
        let screen = " Bash command\n\n   echo hi\n\n Do you want to proceed?\n ❯ 1. Yes\n   2. Yes, and don't ask again for echo commands\n   3. No, and tell Claude what to do differently (esc)\n";
        let r = rows(screen);
        let d = read(Menu::Numbered, &r, 5).expect("dialog");
        assert_eq!(d.text, "Do you want to proceed?");
        assert_eq!(
            summary(&d),
            vec![
                ("Yes".into(), ChoiceKind::AllowOnce, "enter".into()),
                (
                    "Yes, and don't ask again for echo commands".into(),
                    ChoiceKind::AllowAlways,
                    "down enter".into()
                ),
                (
                    "No, and tell Claude what to do differently (esc)".into(),
                    ChoiceKind::RejectOnce,
                    "down down enter".into()
                ),
            ]
        );
    }

    #[test]
    fn the_cursor_may_sit_below_the_first_option() {
        let screen = "Do you trust this folder?\n  1. Yes\n❯ 2. No, exit\n";
        let r = rows(screen);
        let d = read(Menu::Numbered, &r, 2).expect("dialog");
        assert_eq!(d.choices[0].keys, vec!["up", "enter"]);
        assert_eq!(d.choices[1].keys, vec!["enter"]);
    }

    #[test]
    fn listed_options_follow_the_question() {
        const LISTED: &[Listed] = &[
            Listed::new(r"^No, exit$", ChoiceKind::RejectOnce),
            Listed::new(r"^Yes, I accept$", ChoiceKind::AllowOnce),
        ];
        let screen = "  WARNING: Claude Code running in Bypass Permissions mode\n\n  By proceeding, you accept all responsibility.\n\n  ❯ No, exit\n    Yes, I accept\n\n  Enter to confirm · Esc to cancel\n";
        let r = rows(screen);
        let d = read(Menu::Listed(LISTED), &r, 0).expect("dialog");
        assert_eq!(
            d.text,
            "WARNING: Claude Code running in Bypass Permissions mode"
        );
        assert_eq!(
            summary(&d),
            vec![
                ("No, exit".into(), ChoiceKind::RejectOnce, "enter".into()),
                (
                    "Yes, I accept".into(),
                    ChoiceKind::AllowOnce,
                    "down enter".into()
                ),
            ]
        );
    }

    #[test]
    fn without_a_cursor_no_option_has_keys() {
        let screen = "Pick one\n  1. A\n  2. B\n";
        let r = rows(screen);
        let d = read(Menu::Numbered, &r, 0).expect("dialog");
        assert!(d.choices.iter().all(|c| c.keys.is_empty()));
        assert!(read(Menu::Numbered, &rows("no options here\n"), 0).is_none());
    }

    #[test]
    fn labels_say_what_an_option_means() {
        for (label, kind) in [
            ("Yes", ChoiceKind::AllowOnce),
            ("Yes, allow always", ChoiceKind::AllowAlways),
            ("Trust folder", ChoiceKind::AllowOnce),
            ("No, exit", ChoiceKind::RejectOnce),
            ("Don't trust", ChoiceKind::RejectOnce),
            ("Dark mode", ChoiceKind::Other),
            ("Nothing", ChoiceKind::Other),
            ("Yesterday", ChoiceKind::Other),
        ] {
            assert_eq!(kind_of_label(label), kind, "{label}");
        }
    }
}
