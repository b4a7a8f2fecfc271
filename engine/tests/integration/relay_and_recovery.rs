//! The relay under load, and a run surviving the death of its drover.

use crate::support;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use drover::drops::DropParser;
use drover::run::{EventWatcher, HookRecord};
use drover::sandbox::CompileCache;
use drover::types::wit::CanonicalEvent;
use serde_json::Value;
use support::{Project, drover_exe, shared_cache, tmux_required};

/// Starts a relay the way a CLI's hook config does: `drover-relay`
/// (what `hooks install` registers) or `drover hook` (older configs).
fn start(
    relay: Relay,
    p: &Project,
    run_dir: &std::path::Path,
    task: &str,
    payload: &str,
) -> std::process::Child {
    let mut command = match relay {
        Relay::Fast => Command::new(support::relay_exe()),
        Relay::Drover => {
            let mut c = Command::new(drover_exe());
            c.arg("hook");
            c
        }
    };
    let mut child = command
        .args(["--cli", "scripted", "Stop"])
        .env("DROVER_RUN_DIR", run_dir)
        .env("DROVER_TASK_ID", task)
        .env("DROVER_CACHE_DIR", p.home.join("cache"))
        .env("HOME", &p.home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("relay starts");
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(payload.as_bytes());
    }
    child
}

#[derive(Clone, Copy, Debug)]
enum Relay {
    Fast,
    Drover,
}

/// The run's events, read as a session reads them.
fn read_events(run_dir: &std::path::Path) -> Vec<HookRecord> {
    let parser = DropParser::for_run(run_dir).with_compile_cache(CompileCache::at(shared_cache()));
    EventWatcher::new(run_dir.join("events"), parser).poll()
}

#[test]
fn a_thousand_concurrent_relays_lose_no_event_and_compile_nothing() {
    for relay in [Relay::Fast, Relay::Drover] {
        let p = Project::new();
        let run_dir = p.path().join(".drover/runs/burst");
        std::fs::create_dir_all(run_dir.join("events")).expect("run dir");
        // The compile cache is empty, as after an upgrade or in a new HOME:
        // a relay must not fill it (each one compiling took a minute for
        // a burst).
        let children: Vec<_> = (0..1000)
            .map(|i| start(relay, &p, &run_dir, "burst", &format!(r#"{{"session_id":"s{i}","transcript_path":"/t/{i}.jsonl","hook_event_name":"Stop"}}"#)))
            .collect();
        for child in children {
            let out = child.wait_with_output().expect("relay ends");
            assert!(out.status.success(), "a {relay:?} relay exited non-zero");
            assert!(
                out.stdout.is_empty(),
                "a relay printed to stdout: {:?}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        assert!(
            !p.home.join("cache").exists(),
            "a {relay:?} relay compiled a component"
        );
        let leftovers: Vec<String> = std::fs::read_dir(run_dir.join("events"))
            .expect("events")
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
        let records = read_events(&run_dir);
        let mut sessions = std::collections::BTreeSet::new();
        for record in &records {
            assert_eq!(record.kind, CanonicalEvent::Stop, "{record:?}");
            assert_eq!(record.error, None, "{record:?}");
            let session = record.session_id.clone().unwrap_or_default();
            let n = session.trim_start_matches('s');
            assert_eq!(
                record.transcript_path.as_deref(),
                Some(format!("/t/{n}.jsonl").as_str()),
                "a payload was corrupted"
            );
            sessions.insert(session);
        }
        assert_eq!(records.len(), 1000, "{relay:?}: events were lost");
        assert_eq!(sessions.len(), 1000, "{relay:?}: events were lost");
    }
}

#[test]
fn the_relay_is_inert_outside_a_session_and_never_fails() {
    for relay in [Relay::Fast, Relay::Drover] {
        let p = Project::new();
        let command = || match relay {
            Relay::Fast => Command::new(support::relay_exe()),
            Relay::Drover => {
                let mut c = Command::new(drover_exe());
                c.arg("hook");
                c
            }
        };
        let out = command()
            .args(["--cli", "scripted", "Stop"])
            .env_remove("DROVER_RUN_DIR")
            .env_remove("DROVER_TASK_ID")
            .stdin(Stdio::null())
            .output()
            .expect("relay");
        assert!(
            out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
            "{relay:?}"
        );
        // Garbage arguments, a missing run dir, a symlinked events dir: exit 0, nothing written.
        let run_dir = p.path().join(".drover/runs/r");
        std::fs::create_dir_all(&run_dir).expect("run dir");
        let outside = p.path().join("outside");
        std::fs::create_dir_all(&outside).expect("outside");
        std::os::unix::fs::symlink(&outside, run_dir.join("events")).expect("symlink");
        let out = start(relay, &p, &run_dir, "t", "{}")
            .wait_with_output()
            .expect("relay");
        assert!(out.status.success());
        assert_eq!(
            std::fs::read_dir(&outside).expect("outside").count(),
            0,
            "the {relay:?} relay followed a symlinked events dir"
        );
        let out = command()
            .args(["--bogus"])
            .env("DROVER_RUN_DIR", "/nonexistent")
            .env("DROVER_TASK_ID", "t")
            .stdin(Stdio::null())
            .output()
            .expect("relay");
        assert!(out.status.success(), "{relay:?}");
    }
}

#[test]
fn unreadable_payloads_still_publish_the_mapped_event() {
    let p = Project::new();
    let run_dir = p.path().join(".drover/runs/r");
    std::fs::create_dir_all(run_dir.join("events")).expect("run dir");
    let out = start(Relay::Fast, &p, &run_dir, "t", "this is not json")
        .wait_with_output()
        .expect("relay");
    assert!(out.status.success());
    let file = std::fs::read_dir(run_dir.join("events"))
        .expect("events")
        .filter_map(Result::ok)
        .next()
        .expect("one event");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        file.metadata().expect("meta").permissions().mode() & 0o777,
        0o600
    );
    let records = read_events(&run_dir);
    assert_eq!(records.len(), 1, "{records:?}");
    let record = &records[0];
    assert_eq!(
        record.kind,
        CanonicalEvent::Stop,
        "the profile maps Stop -> Stop"
    );
    assert_eq!(record.payload.as_deref(), Some("this is not json"));
    assert!(
        record
            .error
            .as_deref()
            .is_some_and(|e| e.contains("not valid JSON")),
        "{record:?}"
    );
    // The parsed record replaced the drop, with the same mode, in the
    // bucket of its time.
    let bucket = std::fs::read_dir(run_dir.join("events"))
        .expect("events")
        .filter_map(Result::ok)
        .next()
        .expect("one bucket");
    assert!(
        bucket.file_type().expect("type").is_dir(),
        "the drop is still there"
    );
    let file = std::fs::read_dir(bucket.path())
        .expect("bucket")
        .filter_map(Result::ok)
        .next()
        .expect("one record");
    assert!(file.file_name().to_string_lossy().ends_with(".json"));
    assert_eq!(
        file.metadata().expect("meta").permissions().mode() & 0o777,
        0o600
    );
}

#[test]
fn a_relay_for_another_cli_than_the_seats_publishes_nothing() {
    // Grok runs the project's Claude hooks too: drover's Claude relay fires
    // inside a Grok seat and must not speak for it.
    let p = Project::new();
    let run_dir = p.path().join(".drover/runs/r");
    std::fs::create_dir_all(run_dir.join("events")).expect("run dir");
    let events = || {
        std::fs::read_dir(run_dir.join("events"))
            .expect("events")
            .count()
    };
    let relay_in_seat = |seat: &str| {
        let out = Command::new(drover_exe())
            .args(["hook", "--cli", "scripted", "Stop"])
            .env("DROVER_RUN_DIR", &run_dir)
            .env("DROVER_TASK_ID", "t")
            .env("DROVER_SEAT_CLI", seat)
            .env("DROVER_CACHE_DIR", shared_cache())
            .env("HOME", &p.home)
            .stdin(Stdio::null())
            .output()
            .expect("relay runs");
        assert!(out.status.success());
    };
    relay_in_seat("grok");
    assert_eq!(events(), 0, "a scripted relay in a grok seat was published");
    relay_in_seat("scripted");
    assert_eq!(events(), 1, "the seat's own relay is published");
}

/// Polls `drover status --json` until the run's task has a verdict.
fn wait_for_verdict(p: &Project, run_id: &str, within: Duration) -> Value {
    let until = Instant::now() + within;
    loop {
        let out = p.output(&["status", "--json", run_id]);
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let task = doc["runs"][0]["tasks"][0].clone();
        if !task["verdict"].is_null() {
            return task;
        }
        assert!(
            Instant::now() < until,
            "no verdict for {run_id} in time: {doc:#}"
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

fn kill_drover_mid_session(workspace: &str) {
    let p = Project::new();
    if workspace == "tmux" {
        tmux_required();
        p.install_hooks("scripted");
    }
    let mut drover = p
        .drover()
        .args([
            "run",
            "--cli",
            "scripted",
            "--workspace",
            workspace,
            "Reply with exactly: SURVIVED @hold=release",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("drover run starts");
    // Wait until the CLI is working, then kill drover without warning.
    let run_id = p.first_run_working();
    drover.kill().expect("SIGKILL drover");
    let _ = drover.wait();
    // While the CLI still works, status must not invent a verdict.
    let out = p.output(&["status", "--json", &run_id]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("status JSON");
    assert_eq!(doc["runs"][0]["driver_alive"], false);
    assert!(
        doc["runs"][0]["tasks"][0]["verdict"].is_null(),
        "a verdict before the CLI finished: {doc:#}"
    );
    std::fs::write(p.path().join("release"), "").expect("release the turn");
    let task = wait_for_verdict(&p, &run_id, crate::support::HANG);
    assert_eq!(task["verdict"], "completed", "{task:#}");
    assert_eq!(task["reconciled"], true);
    let session: Value = serde_json::from_str(
        &std::fs::read_to_string(p.run_dir(&run_id).join("tasks/scripted/session.json"))
            .expect("session.json"),
    )
    .expect("json");
    assert_eq!(session["status"], "completed");
    if workspace == "headless" {
        assert_eq!(session["reply"], "SURVIVED");
    }
    assert_eq!(session["usage"]["input"], 1201, "{session:#}");
    // Asking again changes nothing (the verdict is recorded once).
    let verdicts = p
        .journal(&run_id)
        .iter()
        .filter(|l| l["kind"] == "verdict")
        .count();
    let _ = p.output(&["status", "--json", &run_id]);
    assert_eq!(
        p.journal(&run_id)
            .iter()
            .filter(|l| l["kind"] == "verdict")
            .count(),
        verdicts
    );
}

#[test]
fn a_killed_drover_headless_run_is_recovered() {
    kill_drover_mid_session("headless");
}

#[test]
fn a_killed_drover_tmux_run_is_recovered() {
    kill_drover_mid_session("tmux");
}

/// Whether an ELF executable asks for a dynamic loader (a `PT_INTERP`
/// program header); `None` when the bytes are not a 64-bit ELF.
fn wants_a_loader(elf: &[u8]) -> Option<bool> {
    if elf.get(..5)? != b"\x7fELF\x02" {
        return None;
    }
    let u16_at = |at: usize| Some(u16::from_le_bytes(elf.get(at..at + 2)?.try_into().ok()?));
    let offset = usize::try_from(u64::from_le_bytes(elf.get(0x20..0x28)?.try_into().ok()?)).ok()?;
    let (size, count) = (usize::from(u16_at(0x36)?), usize::from(u16_at(0x38)?));
    (0..count)
        .map(|i| elf.get(offset + i * size..offset + i * size + 4))
        .map(|kind| kind.map(|k| k == 3u32.to_le_bytes()))
        .try_fold(false, |found, interp| Some(found || interp?))
}

#[test]
fn doctor_says_which_relay_is_registered() {
    let p = Project::new();
    let doctor = || -> Value {
        let out = p.output(&["doctor", "--json"]);
        serde_json::from_slice(&out.stdout).expect("doctor --json prints JSON")
    };
    let path = drover::hooks::embedded::path_in(&p.home.join(".local/share"));
    let before = doctor();
    let relay = &before["relay"];
    assert_eq!(relay["path"], path.display().to_string(), "{relay}");
    assert_eq!(
        relay["command"],
        format!("{} --cli NAME", path.display()),
        "{relay}"
    );
    assert_eq!(relay["exists"], false, "{relay}");

    p.install_hooks("scripted");
    let after = doctor();
    assert_eq!(after["relay"]["exists"], true, "{}", after["relay"]);
    let bytes = std::fs::read(&path).expect("hooks install wrote the relay");
    let loader = wants_a_loader(&bytes).expect("an ELF executable");
    assert_eq!(
        after["relay"]["linking"],
        if loader { "dynamic" } else { "static" },
        "{}",
        after["relay"]
    );
    // On glibc Linux the relay users get is the statically linked one.
    if cfg!(all(
        target_os = "linux",
        target_env = "gnu",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )) {
        assert!(!loader, "the relay drover carries is dynamically linked");
    }
    let text = String::from_utf8_lossy(&p.output(&["doctor"]).stdout).into_owned();
    assert!(
        text.contains(&format!("hook relay: {} --cli NAME EVENT", path.display())),
        "{text}"
    );
}
