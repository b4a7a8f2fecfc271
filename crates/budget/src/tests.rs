use super::*;
use drover_turn::conversations::Entry;
use drover_types::WorkspaceKind;

fn seat(nick: &str, role: &str) -> SeatRecord {
    SeatRecord {
        nick: nick.to_string(),
        role: role.to_string(),
        cli: "claude".to_string(),
        workspace: WorkspaceKind::Headless,
        human: false,
        run_id: format!("run-{nick}"),
        cwd: "/p".into(),
        model: String::new(),
        conversation: None,
        pane: None,
        created_ns: 0,
        budget_usd: None,
        budget_mode: Default::default(),
        cost_usd: None,
        cost_approximate: false,
        extra_args: None,
        no_resume: false,
        ray: None,
        jules: None,
    }
}

/// 2026-12-03T12:00:00Z and 2026-12-04T12:00:00Z, in ns.
const YESTERDAY: u64 = 1_796_299_200_000_000_000;
const TODAY: u64 = YESTERDAY + 86_400_000_000_000;

fn turn(nick: &str, ts: u64, cost: Option<f64>, input: u64) -> Entry {
    Entry {
        ts,
        cli: "claude".to_string(),
        conversation: format!("c-{nick}"),
        run: format!("run-{nick}"),
        task: nick.to_string(),
        usage: Some(drover_turn::Tokens {
            input,
            cache_read: 1000,
            ..Default::default()
        }),
        cost_usd: cost,
    }
}

fn budgets(limits: Vec<Limit>, turns: Vec<Entry>, raises: Vec<raises::Raise>) -> Budgets {
    Budgets {
        limits: Limits {
            limits,
            set_aside: Vec::new(),
        },
        ledger: Ledger::of(turns),
        raises,
        seats: vec![seat("a", "dev"), seat("b", "dev"), seat("c", "review")],
        day: (Zone::default(), "2026-12-04".parse().expect("day")),
    }
}

fn limit(level: Level, usd: Option<f64>, tokens: Option<u64>) -> Limit {
    Limit {
        level,
        usd,
        tokens,
        at: "/u/config.toml:2".to_string(),
    }
}

#[test]
fn each_level_counts_its_own_sessions() {
    let b = budgets(
        vec![
            limit(Level::Seat, Some(1.0), None),
            limit(Level::Role("dev".to_string()), Some(1.0), None),
            limit(
                Level::Team {
                    name: "t".to_string(),
                    seats: vec!["a".to_string(), "c".to_string()],
                },
                None,
                Some(10_000),
            ),
            limit(Level::Project, Some(10.0), None),
            limit(Level::Day, Some(1.0), None),
        ],
        vec![
            // Yesterday's turn counts for the seat and the project, not the day.
            turn("a", YESTERDAY, Some(0.25), 10),
            turn("a", TODAY, Some(0.5), 10),
            turn("b", TODAY + 1, Some(0.375), 10),
            turn("c", TODAY + 2, Some(2.0), 10),
        ],
        Vec::new(),
    );
    let a: Vec<(String, f64, u64)> = b
        .for_seat(&seat("a", "dev"))
        .into_iter()
        .map(|s| (s.level, s.spent_usd, s.spent_tokens))
        .collect();
    // 10 input + a tenth of 1000 cache reads = 110 weighted tokens a turn.
    assert_eq!(
        a,
        vec![
            ("seat".to_string(), 0.75, 220),
            ("role dev".to_string(), 1.125, 330),
            ("team t".to_string(), 2.75, 330),
            ("project".to_string(), 3.125, 440),
            ("day".to_string(), 2.875, 330),
        ]
    );
    let c: Vec<String> = b
        .for_seat(&seat("c", "review"))
        .into_iter()
        .map(|s| s.level)
        .collect();
    assert_eq!(c, ["seat", "team t", "project", "day"]);
    let project: Vec<String> = b.for_project().into_iter().map(|s| s.level).collect();
    assert_eq!(project, ["project", "day"]);
}

#[test]
fn a_limit_is_reached_at_it_and_a_raise_adds_its_amount_for_its_key_only() {
    let raise = |key: &str| raises::Raise {
        ts: 1,
        level: "day".to_string(),
        key: key.to_string(),
        usd: Some(1.0),
        tokens: None,
        by: "person".to_string(),
    };
    let turns = vec![turn("a", TODAY, Some(1.0), 10)];
    let day = || vec![limit(Level::Day, Some(1.0), None)];
    let reached = budgets(day(), turns.clone(), Vec::new()).for_project();
    assert!(reached[0].reached(), "{reached:?}");
    assert_eq!(reached[0].describe(), "day $1.00 of $1.00");
    // Yesterday's raise does not raise today's limit.
    let stale = budgets(day(), turns.clone(), vec![raise("2026-12-03")]).for_project();
    assert!(stale[0].reached());
    let raised = budgets(day(), turns, vec![raise("2026-12-04")]).for_project();
    assert_eq!(raised[0].limit_usd, Some(2.0));
    assert!(!raised[0].reached());
}

#[test]
fn an_unpriced_turn_is_flagged_not_counted_as_free() {
    let b = budgets(
        vec![limit(Level::Project, Some(1.0), Some(100))],
        vec![turn("a", TODAY, None, 10)],
        Vec::new(),
    );
    let s = &b.for_project()[0];
    assert!(s.unpriced);
    assert_eq!((s.spent_usd, s.spent_tokens), (0.0, 110));
    // The token limit still holds it.
    assert!(s.reached());
}

#[test]
fn the_question_offers_a_raise_by_the_limit_and_a_stop() {
    let b = budgets(
        vec![limit(Level::Day, Some(1.0), None)],
        vec![turn("a", TODAY, Some(1.25), 10)],
        Vec::new(),
    );
    let q = question(&b.for_project(), 7);
    assert_eq!(q.kind, "budget");
    assert_eq!(q.title, "budget day reached: raise it, or stop?");
    assert_eq!(q.input, "day $1.25 of $1.00");
    assert_eq!(q.options[0].label, "Raise day to $2.00");
    assert_eq!(
        q.choice("stop").map(|c| c.kind),
        Some(ChoiceKind::RejectOnce)
    );
}
