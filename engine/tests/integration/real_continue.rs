//! drover against the real Continue CLI (`cn` 1.5.47) and
//! drover-model-server, driven by the built-in `continue` profile alone:
//! the generic adapter runs `cn -p PROMPT --format json` and reads the
//! object's `response`. cn prints no usage (it keeps it in its session
//! files) and resumes only its last session, so neither is claimed here.
//! Skipped (with a message) when the CLI is not provisioned, except under
//! CI.

use crate::support;

use std::time::Duration;

use support::real::Real;

const TURN: Duration = Duration::from_secs(120);

#[test]
fn headless_completes_with_the_reply() {
    let Some(real) = Real::new("continue") else {
        return;
    };
    let out = real.run(
        TURN,
        &["--workspace", "headless"],
        "Reply with exactly: FROM CONTINUE",
    );
    assert_eq!((out.status(), out.code), ("completed", 0), "{out:#?}");
    assert_eq!(out.doc["reply"], "FROM CONTINUE", "{:#}", out.doc);
    // No count is made up: cn's output carries none.
    assert_eq!(out.doc["usage"], serde_json::Value::Null, "{:#}", out.doc);
}

#[test]
fn a_rejected_key_fails_the_turn_with_the_providers_sentence() {
    let Some(real) = Real::new("continue") else {
        return;
    };
    real.server
        .control("mode", &serde_json::json!({"mode": "error", "status": 401}));
    let out = real.run(
        TURN,
        &["--workspace", "headless"],
        "Reply with exactly: NEVER",
    );
    assert_eq!(out.code, 1, "{out:#?}");
    assert_ne!(out.status(), "completed", "{out:#?}");
    assert!(
        out.doc
            .to_string()
            .contains("401 Incorrect API key provided"),
        "{:#}",
        out.doc
    );
}
