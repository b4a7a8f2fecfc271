//! drover against the real Kilo Code CLI (7.7.7, an opencode fork) and
//! drover-model-server, driven by the built-in `kilo` profile alone: the
//! generic adapter runs `kilo run --format json` and reads its JSON lines
//! with opencode's format. Skipped (with a message) when the CLI is not
//! provisioned, except under CI.

use crate::support;

use std::time::Duration;

use support::real::{Real, usage_per_request};

const TURN: Duration = Duration::from_secs(180);

#[test]
fn headless_completes_resumes_and_counts_usage() {
    let Some(real) = Real::new("kilo") else {
        return;
    };
    let out = real.run(
        TURN,
        &["--workspace", "headless"],
        "Reply with exactly: FROM KILO",
    );
    assert_eq!((out.status(), out.code), ("completed", 0), "{out:#?}");
    assert_eq!(out.doc["reply"], "FROM KILO", "{:#}", out.doc);
    let session = out.doc["session_id"]
        .as_str()
        .expect("a session id")
        .to_string();
    // The step's own counts: at least one chat request's worth (kilo may
    // ask the model for a title as well).
    let one = usage_per_request("chat");
    let output = out.doc["usage"]["output"].as_u64().expect("output");
    assert!(
        output > 0 && output % one["output"].as_u64().expect("n") == 0,
        "{:#}",
        out.doc
    );
    assert_eq!(out.doc["usage_approximate"], false);
    // `[turn] resume` continues it.
    let again = real.run(
        TURN,
        &["--workspace", "headless", "--resume", &session],
        "Reply with exactly: AGAIN",
    );
    assert_eq!((again.status(), again.code), ("completed", 0), "{again:#?}");
    assert_eq!(again.doc["reply"], "AGAIN");
    assert_eq!(again.doc["session_id"], session.as_str());
}

#[test]
fn a_rejected_key_is_an_auth_fault_with_the_providers_sentence() {
    let Some(real) = Real::new("kilo") else {
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
    assert_eq!(out.doc["fault"]["kind"], "auth", "{:#}", out.doc);
    assert!(
        out.doc["fault"]["evidence"]
            .as_str()
            .is_some_and(|e| e.contains("Incorrect API key provided")),
        "{:#}",
        out.doc
    );
}
