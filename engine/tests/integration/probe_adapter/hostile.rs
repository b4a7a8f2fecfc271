//! The hostile guest as a third-party project component: findings, not
//! crashes.

use std::path::PathBuf;

use super::{ANT_KEY, EMAIL, GH_TOKEN, World, assert_keys_sorted, ok};

/// The hostile guest as a project-local component, misbehaving as told.
fn hostile_project(world: &World, settings: &str, parser: &str) {
    let wasm = PathBuf::from(drover_guest_builds::DIR).join("drover_test_hostile.wasm");
    let adapters = world.project.join(".drover/adapters");
    std::fs::create_dir_all(&adapters).expect("mkdir");
    std::fs::copy(&wasm, adapters.join("hostile.wasm")).expect("copy the hostile guest");
    world.write(
        &world.project.join(".drover/profiles/hostile.toml"),
        &format!(
            "name = \"hostile\"\nbinary = \"fakecli\"\ncomponent = \"../adapters/hostile.wasm\"\n\
             usage_parser = \"{parser}\"\n\
             [hooks]\ndialect = \"hostile-panic\"\nconfig_path = \".hostile/hooks.json\"\n\
             [hooks.events]\nStop = \"Stop\"\n\
             [sandbox]\ncall_timeout_ms = 300\nmemory_mib = 32\n\
             [component_settings]\n{settings}\n"
        ),
    );
    // Private bytes the guest is fed (and echoes in its panics).
    world.write(
        &world.project.join(".hostile/hooks.json"),
        &format!("{{\"owner\":\"{EMAIL}\",\"token\":\"{GH_TOKEN}\",\"note\":\"PRIVATECONFIG\"}}"),
    );
    world.write(
        &world.project.join("transcripts/t.jsonl"),
        &format!("{{\"usage\":{{\"input_tokens\":1}},\"text\":\"PRIVATETRANSCRIPT {ANT_KEY}\"}}\n"),
    );
    world.trust();
}

#[test]
fn a_hostile_third_party_component_yields_findings_not_crashes() {
    let cases = [
        (
            "locations = \"panic\"",
            "none",
            "the adapter's transcript-locations trapped",
            "trapped",
        ),
        (
            "locations = \"loop\"",
            "none",
            "time limit of 300 ms",
            "time-limit",
        ),
        (
            "locations = \"alloc\"",
            "none",
            "memory limit of 32 MiB",
            "memory-limit",
        ),
        (
            "locations = \"garbage\"",
            "none",
            "answered garbage",
            "garbage",
        ),
        (
            "locations = \"cwd\"",
            "echo-panic",
            "the adapter's tally.feed trapped",
            "trapped",
        ),
        (
            "locations = \"cwd\"",
            "loop",
            "the adapter's tally.feed hit a limit",
            "time-limit",
        ),
    ];
    for (settings, parser, finding, outcome) in cases {
        let world = World::new();
        hostile_project(&world, settings, parser);
        let output = world.run(&[
            "hostile",
            "--payload",
            &format!(
                "Stop={}",
                world.project.join(".hostile/hooks.json").display()
            ),
        ]);
        let report = ok(&world, &output);
        assert!(
            report.contains(finding),
            "{settings}/{parser}: {finding:?} missing:\n{report}"
        );
        assert!(
            report.contains(&format!("| {outcome} |")),
            "{settings}/{parser}: {outcome}:\n{report}"
        );
        // detect-hooks panics with the config text, parse-hook with the event.
        assert!(
            report.contains("the adapter's detect-hooks trapped"),
            "{report}"
        );
        assert!(
            report.contains("the adapter's parse-hook trapped"),
            "{report}"
        );
        for fed in [
            "PRIVATECONFIG",
            "PRIVATETRANSCRIPT",
            "hostile transcript-locations saw",
            "hostile tally was fed",
            "hostile detect-hooks saw",
            "hostile parse-hook refused",
        ] {
            assert!(
                !report.contains(fed),
                "{settings}: what the guest was fed leaked ({fed}):\n{report}"
            );
        }
        assert!(report.contains("message withheld"), "{report}");
        assert!(
            report.contains("panicked at hostile/src/lib.rs:"),
            "the panic's location stays readable:\n{report}"
        );
        let json = world.run(&["hostile", "--json"]);
        let doc = ok(&world, &json);
        assert_keys_sorted(&doc);
    }
}
