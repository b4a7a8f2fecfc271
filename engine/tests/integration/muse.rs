//! Muse Code against the fake `muse` (tests/fake-muse, built from Muse's
//! public sources): headless `exec` turns with exact usage from the session
//! logs (subagents included), each failure classified, the hooks file
//! round trip, and a seat over Muse's session protocol (MSP) that answers,
//! asks, is answered and resumes.

use crate::support;

use std::path::PathBuf;

use serde_json::Value;
use support::Project;

/// The built-in `muse` profile finds the fake as `muse` on PATH.
fn muse_on_path(p: &Project) -> PathBuf {
    let bin = p.home.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let link = bin.join("muse");
    if !link.exists() {
        std::os::unix::fs::symlink(support::bin_dir().join("fake-muse"), &link).expect("link");
    }
    bin
}

pub(crate) fn drover(p: &Project, args: &[&str]) -> std::process::Output {
    let bin = muse_on_path(p);
    let path = format!(
        "{}:{}:{}",
        bin.display(),
        support::bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    p.drover()
        .env("PATH", path)
        .args(args)
        .output()
        .expect("drover runs")
}

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn run(p: &Project, prompt: &str) -> Value {
    json_of(&drover(p, &["run", "--json", "--cli", "muse", prompt]))
}

#[test]
fn a_headless_turn_completes_with_exact_usage_from_the_session_log() {
    let p = Project::new();
    let doc = run(&p, "Reply with exactly: MUSED @subagent");
    assert_eq!(doc["status"], "completed", "{doc:#}");
    assert_eq!(doc["reply"], "MUSED");
    // The session's call and its subagent's (whose log is apart), each
    // once although logged twice with a goal attribution beside it; input
    // net of the 300 cached.
    assert_eq!(doc["usage"]["input"], 2 * 2801, "{doc:#}");
    assert_eq!(doc["usage"]["cache_read"], 2 * 300);
    assert_eq!(doc["usage"]["output"], 2 * 77);
    assert_eq!(doc["usage"]["requests"], 2);
    assert!(doc["cost_usd"].as_f64().is_some_and(|c| c > 0.0), "{doc:#}");
    // drover picked the session id; the log is named by it.
    let session = doc["session_id"].as_str().expect("session id");
    let logs = p.home.join(".local/share/muse/sessions");
    let found = walk(&logs)
        .into_iter()
        .any(|f| f.ends_with(format!("{session}/session.jsonl")));
    assert!(found, "no log for {session} under {}", logs.display());
}

#[test]
fn a_headless_seats_message_gets_its_usage_and_a_second_says_why_it_cannot_resume() {
    let p = Project::new();
    let up = drover(&p, &["up", "h", "--cli", "muse", "--workspace", "headless"]);
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let first = json_of(&drover(
        &p,
        &["send", "--json", "h", "Reply with exactly: ONE"],
    ));
    assert_eq!(first["status"], "completed", "{first:#}");
    // drover picked the session id, so the log was found by it.
    assert_eq!(first["usage"]["input"], 2801, "{first:#}");
    let second = drover(&p, &["send", "--json", "h", "Reply with exactly: TWO"]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&second.stdout),
        String::from_utf8_lossy(&second.stderr)
    );
    assert!(!second.status.success(), "{text}");
    assert!(text.contains("resume_flag"), "{text}");
    let _ = drover(&p, &["down", "--all"]);
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn each_failure_is_classified_from_muses_error_object() {
    let p = Project::new();
    for (script, kind, words) in [
        ("@fault=auth", "auth", "authRequired"),
        ("@fault=quota", "quota", "resets at "),
        ("@fault=overload", "overload", "provider returned 503"),
        ("@fault=network", "network", "ECONNREFUSED"),
    ] {
        let doc = run(&p, &format!("work {script}"));
        assert_ne!(doc["status"], "completed", "{doc:#}");
        assert_eq!(doc["fault"]["kind"], kind, "{script}: {doc:#}");
        assert!(
            doc["fault"]["evidence"]
                .as_str()
                .is_some_and(|e| e.contains(words)),
            "{script}: {doc:#}"
        );
    }
    // The quota says when it resets: two hours from now, in seconds.
    let doc = run(&p, "work @fault=quota");
    let wait = doc["fault"]["retry_after_secs"].as_u64().expect("a wait");
    assert!((7000..=7200).contains(&wait), "{doc:#}");
}

#[test]
fn hooks_install_and_remove_leave_the_users_file_byte_for_byte() {
    let p = Project::new();
    let dir = p.path().join(".muse");
    std::fs::create_dir_all(&dir).expect(".muse");
    let mine = "{\n    \"hooks\": {\n        \"Stop\": [\n            {\n                \"matcher\": \"\",\n                \"hooks\": [{ \"type\": \"command\", \"command\": \"notify-send done\" }]\n            }\n        ]\n    },\n    \"theme\": \"dark\"\n}\n";
    std::fs::write(dir.join("hooks.json"), mine).expect("hooks.json");
    let out = drover(&p, &["hooks", "install", "--cli", "muse"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed = std::fs::read_to_string(dir.join("hooks.json")).expect("read");
    let config: Value = serde_json::from_str(&installed).expect("JSON");
    for event in ["SessionStart", "Stop", "PermissionRequest", "SessionEnd"] {
        assert!(
            config["hooks"][event].to_string().contains("drover-relay"),
            "{event}: {installed}"
        );
    }
    assert!(installed.contains("notify-send done") && installed.contains("\"theme\""));
    let status = drover(&p, &["hooks", "status", "--cli", "muse"]);
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let out = drover(&p, &["hooks", "remove", "--cli", "muse"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("hooks.json")).expect("read"),
        mine
    );
}

fn seats(p: &Project) -> Value {
    json_of(&drover(p, &["seats", "--json"]))
}

/// Brings every seat down when the test ends, failed or not: a seat host
/// left running would outlive the test.
struct Down<'a>(&'a Project);

impl Drop for Down<'_> {
    fn drop(&mut self) {
        let _ = drover(self.0, &["down", "--all"]);
    }
}

#[test]
fn an_msp_seat_answers_asks_is_answered_and_resumes() {
    let p = Project::new();
    let _down = Down(&p);
    let up = drover(&p, &["up", "m", "--cli", "muse", "--workspace", "acp"]);
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let first = json_of(&drover(
        &p,
        &["send", "--json", "m", "Reply with exactly: SEATED"],
    ));
    assert_eq!(
        (first["status"].as_str(), first["reply"].as_str()),
        (Some("completed"), Some("SEATED")),
        "{first:#}"
    );
    // Usage as session/tokenUsage reported it: exact, priced.
    assert_eq!(first["usage"]["input"], 2801, "{first:#}");
    assert_eq!(first["usage"]["cache_read"], 300);
    assert_eq!(first["usage"]["output"], 77);
    assert!(first["cost_usd"].as_f64().is_some_and(|c| c > 0.0));
    let listed = seats(&p);
    assert_eq!(
        listed["seats"][0]["cost_usd"], first["cost_usd"],
        "{listed:#}"
    );
    let run_id = listed["seats"][0]["run_id"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        p.journal(&run_id)
            .iter()
            .any(|l| l["source"] == "msp:session/start")
    );

    // An approval is the seat's question, until `drover answer`.
    let bin = muse_on_path(&p);
    let child = p
        .drover()
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .args(["send", "--json", "m", "Reply with exactly: X @approve"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("send");
    let until = std::time::Instant::now() + support::HANG;
    let question = loop {
        let all = seats(&p);
        if let Some(q) = all["seats"][0]["question"].as_object() {
            break Value::Object(q.clone());
        }
        assert!(std::time::Instant::now() < until, "no question: {all:#}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let options: Vec<&str> = question["options"]
        .as_array()
        .map(|o| o.iter().filter_map(|o| o["id"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        options,
        ["allow_once", "allow_session", "abort"],
        "{question:#}"
    );
    assert!(
        !p.path().join("hi.txt").exists(),
        "written before it was allowed"
    );
    let answered = drover(&p, &["answer", "m", "allow_once"]);
    assert!(
        answered.status.success(),
        "{}",
        String::from_utf8_lossy(&answered.stderr)
    );
    let sent = child.wait_with_output().expect("send ends");
    let doc = json_of(&sent);
    assert_eq!(doc["reply"], "TOOLDONE", "{doc:#}");
    assert!(p.path().join("hi.txt").is_file());
    assert!(
        p.journal(&run_id).iter().any(|l| l["kind"] == "answer"
            && l["state"] == "allow_once"
            && l["source"] == "person"),
        "the answer is not journaled: {:#?}",
        p.journal(&run_id)
    );

    // A failing turn is a fault with Muse's words; the agent lives on.
    let failed = json_of(&drover(&p, &["send", "--json", "m", "work @fault=quota"]));
    assert_eq!(failed["fault"]["kind"], "quota", "{failed:#}");

    // A new host resumes the session (session/resume).
    let down_host = drover(&p, &["down", "m"]);
    assert!(down_host.status.success());
    let up = drover(&p, &["up", "m2", "--cli", "muse", "--workspace", "acp"]);
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let session = first["session_id"].as_str().expect("session");
    let again = json_of(&drover(
        &p,
        &[
            "run",
            "--json",
            "--cli",
            "muse",
            "--workspace",
            "acp",
            "--resume",
            session,
            "Reply with exactly: BACK",
        ],
    ));
    assert_eq!(
        (again["status"].as_str(), again["session_id"].as_str()),
        (Some("completed"), Some(session)),
        "{again:#}"
    );
    let run = again["run_id"].as_str().unwrap_or_default();
    assert!(
        p.journal(run)
            .iter()
            .any(|l| l["source"] == "msp:session/resume")
    );
}
