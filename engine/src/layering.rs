//! The crates' dependency direction, checked: a crate may depend only on
//! crates below it in [`LAYERS`], so an embedder can take the lower ones
//! without the command line, and a cycle cannot creep in. And only the
//! crates in [`RUNS_COMPONENTS`] may reach wasmtime: the rest speak the
//! vocabulary through `drover-types` and build without a WebAssembly
//! runtime.

/// Lowest first. A new crate gets its place here (the test refuses one that
/// has none).
const LAYERS: &[(&str, &str)] = &[
    ("drover-build", "crates/build"),
    ("drover-types", "crates/types"),
    ("drover-gate", "crates/gate"),
    ("drover-config", "crates/config"),
    ("drover-sandbox", "crates/sandbox"),
    ("drover-state", "crates/state"),
    ("drover-relay", "crates/relay"),
    ("drover-run", "crates/run"),
    ("drover-profile", "crates/profile"),
    ("drover-usage", "crates/usage"),
    ("drover-acp", "crates/acp"),
    ("drover-workspace", "crates/workspace"),
    ("drover-hooks", "crates/hooks"),
    ("drover-trust", "crates/trust"),
    ("drover-notify", "crates/notify"),
    ("drover-ray", "crates/ray"),
    ("drover-turn", "crates/turn"),
    ("drover-drive", "crates/drive"),
    ("drover-seats", "crates/seats"),
    ("drover-budget", "crates/budget"),
    ("drover-probe", "crates/probe"),
    ("drover", "engine"),
];

fn manifest(dir: &str) -> toml::Table {
    manifest_at(&format!("{dir}/Cargo.toml"))
}

/// A TOML file under the repository root.
fn manifest_at(relative: &str) -> toml::Table {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let path = root.join(relative);
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

/// The crates that may depend on wasmtime, directly or not, and why. Any
/// other crate speaks the vocabulary through drover-types and builds
/// without a WebAssembly runtime.
const RUNS_COMPONENTS: &[(&str, &str)] = &[
    ("drover-sandbox", "it is the component host"),
    (
        "drover-profile",
        "it binds a profile to its loaded component",
    ),
    ("drover-usage", "tallies run in the profile's component"),
    (
        "drover-hooks",
        "the component proposes each hook-config edit",
    ),
    ("drover-trust", "it checks profiles, which name components"),
    ("drover-notify", "it reads settings through the trust store"),
    (
        "drover-ray",
        "it reads [ray] settings through the trust store",
    ),
    ("drover-turn", "drivers call the seat's component"),
    ("drover-drive", "the drivers"),
    ("drover-seats", "the seat host drives turns"),
    (
        "drover-budget",
        "spend is the turn ledger drover-turn keeps; seats are drover-seats'",
    ),
    (
        "drover-probe",
        "it asks the CLI's component and may run one turn",
    ),
    ("drover", "the command line"),
];

/// Each package's dependencies by name, from Cargo.lock (every feature's,
/// so a superset of any one build's: an optional wasmtime still counts).
fn locked_dependencies() -> std::collections::BTreeMap<String, Vec<String>> {
    let lock = manifest_at("Cargo.lock");
    let packages = lock
        .get("package")
        .and_then(|p| p.as_array())
        .expect("Cargo.lock has packages");
    packages
        .iter()
        .filter_map(|package| {
            let name = package.get("name")?.as_str()?.to_string();
            let dependencies = package
                .get("dependencies")
                .and_then(|d| d.as_array())
                .map(|d| {
                    d.iter()
                        .filter_map(|entry| entry.as_str())
                        // "name" or "name version" when two versions are locked.
                        .filter_map(|entry| entry.split(' ').next())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            Some((name, dependencies))
        })
        .collect()
}

/// Whether `from` reaches `to` through the locked dependency graph; the
/// path it took, for the failure message.
fn path_to(
    graph: &std::collections::BTreeMap<String, Vec<String>>,
    from: &str,
    to: &str,
) -> Option<Vec<String>> {
    let mut seen = std::collections::BTreeSet::new();
    let mut stack = vec![vec![from.to_string()]];
    while let Some(path) = stack.pop() {
        let last = path.last().cloned().unwrap_or_default();
        if last == to {
            return Some(path);
        }
        if !seen.insert(last.clone()) {
            continue;
        }
        for next in graph.get(&last).into_iter().flatten() {
            let mut longer = path.clone();
            longer.push(next.clone());
            stack.push(longer);
        }
    }
    None
}

#[test]
fn only_the_crates_that_run_components_reach_wasmtime() {
    let graph = locked_dependencies();
    for (name, _) in LAYERS {
        let reached = path_to(&graph, name, "wasmtime");
        if RUNS_COMPONENTS.iter().any(|(allowed, _)| allowed == name) {
            continue;
        }
        assert!(
            reached.is_none(),
            "{name} reaches wasmtime ({}), and is not one of the crates that may (RUNS_COMPONENTS): use drover-types for the vocabulary",
            reached.unwrap_or_default().join(" -> ")
        );
    }
    // The check can fail: the sandbox itself does reach it.
    assert!(path_to(&graph, "drover-sandbox", "wasmtime").is_some());
}
