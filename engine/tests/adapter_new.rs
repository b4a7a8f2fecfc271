//! `drover adapter new` produces a crate that builds into a component the
//! engine loads, and `drover adapter check` reports on it.

mod support;

use std::process::Command;

use support::drover_exe;

#[test]
fn a_new_adapter_builds_loads_and_checks() {
    let dir = tempfile::tempdir().expect("tempdir");
    let crate_dir = dir.path().join("mycli-adapter");
    let out = Command::new(drover_exe())
        .args(["adapter", "new", "mycli", "--dir"])
        .arg(&crate_dir)
        .output()
        .expect("drover");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let wit = std::fs::read_to_string(crate_dir.join("wit/adapter.wit")).expect("wit copied");
    assert_eq!(wit, include_str!("../../wit/adapter.wit"));
    // Refuses to overwrite.
    let again = Command::new(drover_exe())
        .args(["adapter", "new", "mycli", "--dir"])
        .arg(&crate_dir)
        .output()
        .expect("drover");
    assert_eq!(again.status.code(), Some(1));

    // A shared target dir keeps later runs of this test fast.
    let target = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("adapter-new-target");
    let build = Command::new(env!("CARGO"))
        .args(["build", "--release", "--target", "wasm32-wasip2", "-j2"])
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("cargo");
    assert!(
        build.status.success(),
        "{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let wasm = target.join("wasm32-wasip2/release/mycli_adapter.wasm");
    let check = Command::new(drover_exe())
        .args(["adapter", "check", "--json"])
        .arg(&wasm)
        .output()
        .expect("drover");
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&check.stdout).expect("json");
    let result = |export: &str| {
        report["checks"]
            .as_array()
            .and_then(|c| c.iter().find(|x| x["export"] == export))
            .map(|x| x["result"].clone())
    };
    assert_eq!(result("render-prompt"), Some("answered".into()));
    assert_eq!(result("headless-command"), Some("unsupported".into()));
    assert_eq!(report["component"], "mycli_adapter");
}
