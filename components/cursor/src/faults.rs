//! Cursor agent CLI environment-fault sentences, as users and integrators
//! quoted them (Cursor CLI 2025.10–2026.09; docs/adapters/cursor.md lists
//! each source). None was measured by drover. Every rule is anchored at the
//! start of the line so prose that quotes one does not match.

use drover_kit::FaultKind::{Auth, Quota, TrustDialog};
use drover_kit::faults::FaultRule;

pub const RULES: &[FaultRule] = &[
    FaultRule::new(
        "cursor/usage-limit",
        Quota,
        r"^Error: You've hit your usage limit\b",
    ),
    FaultRule::new(
        "cursor/free-requests",
        Quota,
        r"^chatMessage: \*You've hit your free requests limit\.",
    ),
    FaultRule::new(
        "cursor/auth",
        Auth,
        r"^(?:Error:\s*)?(?:Not authenticated|Authentication required)\b",
    ),
    FaultRule::new(
        "cursor/unauthenticated",
        Auth,
        r"^(?:Error:\s*)?\[unauthenticated\] Not logged in\b",
    ),
    FaultRule::new(
        "cursor/trust-required",
        TrustDialog,
        r"^\s*(?:⚠\s*)?Workspace Trust Required\s*$",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::FaultKind;
    use drover_kit::faults::classify;
    use drover_kit::testing::{assert_no_faults, fault_of};

    #[test]
    fn every_rule_compiles_and_fires() {
        // Sentences quoted in public reports (fixtures/README.md).
        let samples = [
            (
                "Error: You've hit your usage limit",
                FaultKind::Quota,
                "cursor/usage-limit",
            ),
            (
                "chatMessage: *You've hit your free requests limit. [Upgrade to ",
                FaultKind::Quota,
                "cursor/free-requests",
            ),
            ("Error: Not authenticated", FaultKind::Auth, "cursor/auth"),
            ("Authentication required", FaultKind::Auth, "cursor/auth"),
            (
                "[unauthenticated] Not logged in. If you are logged in, try logging out and back in.",
                FaultKind::Auth,
                "cursor/unauthenticated",
            ),
            (
                "⚠ Workspace Trust Required",
                FaultKind::TrustDialog,
                "cursor/trust-required",
            ),
        ];
        for rule in RULES {
            assert!(
                samples.iter().any(|(_, _, id)| *id == rule.id),
                "no sample for {}",
                rule.id
            );
        }
        for (line, kind, id) in samples {
            assert_eq!(
                fault_of(RULES, line),
                Some((kind, id.to_string())),
                "{line}"
            );
        }
    }

    #[test]
    fn the_usage_limit_block_classifies_by_its_error_line() {
        let block: Vec<String> = include_str!("../fixtures/headless-usage-limit.txt")
            .lines()
            .map(str::to_string)
            .collect();
        let fault = classify(RULES, &[], &block).expect("hit");
        assert_eq!(fault.kind, FaultKind::Quota);
    }

    #[test]
    fn prose_mentioning_errors_does_not_classify() {
        assert_no_faults(
            RULES,
            &[
                "The wrapper prints Error: You've hit your usage limit when the plan runs out",
                "  handle `Authentication required` from cursor-agent",
                "Docs: Workspace Trust Required appears in fresh worktrees",
            ],
        );
    }
}
