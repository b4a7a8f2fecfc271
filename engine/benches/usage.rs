//! `drover usage` throughput on a Claude corpus, in one process: the
//! sandboxed tally vs the same parser compiled natively, both behind the same
//! discovery, needle prefilter and parallel driver (and both without the
//! prefilter, to show what it buys). scripts/bench-usage.sh runs this next to
//! the `drover` binary and ccusage and writes docs/benchmarks.md.
//!
//!     DROVER_BENCH_CORPUS=<dir made by scripts/gen-claude-corpus.py> \
//!         cargo bench -p drover --bench usage
//!
//! Prints one JSON object per configuration on stdout. The last one times
//! the engine's side of global dedupe and pricing: as many request records
//! as the corpus has requests (a quarter of them repeated under the same
//! key), merged, priced and grouped.
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a benchmark prints its measurements"
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use drover::pricing::Prices;
use drover::sandbox::{CompileCache, Sandbox};
use drover::types::wit;
use drover::usage::prefilter::Prefilter;
use drover::usage::record::{Record, Requests, Tokens, When, key};
use drover::usage::report::{self, By, Inputs, Options};
use drover::usage::stream::{self, Job, Settings, Sink, SinkError};
use drover::usage::{Quiet, SandboxSink, discover, tally_limits};
use drover_claude::Claude;
use drover_kit::usage::ChunkedTally;

/// The Claude parser compiled into this process.
struct Native(ChunkedTally);

impl Sink for Native {
    fn begin_file(&mut self, name: &str) -> Result<(), SinkError> {
        self.0.begin_file(name);
        Ok(())
    }
    fn feed(&mut self, chunk: &[u8]) -> Result<(), SinkError> {
        // The sandbox copies the chunk into guest memory: the same copy on
        // both sides.
        let copy = chunk.to_vec();
        self.0
            .feed(&copy)
            .map_err(|e| SinkError::Refused(format!("{e:?}")))
    }
    fn finish(&mut self) -> Result<Option<wit::UsageReport>, SinkError> {
        Ok(self.0.finish().map(|r| wit::UsageReport {
            entries: r
                .entries
                .into_iter()
                .map(|e| wit::UsageEntry {
                    session: e.session,
                    day: e.day,
                    model: e.model,
                    usage: wit::Usage {
                        input: e.usage.input,
                        output: e.usage.output,
                        cache_read: e.usage.cache_read,
                        cache_write: e.usage.cache_write,
                        reasoning: e.usage.reasoning,
                        requests: e.usage.requests,
                    },
                })
                .collect(),
            rejected_rows: r.rejected_rows,
        }))
    }
}

/// Takes the bytes and counts nothing: the cost of reading and filtering.
struct Discard;

impl Sink for Discard {
    fn begin_file(&mut self, _: &str) -> Result<(), SinkError> {
        Ok(())
    }
    fn feed(&mut self, chunk: &[u8]) -> Result<(), SinkError> {
        std::hint::black_box(chunk);
        Ok(())
    }
    fn finish(&mut self) -> Result<Option<wit::UsageReport>, SinkError> {
        Ok(None)
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Sandboxed,
    Native,
    Discard,
}

fn totals(outcomes: &[stream::Outcome]) -> [u64; 6] {
    let mut t = [0u64; 6];
    for o in outcomes {
        for e in o.report.iter().flat_map(|r| &r.entries) {
            let u = &e.usage;
            for (slot, v) in t.iter_mut().zip([
                u.input,
                u.output,
                u.cache_read,
                u.cache_write,
                u.reasoning,
                u.requests,
            ]) {
                *slot += v;
            }
        }
    }
    t
}

fn without_prefilter(jobs: &[Job]) -> Vec<Job> {
    let all = Arc::new(Prefilter::new::<&str>(&[]));
    jobs.iter()
        .map(|j| Job {
            cli: j.cli.clone(),
            component: j.component,
            parser: j.parser.clone(),
            prefilter: all.clone(),
            inputs: j.inputs.clone(),
        })
        .collect()
}

/// Merges, prices and groups `requests` synthetic request records (plus a
/// repeat of every fourth); the best time of `runs`.
fn dedupe_and_pricing(requests: u64, runs: usize) -> Duration {
    let models = [
        "claude-opus-5-5",
        "claude-sonnet-4-5-20250929",
        "claude-haiku-4-5",
    ];
    let cli: Arc<str> = Arc::from("claude");
    let record = |i: u64| Record {
        cli: Arc::clone(&cli),
        session: format!("session-{}", i / 40),
        model: models[(i % 3) as usize].to_string(),
        cwd: format!("/w/project-{}", i / 400),
        when: When::At(1_796_032_800_000 + i as i64 * 7_000),
        tokens: Tokens {
            input: 500,
            output: 2000,
            cache_read: 80_000,
            cache_write: 3_000,
            requests: 1,
            ..Tokens::default()
        },
        single: true,
    };
    let prices = Prices::embedded();
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let start = Instant::now();
        let mut merged = Requests::default();
        for i in 0..requests {
            merged.add(
                Some(key("claude/claude-jsonl", &format!("msg_{i}"))),
                record(i),
            );
            if i % 4 == 0 {
                merged.add(
                    Some(key("claude/claude-jsonl", &format!("msg_{i}"))),
                    record(i),
                );
            }
        }
        let records = merged.into_records();
        let built = report::build(
            &records,
            &Options {
                by: By::Session,
                ..Options::default()
            },
            &prices,
            Inputs {
                files: 0,
                repeated_requests: 0,
                rejected_rows: 0,
                explain_files: None,
                warnings: Vec::new(),
            },
        );
        std::hint::black_box(built);
        best = best.min(start.elapsed());
    }
    best
}

fn main() {
    let Some(corpus) = std::env::var_os("DROVER_BENCH_CORPUS").map(PathBuf::from) else {
        eprintln!("usage bench: set DROVER_BENCH_CORPUS (scripts/bench-usage.sh does); skipped");
        return;
    };
    let runs: usize = std::env::var("DROVER_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    // SAFETY: set before any thread of this process reads the environment.
    unsafe { std::env::set_var("CLAUDE_CONFIG_DIR", &corpus) };
    let cache = std::env::temp_dir().join("drover-bench-usage-cache");
    let sandbox = Sandbox::new(CompileCache::at(cache)).expect("engine");
    let project = Path::new("/nonexistent-project");
    let plan =
        discover::plan(&sandbox, project, &["claude".to_string()], &[], false).expect("plan");
    let bytes: u64 = plan.jobs.iter().map(Job::bytes).sum();
    let files: usize = plan.jobs.iter().map(|j| j.inputs.len()).sum();
    let workers: Vec<usize> = std::env::var("DROVER_BENCH_WORKERS")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![Settings::default().workers]);
    let unfiltered = without_prefilter(&plan.jobs);
    let loaded = &plan.components[0];
    let limits = tally_limits(&loaded.profile);
    let mut requests = 0;
    for &n in &workers {
        let settings = Settings {
            workers: n,
            ..Settings::default()
        };
        let configs: [(&str, &[Job], Kind); 5] = [
            ("sandboxed", &plan.jobs, Kind::Sandboxed),
            ("native", &plan.jobs, Kind::Native),
            ("read+prefilter only", &plan.jobs, Kind::Discard),
            ("sandboxed-no-prefilter", &unfiltered, Kind::Sandboxed),
            ("native-no-prefilter", &unfiltered, Kind::Native),
        ];
        for (name, jobs, kind) in configs {
            let mut best = Duration::MAX;
            let mut result = [0u64; 6];
            for _ in 0..runs {
                let start = Instant::now();
                let outcomes = match kind {
                    Kind::Sandboxed => stream::run(
                        jobs,
                        &settings,
                        |job| {
                            loaded
                                .adapter
                                .tally(&job.parser, limits)
                                .map(SandboxSink::new)
                                .map_err(|e| e.to_string())
                        },
                        &Quiet,
                    ),
                    Kind::Native => stream::run(
                        jobs,
                        &settings,
                        |_| Ok(Native(ChunkedTally::of::<Claude>("claude-jsonl"))),
                        &Quiet,
                    ),
                    Kind::Discard => stream::run(jobs, &settings, |_| Ok(Discard), &Quiet),
                };
                best = best.min(start.elapsed());
                result = totals(&outcomes);
            }
            if name == "sandboxed" {
                requests = result[5];
            }
            let mbps = bytes as f64 / 1e6 / best.as_secs_f64();
            println!(
                "{{\"config\":\"{name}\",\"workers\":{n},\"bytes\":{bytes},\"files\":{files},\"seconds\":{:.4},\"mb_per_s\":{mbps:.1},\"totals\":{{\"input\":{},\"output\":{},\"cache_read\":{},\"cache_write\":{},\"reasoning\":{},\"requests\":{}}}}}",
                best.as_secs_f64(),
                result[0],
                result[1],
                result[2],
                result[3],
                result[4],
                result[5]
            );
        }
    }
    let best = dedupe_and_pricing(requests, runs);
    println!(
        "{{\"config\":\"dedupe+pricing of {requests} request records\",\"workers\":1,\"bytes\":{bytes},\"files\":{files},\"seconds\":{:.4},\"mb_per_s\":0,\"totals\":{{}}}}",
        best.as_secs_f64()
    );
}
