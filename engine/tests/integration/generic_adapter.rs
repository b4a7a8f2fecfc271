//! A CLI no component knows, described by a profile alone, runs end to end
//! through the built-in generic adapter: headless from its `[turn]` table,
//! on tmux from its hook dialect and the common screen shapes, with its
//! family's fault rules and its own `env_fault_patterns`. The stand-in CLI
//! is the scripted one (Claude Code's formats, hooks read from
//! `.scripted/settings.json`) under a name drover does not know, and a
//! shell script.

use crate::support;

use std::os::unix::fs::PermissionsExt;

use serde_json::Value;
use support::{Project, tmux_required};

/// A user profile (user profiles need no trust) called `acme` for the
/// scripted CLI, with no `component`: the generic adapter drives it.
fn acme(turn: &str) -> String {
    format!(
        r#"name = "acme"
binary = "scripted-cli"
bypass_args = ["--permission-mode", "bypassPermissions"]
usage_parser = "claude-jsonl"
env_fault_patterns = ["^ACME-E\\d+ "]

[env]
IS_SANDBOX = "1"

[hooks]
dialect = "claude-settings-json"
config_path = ".scripted/settings.json"

[hooks.events]
SessionStart = "SessionStart"
Stop = "Stop"
SessionEnd = "SessionEnd"
{turn}"#
    )
}

const TURN: &str = r#"
[turn]
argv = ["-p", "{prompt}", "--output-format", "json"]
resume = ["--resume", "{id}"]
session_id = ["--session-id", "{id}"]
output = "json"
"#;

fn user_profile(p: &Project, text: &str) {
    let dir = p.home.join(".config/drover/profiles");
    std::fs::create_dir_all(&dir).expect("profiles dir");
    std::fs::write(dir.join("acme.toml"), text).expect("profile");
}

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
fn a_profile_only_cli_runs_headless_from_its_turn_table() {
    let p = Project::new();
    user_profile(&p, &acme(TURN));
    let (doc, code) = p.run(&["--cli", "acme", "Reply with exactly: FROM ACME"]);
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("completed"), 0),
        "{doc:#}"
    );
    assert_eq!(doc["reply"], "FROM ACME");
    // The result object's counts, read by their common key names.
    assert_eq!(doc["usage"]["input"], 1201, "{doc:#}");
    assert_eq!(doc["usage"]["cache_write"], 1302);
    assert_eq!(doc["usage"]["cache_read"], 1403);
    assert_eq!(doc["usage"]["output"], 57);
    let conversation = doc["session_id"].as_str().expect("conversation id");

    // `[turn] resume` continues it.
    let (again, code) = p.run(&[
        "--cli",
        "acme",
        "--resume",
        conversation,
        "Reply with exactly: AGAIN",
    ]);
    assert_eq!(
        (again["status"].as_str(), code),
        (Some("completed"), 0),
        "{again:#}"
    );
    assert_eq!(again["session_id"], conversation);

    // The hook dialect's family (Claude's) classifies the CLI's faults.
    let (doc, code) = p.run(&["--cli", "acme", "work @fault=529"]);
    assert_eq!(code, 1);
    assert_eq!(doc["fault"]["kind"], "overload", "{doc:#}");
}

#[test]
fn the_profiles_own_fault_patterns_apply() {
    let p = Project::new();
    let script = p.home.join("acme-cli");
    std::fs::write(
        &script,
        "#!/bin/sh\necho 'ACME-E42 daily quota exhausted' >&2\nexit 3\n",
    )
    .expect("script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    user_profile(
        &p,
        &acme(TURN).replace(
            "binary = \"scripted-cli\"",
            &format!("binary = \"{}\"", script.display()),
        ),
    );
    let (doc, code) = p.run(&["--cli", "acme", "hello"]);
    assert_eq!(code, 1, "{doc:#}");
    assert_ne!(doc["status"], "completed", "{doc:#}");
    assert!(
        doc["fault"]["evidence"]
            .as_str()
            .is_some_and(|e| e.contains("ACME-E42 daily quota exhausted")),
        "{doc:#}"
    );
}

#[test]
fn without_a_turn_table_it_runs_on_tmux_only_and_says_so() {
    let p = Project::new();
    user_profile(&p, &acme(""));
    let (doc, code) = p.run(&["--workspace", "headless", "--cli", "acme", "hi"]);
    assert_eq!(code, 1, "{doc:#}");
    assert_ne!(doc["status"], "completed", "{doc:#}");
    assert!(
        doc["reason"]
            .as_str()
            .is_some_and(|r| r.contains("has no [turn] argv, so it runs on tmux only")),
        "{doc:#}"
    );

    let profiles = json(&p.output(&["profiles", "--json"]));
    let row = profiles["profiles"]
        .as_array()
        .expect("profiles")
        .iter()
        .find(|r| r["name"] == "acme")
        .cloned()
        .expect("acme listed");
    assert_eq!(
        row["driver"], "generic (dialect claude-settings-json)",
        "{row:#}"
    );

    let validate = json(&p.output(&["validate", "--cli", "acme", "--json"]));
    let generic: Vec<&Value> = validate["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["check"] == "profile.generic")
        .collect();
    assert!(
        generic.iter().any(|f| f["severity"] == "warning"
            && f["message"]
                .as_str()
                .is_some_and(|m| m.contains("runs on tmux only"))),
        "{validate:#}"
    );
    assert!(
        generic
            .iter()
            .any(|f| f["detail"]["limitations"]
                .as_array()
                .is_some_and(|l| l.iter().any(|x| x
                    .as_str()
                    .is_some_and(|x| x.contains("cannot tell done from idle"))))),
        "{validate:#}"
    );
}

#[test]
fn on_tmux_its_hooks_and_the_common_screen_shapes_drive_it() {
    tmux_required();
    let p = Project::new();
    user_profile(&p, &acme(""));
    p.install_hooks("acme");
    let settings = std::fs::read_to_string(p.path().join(".scripted/settings.json"))
        .expect("the dialect's hook config was written");
    assert!(settings.contains("drover"), "{settings}");
    let (doc, code) = p.run(&[
        "--cli",
        "acme",
        "--workspace",
        "tmux",
        "--teardown-grace",
        "2s",
        "--timeout",
        "2m",
        "Reply with exactly: ON TMUX",
    ]);
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("completed"), 0),
        "{doc:#}"
    );
    let run_id = doc["run_id"].as_str().expect("run id");
    let states = p.states(run_id);
    assert!(states.contains(&"working".to_string()), "{states:?}");
    assert_eq!(
        states.last().map(String::as_str),
        Some("done"),
        "{states:?}"
    );
}
