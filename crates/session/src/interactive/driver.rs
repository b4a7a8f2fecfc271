//! The driver's bookkeeping: building results, reading hooks and the
//! screen, waiting for the CLI to be ready, and typing the prompt.

use std::time::{Duration, Instant};

use super::{Driver, Event, READY_TIMEOUT, Seat, State, TICK, pane_kind};
use crate::budget::Budget;
use crate::clock::Deadline;
use crate::result_file::ResultFile;
use crate::{Context, SessionResult, SessionSpec, Status, Timings};
use drover_run::{EventWatcher, HookRecord, now_ns};
use drover_sandbox::wit;

impl<'a> Driver<'a> {
    pub(super) fn new(ctx: &'a Context, spec: &'a SessionSpec, since: u64) -> Driver<'a> {
        Driver {
            ctx,
            spec,
            started: now_ns(),
            clock: Instant::now(),
            deadline: Deadline::after(spec.timeout),
            log: ctx.run.log(&spec.task),
            st: State {
                session_id: None,
                transcript_path: None,
                blocked: None,
                stop_seen: false,
                reply: None,
            },
            budget: Budget::new(),
            result_file: spec
                .result_file
                .as_ref()
                .map(|p| ResultFile::before_launch(p.clone())),
            watcher: EventWatcher::new(
                ctx.run.events_dir(),
                crate::relay::DropParser::for_seat(ctx.run.root(), ctx.profile(), ctx.adapter()),
            ),
            since,
            profile: ctx.profile().to_wit(),
            workspace: pane_kind(ctx).as_str(),
        }
    }

    pub(super) fn task(&self) -> &'a str {
        self.spec.task.as_str()
    }

    pub(super) fn result(
        &self,
        status: Status,
        reason: String,
        result: Option<serde_json::Value>,
        timeout_clock: Option<&str>,
    ) -> SessionResult {
        SessionResult {
            status,
            run_id: self.ctx.run.id().to_string(),
            task: self.task().to_string(),
            cli: self.ctx.profile().name.clone(),
            workspace: self.workspace.to_string(),
            reason,
            session_id: self.st.session_id.clone(),
            transcript_path: self.st.transcript_path.clone(),
            reply: self.st.reply.clone(),
            usage: None,
            cost_usd: None,
            fault: None,
            blocked: if status == Status::Completed {
                None
            } else {
                self.st.blocked
            },
            stop_seen: self.st.stop_seen,
            result,
            exit_code: None,
            budget_weighted: self.budget.weighted,
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
    pub(super) fn gone(&self, reason: &str) -> SessionResult {
        let found = self.result_file.as_ref().and_then(ResultFile::read);
        let status = if found.is_some() {
            Status::Completed
        } else {
            Status::Crashed
        };
        self.result(status, reason.to_string(), found, None)
    }

    pub(super) fn interrupted(&self) -> Option<SessionResult> {
        self.spec.cancelled().then(|| {
            self.result(
                Status::Crashed,
                "interrupted: drover was asked to stop".to_string(),
                None,
                None,
            )
        })
    }

    pub(super) fn events(&mut self, wait: Duration) -> Vec<HookRecord> {
        let task = self.task();
        let since = self.since;
        self.watcher
            .wait(wait)
            .into_iter()
            .filter(|e| e.task == task && e.ts >= since)
            .collect()
    }

    pub(super) fn read_screen(&self, seat: &Seat) -> Option<wit::ScreenReading> {
        let screen = seat.ws().read_pane(&seat.pane).ok()?;
        self.ctx.adapter().read_screen(&self.profile, &screen).ok()
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
                .notify(&format!("task {task} is blocked on a {kind} prompt{when}"));
        }
        self.st.blocked = Some(kind);
        self.ctx.blocked(task, kind.as_str(), source, evidence);
    }

    /// Waits until the screen reads ready (or the ready timeout passes).
    pub(super) fn wait_ready(&mut self, seat: &Seat) -> Result<(), Box<SessionResult>> {
        let task = self.task();
        let ready_since = Instant::now();
        loop {
            if let Some(r) = self.interrupted() {
                return Err(Box::new(r));
            }
            if let Some(which) = self.deadline.expired() {
                return Err(Box::new(self.result(
                    Status::Timeout,
                    format!("the CLI never became ready before the deadline ({which} clock)"),
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
            let reading = self.read_screen(seat);
            let source = format!(
                "screen:{}",
                reading.as_ref().map_or("", |r| r.rule.as_str())
            );
            match reading.as_ref().map(|r| r.state) {
                Some(wit::SeatState::Idle) => {
                    self.ctx.state(task, wit::SeatState::Idle, None, &source);
                    return Ok(());
                }
                Some(wit::SeatState::Blocked) => {
                    let kind = reading
                        .as_ref()
                        .and_then(|r| r.prompt_kind)
                        .unwrap_or(wit::PromptKind::Other);
                    let evidence = reading.as_ref().map(|r| r.evidence.clone());
                    self.blocked(kind, &source, true, evidence.as_deref());
                }
                _ if ready_since.elapsed() >= READY_TIMEOUT && self.st.blocked.is_none() => {
                    self.ctx.run.lifecycle(
                        task,
                        "typed-without-ready-screen",
                        serde_json::json!({"waited_s": READY_TIMEOUT.as_secs()}),
                    );
                    return Ok(());
                }
                _ => {}
            }
        }
    }

    /// Renders and types the prompt, then waits for the turn's verdict.
    pub(super) fn turn(&mut self, seat: &Seat, human: bool) -> SessionResult {
        let task = self.task();
        let rendered = match self
            .ctx
            .adapter()
            .render_prompt(&self.profile, &self.spec.prompt)
        {
            Ok(Ok(text)) => text,
            Ok(Err(wit::AdapterError::InvalidInput(m) | wit::AdapterError::Unsupported(m))) => {
                return self.result(
                    Status::Crashed,
                    format!("the adapter cannot render the prompt: {m}"),
                    None,
                    None,
                );
            }
            Err(e) => {
                return self.result(
                    Status::Crashed,
                    format!("the adapter failed rendering the prompt: {e}"),
                    None,
                    None,
                );
            }
        };
        if let Err(e) = seat.ws().type_text(&seat.pane, &rendered, human) {
            return self.result(
                Status::Crashed,
                format!("cannot type the prompt: {e}"),
                None,
                None,
            );
        }
        self.st.blocked = None;
        self.ctx
            .state(task, wit::SeatState::Working, None, "prompt-typed");
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
                Event::Stop
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
