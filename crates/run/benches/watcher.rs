//! One `drover send`'s event watcher on a long-lived seat: create it, start
//! it at the send's launch (`since`, what the drivers do) or after the
//! cursor the seat's previous send left (`resumed`), and poll the new send's
//! records, at the seat's send 1 and send 1,000 (`events/` then also keeps
//! the records of the 999 sends before, in their time buckets). Beside
//! them, at send 1,000: a fresh watcher with no floor, as every send had
//! before (the baseline: it reads the whole history). A flat seat shows as
//! since/1000 ≈ since/1 and resumed/1000 ≈ resumed/1, far below
//! fresh/1000.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use drover_relay::HookDrop;
use drover_run::watch::bucket_of;
use drover_run::{EventWatcher, HookRecord, ReadDrop};
use drover_types::wit::CanonicalEvent;

/// Records each send leaves (a prompt, a tool call, a stop).
const PER_SEND: u64 = 3;
/// Send `n` is stamped `n` minutes after this (2023, long settled): a turn
/// of a real CLI takes at least that, so 1,000 sends span about 17 hours.
const EPOCH: u64 = 1_700_000_000_000_000_000;
/// Between two sends' launches.
const SEND_NS: u64 = 60_000_000_000;

fn record(ts: u64, native: &str) -> HookRecord {
    HookRecord {
        v: 1,
        ts,
        task: "seat".to_string(),
        cli: "claude".to_string(),
        native: native.to_string(),
        kind: CanonicalEvent::Stop,
        session_id: Some("5f0c1d2e-0000-4000-8000-000000000001".to_string()),
        transcript_path: None,
        cwd: Some("/w".to_string()),
        subagent: false,
        reason: None,
        prompt_kind: None,
        last_message: Some("All tests pass; the refactor is committed.".to_string()),
        fields_found: vec![],
        error: None,
        payload: None,
    }
}

/// Only parsed records sit in the seat's directory, so no drop is read.
struct Reader;

impl ReadDrop for Reader {
    fn record(&mut self, drop: &HookDrop) -> HookRecord {
        record(drop.header.ts, &drop.header.native)
    }
}

fn launch(send: u64) -> u64 {
    EPOCH + send * SEND_NS
}

/// Writes send `send`'s records as the watcher leaves them:
/// `<bucket>/<ts>-….json`.
fn write_send(events: &Path, send: u64) {
    for (k, native) in ["UserPromptSubmit", "PostToolUse", "Stop"]
        .into_iter()
        .enumerate()
    {
        let ts = launch(send) + k as u64 * 1_000;
        let json = serde_json::to_vec(&record(ts, native)).expect("encode");
        let bucket = events.join(bucket_of(ts));
        std::fs::create_dir_all(&bucket).expect("bucket");
        std::fs::write(bucket.join(format!("{ts}-seat-{native}-4242.json")), json).expect("write");
    }
}

/// A seat's events directory at its send number `send`, and the cursor its
/// previous send's watcher left (none before the first).
struct Seat {
    _dir: tempfile::TempDir,
    events: PathBuf,
    cursor: Option<String>,
    send: u64,
}

fn seat(send: u64) -> Seat {
    let dir = tempfile::tempdir().expect("tempdir");
    let events = dir.path().join("events");
    std::fs::create_dir_all(&events).expect("events");
    for earlier in 1..send {
        write_send(&events, earlier);
    }
    let cursor = (send > 1).then(|| {
        let mut previous = EventWatcher::new(events.clone(), Reader);
        previous.poll();
        previous.cursor().expect("settled records pass").to_string()
    });
    write_send(&events, send);
    Seat {
        _dir: dir,
        events,
        cursor,
        send,
    }
}

fn resumed(seat: &Seat) -> usize {
    let mut watcher = EventWatcher::new(seat.events.clone(), Reader);
    if let Some(cursor) = &seat.cursor {
        watcher = watcher.resume_after(cursor);
    }
    watcher.poll().len()
}

fn fresh(seat: &Seat) -> usize {
    EventWatcher::new(seat.events.clone(), Reader).poll().len()
}

fn since(seat: &Seat) -> usize {
    EventWatcher::new(seat.events.clone(), Reader)
        .since(launch(seat.send))
        .poll()
        .len()
}

fn send(c: &mut Criterion) {
    let first = seat(1);
    let thousandth = seat(1_000);
    // What each measures, checked once: the new send's records, or all.
    assert_eq!(resumed(&first), PER_SEND as usize);
    assert_eq!(resumed(&thousandth), PER_SEND as usize);
    assert_eq!(since(&first), PER_SEND as usize);
    assert_eq!(since(&thousandth), PER_SEND as usize);
    assert_eq!(fresh(&thousandth), 1_000 * PER_SEND as usize);
    let mut group = c.benchmark_group("send-watcher");
    for seat in [&first, &thousandth] {
        group.bench_with_input(BenchmarkId::new("since", seat.send), seat, |b, s| {
            b.iter(|| black_box(since(s)))
        });
        group.bench_with_input(BenchmarkId::new("resumed", seat.send), seat, |b, s| {
            b.iter(|| black_box(resumed(s)))
        });
    }
    group.bench_with_input(BenchmarkId::new("fresh", 1_000), &thousandth, |b, s| {
        b.iter(|| black_box(fresh(s)))
    });
    group.finish();
}

criterion_group!(benches, send);
criterion_main!(benches);
