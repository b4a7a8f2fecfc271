//! agy's environment-fault sentences, as users quoted them (agy 1.0.x–1.2.x
//! and its cloudcode-pa backend; docs/adapters/antigravity.md lists each
//! source). None was measured by drover. Rules are anchored at the start of
//! the line (after an optional status glyph or `Error:`), so prose that
//! quotes one does not match.
//!
//! agy states its waits as "Resets in 71h15m27s" / "resets in 3h 21min" /
//! "Your quota will reset after 2h37m22s", which the kit's reset reader
//! reads (drover_kit::resets).

use drover_kit::FaultKind::{Auth, Quota, TrustDialog};
use drover_kit::faults::FaultRule;
use drover_kit::resets::Clock;
use drover_kit::{Fault, Profile, faults};

macro_rules! lead {
    ($rest:expr) => {
        concat!(r"^(?:[✗✘×●!⚠]\s*)?(?:Error:\s*)?", $rest)
    };
}

pub const RULES: &[FaultRule] = &[
    FaultRule::new(
        "antigravity/quota-individual",
        Quota,
        lead!(r"(?:RESOURCE_EXHAUSTED \(code 429\):\s*)?Individual quota reached\."),
    ),
    FaultRule::new(
        "antigravity/quota-window",
        Quota,
        lead!(r"You've reached your \d+-hour standard usage limit\b"),
    ),
    FaultRule::new(
        "antigravity/quota-capacity",
        Quota,
        lead!(r"You have exhausted your capacity on this model\."),
    ),
    FaultRule::new(
        "antigravity/resource-exhausted",
        Quota,
        lead!(
            r"(?:RESOURCE_EXHAUSTED \(code 429\):\s*)?Resource has been exhausted \(e\.g\. check quota\)\."
        ),
    ),
    FaultRule::new(
        "antigravity/auth-logged-out",
        Auth,
        lead!(r"You are not logged into Antigravity\."),
    ),
    FaultRule::new(
        "antigravity/trust-dialog",
        TrustDialog,
        r"^\s*Do you trust the contents of this project\?",
    ),
];

pub fn classify(profile: &Profile, lines: &[String]) -> Option<Fault> {
    faults::classify_at(
        RULES,
        &profile.env_fault_patterns,
        lines,
        &Clock::of(profile, None),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::FaultKind;
    use drover_kit::testing::assert_every_fault_rule_fires;

    fn one(line: &str) -> Option<Fault> {
        faults::classify_at(RULES, &[], &[line.to_string()], &Clock::at(0, None))
    }

    #[test]
    fn every_collected_sentence_classifies_with_its_wait() {
        // Sentences quoted in public issues (fixtures/README.md).
        let cases: [(&str, FaultKind, Option<u32>); 6] = [
            (
                "Individual quota reached. Contact your administrator to enable overages. Resets in 146h14m2s.",
                FaultKind::Quota,
                Some(146 * 3600 + 14 * 60 + 2),
            ),
            (
                "RESOURCE_EXHAUSTED (code 429): Individual quota reached. Please upgrade your subscription to increase your limits. Resets in 71h15m27s.",
                FaultKind::Quota,
                Some(71 * 3600 + 15 * 60 + 27),
            ),
            (
                "You've reached your 5-hour standard usage limit (resets in 3h 21min)",
                FaultKind::Quota,
                Some(3 * 3600 + 21 * 60),
            ),
            (
                "Resource has been exhausted (e.g. check quota).",
                FaultKind::Quota,
                None,
            ),
            (
                "Error: You are not logged into Antigravity.",
                FaultKind::Auth,
                None,
            ),
            (
                "Do you trust the contents of this project?",
                FaultKind::TrustDialog,
                None,
            ),
        ];
        for (line, kind, wait) in cases {
            let fault = one(line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!((fault.kind, fault.retry_after_secs), (kind, wait), "{line}");
        }
    }

    #[test]
    fn prose_mentioning_errors_does_not_classify() {
        for line in [
            "● The quota banner says Individual quota reached. when it trips",
            "  handle `You are not logged into Antigravity.` in the wrapper",
            "We should document Do you trust the contents of this project? in the README",
        ] {
            assert_eq!(one(line), None, "{line}");
        }
    }

    #[test]
    fn capacity_resets_after_its_stated_wait() {
        // The cloudcode-pa sentence agy shares with gemini-cli
        // (google-gemini/gemini-cli#22107 quotes its shape).
        let fault = one(
            "You have exhausted your capacity on this model. Your quota will reset after 2h37m22s.",
        )
        .expect("hit");
        assert_eq!(
            (fault.kind, fault.retry_after_secs),
            (FaultKind::Quota, Some(2 * 3600 + 37 * 60 + 22))
        );
        // A fraction rounds up: resuming early only fails again.
        let fault = one("Individual quota reached. Resets in 71h15m27.79s.").expect("hit");
        assert_eq!(fault.retry_after_secs, Some(71 * 3600 + 15 * 60 + 28));
    }

    #[test]
    fn every_rule_compiles_and_fires() {
        let samples = [
            (
                "Individual quota reached. Resets in 1h.",
                "antigravity/quota-individual",
            ),
            (
                "You've reached your 5-hour standard usage limit (resets in 3h 21min)",
                "antigravity/quota-window",
            ),
            (
                "You have exhausted your capacity on this model. Your quota will reset after 2h37m22s.",
                "antigravity/quota-capacity",
            ),
            (
                "Resource has been exhausted (e.g. check quota).",
                "antigravity/resource-exhausted",
            ),
            (
                "You are not logged into Antigravity.",
                "antigravity/auth-logged-out",
            ),
            (
                "Do you trust the contents of this project?",
                "antigravity/trust-dialog",
            ),
        ];
        assert_every_fault_rule_fires(RULES, &samples, |line| one(line).map(|f| f.rule));
    }
}
