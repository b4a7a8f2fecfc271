//! `drover usage`: token usage read from CLI transcripts by the adapter
//! components' sandboxed `tally`.
//!
//! [`discover`] decides which files to read and groups them into tallies;
//! [`stream`] reads the groups in parallel through the native
//! [`prefilter`] into one tally each ([`sqlite`] turns opencode's database
//! into lines); [`report`] folds the tallies' entries into sessions, the
//! `--by` grouping and totals. docs/usage.md has the reasoning.

pub mod discover;
pub(crate) mod glob;
pub mod prefilter;
pub mod report;
mod sqlite;
pub mod stream;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

pub use report::{By, Day, Group, Report, Session, Tokens};

use crate::profile::Profile;
use crate::sandbox::{CompileCache, Limits, Sandbox, SandboxError, Tally, wit};
use stream::{Settings, Sink, SinkError};

/// What to read and how to report it.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Profile names (or aliases); empty = every profile with a parser.
    pub clis: Vec<String>,
    /// Files or directories; empty = each CLI's own locations.
    pub paths: Vec<PathBuf>,
    pub since: Option<Day>,
    pub by: By,
    /// Worker threads; `None` = available parallelism.
    pub workers: Option<usize>,
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
}

impl UsageError {
    /// Whether the command line itself was wrong (exit 2).
    pub fn is_usage(&self) -> bool {
        !matches!(self, UsageError::Sandbox(_))
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

/// The sandboxed `tally` as a stream sink.
pub struct SandboxSink(Tally);

impl SandboxSink {
    pub fn new(tally: Tally) -> SandboxSink {
        SandboxSink(tally)
    }
}

fn refused(e: &wit::AdapterError) -> String {
    match e {
        wit::AdapterError::Unsupported(m) => format!("unsupported: {m}"),
        wit::AdapterError::InvalidInput(m) => format!("invalid input: {m}"),
    }
}

impl Sink for SandboxSink {
    fn begin_file(&mut self, name: &str) -> Result<(), SinkError> {
        self.0
            .begin_file(name)
            .map_err(|e| SinkError::Dead(e.to_string()))
    }

    fn feed(&mut self, chunk: &[u8]) -> Result<(), SinkError> {
        match self.0.feed(chunk) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(SinkError::Refused(refused(&e))),
            Err(e) => Err(SinkError::Dead(e.to_string())),
        }
    }

    fn finish(&mut self) -> Result<Option<wit::UsageReport>, SinkError> {
        self.0.finish().map_err(|e| SinkError::Dead(e.to_string()))
    }
}

/// Runs `drover usage`: discovers, tallies in the sandbox, reports.
pub fn run(
    project: &Path,
    request: &Request,
    progress: &dyn Progress,
) -> Result<Report, UsageError> {
    let sandbox = Sandbox::new(CompileCache::default_location())?;
    let plan = discover::plan(&sandbox, project, &request.clis, &request.paths)?;
    let mut settings = Settings::default();
    if let Some(n) = request.workers {
        settings.workers = n.max(1);
    }
    progress.start(plan.jobs.iter().map(stream::Job::bytes).sum());
    let outcomes = stream::run(
        &plan.jobs,
        &settings,
        |job| {
            let loaded = &plan.components[job.component];
            loaded
                .adapter
                .tally(&job.parser, tally_limits(&loaded.profile))
                .map(SandboxSink::new)
                .map_err(|e| e.to_string())
        },
        progress,
    );
    progress.finish();
    let mut warnings = plan.warnings;
    let mut builder = report::Builder::new(request.since.clone());
    let mut files = 0;
    for outcome in outcomes {
        files += outcome.files_read;
        warnings.extend(outcome.warnings);
        if let Some(report) = &outcome.report {
            builder.add(&outcome.cli, report);
        }
    }
    Ok(builder.build(request.by, files, warnings))
}
