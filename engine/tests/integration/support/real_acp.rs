//! The `acp` workspace against the real CLIs' Agent Client Protocol modes,
//! parameterised by an [`AcpCase`]: `drover run` completes a turn and
//! resumes it with `session/load`; a seat (`drover up`) keeps its agent
//! between messages and resumes its conversation after its host died; a
//! permission request becomes a journaled question that `drover answer`
//! answers, and that a policy rule answers without anyone.

#![allow(dead_code)]

use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::real::{Real, RunOutput, expected_usage, wait_for};

pub struct AcpCase {
    pub cli: &'static str,
    /// drover args every `run` and `up` of this CLI takes (e.g. a model).
    pub args: &'static [&'static str],
    /// The wire protocol the CLI speaks to the server.
    pub protocol: &'static str,
    /// drover's `--timeout` for a turn, in seconds.
    /// A tool call (`/__fake/tool` body) that writes `hi.txt` and needs a
    /// permission.
    pub tool: &'static str,
    /// Which answered requests the CLI's transcript accounts for.
    pub accounted: fn(request: &Value) -> bool,
    /// Whether a new agent can `session/load` a conversation an earlier one
    /// had; false skips the resume steps (the case says why).
    pub resumes: bool,
}

impl AcpCase {
    fn real(&self) -> Option<Real> {
        Real::new(self.cli)
    }

    /// `["--workspace", "acp"]`, the case's args, then `more`.
    fn acp_args<'a>(&'a self, more: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec!["--workspace", "acp"];
        args.extend(self.args);
        args.extend(more);
        args
    }

    /// `drover up NICK --cli CLI --workspace acp …`.
    fn up(&self, real: &Real, nick: &str, more: &[&str]) -> std::process::Output {
        let mut args = vec!["up", nick, "--cli", self.cli];
        args.extend(self.acp_args(more));
        real.output(&args)
    }

    fn timeout(&self) -> Duration {
        crate::support::HANG
    }

    fn timeout_arg(&self) -> String {
        format!("{}s", crate::support::HANG.as_secs())
    }
}

fn context(real: &Real, run_id: &str, doc: &Value) -> String {
    let traffic = std::fs::read_to_string(
        real.run_dir(run_id)
            .join("logs")
            .join(format!("{}.acp", doc["task"].as_str().unwrap_or_default())),
    )
    .unwrap_or_default();
    let tail: String = traffic
        .lines()
        .rev()
        .take(30)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .map(|l| format!("{}\n", l.chars().take(400).collect::<String>()))
        .collect();
    format!(
        "{doc:#}\nstates: {:?}\n{}\n--- ACP traffic (tail):\n{tail}",
        real.states(run_id),
        real.logs(run_id)
    )
}

fn run_context(real: &Real, out: &RunOutput) -> String {
    format!(
        "took {:.1}s, drover stderr: {}\n{}",
        out.elapsed.as_secs_f64(),
        out.stderr,
        context(real, out.run_id(), &out.doc)
    )
}

fn timed(cli: &str, what: &str, started: Instant) {
    eprintln!(
        "[real {cli}] acp {what}: {:.1}s",
        started.elapsed().as_secs_f64()
    );
}

/// `drover … --json` that must succeed; its JSON document.
fn ok_json(real: &Real, args: &[&str]) -> Value {
    let out = real.output(args);
    assert!(
        out.status.success(),
        "drover {args:?}: exit {:?}\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "drover {args:?} printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// The CLI's processes are gone after drover is done with them.
fn no_leftovers(real: &Real) {
    let left = wait_for(crate::support::HANG, || {
        real.cli_leftovers().is_empty().then_some(())
    });
    assert!(
        left.is_some(),
        "processes survived: {:?}",
        real.cli_leftovers()
    );
}

// ------------------------------------------------------------------ run

/// `drover run --workspace acp` completes on `end_turn` with the reply and
/// the transcript's usage; `--resume` continues the conversation through
/// `session/load`.
pub fn run(case: &AcpCase) {
    let started = Instant::now();
    let Some(real) = case.real() else {
        return;
    };
    let before = real.server.last_seq();
    let first = real.run(
        case.timeout(),
        &case.acp_args(&[]),
        "Reply with exactly: ACPFIRST",
    );
    assert_eq!(
        (first.status(), first.code),
        ("completed", 0),
        "{}",
        run_context(&real, &first)
    );
    assert_eq!(first.doc["workspace"], "acp");
    assert_eq!(
        first.doc["reply"],
        "ACPFIRST",
        "{}",
        run_context(&real, &first)
    );
    let conversation = first.doc["session_id"]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| panic!("no session id: {}", run_context(&real, &first)))
        .to_string();
    let served = real.server.answered_since(before);
    // Side calls the CLI accounts nowhere (grok's session title) may use
    // another wire format; the turn's own calls use the CLI's.
    let accounted: Vec<Value> = served.into_iter().filter(case.accounted).collect();
    assert!(
        accounted.iter().all(|r| r["protocol"] == case.protocol),
        "{accounted:?}"
    );
    assert_eq!(
        first.doc["usage"],
        expected_usage(&accounted),
        "usage vs the {} accounted requests the server answered: {accounted:#?}\n{}",
        accounted.len(),
        run_context(&real, &first)
    );
    let states = real.states(first.run_id());
    for wanted in [
        "idle@acp:session/new",
        "working@acp:session/prompt",
        "done@acp:end_turn",
    ] {
        assert!(
            states.iter().any(|s| s == wanted),
            "no {wanted} in {states:?}\n{}",
            run_context(&real, &first)
        );
    }
    no_leftovers(&real);
    if !case.resumes {
        timed(case.cli, "run", started);
        return;
    }

    let mid = real.server.last_seq();
    let second = real.run(
        case.timeout(),
        &case.acp_args(&["--resume", &conversation]),
        "Reply with exactly: ACPSECOND",
    );
    assert_eq!(
        (second.status(), second.code),
        ("completed", 0),
        "{}",
        run_context(&real, &second)
    );
    assert_eq!(
        second.doc["reply"],
        "ACPSECOND",
        "{}",
        run_context(&real, &second)
    );
    assert_eq!(
        second.doc["session_id"],
        conversation.as_str(),
        "{}",
        run_context(&real, &second)
    );
    assert!(
        real.states(second.run_id())
            .iter()
            .any(|s| s == "idle@acp:session/load"),
        "{}",
        run_context(&real, &second)
    );
    let accounted: Vec<Value> = real
        .server
        .answered_since(mid)
        .into_iter()
        .filter(case.accounted)
        .collect();
    assert_eq!(
        second.doc["usage"],
        expected_usage(&accounted),
        "usage of the resumed turn vs the {} accounted requests: {accounted:#?}\n{}",
        accounted.len(),
        run_context(&real, &second)
    );
    no_leftovers(&real);
    timed(case.cli, "run", started);
}

// ---------------------------------------------------------------- seats

fn seat_doc(real: &Real, nick: &str) -> Value {
    let doc = ok_json(real, &["seats", "--json"]);
    doc["seats"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["nick"] == nick).cloned())
        .unwrap_or_else(|| panic!("no seat {nick}: {doc:#}"))
}

fn host_pid(real: &Real, seat: &Value) -> i32 {
    let path = real
        .run_dir(seat["run_id"].as_str().unwrap_or_default())
        .join("tasks")
        .join(seat["nick"].as_str().unwrap_or_default())
        .join("host.json");
    let host: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("host.json"))
        .expect("host.json is JSON");
    host["identity"]["pid"].as_i64().expect("host pid") as i32
}

fn send(real: &Real, case: &AcpCase, nick: &str, prompt: &str) -> Value {
    let timeout = case.timeout_arg();
    let out = real.output(&["send", nick, "--json", "--timeout", &timeout, prompt]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "drover send printed no JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(
        (doc["status"].as_str(), out.status.code()),
        (Some("completed"), Some(0)),
        "{}",
        context(real, doc["run_id"].as_str().unwrap_or_default(), &doc)
    );
    doc
}

/// A seat keeps one agent between messages; after its host is killed (as a
/// reboot would), the next `drover send` starts a new one that resumes the
/// conversation with `session/load`.
pub fn seat(case: &AcpCase) {
    let started = Instant::now();
    let Some(real) = case.real() else {
        return;
    };
    let up = case.up(&real, "ada", &[]);
    assert!(
        up.status.success(),
        "drover up: {}{}",
        String::from_utf8_lossy(&up.stdout),
        String::from_utf8_lossy(&up.stderr)
    );
    let first = send(&real, case, "ada", "Reply with exactly: SEATONE");
    assert_eq!(first["reply"], "SEATONE");
    let conversation = first["session_id"].as_str().unwrap_or_default().to_string();
    assert!(!conversation.is_empty(), "{first:#}");
    let seat = seat_doc(&real, "ada");
    assert_eq!(seat["workspace"], "acp");
    assert_eq!(seat["alive"], true, "{seat:#}");
    assert_eq!(seat["state"], "done", "{seat:#}");
    assert_eq!(seat["conversation"], conversation.as_str(), "{seat:#}");
    let agent_before = real.cli_leftovers();

    let second = send(&real, case, "ada", "Reply with exactly: SEATTWO");
    assert_eq!(second["reply"], "SEATTWO");
    assert_eq!(second["session_id"], conversation.as_str());
    assert_eq!(
        real.cli_leftovers(),
        agent_before,
        "the second message started another agent"
    );
    if !case.resumes {
        assert!(real.output(&["down", "ada"]).status.success());
        no_leftovers(&real);
        timed(case.cli, "seat", started);
        return;
    }

    // The host dies without a word; its agent loses its stdin and exits.
    // SAFETY: kill(2) on the seat host this test's drover started.
    unsafe {
        libc::kill(host_pid(&real, &seat), libc::SIGKILL);
    }
    no_leftovers(&real);
    assert_eq!(seat_doc(&real, "ada")["alive"], false);
    let third = send(&real, case, "ada", "Reply with exactly: SEATTHREE");
    assert_eq!(third["reply"], "SEATTHREE");
    assert_eq!(
        third["session_id"],
        conversation.as_str(),
        "the restarted seat answered in another conversation"
    );
    let run_id = seat["run_id"].as_str().unwrap_or_default();
    assert!(
        real.states(run_id)
            .iter()
            .any(|s| s == "idle@acp:session/load"),
        "{:?}",
        real.states(run_id)
    );
    let down = real.output(&["down", "ada"]);
    assert!(down.status.success());
    no_leftovers(&real);
    timed(case.cli, "seat", started);
}

// -------------------------------------------------------------- questions

/// Waits for the seat's journal to show it blocked on a question.
fn wait_blocked(real: &Real, run_id: &str, child: &mut Child) -> Value {
    wait_for(crate::support::HANG, || {
        if let Ok(Some(status)) = child.try_wait() {
            panic!(
                "drover send ended ({status}) before the seat blocked: {:?}",
                real.states(run_id)
            );
        }
        real.journal(run_id)
            .into_iter()
            .rev()
            .find(|l| l["kind"] == "state" && l["state"] == "blocked")
    })
    .unwrap_or_else(|| panic!("the seat never blocked: {:?}", real.states(run_id)))
}

/// A permission request shows up as data (journal, `drover seats`), is
/// answered by `drover answer`, and — once the project has a policy — by a
/// policy rule; both answers are journaled with who gave them.
pub fn questions(case: &AcpCase) {
    let started = Instant::now();
    let Some(real) = case.real() else {
        return;
    };
    // Without the bypass the CLI asks before it runs a tool.
    let up = case.up(&real, "bob", &["--no-bypass"]);
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let seat = seat_doc(&real, "bob");
    let run_id = seat["run_id"].as_str().unwrap_or_default().to_string();

    // A person answers.
    // Each call is for its turn's prompt: a CLI's side requests after a turn
    // (Qwen's prompt suggestions) offer tools too and must not take it.
    let mut tool: Value = serde_json::from_str(case.tool).expect("tool JSON");
    tool["prompt"] = "Reply with exactly: TOOLDONE".into();
    real.server.control("tool", &tool);
    let timeout = case.timeout_arg();
    let mut child = real
        .drover()
        .args([
            "send",
            "bob",
            "--json",
            "--timeout",
            &timeout,
            "Reply with exactly: TOOLDONE",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("drover send");
    let blocked = wait_blocked(&real, &run_id, &mut child);
    let question = &blocked["detail"]["question"];
    assert_eq!(blocked["prompt_kind"], "permission", "{blocked:#}");
    assert_eq!(question["kind"], "execute", "{blocked:#}");
    assert!(
        question["input"]
            .as_str()
            .unwrap_or_default()
            .contains("hi.txt")
            || question["title"]
                .as_str()
                .unwrap_or_default()
                .contains("hi.txt"),
        "{blocked:#}"
    );
    let kinds: Vec<&str> = question["options"]
        .as_array()
        .map(|o| o.iter().filter_map(|c| c["kind"].as_str()).collect())
        .unwrap_or_default();
    assert!(
        kinds.contains(&"allow_once") && kinds.contains(&"reject_once"),
        "{blocked:#}"
    );
    let listed = seat_doc(&real, "bob");
    assert_eq!(listed["state"], "blocked");
    assert_eq!(listed["question"]["id"], question["id"], "{listed:#}");
    let answered = ok_json(&real, &["answer", "bob", "allow_once", "--json"]);
    assert_eq!(answered["delivered"], true, "{answered:#}");
    assert_eq!(answered["option"]["kind"], "allow_once");
    let out = child.wait_with_output().expect("drover send finishes");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(
        doc["status"],
        "completed",
        "{}",
        context(&real, &run_id, &doc)
    );
    assert!(
        real.work.join("hi.txt").exists(),
        "the approved tool did not run: {}",
        context(&real, &run_id, &doc)
    );
    let by_person = real
        .journal(&run_id)
        .into_iter()
        .find(|l| l["kind"] == "answer" && l["detail"]["question"] == question["id"])
        .unwrap_or_else(|| panic!("the answer is not journaled: {:?}", real.journal(&run_id)));
    assert_eq!(by_person["source"], "person", "{by_person:#}");

    // The policy answers.
    let config = real.work.join(".drover").join("config.toml");
    std::fs::write(
        &config,
        "[policy]\ndefault = \"ask\"\n\n[[policy.rule]]\nkind = \"execute\"\ninput = \"*hi2.txt*\"\ndecision = \"reject\"\n",
    )
    .expect("write the policy");
    let tool = case.tool.replace("hi.txt", "hi2.txt");
    let mut tool: Value = serde_json::from_str(&tool).expect("tool JSON");
    tool["prompt"] = "Reply with exactly: REJECTED".into();
    real.server.control("tool", &tool);
    let timeout = case.timeout_arg();
    let out = real.output(&[
        "send",
        "bob",
        "--json",
        "--timeout",
        &timeout,
        "Reply with exactly: REJECTED",
    ]);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let journal = real.journal(&run_id);
    let by_policy = journal
        .iter()
        .rev()
        .find(|l| l["kind"] == "answer")
        .cloned()
        .unwrap_or(Value::Null);
    assert!(
        by_policy["source"]
            .as_str()
            .is_some_and(|s| s.starts_with("policy:")
                && s.contains("config.toml:")
                && s.ends_with("policy.rule.0")),
        "{by_policy:#}\n{}",
        context(&real, &run_id, &doc)
    );
    assert_eq!(
        by_policy["detail"]["answered"]["rule"]["decision"],
        "reject"
    );
    assert!(
        !real.work.join("hi2.txt").exists(),
        "the tool ran although the policy rejected it"
    );
    assert!(
        doc["status"].as_str().is_some(),
        "drover send printed no result: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let down = real.output(&["down", "bob"]);
    assert!(down.status.success());
    no_leftovers(&real);
    timed(case.cli, "questions", started);
}
