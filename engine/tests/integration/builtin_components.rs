//! Every built-in component loads, describes itself, and agrees with the
//! engine's list of built-in dialects and parsers (used to validate profiles
//! without loading components).

use std::collections::BTreeSet;

use drover::profile::known;
use drover::sandbox::{CompileCache, Limits, Sandbox};

#[test]
fn every_builtin_describes_itself_and_matches_the_known_lists() {
    let sandbox = Sandbox::new(CompileCache::default_location()).expect("engine");
    let mut dialects = BTreeSet::new();
    let mut parsers = BTreeSet::from(["none".to_string()]);
    for builtin in drover::builtin::all() {
        let (adapter, _) = sandbox
            .load(
                builtin.name,
                builtin.bytes,
                builtin.sha256,
                Limits::default(),
            )
            .unwrap_or_else(|e| panic!("{}: {e}", builtin.name));
        let d = adapter.describe().expect("describe");
        assert_eq!(d.name, builtin.name);
        assert_eq!(d.wit_version, drover::sandbox::WIT_VERSION);
        dialects.extend(d.dialects);
        parsers.extend(d.usage_parsers.into_iter().map(|p| p.name));
    }
    let known_dialects: BTreeSet<String> = known::DIALECTS.iter().map(|s| s.to_string()).collect();
    let known_parsers: BTreeSet<String> = known::PARSERS.iter().map(|s| s.to_string()).collect();
    assert_eq!(dialects, known_dialects);
    assert_eq!(parsers, known_parsers);
}

#[test]
fn every_builtin_profile_has_a_builtin_component_or_is_a_profile_alone() {
    let catalog = drover::profile::Catalog::load(std::path::Path::new("/nonexistent-project"));
    assert!(catalog.errors().is_empty(), "{:?}", catalog.errors());
    let names: BTreeSet<&str> = catalog.profiles().iter().map(|p| p.name.as_str()).collect();
    let with_components = [
        "antigravity",
        "claude",
        "codex",
        "copilot",
        "cursor",
        "gemini",
        "grok",
        "muse",
        "opencode",
        "qwen",
        "scripted",
    ];
    // Driven by the generic adapter from their profiles alone.
    let profiles_alone = ["continue", "droid", "kilo"];
    // Driven through its REST API on the jules workspace: nothing is run.
    let api_only = ["jules"];
    let expected: BTreeSet<&str> = with_components
        .iter()
        .chain(&profiles_alone)
        .chain(&api_only)
        .copied()
        .collect();
    assert_eq!(names, expected);
    for name in api_only {
        let profile = catalog.find(name).expect("listed");
        assert!(
            drover::builtin::find(name).is_none(),
            "{name} has a component"
        );
        assert!(
            profile.hookless() && profile.turn.argv.is_empty(),
            "{name}: no hooks and no headless turn (its turns are API sessions)"
        );
    }
    for name in profiles_alone {
        let profile = catalog.find(name).expect("listed");
        assert!(
            drover::builtin::find(name).is_none(),
            "{name} has a component"
        );
        assert_eq!(
            profile.component,
            drover::profile::ComponentRef::Implicit(name.to_string()),
            "{name}"
        );
        assert!(
            profile.hookless() && !profile.turn.argv.is_empty(),
            "{name}: hookless, with [turn] argv"
        );
    }
}
