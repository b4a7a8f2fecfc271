//! The egress guard: a leak the sanitizer cannot route refuses to emit,
//! and a stray project name is repaired and disclosed.

use super::{PROJECT, USER, World, text};

#[test]
fn a_leak_the_sanitizer_cannot_route_refuses_to_emit() {
    // A username that is also a word of the report's own text cannot be
    // redacted from it: the guard must refuse rather than print.
    let world = World::named(PROJECT, "Transcript");
    let out = world.root.join("refused.md");
    let output = world.run(&[
        "claude",
        "--binary",
        "fakecli",
        "--out",
        out.to_str().expect("utf8"),
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert!(output.stdout.is_empty());
    assert!(!out.exists(), "no --out file on refusal");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("refusing to emit") && stderr.contains("username"),
        "{stderr}"
    );
    let output = world.run(&["claude", "--binary", "fakecli", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty());
}

#[test]
fn a_stray_project_name_is_repaired_and_disclosed() {
    // The project shares its name with a heading: the heading is drover's
    // own text, so only the egress guard can catch it.
    let world = World::named("Transcript", USER);
    let output = world.run(&["claude", "--binary", "fakecli"]);
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(stdout.contains("### Backstop repairs"), "{stdout}");
    assert!(!stdout.contains("## Transcript"), "{stdout}");
    assert!(
        text(&output.stderr).contains("replaced"),
        "{}",
        text(&output.stderr)
    );
}
