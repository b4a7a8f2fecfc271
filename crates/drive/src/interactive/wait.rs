//! Waiting for a turn's end, from the typed prompt: hooks,
//! pane liveness, the screen, log activity, the clock and the budget.

use std::path::Path;
use std::time::Instant;

use super::{Driver, EndSignal, Event, SCREEN_EVERY, Seat, TICK, Watch};
use crate::shared::{NUDGE_BUDGET, NUDGE_RESULT, NUDGE_STALL, humanize};
use crate::verdict::{self, ResultState};
use crate::watchdog::{Activity, Alarm};
use crate::{TurnReport, Verdict};
use drover_types::wit;

impl Driver<'_> {
    /// The verdict machine, from a typed prompt to the turn's end.
    pub(super) fn wait_turn(&mut self, seat: &Seat) -> TurnReport {
        let mut watch = Watch {
            nudges_left: self.spec.stop_nudges,
            stall_nudges_left: self.spec.stall_nudges,
            last_screen: Instant::now(),
            activity: Activity::new(log_key(&self.log)),
            moved: false,
            still: None,
        };
        loop {
            if let Some(r) = self.clock_and_budget(seat) {
                return r;
            }
            let mut outcome = Event::Nothing;
            for event in self.events(TICK.min(self.watchdog.deadline.remaining())) {
                let kind = self.absorb(&event);
                if !matches!(kind, Event::Nothing) {
                    outcome = kind;
                    break;
                }
            }
            if let Some(r) = self.on_event(seat, outcome, &mut watch) {
                return r;
            }
            match seat.ws().pane_alive(&seat.pane) {
                Ok(false) => return self.gone("the CLI's pane is gone (it exited)"),
                Ok(true) => {}
                // Could not ask: not a crash. The deadline bounds a lasting failure.
                Err(e) => self.ctx.run.lifecycle(
                    self.task(),
                    "mux-unavailable",
                    serde_json::json!({"error": e.to_string()}),
                ),
            }
            if watch.last_screen.elapsed() >= SCREEN_EVERY {
                watch.last_screen = Instant::now();
                let settled = self.look_at_screen(seat, &mut watch);
                if settled
                    && let Some(r) =
                        self.on_event(seat, Event::Stop(EndSignal::SettledScreen), &mut watch)
                {
                    return r;
                }
            }
            if let Some(r) = self.on_silence(seat, &mut watch) {
                return r;
            }
        }
    }

    /// The watchdog: the cancel, the deadline, the heartbeat and the token
    /// budget.
    pub(super) fn clock_and_budget(&mut self, seat: &Seat) -> Option<TurnReport> {
        let (ctx, spec, task) = (self.ctx, self.spec, self.task());
        let alarm = self
            .watchdog
            .check(ctx, spec, self.st.transcript_path.as_deref())?;
        let ruling = match alarm {
            Alarm::Cancelled => {
                self.last_look(seat);
                verdict::interrupted()
            }
            Alarm::Timeout(which) => {
                ctx.run.lifecycle(task, "timeout-fired", serde_json::json!({"expired_clock": which, "timeout_s": spec.timeout.as_secs_f64()}));
                let ruling = verdict::timed_out(spec.timeout, which);
                return Some(self.result(ruling.verdict, ruling.reason, None, Some(which)));
            }
            Alarm::BudgetNudge => {
                // A working TUI queues it: the point is to reach the agent
                // mid-turn.
                if self.type_nudge(seat, NUDGE_BUDGET, "budget", true) {
                    ctx.run
                        .lifecycle(task, "nudge", serde_json::json!({"why": "budget"}));
                }
                return None;
            }
            // A pane that died meanwhile crashed; it did not run over.
            Alarm::OverBudget if matches!(seat.ws().pane_alive(&seat.pane), Ok(false)) => {
                verdict::gone(
                    "the CLI's pane is gone (it exited) after the token budget was exceeded",
                )
            }
            Alarm::OverBudget => verdict::over_budget(),
        };
        Some(self.result(ruling.verdict, ruling.reason, None, None))
    }

    /// What a turn-ending hook decides: the turn's result, or a nudge and
    /// more waiting.
    pub(super) fn on_event(
        &mut self,
        seat: &Seat,
        outcome: Event,
        watch: &mut Watch,
    ) -> Option<TurnReport> {
        let (ctx, spec, task) = (self.ctx, self.spec, self.task());
        match outcome {
            Event::Stop(signal) => {
                self.st.stop_seen = true;
                self.st.blocked = None;
                ctx.state(task, wit::SeatState::Done, None, signal.source());
                let alive = || !matches!(seat.ws().pane_alive(&seat.pane), Ok(false));
                let found = self
                    .result_file
                    .as_ref()
                    .and_then(|file| file.wait(spec.result_wait, alive));
                let state = ResultState::of(spec.result_file.as_ref(), found.is_some());
                let (Some(result_file), ResultState::Missing(_)) = (&self.result_file, &state)
                else {
                    let ruling = verdict::finished(Some(signal.why()), &state);
                    return Some(self.result(ruling.verdict, ruling.reason, found, None));
                };
                ctx.run.lifecycle(
                    task,
                    "resultless-stop",
                    serde_json::json!({"path": result_file.path(), "nudges_left": watch.nudges_left}),
                );
                if watch.nudges_left == 0 {
                    let ruling = verdict::finished(Some(signal.why()), &state);
                    return Some(self.result(ruling.verdict, ruling.reason, None, None));
                }
                watch.nudges_left -= 1;
                ctx.run.lifecycle(
                    task,
                    "nudge",
                    serde_json::json!({"why": "result-file", "left": watch.nudges_left}),
                );
                let text = format!("{NUDGE_RESULT} ({})", result_file.path().display());
                if self.type_nudge(seat, &text, "result-file", false) {
                    ctx.state(task, wit::SeatState::Working, None, "nudge");
                }
                None
            }
            Event::Failure(reason) => {
                ctx.state(task, wit::SeatState::Unknown, None, "hook:StopFailure");
                let why = reason.map_or_else(
                    || "the turn failed (StopFailure)".to_string(),
                    |r| format!("the turn failed: {r}"),
                );
                Some(self.result(Verdict::Stalled, why, None, None))
            }
            Event::End(reason) => {
                let why = format!(
                    "the CLI ended its session{}",
                    reason.map(|r| format!(" ({r})")).unwrap_or_default()
                );
                Some(self.gone(&why))
            }
            Event::Nothing => None,
        }
    }

    /// Reads the screen (and the multiplexer's own reading) for a blocked
    /// or working seat; a dialog mid-turn (a tool permission) becomes the
    /// seat's question, which the policy may answer. For a hookless seat,
    /// true when the turn ended: the screen moved on from what it showed
    /// before the prompt, then read idle without changing for the
    /// profile's `screen_settle_s`.
    pub(super) fn look_at_screen(&mut self, seat: &Seat, watch: &mut Watch) -> bool {
        let (ctx, task) = (self.ctx, self.task());
        let native = seat.ws().agent_state(&seat.pane).ok().flatten();
        let native_blocked = native.as_deref() == Some("blocked");
        let mut settled = false;
        if let Some((reading, screen)) = self.read_screen_and_rows(seat) {
            let source = format!("screen:{}", reading.rule);
            if ctx.profile().hookless() {
                settled = self.screen_settled(&reading, screen.rows, watch);
            }
            match reading.state {
                wit::SeatState::Blocked => {
                    self.on_blocked_screen(seat, &reading, false);
                }
                wit::SeatState::Working if !native_blocked => {
                    self.st.blocked = None;
                    ctx.state(task, wit::SeatState::Working, None, &source);
                }
                _ => {}
            }
        }
        if native_blocked && self.st.blocked.is_none() {
            let source = format!("{}:blocked", self.workspace);
            let evidence = format!("{} reads the agent as blocked", self.workspace);
            self.blocked(wit::PromptKind::Other, &source, false, Some(&evidence));
        }
        settled && !native_blocked && self.st.blocked.is_none()
    }

    /// One look at a hookless seat's screen for the end of its turn.
    fn screen_settled(
        &self,
        reading: &wit::ScreenReading,
        rows: Vec<String>,
        watch: &mut Watch,
    ) -> bool {
        if reading.state == wit::SeatState::Working
            || self
                .st
                .typed_over
                .as_ref()
                .is_some_and(|before| *before != rows)
        {
            watch.moved = true;
        }
        if !watch.moved || reading.state != wit::SeatState::Idle {
            watch.still = None;
            return false;
        }
        match &watch.still {
            Some((seen, since)) if *seen == rows => {
                since.elapsed() >= self.ctx.profile().screen_settle
            }
            _ => {
                watch.still = Some((rows, Instant::now()));
                false
            }
        }
    }

    /// Silence past the stall window: a nudge while any are left, then
    /// stalled.
    pub(super) fn on_silence(&mut self, seat: &Seat, watch: &mut Watch) -> Option<TurnReport> {
        let (ctx, task) = (self.ctx, self.task());
        watch.activity.observe(log_key(&self.log));
        if let Some(grace) = self.spec.stall_grace
            && watch.activity.stalled(Some(grace))
            && self.st.blocked.is_none()
        {
            if watch.stall_nudges_left > 0 {
                watch.stall_nudges_left -= 1;
                ctx.run.lifecycle(
                    task,
                    "nudge",
                    serde_json::json!({"why": "stall", "left": watch.stall_nudges_left}),
                );
                self.type_nudge(seat, NUDGE_STALL, "stall", false);
                watch.activity.touch();
            } else {
                if matches!(seat.ws().pane_alive(&seat.pane), Ok(false)) {
                    return Some(self.gone("the CLI's pane is gone (it exited)"));
                }
                // A live pane's artifact is not trusted: the work may be mid-write.
                let ruling = verdict::stalled(&format!("no activity for {}", humanize(grace)));
                return Some(self.result(ruling.verdict, ruling.reason, None, None));
            }
        }
        None
    }
}

fn log_key(path: &Path) -> Option<(u64, std::time::SystemTime)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}
