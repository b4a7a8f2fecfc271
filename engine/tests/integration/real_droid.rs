//! drover against the real Factory droid (0.225.2) and drover-model-server,
//! driven by the built-in `droid` profile alone: no component of its own,
//! the generic adapter runs `droid exec --output-format json` and reads its
//! result object. Skipped (with a message) when the CLI is not provisioned,
//! except under CI. See tests/support/real.rs for the isolation and seeding.

use crate::support;

use std::time::Duration;

use support::real::{Real, usage_per_request};

const TURN: Duration = Duration::from_secs(120);

#[test]
fn headless_completes_with_the_clis_own_counts() {
    let Some(real) = Real::new("droid") else {
        return;
    };
    let profiles: serde_json::Value =
        serde_json::from_slice(&real.output(&["profiles", "--json"]).stdout).expect("json");
    let row = profiles["profiles"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["name"] == "droid"))
        .cloned()
        .expect("droid is a built-in profile");
    assert!(
        row["driver"]
            .as_str()
            .is_some_and(|d| d.starts_with("generic")),
        "no component of its own: {row:#}"
    );
    let out = real.run(
        TURN,
        &["--workspace", "headless"],
        "Reply with exactly: FROM DROID",
    );
    assert_eq!((out.status(), out.code), ("completed", 0), "{out:#?}");
    assert_eq!(out.doc["reply"], "FROM DROID", "{:#}", out.doc);
    // Exact counts from the result object, one chat request's worth.
    let one = usage_per_request("chat");
    for key in ["input", "output", "cache_read"] {
        assert_eq!(out.doc["usage"][key], one[key], "{key}: {:#}", out.doc);
    }
    assert_eq!(out.doc["usage_approximate"], false);
    assert!(
        out.doc["session_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
}

#[test]
fn a_provider_that_refuses_connections_fails_the_turn_with_droids_sentence() {
    let Some(mut real) = Real::new("droid") else {
        return;
    };
    real.point_at_closed_port();
    let out = real.run(
        TURN,
        &["--workspace", "headless"],
        "Reply with exactly: NEVER",
    );
    assert_eq!(out.code, 1, "{out:#?}");
    assert_ne!(out.status(), "completed", "{out:#?}");
    // droid says no more than this on stdout; the reason (the provider
    // unreachable) is only in its session file.
    assert!(out.doc.to_string().contains("Exec failed"), "{:#}", out.doc);
}
