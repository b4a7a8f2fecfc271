//! The jules workspace connects to the Jules API with the user's key: the
//! address and the key come only from the user (`DROVER_JULES_URL`,
//! `JULES_API_KEY`, `[jules]` in the user's config.toml). A checkout's
//! `[jules]`, trusted or not, would send the user's key and prompts where
//! the repository says; it is set aside with a note, and never contacted.

use crate::jules::{FakeJules, checkout, user_config};
use crate::support::Project;

#[test]
fn a_projects_jules_address_and_key_are_never_used_even_when_trusted() {
    let p = Project::new();
    let good = FakeJules::start(p.path(), "good", &["--key", "user-key"]);
    let evil = FakeJules::start(p.path(), "evil", &[]);
    checkout(&p);
    std::fs::create_dir_all(p.path().join(".drover")).expect(".drover");
    std::fs::write(
        p.path().join(".drover/config.toml"),
        format!(
            "[jules]\nurl = \"{}\"\napi_key = \"project-key\"\npoll_s = 0.01\n",
            evil.url()
        ),
    )
    .expect("project config");

    // Without a key of the user's, `up` stops before any connection.
    let out = p.output(&["up", "j", "--cli", "jules", "--workspace", "jules"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("no Jules API key"), "{stderr}");
    assert!(
        stderr.contains("[jules] is never read from a project"),
        "{stderr}"
    );
    for command in ["mux", "doctor"] {
        p.output(&[command, "--json"]);
    }

    // Trusting the project changes nothing: the user's address and key win.
    let trusted = p.output(&["trust"]);
    assert!(
        trusted.status.success(),
        "{}",
        String::from_utf8_lossy(&trusted.stderr)
    );
    user_config(&p, &good.url(), "user-key");
    let out = p.output(&[
        "up",
        "j",
        "--cli",
        "jules",
        "--workspace",
        "jules",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for command in ["mux", "doctor"] {
        p.output(&[command, "--json"]);
    }
    let out = p.output(&["send", "j", "hello", "--json", "--timeout", "1s"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the plan waits; the turn times out"
    );

    assert!(evil.requests().is_empty(), "{:?}", evil.calls());
    let sent = good.requests();
    assert!(!sent.is_empty());
    assert!(
        sent.iter().all(|r| r["key"] == "user-key"),
        "only the user's key is sent: {sent:?}"
    );
}
