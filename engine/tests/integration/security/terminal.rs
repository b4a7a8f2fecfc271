//! The terminal and the relay. Text drover does not control — here a live
//! ACP agent's question, whose option ids carry an OSC 52 clipboard write
//! and a screen clear — reaches the terminal only escaped, from `drover
//! seats` and `drover answer` alike (break 10). The hook relay, in both its
//! forms, survives an argument that is not UTF-8 and keeps its log private
//! (break 13).

use crate::support;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::Project;

/// ESC, BEL, or a C1 CSI: anything a terminal would act on.
fn terminal_controls(bytes: &[u8]) -> bool {
    bytes.iter().any(|&b| b == 0x1b || b == 0x07)
        || String::from_utf8_lossy(bytes).contains('\u{9b}')
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Stops the seat however the test ends: its host and agent outlive drover.
struct Seat<'a>(&'a Project, &'a str);

impl Drop for Seat<'_> {
    fn drop(&mut self) {
        let _ = self.0.output(&["down", self.1]);
    }
}

#[test]
fn an_agents_question_reaches_the_terminal_escaped() {
    let p = Project::new();
    let up = p.output(&["up", "ace", "--cli", "scripted", "--workspace", "acp"]);
    assert!(up.status.success(), "{}", text(&up.stderr));
    let _seat = Seat(&p, "ace");
    let mut send = p
        .drover()
        .args([
            "send",
            "--json",
            "ace",
            "Reply with exactly: A1 @blocked @escapes",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("send");
    let until = Instant::now() + crate::support::HANG;
    let question = loop {
        let out = p.output(&["seats", "--json"]);
        assert!(!terminal_controls(&out.stdout), "{}", text(&out.stdout));
        let all: Value = serde_json::from_slice(&out.stdout).expect("seats --json stays JSON");
        let question = all["seats"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["nick"] == "ace"))
            .map(|s| s["question"].clone())
            .unwrap_or_default();
        if question.is_object() {
            break question;
        }
        assert!(Instant::now() < until, "no question: {all:#}");
        std::thread::sleep(Duration::from_millis(50));
    };
    // The agent's text is kept as it was (the JSON has it escaped, not lost).
    assert_eq!(
        question["options"][2]["id"], "reject\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{1b}[2J",
        "{question:#}"
    );

    let listed = p.output(&["seats"]);
    assert!(listed.status.success(), "{}", text(&listed.stderr));
    for stream in [&listed.stdout, &listed.stderr] {
        assert!(!terminal_controls(stream), "{}", text(stream));
    }
    assert!(
        text(&listed.stdout).contains("reject\\x1b]52;c;cm0gLXJmIH4=\\x07\\x1b[2J"),
        "{}",
        text(&listed.stdout)
    );

    // A wrong option lists the options in the error.
    let wrong = p.output(&["answer", "ace", "no-such-option"]);
    assert_eq!(wrong.status.code(), Some(1), "{}", text(&wrong.stderr));
    for stream in [&wrong.stdout, &wrong.stderr] {
        assert!(!terminal_controls(stream), "{}", text(stream));
    }
    assert!(
        text(&wrong.stderr).contains("\\x1b]52"),
        "{}",
        text(&wrong.stderr)
    );

    let answered = p.output(&["answer", "ace", "3"]);
    assert!(answered.status.success(), "{}", text(&answered.stderr));
    for stream in [&answered.stdout, &answered.stderr] {
        assert!(!terminal_controls(stream), "{}", text(stream));
    }
    assert!(
        text(&answered.stdout).contains("reject\\x1b]52"),
        "{}",
        text(&answered.stdout)
    );
    let json = p.output(&["answer", "--json", "ace", "3"]);
    assert!(!terminal_controls(&json.stdout), "{}", text(&json.stdout));

    let _ = send.kill();
    let _ = send.wait();
}

#[test]
fn the_relay_takes_any_argument_and_keeps_its_log_private() {
    let p = Project::new();
    let run = p.path().join(".drover/runs/r1");
    std::fs::create_dir_all(&run).expect("run dir");
    // `events` that is not a directory: every drop fails, and the relay
    // notes the failure in its log.
    std::fs::write(run.join("events"), "not a directory").expect("events");
    let odd = OsStr::from_bytes(b"Stop\xff\xfe");
    let relays: [(std::path::PathBuf, Vec<&OsStr>); 2] = [
        (
            support::relay_exe(),
            vec![OsStr::new("--cli"), OsStr::new("claude"), odd],
        ),
        (
            support::drover_exe(),
            vec![OsStr::new("hook"), OsStr::new("--cli"), odd, odd],
        ),
    ];
    for (program, args) in &relays {
        // Outside a session (inert) and inside one.
        for run_dir in [None, Some(&run)] {
            let mut relay = Command::new(program);
            relay
                .args(args)
                .stdin(Stdio::null())
                .env_remove("DROVER_SEAT_CLI");
            match run_dir {
                Some(dir) => relay.env("DROVER_RUN_DIR", dir).env("DROVER_TASK_ID", "t1"),
                None => relay
                    .env_remove("DROVER_RUN_DIR")
                    .env_remove("DROVER_TASK_ID"),
            };
            let out = relay.output().expect("relay runs");
            assert_eq!(
                out.status.code(),
                Some(0),
                "{} {args:?}: {}",
                program.display(),
                text(&out.stderr)
            );
            assert!(
                !text(&out.stderr).contains("panicked"),
                "{}",
                text(&out.stderr)
            );
            assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
        }
    }
    let log = run.join("logs/relay.log");
    let noted = std::fs::read_to_string(&log).expect("the failures are noted");
    assert_eq!(noted.lines().count(), 2, "{noted}");
    let mode = std::fs::metadata(&log).expect("log").permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "relay.log is {:o}", mode & 0o777);

    // A link planted where the log goes is not written through.
    std::fs::remove_file(&log).expect("rm log");
    let elsewhere = p.path().join("elsewhere.txt");
    std::fs::write(&elsewhere, "").expect("target");
    std::os::unix::fs::symlink(&elsewhere, &log).expect("link");
    let out = Command::new(support::relay_exe())
        .args(["--cli", "claude", "Stop"])
        .env("DROVER_RUN_DIR", &run)
        .env("DROVER_TASK_ID", "t1")
        .stdin(Stdio::null())
        .output()
        .expect("relay runs");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(&elsewhere).expect("target"), b"");
}

/// `drover … | head`: when the reader of drover's output has gone, drover
/// stops as other tools do (SIGPIPE), with no panic on stderr, although the
/// process otherwise ignores SIGPIPE (a CLI's closed stdin must not kill it).
#[test]
fn a_reader_that_left_ends_drover_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let p = Project::new();
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let out = p
        .drover()
        .args(["profiles"])
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("drover profiles");
    assert_eq!(
        out.status.signal(),
        Some(libc::SIGPIPE),
        "{:?}: {}",
        out.status,
        text(&out.stderr)
    );
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}
