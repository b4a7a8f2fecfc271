//! The ray workspace against a real Ray cluster on loopback (a head and two
//! nodes with their own custom resources), driving the scripted CLI
//! through `drover run --workspace ray` and `drover up/send`.
//!
//! One cluster serves every case, so this file has its own harness: it
//! starts the cluster, runs the cases one after another, and stops the
//! cluster whatever happened (a failed case, a panic, a hang past the
//! watchdog). It prints `N passed, N failed` and exits non-zero on a
//! failure. `cargo test --test ray -- NAME` runs the cases whose name
//! contains NAME.
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a test program: printing what it saw is the point"
)]

#[path = "../integration/support/mod.rs"]
mod support;

mod cluster;
mod drive;
mod lifecycle;
mod runs;
mod seats;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use cluster::{a_dead_cluster_is_a_network_fault, mux_and_doctor_show_the_cluster};
use lifecycle::{
    a_failed_job_is_crashed_with_rays_reason, a_killed_driver_is_settled_from_ray,
    a_killed_driver_stops_its_worker_through_the_lease,
    an_unreachable_nodes_log_is_a_network_fault, stopping_a_run_stops_its_job,
    wait_and_events_follow_a_ray_run,
};
use runs::{
    completes_with_reply_usage_and_events, pinned_runs_land_on_their_node,
    ten_parallel_runs_lose_no_events,
};
use seats::a_seat_keeps_its_node_and_conversation;
use support::ray_cluster::{Cluster, watchdog};

/// Conditions the cases wait for (a job to start, a process to exit).
const WAIT: Duration = Duration::from_secs(120);

type Case = fn(&Cluster);

/// `drover run` of the scripted CLI on the cluster, as JSON.
const RAY_RUN: [&str; 6] = ["run", "--json", "--cli", "scripted", "--workspace", "ray"];

fn main() -> ExitCode {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let cases: &[(&str, Case)] = &[
        (
            "completes_with_reply_usage_and_events",
            completes_with_reply_usage_and_events,
        ),
        (
            "pinned_runs_land_on_their_node",
            pinned_runs_land_on_their_node,
        ),
        (
            "ten_parallel_runs_lose_no_events",
            ten_parallel_runs_lose_no_events,
        ),
        (
            "wait_and_events_follow_a_ray_run",
            wait_and_events_follow_a_ray_run,
        ),
        (
            "a_killed_driver_is_settled_from_ray",
            a_killed_driver_is_settled_from_ray,
        ),
        ("stopping_a_run_stops_its_job", stopping_a_run_stops_its_job),
        (
            "a_failed_job_is_crashed_with_rays_reason",
            a_failed_job_is_crashed_with_rays_reason,
        ),
        (
            "a_seat_keeps_its_node_and_conversation",
            a_seat_keeps_its_node_and_conversation,
        ),
        (
            "mux_and_doctor_show_the_cluster",
            mux_and_doctor_show_the_cluster,
        ),
        (
            "a_dead_cluster_is_a_network_fault",
            a_dead_cluster_is_a_network_fault,
        ),
        (
            "a_killed_driver_stops_its_worker_through_the_lease",
            a_killed_driver_stops_its_worker_through_the_lease,
        ),
        // Last: it stops a node.
        (
            "an_unreachable_nodes_log_is_a_network_fault",
            an_unreachable_nodes_log_is_a_network_fault,
        ),
    ];
    let chosen: Vec<_> = cases
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .collect();
    if chosen.is_empty() {
        println!("0 passed, 0 failed");
        return ExitCode::SUCCESS;
    }
    watchdog(Duration::from_secs(25 * 60));
    let cluster = match Cluster::start() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: the Ray cluster did not start: {e}");
            println!("0 passed, {} failed", chosen.len());
            return ExitCode::FAILURE;
        }
    };
    println!(
        "ray cluster at {}: head ready in {:.1}s, three nodes in {:.1}s",
        cluster.address, cluster.head_ready_s, cluster.all_ready_s
    );
    let (mut passed, mut failed) = (0, 0);
    for (name, case) in chosen {
        let started = Instant::now();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| case(&cluster)));
        let took = started.elapsed().as_secs_f64();
        match outcome {
            Ok(()) => {
                passed += 1;
                println!("test {name} ... ok ({took:.1}s)");
            }
            Err(_) => {
                failed += 1;
                println!("test {name} ... FAILED ({took:.1}s)");
            }
        }
    }
    drop(cluster);
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
