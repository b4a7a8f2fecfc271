//! Prices: the snapshot, the user's override file, and Claude's cache
//! lifetimes priced apart.

use serde_json::Value;

use super::{CLAUDE_TOTAL, World};

/// The price table's snapshot is named in `usage --json` and `doctor`; the
/// user's override file changes prices, and a broken one is an error that
/// names its place, in both commands.
#[test]
fn prices_come_from_the_snapshot_and_the_users_file() {
    let w = World::new();
    w.claude();
    let report = w.json(&["--cli", "claude"], &[]);
    assert_eq!(report["schema_version"], 2);
    assert!(
        report["pricing"]["snapshot"]
            .as_str()
            .expect("snapshot")
            .starts_with("litellm ")
    );
    let date = report["pricing"]["snapshot_date"].as_str().expect("date");
    assert_eq!(date.len(), 10);
    let base = report["totals"]["cost_usd"].as_f64().expect("priced");
    assert!(base > 0.0);

    let doctor = w.drover(&["doctor", "--json"], &[]);
    let doc: Value = serde_json::from_slice(&doctor.stdout).expect("doctor json");
    assert_eq!(doc["pricing"]["snapshot_date"], date);

    // The fixtures' claude-sonnet-5-1 is not in the snapshot.
    assert_eq!(
        report["totals"]["unpriced_models"],
        serde_json::json!(["claude-sonnet-5-1"])
    );
    // Every token at $1, and the unknown model added: the cost is the
    // token total.
    let config = w.home().join(".config/drover");
    std::fs::create_dir_all(&config).expect("mkdir");
    let dollar = r#"{"input_cost_per_token": 1, "output_cost_per_token": 1,
        "cache_read_input_token_cost": 1, "cache_creation_input_token_cost": 1}"#;
    std::fs::write(
        config.join("pricing.json"),
        format!(r#"{{"claude-opus-5-5": {dollar}, "claude-sonnet-5-1": {dollar}}}"#),
    )
    .expect("write");
    let report = w.json(&["--cli", "claude"], &[]);
    let total: u64 = CLAUDE_TOTAL[..4].iter().sum();
    assert_eq!(report["totals"]["cost_usd"].as_f64(), Some(total as f64));
    assert_eq!(report["unpriced"], serde_json::json!([]));
    assert_eq!(
        report["pricing"]["overrides"].as_array().map(Vec::len),
        Some(1)
    );

    std::fs::write(
        config.join("pricing.json"),
        "{\n  \"m\": {\"input_cost_per_token\": \"x\"}\n}",
    )
    .expect("write");
    let out = w.drover(&["usage", "--json"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("pricing.json: model 'm': input_cost_per_token"),
        "{stderr}"
    );
    let doctor = w.drover(&["doctor", "--json"], &[]);
    assert_eq!(doctor.status.code(), Some(1));
}

/// Claude's request rows carry their time, working directory and cache
/// lifetimes: 1-hour writes are priced apart, `--project` keeps the
/// conversations run there, and `--by block` has request times.
#[test]
fn claude_requests_carry_time_directory_and_cache_lifetimes() {
    let w = World::new();
    let here = std::fs::canonicalize(w.project.path()).expect("project");
    let row = |id: &str, cwd: &str, at: &str| {
        format!(
            r#"{{"type":"assistant","sessionId":"s1","cwd":"{cwd}","timestamp":"{at}","requestId":"r-{id}","message":{{"id":"{id}","model":"claude-opus-5-5","usage":{{"input_tokens":10,"output_tokens":20,"cache_read_input_tokens":0,"cache_creation_input_tokens":300,"cache_creation":{{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200}}}}}}}}"#
        )
    };
    let text = [
        row(
            "m1",
            &here.display().to_string(),
            "2026-11-30T10:20:00.000Z",
        ),
        row("m2", "/elsewhere", "2026-11-30T11:00:00.000Z"),
    ]
    .join("\n");
    let path = w.home().join(".claude/projects/-w/s1.jsonl");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, text).expect("write");

    let all = w.json(&["--cli", "claude", "--by", "block"], &[]);
    assert_eq!(all["totals"]["cache_write"], 600);
    assert_eq!(all["totals"]["cache_write_1h"], 400);
    // Claude Opus 5.5: $4/M in, $20/M out, $5/M 5-minute and $8/M 1-hour writes.
    let one = 10.0 * 4e-6 + 20.0 * 2e-5 + 100.0 * 5e-6 + 200.0 * 8e-6;
    let cost = all["totals"]["cost_usd"].as_f64().expect("priced");
    assert!((cost - 2.0 * one).abs() < 1e-12, "{cost}");
    let blocks = all["groups"].as_array().expect("blocks");
    assert_eq!(blocks.len(), 1, "{all:#}");
    assert_eq!(blocks[0]["start"], "2026-11-30T10:00:00.000Z");

    let out = w.drover(
        &[
            "--project",
            &here.display().to_string(),
            "usage",
            "--json",
            "--cli",
            "claude",
        ],
        &[],
    );
    let mine: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(mine["totals"]["requests"], 1, "{mine:#}");
    assert_eq!(
        mine["sessions"][0]["projects"],
        serde_json::json!([here.display().to_string()])
    );
}

/// A model LiteLLM has since dropped is priced at its last known price and
/// marked retired; a model no table knows is named, with how to price it,
/// in the text table's footnote.
#[test]
fn retired_models_are_priced_and_marked_and_unpriced_ones_named() {
    let w = World::new();
    let row = |id: &str, model: &str| {
        format!(
            r#"{{"type":"assistant","sessionId":"s1","timestamp":"2026-11-30T10:20:00.000Z","requestId":"r-{id}","message":{{"id":"{id}","model":"{model}","usage":{{"input_tokens":1000,"output_tokens":100,"cache_read_input_tokens":0,"cache_creation_input_tokens":0}}}}}}"#
        )
    };
    let text = [
        row("m1", "claude-opus-4-1-20250805"),
        row("m2", "claude-made-up-9"),
    ]
    .join("\n");
    let path = w.home().join(".claude/projects/-w/s1.jsonl");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, text).expect("write");

    let report = w.json(&["--cli", "claude", "--by", "model"], &[]);
    let rows = report["groups"].as_array().expect("rows");
    let row = |model: &str| {
        rows.iter()
            .find(|r| r["model"] == model)
            .unwrap_or_else(|| panic!("no {model} row in {report:#}"))
    };
    // Claude Opus 4.1 as LiteLLM 1.103.6 last priced it: $15/M in, $75/M out.
    let opus = row("claude-opus-4-1-20250805");
    let cost = opus["cost_usd"].as_f64().expect("priced");
    assert!(
        (cost - (1000.0 * 15e-6 + 100.0 * 75e-6)).abs() < 1e-12,
        "{cost}"
    );
    assert_eq!(
        (&opus["retired"], &opus["retired_after"]),
        (&Value::Bool(true), &Value::from("1.103.6"))
    );
    let unknown = row("claude-made-up-9");
    assert_eq!(unknown["cost_usd"], Value::Null);
    assert_eq!(unknown.get("retired"), None);
    assert_eq!(
        report["priced_as"],
        serde_json::json!([{"model": "claude-opus-4-1-20250805",
            "price_key": "claude-opus-4-1-20250805", "retired_after": "1.103.6"}])
    );

    let out = w.drover(&["usage", "--cli", "claude"], &[]);
    let table = String::from_utf8_lossy(&out.stdout);
    let pricing_file = w.home().join(".config/drover/pricing.json");
    for expected in [
        "* no price for claude-made-up-9 (claude)".to_string(),
        format!("add its prices to {} or pass --pricing FILE", pricing_file.display()),
        r#"{"claude-made-up-9": {"input_cost_per_token""#.to_string(),
        "claude-opus-4-1-20250805 is a retired model: priced at its last LiteLLM price, from litellm 1.103.6".to_string(),
    ] {
        assert!(table.contains(&expected), "{expected:?} not in:\n{table}");
    }
}
