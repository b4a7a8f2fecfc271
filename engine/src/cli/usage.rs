//! `drover usage`: token usage and its cost from the CLIs' transcripts.
//!
//! Text: a table (one row per session, day, month, model or 5-hour block),
//! a total line, and warnings on stderr. `--json`: one document
//! (docs/usage.md). Exit 0 when the run completed, also with warnings; 1
//! when files were found but none could be read, or the price file is
//! broken; 2 for a bad command line (unknown `--cli`, a PATH no CLI
//! claims).

use super::output::{errln, out};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::Outcome;
use super::output::{Json, print_json};
use crate::usage::{self, By, Day, Label, Progress, Report, Row, Tokens, Zone};

/// `--by` as the command line parses it (`drover-usage` has no clap).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum ByArg {
    Session,
    Day,
    Month,
    Model,
    Block,
}

impl From<ByArg> for By {
    fn from(arg: ByArg) -> Self {
        match arg {
            ByArg::Session => By::Session,
            ByArg::Day => By::Day,
            ByArg::Month => By::Month,
            ByArg::Model => By::Model,
            ByArg::Block => By::Block,
        }
    }
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only these CLI profiles (repeatable; default: every profile with a
    /// usage parser). Also says which CLI wrote PATHs that do not show it.
    #[arg(long = "cli", value_name = "NAME")]
    clis: Vec<String>,
    /// Only usage on or after this day (in --tz); requests without a date
    /// are then left out.
    #[arg(long, value_name = "YYYY-MM-DD")]
    since: Option<Day>,
    /// Only usage on or before this day (in --tz).
    #[arg(long, value_name = "YYYY-MM-DD")]
    until: Option<Day>,
    /// The time zone days and months are counted in: an IANA name
    /// (Europe/Paris), UTC, or `local`.
    #[arg(long, value_name = "ZONE", default_value = "UTC")]
    tz: Zone,
    /// Rows of the table: one per session, day, month, model, or 5-hour
    /// block (the windows subscription limits count in).
    #[arg(long, value_enum, default_value_t = ByArg::Session)]
    by: ByArg,
    /// A price file (LiteLLM's format) laid over the embedded table;
    /// default: ~/.config/drover/pricing.json when it exists.
    #[arg(long, value_name = "FILE")]
    pricing: Option<PathBuf>,
    /// List every transcript file considered: read, skipped, or failed,
    /// and why.
    #[arg(long)]
    explain_files: bool,
    /// Worker threads (default: available parallelism).
    #[arg(long, value_name = "N")]
    jobs: Option<NonZeroUsize>,
    #[command(flatten)]
    json: Json,
    /// Transcript files or directories (default: where each CLI keeps them).
    #[arg(value_name = "PATH")]
    paths: Vec<PathBuf>,
}

/// `explicit_project`: `--project` was given, so only conversations run in
/// that directory count.
/// `drover usage`'s work: the report `usage --json` prints (and the MCP
/// `usage` tool returns). `explicit_project`: only conversations run in
/// `project` count.
pub fn report(
    project: &Path,
    explicit_project: bool,
    args: &Args,
    progress: &dyn Progress,
) -> Result<Report, usage::UsageError> {
    let request = usage::Request {
        clis: args.clis.clone(),
        paths: args.paths.clone(),
        since: args.since.clone(),
        until: args.until.clone(),
        zone: args.tz.clone(),
        project: explicit_project.then(|| project.to_path_buf()),
        by: args.by.into(),
        workers: args.jobs.map(NonZeroUsize::get),
        pricing: args.pricing.clone(),
        explain_files: args.explain_files,
    };
    usage::run(project, &request, progress)
}

pub fn run(project: &Path, explicit_project: bool, args: Args) -> anyhow::Result<Outcome> {
    let bar = Bar::new(!args.json.json && super::output::stderr_is_terminal());
    let report = match report(project, explicit_project, &args, &bar) {
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

/// Text from transcripts and file names on one table line, with control
/// characters (escape sequences above all) escaped, as all human output is.
fn terminal_safe(s: &str) -> String {
    super::output::terminal_line(s).into_owned()
}

fn or_dash(s: &str) -> String {
    if s.is_empty() {
        "-".to_string()
    } else {
        terminal_safe(s)
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

/// Dollars with cents and thousands separators; `*` marks a sum that leaves
/// out unpriced models, `unpriced` a row with no price at all.
fn dollars(cost: Option<f64>, unpriced: &[String]) -> String {
    match cost {
        None => "unpriced".to_string(),
        Some(c) => {
            let cents = (c * 100.0).round().max(0.0) as u64;
            let mark = if unpriced.is_empty() { "" } else { "*" };
            format!("${}.{:02}{mark}", thousands(cents / 100), cents % 100)
        }
    }
}

fn days(first: &str, last: &str) -> String {
    match (first, last) {
        ("", _) => "-".to_string(),
        (f, l) if f == l => f.to_string(),
        (f, l) => format!("{f}..{l}"),
    }
}

const NUMBER_HEADERS: [&str; 7] = [
    "INPUT",
    "OUTPUT",
    "CACHE READ",
    "CACHE WRITE",
    "REASONING",
    "REQUESTS",
    "COST",
];

fn numbers(t: &Tokens, cost: Option<f64>, unpriced: &[String]) -> Vec<String> {
    let mut cells: Vec<String> = [
        t.input,
        t.output,
        t.cache_read,
        t.cache_write,
        t.reasoning,
        t.requests,
    ]
    .into_iter()
    .map(thousands)
    .collect();
    cells.push(dollars(cost, unpriced));
    cells
}

fn label_headers(by: By) -> Vec<&'static str> {
    match by {
        By::Session => vec!["CLI", "SESSION", "DAYS", "MODELS"],
        By::Day => vec!["DAY", "CLIS", "SESSIONS", "MODELS"],
        By::Month => vec!["MONTH", "CLIS", "SESSIONS", "MODELS"],
        By::Model => vec!["CLI", "MODEL", "SESSIONS"],
        By::Block => vec!["CLI", "BLOCK (UTC)", "SESSIONS", "MODELS"],
    }
}

fn label_cells(row: &Row) -> Vec<String> {
    let models = or_dash(&row.models.join(", "));
    match &row.label {
        Label::Session {
            cli,
            session,
            first_day,
            last_day,
            ..
        } => vec![
            cli.clone(),
            or_dash(session),
            days(first_day, last_day),
            models,
        ],
        Label::Day { day } => vec![
            or_dash(day),
            row.clis.join(", "),
            row.sessions.to_string(),
            models,
        ],
        Label::Month { month } => vec![
            or_dash(month),
            row.clis.join(", "),
            row.sessions.to_string(),
            models,
        ],
        Label::Model { cli, model } => vec![cli.clone(), or_dash(model), row.sessions.to_string()],
        Label::Block {
            cli,
            start,
            last_request,
            active,
            ..
        } => {
            // `2026-11-30T10:00:00.000Z` → `2026-11-30 10:00`.
            let short = |t: &str| t.get(..16).unwrap_or(t).replace('T', " ");
            let span = format!(
                "{}-{}",
                short(start),
                short(last_request).get(11..).unwrap_or("")
            );
            let span = if *active {
                format!("{span} (open)")
            } else {
                span
            };
            vec![cli.clone(), span, row.sessions.to_string(), models]
        }
    }
}

pub fn render(report: &Report) -> String {
    let headers = label_headers(report.by);
    let labels = headers.len();
    let mut header: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    header.extend(NUMBER_HEADERS.iter().map(|h| h.to_string()));
    let mut table: Vec<Vec<String>> = vec![header];
    for row in &report.groups {
        let mut cells = label_cells(row);
        cells.extend(numbers(&row.usage, row.cost_usd, &row.unpriced_models));
        table.push(cells);
    }
    let mut total = vec![String::new(); labels];
    total[0] = "TOTAL".to_string();
    total.extend(numbers(
        &report.totals.usage,
        report.totals.cost_usd,
        &report.totals.unpriced_models,
    ));
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
    for row in &report.groups {
        if let Label::Block {
            cli,
            end,
            burn_rate: Some(rate),
            projection: Some(p),
            ..
        } = &row.label
        {
            out.push_str(&format!(
                "open {cli} block: {:.0} tokens/min, ${:.2}/h; by its end ({end}, {} min) about {} tokens, ${:.2}\n",
                rate.tokens_per_minute,
                rate.cost_usd_per_hour,
                p.remaining_minutes,
                thousands(p.total_tokens),
                p.cost_usd
            ));
        }
    }
    if !report.unpriced.is_empty() {
        let named: Vec<String> = report
            .unpriced
            .iter()
            .map(|u| format!("{} ({})", u.model, u.cli))
            .collect();
        let models: Vec<&str> = report.unpriced.iter().map(|u| u.model.as_str()).collect();
        out.push_str(&terminal_safe(&format!(
            "* no price for {} in the price table ({}): its tokens are counted, its cost is not; {}",
            named.join(", "),
            report.pricing.snapshot,
            crate::pricing::how_to_price(&models, true)
        )));
        out.push('\n');
    }
    for p in report
        .priced_as
        .iter()
        .filter(|p| p.retired_after.is_some())
    {
        let last = p.retired_after.as_deref().unwrap_or_default();
        out.push_str(&terminal_safe(&format!(
            "{} is a retired model: priced at its last LiteLLM price, from litellm {last} \
             ({} no longer lists it)",
            p.model, report.pricing.snapshot
        )));
        out.push('\n');
    }
    let mut footer = format!("{} files, {} sessions", report.files, report.sessions.len());
    if report.repeated_requests > 0 {
        footer.push_str(&format!(
            ", {} repeated requests counted once",
            report.repeated_requests
        ));
    }
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
    if let Some(notes) = &report.explain_files {
        out.push_str("\nfiles:\n");
        for note in notes {
            out.push_str(&format!(
                "  {:<7}  {:<8}  {}  ({})\n",
                note.status,
                note.cli.as_deref().unwrap_or("-"),
                terminal_safe(&note.path),
                terminal_safe(&note.reason)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollars_show_cents_and_partial_sums() {
        assert_eq!(dollars(Some(1234.567), &[]), "$1,234.57");
        assert_eq!(dollars(Some(0.004), &["m".to_string()]), "$0.00*");
        assert_eq!(dollars(None, &["m".to_string()]), "unpriced");
    }

    #[test]
    fn control_characters_never_reach_the_terminal() {
        assert_eq!(terminal_safe("a\u{1b}[2Jb\u{7}\n"), "a\\x1b[2Jb\\x07\\n");
    }

    #[test]
    fn numbers_get_thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
