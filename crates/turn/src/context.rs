//! What a session driver works with: the project, the run directory and its
//! journal, the profile and its loaded adapter. A context is made only from
//! a [`Prepared`] launch (crate::launch), and remembers its provenance: the
//! drivers' spawn is cleared with it, so a context whose profile or component
//! the user has not trusted cannot start a process.

use std::path::PathBuf;
use std::sync::Mutex;

use drover_gate::Provenance;
use drover_profile::Profile;
use drover_run::{Journal, Origin, RunDir, Transition};
use drover_types::Verdict;
use drover_types::wit::SeatState;

use crate::component::Component;
use crate::launch::Prepared;

pub struct Context {
    pub project: PathBuf,
    pub run: RunDir,
    // Private, so no one swaps the profile or component a launch was
    // prepared (and trust-checked) with.
    profile: Profile,
    adapter: Box<dyn Component>,
    pub journal: Mutex<Journal>,
    /// Whether lines this process appends kick `[[notify]]` entries. Off
    /// on a Ray node: the drover that submitted the turn notifies when it
    /// copies the lines home.
    pub notifies: bool,
    /// Where the profile and component came from ([`Prepared::from`]).
    launch_from: Provenance,
}

impl Context {
    pub fn new(project: PathBuf, run: RunDir, prepared: Prepared) -> Context {
        let journal = Journal::open(run.journal_path());
        Context {
            project,
            run,
            profile: prepared.profile,
            adapter: Box::new(prepared.adapter),
            journal: Mutex::new(journal),
            notifies: true,
            launch_from: prepared.from,
        }
    }

    /// A context over a component double, for drivers' tests (the
    /// `doubles` feature, a dev-dependency only): the profile counts as
    /// built in, as a prepared built-in launch would.
    #[cfg(feature = "doubles")]
    pub fn with_component(
        project: PathBuf,
        run: RunDir,
        profile: Profile,
        component: Box<dyn Component>,
    ) -> Context {
        let journal = Journal::open(run.journal_path());
        Context {
            project,
            run,
            profile,
            adapter: component,
            journal: Mutex::new(journal),
            notifies: false,
            launch_from: Provenance::Builtin,
        }
    }

    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    pub fn adapter(&self) -> &dyn Component {
        self.adapter.as_ref()
    }

    /// Where the profile and component that launch this session came from.
    pub fn launch_from(&self) -> Provenance {
        self.launch_from
    }

    /// Records a seat state (no-op when unchanged).
    pub fn state(&self, task: &str, state: SeatState, prompt_kind: Option<&str>, source: &str) {
        self.record(task, state, prompt_kind, source, serde_json::Value::Null);
    }

    /// Records that a seat is blocked, with the line that showed it.
    pub fn blocked(&self, task: &str, prompt_kind: &str, source: &str, evidence: Option<&str>) {
        let detail = evidence
            .and_then(drover_run::status::clean_evidence)
            .map_or(
                serde_json::Value::Null,
                |e| serde_json::json!({"evidence": e}),
            );
        self.record(task, SeatState::Blocked, Some(prompt_kind), source, detail);
    }

    fn record(
        &self,
        task: &str,
        state: SeatState,
        prompt_kind: Option<&str>,
        source: &str,
        detail: serde_json::Value,
    ) {
        self.append(|journal| journal.record(task, state, prompt_kind, source, detail));
    }

    /// Marks the seat blocked on a permission question: the question is
    /// journaled with its one-line summary as the evidence.
    pub fn blocked_on(&self, task: &str, question: &drover_run::question::Question, source: &str) {
        self.blocked_asking(
            task,
            question,
            drover_types::wit::PromptKind::Permission.as_str(),
            source,
        );
    }

    /// Marks the seat blocked on a question of `prompt_kind` (a pane's
    /// dialog may be a trust dialog, a warning, …).
    pub fn blocked_asking(
        &self,
        task: &str,
        question: &drover_run::question::Question,
        prompt_kind: &str,
        source: &str,
    ) {
        let mut detail = drover_run::question::detail(question);
        if let (Some(obj), Some(evidence)) = (
            detail.as_object_mut(),
            drover_run::status::clean_evidence(&question.summary()),
        ) {
            obj.insert("evidence".to_string(), serde_json::Value::String(evidence));
        }
        self.append(|journal| {
            journal.record_news(task, SeatState::Blocked, Some(prompt_kind), source, detail)
        });
    }

    /// Records that a seat's screen reads as nothing known, with its last
    /// lines as the evidence.
    pub fn unreadable(&self, task: &str, source: &str, last_lines: &str) {
        let detail = drover_run::status::clean_evidence(last_lines).map_or(
            serde_json::Value::Null,
            |e| serde_json::json!({"evidence": e}),
        );
        self.append(|journal| journal.record_news(task, SeatState::Unknown, None, source, detail));
    }

    /// Journals the answer to a question.
    pub fn answered(
        &self,
        task: &str,
        question: &drover_run::question::Question,
        choice: &drover_run::question::Choice,
        by: &drover_run::question::Answerer,
    ) {
        let mut journal = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        journal.answer(task, &question.id, &choice.id, by);
    }

    /// Journals something the agent reported.
    pub fn event(&self, task: &str, name: &str, source: &str, detail: serde_json::Value) {
        let mut journal = self.journal.lock().unwrap_or_else(|p| p.into_inner());
        journal.event(task, name, source, detail);
    }

    pub fn verdict(&self, task: &str, verdict: Verdict, source: &str, detail: serde_json::Value) {
        self.append(|journal| journal.verdict_once(task, verdict, source, detail));
    }

    /// Copies a line another journal recorded (a Ray job's node): once, by
    /// its position there ([`Journal::copy`]).
    pub fn copy(&self, line: Transition, origin: Origin) {
        self.append(|journal| journal.copy(line, origin));
    }

    /// Runs one journal write; a line it appended may be one a `[[notify]]`
    /// entry asks for.
    fn append(&self, write: impl FnOnce(&mut Journal) -> bool) {
        let written = {
            let mut journal = self.journal.lock().unwrap_or_else(|p| p.into_inner());
            write(&mut journal)
                .then(|| journal.last_written().cloned())
                .flatten()
        };
        if let Some(line) = written.filter(|_| self.notifies) {
            drover_notify::kick(&self.project, self.run.id(), &line);
        }
    }

    /// Appends a line to `ATTENTION` in the run dir (budget trips, blocked
    /// seats): the file a person or another tool watches.
    pub fn attention(&self, message: &str) {
        let line = format!("{} {message}", drover_run::now_ns());
        let _ = drover_state::append_line(&self.run.root().join("ATTENTION"), &line);
    }
}
