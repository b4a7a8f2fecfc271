//! `drover usage`: token usage from the CLIs' transcripts.
//!
//! Text: a table (one row per session, day or model), a total line, and
//! warnings on stderr. `--json`: one document (docs/usage.md). Exit 0 when
//! the run completed, also with warnings; 1 when files were found but none
//! could be read; 2 for a bad command line (unknown `--cli`, a PATH no CLI
//! claims).

use super::output::{errln, out};
use std::io::IsTerminal;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::Outcome;
use super::output::{Json, print_json};
use crate::usage::{self, By, Day, Group, Progress, Report, Tokens};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only these CLI profiles (repeatable; default: every profile with a
    /// usage parser). Also says which CLI wrote PATHs that do not show it.
    #[arg(long = "cli", value_name = "NAME")]
    clis: Vec<String>,
    /// Only usage on or after this UTC day; entries without a day are then
    /// left out.
    #[arg(long, value_name = "YYYY-MM-DD")]
    since: Option<Day>,
    /// Rows of the table: one per session, day or model.
    #[arg(long, value_enum, default_value_t = By::Session)]
    by: By,
    /// Worker threads (default: available parallelism).
    #[arg(long, value_name = "N")]
    jobs: Option<NonZeroUsize>,
    #[command(flatten)]
    json: Json,
    /// Transcript files or directories (default: where each CLI keeps them).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let request = usage::Request {
        clis: args.clis,
        paths: args.paths,
        since: args.since,
        by: args.by,
        workers: args.jobs.map(NonZeroUsize::get),
    };
    let bar = Bar::new(!args.json.json && std::io::stderr().is_terminal());
    let report = match usage::run(project, &request, &bar) {
        Ok(report) => report,
        Err(e) if e.is_usage() => {
            // The command line named something that is not there: a usage
            // error like clap's own (exit 2, nothing on stdout).
            super::Cli::command()
                .error(clap::error::ErrorKind::ValueValidation, e)
                .exit()
        }
        Err(e) => return Err(e.into()),
    };
    let failed = report.files == 0 && !report.warnings.is_empty();
    if args.json.json {
        print_json(&report)?;
    } else {
        for w in &report.warnings {
            errln!("warning: {w}");
        }
        if let Some(note) = super::trust::untrusted_note(project) {
            errln!("{note}");
        }
        out!("{}", render(&report));
    }
    Ok(if failed { Outcome::Failed } else { Outcome::Ok })
}

/// An `indicatif` bar on a terminal's stderr, nothing otherwise.
struct Bar(Option<ProgressBar>);

impl Bar {
    fn new(show: bool) -> Bar {
        Bar(show.then(|| {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template(
                "{spinner} reading transcripts {bytes}/{total_bytes} ({bytes_per_sec}) {wide_bar} {eta}",
            ) {
                bar.set_style(style);
            }
            bar
        }))
    }
}

impl Progress for Bar {
    fn start(&self, total_bytes: u64) {
        if let Some(bar) = &self.0 {
            bar.set_length(total_bytes);
        }
    }
    fn advance(&self, bytes: u64) {
        if let Some(bar) = &self.0 {
            bar.inc(bytes);
        }
    }
    fn finish(&self) {
        if let Some(bar) = &self.0 {
            bar.finish_and_clear();
        }
    }
}

fn or_dash(s: &str) -> String {
    if s.is_empty() {
        "-".to_string()
    } else {
        s.to_string()
    }
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn days(first: &str, last: &str) -> String {
    match (first, last) {
        ("", _) => "-".to_string(),
        (f, l) if f == l => f.to_string(),
        (f, l) => format!("{f}..{l}"),
    }
}

const NUMBER_HEADERS: [&str; 6] = [
    "INPUT",
    "OUTPUT",
    "CACHE READ",
    "CACHE WRITE",
    "REASONING",
    "REQUESTS",
];

fn numbers(t: &Tokens) -> Vec<String> {
    [
        t.input,
        t.output,
        t.cache_read,
        t.cache_write,
        t.reasoning,
        t.requests,
    ]
    .into_iter()
    .map(thousands)
    .collect()
}

pub fn render(report: &Report) -> String {
    let (label_headers, rows): (Vec<&str>, Vec<(Vec<String>, &Tokens)>) = match report.by {
        By::Session => (
            vec!["CLI", "SESSION", "DAYS", "MODELS"],
            report
                .groups
                .iter()
                .filter_map(|g| match g {
                    Group::Session(s) => Some((
                        vec![
                            s.cli.clone(),
                            or_dash(&s.session),
                            days(&s.first_day, &s.last_day),
                            or_dash(&s.models.join(", ")),
                        ],
                        &s.usage,
                    )),
                    _ => None,
                })
                .collect(),
        ),
        By::Day => (
            vec!["DAY", "CLIS", "SESSIONS", "MODELS"],
            report
                .groups
                .iter()
                .filter_map(|g| match g {
                    Group::Day {
                        day,
                        clis,
                        models,
                        sessions,
                        usage,
                    } => Some((
                        vec![
                            or_dash(day),
                            clis.join(", "),
                            sessions.to_string(),
                            or_dash(&models.join(", ")),
                        ],
                        usage,
                    )),
                    _ => None,
                })
                .collect(),
        ),
        By::Model => (
            vec!["CLI", "MODEL", "SESSIONS"],
            report
                .groups
                .iter()
                .filter_map(|g| match g {
                    Group::Model {
                        cli,
                        model,
                        sessions,
                        usage,
                    } => Some((
                        vec![cli.clone(), or_dash(model), sessions.to_string()],
                        usage,
                    )),
                    _ => None,
                })
                .collect(),
        ),
    };
    let mut header: Vec<String> = label_headers.iter().map(|h| h.to_string()).collect();
    header.extend(NUMBER_HEADERS.iter().map(|h| h.to_string()));
    let labels = label_headers.len();
    let mut table: Vec<Vec<String>> = vec![header];
    for (mut cells, usage) in rows {
        cells.extend(numbers(usage));
        table.push(cells);
    }
    let mut total = vec![String::new(); labels];
    total[0] = "TOTAL".to_string();
    total.extend(numbers(&report.totals));
    table.push(total);
    let widths: Vec<usize> = (0..table[0].len())
        .map(|i| {
            table
                .iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (n, row) in table.iter().enumerate() {
        if n + 1 == table.len() {
            let rule: usize = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
            out.push_str(&"-".repeat(rule));
            out.push('\n');
        }
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            let pad = widths[i] - cell.chars().count();
            if i > 0 {
                line.push_str("  ");
            }
            // Labels read left to right; numbers line up on the right.
            if i < labels {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let mut footer = format!("{} files, {} sessions", report.files, report.sessions.len());
    if report.rejected_rows > 0 {
        footer.push_str(&format!(
            ", {} usage rows could not be read",
            report.rejected_rows
        ));
    }
    if !report.warnings.is_empty() {
        footer.push_str(&format!(", {} warnings (above)", report.warnings.len()));
    }
    out.push_str(&footer);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_get_thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
