//! `drover status [RUN…]`: every run's tasks and their last states, settled
//! from the run's files (a run whose drover died is reconciled here).

use super::output::{errln, out, outln};
use std::path::Path;

use serde::Serialize;

use super::Outcome;
use super::output::{Json, print_json, table};
use crate::drive::recover::{RunStatus, Settler};
use crate::run::{RunDir, runs_root};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only these runs (default: the newest 20).
    runs: Vec<String>,
    /// Every run, not just the newest 20.
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    json: Json,
}

#[derive(Serialize)]
struct Report {
    runs: Vec<RunStatus>,
    /// The project's `[budget]` limits (project, day) against its spend;
    /// a seat's own are in `drover seats`.
    budgets: Vec<crate::budget::Standing>,
    errors: Vec<String>,
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let mut ids: Vec<String> = if args.runs.is_empty() {
        let mut found: Vec<String> = std::fs::read_dir(runs_root(project))
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter_map(|e| e.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        found.reverse();
        if !args.all {
            found.truncate(20);
        }
        found
    } else {
        args.runs.clone()
    };
    ids.dedup();
    let mut settler = Settler::new(project);
    let mut report = Report {
        runs: Vec::new(),
        budgets: Vec::new(),
        errors: Vec::new(),
    };
    match crate::budget::Budgets::load(project) {
        Ok(budgets) => report.budgets = budgets.for_project(),
        Err(e) => report.errors.push(format!("budgets: {e}")),
    }
    for id in ids {
        let run = match RunDir::open(project, &id) {
            Ok(r) => r,
            Err(e) => {
                report.errors.push(format!("{id}: {e}"));
                continue;
            }
        };
        match settler.status(&run) {
            Ok(status) => report.runs.push(status),
            Err(e) => report.errors.push(format!("{id}: {e}")),
        }
    }
    if args.json.json {
        print_json(&report)?;
    } else {
        let mut rows = Vec::new();
        for r in &report.runs {
            for t in &r.tasks {
                let state = super::seats::state_label(
                    t.state.as_deref(),
                    t.prompt_kind.as_deref(),
                    t.evidence.as_deref(),
                );
                let verdict = match (&t.verdict, t.reconciled) {
                    _ if r.foreign => crate::seats::FOREIGN.to_string(),
                    (Some(v), true) => format!("{v} (reconciled)"),
                    (Some(v), false) => v.clone(),
                    (None, _) if r.driver_alive => "running".to_string(),
                    (None, _) => "open".to_string(),
                };
                rows.push(vec![
                    r.run_id.clone(),
                    r.cli.clone(),
                    r.workspace.to_string(),
                    t.task.clone(),
                    state,
                    verdict,
                    t.cost_usd.map_or_else(
                        || "-".to_string(),
                        // `~`: an estimate from the CLI's printed summary.
                        |c| format!("{}${c:.2}", if t.cost_approximate { "~" } else { "" }),
                    ),
                    t.reason.clone().unwrap_or_default(),
                ]);
            }
        }
        out!(
            "{}",
            table(
                &[
                    "RUN",
                    "CLI",
                    "WORKSPACE",
                    "TASK",
                    "STATE",
                    "VERDICT",
                    "COST",
                    "WHY"
                ],
                &rows
            )
        );
        for standing in &report.budgets {
            let mark = if standing.reached() { " (reached)" } else { "" };
            outln!("budget {}{mark}", standing.describe());
        }
        for e in &report.errors {
            errln!("error: {e}");
        }
    }
    Ok(if report.errors.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}
