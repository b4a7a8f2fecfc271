//! The crates' dependency direction, checked: a crate may depend only on
//! crates below it in [`LAYERS`], so an embedder can take the lower ones
//! without the command line, and a cycle cannot creep in.

/// Lowest first. A new crate gets its place here (the test refuses one that
/// has none).
const LAYERS: &[(&str, &str)] = &[
    ("drover-build", "crates/build"),
    ("drover-gate", "crates/gate"),
    ("drover-sandbox", "crates/sandbox"),
    ("drover-state", "crates/state"),
    ("drover-relay", "crates/relay"),
    ("drover-run", "crates/run"),
    ("drover-profile", "crates/profile"),
    ("drover-usage", "crates/usage"),
    ("drover-acp", "crates/acp"),
    ("drover-workspace", "crates/workspace"),
    ("drover-session", "crates/session"),
    ("drover", "engine"),
];

fn manifest(dir: &str) -> toml::Table {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = root.join(dir).join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn drover_dependencies(manifest: &toml::Table) -> Vec<String> {
    ["dependencies", "build-dependencies"]
        .iter()
        .filter_map(|section| manifest.get(*section).and_then(|d| d.as_table()))
        .flat_map(|deps| deps.keys().cloned())
        .filter(|name| name.starts_with("drover"))
        .collect()
}

#[test]
fn every_crate_depends_only_on_lower_ones() {
    for (level, (name, dir)) in LAYERS.iter().enumerate() {
        let manifest = manifest(dir);
        let declared = manifest
            .get("package")
            .and_then(|p| p.get("name"))
            .and_then(|n| n.as_str());
        assert_eq!(declared, Some(*name), "{dir}/Cargo.toml");
        for dependency in drover_dependencies(&manifest) {
            let below = LAYERS[..level]
                .iter()
                .any(|(lower, _)| *lower == dependency);
            assert!(
                below,
                "{name} depends on {dependency}, which is not below it in the layering"
            );
        }
    }
}

#[test]
fn every_workspace_crate_has_a_layer() {
    let workspace = manifest(".");
    let members = workspace
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .expect("workspace members");
    for member in members.iter().filter_map(|m| m.as_str()) {
        if member.starts_with("tests/") {
            continue; // Test doubles (a scripted CLI, servers): not drover.
        }
        assert!(
            LAYERS.iter().any(|(_, dir)| *dir == member),
            "{member} has no place in the layering"
        );
    }
}
