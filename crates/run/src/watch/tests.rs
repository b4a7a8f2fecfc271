//! The watcher over a directory a relay and a hostile CLI both write to.

use super::*;
use drover_relay::now_ns;
use drover_types::wit::CanonicalEvent;

fn record(ts: u64, task: &str) -> HookRecord {
    HookRecord {
        v: 1,
        ts,
        task: task.to_string(),
        cli: "claude".to_string(),
        native: "Stop".to_string(),
        kind: CanonicalEvent::Stop,
        session_id: None,
        transcript_path: None,
        cwd: None,
        subagent: false,
        reason: None,
        prompt_kind: None,
        last_message: None,
        fields_found: vec![],
        error: None,
        payload: None,
    }
}

/// Reads a drop as a Stop of its task at its time.
struct Stub;

impl ReadDrop for Stub {
    fn record(&mut self, drop: &HookDrop) -> HookRecord {
        HookRecord {
            native: drop.header.native.clone(),
            ..record(drop.header.ts, &drop.header.task)
        }
    }
}

#[test]
fn a_drop_is_read_once_and_replaced_by_its_record() {
    let project = tempfile::tempdir().expect("tempdir");
    let run = project.path().join(".drover/runs/r");
    let events = run.join("events");
    let mut w = EventWatcher::new(events.clone(), Stub);
    let drop = HookDrop {
        header: drover_relay::DropHeader {
            v: 2,
            ts: 15,
            task: "t".into(),
            cli: "claude".into(),
            native: "SessionEnd".into(),
            capture: false,
        },
        payload: b"{}".to_vec(),
    };
    drover_relay::publish(&run, &drop).expect("publish");
    let got = w.poll();
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].ts, got[0].native.as_str()), (15, "SessionEnd"));
    assert!(w.poll().is_empty(), "delivered twice");
    let names = |dir: &std::path::Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .expect("dir")
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    };
    // The drop is gone from `events/`; its record is kept in its bucket.
    assert_eq!(names(&events), vec![bucket_of(15)]);
    let kept = events.join(bucket_of(15));
    let records = names(&kept);
    assert_eq!(records.len(), 1, "{records:?}");
    assert!(records[0].ends_with(".json"), "{records:?}");
    let on_disk: HookRecord =
        serde_json::from_slice(&std::fs::read(kept.join(&records[0])).expect("read"))
            .expect("a record");
    assert_eq!(on_disk, got[0]);
    // A second reader of the run (recovery) sees the record, not the drop.
    let mut later = EventWatcher::new(events.clone(), Stub);
    assert_eq!(later.poll(), got);
}

#[test]
fn links_and_fifos_in_events_are_never_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let events = dir.path().join("events");
    let mut w = EventWatcher::new(events.clone(), Stub);
    let elsewhere = dir.path().join("record.json");
    std::fs::write(
        &elsewhere,
        serde_json::to_vec(&record(1, "t")).expect("encode"),
    )
    .expect("write");
    std::os::unix::fs::symlink(&elsewhere, events.join("linked.json")).expect("link");
    let made = std::process::Command::new("mkfifo")
        .arg(events.join("blocking.drop"))
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    // Neither the link nor the FIFO (which would block an open) is read.
    assert!(w.poll().is_empty());
}

#[test]
fn each_file_is_delivered_once_in_ts_order_and_broken_ones_are_retried() {
    let dir = tempfile::tempdir().expect("tempdir");
    let events = dir.path().join("events");
    let mut w = EventWatcher::new(events.clone(), Stub);
    for (name, ts) in [("b.json", 20), ("a.json", 10)] {
        std::fs::write(
            events.join(name),
            serde_json::to_vec(&record(ts, "t")).expect("encode"),
        )
        .expect("write");
    }
    std::fs::write(events.join(".c.json.tmp"), b"{").expect("write");
    std::fs::write(events.join("broken.json"), b"{\"v\":1,").expect("write");
    let got = w.poll();
    assert_eq!(got.iter().map(|r| r.ts).collect::<Vec<_>>(), [10, 20]);
    assert!(w.poll().is_empty());
    // Names without a timestamp are old: the cursor passes the broken
    // file, and this watcher still retries it.
    assert_eq!(w.cursor(), Some("broken"));
    // The broken file was not consumed: once it is whole, it arrives.
    std::fs::write(
        events.join("broken.json"),
        serde_json::to_vec(&record(30, "t")).expect("encode"),
    )
    .expect("write");
    assert_eq!(w.poll().iter().map(|r| r.ts).collect::<Vec<_>>(), [30]);
}

/// Writes a parsed record named `stem.json`, stamped `ts` inside.
fn put(events: &std::path::Path, stem: &str, ts: u64) {
    std::fs::write(
        events.join(format!("{stem}.json")),
        serde_json::to_vec(&record(ts, "t")).expect("encode"),
    )
    .expect("write");
}

fn stamps(records: &[HookRecord]) -> Vec<u64> {
    records.iter().map(|r| r.ts).collect()
}

#[test]
fn the_cursor_follows_the_names_timestamps_as_numbers() {
    let dir = tempfile::tempdir().expect("tempdir");
    let events = dir.path().join("events");
    let mut w = EventWatcher::new(events.clone(), Stub);
    assert_eq!(w.cursor(), None);
    // By text "100-" < "10-" < "9-"; by timestamp the reverse.
    for (stem, ts) in [
        ("100-t-Stop-1", 100),
        ("10-t-Stop-1", 10),
        ("9-t-Stop-1", 9),
    ] {
        put(&events, stem, ts);
    }
    // Stamped in the future (past u64, so the largest stamp): read, but
    // it must not carry the cursor past records still to come.
    put(&events, "99999999999999999999-t-Stop-1", 1);
    assert_eq!(stamps(&w.poll()), [1, 9, 10, 100]);
    assert_eq!(w.cursor(), Some("100-t-Stop-1"));
    // Only what is after the cursor is still remembered.
    assert_eq!(w.consumed.len(), 1, "{:?}", w.consumed);
    put(&events, "101-t-Stop-1", 101);
    assert_eq!(stamps(&w.poll()), [101]);
    assert!(w.poll().is_empty());
    assert_eq!(w.cursor(), Some("101-t-Stop-1"));
}

#[test]
fn a_resumed_watcher_never_opens_what_its_cursor_passed() {
    let project = tempfile::tempdir().expect("tempdir");
    let run = project.path().join("run");
    let events = run.join("events");
    std::fs::create_dir_all(&events).expect("events");
    put(&events, "10-t-Stop-1", 10);
    std::fs::write(events.join("20-t-Stop-1.json"), b"{\"v\":1,").expect("write");
    std::fs::write(events.join("25-t-Stop-1.drop"), b"not a drop").expect("write");
    put(&events, "30-t-Stop-1", 30);
    // After the cursor: "100" sorts before "30" as text, not as a time.
    put(&events, "100-t-Stop-1", 100);
    let drop = HookDrop {
        header: drover_relay::DropHeader {
            v: 2,
            ts: 31,
            task: "t".into(),
            cli: "claude".into(),
            native: "Stop".into(),
            capture: false,
        },
        payload: b"{}".to_vec(),
    };
    drover_relay::publish(&run, &drop).expect("publish");
    let mut w = EventWatcher::new(events.clone(), Stub).resume_after("30-t-Stop-1");
    assert_eq!(stamps(&w.poll()), [31, 100]);
    assert!(w.poll().is_empty());
    // The garbage before the cursor was never tried, so never retried.
    assert!(w.unreadable.is_empty(), "{:?}", w.unreadable);
    assert!(events.join("25-t-Stop-1.drop").exists());
    assert_eq!(w.cursor(), Some("100-t-Stop-1"));
    // A cursor behind the watcher's own changes nothing.
    let w = w.resume_after("10-t-Stop-1");
    assert_eq!(w.cursor(), Some("100-t-Stop-1"));
}

#[test]
fn since_skips_older_files_unopened() {
    let dir = tempfile::tempdir().expect("tempdir");
    let events = dir.path().join("events");
    std::fs::create_dir_all(&events).expect("events");
    std::fs::write(events.join("5-t-Stop-1.json"), b"{").expect("write");
    std::fs::write(events.join("no-stamp.json"), b"{").expect("write");
    put(&events, "6-t-Stop-1", 6);
    put(&events, "7-t-Stop-1", 7);
    let mut w = EventWatcher::new(events, Stub).since(7);
    assert_eq!(stamps(&w.poll()), [7]);
    assert!(w.unreadable.is_empty(), "{:?}", w.unreadable);
}

/// The relay stamps a drop before writing it, so a drop can land after a
/// later-stamped one was read. Within a minute it is still read (the
/// cursor stays that far behind the clock); later than that it is
/// skipped, as a watcher resumed from that cursor would skip it, rather
/// than have the cursor wait on drops that may never come.
#[test]
fn a_drop_landing_behind_a_later_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let events = dir.path().join("events");
    let mut w = EventWatcher::new(events.clone(), Stub);
    let now = now_ns();
    put(&events, &format!("{now}-t-Stop-1"), now);
    assert_eq!(stamps(&w.poll()), [now]);
    let earlier = now - 1_000_000_000;
    put(&events, &format!("{earlier}-t-Stop-2"), earlier);
    assert_eq!(stamps(&w.poll()), [earlier], "a second late");
    // Long settled records: the cursor passes them.
    put(&events, "10-t-Stop-1", 10);
    put(&events, "30-t-Stop-1", 30);
    assert_eq!(stamps(&w.poll()), [10, 30]);
    assert_eq!(w.cursor(), Some("30-t-Stop-1"));
    put(&events, "20-t-Stop-1", 20);
    assert!(w.poll().is_empty(), "landed long after its stamp");
}

#[test]
fn an_idle_wait_waits() {
    // Listing the directory must not count as activity in it.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = EventWatcher::new(dir.path().join("events"), Stub);
    let started = std::time::Instant::now();
    let mut rounds = 0;
    while started.elapsed() < Duration::from_millis(600) {
        assert!(w.wait(Duration::from_millis(200)).is_empty());
        rounds += 1;
    }
    assert!(rounds <= 4, "{rounds} waits of 200 ms in 600 ms");
}

#[test]
fn wait_returns_what_arrives() {
    let dir = tempfile::tempdir().expect("tempdir");
    let events = dir.path().join("events");
    let mut w = EventWatcher::new(events.clone(), Stub);
    std::fs::write(
        events.join("x.json"),
        serde_json::to_vec(&record(5, "t")).expect("encode"),
    )
    .expect("write");
    let got = w.wait(Duration::from_secs(5));
    assert_eq!(got.len(), 1);
}

/// A send to a seat with a long history lists its own stretch of time:
/// buckets wholly before its launch are never opened, so a broken record
/// planted in one is neither read nor retried, while the send's own records
/// (and a bucket still open at its launch) are.
#[test]
fn buckets_before_the_launch_are_not_listed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let events = dir.path().join("events");
    let old = events.join(bucket_of(BUCKET_NS));
    let open = events.join(bucket_of(5 * BUCKET_NS));
    std::fs::create_dir_all(&old).expect("old bucket");
    std::fs::create_dir_all(&open).expect("open bucket");
    let launch = 5 * BUCKET_NS + 500;
    std::fs::write(
        old.join(format!("{}-t-Stop-1.json", BUCKET_NS + 1)),
        "{broken",
    )
    .expect("old");
    let before = record(launch - 100, "t");
    let mine = record(launch + 1, "t");
    for r in [&before, &mine] {
        std::fs::write(
            open.join(format!("{}-t-Stop-1.json", r.ts)),
            serde_json::to_vec(r).expect("json"),
        )
        .expect("record");
    }
    let mut w = EventWatcher::new(events.clone(), Stub).since(launch);
    assert_eq!(w.poll(), vec![mine.clone()]);
    assert!(w.unreadable.is_empty(), "an old bucket was opened");
    // Without a floor the history is all there (recovery's view).
    let mut all = EventWatcher::new(events, Stub);
    assert_eq!(all.poll(), vec![before, mine]);
    assert_eq!(all.unreadable.len(), 1);
}

/// The driven CLI can write into `events/`: a link named like a bucket
/// (to a directory of records elsewhere) is not entered.
#[test]
fn a_bucket_that_is_a_link_is_not_entered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let events = dir.path().join("events");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("elsewhere");
    std::fs::create_dir_all(&events).expect("events");
    let planted = record(BUCKET_NS + 1, "t");
    std::fs::write(
        elsewhere.join(format!("{}-t-Stop-1.json", planted.ts)),
        serde_json::to_vec(&planted).expect("json"),
    )
    .expect("planted");
    std::os::unix::fs::symlink(&elsewhere, events.join(bucket_of(BUCKET_NS + 1))).expect("link");
    assert!(EventWatcher::new(events, Stub).poll().is_empty());
}
