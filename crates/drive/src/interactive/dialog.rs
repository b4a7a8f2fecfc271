//! A pane's dialog as a question. When the adapter reads a blocked screen
//! with its options (a first-run warning, a folder-trust dialog, a tool
//! permission), the dialog is journaled as a [`Question`] like an ACP
//! permission request, and answered the same ways: `drover answer`, or the
//! project's `[policy]` on a seat that is not a person's. Answering presses
//! the keys the adapter names for the option, and only after the pane is
//! read again and still shows that very dialog: nothing is pressed into a
//! screen that changed or cannot be read.

use std::time::{Duration, Instant};

use super::Seat;
use crate::Context;
use drover_run::now_ns;
use drover_run::question::{self, Answerer, Choice, ChoiceKind, Question};
use drover_types::wit;
use drover_workspace::keys::parse_keys;

/// How often a settling screen is read again.
const SETTLE_TICK: Duration = Duration::from_millis(250);
/// How long a dialog's screen must stay unchanged before keys are pressed.
const STEADY: Duration = Duration::from_secs(1);
/// The longest wait for that.
const STEADY_LIMIT: Duration = Duration::from_secs(5);
/// How long a screen must keep reading idle after an answer to count as
/// settled: the next dialog may follow a moment of prompt.
const IDLE_HOLD: Duration = Duration::from_millis(1500);

/// The question a blocked screen asks, when the adapter read its options.
pub fn question_of(task: &str, reading: &wit::ScreenReading) -> Option<Question> {
    if reading.state != wit::SeatState::Blocked {
        return None;
    }
    let dialog = reading.dialog.as_ref().filter(|d| !d.choices.is_empty())?;
    let text = question::clean(&dialog.text);
    let text = if text.is_empty() {
        question::clean(&reading.evidence)
    } else {
        text
    };
    let options = dialog
        .choices
        .iter()
        .enumerate()
        .map(|(at, c)| Choice {
            id: (at + 1).to_string(),
            label: question::clean(&c.label),
            kind: choice_kind(c.kind),
        })
        .collect();
    Some(Question {
        id: format!("{}-pane-{}", drover_run::safe_segment(task), now_ns()),
        tool: question::clean(&reading.rule),
        kind: reading
            .prompt_kind
            .unwrap_or(wit::PromptKind::Other)
            .as_str()
            .to_string(),
        title: text.clone(),
        input: text,
        options,
        on_pane: true,
    })
}

fn choice_kind(kind: wit::ChoiceKind) -> ChoiceKind {
    match kind {
        wit::ChoiceKind::AllowOnce => ChoiceKind::AllowOnce,
        wit::ChoiceKind::AllowAlways => ChoiceKind::AllowAlways,
        wit::ChoiceKind::RejectOnce => ChoiceKind::RejectOnce,
        wit::ChoiceKind::RejectAlways => ChoiceKind::RejectAlways,
        wit::ChoiceKind::Other => ChoiceKind::Other,
    }
}

/// Whether two questions are the same dialog (their ids differ: each
/// reading makes a new one).
pub fn same_dialog(a: &Question, b: &Question) -> bool {
    a.on_pane == b.on_pane
        && a.tool == b.tool
        && a.title == b.title
        && a.options.len() == b.options.len()
        && a.options
            .iter()
            .zip(&b.options)
            .all(|(x, y)| x.label == y.label && x.kind == y.kind)
}

/// Journals the dialog `reading` shows as the task's question, unless that
/// dialog is the question already pending. Returns the pending question
/// and whether it is new; `None` when the screen shows no readable dialog.
pub fn observe(
    ctx: &Context,
    task: &str,
    reading: &wit::ScreenReading,
) -> Option<(Question, bool)> {
    let asked = question_of(task, reading)?;
    if let Some(pending) = question::pending(&ctx.run.journal_path(), task)
        && same_dialog(&pending, &asked)
    {
        return Some((pending, false));
    }
    ctx.blocked_asking(
        task,
        &asked,
        &asked.kind,
        &format!("screen:{}", reading.rule),
    );
    Some((asked, true))
}

/// What the pane shows now, as the adapter reads it.
pub fn read(ctx: &Context, seat: &Seat) -> Result<wit::ScreenReading, String> {
    let screen = seat
        .ws()
        .read_pane(&seat.pane)
        .map_err(|e| format!("cannot read the pane: {e}"))?;
    ctx.adapter()
        .read_screen(&ctx.profile().to_wit(), &screen)
        .map_err(|e| format!("the adapter cannot read the screen: {e}"))
}

/// Chooses `choice` of the pane question `asked`: reads the pane again,
/// and only when it still shows that dialog presses the keys the adapter
/// names for the option there, then journals the answer (and the seat as
/// working on it). Refused for a human seat.
pub fn answer(
    ctx: &Context,
    task: &str,
    seat: &Seat,
    asked: &Question,
    choice: &Choice,
    by: &Answerer,
    human: bool,
) -> Result<(), String> {
    if human {
        return Err("a human seat's dialogs are answered by its person, in its pane".to_string());
    }
    steady(seat);
    let reading = read(ctx, seat)?;
    let shown = question_of(task, &reading)
        .filter(|now| same_dialog(now, asked))
        .ok_or_else(|| {
            format!(
                "the pane no longer shows that question: it reads {} ({}: {})",
                reading.state.as_str(),
                reading.rule,
                question::clean(&reading.evidence)
            )
        })?;
    let at = asked
        .options
        .iter()
        .position(|c| c.id == choice.id)
        .filter(|&at| {
            shown
                .options
                .get(at)
                .is_some_and(|c| c.label == choice.label)
        })
        .ok_or_else(|| format!("'{}' is not an option of that question", choice.label))?;
    let named = reading
        .dialog
        .as_ref()
        .and_then(|d| d.choices.get(at))
        .map(|c| c.keys.clone())
        .unwrap_or_default();
    let keys =
        parse_keys(&named).map_err(|why| format!("cannot choose '{}': {why}", choice.label))?;
    seat.ws()
        .press_keys(&seat.pane, &keys, human)
        .map_err(|e| format!("cannot press the keys: {e}"))?;
    ctx.answered(task, asked, choice, by);
    ctx.run.lifecycle(
        task,
        "dialog-answered",
        serde_json::json!({
            "question": asked.id,
            "option": choice.id,
            "keys": keys.iter().map(|k| k.name()).collect::<Vec<_>>(),
        }),
    );
    ctx.state(task, wit::SeatState::Working, None, "answer");
    Ok(())
}

/// Waits (up to [`STEADY_LIMIT`]) until the pane has shown the same text
/// for [`STEADY`]: a TUI that has just drawn a dialog may not take keys yet
/// (Claude Code under load drops them), and keys it drops are lost.
fn steady(seat: &Seat) {
    let until = Instant::now() + STEADY_LIMIT;
    let text = || seat.ws().read_pane(&seat.pane).ok().map(|s| s.rows);
    let mut last = text();
    let mut since = Instant::now();
    while Instant::now() < until && since.elapsed() < STEADY {
        std::thread::sleep(SETTLE_TICK);
        let now = text();
        if now != last {
            last = now;
            since = Instant::now();
        }
    }
}

/// After an answer: waits (up to `limit`) for the pane to leave the dialog
/// and journals what it shows then: idle, or the next dialog as the next
/// question. Returns the reading it settled on, if any.
pub fn settle(
    ctx: &Context,
    task: &str,
    seat: &Seat,
    answered: &Question,
    limit: Duration,
) -> Option<wit::ScreenReading> {
    let until = Instant::now() + limit;
    let mut idle_since: Option<Instant> = None;
    loop {
        if let Ok(reading) = read(ctx, seat) {
            let still = question_of(task, &reading).is_some_and(|q| same_dialog(&q, answered));
            let source = format!("screen:{}", reading.rule);
            if reading.state != wit::SeatState::Idle {
                idle_since = None;
            }
            match reading.state {
                _ if still => {}
                wit::SeatState::Idle
                    if idle_since.get_or_insert_with(Instant::now).elapsed() < IDLE_HOLD => {}
                wit::SeatState::Idle => {
                    ctx.state(task, wit::SeatState::Idle, None, &source);
                    return Some(reading);
                }
                wit::SeatState::Blocked => {
                    if observe(ctx, task, &reading).is_none() {
                        let kind = reading.prompt_kind.unwrap_or(wit::PromptKind::Other);
                        ctx.blocked(task, kind.as_str(), &source, Some(&reading.evidence));
                    }
                    return Some(reading);
                }
                _ => {}
            }
        }
        // A CLI that exited (its answer was "exit") settles on nothing.
        if Instant::now() >= until || matches!(seat.ws().pane_alive(&seat.pane), Ok(false)) {
            return None;
        }
        std::thread::sleep(SETTLE_TICK);
    }
}

/// The last non-blank rows of a screen, joined, for evidence.
pub fn last_lines(screen: &wit::Screen, n: usize) -> String {
    let rows: Vec<&str> = screen
        .rows
        .iter()
        .map(|r| r.trim())
        .filter(|r| !r.is_empty())
        .collect();
    rows[rows.len().saturating_sub(n)..].join(" ⏎ ")
}
