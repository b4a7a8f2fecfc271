//! Sandbox costs, side by side: compiling vs loading the cached built-in
//! component, store + instantiate, and one `parse-hook` call inside the
//! sandbox vs the same parsing done natively. docs/benchmarks.md records the
//! ratios (scripts/bench-report.sh).
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a benchmark prints its measurements"
)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use drover::sandbox::{CompileCache, Limits, Sandbox};
use drover::types::wit;
use drover_kit::Adapter;

const STOP: &[u8] = br#"{"session_id":"5f0c1d2e-0000-4000-8000-000000000001","transcript_path":"/home/u/.claude/projects/-w/5f0c1d2e-0000-4000-8000-000000000001.jsonl","cwd":"/w","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"All tests pass; the refactor is committed.","background_tasks":[],"session_crons":[],"effort":"high","permission_mode":"auto","prompt_id":"p1"}"#;

fn wit_profile() -> wit::Profile {
    let catalog = drover::profile::Catalog::load(std::path::Path::new("/nonexistent"));
    catalog
        .find("claude")
        .map(|p| p.to_wit())
        .expect("claude profile")
}

fn kit_profile(p: &wit::Profile) -> drover_kit::Profile {
    drover_kit::Profile {
        name: p.name.clone(),
        binary: p.binary.clone(),
        prompt_template: p.prompt_template.clone(),
        launch_args: p.launch_args.clone(),
        bypass_args: p.bypass_args.clone(),
        model_flag: p.model_flag.clone(),
        dialect: p.dialect.clone(),
        hook_events: p.hook_events.clone(),
        usage_parser: p.usage_parser.clone(),
        env_fault_patterns: p.env_fault_patterns.clone(),
        turn_args: p.turn_args.clone(),
        settings: p.settings.clone(),
        turn_argv: p.turn_argv.clone(),
        turn_resume: p.turn_resume.clone(),
        turn_session_id: p.turn_session_id.clone(),
        turn_output: p.turn_output.clone(),
    }
}

fn load(c: &mut Criterion) {
    let builtin = drover::builtin::find("claude").expect("built in");
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = CompileCache::at(dir.path().to_path_buf());
    let sandbox = Sandbox::new(cache).expect("engine");
    // Warm the cache once.
    sandbox
        .load(
            builtin.name,
            builtin.bytes,
            builtin.sha256,
            Limits::default(),
        )
        .expect("loads");
    let mut group = c.benchmark_group("load");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.bench_function("compile", |b| {
        b.iter(|| {
            wasmtime::component::Component::new(sandbox.engine(), black_box(builtin.bytes))
                .expect("compiles")
        })
    });
    group.finish();
    let mut group = c.benchmark_group("load");
    group.bench_function("cached", |b| {
        b.iter(|| {
            sandbox
                .load(
                    builtin.name,
                    black_box(builtin.bytes),
                    builtin.sha256,
                    Limits::default(),
                )
                .expect("loads")
        })
    });
    group.finish();
}

fn calls(c: &mut Criterion) {
    let builtin = drover::builtin::find("claude").expect("built in");
    let sandbox = Sandbox::new(CompileCache::disabled()).expect("engine");
    let (adapter, _) = sandbox
        .load(
            builtin.name,
            builtin.bytes,
            builtin.sha256,
            Limits::default(),
        )
        .expect("loads");
    let profile = wit_profile();
    let native_profile = kit_profile(&profile);
    let mut group = c.benchmark_group("parse-hook");
    group.bench_function("sandboxed", |b| {
        b.iter(|| {
            adapter
                .parse_hook(black_box(&profile), "Stop", black_box(STOP))
                .expect("no trap")
                .expect("parses")
        })
    });
    group.bench_function("native", |b| {
        b.iter(|| {
            // The copies the sandboxed call makes into guest memory.
            drover_claude::Claude::parse_hook(
                &black_box(native_profile.clone()),
                "Stop",
                &black_box(STOP.to_vec()),
            )
            .expect("parses")
        })
    });
    group.finish();
    let mut group = c.benchmark_group("instantiate");
    group.bench_function("store+instantiate+describe", |b| {
        b.iter(|| {
            let fresh = adapter
                .tally("claude-jsonl", Limits::default())
                .expect("instantiates");
            black_box(fresh);
        })
    });
    group.finish();
}

criterion_group!(benches, load, calls);
criterion_main!(benches);
