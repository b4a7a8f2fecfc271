//! agy's environment-fault sentences, as users quoted them (agy 1.0.x–1.2.x
//! and its cloudcode-pa backend; docs/adapters/antigravity.md lists each
//! source). None was measured by drover. Rules are anchored at the start of
//! the line (after an optional status glyph or `Error:`), so prose that
//! quotes one does not match.
//!
//! agy states its waits as "Resets in 71h15m27s" / "resets in 3h 21min",
//! which the kit's retry reader does not know; this module reads them.

use drover_kit::FaultKind::{Auth, Quota, TrustDialog};
use drover_kit::faults::FaultRule;
use drover_kit::{Fault, faults};

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

pub fn classify(profile_patterns: &[String], lines: &[String]) -> Option<Fault> {
    let mut fault = faults::classify(RULES, profile_patterns, lines)?;
    if fault.retry_after_secs.is_none() {
        fault.retry_after_secs = resets_in(&fault.evidence);
    }
    Some(fault)
}

/// Seconds in "resets in 71h15m27s", "Resets in 3h 21min", "resets in 45m".
pub fn resets_in(line: &str) -> Option<u32> {
    let lower = line.to_ascii_lowercase();
    let at = lower.find("resets in ")? + "resets in ".len();
    let mut secs: u64 = 0;
    let mut number: Option<u64> = None;
    let mut seen_unit = false;
    let mut chars = lower[at..].chars().peekable();
    while let Some(c) = chars.next() {
        if let Some(d) = c.to_digit(10) {
            number = Some(
                number
                    .unwrap_or(0)
                    .saturating_mul(10)
                    .saturating_add(u64::from(d)),
            );
            continue;
        }
        if c == ' ' && number.is_none() {
            continue;
        }
        if c == '.' && number.is_some() {
            // Drop a fraction ("27.79s" is 27 seconds).
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
            continue;
        }
        let Some(n) = number.take() else {
            break;
        };
        let scale = match c {
            'h' => 3600,
            'm' => 60,
            's' => 1,
            'd' => 86_400,
            _ => break,
        };
        // Skip the rest of a unit word ("min", "hours").
        while chars.peek().is_some_and(|n| n.is_ascii_alphabetic()) {
            chars.next();
        }
        secs = secs.saturating_add(n.saturating_mul(scale));
        seen_unit = true;
    }
    if seen_unit {
        u32::try_from(secs).ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::FaultKind;
    use drover_kit::testing::assert_every_fault_rule_fires;

    fn one(line: &str) -> Option<Fault> {
        classify(&[], &[line.to_string()])
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
    fn resets_in_reads_only_stated_waits() {
        assert_eq!(resets_in("quota resets in 2h"), Some(7200));
        assert_eq!(
            resets_in("Resets in 71h15m27.79s"),
            Some(71 * 3600 + 15 * 60 + 27)
        );
        assert_eq!(resets_in("resets in a while"), None);
        assert_eq!(resets_in("no wait here"), None);
        assert_eq!(resets_in("resets in 99999999999999999999h"), None);
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
