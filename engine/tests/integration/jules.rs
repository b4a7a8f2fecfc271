//! The jules workspace end to end, against `fake-jules` (tests/fake-jules):
//! a fake Jules REST API built from the published reference, whose
//! sessions move one step each time they are read, so no test depends on
//! how long anything takes. The user's config points drover at it and
//! polls every 20 ms.

use crate::support::{self, HANG, Project, wait_for};

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

pub struct FakeJules {
    pub port: u16,
    pub log: PathBuf,
    child: Child,
}

impl FakeJules {
    pub fn start(dir: &Path, name: &str, args: &[&str]) -> FakeJules {
        let exe = support::bin_dir().join("fake-jules");
        assert!(
            exe.is_file(),
            "{} is missing: run `cargo build --workspace` before the tests",
            exe.display()
        );
        let port_file = dir.join(format!("{name}.port"));
        let log = dir.join(format!("{name}-requests.jsonl"));
        let child = Command::new(exe)
            .arg("--port-file")
            .arg(&port_file)
            .arg("--log")
            .arg(&log)
            .args(args)
            .stdin(Stdio::null())
            .spawn()
            .expect("fake-jules starts");
        let port = wait_for(HANG, || {
            std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|t| t.trim().parse::<u16>().ok())
        })
        .expect("fake-jules listens");
        FakeJules { port, log, child }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/v1alpha", self.port)
    }

    /// Every request drover sent, in order.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// `METHOD path` of every request.
    pub fn calls(&self) -> Vec<String> {
        self.requests()
            .iter()
            .map(|r| {
                format!(
                    "{} {}",
                    r["method"].as_str().unwrap_or_default(),
                    r["path"].as_str().unwrap_or_default()
                )
            })
            .collect()
    }
}

impl Drop for FakeJules {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A checkout of github.com/acme/widgets on branch `feature/readme`, its
/// git files written as git writes them.
pub fn checkout(p: &Project) {
    let git = p.path().join(".git");
    std::fs::create_dir_all(&git).expect(".git");
    std::fs::write(git.join("HEAD"), "ref: refs/heads/feature/readme\n").expect("HEAD");
    std::fs::write(
        git.join("config"),
        "[core]\n\trepositoryformatversion = 0\n[remote \"origin\"]\n\turl = git@github.com:acme/widgets.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n",
    )
    .expect("config");
}

/// The user's own config.toml: the Jules API at `url` with `key`.
pub fn user_config(p: &Project, url: &str, key: &str) {
    let dir = p.home.join(".config").join("drover");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(
        dir.join("config.toml"),
        format!("[jules]\nurl = \"{url}\"\napi_key = \"{key}\"\npoll_s = 0.02\n"),
    )
    .expect("user config");
}

/// A project on a fake Jules started with `args`, its key `test-key`.
fn project(args: &[&str]) -> (Project, FakeJules) {
    let p = Project::new();
    let mut all = vec!["--key", "test-key"];
    all.extend_from_slice(args);
    let fake = FakeJules::start(p.path(), "jules", &all);
    checkout(&p);
    user_config(&p, &fake.url(), "test-key");
    (p, fake)
}

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(out: &Output, what: &str) -> Value {
    let text = ok(out, what);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what} printed no JSON ({e}): {text}"))
}

fn up(p: &Project) -> Value {
    json(
        &p.output(&[
            "up",
            "j",
            "--cli",
            "jules",
            "--workspace",
            "jules",
            "--json",
        ]),
        "up",
    )
}

fn seat(p: &Project) -> Value {
    let seats = json(&p.output(&["seats", "--json"]), "seats");
    seats["seats"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["nick"] == "j"))
        .cloned()
        .unwrap_or_else(|| panic!("no seat j in {seats}"))
}

fn wait_until(p: &Project, state: &str) {
    ok(
        &p.output(&["wait", "j", "--until", state, "--timeout", "300s"]),
        &format!("wait --until {state}"),
    );
}

/// The seat's latest turn's result.
fn session_json(p: &Project, run: &str) -> Value {
    let path = p.run_dir(run).join("tasks").join("j").join("session.json");
    serde_json::from_str(&std::fs::read_to_string(&path).expect("session.json"))
        .expect("session.json parses")
}

/// `send --no-wait`, then the plan question.
fn send_until_asked(p: &Project, prompt: &str) -> Value {
    ok(
        &p.output(&["send", "--no-wait", "j", prompt]),
        "send --no-wait",
    );
    wait_until(p, "blocked");
    let seat = seat(p);
    assert_eq!(seat["state"], "blocked", "{seat}");
    seat["question"].clone()
}

/// Waits until the seat's record names its Jules session (the background
/// send saves it once its turn is over).
fn wait_conversation(p: &Project) -> String {
    wait_for(HANG, || {
        seat(p)["conversation"].as_str().map(str::to_string)
    })
    .expect("the seat records its session")
}

#[test]
fn up_send_plan_question_answer_done_then_a_second_message() {
    let (p, fake) = project(&[]);
    let upped = up(&p);
    assert_eq!(
        upped["seat"]["jules"]["source"],
        "sources/github/acme/widgets"
    );
    assert_eq!(upped["seat"]["jules"]["branch"], "feature/readme");
    assert_eq!(upped["state"], "idle");
    let run = upped["seat"]["run_id"]
        .as_str()
        .expect("run id")
        .to_string();
    // `up` found the repository among the sources (on the second page) and
    // created nothing: the first message is the session's prompt.
    assert!(
        fake.calls().iter().all(|c| c == "GET /v1alpha/sources"),
        "{:?}",
        fake.calls()
    );

    let question = send_until_asked(&p, "Add a README");
    assert_eq!(question["tool"], "jules/plan", "{question}");
    assert!(
        question["input"]
            .as_str()
            .unwrap_or_default()
            .contains("Make the change"),
        "{question}"
    );
    let options: Vec<&str> = question["options"]
        .as_array()
        .expect("options")
        .iter()
        .filter_map(|o| o["id"].as_str())
        .collect();
    assert_eq!(options, ["approve", "reject"]);

    let answered = json(&p.output(&["answer", "j", "approve", "--json"]), "answer");
    assert_eq!(answered["delivered"], true, "{answered}");
    wait_until(&p, "done");
    let session = wait_conversation(&p);

    let result = session_json(&p, &run);
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(result["workspace"], "jules");
    assert_eq!(result["session_id"], session.as_str());
    let pr = format!(
        "https://github.com/acme/widgets/pull/{}",
        session.trim_start_matches("sessions/")
    );
    assert_eq!(result["reply"], pr.as_str(), "{result}");
    assert!(
        result["result"]["patch"]["unidiffPatch"]
            .as_str()
            .unwrap_or_default()
            .contains("+new"),
        "{result}"
    );

    let requests = fake.requests();
    let created: Vec<&Value> = requests
        .iter()
        .filter(|r| r["method"] == "POST" && r["path"] == "/v1alpha/sessions")
        .collect();
    assert_eq!(created.len(), 1, "{requests:?}");
    assert_eq!(created[0]["body"]["prompt"], "Add a README");
    assert_eq!(created[0]["body"]["requirePlanApproval"], true);
    assert_eq!(created[0]["body"]["automationMode"], "AUTO_CREATE_PR");
    assert_eq!(
        created[0]["body"]["sourceContext"]["source"],
        "sources/github/acme/widgets"
    );
    assert_eq!(
        created[0]["body"]["sourceContext"]["githubRepoContext"]["startingBranch"],
        "feature/readme"
    );
    assert!(requests.iter().all(|r| r["key"] == "test-key"));
    let approve = format!("/v1alpha/{session}:approvePlan");
    assert_eq!(
        fake.calls()
            .iter()
            .filter(|c| **c == format!("POST {approve}"))
            .count(),
        1
    );

    // The journal: working, blocked on the plan, the person's answer, done.
    let journal = p.journal(&run);
    let answer = journal
        .iter()
        .find(|l| l["kind"] == "answer")
        .expect("an answer line");
    assert_eq!(answer["state"], "approve");
    assert_eq!(answer["detail"]["answered"]["by"], "person");
    let states = p.states(&run);
    let blocked = states.iter().position(|s| s == "blocked:permission");
    let done = states.iter().rposition(|s| s == "done");
    assert!(
        matches!((blocked, done), (Some(b), Some(d)) if b < d),
        "{states:?}"
    );
    assert!(
        journal
            .iter()
            .any(|l| l["kind"] == "event" && l["state"] == "progressUpdated"),
        "the activities are journaled"
    );

    // A second message goes to the same session: no new one, no new plan.
    let second = json(
        &p.output(&["send", "j", "Also add a changelog", "--json"]),
        "second send",
    );
    assert_eq!(second["status"], "completed", "{second}");
    assert_eq!(second["session_id"], session.as_str());
    let message = format!("POST /v1alpha/{session}:sendMessage");
    let requests = fake.requests();
    assert!(
        requests.iter().any(|r| format!(
            "{} {}",
            r["method"].as_str().unwrap_or_default(),
            r["path"].as_str().unwrap_or_default()
        ) == message
            && r["body"]["prompt"] == "Also add a changelog"),
        "{:?}",
        fake.calls()
    );
    assert_eq!(
        fake.calls()
            .iter()
            .filter(|c| *c == "POST /v1alpha/sessions")
            .count(),
        1
    );
}

#[test]
fn a_rejected_plan_is_sent_back_and_the_revised_plan_asked_again() {
    let (p, fake) = project(&[]);
    let run = up(&p)["seat"]["run_id"].as_str().expect("run").to_string();
    let first = send_until_asked(&p, "Refactor the parser");
    assert!(
        first["input"]
            .as_str()
            .unwrap_or_default()
            .contains("(plan 1)"),
        "{first}"
    );
    // The background send follows the session: a second follower is refused.
    let meanwhile = p.output(&["send", "j", "meanwhile"]);
    assert!(!meanwhile.status.success());
    let stderr = String::from_utf8_lossy(&meanwhile.stderr);
    assert!(stderr.contains("still being followed"), "{stderr}");
    json(
        &p.output(&["answer", "j", "reject", "--json"]),
        "answer reject",
    );
    let second = wait_for(HANG, || {
        let q = seat(&p)["question"].clone();
        (q.is_object() && q["id"] != first["id"]).then_some(q)
    })
    .expect("a revised plan is asked");
    assert!(
        second["input"]
            .as_str()
            .unwrap_or_default()
            .contains("(plan 2)"),
        "{second}"
    );
    let requests = fake.requests();
    let rejection = requests
        .iter()
        .find(|r| {
            r["path"]
                .as_str()
                .is_some_and(|p| p.ends_with(":sendMessage"))
        })
        .expect("the rejection is a message");
    assert!(
        rejection["body"]["prompt"]
            .as_str()
            .unwrap_or_default()
            .contains("do not approve this plan"),
        "{rejection}"
    );
    assert!(
        !fake.calls().iter().any(|c| c.ends_with(":approvePlan")),
        "a rejected plan is never approved"
    );
    let rejected = p
        .journal(&run)
        .into_iter()
        .find(|l| l["kind"] == "answer")
        .expect("answer line");
    assert_eq!(rejected["state"], "reject");

    json(
        &p.output(&["answer", "j", "approve", "--json"]),
        "answer approve",
    );
    wait_until(&p, "done");
    wait_conversation(&p);
    assert_eq!(session_json(&p, &run)["status"], "completed");
}

#[test]
fn a_failed_session_ends_the_turn_with_its_reason_as_the_fault() {
    let (p, _fake) = project(&["--fail", "The VM ran out of disk space"]);
    let run = up(&p)["seat"]["run_id"].as_str().expect("run").to_string();
    send_until_asked(&p, "Upgrade the dependencies");
    json(&p.output(&["answer", "j", "approve", "--json"]), "answer");
    wait_until(&p, "settled");
    let result = wait_for(HANG, || {
        let r = session_json(&p, &run);
        (r["status"] != Value::Null).then_some(r)
    })
    .expect("result");
    assert_eq!(result["status"], "stalled", "{result}");
    assert_eq!(result["fault"]["rule"], "jules/session-failed", "{result}");
    assert_eq!(result["fault"]["evidence"], "The VM ran out of disk space");
    assert!(
        result["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("failed")
    );
}

#[test]
fn a_refused_key_is_an_auth_fault_and_up_says_so() {
    let (p, fake) = project(&[]);
    up(&p);
    // The environment's key beats the user's file, and Jules refuses it.
    let out = p
        .drover()
        .env("JULES_API_KEY", "revoked-key")
        .args(["send", "j", "Add a README", "--json"])
        .output()
        .expect("send");
    assert_eq!(out.status.code(), Some(1));
    let result: Value = serde_json::from_slice(&out.stdout).expect("send JSON");
    assert_eq!(result["status"], "crashed", "{result}");
    assert_eq!(result["fault"]["kind"], "auth", "{result}");
    assert_eq!(result["fault"]["rule"], "jules/http-401/UNAUTHENTICATED");
    assert!(fake.requests().iter().any(|r| r["key"] == "revoked-key"));

    // `up` with a refused key stops before recording a seat.
    let other = Project::new();
    checkout(&other);
    user_config(&other, &fake.url(), "wrong-key");
    let out = other.output(&["up", "k", "--cli", "jules", "--workspace", "jules"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("UNAUTHENTICATED"), "{stderr}");
    assert!(!other.path().join(".drover/seats/k.json").exists());
}

#[test]
fn throttling_is_retried_after_the_wait_jules_asks_for() {
    let (p, fake) = project(&["--throttle", "2"]);
    let run = up(&p)["seat"]["run_id"].as_str().expect("run").to_string();
    send_until_asked(&p, "Add a README");
    json(&p.output(&["answer", "j", "approve", "--json"]), "answer");
    wait_until(&p, "done");
    wait_conversation(&p);
    assert_eq!(session_json(&p, &run)["status"], "completed");
    let lifecycle = std::fs::read_to_string(p.run_dir(&run).join("tasks/j/lifecycle.jsonl"))
        .expect("lifecycle");
    let retries: Vec<Value> = lifecycle
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["event"] == "jules-retry")
        .collect();
    assert_eq!(retries.len(), 2, "{lifecycle}");
    for retry in &retries {
        assert_eq!(retry["retry_after_s"], 1.0, "{retry}");
        assert!(
            retry["wait_s"].as_f64().unwrap_or_default() >= 1.0,
            "{retry}"
        );
    }
    let reads = fake
        .calls()
        .iter()
        .filter(|c| c.starts_with("GET /v1alpha/sessions/") && !c.ends_with("/activities"))
        .count();
    assert!(reads >= 3, "{:?}", fake.calls());
}

#[test]
fn a_checkout_without_a_github_remote_is_told_so() {
    let p = Project::new();
    let fake = FakeJules::start(p.path(), "jules", &[]);
    user_config(&p, &fake.url(), "k");
    let out = p.output(&["up", "j", "--cli", "jules", "--workspace", "jules"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a git checkout"), "{stderr}");

    checkout(&p);
    std::fs::write(
        p.path().join(".git/config"),
        "[remote \"origin\"]\n\turl = https://gitlab.com/acme/widgets.git\n",
    )
    .expect("config");
    let out = p.output(&["up", "j", "--cli", "jules", "--workspace", "jules"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("not a GitHub repository"), "{stderr}");

    std::fs::write(p.path().join(".git/config"), "[core]\n\tbare = false\n").expect("config");
    let out = p.output(&["up", "j", "--cli", "jules", "--workspace", "jules"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no git remote `origin`"), "{stderr}");

    // A GitHub repository the user never connected to Jules.
    std::fs::write(
        p.path().join(".git/config"),
        "[remote \"origin\"]\n\turl = https://github.com/acme/secret.git\n",
    )
    .expect("config");
    let out = p.output(&["up", "j", "--cli", "jules", "--workspace", "jules"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no source for github.com/acme/secret"),
        "{stderr}"
    );
    assert!(!fake.calls().iter().any(|c| c.starts_with("POST")));
}

#[test]
fn mux_and_doctor_say_whether_a_key_is_configured_and_jules_answers() {
    let row = |p: &Project, command: &str| -> Value {
        let doc = json(&p.output(&[command, "--json"]), command);
        doc["backends"]
            .as_array()
            .and_then(|b| b.iter().find(|b| b["name"] == "jules"))
            .cloned()
            .unwrap_or_else(|| panic!("no jules row in {doc}"))
    };
    let bare = Project::new();
    let r = row(&bare, "mux");
    assert_eq!(r["available"], false);
    assert!(
        r["note"]
            .as_str()
            .unwrap_or_default()
            .contains("no Jules API key configured"),
        "{r}"
    );

    let (p, fake) = project(&[]);
    for command in ["mux", "doctor"] {
        let r = row(&p, command);
        assert_eq!(r["available"], true, "{command}: {r}");
        assert!(
            r["note"]
                .as_str()
                .unwrap_or_default()
                .contains("key from user"),
            "{r}"
        );
    }
    user_config(&p, &fake.url(), "wrong");
    let r = row(&p, "mux");
    assert_eq!(r["available"], false);
    assert!(
        r["note"]
            .as_str()
            .unwrap_or_default()
            .contains("does not answer"),
        "{r}"
    );
}

#[test]
fn without_auto_pr_the_turns_result_is_the_patch() {
    let (p, fake) = project(&[]);
    let config = p.home.join(".config/drover/config.toml");
    let mut text = std::fs::read_to_string(&config).expect("user config");
    text.push_str("auto_pr = false\n");
    std::fs::write(&config, text).expect("user config");
    let run = up(&p)["seat"]["run_id"].as_str().expect("run").to_string();
    send_until_asked(&p, "Fix the typo");
    json(
        &p.output(&["answer", "j", "1", "--json"]),
        "answer by position",
    );
    wait_until(&p, "done");
    wait_conversation(&p);
    let result = session_json(&p, &run);
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(result["result"]["pull_requests"], serde_json::json!([]));
    assert_eq!(
        result["result"]["patch"]["baseCommitId"], "0123abc",
        "{result}"
    );
    assert!(
        result["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("patch"),
        "{result}"
    );
    let created = fake
        .requests()
        .into_iter()
        .find(|r| r["method"] == "POST" && r["path"] == "/v1alpha/sessions")
        .expect("created");
    assert_eq!(created["body"]["automationMode"], Value::Null);
}

#[test]
fn a_trusted_policy_approves_the_plan_and_a_run_finishes_unattended() {
    let (p, fake) = project(&[]);
    std::fs::create_dir_all(p.path().join(".drover")).expect(".drover");
    std::fs::write(
        p.path().join(".drover/config.toml"),
        "[[policy.rule]]\ntool = \"jules/plan\"\ndecision = \"allow\"\n",
    )
    .expect("policy");
    ok(&p.output(&["trust"]), "trust");
    let (result, code) = p.run(&["--cli", "jules", "--workspace", "jules", "Add a README"]);
    assert_eq!(code, 0, "{result}");
    assert_eq!(result["status"], "completed", "{result}");
    let run = result["run_id"].as_str().expect("run id");
    let answer = p
        .journal(run)
        .into_iter()
        .find(|l| l["kind"] == "answer")
        .expect("the policy's answer is journaled");
    assert_eq!(answer["state"], "approve");
    assert_eq!(answer["detail"]["answered"]["by"], "policy", "{answer}");
    assert!(fake.calls().iter().any(|c| c.ends_with(":approvePlan")));
}

/// `send` on a fake whose session reads all answer `code`: the turn's
/// result and the retries it journaled.
fn send_against_errors(code: &str) -> (Value, Vec<Value>) {
    let (p, _fake) = project(&["--error", code]);
    let run = up(&p)["seat"]["run_id"].as_str().expect("run").to_string();
    let out = p.output(&["send", "j", "Add a README", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let result: Value = serde_json::from_slice(&out.stdout).expect("send JSON");
    let lifecycle = std::fs::read_to_string(p.run_dir(&run).join("tasks/j/lifecycle.jsonl"))
        .unwrap_or_default();
    let retries = lifecycle
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["event"] == "jules-retry")
        .collect();
    (result, retries)
}

#[test]
fn server_errors_are_retried_with_a_doubling_backoff_then_a_typed_fault() {
    let (result, retries) = send_against_errors("500");
    assert_eq!(result["status"], "crashed", "{result}");
    assert_eq!(result["fault"]["kind"], "server-error", "{result}");
    assert_eq!(result["fault"]["rule"], "jules/http-500/INTERNAL");
    assert_eq!(retries.len(), 6, "{retries:?}");
    let waits: Vec<f64> = retries
        .iter()
        .filter_map(|r| r["wait_s"].as_f64())
        .collect();
    assert!(waits.windows(2).all(|w| w[1] == w[0] * 2.0), "{waits:?}");
}

#[test]
fn exhausted_quota_and_a_denied_key_are_typed_faults() {
    let (result, retries) = send_against_errors("429");
    assert_eq!(result["fault"]["kind"], "quota", "{result}");
    assert_eq!(result["fault"]["rule"], "jules/http-429/RESOURCE_EXHAUSTED");
    assert_eq!(retries.len(), 6, "a 429 is retried before it ends the turn");
    let (result, retries) = send_against_errors("403");
    assert_eq!(result["fault"]["kind"], "auth", "{result}");
    assert!(retries.is_empty(), "a refused key is not retried");
    let (result, _) = send_against_errors("503");
    assert_eq!(result["fault"]["kind"], "overload", "{result}");
}

#[test]
fn jules_asking_for_feedback_ends_the_turn_and_the_next_message_answers_it() {
    let (p, fake) = project(&["--feedback", "Which license should the README name?"]);
    let run = up(&p)["seat"]["run_id"].as_str().expect("run").to_string();
    send_until_asked(&p, "Add a README");
    json(&p.output(&["answer", "j", "approve", "--json"]), "answer");
    wait_until(&p, "settled");
    let session = wait_conversation(&p);
    let seat = seat(&p);
    assert_eq!(seat["state"], "blocked", "{seat}");
    assert_eq!(seat["prompt_kind"], "question", "{seat}");
    assert!(
        seat["evidence"]
            .as_str()
            .unwrap_or_default()
            .contains("Which license"),
        "{seat}"
    );
    let asked = session_json(&p, &run);
    assert_eq!(asked["status"], "stalled", "{asked}");
    assert_eq!(asked["reply"], "Which license should the README name?");

    let answered = json(
        &p.output(&["send", "j", "MIT", "--json"]),
        "send the answer",
    );
    assert_eq!(answered["status"], "completed", "{answered}");
    let message = fake
        .requests()
        .into_iter()
        .find(|r| r["path"] == format!("/v1alpha/{session}:sendMessage").as_str())
        .expect("the answer is a message");
    assert_eq!(message["body"]["prompt"], "MIT");
}

#[test]
fn down_stops_the_drover_following_the_session() {
    let (p, _fake) = project(&[]);
    let run = up(&p)["seat"]["run_id"].as_str().expect("run").to_string();
    send_until_asked(&p, "Add a README");
    ok(&p.output(&["down", "j"]), "down");
    // The follower waited on the plan; stopped, it gave its verdict.
    let verdict = p
        .journal(&run)
        .into_iter()
        .find(|l| l["kind"] == "verdict" && l["task"] == "j")
        .expect("the stopped follower's verdict");
    assert_eq!(verdict["state"], "crashed", "{verdict}");
    let seats = json(&p.output(&["seats", "--json"]), "seats");
    assert_eq!(
        seats["seats"],
        serde_json::json!([]),
        "down removed the seat"
    );
}
