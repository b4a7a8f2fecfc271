//! `drover run` on the cluster: a completed turn, runs pinned to a node,
//! and ten in parallel that lose no events.

use std::process::{Child, Stdio};

use drover::ray::jobs::JobStatus;

use crate::RAY_RUN;
use crate::drive::{
    assert_events_came_home, drover, job_record, json_of, ray_run, turn_of, worker_idle,
};
use crate::support::Project;
use crate::support::ray_cluster::Cluster;

pub fn completes_with_reply_usage_and_events(cluster: &Cluster) {
    let p = Project::new();
    // The next turn must find this one's worker still waiting.
    worker_idle(&p, 30);
    let (doc, code) = ray_run(&p, cluster, &[], "Reply with exactly: HELLO FROM RAY");
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("completed"), 0),
        "{doc:#}"
    );
    assert_eq!(doc["workspace"], "ray");
    assert_eq!(doc["reply"], "HELLO FROM RAY");
    assert_eq!(doc["usage"]["input"], 1201);
    assert_eq!(doc["usage"]["cache_write"], 1302);
    assert_eq!(doc["usage"]["cache_read"], 1403);
    assert_eq!(doc["usage"]["output"], 57);
    assert_eq!(doc["usage"]["requests"], 1);
    assert!(
        doc["session_id"].as_str().is_some_and(|s| !s.is_empty()),
        "{doc:#}"
    );
    let run = doc["run_id"].as_str().expect("run id");
    assert_eq!(p.states(run), ["working", "done"]);
    let record = job_record(&p, run, "scripted");
    let job = record["submission_id"].as_str().expect("submission id");
    assert_events_came_home(&p, run, &turn_of(&record));
    // The local copy of the turn's lines holds the result line.
    let log = std::fs::read_to_string(doc["logs"][0].as_str().expect("log")).expect("log copy");
    assert!(log.contains("drover-ray/1 result "), "{log}");
    // The turn went to a worker job, which Ray still runs, waiting for the
    // next turn…
    let info = cluster
        .jobs()
        .info(job)
        .expect("job info")
        .expect("known job");
    assert_eq!(info.status, JobStatus::Running, "{record:#}");
    // …which the next run of the project gives it.
    let (again, code) = ray_run(&p, cluster, &[], "Reply with exactly: AGAIN");
    assert_eq!(
        (again["status"].as_str(), code),
        (Some("completed"), 0),
        "{again:#}"
    );
    let second = job_record(&p, again["run_id"].as_str().expect("run id"), "scripted");
    assert_eq!(
        second["submission_id"], job,
        "the same worker took the turn"
    );
    assert_ne!(turn_of(&second), turn_of(&record));
    // `drover status` reads the same.
    let (status, code) = json_of(p.output(&["status", "--json", run]));
    assert_eq!(code, 0, "{status:#}");
    assert_eq!(status["runs"][0]["tasks"][0]["verdict"], "completed");
    assert_eq!(status["runs"][0]["workspace"], "ray");
}

pub fn pinned_runs_land_on_their_node(cluster: &Cluster) {
    let p = Project::new();
    for resource in ["host_b", "host_c"] {
        let (doc, code) = ray_run(
            &p,
            cluster,
            &["--place", resource],
            &format!("Reply with exactly: ON {resource}"),
        );
        assert_eq!(
            (doc["status"].as_str(), code),
            (Some("completed"), 0),
            "{doc:#}"
        );
        let run = doc["run_id"].as_str().expect("run id");
        let record = job_record(&p, run, "scripted");
        assert_eq!(record["place"], resource);
        // Ray ran the job's driver on the node that has the resource…
        assert_eq!(
            record["node_id"].as_str(),
            Some(cluster.node_with(resource).node_id.as_str()),
            "{record:#}"
        );
        // …and the CLI wrote its transcript in that node's HOME, nowhere else.
        let conversation = doc["session_id"].as_str().expect("conversation");
        assert_eq!(
            cluster.homes_holding(&format!("{conversation}.jsonl")),
            [resource]
        );
    }
}

pub fn ten_parallel_runs_lose_no_events(cluster: &Cluster) {
    let p = Project::new();
    let children: Vec<(String, Child)> = (0..10)
        .map(|n| {
            let reply = format!("PARALLEL {n}");
            let child = drover(&p, cluster)
                .args(RAY_RUN)
                .args(["--timeout", "10m"])
                .args(["--task", &format!("t{n}")])
                .arg(format!("Reply with exactly: {reply} @sleep=300"))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("drover starts");
            (reply, child)
        })
        .collect();
    for (reply, child) in children {
        let (doc, code) = json_of(child.wait_with_output().expect("drover ends"));
        assert_eq!(
            (doc["status"].as_str(), code),
            (Some("completed"), 0),
            "{doc:#}"
        );
        assert_eq!(doc["reply"], reply.as_str());
        let run = doc["run_id"].as_str().expect("run id");
        let task = doc["task"].as_str().expect("task");
        let record = job_record(&p, run, task);
        assert_events_came_home(&p, run, &turn_of(&record));
        assert_eq!(p.states(run), ["working", "done"]);
    }
}
