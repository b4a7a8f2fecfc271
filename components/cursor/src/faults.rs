//! Cursor agent CLI environment-fault sentences, as users and integrators
//! quoted them (Cursor CLI 2025.10–2026.09; docs/adapters/cursor.md lists
//! each source). None was measured by drover. Every rule is anchored at the
//! start of the line so prose that quotes one does not match.

use drover_kit::FaultKind::{Auth, Quota, TrustDialog};
use drover_kit::faults::FaultRule;
use drover_kit::patterns::compiled;
use drover_kit::resets::{Clock, civil_secs};
use drover_kit::{Fault, FaultKind, Profile};

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

/// The rules over `lines`; a usage limit's reset is where its block says the
/// monthly cycle ends.
pub fn classify(profile: &Profile, lines: &[String]) -> Option<Fault> {
    classify_at(profile, lines, &Clock::of(profile, None))
}

fn classify_at(profile: &Profile, lines: &[String], clock: &Clock) -> Option<Fault> {
    let mut fault =
        drover_kit::faults::classify_at(RULES, &profile.env_fault_patterns, lines, clock)?;
    if fault.kind == FaultKind::Quota && fault.retry_after_secs.is_none() {
        fault.retry_after_secs = cycle_end(lines, clock);
    }
    Some(fault)
}

/// Seconds until "your monthly cycle ends on 10/2/2026" (US month/day/year),
/// read as the start of that day in the profile's `timezone`: the block gives
/// no zone, so without one it is not read. The sentence wraps, so the lines
/// are read together.
fn cycle_end(lines: &[String], clock: &Clock) -> Option<u32> {
    const PATTERN: &str = r"(?i)\bmonthly cycle ends on (\d{1,2})/(\d{1,2})/(\d{4})\b";
    let zone = clock.local.as_ref()?;
    let text = lines.join(" ");
    let caps = compiled(PATTERN)?.captures(&text)?;
    let num = |n: usize| -> Option<i64> { caps.get(n)?.as_str().parse().ok() };
    let civil = civil_secs(num(3)?, num(1)?, num(2)?, 0, 0, 0)?;
    let at = civil - i64::from(zone.offset_at(civil));
    let now = i64::try_from(clock.now_ms / 1000).ok()?;
    Some(u32::try_from((at - now).max(0)).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::resets::Zone;
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
        let fault = drover_kit::faults::classify(RULES, &[], &block).expect("hit");
        assert_eq!(fault.kind, FaultKind::Quota);
    }

    #[test]
    fn the_usage_limit_resets_when_the_monthly_cycle_ends() {
        // The block cursor-agent prints (fixtures/headless-usage-limit.txt;
        // cursor/cursor#3703 shows the same with "ends on 11/17/2025").
        let block: Vec<String> = include_str!("../fixtures/headless-usage-limit.txt")
            .lines()
            .map(str::to_string)
            .collect();
        let profile = drover_kit::Profile::new("cursor", "cursor-agent", "", "");
        // 2026-09-30T12:00:00Z; the cycle ends at the start of 2026-10-02.
        let now_ms = 1_790_769_600_000;
        let utc = Clock::at(now_ms, Some(Zone::Fixed(0)));
        let fault = classify_at(&profile, &block, &utc).expect("hit");
        assert_eq!(
            (fault.kind, fault.retry_after_secs),
            (FaultKind::Quota, Some(36 * 3600))
        );
        // At UTC-4 that midnight is 04:00 UTC.
        let east = Clock::at(now_ms, Some(Zone::Fixed(-4 * 3600)));
        let fault = classify_at(&profile, &block, &east).expect("hit");
        assert_eq!(fault.retry_after_secs, Some(40 * 3600));
        // No zone: a date alone is not placed.
        let fault = classify_at(&profile, &block, &Clock::at(now_ms, None)).expect("hit");
        assert_eq!(
            (fault.kind, fault.retry_after_secs),
            (FaultKind::Quota, None)
        );
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
