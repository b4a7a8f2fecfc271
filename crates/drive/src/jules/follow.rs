//! Following one turn of a Jules session: send, then poll its state and
//! activities until it finishes, fails, pauses or asks for feedback,
//! asking the seat's question while it awaits plan approval.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use drover_run::question::{self, Answerer, Choice, ChoiceKind, Question};
use drover_trust::policy::Policy;
use drover_types::wit::SeatState;
use drover_workspace::jules::api::{
    Activity, GitPatch, GithubRepoContext, NewSession, Plan, PullRequest, Session, SessionState,
    SourceContext,
};
use drover_workspace::jules::client::clean;
use drover_workspace::jules::{Client, JulesError};
use serde_json::json;

use super::{End, REJECTION, Target, activity_detail};
use crate::{Context, TurnSpec};

/// How often an answer file and the interrupt flag are looked at while
/// waiting for the next poll.
const TICK: Duration = Duration::from_millis(100);
/// The first wait after a refusal worth retrying (or the poll interval,
/// when shorter); it doubles each time.
const BACKOFF_FIRST: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(300);
/// Retries of one request before its refusal ends the turn.
const RETRIES: u32 = 6;

/// What a finished session produced.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub url: String,
    pub pull_requests: Vec<PullRequest>,
    pub patch: Option<GitPatch>,
    /// Jules's last message, when it opened no pull request.
    pub message: Option<String>,
}

pub(crate) struct Follower<'a> {
    ctx: &'a Context,
    spec: &'a TurnSpec,
    target: &'a Target,
    policy: &'a Policy,
    deadline: Instant,
    session: Option<String>,
    /// Activities already journaled (or there before this turn's message).
    seen: HashSet<String>,
    /// Plans already answered: a rejected plan stays until Jules revises it.
    answered: HashSet<String>,
    /// The plan question this turn waits on.
    asking: Option<Question>,
    /// The session was seen working during this turn: a terminal state seen
    /// afterwards is this turn's end, not the previous turn's.
    moved: bool,
    /// A terminal activity (completed, failed) new in this turn.
    ended_now: bool,
    last_plan: Option<Plan>,
    last_message: Option<String>,
    last_patch: Option<GitPatch>,
    failure: Option<String>,
}

impl<'a> Follower<'a> {
    pub(crate) fn new(
        ctx: &'a Context,
        spec: &'a TurnSpec,
        target: &'a Target,
        policy: &'a Policy,
    ) -> Follower<'a> {
        Follower {
            ctx,
            spec,
            target,
            policy,
            deadline: Instant::now() + spec.timeout,
            session: None,
            seen: HashSet::new(),
            answered: HashSet::new(),
            asking: None,
            moved: false,
            ended_now: false,
            last_plan: None,
            last_message: None,
            last_patch: None,
            failure: None,
        }
    }

    pub(crate) fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    fn client(&self) -> &Client {
        &self.target.client
    }

    pub(crate) fn turn(&mut self, resume: Option<String>) -> End {
        match self.send(resume) {
            Ok(()) => {}
            Err(end) => return end,
        }
        loop {
            if let Some(end) = self.stop() {
                return end;
            }
            match self.look() {
                Ok(Some(end)) => return end,
                Ok(None) => {}
                Err(end) => return end,
            }
            if let Some(end) = self.wait(self.target.poll) {
                return end;
            }
        }
    }

    /// Creates the session (the first message) or sends the message to it.
    fn send(&mut self, resume: Option<String>) -> Result<(), End> {
        let task = self.spec.task.as_str();
        match resume {
            None => {
                let new = NewSession {
                    prompt: self.spec.prompt.clone(),
                    title: title_of(&self.spec.prompt),
                    source_context: SourceContext {
                        source: self.target.source.clone(),
                        github_repo_context: GithubRepoContext {
                            starting_branch: self.target.branch.clone(),
                        },
                    },
                    require_plan_approval: true,
                    automation_mode: self.target.auto_pr.then(|| "AUTO_CREATE_PR".to_string()),
                };
                let session = self.call("POST sessions", false, |c| c.create_session(&new))?;
                self.ctx.run.lifecycle(
                    task,
                    "jules-session",
                    json!({"session": session.name, "url": clean(&session.url, 300)}),
                );
                self.session = Some(session.name.clone());
                super::hold(self.ctx, task, Some(&session.name));
                self.ctx
                    .state(task, SeatState::Working, None, "jules:sessions.create");
            }
            Some(name) => {
                // What is there before the message is the previous turns':
                // its end is not this turn's.
                let before = self.call("GET activities", true, |c| c.activities(&name))?;
                self.seen.extend(before.iter().map(|a| a.key().to_string()));
                for a in &before {
                    if let Some(plan) = &a.plan_generated {
                        self.answered.insert(plan.plan.id.clone());
                    }
                }
                self.session = Some(name.clone());
                self.call("POST sendMessage", false, |c| {
                    c.send_message(&name, &self.spec.prompt)
                })?;
                self.ctx
                    .state(task, SeatState::Working, None, "jules:sessions.sendMessage");
            }
        }
        Ok(())
    }

    /// One look at the session: `Some` when the turn ended.
    fn look(&mut self) -> Result<Option<End>, End> {
        let task = self.spec.task.as_str();
        let Some(name) = self.session.clone() else {
            return Ok(Some(End::Failed("no session".to_string())));
        };
        let session = self.call("GET session", true, |c| c.session(&name))?;
        let activities = self.call("GET activities", true, |c| c.activities(&name))?;
        self.absorb(&activities);
        let source = format!("jules:{}", session.state.as_str());
        match session.state {
            SessionState::AwaitingPlanApproval => {
                self.moved = true;
                self.ask(&session);
            }
            SessionState::AwaitingUserFeedback if self.moved || self.last_message.is_some() => {
                let message = self
                    .last_message
                    .clone()
                    .unwrap_or_else(|| "Jules asks for feedback".to_string());
                return Ok(Some(End::Asks(message)));
            }
            SessionState::Completed if self.moved || self.ended_now => {
                return Ok(Some(End::Completed(Box::new(self.outcome(&session)))));
            }
            SessionState::Failed if self.moved || self.ended_now => {
                let reason = self
                    .failure
                    .clone()
                    .unwrap_or_else(|| "Jules reported no reason".to_string());
                return Ok(Some(End::Failed(reason)));
            }
            SessionState::Paused if self.moved => return Ok(Some(End::Paused)),
            SessionState::Queued | SessionState::Planning | SessionState::InProgress => {
                self.moved = true;
                self.asking = None;
                self.ctx.state(task, SeatState::Working, None, &source);
            }
            // The previous turn's end, not yet left; or a state drover
            // does not know: keep looking.
            _ => {}
        }
        Ok(None)
    }

    /// Journals the activities not seen yet and keeps what the turn needs.
    fn absorb(&mut self, activities: &[Activity]) {
        let task = self.spec.task.as_str();
        for a in activities {
            if !self.seen.insert(a.key().to_string()) {
                continue;
            }
            self.ctx
                .event(task, a.kind(), "jules:activity", activity_detail(a));
            if let Some(plan) = &a.plan_generated {
                self.last_plan = Some(plan.plan.clone());
            }
            if let Some(m) = &a.agent_messaged {
                self.last_message = Some(clean(&m.agent_message, 4000));
            }
            if a.session_completed.is_some() {
                self.ended_now = true;
            }
            if let Some(f) = &a.session_failed {
                self.ended_now = true;
                self.failure = Some(clean(&f.reason, 2000));
            }
            if let Some(patch) = a
                .artifacts
                .iter()
                .rev()
                .find_map(|art| art.change_set.as_ref()?.git_patch.clone())
            {
                self.last_patch = Some(patch);
            }
        }
    }

    /// Asks the seat's question on the latest plan, unless it was answered.
    fn ask(&mut self, session: &Session) {
        let task = self.spec.task.as_str();
        let Some(plan) = self.last_plan.clone() else {
            return;
        };
        if self.answered.contains(&plan.id)
            || self
                .asking
                .as_ref()
                .is_some_and(|q| q.id == question_id(session, &plan))
        {
            return;
        }
        let q = plan_question(session, &plan);
        self.ctx
            .blocked_on(task, &q, "jules:AWAITING_PLAN_APPROVAL");
        if let Some(ruling) = self.policy.decide(&q)
            && let Some(choice) = q.options.iter().find(|c| c.id == ruling.option).cloned()
        {
            self.deliver(
                &q,
                &plan.id,
                &choice,
                &Answerer::Policy { rule: ruling.rule },
            );
            return;
        }
        self.ctx.attention(&format!(
            "task {task} is blocked on Jules's plan: {} (answer with `drover answer`: {})",
            q.summary(),
            q.options_line()
        ));
        self.asking = Some(q);
    }

    /// Approves or rejects the plan, and journals who answered.
    fn deliver(&mut self, q: &Question, plan: &str, choice: &Choice, by: &Answerer) {
        let task = self.spec.task.as_str();
        let Some(name) = self.session.clone() else {
            return;
        };
        let approve = matches!(choice.kind, ChoiceKind::AllowOnce | ChoiceKind::AllowAlways);
        let sent = if approve {
            self.call("POST approvePlan", false, |c| c.approve_plan(&name))
        } else {
            self.call("POST sendMessage", false, |c| {
                c.send_message(&name, REJECTION)
            })
        };
        if let Err(end) = sent {
            self.ctx.run.lifecycle(
                task,
                "answer-unsent",
                json!({"question": q.id, "why": format!("{end:?}")}),
            );
            return;
        }
        self.answered.insert(plan.to_string());
        self.asking = None;
        self.ctx.answered(task, q, choice, by);
        self.ctx.state(
            task,
            SeatState::Working,
            None,
            if approve {
                "jules:approvePlan"
            } else {
                "jules:plan-rejected"
            },
        );
    }

    /// Waits `period`, taking a person's answer and noticing an interrupt
    /// or the deadline meanwhile.
    fn wait(&mut self, period: Duration) -> Option<End> {
        let until = Instant::now() + period;
        loop {
            if let Some(end) = self.stop() {
                return Some(end);
            }
            self.take_answer();
            let now = Instant::now();
            if now >= until {
                return None;
            }
            std::thread::sleep(TICK.min(until - now));
        }
    }

    fn take_answer(&mut self) {
        let Some(q) = self.asking.clone() else {
            return;
        };
        let task_dir = self.ctx.run.task_dir(&self.spec.task);
        let Some(answer) = question::take_answer(&task_dir, &q.id) else {
            return;
        };
        match q.choice(&answer.option).cloned() {
            Some(choice) => {
                let plan = self
                    .last_plan
                    .as_ref()
                    .map(|p| p.id.clone())
                    .unwrap_or_default();
                self.deliver(&q, &plan, &choice, &Answerer::Person);
            }
            None => self.ctx.run.lifecycle(
                &self.spec.task,
                "answer-ignored",
                json!({"question": q.id, "option": answer.option}),
            ),
        }
    }

    fn stop(&self) -> Option<End> {
        if self.spec.cancelled() {
            Some(End::Interrupted)
        } else if Instant::now() >= self.deadline {
            Some(End::Timeout)
        } else {
            None
        }
    }

    /// One request, retried while the API says a retry may help: after
    /// the wait it asks for (`Retry-After`), or a doubling backoff, the
    /// longer of the two.
    fn call<T>(
        &self,
        what: &str,
        idempotent: bool,
        request: impl Fn(&Client) -> Result<T, JulesError>,
    ) -> Result<T, End> {
        let task = self.spec.task.as_str();
        let mut backoff = BACKOFF_FIRST.min(self.target.poll);
        let mut attempt = 0;
        loop {
            let error = match request(self.client()) {
                Ok(value) => return Ok(value),
                Err(e) => e,
            };
            if attempt >= RETRIES || !error.retryable(idempotent) {
                return Err(End::Fault(error));
            }
            attempt += 1;
            let wait = error.retry_after().unwrap_or_default().max(backoff);
            self.ctx.run.lifecycle(
                task,
                "jules-retry",
                json!({
                    "request": what,
                    "attempt": attempt,
                    "wait_s": wait.as_secs_f64(),
                    "retry_after_s": error.retry_after().map(|d| d.as_secs_f64()),
                    "error": error.to_string(),
                }),
            );
            self.ctx.event(
                task,
                "retry",
                "jules:retry",
                json!({"request": what, "rule": error.rule(), "wait_s": wait.as_secs_f64()}),
            );
            let until = Instant::now() + wait;
            while Instant::now() < until {
                if let Some(end) = self.stop() {
                    return Err(end);
                }
                std::thread::sleep(TICK.min(until - Instant::now()));
            }
            backoff = (backoff * 2).min(BACKOFF_MAX);
        }
    }

    fn outcome(&self, session: &Session) -> Outcome {
        Outcome {
            url: clean(&session.url, 300),
            pull_requests: session
                .outputs
                .iter()
                .filter_map(|o| o.pull_request.clone())
                .map(|pr| PullRequest {
                    url: clean(&pr.url, 300),
                    title: clean(&pr.title, 300),
                    description: clean(&pr.description, 4000),
                })
                .collect(),
            patch: self.last_patch.clone(),
            message: self.last_message.clone(),
        }
    }
}

/// A session's title: the prompt's first line, bounded.
fn title_of(prompt: &str) -> String {
    clean(prompt.lines().next().unwrap_or_default(), 80)
}

fn question_id(session: &Session, plan: &Plan) -> String {
    let safe = |s: &str| -> String {
        s.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .take(60)
            .collect()
    };
    format!(
        "jules-{}-{}",
        safe(session.name.trim_start_matches("sessions/")),
        safe(&plan.id)
    )
}

/// The plan as a question: approve it, or reject it.
fn plan_question(session: &Session, plan: &Plan) -> Question {
    let steps: Vec<String> = plan
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{}. {}", i + 1, s.title))
        .collect();
    Question {
        id: question_id(session, plan),
        tool: "jules/plan".to_string(),
        kind: "other".to_string(),
        title: question::clean(&format!(
            "Jules's plan for {} ({} steps)",
            if session.title.is_empty() {
                &session.name
            } else {
                &session.title
            },
            plan.steps.len()
        )),
        input: question::clean(&steps.join(" ")),
        options: vec![
            Choice {
                id: "approve".to_string(),
                label: "Approve the plan".to_string(),
                kind: ChoiceKind::AllowOnce,
            },
            Choice {
                id: "reject".to_string(),
                label: "Reject the plan".to_string(),
                kind: ChoiceKind::RejectOnce,
            },
        ],
        on_pane: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(json: &str) -> Session {
        serde_json::from_str(json).expect("a session")
    }

    #[test]
    fn a_plan_is_a_question_to_approve_or_reject_with_its_steps() {
        let s = session(
            r#"{"name":"sessions/42","title":"Add a README","state":"AWAITING_PLAN_APPROVAL"}"#,
        );
        let plan: Plan = serde_json::from_str(
            r#"{"id":"p/7","steps":[{"title":"Read\u001b[2J the code"},{"title":"Write it"}]}"#,
        )
        .expect("a plan");
        let q = plan_question(&s, &plan);
        assert_eq!(q.id, "jules-42-p-7");
        assert_eq!(q.tool, "jules/plan");
        assert_eq!(q.title, "Jules's plan for Add a README (2 steps)");
        assert_eq!(q.input, "1. Read[2J the code 2. Write it");
        assert_eq!(
            q.choice("approve").map(|c| c.kind),
            Some(ChoiceKind::AllowOnce)
        );
        assert_eq!(
            q.choice("reject_once").map(|c| c.id.as_str()),
            Some("reject")
        );
        assert_eq!(q.choice("2").map(|c| c.id.as_str()), Some("reject"));
    }

    #[test]
    fn a_sessions_title_is_the_prompts_first_line_bounded() {
        assert_eq!(title_of("Fix the bug\nin detail"), "Fix the bug");
        assert_eq!(title_of(&"x".repeat(300)).chars().count(), 80);
    }
}
