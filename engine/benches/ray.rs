//! The ray workspace on a real three-node cluster on loopback (the tests'
//! cluster: one CPU per node), side by side with local headless turns in
//! the same run:
//!
//! - turn overhead: sequential scripted turns, headless, on a warm ray seat
//!   and as a job per turn, interleaved, p50 of each and the difference;
//! - throughput: N scripted turns of 2 s of work started at once: headless
//!   on this machine; on ray (three nodes, one CPU each) as a job per turn
//!   with one CPU each, and on workers asking one CPU, then a quarter CPU
//!   each, first new, then warm.
//!
//! Needs Ray (`scripts/provision-ray.sh`) and `cargo build --workspace`
//! (the scripted CLI). Prints markdown tables (docs/benchmarks.md records
//! the runs). `RAY_BENCH_N` sets the sequential turns (default 10),
//! `RAY_BENCH_PARALLEL` the parallel ones (default 12).
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a benchmark prints its measurements"
)]

#[path = "../tests/integration/support/mod.rs"]
mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::Project;
use support::ray_cluster::{Cluster, watchdog};

fn turn(p: &Project, cluster: &Cluster, workspace: &str, task: &str, prompt: &str) -> Command {
    let mut cmd = p.drover();
    cmd.env("RAY_ADDRESS", &cluster.address)
        .args([
            "run",
            "--json",
            "--cli",
            "scripted",
            "--workspace",
            workspace,
            "--task",
            task,
            prompt,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

fn completed(out: &std::process::Output) -> bool {
    serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .is_ok_and(|doc| doc["status"] == "completed")
}

fn p50(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A project whose `[ray]` section is `ray`, trusted so it counts.
fn project_with(cluster: &Cluster, ray: &str) -> Project {
    let p = Project::new();
    std::fs::create_dir_all(p.path().join(".drover")).expect("dir");
    std::fs::write(
        p.path().join(".drover/config.toml"),
        format!("[ray]\n{ray}"),
    )
    .expect("config");
    let mut trust = p.drover();
    trust.env("RAY_ADDRESS", &cluster.address).arg("trust");
    assert!(trust.output().expect("trust").status.success());
    p
}

/// Runs `n` turns of 2 s work at once; wall seconds.
fn wave(p: &Project, cluster: &Cluster, ws: &str, n: usize, tag: &str) -> f64 {
    let started = Instant::now();
    let children: Vec<_> = (0..n)
        .map(|i| {
            turn(
                p,
                cluster,
                ws,
                &format!("{tag}{i}"),
                "Reply with exactly: PAR @sleep=2000",
            )
            .spawn()
            .expect("drover")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("drover");
        assert!(
            completed(&out),
            "{ws}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    started.elapsed().as_secs_f64()
}

/// Waits until every worker of the project has left (idle, 30 s).
fn workers_gone(p: &Project) {
    let dir = p.path().join(".drover/ray/workers");
    let until = Instant::now() + Duration::from_secs(300);
    while std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| !e.path().join("gone").exists())
    {
        assert!(Instant::now() < until, "the workers never left");
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn main() {
    watchdog(Duration::from_secs(30 * 60));
    let cluster = Cluster::start().unwrap_or_else(|e| panic!("the Ray cluster did not start: {e}"));
    println!(
        "cluster: head ready in {:.1} s, three nodes in {:.1} s\n",
        cluster.head_ready_s, cluster.all_ready_s
    );
    // One project per way of running: a warm seat (the default), a job per
    // turn (`warm = false`), and warm seats asking a quarter CPU each.
    let warm = Project::new();
    let cold = project_with(&cluster, "warm = false\n");
    let whole = Project::new();
    let quarter = project_with(&cluster, "num_cpus = 0.25\n");
    // Warm the compile cache, the cluster's workers and the warm seat.
    for (p, ws) in [(&warm, "headless"), (&warm, "ray"), (&cold, "ray")] {
        let out = turn(p, &cluster, ws, "warm", "Reply with exactly: WARM")
            .output()
            .expect("drover");
        assert!(completed(&out), "{}", String::from_utf8_lossy(&out.stdout));
    }

    let n = env_usize("RAY_BENCH_N", 10);
    let (mut local, mut seat, mut job) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        for (p, ws, samples) in [
            (&warm, "headless", &mut local),
            (&warm, "ray", &mut seat),
            (&cold, "ray", &mut job),
        ] {
            let started = Instant::now();
            let out = turn(
                p,
                &cluster,
                ws,
                &format!("seq{i}"),
                "Reply with exactly: SEQ",
            )
            .output()
            .expect("drover");
            samples.push(started.elapsed());
            assert!(
                completed(&out),
                "{ws}: {}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
    let (local_p50, seat_p50, job_p50) = (p50(&mut local), p50(&mut seat), p50(&mut job));
    let over = |d: Duration| {
        format!(
            "+{:.2} ({:.1}×)",
            d.as_secs_f64() - local_p50.as_secs_f64(),
            d.as_secs_f64() / local_p50.as_secs_f64()
        )
    };
    println!("| one scripted turn ({n} each, interleaved) | p50 s | over headless |");
    println!("|---|---:|---:|");
    println!(
        "| headless, this machine | {:.2} | |",
        local_p50.as_secs_f64()
    );
    println!(
        "| ray, warm seat (a worker job takes the turn) | {:.2} | {} |",
        seat_p50.as_secs_f64(),
        over(seat_p50)
    );
    println!(
        "| ray, a job per turn (`warm = false`) | {:.2} | {} |\n",
        job_p50.as_secs_f64(),
        over(job_p50)
    );

    let parallel = env_usize("RAY_BENCH_PARALLEL", 12);
    println!("| {parallel} turns of 2 s work started at once | wall s | turns/min |");
    println!("|---|---:|---:|");
    let row = |label: &str, wall: f64| {
        println!(
            "| {label} | {wall:.1} | {:.1} |",
            parallel as f64 * 60.0 / wall
        );
    };
    row(
        "headless, this machine",
        wave(&warm, &cluster, "headless", parallel, "par"),
    );
    row(
        "ray, a job per turn, 1 CPU each",
        wave(&cold, &cluster, "ray", parallel, "par"),
    );
    // The first wave of each starts the workers; the second finds them
    // warm. Idle workers hold their CPUs until they leave (30 s idle): each
    // placement starts on a cluster the last one left.
    workers_gone(&warm);
    row(
        "ray, new workers, 1 CPU each",
        wave(&whole, &cluster, "ray", parallel, "cold"),
    );
    row(
        "ray, warm workers, 1 CPU each",
        wave(&whole, &cluster, "ray", parallel, "par"),
    );
    workers_gone(&whole);
    row(
        "ray, new workers, 0.25 CPU each",
        wave(&quarter, &cluster, "ray", parallel, "cold"),
    );
    row(
        "ray, warm workers, 0.25 CPU each",
        wave(&quarter, &cluster, "ray", parallel, "par"),
    );
}
