//! `drover seats`: every seat and its state.

use crate::cli::output::{out, outln};
use std::path::Path;

use serde::Serialize;

use super::{ListArgs, seat_dir};
use crate::cli::Outcome;
use crate::cli::output::{print_json, table};
use crate::gate::Provenance;
use crate::seat_host;
use crate::seats::{self, SeatRecord};
use crate::workspace::{self, WorkspaceKind};

/// A task's state as `seats` and `status` print it.
pub fn state_label(
    state: Option<&str>,
    prompt_kind: Option<&str>,
    evidence: Option<&str>,
) -> String {
    match (state, prompt_kind) {
        (Some("blocked"), kind) => {
            let mut label = format!("blocked ({})", kind.unwrap_or("other"));
            if let Some(e) = evidence {
                label.push_str(": ");
                label.push_str(&drover_types::text::truncate_chars(e, 60));
            }
            label
        }
        (Some(s), _) => s.to_string(),
        (None, _) => "-".to_string(),
    }
}

#[derive(Serialize)]
struct SeatStatus {
    #[serde(flatten)]
    record: SeatRecord,
    state: Option<String>,
    prompt_kind: Option<String>,
    evidence: Option<String>,
    /// The question a blocked seat waits on, with its options.
    question: Option<crate::question::Question>,
    verdict: Option<String>,
    /// When the seat entered its state (ns since the epoch).
    since_ns: Option<u64>,
    alive: Option<bool>,
    /// The record was not sealed by this user's drover: shown as it is,
    /// nothing it names asked after.
    foreign: bool,
    /// Each `[budget]` limit the seat is under, with what was spent.
    budgets: Vec<crate::budget::Standing>,
}

/// The limit nearest to being reached, for a table cell: `day $0.64 of
/// $1.00`; `-` when none applies.
pub fn budget_cell(standings: &[crate::budget::Standing]) -> String {
    let used = |s: &crate::budget::Standing| {
        let usd = s.limit_usd.map_or(0.0, |l| s.spent_usd / l);
        let tokens = s
            .limit_tokens
            .map_or(0.0, |l| s.spent_tokens as f64 / l as f64);
        usd.max(tokens)
    };
    standings
        .iter()
        .max_by(|a, b| used(a).total_cmp(&used(b)))
        .map_or_else(|| "-".to_string(), crate::budget::Standing::describe)
}

/// Every seat on record with its state: what `drover seats --json` prints
/// and the MCP `list_seats` tool returns.
pub fn seats_json(project: &Path) -> serde_json::Value {
    serde_json::json!({"seats": statuses(project)})
}

fn statuses(project: &Path) -> Vec<SeatStatus> {
    let budgets = crate::budget::Budgets::load(project)
        .map_err(|e| crate::cli::output::errln!("drover: budgets not shown: {e}"))
        .ok();
    seats::list(project)
        .into_iter()
        .map(|sourced| {
            let foreign = sourced.from != Provenance::SealedRecord;
            let record = sourced.value;
            if foreign {
                return SeatStatus {
                    record,
                    state: None,
                    prompt_kind: None,
                    evidence: None,
                    question: None,
                    verdict: None,
                    since_ns: None,
                    alive: None,
                    foreign,
                    budgets: Vec::new(),
                };
            }
            let journal = crate::run::runs_root(project)
                .join(&record.run_id)
                .join("events.jsonl");
            let view = crate::run::status::TaskView::of(
                &record.nick,
                &crate::run::read_transitions(&journal),
            );
            let alive = if record.workspace == WorkspaceKind::Acp {
                Some(seat_host::alive(&seat_dir(project, &record)).is_some())
            } else {
                record.pane.as_ref().map(|p| {
                    workspace::open_panes(record.workspace, project)
                        .ok()
                        .and_then(|ws| ws.pane_alive(p).ok())
                        .unwrap_or(false)
                })
            };
            let budgets = budgets
                .as_ref()
                .map(|b| b.for_seat(&record))
                .unwrap_or_default();
            SeatStatus {
                budgets,
                record,
                state: view.state,
                prompt_kind: view.prompt_kind,
                evidence: view.evidence,
                question: view.question,
                verdict: view.verdict,
                since_ns: view.since_ns,
                alive,
                foreign,
            }
        })
        .collect()
}

pub fn list(project: &Path, args: ListArgs) -> anyhow::Result<Outcome> {
    if args.json.json {
        print_json(&seats_json(project))?;
    } else {
        let statuses = statuses(project);
        let rows: Vec<Vec<String>> = statuses
            .iter()
            .map(|s| {
                // `~`: an estimate from the CLI's printed summary.
                let about = if s.record.cost_approximate { "~" } else { "" };
                vec![
                    s.record.nick.clone(),
                    s.record.role.clone(),
                    s.record.cli.clone(),
                    s.record.workspace.to_string(),
                    if s.record.human {
                        "yes".into()
                    } else {
                        "no".into()
                    },
                    state_label(
                        s.state.as_deref(),
                        s.prompt_kind.as_deref(),
                        s.evidence.as_deref(),
                    ),
                    match (s.alive, s.record.workspace == WorkspaceKind::Acp) {
                        _ if s.foreign => seats::FOREIGN.into(),
                        (Some(true), true) => "agent up".into(),
                        (Some(false), true) => "agent stopped (send resumes it)".into(),
                        (Some(true), false) => "pane up".into(),
                        (Some(false), false) => "pane gone".into(),
                        (None, _) => s
                            .record
                            .conversation
                            .clone()
                            .unwrap_or_else(|| "no conversation yet".into()),
                    },
                    match (s.record.cost_usd, s.record.budget_usd) {
                        (Some(c), Some(b)) => format!("{about}${c:.2} of ${b:.2}"),
                        (Some(c), None) => format!("{about}${c:.2}"),
                        (None, Some(b)) => format!("- of ${b:.2}"),
                        (None, None) => "-".into(),
                    },
                    budget_cell(&s.budgets),
                ]
            })
            .collect();
        out!(
            "{}",
            table(
                &[
                    "SEAT",
                    "ROLE",
                    "CLI",
                    "WORKSPACE",
                    "HUMAN",
                    "STATE",
                    "WHERE",
                    "COST",
                    "BUDGET"
                ],
                &rows
            )
        );
        for s in &statuses {
            if let Some(q) = &s.question {
                outln!("\n{} asks: {}", s.record.nick, q.summary());
                outln!(
                    "  answer with `drover answer {} OPTION`: {}",
                    s.record.nick,
                    q.options_line()
                );
            }
        }
    }
    Ok(Outcome::Ok)
}
