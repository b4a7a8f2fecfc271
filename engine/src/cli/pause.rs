//! A seat (or a run's task) paused on a reached budget: its message is
//! held, not sent, while it is journaled `blocked` on the budget question
//! ("raise it, or stop?"). `[policy]` may decide it at once (only a rule
//! that names the `budget` kind); otherwise a person does, with `drover
//! answer`, which records the raise. The question is asked once: a second
//! message to a paused seat waits on the same question, so its
//! notification fires once.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use crate::budget::{self, Budgets, Standing};
use crate::question::{self, Answerer, Question};
use crate::run::{Record, now_ns, read_transitions};
use crate::seats::SeatRecord;

/// What became of a held message.
pub(super) enum Hold {
    /// No limit is reached (any more): send it.
    Send,
    /// The answer was to stop: the message is not sent.
    Stopped(String),
}

/// Whose budgets hold a message: a seat's (its own, its role's, its
/// teams', the project's, the day's) or a run's task's (the project's and
/// the day's).
#[derive(Clone, Copy)]
pub(super) enum Holder<'a> {
    Seat(&'a SeatRecord),
    Task(&'a str),
}

impl Holder<'_> {
    fn task(&self) -> &str {
        match self {
            Holder::Seat(seat) => &seat.nick,
            Holder::Task(task) => task,
        }
    }

    /// Whether a seat was taken down (its record removed, or replaced by
    /// another seat of the same name): its held message is dropped.
    fn gone(&self, project: &Path) -> bool {
        match self {
            Holder::Seat(seat) => crate::seats::load(project, &seat.nick)
                .is_none_or(|now| now.value.run_id != seat.run_id),
            Holder::Task(_) => false,
        }
    }

    /// The limits it has reached, read afresh.
    pub(super) fn reached(&self, project: &Path) -> anyhow::Result<Vec<Standing>> {
        let budgets = Budgets::load(project).context("reading [budget]")?;
        let standings = match self {
            Holder::Seat(seat) => budgets.for_seat(seat),
            Holder::Task(_) => budgets.for_project(),
        };
        Ok(standings.into_iter().filter(Standing::reached).collect())
    }
}

/// Holds the holder's next message while a budget it is under is reached,
/// up to `timeout` (then the question stays for `drover answer`). `ctx`
/// makes the context its run is journaled through, only when needed.
pub(super) fn hold(
    project: &Path,
    holder: Holder<'_>,
    ctx: impl FnOnce() -> anyhow::Result<crate::drive::Context>,
    timeout: Duration,
    cancel: &AtomicBool,
) -> anyhow::Result<Hold> {
    let mut over = holder.reached(project)?;
    if over.is_empty() {
        return Ok(Hold::Send);
    }
    let ctx = ctx()?;
    let task = holder.task();
    let until = Instant::now() + timeout;
    loop {
        let journal = ctx.run.journal_path();
        let question = match question::pending(&journal, task).filter(|q| q.kind == budget::KIND) {
            Some(asked) => asked,
            None => {
                let asked = budget::question(&over, now_ns());
                let levels = over.iter().map(|s| s.level.as_str()).collect::<Vec<_>>();
                ctx.blocked_asking(
                    task,
                    &asked,
                    budget::PROMPT_KIND,
                    &format!("budget:{}", levels.join(",")),
                );
                ctx.attention(&format!(
                    "{task} paused: {} (`drover answer {task} raise|stop`)",
                    asked.input
                ));
                if let Some(decided) = by_policy(project, &asked) {
                    answer(project, holder, &ctx, &asked, &decided.0, &decided.1)?;
                }
                asked
            }
        };
        let gone = || holder.gone(project);
        match wait_answer(&journal, task, &question.id, until, cancel, &gone) {
            Some(option) if option == "stop" => {
                return Ok(Hold::Stopped(format!(
                    "not sent: {} reached, and the answer was to stop",
                    question.input
                )));
            }
            Some(_) => {}
            None if cancel.load(Ordering::Relaxed) => bail!("interrupted while {task} was paused"),
            None if gone() => bail!("{task} was taken down while its message was held"),
            None => bail!(
                "{task} is still paused on its budget ({}) after {}s; `drover answer {task} raise` or `stop`",
                question.input,
                timeout.as_secs()
            ),
        }
        over = holder.reached(project)?;
        if over.is_empty() {
            return Ok(Hold::Send);
        }
    }
}

/// The option a `[policy]` rule picks for a budget question, with the
/// rule (the default never decides a budget: see drover-trust's policy).
fn by_policy(project: &Path, asked: &Question) -> Option<(String, Answerer)> {
    let policy = crate::trust::policy::Policy::load(project)
        .map_err(|e| tracing::warn!("{e}; the budget question is left to a person"))
        .ok()?;
    let ruling = policy.decide(asked)?;
    Some((ruling.option, Answerer::Policy { rule: ruling.rule }))
}

/// Carries out an answer to a budget question: raises every limit the
/// holder has reached for "raise", then journals who answered and its
/// state (idle: nothing is typed until a message is sent).
pub(super) fn answer(
    project: &Path,
    holder: Holder<'_>,
    ctx: &crate::drive::Context,
    asked: &Question,
    option: &str,
    by: &Answerer,
) -> anyhow::Result<()> {
    let choice = asked
        .choice(option)
        .with_context(|| format!("'{option}' is not an option of the budget question"))?;
    if choice.id == "raise" {
        let over = holder.reached(project)?;
        budget::raise(project, &over, by).context("recording the raise")?;
    }
    let task = holder.task();
    ctx.answered(task, asked, choice, by);
    ctx.state(
        task,
        drover_types::wit::SeatState::Idle,
        None,
        &format!("budget:{}", choice.id),
    );
    Ok(())
}
/// The option journaled for `question`, waiting for it until `until`.
fn wait_answer(
    journal: &Path,
    task: &str,
    question: &str,
    until: Instant,
    cancel: &AtomicBool,
    gone: &dyn Fn() -> bool,
) -> Option<String> {
    loop {
        let answered = read_transitions(journal)
            .into_iter()
            .find_map(|t| match &t.record {
                Record::Answer { option }
                    if t.task == task
                        && t.detail.get("question").and_then(|q| q.as_str()) == Some(question) =>
                {
                    Some(option.clone())
                }
                _ => None,
            });
        if answered.is_some() {
            return answered;
        }
        if cancel.load(Ordering::Relaxed) || Instant::now() >= until || gone() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}
