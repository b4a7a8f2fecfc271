//! The parallel streaming driver: worker threads take jobs (one tally's
//! files) largest first, read each file in large blocks, drop the lines the
//! parser's needles rule out, and feed the rest to the job's tally in
//! batches.
//!
//! Failures stay local. An unreadable file is a warning and the tally goes
//! on. A tally that dies (a trap, a time or memory limit) loses what it had
//! counted, so the job is replayed on a fresh tally without the file that
//! killed it; the other files of the job still count.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::prefilter::{LineStream, Prefilter};
use super::sqlite;
use super::{Progress, Warning};
use drover_gate::Cleared;
use drover_gate::read::{TRANSCRIPT_MAX, open_for_component};
use drover_types::requests::Request;
use drover_types::wit::UsageReport;

/// How a file's bytes reach the tally.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Format {
    /// Read as is (JSONL, or any text the parser splits into lines).
    Lines,
    /// An opencode-style SQLite database: its `message` table as lines.
    Sqlite,
}

#[derive(Debug, Clone)]
pub struct Input {
    /// The path as found (shown in warnings and notes).
    pub path: PathBuf,
    /// The file cleared to be read for the component (the only way in).
    pub file: Cleared<PathBuf>,
    pub format: Format,
    /// Size when discovered (for scheduling and progress).
    pub bytes: u64,
}

/// The files one tally reads: one CLI profile, one parser, one group of
/// files that may repeat each other's rows (docs/usage.md, "Grouping").
pub struct Job {
    pub cli: String,
    /// Index of the loaded component (see `discover::Plan`).
    pub component: usize,
    pub parser: String,
    pub prefilter: std::sync::Arc<Prefilter>,
    pub inputs: Vec<Input>,
}

impl Job {
    pub fn bytes(&self) -> u64 {
        self.inputs.iter().map(|i| i.bytes).sum()
    }
}

/// Why a tally call failed.
#[derive(Debug)]
pub enum SinkError {
    /// The tally is gone (trap or limit) and everything it held with it.
    Dead(String),
    /// The adapter refused the input; the tally is still usable.
    Refused(String),
}

/// One usage tally: the sandboxed `tally` or `request-tally` resource, or
/// (in benchmarks) the same parser compiled natively.
pub trait Sink {
    fn begin_file(&mut self, name: &str) -> Result<(), SinkError>;
    fn feed(&mut self, chunk: &[u8]) -> Result<(), SinkError>;
    fn finish(&mut self) -> Result<Option<UsageReport>, SinkError>;
    /// The requests a request tally reported (after `finish`).
    fn take_requests(&mut self) -> Vec<Request> {
        Vec::new()
    }
}

/// Buffer sizes and parallelism.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub workers: usize,
    /// Bytes read from a file at a time.
    pub read_block: usize,
    /// Filtered bytes gathered before one `feed` call.
    pub feed_batch: usize,
    /// A line longer than this is passed through unfiltered, not held.
    pub max_held_line: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            workers: std::thread::available_parallelism().map_or(1, |n| n.get()),
            // Small enough that the block the kernel copies into is still in
            // the core's cache when the prefilter scans it (4 MiB blocks cost
            // 4% more CPU on the benchmark corpus), large enough that a
            // 400 MB corpus is 1,600 reads.
            read_block: 256 << 10,
            // One boundary crossing per MiB keeps the per-call cost (a store
            // deadline, a guest allocation) far below the parse cost.
            feed_batch: 1 << 20,
            // Above the kit's 16 MiB line cap, so every line a kit parser
            // could read is still filtered natively.
            max_held_line: 32 << 20,
        }
    }
}

/// What one job produced.
pub struct Outcome {
    pub cli: String,
    pub report: Option<UsageReport>,
    /// From a request tally: each request, with its dedupe key.
    pub requests: Vec<Request>,
    pub files_read: usize,
    pub warnings: Vec<Warning>,
}

/// Component failures one job survives before it is given up.
const MAX_REPLAYS: usize = 8;

/// Runs every job on `settings.workers` threads; results come back in job
/// order. `make` builds a fresh sink for a job.
pub fn run<S, F>(
    jobs: &[Job],
    settings: &Settings,
    make: F,
    progress: &dyn Progress,
) -> Vec<Outcome>
where
    S: Sink,
    F: Fn(&Job) -> Result<S, String> + Sync,
{
    // Largest first, so one big project does not start last and run alone.
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(jobs[i].bytes()));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    let workers = settings.workers.clamp(1, jobs.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let mut buffers = Buffers::new(settings);
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&index) = order.get(k) else {
                        break;
                    };
                    let outcome = run_job(&jobs[index], settings, &make, progress, &mut buffers);
                    let mut guard = results.lock().unwrap_or_else(|p| p.into_inner());
                    guard[index] = Some(outcome);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|p| p.into_inner())
        .into_iter()
        .zip(jobs)
        .map(|(outcome, job)| {
            outcome.unwrap_or_else(|| Outcome {
                cli: job.cli.clone(),
                report: None,
                requests: Vec::new(),
                files_read: 0,
                warnings: vec![Warning::general(format!(
                    "{}: a worker stopped before reading this group",
                    job.cli
                ))],
            })
        })
        .collect()
}

struct Buffers {
    read: Vec<u8>,
    out: Vec<u8>,
}

impl Buffers {
    fn new(settings: &Settings) -> Buffers {
        Buffers {
            read: vec![0; settings.read_block.max(4096)],
            out: Vec::with_capacity(settings.feed_batch * 2),
        }
    }
}

/// Where in a file's processing a tally died.
enum Failure {
    Read(String),
    Refused(String),
    /// Died in `begin-file` (which also ends the previous file).
    DiedStarting(String),
    /// Died while taking this file's bytes.
    DiedFeeding(String),
}

fn run_job<S, F>(
    job: &Job,
    settings: &Settings,
    make: &F,
    progress: &dyn Progress,
    buffers: &mut Buffers,
) -> Outcome
where
    S: Sink,
    F: Fn(&Job) -> Result<S, String>,
{
    let mut excluded = vec![false; job.inputs.len()];
    let mut kept_warnings: Vec<Warning> = Vec::new();
    // (previous file, file whose begin-file trapped): on the replay the
    // previous file's end is checked alone to learn which one is at fault.
    let mut suspect: Option<(usize, usize)> = None;
    for attempt in 0..=MAX_REPLAYS {
        let first_pass = attempt == 0;
        let mut sink = match make(job) {
            Ok(sink) => sink,
            Err(e) => {
                kept_warnings.push(Warning::general(format!(
                    "{}: cannot start a {} tally for {} files: {e}",
                    job.cli,
                    job.parser,
                    job.inputs.len()
                )));
                return Outcome {
                    cli: job.cli.clone(),
                    report: None,
                    requests: Vec::new(),
                    files_read: 0,
                    warnings: kept_warnings,
                };
            }
        };
        let mut warnings = Vec::new();
        let mut files_read = 0;
        let mut restart = false;
        let mut previous: Option<usize> = None;
        for (i, input) in job.inputs.iter().enumerate() {
            if excluded[i] {
                continue;
            }
            if let Some((prev, starter)) = suspect
                && i == starter
                && previous == Some(prev)
            {
                suspect = None;
                // End the previous file on its own: if that dies, it was
                // the culprit; if not, this file's begin-file was.
                if let Err(SinkError::Dead(e)) = sink.finish() {
                    excluded[prev] = true;
                    kept_warnings.push(left_out(&job.inputs[prev].path, &e));
                    restart = true;
                    break;
                }
                excluded[i] = true;
                kept_warnings.push(left_out(&input.path, "the component failed starting it"));
                continue;
            }
            let count = |n: u64| {
                if first_pass {
                    progress.advance(n);
                }
            };
            match feed_input(&mut sink, input, &job.prefilter, settings, buffers, &count) {
                Ok(()) => files_read += 1,
                Err(Failure::Read(e)) | Err(Failure::Refused(e)) => {
                    warnings.push(Warning::file(&input.path, e));
                }
                Err(Failure::DiedFeeding(e)) => {
                    excluded[i] = true;
                    kept_warnings.push(left_out(&input.path, &e));
                    restart = true;
                }
                Err(Failure::DiedStarting(e)) => match previous {
                    Some(prev) => {
                        suspect = Some((prev, i));
                        kept_warnings.push(Warning::general(format!(
                            "{}: the {} tally failed between {} and {}; replaying: {e}",
                            job.cli,
                            job.parser,
                            job.inputs[prev].path.display(),
                            input.path.display()
                        )));
                        restart = true;
                    }
                    None => {
                        excluded[i] = true;
                        kept_warnings.push(left_out(&input.path, &e));
                        restart = true;
                    }
                },
            }
            if restart {
                break;
            }
            previous = Some(i);
        }
        if restart {
            continue;
        }
        match sink.finish() {
            Ok(report) => {
                kept_warnings.extend(warnings);
                return Outcome {
                    cli: job.cli.clone(),
                    report,
                    requests: sink.take_requests(),
                    files_read,
                    warnings: kept_warnings,
                };
            }
            Err(SinkError::Dead(e)) | Err(SinkError::Refused(e)) => match previous {
                // Finishing ends the last file: charge it, count the rest.
                Some(last) => {
                    excluded[last] = true;
                    kept_warnings.push(left_out(&job.inputs[last].path, &e));
                }
                None => {
                    kept_warnings.push(Warning::general(format!(
                        "{}: the {} tally failed: {e}",
                        job.cli, job.parser
                    )));
                    return Outcome {
                        cli: job.cli.clone(),
                        report: None,
                        requests: Vec::new(),
                        files_read: 0,
                        warnings: kept_warnings,
                    };
                }
            },
        }
    }
    kept_warnings.push(Warning::general(format!(
        "{}: gave up on a group of {} files after {MAX_REPLAYS} component failures",
        job.cli,
        job.inputs.len()
    )));
    Outcome {
        cli: job.cli.clone(),
        report: None,
        requests: Vec::new(),
        files_read: 0,
        warnings: kept_warnings,
    }
}

fn left_out(path: &Path, why: &str) -> Warning {
    Warning::file(path, format!("left out of the count: {why}"))
}

fn feed_input<S: Sink>(
    sink: &mut S,
    input: &Input,
    prefilter: &Prefilter,
    settings: &Settings,
    buffers: &mut Buffers,
    progress: &dyn Fn(u64),
) -> Result<(), Failure> {
    let name = input.path.to_string_lossy();
    sink.begin_file(&name).map_err(|e| match e {
        SinkError::Dead(e) => Failure::DiedStarting(e),
        SinkError::Refused(e) => Failure::Refused(e),
    })?;
    let Buffers { read, out } = buffers;
    out.clear();
    let feed_err = |e: SinkError| match e {
        SinkError::Dead(e) => Failure::DiedFeeding(e),
        SinkError::Refused(e) => Failure::Refused(e),
    };
    let mut flush = |out: &mut Vec<u8>| -> Result<(), SinkError> {
        if !out.is_empty() {
            sink.feed(out)?;
            out.clear();
        }
        Ok(())
    };
    match input.format {
        Format::Sqlite => {
            // Only a regular file within the cap reaches SQLite.
            open_for_component(&input.file, TRANSCRIPT_MAX)
                .map_err(|e| Failure::Read(format!("cannot open: {e}")))?;
            let result = sqlite::message_rows(input.file.get(), settings.feed_batch, &mut |rows| {
                prefilter.select(rows, out);
                if out.len() >= settings.feed_batch {
                    flush(out)?;
                }
                Ok(())
            });
            match result {
                Ok(()) => {}
                Err(Ok(e)) => return Err(feed_err(e)),
                Err(Err(e)) => return Err(Failure::Read(e)),
            }
            flush(out).map_err(feed_err)?;
            progress(input.bytes);
            Ok(())
        }
        Format::Lines => {
            let mut file = open_for_component(&input.file, TRANSCRIPT_MAX)
                .map_err(|e| Failure::Read(format!("cannot open: {e}")))?
                .0
                .take(TRANSCRIPT_MAX);
            let mut lines = LineStream::new(prefilter, settings.max_held_line);
            let mut total = 0u64;
            loop {
                let n = match file.read(read) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        // What was read so far is counted; say so.
                        lines.finish(out);
                        flush(out).map_err(feed_err)?;
                        return Err(Failure::Read(format!(
                            "read failed after {total} bytes (those are counted): {e}"
                        )));
                    }
                };
                total += n as u64;
                progress(n as u64);
                lines.push(&read[..n], out, &mut flush).map_err(feed_err)?;
                if out.len() >= settings.feed_batch {
                    flush(out).map_err(feed_err)?;
                }
            }
            lines.finish(out);
            flush(out).map_err(feed_err)
        }
    }
}
