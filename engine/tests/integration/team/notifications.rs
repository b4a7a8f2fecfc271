//! Notifications at a local webhook and a command, once per event.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::{command_lines, ok, user_config, wait_for};
use crate::support::Project;

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
#[test]
fn a_blocked_seat_and_a_completed_run_reach_a_webhook_and_a_command_once() {
    let p = Project::new();
    let (url, bodies) = receiver();
    let got = p.path().join("command.jsonl");
    let hanging = p.path().join("hanging-notifier.pid");
    user_config(
        &p,
        &format!(
            "[[notify]]\nkind = \"webhook\"\nurl = \"{url}\"\nheaders = {{ X-Token = \"t0k\" }}\non = [\"blocked\", \"completed\"]\n\n[[notify]]\nkind = \"command\"\nargv = [\"sh\", \"-c\", \"cat >> {}\"]\non = [\"blocked\", \"completed\"]\n\n[[notify]]\nkind = \"command\"\nargv = [\"sh\", \"-c\", \"echo $$ > {}; exec sleep 600\"]\non = [\"completed\"]\n",
            got.display(),
            hanging.display()
        ),
    );
    p.install_hooks("scripted");
    let (doc, _) = p.run(&[
        "--cli",
        "scripted",
        "--workspace",
        "headless",
        "Reply with exactly: FINE",
    ]);
    assert_eq!(doc["status"], "completed", "{doc:#}");
    // A hanging notifier never delays the session: drover has answered
    // while it still runs.
    let notifier = wait_for("the hanging notifier", crate::support::HANG, || {
        std::fs::read_to_string(&hanging)
            .ok()
            .and_then(|t| t.trim().parse::<i32>().ok())
    });
    // SAFETY: signal 0 only probes; SIGKILL ends the notifier this test's
    // configuration started.
    unsafe {
        assert_eq!(libc::kill(notifier, 0), 0, "the notifier had ended");
        libc::kill(notifier, libc::SIGKILL);
    }
    let completed_run = doc["run_id"].as_str().expect("run id").to_string();
    ok(
        &p,
        &["up", "dev", "--cli", "scripted", "--workspace", "headless"],
    );
    let blocked = p.output(&["send", "--json", "dev", "clean up @blocked"]);
    assert_eq!(blocked.status.code(), Some(1));
    let arrived = wait_for("both webhook posts", crate::support::HANG, || {
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
    let commands = wait_for("both command runs", crate::support::HANG, || {
        let lines = command_lines(&got);
        (lines.len() >= 2).then_some(lines)
    });
    assert_eq!(commands.len(), 2);
    // Asking again (status, events) sends nothing twice.
    ok(&p, &["status", "--json"]);
    ok(&p, &["events", "--json"]);
    let ledger = p.run_dir(&completed_run).join("notify");
    let records: Vec<Value> = wait_for("the ledger to settle", crate::support::HANG, || {
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
