//! drover-usage: token usage read from CLI transcripts by the adapter
//! components' sandboxed `tally`, priced ([`pricing`]): what `drover usage`
//! reports and what a session's verdict carries.
//!
//! [`discover`] decides which files to read and groups them into tallies;
//! [`stream`] reads the groups in parallel through the native
//! [`prefilter`] into one tally each ([`sqlite`] turns opencode's database
//! into lines); [`record`] keeps each request once across every tally;
//! [`report`] prices the records and folds them into sessions, the `--by`
//! grouping ([`blocks`] for 5-hour windows) and totals, with days in the
//! `--tz` zone ([`time`]). docs/usage.md has the reasoning.

pub mod blocks;
pub mod discover;
pub mod glob;
pub mod prefilter;
pub mod pricing;
pub mod record;
pub mod report;
mod sqlite;
pub mod stream;
pub mod time;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

pub use record::Tokens;
pub use report::{By, Label, Report, Row};
pub use time::{Day, Zone};

use crate::pricing::{Prices, PricingError};
use drover_profile::Profile;
use drover_sandbox::{Limits, RequestTally, Sandbox, SandboxError, Tally};
use drover_types::{requests, wit};
use stream::{Settings, Sink, SinkError};

/// What to read and how to report it.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Profile names (or aliases); empty = every profile with a parser.
    pub clis: Vec<String>,
    /// Files or directories; empty = each CLI's own locations.
    pub paths: Vec<PathBuf>,
    pub since: Option<Day>,
    pub until: Option<Day>,
    pub zone: Zone,
    /// Only conversations run in this directory or below it.
    pub project: Option<PathBuf>,
    pub by: By,
    /// Worker threads; `None` = available parallelism.
    pub workers: Option<usize>,
    /// A price file to lay over the embedded table (default: the user's
    /// `pricing.json` when there is one).
    pub pricing: Option<PathBuf>,
    /// List every file considered, and why it was or was not read.
    pub explain_files: bool,
}

/// Something that went wrong with one file or profile; the run goes on.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Warning {
    pub path: Option<String>,
    pub message: String,
}

impl Warning {
    pub fn file(path: &Path, message: impl Into<String>) -> Warning {
        Warning {
            path: Some(path.display().to_string()),
            message: message.into(),
        }
    }

    pub fn general(message: impl Into<String>) -> Warning {
        Warning {
            path: None,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{path}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Errors that stop `drover usage` before it reads anything.
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    #[error("unknown CLI profile '{name}' (known: {available})")]
    UnknownCli { name: String, available: String },
    #[error("{}: several CLIs' transcripts look like this ({clis}); say which with --cli", path.display())]
    Ambiguous { path: PathBuf, clis: String },
    #[error("{}: not recognizably any CLI's transcript; say which with --cli", path.display())]
    Unrecognized { path: PathBuf },
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    #[error(transparent)]
    Pricing(#[from] PricingError),
    #[error(transparent)]
    Refused(#[from] drover_gate::Refused),
}

impl UsageError {
    /// Whether the command line itself was wrong (exit 2).
    pub fn is_usage(&self) -> bool {
        !matches!(self, UsageError::Sandbox(_) | UsageError::Pricing(_))
    }
}

/// Byte progress over the whole run, reported from worker threads.
pub trait Progress: Sync {
    fn start(&self, _total_bytes: u64) {}
    fn advance(&self, _bytes: u64) {}
    fn finish(&self) {}
}

/// A progress sink that shows nothing.
pub struct Quiet;
impl Progress for Quiet {}

/// Tallies hold dedupe sets for every request of a group, far more than a
/// hook parse needs: without a `[sandbox] memory_mib` in the profile they
/// get this cap instead of the call default.
pub const TALLY_MEMORY_BYTES: usize = 512 << 20;
/// One feed is at most a batch (~1 MiB) plus one line, but a parser may do
/// a whole document's work when a file ends (Gemini's legacy `.json`); used
/// unless the profile sets `[sandbox] call_timeout_ms`.
pub const TALLY_CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The limits a profile's tallies run under: its explicit `[sandbox]`
/// settings, else the tally defaults above.
pub fn tally_limits(profile: &Profile) -> Limits {
    Limits {
        memory_bytes: profile.sandbox.memory_bytes.unwrap_or(TALLY_MEMORY_BYTES),
        call_timeout: profile.sandbox.call_timeout.unwrap_or(TALLY_CALL_TIMEOUT),
        ..profile.limits()
    }
}

/// A sandboxed tally as a stream sink: `request-tally` where the parser
/// reports requests, else `tally` (sums).
pub enum SandboxSink {
    Sums(Tally),
    Requests {
        tally: RequestTally,
        rows: Vec<requests::Request>,
    },
}

impl SandboxSink {
    pub fn new(tally: Tally) -> SandboxSink {
        SandboxSink::Sums(tally)
    }

    pub fn requests(tally: RequestTally) -> SandboxSink {
        SandboxSink::Requests {
            tally,
            rows: Vec::new(),
        }
    }
}

fn refused(e: &wit::AdapterError) -> String {
    match e {
        wit::AdapterError::Unsupported(m) => format!("unsupported: {m}"),
        wit::AdapterError::InvalidInput(m) => format!("invalid input: {m}"),
    }
}

fn dead(e: SandboxError) -> SinkError {
    SinkError::Dead(e.to_string())
}

impl Sink for SandboxSink {
    fn begin_file(&mut self, name: &str) -> Result<(), SinkError> {
        match self {
            SandboxSink::Sums(t) => t.begin_file(name).map_err(dead),
            SandboxSink::Requests { tally, .. } => tally.begin_file(name).map_err(dead),
        }
    }

    fn feed(&mut self, chunk: &[u8]) -> Result<(), SinkError> {
        match self {
            SandboxSink::Sums(t) => match t.feed(chunk).map_err(dead)? {
                Ok(()) => Ok(()),
                Err(e) => Err(SinkError::Refused(refused(&e))),
            },
            SandboxSink::Requests { tally, rows } => match tally.feed(chunk).map_err(dead)? {
                Ok(more) => {
                    rows.extend(more);
                    Ok(())
                }
                Err(e) => Err(SinkError::Refused(refused(&e))),
            },
        }
    }

    fn finish(&mut self) -> Result<Option<wit::UsageReport>, SinkError> {
        match self {
            SandboxSink::Sums(t) => t.finish().map_err(dead),
            SandboxSink::Requests { tally, rows } => match tally.finish().map_err(dead)? {
                Ok(tail) => {
                    rows.extend(tail.requests);
                    // Rejected rows travel as an empty report.
                    Ok(Some(wit::UsageReport {
                        entries: Vec::new(),
                        rejected_rows: tail.rejected_rows,
                    }))
                }
                Err(e) => Err(SinkError::Refused(refused(&e))),
            },
        }
    }

    fn take_requests(&mut self) -> Vec<requests::Request> {
        match self {
            SandboxSink::Sums(_) => Vec::new(),
            SandboxSink::Requests { rows, .. } => std::mem::take(rows),
        }
    }
}

/// Whether a component's parser serves a request tally: a 0.2 component
/// whose parser reports requests answers an empty feed; anything else
/// (0.1, a parser that reports sums) refuses or has no such tally.
fn reports_requests(loaded: &discover::Loaded, parser: &str) -> bool {
    match loaded
        .adapter
        .request_tally(parser, tally_limits(&loaded.profile))
    {
        Ok(Some(mut tally)) => matches!(tally.feed(&[]), Ok(Ok(_))),
        _ => false,
    }
}

/// Runs `drover usage`: discovers, tallies in the sandbox, reports.
pub fn run(
    project: &Path,
    request: &Request,
    progress: &dyn Progress,
) -> Result<Report, UsageError> {
    // The table (thousands of entries parsed and indexed) is only needed
    // once every file is read: load it beside discovery and the tallies
    // rather than before them.
    std::thread::scope(|scope| {
        let prices = scope.spawn(|| Prices::load(request.pricing.as_deref()));
        let read = read_all(project, request, progress);
        let prices = prices
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        let (records, options, inputs) = read?;
        Ok(report::build(&records, &options, &prices, inputs))
    })
}

/// Discovery and the tallies: every request record, once, and what the
/// report says besides them.
fn read_all(
    project: &Path,
    request: &Request,
    progress: &dyn Progress,
) -> Result<(Vec<record::Record>, report::Options, report::Inputs), UsageError> {
    let sandbox = Sandbox::with_default_cache()?;
    let plan = discover::plan(
        &sandbox,
        project,
        &request.clis,
        &request.paths,
        request.explain_files,
    )?;
    let mut settings = Settings::default();
    if let Some(n) = request.workers {
        settings.workers = n.max(1);
    }
    let mut by_requests: HashMap<(usize, String), bool> = HashMap::new();
    for job in &plan.jobs {
        by_requests
            .entry((job.component, job.parser.clone()))
            .or_insert_with(|| reports_requests(&plan.components[job.component], &job.parser));
    }
    progress.start(plan.jobs.iter().map(stream::Job::bytes).sum());
    let outcomes = stream::run(
        &plan.jobs,
        &settings,
        |job| {
            let loaded = &plan.components[job.component];
            let limits = tally_limits(&loaded.profile);
            if by_requests
                .get(&(job.component, job.parser.clone()))
                .copied()
                .unwrap_or(false)
            {
                match loaded.adapter.request_tally(&job.parser, limits) {
                    Ok(Some(tally)) => return Ok(SandboxSink::requests(tally)),
                    Ok(None) => {}
                    Err(e) => return Err(e.to_string()),
                }
            }
            loaded
                .adapter
                .tally(&job.parser, limits)
                .map(SandboxSink::new)
                .map_err(|e| e.to_string())
        },
        progress,
    );
    progress.finish();
    let explain_files = request.explain_files.then(|| explain(&plan, &outcomes));
    let mut warnings = plan.warnings;
    let mut requests = record::Requests::default();
    let (mut files, mut rejected_rows) = (0, 0u64);
    for (outcome, job) in outcomes.into_iter().zip(&plan.jobs) {
        files += outcome.files_read;
        warnings.extend(outcome.warnings);
        let cli: std::sync::Arc<str> = std::sync::Arc::from(outcome.cli.as_str());
        if let Some(report) = &outcome.report {
            rejected_rows = rejected_rows.saturating_add(report.rejected_rows);
            for entry in &report.entries {
                requests.add(None, record::Record::of_entry(&cli, entry));
            }
        }
        // Keys are the component's: namespaced by it and its parser, so a
        // profile that shares a component (another config dir) shares keys.
        let namespace = format!(
            "{}/{}",
            plan.components[job.component].description.name, job.parser
        );
        for row in &outcome.requests {
            let key = (!row.key.is_empty()).then(|| record::key(&namespace, &row.key));
            requests.add(key, record::Record::of_request(&cli, row));
        }
    }
    let options = report::Options {
        by: request.by,
        since: request.since.clone(),
        until: request.until.clone(),
        zone: request.zone.clone(),
        project: request.project.as_ref().map(|p| {
            std::fs::canonicalize(p)
                .unwrap_or_else(|_| p.clone())
                .to_string_lossy()
                .into_owned()
        }),
        now: time::now_millis(),
    };
    let repeated_requests = requests.repeats;
    let records = requests.into_records();
    Ok((
        records,
        options,
        report::Inputs {
            files,
            repeated_requests,
            rejected_rows,
            explain_files,
            warnings,
        },
    ))
}

/// Every file considered: read, failed (with the warning that says why),
/// or skipped (discovery's reason), in path order.
fn explain(plan: &discover::Plan, outcomes: &[stream::Outcome]) -> Vec<report::FileNote> {
    let failures: std::collections::HashMap<&str, &str> = outcomes
        .iter()
        .flat_map(|o| &o.warnings)
        .filter_map(|w| Some((w.path.as_deref()?, w.message.as_str())))
        .collect();
    let mut notes = plan.skipped.clone();
    for job in &plan.jobs {
        for input in &job.inputs {
            let path = input.path.display().to_string();
            let failed = failures.get(path.as_str());
            notes.push(report::FileNote {
                cli: Some(job.cli.clone()),
                parser: Some(job.parser.clone()),
                status: if failed.is_some() { "failed" } else { "read" },
                reason: failed.map_or_else(
                    || format!("{} bytes", input.bytes),
                    |message| message.to_string(),
                ),
                path,
            });
        }
    }
    notes.sort_by(|a, b| a.path.cmp(&b.path));
    notes
}
