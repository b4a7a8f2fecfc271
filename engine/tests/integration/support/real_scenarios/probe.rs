//! `drover probe-adapter --probe` against the real CLI.

use std::time::Instant;

use serde_json::Value;

use super::{Case, timed};
use crate::support::real::{Real, expected_usage};

/// `drover probe-adapter <cli> --probe` against the real CLI: one turn in a
/// scratch workspace captures the real hook payloads, the component parses
/// the Stop-equivalent one, the transcript is found from the payloads and
/// its usage matches what the server sent; no value (the reply, the home
/// path) reaches the report, and the scratch workspace is gone afterwards.
pub fn probe(case: &Case) {
    let started = Instant::now();
    let Some(real) = Real::new(case.cli) else {
        return;
    };
    let before = real.server.last_seq();
    let timeout = format!("{}s", crate::support::HANG.as_secs());
    let mut args = vec!["probe-adapter", case.cli, "--probe", "--json", "--timeout"];
    args.push(&timeout);
    args.extend_from_slice(case.args);
    let out = real.output(&args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    let doc: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    assert_eq!(doc["mode"], "probe", "{doc:#}");

    let captured = doc["hooks"]["captured"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let stop = captured
        .iter()
        .find(|c| c["native"] == case.stop_event)
        .unwrap_or_else(|| panic!("no {} payload captured: {doc:#}", case.stop_event));
    assert_eq!(stop["adapter_kind"], "stop", "{stop:#}");
    assert!(
        stop["fields_found"]
            .as_array()
            .is_some_and(|f| !f.is_empty()),
        "the adapter read no field of the real {} payload: {stop:#}",
        case.stop_event
    );
    assert!(
        doc["transcript"]["file"]["size_bytes"]
            .as_u64()
            .unwrap_or(0)
            > 0,
        "no transcript found from the payloads: {doc:#}"
    );
    let served = case.accounted_since(&real, before);
    let expected = expected_usage(&served);
    let parsed = &doc["tokens"]["parsed_usage"];
    for key in ["input", "output", "cache_read", "cache_write", "reasoning"] {
        assert_eq!(
            parsed[key],
            expected[key],
            "{key}: the component's reading of the real transcript vs the server's {} requests: {doc:#}",
            served.len()
        );
    }

    // Schemas, never values.
    assert!(
        !stdout.contains("Reply with exactly"),
        "the prompt leaked into the report"
    );
    assert!(
        !stdout.contains(&real.home.display().to_string()),
        "the home path leaked into the report"
    );
    let left = crate::support::probe_leftovers(&real.tmp);
    assert!(left.is_empty(), "scratch workspace left behind: {left:?}");
    timed(case.cli, "probe", started);
}
