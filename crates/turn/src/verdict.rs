//! The verdict rules: how a turn's evidence decides how it ended, as pure
//! functions of that evidence. The live drivers and recovery (`drover
//! status` settling a run whose drover died) call the same functions, so a
//! run settled later reads exactly as it would have live; recovery only
//! says so in the reason ([`Ruling::reconciled`]).
//!
//! A driver decides what it can still do first (a nudge for a missing
//! result file while nudges are left); the rules say how the turn ended
//! once nothing more will be tried.

use std::path::PathBuf;
use std::time::Duration;

use drover_types::Verdict;
use drover_types::wit::{PromptKind, SeatState, TurnOutcome, TurnResult};

use crate::shared::humanize;
use crate::usage::Spent;

/// The work's result file, as the turn left it.
#[derive(Debug, Clone, PartialEq)]
pub enum ResultState {
    /// The run asked for none.
    NotAsked,
    Written,
    Missing(PathBuf),
}

impl ResultState {
    /// From the file asked for (if any) and whether it was found.
    pub fn of(asked: Option<&PathBuf>, found: bool) -> ResultState {
        match asked {
            None => ResultState::NotAsked,
            Some(_) if found => ResultState::Written,
            Some(path) => ResultState::Missing(path.clone()),
        }
    }
}

/// How a turn ended: its verdict, the seat state it leaves, why, and the
/// prompt a blocked seat was showing.
#[derive(Debug, Clone, PartialEq)]
pub struct Ruling {
    pub verdict: Verdict,
    pub state: SeatState,
    pub reason: String,
    pub blocked: Option<PromptKind>,
}

impl Ruling {
    fn new(verdict: Verdict, state: SeatState, reason: impl Into<String>) -> Ruling {
        Ruling {
            verdict,
            state,
            reason: reason.into(),
            blocked: None,
        }
    }

    /// The same ruling, made from the files a run left after its drover
    /// stopped.
    pub fn reconciled(mut self) -> Ruling {
        self.reason = format!("{} (reconciled: drover was not running)", self.reason);
        self
    }
}

/// A turn that ran to its end: the CLI's Stop hook, an ACP `end_turn`, or
/// output its adapter read as a success. `how` names the evidence
/// ("Stop hook", "end_turn"), shown when there was no result file to
/// speak of.
pub fn finished(how: Option<&str>, result: &ResultState) -> Ruling {
    match result {
        ResultState::NotAsked => Ruling::new(
            Verdict::Completed,
            SeatState::Done,
            match how {
                Some(how) => format!("the turn finished ({how})"),
                None => "the turn finished".to_string(),
            },
        ),
        ResultState::Written => Ruling::new(
            Verdict::Completed,
            SeatState::Done,
            "the turn finished and wrote the result file",
        ),
        ResultState::Missing(path) => Ruling::new(
            Verdict::Stalled,
            SeatState::Done,
            format!("the turn finished without writing {}", path.display()),
        ),
    }
}

/// A headless turn as its adapter read the output. `seen_blocked` is the
/// prompt a hook reported during the turn, for an output that says it
/// stopped at one without saying which.
pub fn of_turn(
    turn: &TurnResult,
    exit_code: Option<i32>,
    seen_blocked: Option<PromptKind>,
    result: &ResultState,
) -> Ruling {
    match turn.outcome {
        TurnOutcome::Success => finished(None, result),
        TurnOutcome::Blocked => {
            let kind = turn
                .prompt_kind
                .or(seen_blocked)
                .unwrap_or(PromptKind::Other);
            Ruling {
                blocked: Some(kind),
                ..Ruling::new(
                    Verdict::Stalled,
                    SeatState::Blocked,
                    format!("the turn stopped at a {kind} prompt"),
                )
            }
        }
        TurnOutcome::Failed | TurnOutcome::Unknown => {
            let reason = match (&turn.error, turn.outcome) {
                (Some(e), _) => format!("the turn failed: {e}"),
                (None, TurnOutcome::Failed) => "the turn failed".to_string(),
                (None, _) => format!(
                    "the output does not say how the turn ended (exit code {})",
                    exit_code.map_or("none".to_string(), |c| c.to_string())
                ),
            };
            Ruling::new(Verdict::Crashed, SeatState::Unknown, reason)
        }
    }
}

/// An ACP turn by the `stopReason` the agent gave.
pub fn of_stop_reason(stop_reason: &str, result: &ResultState) -> Ruling {
    if stop_reason == "end_turn" {
        return finished(Some("end_turn"), result);
    }
    Ruling::new(
        Verdict::Stalled,
        SeatState::Unknown,
        format!("the agent ended the turn with stopReason {stop_reason}"),
    )
}

/// The CLI (its process, pane or agent) went away before its turn ended.
pub fn gone(what: &str) -> Ruling {
    Ruling::new(Verdict::Crashed, SeatState::Unknown, what)
}

/// The run's deadline passed; `clock` is the one that fired.
pub fn timed_out(timeout: Duration, clock: &str) -> Ruling {
    Ruling::new(
        Verdict::Timeout,
        SeatState::Unknown,
        format!(
            "the session deadline of {} passed ({clock} clock)",
            humanize(timeout)
        ),
    )
}

/// drover was asked to stop (a signal, `drover down`).
pub fn interrupted() -> Ruling {
    Ruling::new(
        Verdict::Crashed,
        SeatState::Unknown,
        "interrupted: drover was asked to stop",
    )
}

/// The budget's grace ran out after it was crossed.
pub fn over_budget() -> Ruling {
    Ruling::new(
        Verdict::OverBudget,
        SeatState::Unknown,
        "the token budget was exceeded and its grace ran out",
    )
}

/// Nothing moved for the stall window (and no nudge was left).
pub fn stalled(what: &str) -> Ruling {
    Ruling::new(Verdict::Stalled, SeatState::Unknown, what)
}

/// What one turn spent. Output that reports usage reports the turn's own
/// (an adapter was given the conversation's earlier usage and took it off,
/// as Codex's running thread total needs); a transcript holds the whole
/// conversation, so the turn's share is what it adds to the turns recorded
/// before.
pub fn turn_usage(
    reported: Option<Spent>,
    transcript: Option<Spent>,
    prior: Option<Spent>,
) -> Option<Spent> {
    reported.or_else(|| {
        let whole = transcript?;
        Some(prior.map_or(whole, |p| whole.minus(&p)))
    })
}

#[cfg(test)]
mod tests;
