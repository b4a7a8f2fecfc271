//! The report itself: its documented shape, cuts and groupings, and an
//! empty one.

use super::{CLAUDE_A, CLAUDE_B, CLAUDE_TOTAL, World, fields};

#[test]
fn the_json_document_has_the_documented_shape() {
    let w = World::new();
    w.claude();
    let report = w.json(&["--cli", "claude"], &[]);
    let keys: Vec<&str> = report
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    for key in [
        "totals",
        "sessions",
        "by",
        "groups",
        "files",
        "rejected_rows",
        "warnings",
    ] {
        assert!(keys.contains(&key), "{key} missing: {keys:?}");
    }
    assert_eq!(fields(&report["totals"]), CLAUDE_TOTAL);
    assert_eq!(report["by"], "session");
    assert_eq!(report["files"], 2);
    let sessions = report["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 2);
    let a = &sessions[0];
    assert_eq!(a["cli"], "claude");
    assert_eq!(a["session"], CLAUDE_A);
    assert_eq!(a["first_day"], "2026-11-29");
    assert_eq!(a["last_day"], "2026-11-30");
    assert_eq!(a["models"], serde_json::json!(["claude-opus-5-5"]));
    assert_eq!(fields(a), [300, 87, 3403, 1302, 0, 2]);
    let b = &sessions[1];
    assert_eq!(
        (b["session"].as_str(), b["first_day"].as_str()),
        (Some(CLAUDE_B), Some("2026-12-01"))
    );
    assert_eq!(report["groups"], report["sessions"]);
}

#[test]
fn since_and_by_cut_and_group() {
    let w = World::new();
    w.claude();
    let by_day = w.json(
        &["--cli", "claude", "--since", "2026-11-30", "--by", "day"],
        &[],
    );
    // msg_A1 (2026-11-29) is before the cut.
    assert_eq!(fields(&by_day["totals"]), [205, 39, 2700, 40, 0, 2]);
    let days: Vec<&str> = by_day["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| g["day"].as_str().expect("day"))
        .collect();
    assert_eq!(days, ["2026-11-30", "2026-12-01"]);
    assert_eq!(by_day["by"], "day");

    let by_model = w.json(&["--cli", "claude", "--by", "model"], &[]);
    let models: Vec<(String, [u64; 6])> = by_model["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| (g["model"].as_str().expect("model").to_string(), fields(g)))
        .collect();
    assert_eq!(
        models,
        [
            ("claude-opus-5-5".to_string(), [300, 87, 3403, 1302, 0, 2]),
            ("claude-sonnet-5-1".to_string(), [5, 9, 700, 40, 0, 1]),
        ]
    );

    let text = w.drover(&["usage", "--cli", "claude", "--by", "day"], &[]);
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert_eq!(text.status.code(), Some(0));
    assert!(
        stdout.contains("2026-11-29") && stdout.contains("TOTAL"),
        "{stdout}"
    );
    assert!(stdout.contains("1,342"), "cache write total: {stdout}");

    let bad = w.drover(&["usage", "--since", "30/11/2026"], &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(bad.stdout.is_empty());
}

#[test]
fn nothing_to_read_is_an_empty_report() {
    let w = World::new();
    let report = w.json(&[], &[]);
    assert_eq!(fields(&report["totals"]), [0; 6]);
    assert_eq!(report["files"], 0);
    assert_eq!(report["sessions"], serde_json::json!([]));
}

/// Months group, `--until` cuts inclusively, and an unknown `--tz` is a
/// usage error.
#[test]
fn months_until_and_zones() {
    let w = World::new();
    w.claude();
    let all = w.json(&["--cli", "claude", "--by", "month"], &[]);
    assert_eq!(all["groups"].as_array().map(Vec::len), Some(2), "{all:#}");
    let until = w.json(&["--cli", "claude", "--until", "2026-11-29"], &[]);
    assert_eq!(fields(&until["totals"])[5], 1);
    let bad = w.drover(&["usage", "--tz", "Mars/Olympus"], &[]);
    assert_eq!(bad.status.code(), Some(2));
}
