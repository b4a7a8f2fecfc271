//! The team contract from a script's side: `up`, `send --no-wait`, `wait`,
//! `events --follow --json` and `down`; notifications at a local webhook
//! and a command, once per event, even for a run settled after its drover
//! was killed; and nothing left running after a settled run or a downed
//! seat.

use crate::support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

fn json(p: &Project, args: &[&str]) -> Value {
    serde_json::from_str(&ok(p, args)).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"))
}

/// `drover events --follow --json` in the background, its lines collected.
struct Follow {
    child: Child,
    lines: Arc<Mutex<Vec<Value>>>,
}

impl Follow {
    fn start(p: &Project) -> Follow {
        let mut child = p
            .drover()
            .args(["events", "--follow", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("events --follow");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().expect("stdout");
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("events printed a non-JSON line ({e}): {line}"));
                sink.lock().expect("lines").push(value);
            }
        });
        Follow { child, lines }
    }

    /// Waits (bounded) until some line matches.
    fn until(&self, what: &str, matches: impl Fn(&Value) -> bool) -> Vec<Value> {
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            let lines = self.lines.lock().expect("lines").clone();
            if lines.iter().any(&matches) {
                return lines;
            }
            assert!(Instant::now() < until, "no {what} line: {lines:#?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_script_drives_a_team_with_up_send_wait_events_and_down() {
    let p = Project::new();
    let follow = Follow::start(&p);
    let up = json(
        &p,
        &[
            "up",
            "rev",
            "--cli",
            "scripted",
            "--workspace",
            "headless",
            "--json",
        ],
    );
    assert_eq!(up["seat"]["nick"], "rev", "{up:#}");
    let sent = json(
        &p,
        &[
            "send",
            "--no-wait",
            "--json",
            "rev",
            "Reply with exactly: LATER @sleep=1500",
        ],
    );
    assert_eq!(sent["started"]["state"], "working", "{sent:#}");
    // Not settled yet: a short wait times out (exit 1) and says where it is.
    let early = p.output(&["wait", "rev", "--timeout", "100ms", "--json"]);
    assert_eq!(early.status.code(), Some(1));
    let early: Value = serde_json::from_slice(&early.stdout).expect("wait JSON");
    assert_eq!(
        (early["held"].as_bool(), early["state"].as_str()),
        (Some(false), Some("working")),
        "{early:#}"
    );
    let done = json(&p, &["wait", "rev", "--json"]);
    assert_eq!(
        (done["held"].as_bool(), done["verdict"].as_str()),
        (Some(true), Some("completed")),
        "{done:#}"
    );
    let not_working = json(&p, &["wait", "rev", "--not", "working", "--json"]);
    assert_eq!(not_working["state"], "done");
    // The follower printed the turn once: one working line, one verdict.
    let lines = follow.until("verdict", |l| l["seat"] == "rev" && l["kind"] == "verdict");
    let of_rev: Vec<(&str, &str)> = lines
        .iter()
        .filter(|l| l["seat"] == "rev")
        .map(|l| {
            (
                l["kind"].as_str().unwrap_or_default(),
                l["state"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        of_rev,
        [
            ("state", "working"),
            ("state", "done"),
            ("verdict", "completed")
        ]
    );
    assert!(
        lines
            .iter()
            .all(|l| l["run"].is_string() && l["ts"].is_u64())
    );
    ok(&p, &["down", "rev"]);
    // Usage errors exit 2: an unknown target, a human seat (never waited on).
    assert_eq!(p.output(&["wait", "nobody"]).status.code(), Some(2));
    assert_eq!(
        p.output(&["wait", "rev", "--until", "sleepy"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn a_human_seat_is_never_waited_on() {
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
    let out = p.output(&["wait", "boss", "--timeout", "1s"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("human seat"));
    ok(&p, &["down", "--all"]);
    assert_no_tmux(&p);
}

/// A webhook receiver on 127.0.0.1: every POST body, in order.
fn receiver() -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&bodies);
    std::thread::spawn(move || {
        for stream in listener.incoming().map_while(Result::ok) {
            let mut reader = BufReader::new(stream);
            let mut length = 0usize;
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                if line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_ok()
                && let Ok(value) = serde_json::from_slice(&body)
            {
                sink.lock().expect("bodies").push(value);
            }
            let _ = reader
                .get_mut()
                .write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
        }
    });
    (url, bodies)
}

/// The user config (`$XDG_CONFIG_HOME/drover/config.toml`) of a project.
fn user_config(p: &Project, text: &str) {
    let dir = p.home.join(".config/drover");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(dir.join("config.toml"), text).expect("config");
}

fn wait_for<T>(what: &str, within: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let until = Instant::now() + within;
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(Instant::now() < until, "{what} never happened");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn command_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn a_blocked_seat_and_a_completed_run_reach_a_webhook_and_a_command_once() {
    let p = Project::new();
    let (url, bodies) = receiver();
    let got = p.path().join("command.jsonl");
    user_config(
        &p,
        &format!(
            "[[notify]]\nkind = \"webhook\"\nurl = \"{url}\"\nheaders = {{ X-Token = \"t0k\" }}\non = [\"blocked\", \"completed\"]\n\n[[notify]]\nkind = \"command\"\nargv = [\"sh\", \"-c\", \"cat >> {}\"]\non = [\"blocked\", \"completed\"]\n\n[[notify]]\nkind = \"command\"\nargv = [\"sleep\", \"60\"]\non = [\"completed\"]\n",
            got.display()
        ),
    );
    p.install_hooks("scripted");
    let started = Instant::now();
    let (doc, _) = p.run(&[
        "--cli",
        "scripted",
        "--workspace",
        "headless",
        "Reply with exactly: FINE",
    ]);
    assert_eq!(doc["status"], "completed", "{doc:#}");
    // A hanging notifier (sleep 60) never delays the session.
    assert!(started.elapsed() < Duration::from_secs(30));
    let completed_run = doc["run_id"].as_str().expect("run id").to_string();
    ok(
        &p,
        &["up", "dev", "--cli", "scripted", "--workspace", "headless"],
    );
    let blocked = p.output(&["send", "--json", "dev", "clean up @blocked"]);
    assert_eq!(blocked.status.code(), Some(1));
    let arrived = wait_for("both webhook posts", Duration::from_secs(30), || {
        let b = bodies.lock().expect("bodies").clone();
        (b.len() >= 2).then_some(b)
    });
    let mut events: Vec<(String, String)> = arrived
        .iter()
        .map(|b| {
            (
                b["event"].as_str().unwrap_or_default().to_string(),
                b["run"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    events.sort();
    assert_eq!(events[0], ("blocked".to_string(), events[0].1.clone()));
    assert_eq!(events[1], ("completed".to_string(), completed_run.clone()));
    let blocked_doc = arrived
        .iter()
        .find(|b| b["event"] == "blocked")
        .expect("blocked");
    assert_eq!(
        (
            blocked_doc["seat"].as_str(),
            blocked_doc["prompt_kind"].as_str(),
            blocked_doc["state"].as_str(),
            blocked_doc["cli"].as_str(),
        ),
        (
            Some("dev"),
            Some("permission"),
            Some("blocked"),
            Some("scripted")
        ),
        "{blocked_doc:#}"
    );
    assert!(
        blocked_doc["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("drover: seat dev is blocked on a permission prompt")),
        "{blocked_doc:#}"
    );
    let commands = wait_for("both command runs", Duration::from_secs(30), || {
        let lines = command_lines(&got);
        (lines.len() >= 2).then_some(lines)
    });
    assert_eq!(commands.len(), 2);
    // Asking again (status, events) sends nothing twice.
    ok(&p, &["status", "--json"]);
    ok(&p, &["events", "--json"]);
    let ledger = p.run_dir(&completed_run).join("notify");
    let records: Vec<Value> = wait_for("the ledger to settle", Duration::from_secs(30), || {
        let records: Vec<Value> = std::fs::read_dir(&ledger)
            .ok()?
            .filter_map(Result::ok)
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .filter_map(|t| serde_json::from_str(&t).ok())
            .collect();
        (records.len() == 3 && records.iter().all(|r| r["status"] != "sending")).then_some(records)
    });
    let mut statuses: Vec<&str> = records
        .iter()
        .map(|r| r["status"].as_str().unwrap_or_default())
        .collect();
    statuses.sort();
    // The hanging command was killed at the bound and recorded as failed.
    assert_eq!(statuses, ["failed", "sent", "sent"], "{records:#?}");
    assert_eq!(bodies.lock().expect("bodies").len(), 2);
    assert_eq!(command_lines(&got).len(), 2);
    ok(&p, &["down", "--all"]);
}

/// No tmux server on the project's private socket (a server that was just
/// told to end gets a moment to go).
fn assert_no_tmux(p: &Project) {
    let socket = drover::workspace::tmux::socket_for(p.path());
    let sessions = || {
        let out = std::process::Command::new("tmux")
            .args(["-L", &socket, "list-sessions"])
            .output()
            .expect("tmux");
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let until = Instant::now() + Duration::from_secs(10);
    while let Some(left) = sessions() {
        assert!(Instant::now() < until, "tmux sessions left behind: {left}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Nothing of the project's runs and seats is still running (a process
/// that was just hung up gets a moment to exit).
fn assert_nothing_left(p: &Project) {
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        let left = processes_of(p);
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < until, "still running: {left:#?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What a run or seat of this project could leave running: its CLIs (they
/// carry `DROVER_RUN_DIR` under the project), the shells of its herdr
/// panes, and its private tmux server.
fn processes_of(p: &Project) -> Vec<String> {
    let run_dir = format!("DROVER_RUN_DIR={}", p.path().display());
    let pane = format!("HERDR_SOCKET_PATH={}", p.path().display());
    let socket = drover::workspace::tmux::socket_for(p.path());
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc")
        .expect("proc")
        .filter_map(Result::ok)
    {
        if entry.file_name().to_string_lossy().parse::<u32>().is_err() {
            continue;
        }
        let read = |f: &str| std::fs::read(entry.path().join(f)).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&read("cmdline")).replace('\0', " ");
        let environ = String::from_utf8_lossy(&read("environ")).into_owned();
        let stat = String::from_utf8_lossy(&read("stat")).into_owned();
        let zombie = stat
            .rfind(')')
            .is_some_and(|i| stat[i + 1..].trim_start().starts_with('Z'));
        let ours = environ.contains(&run_dir)
            || (environ.contains(&pane) && environ.contains("HERDR_PANE_ID="))
            || (cmdline.starts_with("tmux") && cmdline.contains(&socket));
        if ours && !zombie {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

#[test]
fn a_completed_tmux_run_and_downed_seats_leave_no_tmux_behind() {
    tmux_required();
    let p = Project::new();
    p.install_hooks("scripted");
    let (doc, _) = p.run(&[
        "--cli",
        "scripted",
        "--workspace",
        "tmux",
        "--teardown-grace",
        "2s",
        "Reply with exactly: BYE",
    ]);
    assert_eq!(doc["status"], "completed", "{doc:#}");
    assert_no_tmux(&p);
    for nick in ["a", "b"] {
        ok(
            &p,
            &["up", nick, "--cli", "scripted", "--workspace", "tmux"],
        );
    }
    let down = json(&p, &["down", "--all", "--json"]);
    assert_eq!(down["down"].as_array().map(Vec::len), Some(2), "{down:#}");
    assert_no_tmux(&p);
    assert_nothing_left(&p);
}

#[test]
fn a_killed_tmux_run_is_settled_by_a_follower_notifies_once_and_leaves_nothing() {
    tmux_required();
    let p = Project::new();
    let got = p.path().join("notified.jsonl");
    user_config(
        &p,
        &format!(
            "[[notify]]\nkind = \"command\"\nargv = [\"sh\", \"-c\", \"cat >> {}\"]\non = [\"completed\"]\n",
            got.display()
        ),
    );
    p.install_hooks("scripted");
    let mut drover = p
        .drover()
        .args([
            "run",
            "--cli",
            "scripted",
            "--workspace",
            "tmux",
            "Reply with exactly: ORPHAN @sleep=3000",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("drover run");
    let run_id = p.first_run_working();
    drover.kill().expect("SIGKILL drover");
    let _ = drover.wait();
    // A follower notices the dead driver and settles the run once the CLI
    // has finished; the notification comes from that verdict.
    let follow = Follow::start(&p);
    let lines = follow.until("reconciled verdict", |l| {
        l["run"] == run_id.as_str() && l["kind"] == "verdict"
    });
    let verdict = lines
        .iter()
        .find(|l| l["kind"] == "verdict")
        .expect("verdict");
    assert_eq!(
        (verdict["state"].as_str(), verdict["source"].as_str()),
        (Some("completed"), Some("reconcile")),
        "{verdict:#}"
    );
    let sent = wait_for("the notification", Duration::from_secs(30), || {
        let lines = command_lines(&got);
        (!lines.is_empty()).then_some(lines)
    });
    assert_eq!(sent[0]["run"], run_id.as_str());
    assert_eq!(sent[0]["event"], "completed");
    // Settling again (status) neither notifies nor leaves anything running.
    ok(&p, &["status", "--json"]);
    drop(follow);
    assert_eq!(command_lines(&got).len(), 1);
    assert_no_tmux(&p);
    assert_nothing_left(&p);
}

#[test]
fn a_herdr_seat_blocks_with_evidence_from_herdrs_own_status() {
    let p = Project::with_fake_herdr(&[]);
    p.install_hooks("scripted");
    ok(
        &p,
        &["up", "dev", "--cli", "scripted", "--workspace", "herdr"],
    );
    let seat = json(&p, &["seats", "--json"]);
    let pane = seat["seats"][0]["pane"]["pane"]
        .as_str()
        .expect("pane id")
        .to_string();
    let follow = Follow::start(&p);
    let mut send = p
        .drover()
        .args([
            "send",
            "--json",
            "dev",
            "Reply with exactly: SLOW @sleep=6000",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("send");
    follow.until("working", |l| l["seat"] == "dev" && l["state"] == "working");
    // herdr's own reading says the agent waits for someone.
    let herdr = p.herdr.as_ref().expect("herdr");
    let reply = herdr.call(
        "pane.report_agent",
        serde_json::json!({"pane_id": pane, "source": "custom:test", "agent": "claude", "state": "blocked"}),
    );
    assert!(reply.get("result").is_some(), "{reply:#}");
    let lines = follow.until("blocked", |l| l["seat"] == "dev" && l["state"] == "blocked");
    let blocked = lines
        .iter()
        .find(|l| l["state"] == "blocked")
        .expect("blocked");
    assert_eq!(blocked["source"], "herdr:blocked", "{blocked:#}");
    assert_eq!(
        blocked["detail"]["evidence"],
        "herdr reads the agent as blocked"
    );
    let listed = json(&p, &["seats", "--json"]);
    assert_eq!(listed["seats"][0]["state"], "blocked", "{listed:#}");
    assert_eq!(
        listed["seats"][0]["evidence"],
        "herdr reads the agent as blocked"
    );
    herdr.call(
        "pane.report_agent",
        serde_json::json!({"pane_id": pane, "source": "custom:test", "agent": "claude", "state": "working"}),
    );
    let out = send.wait().expect("send ends");
    assert!(out.success());
    let mut text = String::new();
    send.stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut text)
        .expect("read");
    let result: Value = serde_json::from_str(&text).expect("send JSON");
    assert_eq!(result["reply"], "SLOW", "{result:#}");
    ok(&p, &["down", "dev"]);
    let panes = herdr.call("pane.list", serde_json::json!({}));
    assert_eq!(
        panes["result"]["panes"].as_array().map(Vec::len),
        Some(0),
        "{panes:#}"
    );
    assert_nothing_left(&p);
}

#[test]
fn a_herdr_that_answers_errors_fails_the_run_with_its_error() {
    let p = Project::with_fake_herdr(&["--fail", "layout.apply=internal_error"]);
    p.install_hooks("scripted");
    let (doc, code) = p.run(&[
        "--cli",
        "scripted",
        "--workspace",
        "herdr",
        "Reply with exactly: NO",
    ]);
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("crashed"), 1),
        "{doc:#}"
    );
    assert!(
        doc["reason"]
            .as_str()
            .is_some_and(|r| r.contains("herdr layout.apply refused: internal_error")),
        "{doc:#}"
    );
    // The workspace it made for the run is gone again.
    let herdr = p.herdr.as_ref().expect("herdr");
    let spaces = herdr.call("workspace.list", serde_json::json!({}));
    assert_eq!(
        spaces["result"]["workspaces"].as_array().map(Vec::len),
        Some(0),
        "{spaces:#}"
    );
}

#[test]
fn a_herdr_that_disappears_mid_session_is_not_a_crash() {
    let mut p = Project::with_fake_herdr(&[]);
    p.install_hooks("scripted");
    let child = p
        .drover()
        .args([
            "run",
            "--json",
            "--cli",
            "scripted",
            "--workspace",
            "herdr",
            "--timeout",
            "6s",
            "--teardown-grace",
            "1s",
            "work @hang",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("drover run");
    p.first_run_working();
    p.herdr.as_mut().expect("herdr").kill();
    let out = child.wait_with_output().expect("drover ends");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("a verdict");
    // Could not ask is not gone: the deadline decides.
    assert_eq!(doc["status"], "timeout", "{doc:#}");
    let lifecycle = std::fs::read_to_string(
        p.run_dir(doc["run_id"].as_str().unwrap_or_default())
            .join("tasks/scripted/lifecycle.jsonl"),
    )
    .unwrap_or_default();
    assert!(lifecycle.contains("herdr is not running"), "{lifecycle}");
    assert_nothing_left(&p);
}
