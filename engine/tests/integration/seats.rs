//! Seats: named, long-lived conversations. A tmux seat's pane outlives each
//! command; a headless seat resumes its conversation; a human seat is never
//! typed into.

use crate::support;

use serde_json::Value;
use support::{Project, tmux_required};

fn ok(p: &Project, args: &[&str]) -> String {
    let out = p.output(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn send(p: &Project, nick: &str, prompt: &str) -> Value {
    let out = p.output(&["send", "--json", nick, prompt]);
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("send {nick}: {e}: {}", String::from_utf8_lossy(&out.stderr)))
}

fn seats(p: &Project) -> Value {
    serde_json::from_str(&ok(p, &["seats", "--json"])).expect("seats JSON")
}

#[test]
fn a_tmux_seat_serves_several_messages_and_goes_down() {
    tmux_required();
    let p = Project::new();
    p.install_hooks("scripted");
    ok(
        &p,
        &[
            "up",
            "dev",
            "--cli",
            "scripted",
            "--role",
            "builder",
            "--workspace",
            "tmux",
        ],
    );
    let first = send(&p, "dev", "Reply with exactly: ONE");
    assert_eq!(
        (first["status"].as_str(), first["reply"].as_str()),
        (Some("completed"), Some("ONE")),
        "{first:#}"
    );
    let second = send(&p, "dev", "Reply with exactly: TWO");
    assert_eq!(second["reply"], "TWO", "{second:#}");
    // The same CLI process answered both: one conversation.
    assert_eq!(first["session_id"], second["session_id"]);
    // `drover status` between messages shows the last turn's verdict and
    // settles nothing (a seat has no driver between messages by design).
    let status: Value = serde_json::from_str(&ok(&p, &["status", "--json"])).expect("status");
    let task = &status["runs"][0]["tasks"][0];
    assert_eq!(
        (task["verdict"].as_str(), task["reconciled"].as_bool()),
        (Some("completed"), Some(false)),
        "{status:#}"
    );
    let verdicts = std::fs::read_dir(p.path().join(".drover/runs"))
        .expect("runs")
        .filter_map(Result::ok)
        .map(|e| {
            std::fs::read_to_string(e.path().join("events.jsonl"))
                .unwrap_or_default()
                .matches("\"verdict\"")
                .count()
        })
        .sum::<usize>();
    assert_eq!(verdicts, 2, "one verdict per message");
    let listed = seats(&p);
    assert_eq!(listed["seats"][0]["nick"], "dev");
    assert_eq!(listed["seats"][0]["state"], "done");
    assert_eq!(listed["seats"][0]["alive"], true);
    ok(&p, &["down", "dev"]);
    assert_eq!(seats(&p)["seats"].as_array().map(Vec::len), Some(0));
    let again = p.output(&["send", "dev", "hello"]);
    assert_eq!(again.status.code(), Some(1));
}

#[test]
fn a_headless_seat_resumes_its_conversation() {
    let p = Project::new();
    // The scripted CLI's model (claude-opus-5-5) priced by the user's file
    // at $1 per input and output token.
    let config = p.home.join(".config/drover");
    std::fs::create_dir_all(&config).expect("config dir");
    std::fs::write(
        config.join("pricing.json"),
        r#"{"claude-opus-5-5": {"input_cost_per_token": 1, "output_cost_per_token": 1,
            "cache_read_input_token_cost": 0, "cache_creation_input_token_cost": 0}}"#,
    )
    .expect("pricing.json");
    ok(
        &p,
        &[
            "up",
            "rev",
            "--cli",
            "scripted",
            "--workspace",
            "headless",
            "--budget-usd",
            "5000",
        ],
    );
    let first = send(&p, "rev", "Reply with exactly: R1");
    let second = send(&p, "rev", "Reply with exactly: R2");
    assert_eq!(
        (first["reply"].as_str(), second["reply"].as_str()),
        (Some("R1"), Some("R2"))
    );
    assert_eq!(
        first["session_id"], second["session_id"],
        "the second message resumed the first's conversation"
    );
    // Each message was one request of 1201 in and 57 out; the seat's cost
    // is their sum, beside its budget.
    assert_eq!(first["cost_usd"].as_f64(), Some(1258.0));
    let listed = seats(&p);
    assert_eq!(listed["seats"][0]["cost_usd"].as_f64(), Some(2516.0));
    assert_eq!(listed["seats"][0]["budget_usd"].as_f64(), Some(5000.0));
    ok(&p, &["down", "--all"]);
}

#[test]
fn a_human_seat_is_never_typed_into() {
    tmux_required();
    let p = Project::new();
    ok(
        &p,
        &[
            "up",
            "boss",
            "--cli",
            "scripted",
            "--workspace",
            "tmux",
            "--human",
        ],
    );
    let out = p.output(&["send", "boss", "Reply with exactly: NO"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("human seat"));
    let log = std::fs::read_dir(p.path().join(".drover/runs"))
        .expect("runs")
        .filter_map(Result::ok)
        .next()
        .expect("seat run")
        .path()
        .join("logs/boss.log");
    assert!(
        !std::fs::read_to_string(log)
            .unwrap_or_default()
            .contains("Reply with exactly: NO"),
        "the prompt reached the human's pane"
    );
    // A second seat with the same nickname is refused while the first is up.
    let dup = p.output(&["up", "boss", "--cli", "scripted", "--workspace", "tmux"]);
    assert_eq!(dup.status.code(), Some(1));
    ok(&p, &["down", "boss"]);
}

/// `drover` for the scripted CLI's ACP mode.
fn acp(p: &Project, args: &[&str]) -> std::process::Output {
    p.drover().args(args).output().expect("drover runs")
}

fn acp_ok(p: &Project, args: &[&str]) -> Value {
    let out = acp(p, args);
    assert!(
        out.status.success(),
        "{args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

fn seat<'a>(all: &'a Value, nick: &str) -> &'a Value {
    all["seats"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["nick"] == nick))
        .unwrap_or_else(|| panic!("no seat {nick}: {all:#}"))
}

fn host_state(p: &Project, seat: &Value) -> Value {
    let path = p
        .run_dir(seat["run_id"].as_str().unwrap_or_default())
        .join("tasks")
        .join(seat["nick"].as_str().unwrap_or_default())
        .join("host.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("host.json")).expect("JSON")
}

fn pid_alive(pid: i64) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
}

#[test]
fn an_acp_seat_keeps_its_agent_and_resumes_after_its_host_died() {
    let p = Project::new();
    let up = acp(
        &p,
        &["up", "ace", "--cli", "scripted", "--workspace", "acp"],
    );
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let first = acp_ok(&p, &["send", "--json", "ace", "Reply with exactly: A1"]);
    let second = acp_ok(&p, &["send", "--json", "ace", "Reply with exactly: A2"]);
    assert_eq!(
        (first["reply"].as_str(), second["reply"].as_str()),
        (Some("A1"), Some("A2"))
    );
    assert_eq!(first["workspace"], "acp");
    assert_eq!(first["session_id"], second["session_id"]);
    let all = seats(&p);
    let ace = seat(&all, "ace");
    assert_eq!(
        (ace["alive"].as_bool(), ace["state"].as_str()),
        (Some(true), Some("done")),
        "{ace:#}"
    );
    assert_eq!(ace["conversation"], first["session_id"]);
    let host = host_state(&p, ace);
    let agent = host["agent_pid"].as_i64().expect("agent pid");
    assert!(pid_alive(agent));

    // The host dies (as in a reboot); the agent, its stdin gone, follows.
    let host_pid = host["identity"]["pid"].as_i64().expect("host pid");
    // SAFETY: kill(2) on the seat host this test's drover started.
    unsafe {
        libc::kill(host_pid as i32, libc::SIGKILL);
    }
    let until = std::time::Instant::now() + crate::support::HANG;
    while pid_alive(agent) && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!pid_alive(agent), "the agent outlived its host");
    assert_eq!(seat(&seats(&p), "ace")["alive"], false);
    let third = acp_ok(&p, &["send", "--json", "ace", "Reply with exactly: A3"]);
    assert_eq!(third["reply"], "A3");
    assert_eq!(
        third["session_id"], first["session_id"],
        "the new host resumed the conversation"
    );
    let run_id = ace["run_id"].as_str().unwrap_or_default();
    assert!(
        p.journal(run_id)
            .iter()
            .any(|l| l["source"] == "acp:session/load")
    );

    // A question shows in `drover seats` until `drover answer` answers it.
    let child = p
        .drover()
        .args(["send", "--json", "ace", "Reply with exactly: A4 @blocked"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("send");
    let until = std::time::Instant::now() + crate::support::HANG;
    let question = loop {
        let all = seats(&p);
        if let Some(q) = seat(&all, "ace")["question"].as_object() {
            break Value::Object(q.clone());
        }
        assert!(std::time::Instant::now() < until, "no question: {all:#}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(question["input"], "echo hi > hi.txt");
    let listed = ok(&p, &["seats"]);
    assert!(
        listed.contains("ace asks: bash (execute): echo hi > hi.txt"),
        "{listed}"
    );
    assert!(listed.contains("drover answer ace OPTION"), "{listed}");
    ok(&p, &["answer", "ace", "reject"]);
    let out = child.wait_with_output().expect("send finishes");
    let fourth: Value = serde_json::from_slice(&out.stdout).expect("send JSON");
    assert_eq!(fourth["status"], "completed", "{fourth:#}");
    assert!(!p.path().join("hi.txt").exists(), "the rejected tool ran");
    assert!(seat(&seats(&p), "ace")["question"].is_null());

    ok(&p, &["down", "ace"]);
    let host = host_state(&p, ace);
    assert_eq!(host["state"], "stopped", "{host:#}");
    let new_agent = host["agent_pid"].as_i64();
    assert!(new_agent.is_none(), "{host:#}");
    assert!(seats(&p)["seats"].as_array().is_some_and(Vec::is_empty));
}

#[test]
fn an_acp_seat_that_cannot_start_is_not_recorded() {
    let p = Project::new();
    // The scripted profile with an ACP argv the scripted CLI refuses.
    let scripted = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/scripted.toml"),
    )
    .expect("scripted profile");
    let profiles = p.path().join(".drover/profiles");
    std::fs::create_dir_all(&profiles).expect("profiles");
    std::fs::write(
        profiles.join("refused.toml"),
        scripted
            .replace("name = \"scripted\"", "name = \"refused\"")
            .replace("scripted-cli --acp", "scripted-cli --no-such-flag"),
    )
    .expect("profile");
    // A project's own profile runs only once the user trusts it.
    let trusted = p.drover().arg("trust").output().expect("drover trust");
    assert!(trusted.status.success(), "{trusted:?}");
    let out = p
        .drover()
        .args(["up", "bad", "--cli", "refused", "--workspace", "acp"])
        .output()
        .expect("drover");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Why, from the host: the agent is gone before the handshake. (A host
    // killed by writing to it, or waited on as if alive, says less or
    // holds `up` for minutes.)
    assert!(
        stderr.contains("seat bad did not come up: the agent did not open a session"),
        "{stderr}"
    );
    assert!(seats(&p)["seats"].as_array().is_some_and(Vec::is_empty));
}
