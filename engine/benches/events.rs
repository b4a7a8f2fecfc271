//! From a hook to a printed line: a real `drover-relay` (the one `hooks
//! install` registers) drops an event file, a driver loop (the session
//! drivers' own `EventWatcher`, parsing the drop with the warm component,
//! and `Journal`) turns it into a journal line, and `drover events --follow
//! --json` prints it. Latency is measured from the relay's drop (the event
//! record's timestamp) to the moment the line is read from the follower's
//! stdout; `tail -F` on the same journal is the baseline beside it. Then
//! both sit idle and their CPU time is read from /proc.
//!
//! Prints markdown tables (docs/benchmarks.md records the runs).
//! `EVENTS_BENCH_N` sets the number of hooks (default 200).
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a benchmark prints its measurements"
)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use drover::drops::DropParser;
use drover::run::{EventWatcher, Journal, RunDir, RunInfo, now_ns};
use drover::sandbox::CompileCache;
use drover::types::wit::SeatState;

fn reader(child: &mut Child) -> Receiver<(u64, String)> {
    let (tx, rx) = channel();
    let stdout = child.stdout.take().expect("stdout");
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send((now_ns(), line)).is_err() {
                return;
            }
        }
    });
    rx
}

/// The drop timestamp a journal line carries, if it is one of ours.
fn drop_ts(line: &str) -> Option<u64> {
    let json = line.find('{').map(|i| &line[i..])?;
    let value: serde_json::Value = serde_json::from_str(json).ok()?;
    value["detail"]["drop_ts"].as_u64()
}

fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rfind(')').map_or("", |i| &stat[i + 1..]);
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime: fields 14 and 15 overall, 11 and 12 after ')'.
    fields
        .get(11)
        .and_then(|f| f.parse::<u64>().ok())
        .unwrap_or(0)
        + fields
            .get(12)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

fn main() {
    let drover = env!("CARGO_BIN_EXE_drover");
    let dir = tempfile::tempdir().expect("tempdir");
    let project = dir.path().to_path_buf();
    let home = project.join("home");
    std::fs::create_dir_all(&home).expect("home");
    let cache = project.join("cache");
    let run = RunDir::create(&project, "bench").expect("run dir");
    let me = drover::workspace::process::identity(std::process::id());
    run.write_info(&RunInfo {
        run_id: "bench".into(),
        created_ns: now_ns(),
        cli: "scripted".into(),
        workspace: drover::types::WorkspaceKind::Tmux,
        project: project.clone(),
        tasks: vec!["t".into()],
        driver_pid: std::process::id(),
        driver_start: me.map(|m| m.start),
    })
    .expect("run.json");
    std::fs::write(run.journal_path(), b"").expect("journal");

    // The driver: what a live session does with relay drops.
    let events = run.events_dir();
    let journal_path = run.journal_path();
    let (run_root, parser_cache) = (run.root().to_path_buf(), cache.clone());
    std::thread::spawn(move || {
        let parser =
            DropParser::for_run(&run_root).with_compile_cache(CompileCache::at(parser_cache));
        let mut watcher = EventWatcher::new(events, parser);
        let mut journal = Journal::open(journal_path);
        loop {
            for event in watcher.wait(Duration::from_millis(250)) {
                let state = if event.native == "PermissionRequest" {
                    SeatState::Blocked
                } else {
                    SeatState::Working
                };
                journal.record(
                    "t",
                    state,
                    (state == SeatState::Blocked).then_some("permission"),
                    &format!("hook:{}", event.native),
                    serde_json::json!({"drop_ts": event.ts}),
                );
            }
        }
    });

    let mut follow = Command::new(drover)
        .args(["events", "--follow", "--json"])
        .current_dir(&project)
        .env("HOME", &home)
        .env("DROVER_CACHE_DIR", &cache)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("drover events --follow");
    let mut tail = Command::new("tail")
        .args(["-F", "-n", "0"])
        .arg(run.journal_path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("tail -F");
    let (follow_lines, tail_lines) = (reader(&mut follow), reader(&mut tail));
    std::thread::sleep(Duration::from_millis(500));

    // The relay `hooks install` registers, written out the way it does.
    let data = drover::gate::clear(
        drover::gate::Effect::Write,
        "the bench's relay directory",
        drover::gate::Sourced::new(project.join("share"), drover::gate::Provenance::Operator),
    )
    .expect("cleared");
    let relay_exe = drover::hooks::embedded::write_in(&data).expect("the relay is written out");
    let relay = |event: &str| {
        let mut child = Command::new(&relay_exe)
            .args(["--cli", "scripted", event])
            .env("DROVER_RUN_DIR", run.root())
            .env("DROVER_TASK_ID", "t")
            .env("DROVER_CACHE_DIR", &cache)
            .env("HOME", &home)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("relay");
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(br#"{"session_id":"s","tool_name":"Bash"}"#);
        }
        child.wait().expect("relay ends");
    };
    relay("PreToolUse"); // the driver loads (and compiles) the component
    let warm_until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < warm_until && follow_lines.recv_timeout(Duration::from_secs(1)).is_err()
    {
    }
    while tail_lines.try_recv().is_ok() {}

    let n: usize = std::env::var("EVENTS_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let (mut via_follow, mut via_tail) = (Vec::new(), Vec::new());
    for i in 0..n {
        // Alternate so every hook is a transition (repeats are not journaled).
        relay(if i % 2 == 0 {
            "PermissionRequest"
        } else {
            "PreToolUse"
        });
        for (lines, out) in [
            (&follow_lines, &mut via_follow),
            (&tail_lines, &mut via_tail),
        ] {
            let until = Instant::now() + Duration::from_secs(10);
            while Instant::now() < until {
                match lines.recv_timeout(Duration::from_secs(1)) {
                    Ok((read_ns, line)) => {
                        if let Some(dropped) = drop_ts(&line) {
                            out.push(read_ns.saturating_sub(dropped) as f64 / 1e6);
                            break;
                        }
                    }
                    Err(_) => continue,
                }
            }
        }
    }
    for v in [&mut via_follow, &mut via_tail] {
        v.sort_by(f64::total_cmp);
    }
    println!("| relay drop → printed line ({n} hooks) | p50 ms | p99 ms | p50 vs tail -F |");
    println!("|---|---:|---:|---:|");
    let base = percentile(&via_tail, 0.5);
    for (name, v) in [
        ("drover events --follow --json", &via_follow),
        ("tail -F on the same events.jsonl", &via_tail),
    ] {
        println!(
            "| {name} | {:.2} | {:.2} | {:.2}× |",
            percentile(v, 0.5),
            percentile(v, 0.99),
            percentile(v, 0.5) / base
        );
    }
    assert_eq!(via_follow.len(), n, "the follower missed lines");

    // Idle: nothing happens for a while.
    let idle = Duration::from_secs(
        std::env::var("EVENTS_BENCH_IDLE_S")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(30),
    );
    let (f0, t0) = (cpu_ticks(follow.id()), cpu_ticks(tail.id()));
    std::thread::sleep(idle);
    let (f1, t1) = (cpu_ticks(follow.id()), cpu_ticks(tail.id()));
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let per_minute = |ticks: u64| ticks as f64 / hz * 1000.0 * 60.0 / idle.as_secs_f64();
    println!();
    println!("| idle for {} s | CPU ms per idle minute |", idle.as_secs());
    println!("|---|---:|");
    println!("| drover events --follow | {:.1} |", per_minute(f1 - f0));
    println!("| tail -F | {:.1} |", per_minute(t1 - t0));
    let _ = follow.kill();
    let _ = tail.kill();
    let _ = follow.wait();
    let _ = tail.wait();
}
