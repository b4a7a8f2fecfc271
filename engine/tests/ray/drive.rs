//! Driving drover on the cluster, and reading back what its runs and
//! Ray's jobs left (job records, the node's journal).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::Project;
use crate::support::ray_cluster::Cluster;
use crate::{RAY_RUN, WAIT};

/// The user config's `[ray] idle` for cases that do not say: an idle worker
/// holds its CPUs until it leaves, and on this three-node cluster the next
/// case would wait for the last one's workers (30 s each by default).
const CASE_IDLE: &str = "[ray]\nidle = 2\n";

/// Sets how long the project's warm workers wait for a next turn (the
/// user's `[ray] idle`), for a case that counts on a worker staying.
pub fn worker_idle(p: &Project, seconds: u32) {
    let dir = p.home.join(".config/drover");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(
        dir.join("config.toml"),
        format!("[ray]\nidle = {seconds}\n"),
    )
    .expect("user config");
}

pub fn drover(p: &Project, cluster: &Cluster) -> Command {
    let config = p.home.join(".config/drover/config.toml");
    if !config.exists() {
        std::fs::create_dir_all(config.parent().expect("dir")).expect("config dir");
        std::fs::write(&config, CASE_IDLE).expect("user config");
    }
    let mut cmd = p.drover();
    cmd.env("RAY_ADDRESS", &cluster.address);
    cmd
}

pub fn ray_run(p: &Project, cluster: &Cluster, extra: &[&str], prompt: &str) -> (Value, i32) {
    let mut cmd = drover(p, cluster);
    cmd.args(RAY_RUN)
        .args(["--timeout", "5m"])
        .args(extra)
        .arg(prompt);
    json_of(cmd.output().expect("drover runs"))
}

pub fn json_of(out: std::process::Output) -> (Value, i32) {
    let text = String::from_utf8_lossy(&out.stdout);
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "no JSON document ({e}):\nstdout: {text}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (doc, out.status.code().unwrap_or(-1))
}

/// The turn's id: what names the node's run directory and the copied
/// journal lines' origin (a warm turn's own id, else its job's).
pub fn turn_of(record: &Value) -> String {
    record["warm"]["turn"]
        .as_str()
        .or(record["submission_id"].as_str())
        .expect("a turn id")
        .to_string()
}

/// Makes the project's turns one Ray job each (`[ray] warm = false`).
pub fn job_per_turn(p: &Project, cluster: &Cluster) {
    std::fs::create_dir_all(p.path().join(".drover")).expect("dir");
    std::fs::write(
        p.path().join(".drover/config.toml"),
        "[ray]\nwarm = false\n",
    )
    .expect("config");
    let trusted = drover(p, cluster).arg("trust").output().expect("trust");
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
}

/// Whether the node's drover journaled the turn's verdict.
pub fn node_verdict(p: &Project, turn: &str) -> bool {
    let path = p
        .path()
        .join(".drover/ray/.drover/runs")
        .join(turn)
        .join("events.jsonl");
    std::fs::read_to_string(path).is_ok_and(|t| t.contains("\"kind\":\"verdict\""))
}

pub fn job_record(p: &Project, run: &str, task: &str) -> Value {
    let path = p.run_dir(run).join("tasks").join(task).join("ray.json");
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The journal the node's drover kept for a job (same machine, so readable).
pub fn node_journal(p: &Project, job: &str) -> Vec<Value> {
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

pub fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let until = Instant::now() + WAIT;
    while !ready() {
        assert!(Instant::now() < until, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every state change the node journaled arrived here, once, in order,
/// and the task has exactly one verdict.
pub fn assert_events_came_home(p: &Project, run: &str, job: &str) {
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

pub fn spawn_run(p: &Project, cluster: &Cluster, prompt: &str) -> Child {
    drover(p, cluster)
        .args(RAY_RUN)
        .args(["--timeout", "5m", prompt])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("drover starts")
}

/// The only run of a project, once its driver wrote `ray.json`, and its
/// turn's id (see [`turn_of`]) once the node runs it.
pub fn running_job(p: &Project, cluster: &Cluster) -> (String, String) {
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
                record["submission_id"].as_str()?;
                Some((run, turn_of(&record)))
            });
        found.is_some()
    });
    let (run, turn) = found.expect("found");
    let record = job_record(p, &run, "scripted");
    let job = record["submission_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // The node's turn has started once its journal has a line.
    let journal = p
        .path()
        .join(".drover/ray/.drover/runs")
        .join(&turn)
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
    (run, turn)
}
