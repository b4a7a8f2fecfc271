//! The bodies of the golden tests every CLI runs over its real captures.
//!
//! A CLI's `real.rs` writes down what it expects (the sentence a failed run
//! printed, the kind it classifies as, how each pane reads) and hands it to
//! these; the assertions are the same for every CLI, so they live here.

use crate::screen::rows_of;
use crate::{CanonicalEvent, Fault, FaultKind, PromptKind, Screen, ScreenReading, SeatState};
use crate::{TurnResult, Usage};

use super::{Evidence, Run, assert_failed, assert_pane_faults, assert_readings};

/// A captured headless run that failed: the conversation it named (if it
/// got that far), the CLI's sentence and the fault kind it classifies as
/// (`None`: a fault of the request, not of the environment).
pub struct Failure {
    pub run: Run,
    pub session: Option<&'static str>,
    pub sentence: &'static str,
    pub kind: Option<FaultKind>,
}

/// A [`Failure`]; `session` is a conversation id or `None`.
pub fn failure(
    run: Run,
    session: impl Into<Option<&'static str>>,
    sentence: &'static str,
    kind: Option<FaultKind>,
) -> Failure {
    Failure {
        run,
        session: session.into(),
        sentence,
        kind,
    }
}

/// Asserts that each failed run parses as failed with the CLI's sentence,
/// no reply and its conversation, and that it reports no call's usage
/// (none at all, or zero). `each` checks what else the CLI promises.
#[track_caller]
pub fn assert_failures(
    parse: impl Fn(&Run) -> TurnResult,
    failures: &[Failure],
    each: impl Fn(&Failure, &TurnResult),
) {
    for f in failures {
        let r = parse(&f.run);
        assert_failed(&r, f.session, f.sentence);
        let usage = r.usage.as_ref().map(|u| u.total()).unwrap_or(Usage::ZERO);
        assert_eq!(usage, Usage::ZERO, "{}", f.sentence);
        each(f, &r);
    }
}

/// Asserts that each failed run's printed lines (stdout, then stderr)
/// classify as its kind; `evidence` checks the evidence line of each fault
/// found.
#[track_caller]
pub fn assert_failures_classify(
    classify: impl Fn(Vec<String>) -> Option<Fault>,
    failures: &[Failure],
    evidence: impl Fn(&Failure, &Fault),
) {
    for f in failures {
        let fault = classify(f.run.lines());
        assert_eq!(fault.as_ref().map(|x| x.kind), f.kind, "{}", f.sentence);
        if let Some(fault) = fault {
            evidence(f, &fault);
        }
    }
}

/// Asserts that each failure's sentence, on its own, classifies as its
/// kind: what the engine classifies when all it has is the turn's error.
/// `evidence` checks the evidence line of each fault found.
#[track_caller]
pub fn assert_sentences_classify(
    classify: impl Fn(Vec<String>) -> Option<Fault>,
    failures: &[Failure],
    evidence: impl Fn(&Failure, &Fault),
) {
    for f in failures {
        let fault = classify(rows_of(f.sentence));
        assert_eq!(fault.as_ref().map(|x| x.kind), f.kind, "{}", f.sentence);
        if let Some(fault) = fault {
            evidence(f, &fault);
        }
    }
}

/// Asserts that nothing `runs` printed (successful runs, with whatever
/// warnings they carry) reads as a fault.
#[track_caller]
pub fn assert_no_run_faults(classify: impl Fn(Vec<String>) -> Option<Fault>, runs: &[Run]) {
    for (n, run) in runs.iter().enumerate() {
        assert_eq!(classify(run.lines()), None, "run {n}");
    }
}

/// The canonical kind a test expects for each native event, written as
/// words `native=Canonical` (a word without `=` names an event whose native
/// and canonical names are the same; `Other` is a valid kind). The lookup
/// panics on an event the test did not name, so a new captured event is
/// noticed.
pub fn kinds(map: &'static str) -> impl Fn(&str) -> CanonicalEvent {
    move |native| {
        let word = map
            .split_whitespace()
            .find(|w| w.split('=').next() == Some(native))
            .unwrap_or_else(|| panic!("a captured event this test does not know: {native}"));
        let canonical = word.split_once('=').map_or(word, |(_, c)| c);
        match canonical {
            "Other" => CanonicalEvent::Other,
            name => CanonicalEvent::from_name(name)
                .unwrap_or_else(|| panic!("not a canonical event: {name}")),
        }
    }
}

/// A captured pane, how it reads (state, prompt kind), and the fault it
/// shows (kind, evidence line) or `None`.
pub type Pane = (
    &'static str,
    SeatState,
    Option<PromptKind>,
    Option<(FaultKind, &'static str)>,
);

/// Asserts that each pane reads as given and shows the fault given.
#[track_caller]
pub fn assert_panes(
    read: impl Fn(Screen) -> ScreenReading,
    classify: impl Fn(Vec<String>) -> Option<Fault>,
    evidence: Evidence,
    panes: &[Pane],
) {
    let readings: Vec<_> = panes.iter().map(|(p, s, k, _)| (*p, *s, *k)).collect();
    assert_readings(read, &readings);
    let faults: Vec<_> = panes.iter().map(|(p, .., f)| (*p, *f)).collect();
    assert_pane_faults(classify, &faults, evidence);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_native_names_and_refuse_unknown_ones() {
        let kind = kinds("SessionStart BeforeAgent=PromptSubmit AfterModel=Other");
        assert_eq!(kind("SessionStart"), CanonicalEvent::SessionStart);
        assert_eq!(kind("BeforeAgent"), CanonicalEvent::PromptSubmit);
        assert_eq!(kind("AfterModel"), CanonicalEvent::Other);
        let unknown = std::panic::catch_unwind(|| kind("Stop"));
        assert!(unknown.is_err());
    }
}
