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

#[path = "integration/support/mod.rs"]
mod support;

use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use drover::ray::jobs::JobStatus;
use serde_json::Value;
use support::Project;
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

fn drover(p: &Project, cluster: &Cluster) -> Command {
    let mut cmd = p.drover();
    cmd.env("RAY_ADDRESS", &cluster.address);
    cmd
}

fn ray_run(p: &Project, cluster: &Cluster, extra: &[&str], prompt: &str) -> (Value, i32) {
    let mut cmd = drover(p, cluster);
    cmd.args(RAY_RUN)
        .args(["--timeout", "5m"])
        .args(extra)
        .arg(prompt);
    json_of(cmd.output().expect("drover runs"))
}

fn json_of(out: std::process::Output) -> (Value, i32) {
    let text = String::from_utf8_lossy(&out.stdout);
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "no JSON document ({e}):\nstdout: {text}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (doc, out.status.code().unwrap_or(-1))
}

fn job_record(p: &Project, run: &str, task: &str) -> Value {
    let path = p.run_dir(run).join("tasks").join(task).join("ray.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The journal the node's drover kept for a job (same machine, so readable).
fn node_journal(p: &Project, job: &str) -> Vec<Value> {
    let path = p
        .path()
        .join(".drover/ray/.drover/runs")
        .join(job)
        .join("events.jsonl");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).expect("journal line"))
        .collect()
}

fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let until = Instant::now() + WAIT;
    while !ready() {
        assert!(Instant::now() < until, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every state change the node journaled arrived here, once, in order,
/// and the task has exactly one verdict.
fn assert_events_came_home(p: &Project, run: &str, job: &str) {
    let local = p.journal(run);
    let verdicts = local.iter().filter(|l| l["kind"] == "verdict").count();
    assert_eq!(verdicts, 1, "{local:#?}");
    let copied: Vec<(u64, String)> = local
        .iter()
        .filter(|l| l["origin"]["job"] == job)
        .map(|l| {
            (
                l["origin"]["seq"].as_u64().expect("seq"),
                format!(
                    "{}:{}",
                    l["kind"].as_str().unwrap_or_default(),
                    l["state"].as_str().unwrap_or_default()
                ),
            )
        })
        .collect();
    let node = node_journal(p, job);
    // The node's first line (working) repeats the state the submission set.
    let expected: Vec<(u64, String)> = node
        .iter()
        .enumerate()
        .skip(1)
        .map(|(seq, l)| {
            (
                seq as u64,
                format!(
                    "{}:{}",
                    l["kind"].as_str().unwrap_or_default(),
                    l["state"].as_str().unwrap_or_default()
                ),
            )
        })
        .collect();
    assert_eq!(copied, expected, "local {local:#?}\nnode {node:#?}");
    assert_eq!(node[0]["state"], "working");
}

fn completes_with_reply_usage_and_events(cluster: &Cluster) {
    let p = Project::new();
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
    assert_events_came_home(&p, run, job);
    assert_eq!(record["status"], "SUCCEEDED");
    // The local copy of the job's log holds the result line.
    let log = std::fs::read_to_string(doc["logs"][0].as_str().expect("log")).expect("log copy");
    assert!(log.contains("drover-ray/1 result "), "{log}");
    // Ray agrees: the job succeeded and asked for a CPU.
    let info = cluster
        .jobs()
        .info(job)
        .expect("job info")
        .expect("known job");
    assert_eq!(info.status, JobStatus::Succeeded);
    // `drover status` reads the same.
    let (status, code) = json_of(p.output(&["status", "--json", run]));
    assert_eq!(code, 0, "{status:#}");
    assert_eq!(status["runs"][0]["tasks"][0]["verdict"], "completed");
    assert_eq!(status["runs"][0]["workspace"], "ray");
}

fn pinned_runs_land_on_their_node(cluster: &Cluster) {
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

fn ten_parallel_runs_lose_no_events(cluster: &Cluster) {
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
        assert_events_came_home(&p, run, record["submission_id"].as_str().expect("id"));
        assert_eq!(p.states(run), ["working", "done"]);
    }
}

fn spawn_run(p: &Project, cluster: &Cluster, prompt: &str) -> Child {
    drover(p, cluster)
        .args(RAY_RUN)
        .args(["--timeout", "5m", prompt])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("drover starts")
}

/// The only run of a project, once its driver wrote `ray.json`, and its job
/// once Ray runs it.
fn running_job(p: &Project, cluster: &Cluster) -> (String, String) {
    let runs = p.path().join(".drover/runs");
    let mut found = None;
    wait_for("the run's job record", || {
        found = std::fs::read_dir(&runs)
            .ok()
            .and_then(|mut d| d.next())
            .and_then(|e| e.ok())
            .and_then(|e| {
                let run = e.file_name().to_string_lossy().into_owned();
                let path = e.path().join("tasks/scripted/ray.json");
                let text = std::fs::read_to_string(path).ok()?;
                let record: Value = serde_json::from_str(&text).ok()?;
                Some((run, record["submission_id"].as_str()?.to_string()))
            });
        found.is_some()
    });
    let (run, job) = found.expect("found");
    // The node's turn has started once its journal has a line.
    let journal = p
        .path()
        .join(".drover/ray/.drover/runs")
        .join(&job)
        .join("events.jsonl");
    wait_for("the node's first journal line", || {
        std::fs::read_to_string(&journal).is_ok_and(|t| t.ends_with('\n'))
            || cluster
                .jobs()
                .info(&job)
                .ok()
                .flatten()
                .is_some_and(|i| i.status.terminal())
    });
    (run, job)
}

fn wait_and_events_follow_a_ray_run(cluster: &Cluster) {
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

fn a_killed_driver_is_settled_from_ray(cluster: &Cluster) {
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
    wait_for("the job to end", || {
        cluster
            .jobs()
            .info(&job)
            .ok()
            .flatten()
            .is_some_and(|i| i.status.terminal())
    });
    let (status, code) = json_of(p.output(&["status", "--json", &run]));
    assert_eq!(code, 0, "{status:#}");
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

fn stopping_a_run_stops_its_job(cluster: &Cluster) {
    let p = Project::new();
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
    let info = cluster
        .jobs()
        .info(&job)
        .expect("job info")
        .expect("known job");
    assert!(info.status.terminal(), "{info:?}");
    assert!(
        !drover::workspace::process::alive(identity),
        "the CLI outlived its job"
    );
    assert_eq!(
        p.journal(&run)
            .iter()
            .filter(|l| l["kind"] == "verdict")
            .count(),
        1
    );
}

fn a_failed_job_is_crashed_with_rays_reason(cluster: &Cluster) {
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

fn a_seat_keeps_its_node_and_conversation(cluster: &Cluster) {
    let p = Project::new();
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
    // `drover down` stops the job of a turn still running on the node.
    let second_job = job_record(&p, run, "s1")["submission_id"].clone();
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
    let job = loop {
        let record = job_record(&p, run, "s1");
        let job = record["submission_id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let info = cluster.jobs().info(&job).ok().flatten();
        if record["submission_id"] != second_job
            && info
                .as_ref()
                .is_some_and(|i| i.status == JobStatus::Running)
        {
            break job;
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
    assert_eq!(down["down"][0]["stopped_job"], job.as_str(), "{down:#}");
    wait_for("Ray to stop the job", || {
        cluster
            .jobs()
            .info(&job)
            .ok()
            .flatten()
            .is_some_and(|i| i.status == JobStatus::Stopped)
    });
}

fn mux_and_doctor_show_the_cluster(cluster: &Cluster) {
    let p = Project::new();
    let (mux, code) = json_of(
        drover(&p, cluster)
            .args(["mux", "--json"])
            .output()
            .expect("mux"),
    );
    assert_eq!(code, 0, "{mux:#}");
    assert_eq!(mux["ray"]["reachable"], true, "{mux:#}");
    assert_eq!(mux["ray"]["address"], cluster.address.as_str());
    assert_eq!(mux["ray"]["address_source"], "RAY_ADDRESS");
    let nodes = mux["ray"]["nodes"].as_array().expect("nodes");
    for resource in ["node_head", "host_b", "host_c"] {
        assert!(
            nodes.iter().any(|n| n["resources_total"][resource] == 1.0),
            "{resource}: {nodes:#?}"
        );
    }
    let row = mux["backends"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|b| b["name"] == "ray")
        .cloned()
        .expect("ray row");
    assert_eq!(row["available"], true);
    assert!(
        row["version"]
            .as_str()
            .is_some_and(|v| v.starts_with("ray 2.")),
        "{row:#}"
    );
    let doctor = drover(&p, cluster).arg("doctor").output().expect("doctor");
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(
        text.contains(&format!("ray: {}", cluster.address)),
        "{text}"
    );
    assert!(text.contains("host_b=1"), "{text}");
}

fn a_dead_cluster_is_a_network_fault(cluster: &Cluster) {
    let p = Project::new();
    // A port nothing listens on.
    let dead = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("port");
    let address = format!("http://127.0.0.1:{dead}");
    let (doc, code) = json_of(
        drover(&p, cluster)
            .args(RAY_RUN)
            .args(["--timeout", "3s"])
            .args(["--ray-address", &address, "Reply with exactly: X"])
            .output()
            .expect("drover runs"),
    );
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("crashed"), 1),
        "{doc:#}"
    );
    assert_eq!(doc["fault"]["kind"], "network", "{doc:#}");
    assert_eq!(doc["fault"]["rule"], "ray:unreachable");
    assert!(
        doc["reason"].as_str().is_some_and(|r| r.contains(&address)),
        "{doc:#}"
    );
    let (mux, _) = json_of(
        p.drover()
            .env("RAY_ADDRESS", &address)
            .args(["mux", "--json"])
            .output()
            .expect("mux"),
    );
    assert_eq!(mux["ray"]["reachable"], false);
}
