//! A run's life on Ray: `wait` and `events` follow it, a killed driver is
//! settled from Ray, stopping a run stops its job, a failed job is
//! crashed with Ray's reason.

use serde_json::Value;

use crate::drive::{
    assert_events_came_home, drover, job_per_turn, job_record, json_of, node_verdict, ray_run,
    running_job, spawn_run, wait_for,
};
use crate::support::Project;
use crate::support::ray_cluster::Cluster;

pub fn wait_and_events_follow_a_ray_run(cluster: &Cluster) {
    let p = Project::new();
    let child = spawn_run(&p, cluster, "Reply with exactly: WAITED @sleep=2000");
    let (run, job) = running_job(&p, cluster);
    // Started while the job runs: it sees the copied lines arrive.
    let (waited, code) = json_of(p.output(&["wait", "--json", "--timeout", "5m", &run]));
    assert_eq!(code, 0, "{waited:#}");
    assert_eq!(waited["held"], true, "{waited:#}");
    assert_eq!(waited["verdict"], "completed", "{waited:#}");
    assert_eq!(waited["state"], "done", "{waited:#}");
    let (doc, code) = json_of(child.wait_with_output().expect("drover ends"));
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("completed"), 0),
        "{doc:#}"
    );
    assert_events_came_home(&p, &run, &job);
    // `drover events` prints each journal line once, the copied ones too.
    let out = p.output(&["events", "--json", "--run", &run]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = |l: &Value| {
        format!(
            "{}:{}:{}",
            l["kind"].as_str().unwrap_or_default(),
            l["state"].as_str().unwrap_or_default(),
            l["origin"]["seq"]
        )
    };
    let printed: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| key(&serde_json::from_str(l).expect("one JSON document a line")))
        .collect();
    let journal: Vec<String> = p.journal(&run).iter().map(key).collect();
    assert_eq!(printed, journal);
    assert_eq!(
        printed,
        ["state:working:null", "state:done:1", "verdict:completed:2"],
        "{printed:#?}"
    );
}

pub fn a_killed_driver_is_settled_from_ray(cluster: &Cluster) {
    let p = Project::new();
    let mut child = spawn_run(
        &p,
        cluster,
        "Reply with exactly: SETTLED FROM RAY @sleep=4000",
    );
    let (run, job) = running_job(&p, cluster);
    child.kill().expect("kill drover");
    let _ = child.wait();
    assert!(
        p.journal(&run).iter().all(|l| l["kind"] != "verdict"),
        "no verdict yet"
    );
    wait_for("the node to finish the turn", || node_verdict(&p, &job));
    // The node's result follows its journal's verdict: `status` settles the
    // task once it is there, and leaves it open until then.
    let mut status = Value::Null;
    wait_for("drover status to settle the run", || {
        let (now, code) = json_of(p.output(&["status", "--json", &run]));
        assert_eq!(code, 0, "{now:#}");
        status = now;
        !status["runs"][0]["tasks"][0]["verdict"].is_null()
    });
    let task = &status["runs"][0]["tasks"][0];
    assert_eq!(task["verdict"], "completed", "{status:#}");
    assert_eq!(task["reconciled"], true);
    assert_eq!(task["state"], "done");
    let session: Value = serde_json::from_str(
        &std::fs::read_to_string(p.run_dir(&run).join("tasks/scripted/session.json"))
            .expect("session.json"),
    )
    .expect("json");
    assert_eq!(session["reply"], "SETTLED FROM RAY");
    assert_eq!(session["usage"]["output"], 57);
    assert_events_came_home(&p, &run, &job);
    // Settling again changes nothing.
    let (again, _) = json_of(p.output(&["status", "--json", &run]));
    assert_eq!(again["runs"][0]["tasks"][0]["reconciled"], false);
    assert_events_came_home(&p, &run, &job);
}

pub fn stopping_a_run_stops_its_job(cluster: &Cluster) {
    // A job of its own is stopped; a warm turn is stopped through its
    // lease, and its worker stays for the next turn.
    for warm in [false, true] {
        stopping_a_run_stops_its_turn(cluster, warm);
    }
}

fn stopping_a_run_stops_its_turn(cluster: &Cluster, warm: bool) {
    let p = Project::new();
    if !warm {
        job_per_turn(&p, cluster);
    }
    let child = spawn_run(&p, cluster, "Reply with exactly: NEVER @hang");
    let (run, job) = running_job(&p, cluster);
    // The node's CLI process, as its drover recorded it.
    let process = p
        .path()
        .join(".drover/ray/.drover/runs")
        .join(&job)
        .join("tasks/scripted/process.json");
    wait_for("the CLI to start on the node", || process.is_file());
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(&process).expect("process.json"))
            .expect("json");
    let identity: drover::workspace::process::Identity =
        serde_json::from_value(recorded["identity"].clone()).expect("identity");
    assert!(drover::workspace::process::alive(identity));
    // SAFETY: SIGTERM to the drover this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let (doc, code) = json_of(child.wait_with_output().expect("drover ends"));
    assert_eq!(code, 130, "{doc:#}");
    assert_eq!(doc["status"], "crashed");
    assert!(
        doc["reason"]
            .as_str()
            .is_some_and(|r| r.contains("interrupted")),
        "{doc:#}"
    );
    let record = job_record(&p, &run, "scripted");
    let info = cluster
        .jobs()
        .info(record["submission_id"].as_str().expect("job"))
        .expect("job info")
        .expect("known job");
    assert_eq!(info.status.terminal(), !warm, "{info:?}");
    wait_for("the node to end the turn", || node_verdict(&p, &job));
    assert!(
        !drover::workspace::process::alive(identity),
        "the CLI outlived its turn"
    );
    assert_eq!(
        p.journal(&run)
            .iter()
            .filter(|l| l["kind"] == "verdict")
            .count(),
        1
    );
}

pub fn a_failed_job_is_crashed_with_rays_reason(cluster: &Cluster) {
    let p = Project::new();
    std::fs::create_dir_all(p.path().join(".drover")).expect("dir");
    std::fs::write(
        p.path().join(".drover/config.toml"),
        "[ray]\ndrover = \"/nonexistent/drover\"\n",
    )
    .expect("config");
    // A project's [ray] settings count once the project is trusted.
    let trusted = drover(&p, cluster).arg("trust").output().expect("trust");
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    let (doc, code) = ray_run(&p, cluster, &[], "Reply with exactly: X");
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("crashed"), 1),
        "{doc:#}"
    );
    let reason = doc["reason"].as_str().unwrap_or_default();
    assert!(reason.starts_with("the Ray job failed: "), "{reason}");
    assert!(reason.contains("/nonexistent/drover"), "{reason}");
    let run = doc["run_id"].as_str().expect("run id");
    assert_eq!(p.states(run), ["working", "unknown"]);
}

pub fn a_killed_driver_stops_its_worker_through_the_lease(cluster: &Cluster) {
    let p = Project::new();
    let mut child = spawn_run(&p, cluster, "Reply with exactly: NEVER @hang");
    let (run, turn) = running_job(&p, cluster);
    let worker = job_record(&p, &run, "scripted")["submission_id"]
        .as_str()
        .expect("the worker's job")
        .to_string();
    // SIGKILL: nothing renews the turn's lease any more.
    child.kill().expect("kill drover");
    let _ = child.wait();
    // The bound only catches a hang: the lease lapses after 20 s.
    wait_for("the worker's job to end", || {
        cluster
            .jobs()
            .info(&worker)
            .ok()
            .flatten()
            .is_some_and(|i| i.status.terminal())
    });
    assert!(node_verdict(&p, &turn), "the node ended the turn");
    let (status, code) = json_of(p.output(&["status", "--json", &run]));
    assert_eq!(code, 0, "{status:#}");
    let task = &status["runs"][0]["tasks"][0];
    assert_eq!(task["verdict"], "crashed", "{status:#}");
    assert_eq!(task["reconciled"], true);
    let log = std::fs::read_to_string(cluster_log(cluster, &worker)).unwrap_or_default();
    assert!(log.contains("lapsed"), "{log}");
}

/// The worker job's own log, as Ray keeps it.
fn cluster_log(cluster: &Cluster, job: &str) -> std::path::PathBuf {
    let path = cluster.dir.path().join(format!("{job}.log"));
    let text = cluster.jobs().logs(job).unwrap_or_default();
    std::fs::write(&path, text).expect("log copy");
    path
}

/// Stops node c: run last, the cluster has two nodes afterwards.
pub fn an_unreachable_nodes_log_is_a_network_fault(cluster: &Cluster) {
    let p = Project::new();
    job_per_turn(&p, cluster);
    let mut child = drover(&p, cluster)
        .args(crate::RAY_RUN)
        .args(["--timeout", "5m", "--place", "host_c"])
        .arg("Reply with exactly: OUT OF REACH @sleep=2000")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("drover starts");
    let (run, job) = running_job(&p, cluster);
    child.kill().expect("kill drover");
    let _ = child.wait();
    wait_for("the job to end", || {
        cluster
            .jobs()
            .info(&job)
            .ok()
            .flatten()
            .is_some_and(|i| i.status.terminal())
    });
    cluster.stop_node("host_c");
    let (status, code) = json_of(p.output(&["status", "--json", &run]));
    assert_eq!(code, 0, "{status:#}");
    let task = &status["runs"][0]["tasks"][0];
    assert_eq!(task["verdict"], "crashed", "{status:#}");
    let session: Value = serde_json::from_str(
        &std::fs::read_to_string(p.run_dir(&run).join("tasks/scripted/session.json"))
            .expect("session.json"),
    )
    .expect("json");
    assert_eq!(session["fault"]["kind"], "network", "{session:#}");
    assert_eq!(
        session["fault"]["rule"], "ray:log-unreachable",
        "{session:#}"
    );
    let reason = session["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("its log could not be read from its node: "),
        "{reason}"
    );
}
