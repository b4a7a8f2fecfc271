//! The ray workspace on a real three-node cluster on loopback (the tests'
//! cluster: one CPU per node), side by side with local headless turns in
//! the same run:
//!
//! - turn overhead: sequential scripted turns, headless and ray interleaved,
//!   p50 of each and the difference;
//! - throughput: N scripted turns of 2 s of work started at once, on ray
//!   (three nodes, one CPU each) and headless on this machine.
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

fn main() {
    watchdog(Duration::from_secs(30 * 60));
    let cluster = Cluster::start().unwrap_or_else(|e| panic!("the Ray cluster did not start: {e}"));
    println!(
        "cluster: head ready in {:.1} s, three nodes in {:.1} s\n",
        cluster.head_ready_s, cluster.all_ready_s
    );
    let p = Project::new();
    // Warm the compile cache and the cluster's workers before measuring.
    for ws in ["headless", "ray"] {
        let out = turn(&p, &cluster, ws, "warm", "Reply with exactly: WARM")
            .output()
            .expect("drover");
        assert!(completed(&out), "{}", String::from_utf8_lossy(&out.stdout));
    }

    let n = env_usize("RAY_BENCH_N", 10);
    let (mut local, mut ray) = (Vec::new(), Vec::new());
    for i in 0..n {
        for (ws, samples) in [("headless", &mut local), ("ray", &mut ray)] {
            let started = Instant::now();
            let out = turn(
                &p,
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
    let (local_p50, ray_p50) = (p50(&mut local), p50(&mut ray));
    println!("| one scripted turn ({n} each, interleaved) | p50 s |");
    println!("|---|---:|");
    println!(
        "| headless, this machine | {:.2} |",
        local_p50.as_secs_f64()
    );
    println!(
        "| ray job (submit, node drover, events home) | {:.2} |",
        ray_p50.as_secs_f64()
    );
    println!(
        "| ray overhead | +{:.2} ({:.1}×) |\n",
        ray_p50.as_secs_f64() - local_p50.as_secs_f64(),
        ray_p50.as_secs_f64() / local_p50.as_secs_f64()
    );

    let parallel = env_usize("RAY_BENCH_PARALLEL", 12);
    println!("| {parallel} turns of 2 s work started at once | wall s | turns/min |");
    println!("|---|---:|---:|");
    for ws in ["headless", "ray"] {
        let started = Instant::now();
        let children: Vec<_> = (0..parallel)
            .map(|i| {
                turn(
                    &p,
                    &cluster,
                    ws,
                    &format!("par{i}"),
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
        let wall = started.elapsed().as_secs_f64();
        let label = if ws == "ray" {
            "ray, three nodes × 1 CPU"
        } else {
            "headless, this machine"
        };
        println!(
            "| {label} | {wall:.1} | {:.1} |",
            parallel as f64 * 60.0 / wall
        );
    }
}
