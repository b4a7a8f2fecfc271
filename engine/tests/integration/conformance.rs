//! `drover adapter check` runs the conformance suite: a built-in adapter
//! passes its own, a component that gets its claims wrong fails each claim
//! with the verdict that fits, and answers that differ from the family's
//! are disagreements.

use crate::support;

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;
use support::{drover_exe, shared_cache};

fn check(args: &[&str]) -> (Output, Value) {
    let project = tempfile::tempdir().expect("tempdir");
    let out = Command::new(drover_exe())
        .args(["--project"])
        .arg(project.path())
        .args(["adapter", "check", "--json"])
        .args(args)
        .env("DROVER_CACHE_DIR", shared_cache())
        .output()
        .expect("drover");
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON document ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out, report)
}

fn guest(file: &str) -> String {
    PathBuf::from(drover_guest_builds::DIR)
        .join(file)
        .display()
        .to_string()
}

/// (capability, check) -> result
fn results(report: &Value) -> Vec<(String, String, String)> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["capability"].as_str().unwrap_or_default().to_string(),
                f["check"].as_str().unwrap_or_default().to_string(),
                f["result"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn result_of<'a>(
    results: &'a [(String, String, String)],
    capability: &str,
    check: &str,
) -> &'a str {
    results
        .iter()
        .find(|(c, k, _)| c == capability && k == check)
        .map(|(_, _, r)| r.as_str())
        .unwrap_or_else(|| panic!("no finding {capability}/{check} in {results:?}"))
}

#[test]
fn a_built_in_adapter_passes_its_own_checks() {
    let (out, report) = check(&["codex"]);
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    assert_eq!(report["family"], "codex");
    assert_eq!(report["failed_capabilities"], Value::Array(vec![]));
    let results = results(&report);
    // Every capability codex claims ran at least one check.
    for capability in [
        "prompt",
        "commands",
        "headless",
        "hook-config",
        "hook-payloads",
        "transcripts",
        "usage",
        "faults",
        "screen",
    ] {
        assert!(
            results.iter().any(|(c, ..)| c == capability),
            "{capability}"
        );
    }
    assert!(results.iter().all(|(.., r)| r == "answered"), "{results:?}");
}

#[test]
fn each_claim_a_component_gets_wrong_fails_with_its_verdict() {
    let (out, report) = check(&[&guest("drover_test_liar.wasm")]);
    assert_eq!(out.status.code(), Some(1), "{report:#}");
    assert_eq!(report["family"], Value::Null);
    let results = results(&report);
    assert_eq!(result_of(&results, "prompt", "templates"), "declined");
    assert_eq!(
        result_of(&results, "hook-payloads", "captured-payloads"),
        "broke-bound"
    );
    assert_eq!(result_of(&results, "faults", "prose"), "disagreed");
    assert_eq!(
        result_of(&results, "faults", "profile-patterns"),
        "answered"
    );
    assert_eq!(result_of(&results, "screen", "blank-screen"), "disagreed");
    assert_eq!(
        result_of(&results, "usage", "no-usage-is-none"),
        "disagreed"
    );
    assert_eq!(result_of(&results, "usage", "unknown-parser"), "answered");
    let failed: Vec<&str> = report["failed_capabilities"]
        .as_array()
        .expect("failed capabilities")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        failed,
        ["prompt", "hook-payloads", "usage", "faults", "screen"]
    );
    // Capabilities it does not claim are not checked.
    assert!(
        !results
            .iter()
            .any(|(c, ..)| c == "commands" || c == "transcripts")
    );
}

#[test]
fn answers_that_differ_from_the_named_family_are_disagreements() {
    let old = guest("drover_test_v0_1.wasm");
    let (alone, report) = check(&[&old]);
    assert_eq!(alone.status.code(), Some(0), "{report:#}");
    let (compared, report) = check(&[&old, "--family", "claude"]);
    assert_eq!(compared.status.code(), Some(1), "{report:#}");
    assert_eq!(report["family"], "claude");
    let results = results(&report);
    assert_eq!(
        result_of(&results, "headless", "captured-turns"),
        "disagreed"
    );
    assert_eq!(result_of(&results, "screen", "captured-panes"), "disagreed");
}

#[test]
fn an_unknown_family_is_a_usage_error() {
    let out = Command::new(drover_exe())
        .args(["adapter", "check", "claude", "--family", "nosuch"])
        .output()
        .expect("drover");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nosuch"));
}
