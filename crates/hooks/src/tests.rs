use super::*;

#[test]
fn relay_commands_keep_the_marker_verbatim() {
    let fast = Path::new("/home/me/.local/share/drover/relay/0123/drover-relay");
    let (relay, legacy) = relays_for(Path::new("/nonexistent/bin/drover"), Some(fast), "claude");
    assert_eq!(
        relay.command,
        "/home/me/.local/share/drover/relay/0123/drover-relay --cli claude"
    );
    assert_eq!(relay.marker, "drover-relay --cli");
    assert_eq!(legacy.command, "/nonexistent/bin/drover hook --cli claude");
    assert_eq!(legacy.marker, "drover hook --cli");
    let (relay, _) = relays_for(Path::new("/home/me/my tools/drover"), None, "claude");
    assert_eq!(
        relay.command,
        "'/home/me/my tools/'drover hook --cli claude"
    );
    assert!(relay.command.contains(&relay.marker));
}

#[test]
fn an_install_replaces_the_other_relays_entries_and_remove_restores_the_bytes() {
    let cache = CompileCache::at(std::env::temp_dir().join("drover-lib-tests-cache"));
    let sandbox = Sandbox::new(cache).expect("sandbox");
    let catalog = drover_profile::Catalog::load(Path::new("/nonexistent"));
    let profile = catalog.find("claude").expect("claude");
    let dir = tempfile::tempdir().expect("tempdir");
    let adapter = drover_profile::registry::bind_in(&sandbox, profile, dir.path()).expect("loads");
    let path = dir.path().join(&profile.hooks.config_path);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let original = "{\n  \"model\": \"x\"\n}\n";
    std::fs::write(&path, original).expect("write");
    let drover = Path::new("/opt/drover/bin/drover");
    let (legacy, _) = relays_for(drover, None, "claude");
    let (fast, _) = relays_for(drover, Some(&embedded::path_in(dir.path())), "claude");
    let older = requests_for(profile, (legacy.clone(), fast.clone())).expect("requests");
    let newer = requests_for(profile, (fast.clone(), legacy.clone())).expect("requests");
    // An older drover registered `drover hook`.
    install_with(&adapter, profile, dir.path(), older.clone()).expect("install");
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(
        text.contains(&legacy.marker) && !text.contains(&fast.marker),
        "{text}"
    );
    // This one registers the fast relay in their place, not beside them.
    let change = install_with(&adapter, profile, dir.path(), newer.clone()).expect("install");
    assert_eq!(change, Change::Written);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(!text.contains(&legacy.marker), "old entries left: {text}");
    let events = profile.hooks.events.len();
    assert_eq!(text.matches(&fast.marker).count(), events, "{text}");
    let status = status_with(&adapter, profile, dir.path(), newer.clone()).expect("status");
    assert!(status.missing.is_empty(), "{status:?}");
    assert_eq!(
        install_with(&adapter, profile, dir.path(), newer.clone()).expect("again"),
        Change::Unchanged
    );
    let removed = remove_with(&adapter, profile, dir.path(), newer).expect("remove");
    assert_eq!(removed, Change::Restored);
    assert_eq!(std::fs::read_to_string(&path).expect("read"), original);
}

#[test]
fn without_a_data_directory_drover_hook_is_registered() {
    let drover = Path::new("/opt/drover/bin/drover");
    let (relay, other) = relays_for(drover, None, "codex");
    assert_eq!(relay.command, "/opt/drover/bin/drover hook --cli codex");
    // Entries of the fast relay, wherever it was, are what it replaces.
    assert_eq!(other.marker, "drover-relay --cli");
}

#[test]
fn every_builtin_edit_passes_the_check_and_remove_restores_the_bytes() {
    // A cache shared between runs: compiling nine components takes a while.
    let cache = CompileCache::at(std::env::temp_dir().join("drover-lib-tests-cache"));
    let sandbox = Sandbox::new(cache).expect("sandbox");
    let catalog = drover_profile::Catalog::load(Path::new("/nonexistent"));
    let mut checked = 0;
    for profile in catalog.profiles().iter().filter(|p| !p.hookless()) {
        let dir = tempfile::tempdir().expect("tempdir");
        let adapter =
            drover_profile::registry::bind_in(&sandbox, profile, dir.path()).expect("loads");
        let path = dir.path().join(&profile.hooks.config_path);
        let json = path.extension().is_some_and(|e| e == "json");
        let original = "{\n\t\"mine\": {\"keep\": [1, \"a\"]},\n\t\"model\": \"x\"\n}\n";
        if json {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, original).expect("write");
        }
        // The relay's path as `install` registers it, without writing the
        // relay into this user's data directory.
        let fast = embedded::path_in(dir.path());
        let relays = relays_for(
            Path::new("/opt/drover/bin/drover"),
            Some(&fast),
            &profile.name,
        );
        let requests = requests_for(profile, relays).expect("requests");
        let installed = install_with(&adapter, profile, dir.path(), requests.clone())
            .unwrap_or_else(|e| panic!("{}: {e}", profile.name));
        assert_eq!(installed, Change::Written, "{}", profile.name);
        let removed = remove_with(&adapter, profile, dir.path(), requests)
            .unwrap_or_else(|e| panic!("{}: {e}", profile.name));
        if json {
            assert_eq!(removed, Change::Restored, "{}", profile.name);
            assert_eq!(std::fs::read_to_string(&path).expect("read"), original);
        } else {
            assert_eq!(removed, Change::Deleted, "{}", profile.name);
            assert!(!path.exists(), "{}", profile.name);
        }
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} profiles have hooks");
}
