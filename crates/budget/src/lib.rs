//! drover-budget: budgets at every level (`[budget]`: each seat, a role, a
//! team, the project, the day), enforced between turns.
//!
//! Before a seat's next message is sent, every limit that applies to it is
//! compared with what its sessions spent ([`ledger`]: the de-duplicated,
//! priced usage drover recorded for each turn, as `drover usage` prices
//! it). A reached limit pauses the seat: the message is not sent, the seat
//! is journaled `blocked` on a `budget` question ("raise it, or stop?"),
//! which `drover answer` or a `[policy]` rule naming `budget` decides.
//! Raising adds the limit's own amount once more (a $1 day becomes $2 for
//! today), recorded sealed ([`raises`]). A turn is never cut short for a
//! budget: it ends where its CLI ends it, so what a paused seat spent is
//! within one turn's cost of its limit.

pub mod ledger;
pub mod limits;
pub mod raises;

use std::collections::BTreeSet;
use std::path::Path;

use serde::Serialize;

use drover_run::question::{Answerer, Choice, ChoiceKind, Question};
use drover_seats::SeatRecord;
use drover_usage::{Day, Zone};
pub use ledger::{Ledger, Session, Spend};
pub use limits::{Level, Limit, LimitError, Limits};

/// The question kind a budget question carries (a `[policy]` rule matches
/// it only by naming it).
pub const KIND: &str = "budget";
/// The journal's prompt kind of a seat paused on a budget.
pub const PROMPT_KIND: &str = "budget";

#[derive(Debug, thiserror::Error)]
pub enum BudgetError {
    #[error(transparent)]
    Config(#[from] drover_config::ConfigError),
    #[error(transparent)]
    Limit(#[from] LimitError),
}

/// One limit against what was spent under it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Standing {
    /// `seat`, `role reviewer`, `team fe`, `project`, `day`.
    pub level: String,
    /// What a raise of it applies to (see [`raises::Raise::key`]).
    #[serde(skip)]
    pub key: String,
    /// The limit now: as set, plus every raise.
    pub limit_usd: Option<f64>,
    pub limit_tokens: Option<u64>,
    pub spent_usd: f64,
    pub spent_tokens: u64,
    /// A turn's model had no price: the dollars are short of it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unpriced: bool,
    /// The limit as set: what one raise adds.
    #[serde(skip)]
    pub step_usd: Option<f64>,
    #[serde(skip)]
    pub step_tokens: Option<u64>,
    /// `path:line` of the setting.
    pub set_at: String,
}

impl Standing {
    pub fn reached(&self) -> bool {
        self.limit_usd.is_some_and(|l| self.spent_usd >= l)
            || self.limit_tokens.is_some_and(|l| self.spent_tokens >= l)
    }

    /// `day $1.21 of $1.00` (the dimensions it limits).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(limit) = self.limit_usd {
            parts.push(format!("{} of {}", dollars(self.spent_usd), dollars(limit)));
        }
        if let Some(limit) = self.limit_tokens {
            parts.push(format!("{} of {limit} tokens", self.spent_tokens));
        }
        format!("{} {}", self.level, parts.join(", "))
    }

    /// The limit after one raise.
    fn raised(&self) -> String {
        let mut parts = Vec::new();
        if let (Some(limit), Some(step)) = (self.limit_usd, self.step_usd) {
            parts.push(dollars(limit + step));
        }
        if let (Some(limit), Some(step)) = (self.limit_tokens, self.step_tokens) {
            parts.push(format!("{} tokens", limit.saturating_add(step)));
        }
        parts.join(", ")
    }
}

/// Dollars as people read them: cents from a dollar up, four places below
/// (a turn's $0.0127 is not "$0.01").
fn dollars(usd: f64) -> String {
    if usd.abs() < 1.0 && usd != 0.0 {
        format!("${usd:.4}")
    } else {
        format!("${usd:.2}")
    }
}

/// The limits, what was spent and what was raised, read once.
pub struct Budgets {
    pub limits: Limits,
    ledger: Ledger,
    raises: Vec<raises::Raise>,
    seats: Vec<SeatRecord>,
    /// The local zone and today in it: the day's budget counts today's turns.
    day: (Zone, Day),
}

impl Budgets {
    /// Reads the settings (user, and a trusted project), the ledger, the
    /// raises and the sealed seat records.
    pub fn load(project: &Path) -> Result<Budgets, BudgetError> {
        let config = drover_trust::load_config(project)?;
        let limits = Limits::from_config(&config)?;
        for aside in &limits.set_aside {
            tracing::warn!("{aside}");
        }
        Ok(Budgets::of(project, limits))
    }

    fn of(project: &Path, limits: Limits) -> Budgets {
        // Without limits nothing is compared: the ledger, the raises and
        // the seats are not read (each send and listing asks).
        if limits.is_empty() {
            return Budgets {
                ledger: Ledger::empty(),
                raises: Vec::new(),
                seats: Vec::new(),
                day: today(),
                limits,
            };
        }
        let seats = drover_seats::list(project)
            .into_iter()
            .filter(|s| s.from == drover_gate::Provenance::SealedRecord)
            .map(|s| s.value)
            .collect();
        Budgets {
            ledger: Ledger::read(project),
            raises: raises::read(project),
            seats,
            day: today(),
            limits,
        }
    }

    /// Every limit that applies to `seat`, with its spend.
    pub fn for_seat(&self, seat: &SeatRecord) -> Vec<Standing> {
        self.limits
            .limits
            .iter()
            .filter_map(|limit| {
                let (sessions, key) = match &limit.level {
                    Level::Seat => (
                        Some(sessions_of(std::iter::once(seat))),
                        format!("{}/{}", seat.run_id, seat.nick),
                    ),
                    Level::Role(role) if *role == seat.role => (
                        Some(sessions_of(self.seats.iter().filter(|s| s.role == *role))),
                        role.clone(),
                    ),
                    Level::Team { name, seats } if seats.contains(&seat.nick) => (
                        Some(sessions_of(
                            self.seats.iter().filter(|s| seats.contains(&s.nick)),
                        )),
                        name.clone(),
                    ),
                    Level::Project | Level::Day => (None, String::new()),
                    Level::Role(_) | Level::Team { .. } => return None,
                };
                Some(self.standing(limit, sessions.as_ref(), key))
            })
            .collect()
    }

    /// The limits on the whole project (`project`, `day`): what a run that
    /// is not a seat's is held to, and what `drover status` shows.
    pub fn for_project(&self) -> Vec<Standing> {
        self.limits
            .limits
            .iter()
            .filter(|l| matches!(l.level, Level::Project | Level::Day))
            .map(|limit| self.standing(limit, None, String::new()))
            .collect()
    }

    fn standing(
        &self,
        limit: &Limit,
        sessions: Option<&BTreeSet<Session>>,
        key: String,
    ) -> Standing {
        let (key, day) = match limit.level {
            Level::Day => (
                self.day.1.as_str().to_string(),
                Some((&self.day.0, &self.day.1)),
            ),
            _ => (key, None),
        };
        let level = limit.level.name();
        let mut limit_usd = limit.usd;
        let mut limit_tokens = limit.tokens;
        for raise in self
            .raises
            .iter()
            .filter(|r| r.level == level && r.key == key)
        {
            limit_usd = limit_usd.map(|l| l + raise.usd.unwrap_or(0.0));
            limit_tokens = limit_tokens.map(|l| l.saturating_add(raise.tokens.unwrap_or(0)));
        }
        let spent = self.ledger.spent(sessions, day);
        Standing {
            level,
            key,
            limit_usd,
            limit_tokens,
            spent_usd: spent.usd,
            spent_tokens: spent.tokens,
            unpriced: spent.unpriced,
            step_usd: limit.usd,
            step_tokens: limit.tokens,
            set_at: limit.at.clone(),
        }
    }
}

fn sessions_of<'a>(seats: impl Iterator<Item = &'a SeatRecord>) -> BTreeSet<Session> {
    seats
        .map(|s| Session {
            run: s.run_id.clone(),
            task: s.nick.clone(),
        })
        .collect()
}

/// The machine's zone (UTC when it cannot tell) and today in it.
fn today() -> (Zone, Day) {
    let zone = "local".parse::<Zone>().unwrap_or_default();
    let day = zone.day(drover_usage::time::now_millis());
    (zone, day)
}

/// The question a seat paused on `reached` asks: raise every limit it
/// reached by its own amount, or stop (the paused message is not sent).
pub fn question(reached: &[Standing], now_ns: u64) -> Question {
    let what = reached
        .iter()
        .map(Standing::describe)
        .collect::<Vec<_>>()
        .join("; ");
    let names = reached
        .iter()
        .map(|s| s.level.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let raised = reached
        .iter()
        .map(|s| format!("{} to {}", s.level, s.raised()))
        .collect::<Vec<_>>()
        .join("; ");
    Question {
        id: format!("budget-{now_ns}"),
        tool: "drover".to_string(),
        kind: KIND.to_string(),
        title: format!("budget {names} reached: raise it, or stop?"),
        input: what,
        options: vec![
            Choice {
                id: "raise".to_string(),
                label: format!("Raise {raised}"),
                kind: ChoiceKind::AllowOnce,
            },
            Choice {
                id: "stop".to_string(),
                label: "Stop: the message is not sent".to_string(),
                kind: ChoiceKind::RejectOnce,
            },
        ],
        on_pane: false,
    }
}

/// Raises every limit in `reached` by its own amount.
pub fn raise(project: &Path, reached: &[Standing], by: &Answerer) -> std::io::Result<()> {
    let by = match by {
        Answerer::Person => "person".to_string(),
        Answerer::Policy { rule } => rule
            .get("at")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("policy")
            .to_string(),
    };
    for standing in reached {
        raises::record(
            project,
            &raises::Raise {
                ts: drover_run::now_ns(),
                level: standing.level.clone(),
                key: standing.key.clone(),
                usd: standing.step_usd,
                tokens: standing.step_tokens,
                by: by.clone(),
            },
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
