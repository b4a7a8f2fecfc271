//! probe-adapter --probe: one real turn in a temporary workspace, every hook
//! payload captured and reduced to its shape, the transcript found from the
//! Stop payload, and the workspace gone afterwards on every exit path.

use crate::support;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::{Project, probe_leftovers, tmux_required};

fn probe(p: &Project, tmp: &Path, args: &[&str]) -> (Value, std::process::Output) {
    let mut cmd = p.drover();
    cmd.args(["probe-adapter", "--probe", "--json"])
        .args(args)
        .env("TMPDIR", tmp)
        .env("SCRIPTED_CLI_DIRECTIVES", "@reply=ZEBRA-7741");
    let out = cmd.output().expect("drover");
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (doc, out)
}

fn captured_natives(doc: &Value) -> Vec<String> {
    doc["hooks"]["captured"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|x| x["native"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn probe_captures_payloads_and_cleans_up(workspace: &str) {
    let p = Project::new();
    if workspace == "tmux" {
        tmux_required();
    }
    let tmp = p.path().join("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp");
    let (doc, out) = probe(
        &p,
        &tmp,
        &["scripted", "--workspace", workspace, "--timeout", "60s"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(doc["mode"], "probe", "{doc:#}");
    let natives = captured_natives(&doc);
    assert!(
        natives.contains(&"Stop".to_string()) && natives.contains(&"SessionStart".to_string()),
        "{natives:?}"
    );
    let stop = doc["hooks"]["captured"]
        .as_array()
        .and_then(|c| c.iter().find(|x| x["native"] == "Stop"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(stop["adapter_kind"], "stop", "{stop:#}");
    assert!(
        stop["payload_keys"]
            .as_array()
            .is_some_and(|k| k.iter().any(|x| x == "last_assistant_message")),
        "{stop:#}"
    );
    // The transcript came from the Stop payload and was parsed.
    assert_eq!(doc["tokens"]["parsed_usage"]["input"], 1201, "{doc:#}");
    // Schemas, never values: the reply travels in the Stop payload and the
    // transcript, and never reaches the report.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !text.contains("ZEBRA-7741"),
        "a payload value leaked into the report"
    );
    assert!(
        probe_leftovers(&tmp).is_empty(),
        "temp workspace left behind: {:?}",
        probe_leftovers(&tmp)
    );
}

#[test]
fn probe_headless() {
    probe_captures_payloads_and_cleans_up("headless");
}

#[test]
fn probe_tmux() {
    probe_captures_payloads_and_cleans_up("tmux");
}

#[test]
fn a_failing_turn_still_reports_and_cleans_up() {
    let p = Project::new();
    let tmp = p.path().join("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp");
    let mut cmd = p.drover();
    cmd.args([
        "probe-adapter",
        "--probe",
        "--json",
        "scripted",
        "--timeout",
        "30s",
    ])
    .env("TMPDIR", &tmp)
    .env("SCRIPTED_CLI_DIRECTIVES", "@fault=401");
    let out = cmd.output().expect("drover");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("report");
    let findings = doc["findings"].to_string();
    assert!(
        findings.contains("probe.turn") && findings.contains("crashed"),
        "{findings}"
    );
    assert!(
        findings.contains("probe.fault") && findings.contains("auth"),
        "{findings}"
    );
    assert!(probe_leftovers(&tmp).is_empty());
}

#[test]
fn an_interrupted_probe_removes_its_workspace() {
    let p = Project::new();
    let tmp = p.path().join("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp");
    let child = p
        .drover()
        .args(["probe-adapter", "--probe", "scripted", "--timeout", "120s"])
        .env("TMPDIR", &tmp)
        .env("SCRIPTED_CLI_DIRECTIVES", "@hang")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("drover");
    let until = Instant::now() + crate::support::HANG;
    // Wait until the turn runs (its run dir exists), then Ctrl-C.
    loop {
        let running = probe_leftovers(&tmp).iter().any(|d| {
            std::fs::read_dir(tmp.join(d).join("project/.drover/runs"))
                .is_ok_and(|mut r| r.next().is_some())
        });
        if running {
            break;
        }
        assert!(Instant::now() < until, "the probe never started its turn");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let out = child.wait_with_output().expect("exit");
    assert_eq!(out.status.code(), Some(130));
    assert!(out.stdout.is_empty(), "no report after an interrupt");
    assert!(
        probe_leftovers(&tmp).is_empty(),
        "temp workspace left behind after an interrupt: {:?}",
        probe_leftovers(&tmp)
    );
}

#[test]
fn a_broken_third_party_component_is_a_finding_not_a_crash() {
    let p = Project::new();
    let guests = std::path::PathBuf::from(drover_guest_builds::DIR);
    let adapters = p.path().join(".drover/adapters");
    std::fs::create_dir_all(&adapters).expect("adapters");
    std::fs::copy(
        guests.join("drover_test_hostile.wasm"),
        adapters.join("hostile.wasm"),
    )
    .expect("copy");
    let profiles = p.path().join(".drover/profiles");
    std::fs::create_dir_all(&profiles).expect("profiles");
    std::fs::write(
        profiles.join("broken.toml"),
        "name = \"broken\"\nbinary = \"scripted-cli\"\ncomponent = \"hostile\"\n[hooks]\ndialect = \"claude-settings-json\"\nconfig_path = \".scripted/settings.json\"\n[hooks.events]\nStop = \"Stop\"\n",
    )
    .expect("profile");
    let trusted = p.output(&["trust"]);
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    let tmp = p.path().join("tmp");
    std::fs::create_dir_all(&tmp).expect("tmp");
    let (doc, out) = probe(&p, &tmp, &["broken", "--timeout", "20s"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(doc["mode"], "probe");
    // The hostile component cannot build a headless command or install hooks: findings, not a crash.
    let findings = doc["findings"].to_string();
    assert!(
        findings.contains("probe.dialect") || findings.contains("probe.turn"),
        "{findings}"
    );
    assert!(probe_leftovers(&tmp).is_empty());
}
