//! A seat on the cluster keeps its node and conversation; `down` stops its
//! running job.

use std::time::{Duration, Instant};

use drover::ray::jobs::JobStatus;
use serde_json::Value;

use crate::WAIT;
use crate::drive::{drover, job_record, json_of, node_verdict, turn_of, wait_for, worker_idle};
use crate::support::Project;
use crate::support::ray_cluster::Cluster;

pub fn a_seat_keeps_its_node_and_conversation(cluster: &Cluster) {
    let p = Project::new();
    // The next turn must find this one's worker still waiting.
    worker_idle(&p, 30);
    let up = drover(&p, cluster)
        .args(["up", "s1", "--cli", "scripted", "--workspace", "ray"])
        .output()
        .expect("up");
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let send = |text: &str| {
        json_of(
            drover(&p, cluster)
                .args(["send", "--json", "s1", text])
                .output()
                .expect("send"),
        )
    };
    let (first, code) = send("Reply with exactly: ONE");
    assert_eq!(
        (first["status"].as_str(), code),
        (Some("completed"), 0),
        "{first:#}"
    );
    let seat: Value = serde_json::from_str(
        &std::fs::read_to_string(p.path().join(".drover/seats/s1.json")).expect("seat"),
    )
    .expect("json");
    let node = seat["ray"]["node"]
        .as_str()
        .expect("the seat is pinned to its node")
        .to_string();
    let (second, code) = send("Reply with exactly: TWO");
    assert_eq!(
        (second["status"].as_str(), code),
        (Some("completed"), 0),
        "{second:#}"
    );
    assert_eq!(second["reply"], "TWO");
    assert_eq!(
        second["session_id"], first["session_id"],
        "the conversation continued"
    );
    let run = second["run_id"].as_str().expect("run");
    assert_eq!(job_record(&p, run, "s1")["node_id"], node.as_str());
    assert_eq!(job_record(&p, run, "s1")["pinned_node"], node.as_str());
    let verdicts = p
        .journal(run)
        .iter()
        .filter(|l| l["kind"] == "verdict")
        .count();
    assert_eq!(verdicts, 2, "one verdict per turn");
    // `drover down` stops a turn still running on the node.
    let second_turn = turn_of(&job_record(&p, run, "s1"));
    let queued = drover(&p, cluster)
        .args(["send", "--no-wait", "s1", "Reply with exactly: NEVER @hang"])
        .output()
        .expect("send --no-wait");
    assert!(
        queued.status.success(),
        "{}",
        String::from_utf8_lossy(&queued.stderr)
    );
    let until = Instant::now() + WAIT;
    let (job, turn) = loop {
        let record = job_record(&p, run, "s1");
        let job = record["submission_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let info = cluster.jobs().info(&job).ok().flatten();
        let turn = turn_of(&record);
        let started = p
            .path()
            .join(".drover/ray/.drover/runs")
            .join(&turn)
            .join("tasks/s1/process.json")
            .is_file();
        if turn != second_turn
            && started
            && info
                .as_ref()
                .is_some_and(|i| i.status == JobStatus::Running)
        {
            break (job, turn);
        }
        assert!(
            Instant::now() < until,
            "the third turn's job never ran: {record:#}\n{info:?}\n{:#?}",
            p.journal(run)
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let (down, code) = json_of(
        drover(&p, cluster)
            .args(["down", "--json", "s1"])
            .output()
            .expect("down"),
    );
    assert_eq!(code, 0, "{down:#}");
    assert_eq!(down["down"][0]["stopped_job"], turn.as_str(), "{down:#}");
    wait_for("the node to end the turn", || node_verdict(&p, &turn));
    // The worker stays for the project's next turn.
    let info = cluster.jobs().info(&job).expect("info").expect("known job");
    assert_eq!(info.status, JobStatus::Running);
}
