//! Claude Code refuses to bypass its permission checks under root unless
//! `IS_SANDBOX=1`: drover turns the refusal into a fault with a hint, and
//! `doctor`/`validate` warn before a run. The scripted CLI behaves the same
//! way when a prompt says `@as-root`.

use crate::support;

use support::Project;

/// A user profile like the built-in scripted one, without `IS_SANDBOX`.
fn unsandboxed(p: &Project) {
    let dir = p.home.join(".config/drover/profiles");
    std::fs::create_dir_all(&dir).expect("profiles");
    let text = include_str!("../../../profiles/scripted.toml")
        .replace("name = \"scripted\"", "name = \"rooty\"")
        .replace("IS_SANDBOX = \"1\"\n", "");
    assert!(!text.contains("IS_SANDBOX ="));
    std::fs::write(dir.join("rooty.toml"), text).expect("profile");
}

#[test]
fn the_refusal_is_a_typed_fault_with_a_hint() {
    let p = Project::new();
    unsandboxed(&p);
    let (doc, code) = p.run(&["--cli", "rooty", "@as-root Reply with exactly: hi"]);
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("crashed"), 1),
        "{doc}"
    );
    assert_eq!(doc["fault"]["kind"], "privileges", "{doc}");
    assert_eq!(doc["fault"]["rule"], "claude/root-bypass", "{doc}");
    assert_eq!(
        doc["fault"]["evidence"],
        "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"
    );
    assert!(
        doc["fault"]["hint"]
            .as_str()
            .is_some_and(|h| h.contains("IS_SANDBOX = \"1\"") && h.contains("--no-bypass")),
        "{doc}"
    );
    // The human summary says what to do.
    let out = p.output(&["run", "--cli", "rooty", "@as-root hi"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("  hint: The CLI will not skip its permission checks as root (Claude Code: unless IS_SANDBOX=1)"),
        "{stdout}"
    );
    // With the variable (the built-in stand-in sets it) the turn runs.
    let (doc, code) = p.run(&["--cli", "scripted", "@as-root Reply with exactly: hi"]);
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("completed"), 0),
        "{doc}"
    );
}

#[test]
fn doctor_and_validate_warn_under_root_only() {
    let p = Project::new();
    unsandboxed(&p);
    let out = p.output(&["doctor", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one document");
    let warnings = |name: &str| {
        doc["profiles"]
            .as_array()
            .expect("profiles")
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| p["warnings"].to_string())
            .unwrap_or_default()
    };
    let out = p.output(&["validate", "--cli", "rooty", "--json"]);
    let validated: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one document");
    let root_findings = validated["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["check"] == "profile.root")
        .count();
    if drover::privileges::running_as_root() {
        assert!(
            warnings("rooty")
                .contains("Claude Code refuses bypassPermissions under root unless IS_SANDBOX=1"),
            "{doc}"
        );
        assert_eq!(root_findings, 1, "{validated}");
    } else {
        assert_eq!(warnings("rooty"), "[]", "{doc}");
        assert_eq!(root_findings, 0, "{validated}");
    }
    // The built-in stand-in sets IS_SANDBOX: never a warning.
    assert_eq!(warnings("scripted"), "[]", "{doc}");
}
