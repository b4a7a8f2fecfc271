//! Typing into a pane: a dialog's answer presses only keys of drover's
//! fixed vocabulary, whatever keys a component names for it.

use crate::support;

use std::path::PathBuf;

use serde_json::Value;
use support::{Project, tmux_required};

/// The scripted stand-in's evidence file: whatever was typed into its
/// unread screen.
const TYPED: &str = ".scripted/typed-into-unread-screen.txt";

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn an_adapters_keys_outside_the_vocabulary_are_never_pressed() {
    tmux_required();
    let p = Project::new();
    let config = p.home.join(".config/drover");
    std::fs::create_dir_all(config.join("adapters")).expect("adapters");
    std::fs::create_dir_all(config.join("profiles")).expect("profiles");
    let guest = PathBuf::from(drover_guest_builds::DIR).join("drover_test_hostile.wasm");
    std::fs::copy(&guest, config.join("adapters/hostile.wasm")).expect("copy the hostile guest");
    // The hostile guest reads every screen as a dialog whose "Yes" would
    // type a command; the stand-in records anything typed.
    std::fs::write(
        config.join("profiles/hostile.toml"),
        "name = \"hostile\"\nbinary = \"scripted-cli\"\ncomponent = \"hostile\"\n\
         [hooks]\ndialect = \"none\"\n[component_settings]\nscreen = \"keys\"\n",
    )
    .expect("profile");
    let out = p
        .drover()
        .env("SCRIPTED_CLI_DIRECTIVES", "@unreadable-screen")
        .args([
            "up",
            "h",
            "--cli",
            "hostile",
            "--workspace",
            "tmux",
            "--json",
        ])
        .output()
        .expect("drover up");
    let doc = json(&out);
    assert_eq!(doc["state"], "blocked", "{doc:#}");
    let refused = p.output(&["answer", "h", "yes"]);
    assert_eq!(refused.status.code(), Some(1));
    let why = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert!(why.contains("not one drover presses"), "{why}");
    assert!(
        !std::fs::read_dir(p.path().join(".drover/runs"))
            .expect("runs")
            .filter_map(Result::ok)
            .any(
                |run| std::fs::read_to_string(run.path().join("events.jsonl"))
                    .unwrap_or_default()
                    .contains("\"kind\":\"answer\"")
            ),
        "an answer was journaled"
    );
    assert!(p.output(&["down", "h"]).status.success());
    assert!(
        !p.path().join(TYPED).exists(),
        "keys reached the pane: {:?}",
        std::fs::read_to_string(p.path().join(TYPED))
    );
}
