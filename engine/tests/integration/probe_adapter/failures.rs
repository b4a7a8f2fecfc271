//! An unknown CLI, a missing or hanging binary, and usage errors: a
//! reduced report, findings and exit codes.

use super::{World, ok, text};

#[test]
fn unknown_cli_with_binary_gives_a_reduced_report() {
    let world = World::new();
    let output = world.run(&["--binary", "fakecli"]);
    let report = ok(&world, &output);
    assert!(report.contains("no profile: reduced report"), "{report}");
    assert!(report.contains("fakecli 1.2.3"), "{report}");
    let output = world.run(&["mystery-cli", "--binary", "fakecli", "--json"]);
    let value: serde_json::Value = serde_json::from_str(&ok(&world, &output)).expect("json");
    assert_eq!(value["known_profile"], false);
    assert_eq!(value["cli"], "mystery-cli");
}

#[test]
fn failures_and_usage_errors_have_their_exit_codes() {
    let world = World::new();
    let output = world.run(&["mystery-cli"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
    assert!(text(&output.stderr).contains("unknown CLI profile 'mystery-cli'"));
    for args in [
        &[][..],
        &["claude", "--transcript", "a", "--session-dir", "b"][..],
        &["claude", "--payload", "no-equals-sign"][..],
    ] {
        let output = world.run(args);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&output.stderr)
        );
        assert!(output.stdout.is_empty());
    }
}

#[test]
fn a_missing_or_hanging_binary_is_a_finding() {
    let world = World::new();
    let output = world.run(&["claude", "--binary", "no-such-cli-here"]);
    let report = ok(&world, &output);
    assert!(report.contains("NOT found"), "{report}");
    world.fake_cli("slowcli", "[ \"$1\" = \"--help\" ] && exec sleep 30");
    let started = std::time::Instant::now();
    let output = world.run(&["claude", "--binary", "slowcli", "--command-timeout", "1"]);
    let report = ok(&world, &output);
    assert!(report.contains("did not finish within 1 s"), "{report}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
}
