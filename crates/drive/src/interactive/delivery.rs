//! Proof of delivery: a message typed into a pane counts as sent only once
//! the CLI shows it took it — a hook that means a turn started, or a
//! screen that left the idle shape it had with the message in its input.
//! Otherwise the input is cleared (copy mode left first) and the message is
//! typed once more; a message still not taken leaves the seat `blocked`,
//! "message not accepted", never `working` (docs/sessions.md).

use std::time::{Duration, Instant};

use super::{Driver, Seat, TICK};
use crate::{TurnReport, Verdict};
use drover_types::wit;

/// How long a typed message has to show it was taken. A CLI that took it
/// fires its prompt hook or draws its spinner well within a second; the
/// rest is headroom for a loaded machine, since a message that was taken
/// but is read as lost would be cleared and typed twice.
pub(super) const DELIVERY_BOUND: Duration = Duration::from_secs(5);
/// Ctrl-U presses at most, one per line of the message: a long paste is
/// cleared line by line in most inputs, and a few extra on an empty line
/// do nothing.
const CLEAR_MAX: usize = 64;
/// The journaled reason, and the seat's evidence.
pub const NOT_ACCEPTED: &str = "message not accepted";
/// The source of the seat's `blocked` state.
const SOURCE: &str = "delivery:not-accepted";

/// What a profile cannot prove of a message typed into its pane, for
/// `drover doctor`'s "cannot" list: without a prompt hook (none installed,
/// or a hookless CLI) the screen is the first proof, and without `screen`
/// reading only the hooks can give one. ACP and headless seats take a
/// message whole (no pane), so this is about panes only.
pub fn cannot(prompt_hook: bool, screen: bool) -> Option<&'static str> {
    match (prompt_hook, screen) {
        (true, true) => None,
        (false, true) => Some(
            "prove a message typed into its pane arrived by a prompt hook (its profile installs none): its screen shows it, by leaving its idle shape within 5 s, or a later hook of the turn; a CLI that takes a message without redrawing anything would read as not taking it, and have it typed again",
        ),
        (true, false) => Some(
            "prove a message typed into its pane arrived by its screen (no screen reading): only its hooks show it; a message whose hooks do not fire within 5 s is typed once more, then the seat is reported blocked, \"message not accepted\"",
        ),
        (false, false) => Some(
            "prove a message typed into its pane arrived by a prompt hook or its screen (it has neither): only a later hook of the turn shows it within 5 s; otherwise it is typed once more, then the seat is reported blocked, \"message not accepted\"",
        ),
    }
}

/// What a typed message came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Delivery {
    /// The CLI took it; what showed it.
    Taken(String),
    /// The turn cannot be looked at any more (cancelled, past the
    /// deadline, the pane gone, the session ended): the turn's wait says
    /// what happened.
    Moot,
    /// Nothing showed it within the bound; how the screen last read.
    NotTaken(Option<String>),
}

/// What clearing for a retry came to.
enum Retry {
    /// Cleared: type the message again.
    Retype,
    /// The message was taken after all: nothing more to type.
    TakenLate,
    /// Copy mode or the input could not be cleared: typing again would put
    /// the message on top of the first.
    Uncleared,
}

/// Whether a hook event means the CLI took a message: its prompt hook, or
/// anything only a started turn fires.
pub(super) fn hook_takes(kind: wit::CanonicalEvent) -> bool {
    matches!(
        kind,
        wit::CanonicalEvent::PromptSubmit
            | wit::CanonicalEvent::ToolStart
            | wit::CanonicalEvent::ToolEnd
            | wit::CanonicalEvent::PermissionRequest
            | wit::CanonicalEvent::Stop
            | wit::CanonicalEvent::StopFailure
    )
}

/// Whether a screen reading shows the message was taken: anything but
/// idle (working, a dialog the turn opened, a screen the rules do not
/// know), or an idle screen that changed from the one with the message
/// pasted in its input, before the Enter (the input emptied, a reply
/// drawn). An idle screen left as it was keeps the message in its input.
pub(super) fn screen_takes(state: wit::SeatState, rows: &[String], typed: &[String]) -> bool {
    state != wit::SeatState::Idle || rows != typed
}

impl Driver<'_> {
    /// Types `text`, then proves it arrived, retrying once: `Ok(true)`
    /// when it did, `Ok(false)` when the turn can no longer be looked at
    /// (its wait says why). `Err` is the turn's report: the message could
    /// not be typed, or was not taken.
    pub(super) fn deliver(&mut self, seat: &Seat, text: &str) -> Result<bool, Box<TurnReport>> {
        let typed = self.type_message(seat, text)?;
        let first = match self.taken(seat, typed) {
            Delivery::Taken(_) => return Ok(true),
            Delivery::Moot => return Ok(false),
            Delivery::NotTaken(screen) => screen,
        };
        match self.clear_for_retry(seat, text, first.as_deref()) {
            Retry::Retype => {}
            Retry::TakenLate => return Ok(true),
            Retry::Uncleared => return Err(Box::new(self.not_accepted(first.as_deref(), false))),
        }
        let typed = self.type_message(seat, text)?;
        let last = match self.taken(seat, typed) {
            Delivery::Taken(by) => {
                self.ctx.run.lifecycle(
                    self.task(),
                    "delivery-retry",
                    serde_json::json!({"step": "delivered", "by": by}),
                );
                return Ok(true);
            }
            Delivery::Moot => return Ok(false),
            Delivery::NotTaken(screen) => screen,
        };
        Err(Box::new(self.not_accepted(last.as_deref(), true)))
    }

    /// Pastes the message, reads the pane, then presses Enter. The reading
    /// is the message sitting in the input: the idle shape a screen that
    /// took it leaves (a reading after the Enter could already show a
    /// quick turn's end).
    fn type_message(
        &self,
        seat: &Seat,
        text: &str,
    ) -> Result<Option<Vec<String>>, Box<TurnReport>> {
        let cannot = |e: drover_workspace::WorkspaceError| {
            Box::new(self.result(
                Verdict::Crashed,
                format!("cannot type the prompt: {e}"),
                None,
                None,
            ))
        };
        seat.ws()
            .paste_text(&seat.pane, text, self.human)
            .map_err(cannot)?;
        let typed = self.read_screen_and_rows(seat).map(|(_, s)| s.rows);
        seat.ws().submit(&seat.pane, self.human).map_err(cannot)?;
        Ok(typed)
    }

    /// Watches hooks and the screen for [`DELIVERY_BOUND`], against the
    /// screen as it was `typed` (else as it first reads). Hook events read
    /// here are kept for the turn's wait, which applies them.
    fn taken(&mut self, seat: &Seat, typed: Option<Vec<String>>) -> Delivery {
        let until = Instant::now() + DELIVERY_BOUND;
        let mut after_typing = typed;
        let mut last = None;
        loop {
            if let Some((reading, screen)) = self.read_screen_and_rows(seat) {
                let before = after_typing.get_or_insert_with(|| screen.rows.clone());
                if screen_takes(reading.state, &screen.rows, before) {
                    return Delivery::Taken(format!("screen:{}", reading.rule));
                }
                last = Some(format!("{} ({})", reading.state.as_str(), reading.rule));
            }
            let events = self.fresh_events(TICK);
            let took = events
                .iter()
                .find(|e| hook_takes(e.kind))
                .map(|e| format!("hook:{}", e.native));
            let ended = events
                .iter()
                .any(|e| e.kind == wit::CanonicalEvent::SessionEnd);
            self.carried.extend(events);
            if let Some(by) = took {
                return Delivery::Taken(by);
            }
            if ended
                || self.spec.cancelled()
                || self.watchdog.deadline.expired().is_some()
                || matches!(seat.ws().pane_alive(&seat.pane), Ok(false))
            {
                return Delivery::Moot;
            }
            if Instant::now() >= until {
                return Delivery::NotTaken(last);
            }
        }
    }

    /// Leaves copy mode (and its selection) and clears the input line, each
    /// step journaled. Nothing is typed again into a pane whose message
    /// turned out to be taken after all, or whose mode or input could not
    /// be cleared (the message would land on top of the first).
    fn clear_for_retry(&mut self, seat: &Seat, text: &str, screen: Option<&str>) -> Retry {
        let (ctx, task) = (self.ctx, self.task());
        let waited = DELIVERY_BOUND.as_secs_f64();
        let step = |step: &str, detail: serde_json::Value| {
            let mut record =
                serde_json::json!({"step": step, "waited_s": waited, "screen": screen});
            if let (Some(obj), serde_json::Value::Object(more)) = (record.as_object_mut(), detail) {
                obj.extend(more);
            }
            ctx.run.lifecycle(task, "delivery-retry", record);
        };
        match seat.ws().pane_in_mode(&seat.pane) {
            Ok(true) => {
                let done = seat.ws().cancel_mode(&seat.pane, self.human);
                let failed = done.is_err();
                step(
                    "cancel-mode",
                    serde_json::json!({"error": done.err().map(|e| e.to_string())}),
                );
                if failed {
                    return Retry::Uncleared;
                }
            }
            Ok(false) => {}
            Err(e) => step("mode-unknown", serde_json::json!({"error": e.to_string()})),
        }
        // Looked at again before anything is cleared: a message taken late
        // (its hook, or a screen no longer idle) is not typed twice.
        let late = self.fresh_events(Duration::ZERO);
        let took = late.iter().any(|e| hook_takes(e.kind));
        self.carried.extend(late);
        let state = self.read_screen(seat).map(|r| r.state);
        if took || state.is_some_and(|s| s != wit::SeatState::Idle) {
            step(
                "taken-late",
                serde_json::json!({"state": state.map(|s| s.as_str())}),
            );
            return Retry::TakenLate;
        }
        let times = text.lines().count().clamp(1, CLEAR_MAX);
        let cleared = seat.ws().clear_input(&seat.pane, times, self.human);
        let failed = cleared.is_err();
        step(
            "clear-input",
            serde_json::json!({"keys": "ctrl-u", "times": times, "error": cleared.err().map(|e| e.to_string())}),
        );
        if failed {
            return Retry::Uncleared;
        }
        step("retype", serde_json::json!({"attempt": 2}));
        Retry::Retype
    }

    /// The message was not taken (`retried`: twice): the seat is blocked on
    /// it (a person looks at the pane), and the turn is not counted as
    /// working.
    fn not_accepted(&mut self, screen: Option<&str>, retried: bool) -> TurnReport {
        let (ctx, task) = (self.ctx, self.task());
        let kind = wit::PromptKind::Other;
        self.st.blocked = Some(kind);
        ctx.blocked(task, kind.as_str(), SOURCE, Some(NOT_ACCEPTED));
        ctx.attention(&format!(
            "task {task} is blocked: {NOT_ACCEPTED} (the CLI did not take the typed message; attach to its pane)"
        ));
        let secs = DELIVERY_BOUND.as_secs_f64();
        let shown = screen.unwrap_or("unreadable");
        let how = if retried {
            "twice (the input was cleared and it was typed again)"
        } else {
            "and its input could not be cleared to type it again"
        };
        self.result(
            Verdict::Stalled,
            format!(
                "{NOT_ACCEPTED}: the CLI showed no sign of taking the typed message within {secs} s, {how}; its screen reads {shown}; attach to its pane to see why"
            ),
            None,
            None,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn only_hooks_of_a_started_turn_prove_delivery() {
        for kind in [
            wit::CanonicalEvent::PromptSubmit,
            wit::CanonicalEvent::ToolStart,
            wit::CanonicalEvent::ToolEnd,
            wit::CanonicalEvent::PermissionRequest,
            wit::CanonicalEvent::Stop,
            wit::CanonicalEvent::StopFailure,
        ] {
            assert!(hook_takes(kind), "{kind:?}");
        }
        // A session starting or ending, or an idle notification, says
        // nothing about the message.
        for kind in [
            wit::CanonicalEvent::SessionStart,
            wit::CanonicalEvent::SessionEnd,
            wit::CanonicalEvent::Notification,
        ] {
            assert!(!hook_takes(kind), "{kind:?}");
        }
    }

    #[test]
    fn doctor_names_what_a_profile_cannot_prove() {
        assert_eq!(cannot(true, true), None);
        assert!(cannot(false, true).is_some_and(|l| l.contains("installs none")));
        assert!(cannot(true, false).is_some_and(|l| l.contains("only its hooks")));
        assert!(cannot(false, false).is_some_and(|l| l.contains(NOT_ACCEPTED)));
        // The bound the lines name is the one the driver waits.
        assert_eq!(DELIVERY_BOUND, Duration::from_secs(5));
    }

    #[test]
    fn an_idle_screen_left_as_it_was_keeps_the_message() {
        let typed = rows(&["❯ ", "  ⏵⏵ auto mode on", "Reply with exactly: X"]);
        assert!(!screen_takes(wit::SeatState::Idle, &typed, &typed));
        let answered = rows(&["❯ ", "  ⏵⏵ auto mode on", "● X"]);
        assert!(screen_takes(wit::SeatState::Idle, &answered, &typed));
        for state in [
            wit::SeatState::Working,
            wit::SeatState::Blocked,
            wit::SeatState::Unknown,
        ] {
            assert!(screen_takes(state, &typed, &typed), "{state:?}");
        }
    }
}
