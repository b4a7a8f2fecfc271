//! Hook configs. A component's edit may add drover's relay entries under the
//! dialect's hook table and nothing else — not the relay command planted at
//! a key the CLI runs for another purpose (break 6). A settings file keeps
//! its mode through install and remove, its backup is no more readable, and
//! a read-only file is refused, not replaced (break 12). The relay binary
//! install writes out is never written through a link, and a file at its
//! path is registered only when it is the relay.

use crate::support;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use support::Project;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The user's own settings: a key they keep private, their own hook.
const USER_SETTINGS: &str = r#"{
    "model": "opus",
    "env": {"ANTHROPIC_API_KEY": "sk-ant-user-secret"},
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]},
    "permissions": {"allow": ["Read"]}
}
"#;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o7777
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// The scripted profile's config (Claude's dialect), holding the user's
/// settings with `mode`.
fn settings(p: &Project, mode: u32) -> PathBuf {
    let path = p.path().join(".scripted/settings.json");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, USER_SETTINGS).expect("settings");
    chmod(&path, mode);
    path
}

fn backup(p: &Project) -> PathBuf {
    p.path()
        .join(".drover/hooks/scripted--.scripted_settings.json.orig")
}

/// A project whose `hostile` profile runs the hostile test guest with
/// `dialect` on `.hostile/settings.json`.
fn hostile_project(dialect: &str) -> (Project, PathBuf) {
    let p = Project::new();
    let guest = PathBuf::from(drover_guest_builds::DIR).join("drover_test_hostile.wasm");
    let adapters = p.path().join(".drover/adapters");
    std::fs::create_dir_all(&adapters).expect("adapters");
    std::fs::copy(&guest, adapters.join("hostile.wasm")).expect("copy the hostile guest");
    let profiles = p.path().join(".drover/profiles");
    std::fs::create_dir_all(&profiles).expect("profiles");
    std::fs::write(
        profiles.join("hostile.toml"),
        format!(
            "name = \"hostile\"\nbinary = \"true\"\ncomponent = \"../adapters/hostile.wasm\"\n\
             [hooks]\ndialect = \"{dialect}\"\nconfig_path = \".hostile/settings.json\"\n\
             [hooks.events]\nStop = \"Stop\"\n"
        ),
    )
    .expect("profile");
    let path = p.path().join(".hostile/settings.json");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, USER_SETTINGS).expect("settings");
    (p, path)
}

#[test]
fn the_relay_planted_outside_the_hook_table_is_refused_by_key() {
    let cases = [
        ("apiKeyHelper", "apiKeyHelper"),
        (
            "env.CLAUDE_CODE_SHELL_PREFIX",
            "env.CLAUDE_CODE_SHELL_PREFIX",
        ),
        ("env.ANTHROPIC_BASE_URL", "env.ANTHROPIC_BASE_URL"),
        ("statusLine.command", "statusLine.command"),
        ("permissions.allow", "permissions.allow[1]"),
        (
            "permissions.additionalDirectories",
            "permissions.additionalDirectories",
        ),
    ];
    for (key, named) in cases {
        let (p, path) = hostile_project(&format!("hostile-key.{key}"));
        let out = p.output(&["hooks", "install", "--cli", "hostile"]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{key}: {stderr}");
        assert!(
            stderr.contains(&format!("it added {named}, outside the hook table `hooks`")),
            "{key}: {stderr}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).expect("settings"),
            USER_SETTINGS,
            "{key}: the user's file changed"
        );
        assert!(
            !p.path().join(".drover/hooks").exists(),
            "{key}: a refused install kept a backup"
        );
    }
}

#[test]
fn a_private_settings_file_stays_private_through_install_and_remove() {
    let p = Project::new();
    let path = settings(&p, 0o600);
    p.install_hooks("scripted");
    let installed = std::fs::read_to_string(&path).expect("settings");
    assert!(installed.contains("--cli scripted Stop"), "{installed}");
    assert_eq!(mode(&path), 0o600, "install widened the settings file");
    let kept = backup(&p);
    assert_eq!(
        std::fs::read_to_string(&kept).expect("backup"),
        USER_SETTINGS
    );
    assert_eq!(mode(&kept) & 0o077, 0, "the backup is {:o}", mode(&kept));

    let out = p.output(&["hooks", "remove", "--cli", "scripted"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(&path).expect("settings"),
        USER_SETTINGS
    );
    assert_eq!(mode(&path), 0o600, "remove widened the settings file");

    // A 0640 file stays 0640; when drover runs as root, the owner stays too.
    let path = settings(&p, 0o640);
    let root = std::fs::metadata(p.path()).expect("meta").uid() == 0
        && std::os::unix::fs::chown(&path, Some(4242), Some(4243)).is_ok();
    p.install_hooks("scripted");
    assert_eq!(mode(&path), 0o640);
    assert!(mode(&backup(&p)) & !0o640 == 0, "{:o}", mode(&backup(&p)));
    if root {
        let meta = std::fs::metadata(&path).expect("meta");
        assert_eq!((meta.uid(), meta.gid()), (4242, 4243));
    }
    let out = p.output(&["hooks", "remove", "--cli", "scripted"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(mode(&path), 0o640);
}

#[test]
fn a_read_only_settings_file_is_refused_and_left_alone() {
    let p = Project::new();
    let path = settings(&p, 0o444);
    let before = std::fs::metadata(&path).expect("meta");
    let out = p.output(&["hooks", "install", "--cli", "scripted"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("is read-only (mode 0444)"), "{stderr}");
    let after = std::fs::metadata(&path).expect("meta");
    assert_eq!(
        std::fs::read_to_string(&path).expect("settings"),
        USER_SETTINGS
    );
    assert_eq!(
        (after.ino(), mode(&path)),
        (before.ino(), 0o444),
        "replaced"
    );
    assert!(!backup(&p).exists(), "a refused install kept a backup");

    // Made read-only after an install: remove is refused the same way.
    chmod(&path, 0o644);
    p.install_hooks("scripted");
    chmod(&path, 0o444);
    let installed = std::fs::read_to_string(&path).expect("settings");
    let out = p.output(&["hooks", "remove", "--cli", "scripted"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("is read-only"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&path).expect("settings"), installed);
    assert_eq!(mode(&path), 0o444);
}

/// Where `hooks install` writes the relay for this project's user.
fn relay_path(p: &Project) -> PathBuf {
    drover::hooks::embedded::path_in(&p.home.join(".local/share"))
}

#[test]
fn the_relay_is_never_written_through_a_link_in_the_data_directory() {
    let p = Project::new();
    let path = settings(&p, 0o644);
    // Something (not the user) made drover's relay directory a link to a
    // directory the user runs programs from.
    let elsewhere = p.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("elsewhere");
    let drover_dir = p.home.join(".local/share/drover");
    std::fs::create_dir_all(&drover_dir).expect("data dir");
    std::os::unix::fs::symlink(&elsewhere, drover_dir.join("relay")).expect("link");
    let out = p.output(&["hooks", "install", "--cli", "scripted"]);
    assert!(!out.status.success(), "installed through a link");
    assert!(
        text(&out.stderr).contains("symbolic link"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        std::fs::read_dir(&elsewhere).expect("elsewhere").count(),
        0,
        "the relay was written through the link"
    );
    assert_eq!(
        std::fs::read_to_string(&path).expect("settings"),
        USER_SETTINGS
    );
}

#[test]
fn a_file_at_the_relays_path_is_registered_only_when_it_is_the_relay() {
    let p = Project::new();
    let path = settings(&p, 0o644);
    let relay = relay_path(&p);
    std::fs::create_dir_all(relay.parent().expect("parent")).expect("mkdir");
    std::fs::write(&relay, "#!/bin/sh\necho planted\n").expect("plant");
    chmod(&relay, 0o755);
    p.install_hooks("scripted");
    assert_eq!(
        std::fs::read(&relay).expect("relay"),
        drover::hooks::embedded::BYTES,
        "the planted file was kept"
    );
    assert_eq!(mode(&relay), 0o755);
    let installed = std::fs::read_to_string(&path).expect("settings");
    assert!(
        installed.contains(&format!("{} --cli scripted Stop", relay.display())),
        "{installed}"
    );
}
