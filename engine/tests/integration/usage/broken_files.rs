//! A file drover cannot read, or one that kills the component reading it:
//! a warning, and the rest still counts.

use std::path::Path;

use super::{CLAUDE_TOTAL, World, fields, warnings};

#[test]
fn a_broken_file_is_a_warning_and_the_rest_still_counts() {
    let w = World::new();
    w.claude();
    let dir = w.home().join(".claude/projects/-w-app");
    std::os::unix::fs::symlink("/nonexistent/target.jsonl", dir.join("dangling.jsonl"))
        .expect("symlink");
    let mut garbage: Vec<u8> = b"{\"usage\": not json\n\xff\xfe\"usage\" \x00\x01\n".to_vec();
    garbage.extend(std::iter::repeat_n(b'x', 100_000));
    std::fs::write(dir.join("garbage.jsonl"), garbage).expect("write");

    let report = w.json(&["--cli", "claude"], &[]);
    assert_eq!(fields(&report["totals"]), CLAUDE_TOTAL);
    let warned = warnings(&report);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(warned[0].contains("dangling.jsonl"), "{warned:?}");
    assert!(report["rejected_rows"].as_u64().expect("n") >= 2);
    assert_eq!(report["files"], 3);
}

/// A project profile backed by the hostile test guest, whose parser panics
/// on a `panic` line and spins on a `loop` line.
fn hostile_project(w: &World) {
    let wasm = Path::new(drover_guest_builds::DIR).join("drover_test_hostile.wasm");
    let profiles = w.project.path().join(".drover/profiles");
    std::fs::create_dir_all(&profiles).expect("mkdir");
    std::fs::write(
        profiles.join("hostile.toml"),
        format!(
            "name = \"hostile\"\nbinary = \"hostile-cli\"\ncomponent = \"{}\"\nusage_parser = \"hostile-lines\"\n[sandbox]\ncall_timeout_ms = 300\n[hooks]\ndialect = \"none\"\n",
            wasm.display()
        ),
    )
    .expect("profile");
    let logs = w.project.path().join("hostile-logs");
    std::fs::create_dir_all(&logs).expect("mkdir");
    for (name, text) in [
        ("a.log", "count 5\n"),
        ("b.log", "count 100\npanic\n"),
        ("c.log", "count 7\n"),
        ("d.log", "count 1000\nloop\n"),
        ("e.log", "count 30"),
    ] {
        std::fs::write(logs.join(name), text).expect("write");
    }
}

#[test]
fn a_file_that_kills_the_component_is_left_out_and_the_rest_counts() {
    let w = World::new();
    hostile_project(&w);
    let report = w.json(&["--cli", "hostile"], &[]);
    assert_eq!(fields(&report["totals"])[0], 5 + 7 + 30, "{report:#}");
    let warned = warnings(&report).join("\n");
    assert!(
        warned.contains("b.log") && warned.contains("panic"),
        "{warned}"
    );
    assert!(
        warned.contains("d.log") && warned.contains("time limit"),
        "{warned}"
    );
    assert!(
        !warned.contains("a.log") && !warned.contains("c.log"),
        "{warned}"
    );
}
