//! The hook relay, end to end, side by side with `true` (the cost of a
//! process spawn) and a Python interpreter doing a relay's work (read the
//! payload, publish one 0600 event file atomically into a no-follow
//! directory; the Python one also picks the session fields, which drover
//! leaves to the session's warm component). The relay timed is the one
//! `hooks install` registers: the binary drover carries, written out the way
//! `hooks install` writes it. Prints a markdown table of p50/p90/p99 wall
//! times per invocation (docs/benchmarks.md records the runs).
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a benchmark prints its measurements"
)]

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const STOP: &str = r#"{"session_id":"5f0c1d2e-0000-4000-8000-000000000001","transcript_path":"/home/u/.claude/projects/-w/5f0c1d2e-0000-4000-8000-000000000001.jsonl","cwd":"/w","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"All tests pass; the refactor is committed.","background_tasks":[],"session_crons":[],"effort":"high","permission_mode":"auto","prompt_id":"p1"}"#;

const PYTHON_RELAY: &str = r#"
import json, os, sys, time
run_dir = os.environ.get("DROVER_RUN_DIR"); task = os.environ.get("DROVER_TASK_ID")
if not run_dir or not task: sys.exit(0)
try: payload = json.load(sys.stdin)
except Exception: payload = {}
if not isinstance(payload, dict): payload = {}
ts = time.time_ns()
record = {"v": 1, "ts": ts, "task": task, "cli": "claude", "native": sys.argv[1], "kind": "stop",
          "session_id": payload.get("session_id") or payload.get("sessionId"),
          "transcript_path": payload.get("transcript_path") or payload.get("transcriptPath"),
          "cwd": payload.get("cwd"), "last_message": payload.get("last_assistant_message")}
d = os.open(os.path.join(run_dir, "events"), os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
name = "%d-%s-%s-%d.json" % (ts, task, sys.argv[1], os.getpid())
fd = os.open("." + name + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=d)
os.write(fd, json.dumps(record).encode()); os.close(fd)
os.rename("." + name + ".tmp", name, src_dir_fd=d, dst_dir_fd=d)
"#;

fn time_one(mut command: Command) -> Duration {
    let started = Instant::now();
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(STOP.as_bytes());
    }
    let status = child.wait().expect("wait");
    assert!(status.success());
    started.elapsed()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run_dir = dir.path().join(".drover/runs/bench");
    std::fs::create_dir_all(run_dir.join("events")).expect("run dir");
    let cache = dir.path().join("cache");
    let script = dir.path().join("relay.py");
    std::fs::write(&script, PYTHON_RELAY).expect("script");
    let iterations: usize = std::env::var("RELAY_BENCH_N")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300);
    let hook = |program: &str, args: &[&str]| {
        let mut c = Command::new(program);
        c.args(args)
            .args(["--cli", "claude", "Stop"])
            .env("DROVER_RUN_DIR", &run_dir)
            .env("DROVER_TASK_ID", "bench")
            .env("DROVER_CACHE_DIR", &cache)
            .env("HOME", dir.path());
        c
    };
    let data = drover::gate::clear(
        drover::gate::Effect::Write,
        "the bench's relay directory",
        drover::gate::Sourced::new(dir.path().join("share"), drover::gate::Provenance::Operator),
    )
    .expect("cleared");
    let registered = drover::hooks::embedded::write_in(&data).expect("the relay is written out");
    let registered = registered.to_str().expect("a UTF-8 path").to_string();
    let fast = || hook(&registered, &[]);
    // Another build of the relay, when given (say the dynamically linked one
    // `cargo build --release -p drover-relay` makes), timed in the same loop.
    let other_relay = std::env::var("RELAY_BENCH_OTHER")
        .ok()
        .filter(|p| !p.is_empty());
    let other = |path: &str| hook(path, &[]);
    let drover = || hook(env!("CARGO_BIN_EXE_drover"), &["hook"]);
    // The interpreter itself, not a version-manager shim in front of it.
    let interpreter = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".to_string());
    let python = || {
        let mut c = Command::new(&interpreter);
        c.arg(&script)
            .arg("Stop")
            .env("DROVER_RUN_DIR", &run_dir)
            .env("DROVER_TASK_ID", "bench");
        c
    };
    let noop = || {
        let mut c = Command::new("true");
        c.env("X", "1");
        c
    };
    // Warm the page cache.
    for _ in 0..5 {
        if let Some(path) = &other_relay {
            time_one(other(path));
        }
        time_one(fast());
        time_one(drover());
        time_one(python());
    }
    let (mut f, mut d, mut p, mut n) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut s = Vec::new();
    // Interleaved, so drift on a shared machine hits all of them alike.
    for _ in 0..iterations {
        if let Some(path) = &other_relay {
            s.push(time_one(other(path)));
        }
        f.push(time_one(fast()));
        d.push(time_one(drover()));
        p.push(time_one(python()));
        n.push(time_one(noop()));
    }
    for v in [&mut f, &mut d, &mut p, &mut n, &mut s] {
        v.sort();
    }
    let ms = |x: Duration| format!("{:.2}", x.as_secs_f64() * 1000.0);
    let p50 = |v: &[Duration]| percentile(v, 0.5).as_secs_f64();
    println!(
        "registered relay: {registered} ({:?})",
        drover::hooks::embedded::LINKING
    );
    println!(
        "| relay ({iterations} runs each, interleaved) | p50 ms | p90 ms | p99 ms | p50 / `true` p50 | python p50 / p50 |"
    );
    println!("|---|---|---|---|---|---|");
    let rows = [
        (
            "drover-relay as `hooks install` registers it (Claude Stop)",
            &f,
        ),
        ("RELAY_BENCH_OTHER (Claude Stop)", &s),
        ("drover hook (Claude Stop)", &d),
        ("python3 relay", &p),
        ("`true` (process spawn floor)", &n),
    ];
    for (name, v) in rows.into_iter().filter(|(_, v)| !v.is_empty()) {
        println!(
            "| {name} | {} | {} | {} | {:.2}x | {:.1}x |",
            ms(percentile(v, 0.5)),
            ms(percentile(v, 0.9)),
            ms(percentile(v, 0.99)),
            p50(v) / p50(&n),
            p50(&p) / p50(v),
        );
    }
    // The relays compile nothing, warm cache or not.
    assert!(!cache.exists(), "a relay compiled a component");
}
