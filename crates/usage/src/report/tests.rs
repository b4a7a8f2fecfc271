use super::*;
use crate::time::parse_instant;

fn record(cli: &str, session: &str, when: When, model: &str, input: u64) -> Record {
    Record {
        cli: Arc::from(cli),
        session: session.to_string(),
        model: model.to_string(),
        cwd: String::new(),
        when,
        tokens: Tokens {
            input,
            output: 1,
            requests: 1,
            ..Tokens::default()
        },
        single: true,
    }
}

fn day(d: &str) -> When {
    When::Day(d.parse().expect("day"))
}

fn at(t: &str) -> When {
    When::At(parse_instant(t).expect("instant"))
}

fn inputs() -> Inputs {
    Inputs {
        files: 1,
        repeated_requests: 0,
        rejected_rows: 0,
        explain_files: None,
        warnings: Vec::new(),
    }
}

fn build_with(records: &[Record], options: &Options) -> Report {
    build(records, options, &Prices::embedded(), inputs())
}

#[test]
fn since_and_until_keep_a_range_and_drop_undated_records() {
    let rs = [
        record("claude", "s1", day("2026-11-29"), "m", 1),
        record("claude", "s1", day("2026-11-30"), "m", 10),
        record("claude", "s1", day("2026-12-01"), "m", 1000),
        record("claude", "s2", When::Unknown, "m", 100),
    ];
    let all = build_with(&rs, &Options::default());
    assert_eq!(all.totals.usage.input, 1111);
    let cut = build_with(
        &rs,
        &Options {
            by: By::Day,
            since: Some("2026-11-30".parse().expect("day")),
            until: Some("2026-11-30".parse().expect("day")),
            ..Options::default()
        },
    );
    assert_eq!(cut.totals.usage.input, 10);
    assert_eq!(cut.groups.len(), 1);
    assert!(
        cut.warnings[0]
            .message
            .starts_with("1 requests carry no date")
    );
}

#[test]
fn days_and_months_follow_the_time_zone() {
    let rs = [
        record("codex", "t", at("2026-11-30T23:30:00Z"), "gpt-5.5", 1),
        record("codex", "t", at("2026-11-30T12:00:00Z"), "gpt-5.5", 2),
    ];
    let utc = build_with(
        &rs,
        &Options {
            by: By::Day,
            ..Options::default()
        },
    );
    assert_eq!(utc.groups.len(), 1);
    let tokyo = build_with(
        &rs,
        &Options {
            by: By::Month,
            zone: "Asia/Tokyo".parse().expect("zone"),
            ..Options::default()
        },
    );
    let months: Vec<_> = tokyo
        .groups
        .iter()
        .map(|g| match &g.label {
            Label::Month { month } => (month.as_str(), g.usage.input),
            _ => ("?", 0),
        })
        .collect();
    assert_eq!(months, [("2026-11", 2), ("2026-12", 1)]);
    assert_eq!(tokyo.filters.tz, "Asia/Tokyo");
}

#[test]
fn unknown_models_are_unpriced_not_free() {
    let rs = [
        record(
            "claude",
            "s",
            day("2026-11-30"),
            "claude-opus-5-5",
            1_000_000,
        ),
        record("claude", "s", day("2026-11-30"), "claude-sonnet-5-1", 5),
        record("claude", "u", day("2026-11-30"), "claude-sonnet-5-1", 7),
    ];
    let report = build_with(&rs, &Options::default());
    // 1,000,000 input at $4/M plus one output token at $20/M.
    let cost = report.totals.cost_usd.expect("partly priced");
    assert!((cost - (4.0 + 2e-5)).abs() < 1e-9, "{cost}");
    assert_eq!(report.totals.unpriced_models, ["claude-sonnet-5-1"]);
    assert_eq!(report.unpriced.len(), 1);
    assert_eq!(report.unpriced[0].usage.input, 12);
    let only_unpriced = report
        .sessions
        .iter()
        .find(|s| matches!(&s.label, Label::Session { session, .. } if session == "u"))
        .expect("session u");
    assert_eq!(only_unpriced.cost_usd, None);
}

#[test]
fn project_keeps_its_tree_and_drops_unknown_directories() {
    let mut inside = record("claude", "a", day("2026-11-30"), "m", 1);
    inside.cwd = "/w/app/sub".to_string();
    let mut sibling = record("claude", "b", day("2026-11-30"), "m", 10);
    sibling.cwd = "/w/application".to_string();
    let unknown = record("claude", "c", day("2026-11-30"), "m", 100);
    let report = build_with(
        &[inside, sibling, unknown],
        &Options {
            project: Some("/w/app".to_string()),
            ..Options::default()
        },
    );
    assert_eq!(report.totals.usage.input, 1);
    assert_eq!(report.warnings.len(), 1);
}

#[test]
fn blocks_group_each_clis_requests_by_window() {
    let rs = [
        record(
            "claude",
            "s",
            at("2026-11-30T10:20:00Z"),
            "claude-opus-5-5",
            100,
        ),
        record(
            "claude",
            "s",
            at("2026-11-30T11:20:00Z"),
            "claude-opus-5-5",
            100,
        ),
        record(
            "claude",
            "s",
            at("2026-11-30T16:00:00Z"),
            "claude-opus-5-5",
            100,
        ),
        record("codex", "t", at("2026-11-30T10:30:00Z"), "gpt-5.5", 1),
        record("claude", "old", day("2026-11-29"), "claude-opus-5-5", 1),
    ];
    let now = parse_instant("2026-11-30T17:00:00Z").expect("now");
    let report = build_with(
        &rs,
        &Options {
            by: By::Block,
            now,
            ..Options::default()
        },
    );
    let blocks: Vec<_> = report
        .groups
        .iter()
        .map(|g| match &g.label {
            Label::Block {
                cli, start, active, ..
            } => (cli.as_str(), start.as_str(), *active, g.usage.requests),
            _ => ("?", "?", false, 0),
        })
        .collect();
    assert_eq!(
        blocks,
        [
            ("claude", "2026-11-30T10:00:00.000Z", false, 2),
            ("codex", "2026-11-30T10:00:00.000Z", false, 1),
            ("claude", "2026-11-30T16:00:00.000Z", true, 1),
        ]
    );
    assert!(report.warnings[0].message.contains("in no block"));
}
