//! The driver's bookkeeping: building results, reading hooks and the
//! screen, waiting for the screen to read idle (answering its dialogs by
//! policy), and typing the prompt.

use std::time::{Duration, Instant};

use super::dialog;
use super::{Driver, EndSignal, Event, POLICY_TRIES, Readiness, SETTLE_LIMIT, Seat, State, TICK};
use crate::clock::Deadline;
use crate::result_file::ResultFile;
use crate::watchdog::Watchdog;
use crate::{Context, Timings, TurnReport, TurnSpec, Verdict};
use drover_run::question::{Answerer, Question};
use drover_run::{EventWatcher, HookRecord, now_ns};
use drover_trust::policy::Policy;
use drover_types::WorkspaceKind;
use drover_types::wit;

/// How long a blocked screen without readable options is given to finish
/// drawing its dialog before it is reported as it is.
const OPTIONS_DRAWN: Duration = Duration::from_secs(2);
/// How long a nudge waits for the screen to read idle.
const NUDGE_READY: Duration = Duration::from_secs(5);

impl<'a> Driver<'a> {
    pub(super) fn new(
        ctx: &'a Context,
        spec: &'a TurnSpec,
        since: u64,
        human: bool,
        workspace: WorkspaceKind,
    ) -> Driver<'a> {
        Driver {
            ctx,
            spec,
            started: now_ns(),
            clock: Instant::now(),
            watchdog: Watchdog::new(Deadline::after(spec.timeout)),
            log: ctx.run.log(&spec.task),
            st: State {
                session_id: None,
                transcript_path: None,
                blocked: None,
                stop_seen: false,
                reply: None,
                typed_over: None,
            },
            result_file: spec
                .result_file
                .as_ref()
                .map(|p| ResultFile::before_launch(p.clone())),
            watcher: EventWatcher::new(
                ctx.run.events_dir(),
                crate::drops::DropParser::for_seat(ctx.run.root(), ctx.profile(), ctx.adapter()),
            )
            .since(since),
            since,
            profile: ctx.profile().to_wit(),
            workspace,
            human,
            // Only the project's file counts; a broken one asks a person.
            policy: Policy::load(&ctx.project).unwrap_or_else(|e| {
                ctx.run.lifecycle(
                    spec.task.as_str(),
                    "policy-unreadable",
                    serde_json::json!({"error": e.to_string()}),
                );
                Policy::default()
            }),
            policy_tries: std::collections::HashMap::new(),
            carried: Vec::new(),
        }
    }

    pub(super) fn task(&self) -> &'a str {
        self.spec.task.as_str()
    }

    pub(super) fn result(
        &self,
        status: Verdict,
        reason: String,
        result: Option<serde_json::Value>,
        timeout_clock: Option<&str>,
    ) -> TurnReport {
        TurnReport {
            status,
            run_id: self.ctx.run.id().to_string(),
            task: self.task().to_string(),
            cli: self.ctx.profile().name.clone(),
            workspace: self.workspace,
            reason,
            session_id: self.st.session_id.clone(),
            transcript_path: self.st.transcript_path.clone(),
            reply: self.st.reply.clone(),
            usage: None,
            cost_usd: None,
            usage_approximate: false,
            fault: None,
            blocked: if status == Verdict::Completed {
                None
            } else {
                self.st.blocked
            },
            stop_seen: self.st.stop_seen,
            result,
            exit_code: None,
            budget_weighted: self.watchdog.budget.weighted,
            timings: Timings {
                started_ns: self.started,
                ended_ns: now_ns(),
                duration_ms: self.clock.elapsed().as_millis() as u64,
                timeout_clock: timeout_clock.map(str::to_string),
            },
            logs: vec![self.log.clone()],
        }
    }

    /// The pane is gone: completed if the result file is there, else crashed.
    pub(super) fn gone(&self, reason: &str) -> TurnReport {
        let found = self.result_file.as_ref().and_then(ResultFile::read);
        let status = if found.is_some() {
            Verdict::Completed
        } else {
            Verdict::Crashed
        };
        self.result(status, reason.to_string(), found, None)
    }

    /// Drover was asked to stop: the report says what the pane shows now.
    pub(super) fn interrupted(&mut self, seat: &Seat) -> Option<TurnReport> {
        self.spec.cancelled().then(|| {
            self.last_look(seat);
            self.result(
                Verdict::Crashed,
                "interrupted: drover was asked to stop".to_string(),
                None,
                None,
            )
        })
    }

    /// One more reading of the pane as the turn is given up, so a dialog
    /// drawn since the last look is what the report says the seat is blocked
    /// on (the last look may predate it by a tick). Never answers it: drover
    /// is stopping, not deciding.
    pub(super) fn last_look(&mut self, seat: &Seat) {
        let Some(reading) = self.read_screen(seat) else {
            return;
        };
        if reading.state == wit::SeatState::Blocked {
            let kind = reading.prompt_kind.unwrap_or(wit::PromptKind::Other);
            let source = format!("screen:{}", reading.rule);
            self.blocked(kind, &source, false, Some(&reading.evidence));
        }
    }

    /// The seat's hook events: those kept while a message's delivery was
    /// being proven first, else what arrives within `wait`.
    pub(super) fn events(&mut self, wait: Duration) -> Vec<HookRecord> {
        if !self.carried.is_empty() {
            return std::mem::take(&mut self.carried);
        }
        self.fresh_events(wait)
    }

    /// Hook events for this seat that arrive within `wait`.
    pub(super) fn fresh_events(&mut self, wait: Duration) -> Vec<HookRecord> {
        let task = self.task();
        let since = self.since;
        self.watcher
            .wait(wait)
            .into_iter()
            .filter(|e| e.task == task && e.ts >= since)
            .collect()
    }

    pub(super) fn read_screen(&self, seat: &Seat) -> Option<wit::ScreenReading> {
        self.read_screen_and_rows(seat).map(|(reading, _)| reading)
    }

    /// The adapter's reading of the pane, with the screen it read.
    pub(super) fn read_screen_and_rows(
        &self,
        seat: &Seat,
    ) -> Option<(wit::ScreenReading, wit::Screen)> {
        let screen = seat.ws().read_pane(&seat.pane).ok()?;
        let reading = self
            .ctx
            .adapter()
            .read_screen(&self.profile, &screen)
            .ok()?;
        Some((reading, screen))
    }

    /// A blocked screen: its dialog is journaled as the seat's question
    /// (or, without readable options, the seat as blocked with the line
    /// that showed it), and the project's policy may answer it. Returns
    /// whether the policy answered (the screen moved on).
    pub(super) fn on_blocked_screen(
        &mut self,
        seat: &Seat,
        reading: &wit::ScreenReading,
        before_first_turn: bool,
    ) -> bool {
        let (ctx, task) = (self.ctx, self.task());
        let kind = reading.prompt_kind.unwrap_or(wit::PromptKind::Other);
        let source = format!("screen:{}", reading.rule);
        let Some((asked, new)) = dialog::observe(ctx, task, reading) else {
            self.blocked(kind, &source, before_first_turn, Some(&reading.evidence));
            return false;
        };
        self.st.blocked = Some(kind);
        if self.answer_by_policy(seat, &asked) {
            self.st.blocked = None;
            return true;
        }
        if new {
            ctx.attention(&format!(
                "task {task} is blocked on a question on its pane: {} (answer with `drover answer`: {})",
                asked.title,
                asked.options_line()
            ));
        }
        false
    }

    /// The policy's answer to a pane question, pressed and settled; never
    /// on a person's seat, and at most [`POLICY_TRIES`] times per dialog.
    fn answer_by_policy(&mut self, seat: &Seat, asked: &Question) -> bool {
        if self.human {
            return false;
        }
        let Some(verdict) = self.policy.decide(asked) else {
            return false;
        };
        let Some(choice) = asked.options.iter().find(|c| c.id == verdict.option) else {
            return false;
        };
        let signature = format!("{}\n{}\n{}", asked.tool, asked.title, asked.options_line());
        let tries = self.policy_tries.entry(signature).or_default();
        if *tries >= POLICY_TRIES {
            return false;
        }
        *tries += 1;
        let (ctx, task) = (self.ctx, self.task());
        let by = Answerer::Policy { rule: verdict.rule };
        match dialog::answer(ctx, task, seat, asked, choice, &by, false) {
            Ok(()) => {
                dialog::settle(ctx, task, seat, asked, SETTLE_LIMIT);
                true
            }
            Err(why) => {
                ctx.run.lifecycle(
                    task,
                    "policy-answer-failed",
                    serde_json::json!({"question": asked.id, "why": why}),
                );
                false
            }
        }
    }

    /// The result of a message that was not typed because the screen did
    /// not read idle.
    pub(super) fn not_typed(&self, readiness: &Readiness) -> TurnReport {
        let task = self.task();
        let reason = match readiness {
            Readiness::Idle => "the screen reads idle".to_string(),
            Readiness::Asking => {
                let asked = drover_run::question::pending(&self.ctx.run.journal_path(), task);
                match asked {
                    Some(q) => format!(
                        "{task} waits on a question, so nothing was typed: {} ({}); answer it with `drover answer`",
                        q.title,
                        q.options_line()
                    ),
                    None => format!(
                        "{task} waits at a prompt drover cannot answer, so nothing was typed; attach to its pane to answer it"
                    ),
                }
            }
            Readiness::Unread(lines) => format!(
                "the CLI's screen did not read ready within {} s, so nothing was typed; its last lines: {lines}",
                self.ctx.profile().ready_timeout.as_secs_f64()
            ),
        };
        self.result(Verdict::Stalled, reason, None, None)
    }

    pub(super) fn blocked(
        &mut self,
        kind: wit::PromptKind,
        source: &str,
        before_first_turn: bool,
        evidence: Option<&str>,
    ) {
        let task = self.task();
        if self.st.blocked != Some(kind) {
            let when = if before_first_turn {
                " before its first turn"
            } else {
                ""
            };
            self.ctx
                .attention(&format!("task {task} is blocked on a {kind} prompt{when}"));
        }
        self.st.blocked = Some(kind);
        self.ctx.blocked(task, kind.as_str(), source, evidence);
    }

    /// Waits until the screen reads idle. A dialog is journaled as a
    /// question (the policy may answer it); with `until_answered` the wait
    /// goes on until it is answered, else it ends there. A screen that
    /// reads as nothing known for the profile's `ready_timeout` ends it
    /// too, with its last lines journaled. A busy screen is waited on
    /// within the deadline.
    /// The screen must read idle for `hold` without a break: a CLI that has
    /// just started may draw its prompt before the dialog that replaces it
    /// (Codex 0.171 shows its composer, then folder trust).
    pub(super) fn wait_ready(
        &mut self,
        seat: &Seat,
        until_answered: bool,
        hold: Duration,
    ) -> Result<Readiness, Box<TurnReport>> {
        let task = self.task();
        let before_first_turn = self.st.session_id.is_none();
        let mut unread_since = Instant::now();
        let mut idle_since: Option<Instant> = None;
        let mut optionless_since: Option<Instant> = None;
        loop {
            if let Some(r) = self.interrupted(seat) {
                return Err(Box::new(r));
            }
            if let Some(which) = self.watchdog.deadline.expired() {
                return Err(Box::new(self.result(
                    Verdict::Timeout,
                    format!("the CLI's screen never read idle before the deadline ({which} clock)"),
                    None,
                    Some(which),
                )));
            }
            if let Ok(false) = seat.ws().pane_alive(&seat.pane) {
                return Err(Box::new(self.gone("the CLI exited before it was ready")));
            }
            for event in self.events(TICK) {
                self.absorb(&event);
            }
            let read = self.read_screen_and_rows(seat);
            let state = read.as_ref().map(|(r, _)| r.state);
            if state != Some(wit::SeatState::Idle) {
                idle_since = None;
            }
            if state != Some(wit::SeatState::Blocked) {
                optionless_since = None;
            }
            match (state, read) {
                (Some(wit::SeatState::Idle), _)
                    if idle_since.get_or_insert_with(Instant::now).elapsed() < hold =>
                {
                    unread_since = Instant::now();
                }
                (Some(wit::SeatState::Idle), Some((reading, _))) => {
                    self.st.blocked = None;
                    let source = format!("screen:{}", reading.rule);
                    self.ctx.state(task, wit::SeatState::Idle, None, &source);
                    return Ok(Readiness::Idle);
                }
                // A dialog still being drawn reads blocked before its
                // options do: give it a moment to become a question.
                (Some(wit::SeatState::Blocked), Some((reading, _)))
                    if dialog::question_of(task, &reading).is_none()
                        && optionless_since.get_or_insert_with(Instant::now).elapsed()
                            < OPTIONS_DRAWN =>
                {
                    unread_since = Instant::now();
                }
                (Some(wit::SeatState::Blocked), Some((reading, _))) => {
                    unread_since = Instant::now();
                    if self.on_blocked_screen(seat, &reading, before_first_turn) {
                        continue;
                    }
                    if !until_answered {
                        return Ok(Readiness::Asking);
                    }
                }
                (Some(wit::SeatState::Working), _) => unread_since = Instant::now(),
                (_, read) if unread_since.elapsed() >= self.ctx.profile().ready_timeout => {
                    let lines = read
                        .map(|(_, screen)| dialog::last_lines(&screen, 5))
                        .unwrap_or_else(|| "(the pane could not be read)".to_string());
                    self.ctx.unreadable(task, "screen:none", &lines);
                    self.ctx.run.lifecycle(
                        task,
                        "screen-unread",
                        serde_json::json!({"waited_s": self.ctx.profile().ready_timeout.as_secs_f64(), "last_lines": lines}),
                    );
                    return Ok(Readiness::Unread(lines));
                }
                _ => {}
            }
        }
    }

    /// Types `text` (a nudge) only into a screen that reads idle — or,
    /// with `busy_ok`, working (a busy TUI queues it) — waiting a moment
    /// for one; otherwise journals that it was withheld.
    pub(super) fn type_nudge(&self, seat: &Seat, text: &str, why: &str, busy_ok: bool) -> bool {
        let (ctx, task) = (self.ctx, self.task());
        let until = Instant::now() + NUDGE_READY;
        let last = loop {
            let reading = self.read_screen(seat);
            let state = reading.as_ref().map(|r| r.state);
            let typeable = state == Some(wit::SeatState::Idle)
                || (busy_ok && state == Some(wit::SeatState::Working));
            if typeable {
                if let Err(e) = seat.ws().type_text(&seat.pane, text, self.human) {
                    ctx.run.lifecycle(
                        task,
                        "nudge-failed",
                        serde_json::json!({"why": why, "error": e.to_string()}),
                    );
                    return false;
                }
                return true;
            }
            if Instant::now() >= until {
                break reading.map(|r| (r.state.as_str(), r.rule));
            }
            std::thread::sleep(TICK);
        };
        ctx.run.lifecycle(
            task,
            "nudge-withheld",
            serde_json::json!({"why": why, "screen": last.map(|(state, rule)| format!("{state} ({rule})"))}),
        );
        false
    }

    /// Renders the prompt, types it once the screen reads idle, proves the
    /// CLI took it ([`Driver::deliver`]), then waits for the turn's
    /// verdict. Nothing is typed into a screen that asks a question or
    /// cannot be read.
    pub(super) fn turn(&mut self, seat: &Seat) -> TurnReport {
        let task = self.task();
        let rendered = match self
            .ctx
            .adapter()
            .render_prompt(&self.profile, &self.spec.prompt)
        {
            Ok(Ok(text)) => text,
            Ok(Err(wit::AdapterError::InvalidInput(m) | wit::AdapterError::Unsupported(m))) => {
                return self.result(
                    Verdict::Crashed,
                    format!("the adapter cannot render the prompt: {m}"),
                    None,
                    None,
                );
            }
            Err(e) => {
                return self.result(
                    Verdict::Crashed,
                    format!("the adapter failed rendering the prompt: {e}"),
                    None,
                    None,
                );
            }
        };
        match self.wait_ready(seat, false, Duration::ZERO) {
            Ok(Readiness::Idle) => {}
            Ok(not_ready) => return self.not_typed(&not_ready),
            Err(result) => return *result,
        }
        // A hookless seat learns its turn ended from the screen: what it
        // showed before the prompt tells a screen that moved on from one
        // that never did.
        if self.ctx.profile().hookless() {
            self.st.typed_over = seat.ws().read_pane(&seat.pane).ok().map(|s| s.rows);
        }
        match self.deliver(seat, &rendered) {
            Ok(true) => {
                self.st.blocked = None;
                self.ctx
                    .state(task, wit::SeatState::Working, None, "prompt-typed");
            }
            // Unproven (stopped, past the deadline, the pane gone): the
            // wait reports why, and the seat is never called working.
            Ok(false) => {}
            Err(report) => return *report,
        }
        self.wait_turn(seat)
    }

    /// Applies one hook event; returns what it means for the turn.
    pub(super) fn absorb(&mut self, event: &HookRecord) -> Event {
        let (ctx, task) = (self.ctx, self.task());
        // A subagent's stop without a transcript (Copilot) says nothing about
        // the seat, not even its session id.
        let transcriptless = event.transcript_path.as_deref().is_none_or(str::is_empty);
        if event.kind == wit::CanonicalEvent::Stop
            && ctx.profile().subagent_stop_without_transcript
            && transcriptless
        {
            ctx.run.lifecycle(
                task,
                "subagent-stop-ignored",
                serde_json::json!({"native": event.native}),
            );
            return Event::Nothing;
        }
        if let Some(id) = event.session_id.as_ref().filter(|s| !s.is_empty()) {
            self.st.session_id = Some(id.clone());
        }
        if let Some(path) = event.transcript_path.as_ref().filter(|s| !s.is_empty()) {
            self.st.transcript_path = Some(path.clone());
        }
        let source = format!("hook:{}", event.native);
        match event.kind {
            wit::CanonicalEvent::Stop if event.subagent => Event::Nothing,
            wit::CanonicalEvent::Stop => {
                if event.last_message.is_some() {
                    self.st.reply = event.last_message.clone();
                }
                Event::Stop(EndSignal::StopHook)
            }
            wit::CanonicalEvent::StopFailure => Event::Failure(event.reason.clone()),
            wit::CanonicalEvent::SessionEnd => Event::End(event.reason.clone()),
            wit::CanonicalEvent::PermissionRequest | wit::CanonicalEvent::Notification => {
                if let Some(kind) = event.prompt_kind {
                    let evidence = crate::hook_evidence(event);
                    self.blocked(kind, &source, false, evidence.as_deref());
                }
                Event::Nothing
            }
            wit::CanonicalEvent::PromptSubmit
            | wit::CanonicalEvent::ToolStart
            | wit::CanonicalEvent::ToolEnd => {
                self.st.blocked = None;
                ctx.state(task, wit::SeatState::Working, None, &source);
                Event::Nothing
            }
            _ => Event::Nothing,
        }
    }
}
