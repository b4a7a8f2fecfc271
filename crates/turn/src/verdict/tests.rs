//! The verdict rules over a table of cases: each row is evidence and the
//! verdict, seat state and reason a person would expect from it.

use super::*;
use drover_types::Tokens;

fn turn(outcome: TurnOutcome) -> TurnResult {
    TurnResult {
        outcome,
        reply: None,
        conversation_id: None,
        error: None,
        usage: None,
        prompt_kind: None,
    }
}

fn missing() -> ResultState {
    ResultState::Missing(PathBuf::from("/w/result.json"))
}

/// A case name, the turn as read, its exit code, the prompt a hook saw,
/// the result file; then the expected verdict, seat state and reason.
type TurnCase = (
    &'static str,
    TurnResult,
    Option<i32>,
    Option<PromptKind>,
    ResultState,
    Verdict,
    SeatState,
    &'static str,
);

#[test]
fn turns_read_by_their_adapter() {
    let failed_with = TurnResult {
        error: Some("rate limited".to_string()),
        ..turn(TurnOutcome::Failed)
    };
    let blocked_on_trust = TurnResult {
        prompt_kind: Some(PromptKind::TrustDialog),
        ..turn(TurnOutcome::Blocked)
    };
    let cases: &[TurnCase] = &[
        (
            "success, no result file asked",
            turn(TurnOutcome::Success),
            Some(0),
            None,
            ResultState::NotAsked,
            Verdict::Completed,
            SeatState::Done,
            "the turn finished",
        ),
        (
            "success, result file written",
            turn(TurnOutcome::Success),
            Some(0),
            None,
            ResultState::Written,
            Verdict::Completed,
            SeatState::Done,
            "the turn finished and wrote the result file",
        ),
        (
            "success, result file missing",
            turn(TurnOutcome::Success),
            Some(0),
            None,
            missing(),
            Verdict::Stalled,
            SeatState::Done,
            "the turn finished without writing /w/result.json",
        ),
        (
            "blocked on a kind the output names",
            blocked_on_trust,
            Some(0),
            Some(PromptKind::Permission),
            ResultState::NotAsked,
            Verdict::Stalled,
            SeatState::Blocked,
            "the turn stopped at a trust-dialog prompt",
        ),
        (
            "blocked, kind only a hook named",
            turn(TurnOutcome::Blocked),
            None,
            Some(PromptKind::Permission),
            ResultState::NotAsked,
            Verdict::Stalled,
            SeatState::Blocked,
            "the turn stopped at a permission prompt",
        ),
        (
            "blocked, kind unknown",
            turn(TurnOutcome::Blocked),
            None,
            None,
            ResultState::NotAsked,
            Verdict::Stalled,
            SeatState::Blocked,
            "the turn stopped at a other prompt",
        ),
        (
            "failed with the CLI's sentence",
            failed_with,
            Some(1),
            None,
            ResultState::NotAsked,
            Verdict::Crashed,
            SeatState::Unknown,
            "the turn failed: rate limited",
        ),
        (
            "failed, nothing said",
            turn(TurnOutcome::Failed),
            Some(1),
            None,
            missing(),
            Verdict::Crashed,
            SeatState::Unknown,
            "the turn failed",
        ),
        (
            "unreadable output",
            turn(TurnOutcome::Unknown),
            Some(137),
            None,
            ResultState::NotAsked,
            Verdict::Crashed,
            SeatState::Unknown,
            "the output does not say how the turn ended (exit code 137)",
        ),
        (
            "unreadable output, no exit code",
            turn(TurnOutcome::Unknown),
            None,
            None,
            ResultState::NotAsked,
            Verdict::Crashed,
            SeatState::Unknown,
            "the output does not say how the turn ended (exit code none)",
        ),
    ];
    for (case, turn, exit, seen, result, verdict, state, reason) in cases {
        let ruling = of_turn(turn, *exit, *seen, result);
        assert_eq!(
            (ruling.verdict, ruling.state, ruling.reason.as_str()),
            (*verdict, *state, *reason),
            "{case}"
        );
        assert_eq!(
            ruling.blocked.is_some(),
            *state == SeatState::Blocked,
            "{case}: a blocked ruling names its prompt, and only it"
        );
    }
}

#[test]
fn turns_a_hook_or_an_agent_ended() {
    let cases: &[(&str, Ruling, Verdict, &str)] = &[
        (
            "Stop hook",
            finished(Some("Stop hook"), &ResultState::NotAsked),
            Verdict::Completed,
            "the turn finished (Stop hook)",
        ),
        (
            "Stop hook, result missing",
            finished(Some("Stop hook"), &missing()),
            Verdict::Stalled,
            "the turn finished without writing /w/result.json",
        ),
        (
            "end_turn",
            of_stop_reason("end_turn", &ResultState::NotAsked),
            Verdict::Completed,
            "the turn finished (end_turn)",
        ),
        (
            "end_turn, result written",
            of_stop_reason("end_turn", &ResultState::Written),
            Verdict::Completed,
            "the turn finished and wrote the result file",
        ),
        (
            "refusal",
            of_stop_reason("refusal", &ResultState::Written),
            Verdict::Stalled,
            "the agent ended the turn with stopReason refusal",
        ),
        (
            "max_tokens",
            of_stop_reason("max_tokens", &ResultState::NotAsked),
            Verdict::Stalled,
            "the agent ended the turn with stopReason max_tokens",
        ),
        (
            "gone",
            gone("the CLI's pane is gone (it exited)"),
            Verdict::Crashed,
            "the CLI's pane is gone (it exited)",
        ),
        (
            "deadline",
            timed_out(Duration::from_secs(90 * 60), "wall"),
            Verdict::Timeout,
            "the session deadline of 1h30m passed (wall clock)",
        ),
        (
            "interrupted",
            interrupted(),
            Verdict::Crashed,
            "interrupted: drover was asked to stop",
        ),
        (
            "budget",
            over_budget(),
            Verdict::OverBudget,
            "the token budget was exceeded and its grace ran out",
        ),
        (
            "stall",
            stalled("no activity for 5m00s"),
            Verdict::Stalled,
            "no activity for 5m00s",
        ),
    ];
    for (case, ruling, verdict, reason) in cases {
        assert_eq!(
            (ruling.verdict, ruling.reason.as_str()),
            (*verdict, *reason),
            "{case}"
        );
    }
}

#[test]
fn recovery_says_it_reconciled_and_changes_nothing_else() {
    let live = of_turn(&turn(TurnOutcome::Success), Some(0), None, &missing());
    let settled = live.clone().reconciled();
    assert_eq!((settled.verdict, settled.state), (live.verdict, live.state));
    assert_eq!(
        settled.reason,
        "the turn finished without writing /w/result.json (reconciled: drover was not running)"
    );
}

fn spent(input: u64, output: u64, cost: Option<f64>) -> Spent {
    Spent {
        tokens: Tokens {
            input,
            output,
            requests: 1,
            ..Tokens::default()
        },
        cost_usd: cost,
    }
}

#[test]
fn a_turn_spends_what_it_reports_or_what_it_adds_to_the_transcript() {
    // Output that reports usage is the turn's own (the adapter took the
    // conversation's earlier turns off): the prior is not taken off twice.
    let reported = turn_usage(
        Some(spent(200, 20, Some(0.2))),
        Some(spent(5000, 500, Some(5.0))),
        Some(spent(4800, 480, Some(4.8))),
    );
    assert_eq!(reported, Some(spent(200, 20, Some(0.2))));
    // A transcript holds the whole conversation: the turn is what it adds.
    let added = turn_usage(
        None,
        Some(spent(5000, 500, Some(5.0))),
        Some(spent(4800, 480, Some(4.75))),
    )
    .expect("usage");
    assert_eq!((added.tokens.input, added.tokens.output), (200, 20));
    assert!(added.cost_usd.is_some_and(|c| (c - 0.25).abs() < 1e-9));
    // A first turn has nothing before it; no evidence is no usage.
    assert_eq!(
        turn_usage(None, Some(spent(10, 1, None)), None),
        Some(spent(10, 1, None))
    );
    assert_eq!(turn_usage(None, None, Some(spent(10, 1, None))), None);
}
