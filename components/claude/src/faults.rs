//! Claude Code's environment-fault sentences (2.1.332, docs/adapters/claude.md)
//! In `-p` mode they are the `result` text; in a pane they are printed
//! after `●` or `⎿`. Each rule is anchored at the start of the line so an
//! assistant message that merely quotes one does not match.

use drover_kit::FaultKind::{
    Auth, Network, Overload, Privileges, Quota, RateLimit, ServerError, TrustDialog,
};
use drover_kit::faults::FaultRule;
use drover_kit::resets::Clock;
use drover_kit::{Fault, Profile};

/// `● `, `⎿ ` or `✻ ` lead-ins the TUI puts before a sentence, or the `-p`
/// result object of a failed turn (2.1.332 writes `is_error` before
/// `result`; a successful turn's reply that quotes a sentence has
/// `is_error: false` and does not match).
macro_rules! lead {
    ($rest:literal) => {
        concat!(
            r#"^(?:(?:[●⎿✻]\s*)?|\{.*"is_error":\s*true\b.*"result":\s*")"#,
            $rest
        )
    };
}

pub const RULES: &[FaultRule] = &[
    FaultRule::new(
        "claude/overload",
        Overload,
        lead!(r"API Error: 529 Overloaded\."),
    ),
    FaultRule::new(
        "claude/overload-retrying",
        Overload,
        lead!(r"529 Overloaded · retrying in \d+s"),
    ),
    // With retries on, the sentence once they run out (2.1.332).
    FaultRule::new(
        "claude/overload-repeated",
        Overload,
        lead!(r"API Error: Repeated 529 Overloaded errors\."),
    ),
    // 503 is Anthropic's `overloaded_error` too (`api_error_type` in -p).
    FaultRule::new(
        "claude/overload-503",
        Overload,
        lead!(r"API Error: 503 Service unavailable\."),
    ),
    FaultRule::new(
        "claude/server-error",
        ServerError,
        lead!(r"API Error: 5\d\d\b"),
    ),
    FaultRule::new(
        "claude/rate-limit",
        RateLimit,
        lead!(r"API Error: Request rejected \(429\)"),
    ),
    FaultRule::new("claude/auth-key", Auth, lead!(r"Invalid API key · ")),
    FaultRule::new("claude/auth-401", Auth, lead!(r"API Error: 401\b")),
    FaultRule::new(
        "claude/auth-login",
        Auth,
        lead!(r"(?:OAuth token has expired|Please run /login)"),
    ),
    FaultRule::new(
        "claude/network-reset",
        Network,
        lead!(r"API Error: Connection dropped \(ECONNRESET\)"),
    ),
    FaultRule::new(
        "claude/network-refused",
        Network,
        lead!(r"API Error: Connection refused"),
    ),
    FaultRule::new(
        "claude/network",
        Network,
        lead!(r"API Error: (?:Unable to connect|Connection error|Request timed out)"),
    ),
    FaultRule::new(
        "claude/network-onboarding",
        Network,
        r"^\s*(?:Unable to connect to Anthropic services|Failed to connect to api\.anthropic\.com: E[A-Z_]+)",
    ),
    FaultRule::new(
        "claude/quota-credit",
        Quota,
        lead!(r"(?:Your )?[Cc]redit balance is too low"),
    ),
    FaultRule::new(
        "claude/quota-limit",
        Quota,
        lead!(r"(?:Claude (?:AI )?usage limit reached|\d+-hour limit reached)"),
    ),
    // 2.x: "You've hit your limit · resets 10pm (America/New_York)", also
    // "your session limit", "your weekly limit".
    FaultRule::new(
        "claude/quota-hit-limit",
        Quota,
        lead!(r"You(?:'|’)ve hit your (?:\w+ )?limit · resets\b"),
    ),
    FaultRule::new(
        "claude/trust-dialog",
        TrustDialog,
        r"^\s*(?:│\s*)?(?:Do you trust the files in this folder\?|Quick safety check: Is this a project you created or one you trust\?)",
    ),
    // As root (without IS_SANDBOX=1) both `--permission-mode
    // bypassPermissions` and `--dangerously-skip-permissions` exit 1 with
    // this sentence, before any request.
    FaultRule::new(
        ROOT_RULE,
        Privileges,
        r"^\s*--dangerously-skip-permissions cannot be used with root/sudo privileges",
    ),
];

/// The rule for Claude Code's refusal to bypass permissions as root.
pub const ROOT_RULE: &str = "claude/root-bypass";

/// The rules over `lines`, reset times read with the bundled tz database:
/// Claude Code names the zone of its reset ("resets 3pm
/// (America/Los_Angeles)").
pub fn classify(profile: &Profile, lines: &[String]) -> Option<Fault> {
    let clock = Clock::of(profile, Some(drover_kit::tz::zone));
    drover_kit::faults::classify_at(RULES, &profile.env_fault_patterns, lines, &clock)
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::FaultKind;
    use drover_kit::faults::{classify, classify_at};
    use drover_kit::resets::Zone;
    use drover_kit::testing::{assert_fault_kinds, assert_no_faults, fault_of};

    #[test]
    fn every_documented_sentence_classifies() {
        // Exact sentences from docs/adapters/claude.md (Claude Code 2.1.332).
        let cases = [
            (
                "API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:18001).",
                FaultKind::ServerError,
            ),
            (
                "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:18001).",
                FaultKind::Overload,
            ),
            (
                "API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit",
                FaultKind::RateLimit,
            ),
            ("Invalid API key · Fix external API key", FaultKind::Auth),
            (
                "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons",
                FaultKind::Privileges,
            ),
            (
                "API Error: Connection dropped (ECONNRESET). Check the gateway set in ANTHROPIC_BASE_URL, then try again.",
                FaultKind::Network,
            ),
            (
                "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)",
                FaultKind::Network,
            ),
            (
                "✻ 529 Overloaded · retrying in 1s · attempt 2/2",
                FaultKind::Overload,
            ),
            (
                "● API Error: 529 Overloaded. This is a server-side issue",
                FaultKind::Overload,
            ),
            (
                "Failed to connect to api.anthropic.com: ENOTFOUND",
                FaultKind::Network,
            ),
        ];
        assert_fault_kinds(RULES, &cases);
    }

    #[test]
    fn the_root_refusal_has_its_own_rule() {
        let line = "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons";
        assert_eq!(
            fault_of(RULES, line).map(|(_, rule)| rule).as_deref(),
            Some(ROOT_RULE)
        );
        // Quoted in a reply, it is not the CLI refusing.
        assert_eq!(fault_of(RULES, &format!("● The error says: {line}")), None);
    }

    #[test]
    fn retry_wait_is_reported() {
        let fault = classify(
            RULES,
            &[],
            &["✻ 529 Overloaded · retrying in 7s · attempt 1/2".to_string()],
        )
        .expect("hit");
        assert_eq!(fault.retry_after_secs, Some(7));
    }

    /// 2026-07-26T12:00:00Z.
    const NOW_MS: u64 = 1_785_067_200_000;

    #[test]
    fn usage_limits_say_when_they_reset() {
        // The sentences as users pasted them; expected waits from NOW_MS,
        // worked out with Python's zoneinfo.
        let cases: &[(&str, Option<u32>)] = &[
            // github.com/anthropics/claude-code/issues/11429 (title; the `-p` result).
            ("Claude AI usage limit reached|1785070800", Some(3600)),
            // anthropics/claude-code#15064 (a `⎿` row in the pane).
            (
                "⎿  Claude usage limit reached. Your limit will reset at 9am (America/Chicago).",
                Some(7200),
            ),
            // anthropics/claude-code#2087 (POSIX zone: UTC-5).
            (
                "Claude usage limit reached. Your limit will reset at 1pm (Etc/GMT+5).",
                Some(21_600),
            ),
            // anthropics/claude-code#22946.
            (
                "You've hit your limit · resets 10pm (America/New_York)",
                Some(50_400),
            ),
            // anthropics/claude-code#77082 (20:30 in Tokyo has passed: tomorrow's).
            (
                "You've hit your session limit · resets 8:30pm (Asia/Tokyo)",
                Some(84_600),
            ),
            // anthropics/claude-code#54698.
            (
                "You've hit your limit · resets 1:30am (Asia/Dhaka)",
                Some(27_000),
            ),
            // anthropics/claude-code#93340.
            (
                "You've hit your weekly limit · resets 4am (Europe/Madrid)",
                Some(50_400),
            ),
            // anthropics/claude-code#81647.
            (
                "You've hit your weekly limit · resets Jul 31, 2am (UTC)",
                Some(396_000),
            ),
            // anthropics/claude-code#80903.
            (
                "You've hit your weekly limit · resets Jul 27 at 4:30am (Asia/Calcutta)",
                Some(39_600),
            ),
            // aniketkarne/CCAutoRenew#3: an older sentence with no zone, which
            // the sandbox cannot place (the profile's `timezone` setting can).
            (
                "Claude usage limit reached. Your limit will reset at 12am.",
                None,
            ),
            // anthropics/claude-code#92834: no zone either.
            ("You've hit your weekly limit · resets Sep 15 at 7pm", None),
        ];
        let mut clock = Clock::at(NOW_MS, None);
        clock.names = Some(drover_kit::tz::zone);
        for (line, wait) in cases {
            let fault = classify_at(RULES, &[], &[line.to_string()], &clock)
                .unwrap_or_else(|| panic!("{line}"));
            assert_eq!(
                (fault.kind, fault.retry_after_secs),
                (FaultKind::Quota, *wait),
                "{line}"
            );
        }
        // With the host's zone named, a zone-less time is read in it.
        let utc = Clock::at(NOW_MS, Some(Zone::Fixed(0)));
        let line = "Claude usage limit reached. Your limit will reset at 12am.".to_string();
        let fault = classify_at(RULES, &[], &[line], &utc).expect("hit");
        assert_eq!(fault.retry_after_secs, Some(43_200));
    }

    #[test]
    fn a_reset_wrapped_onto_the_next_row_is_read() {
        // anthropics/claude-code#9236: the pane wrapped the sentence.
        let lines = [
            "Claude usage limit reached. Your limit will reset".to_string(),
            "     at 3pm (America/Santiago).".to_string(),
        ];
        let mut clock = Clock::at(NOW_MS, None);
        clock.names = Some(drover_kit::tz::zone);
        let fault = classify_at(RULES, &[], &lines, &clock).expect("hit");
        // 3pm in Santiago (UTC-4 in July) is 19:00 UTC.
        assert_eq!(
            (fault.kind, fault.retry_after_secs),
            (FaultKind::Quota, Some(7 * 3600))
        );
    }

    #[test]
    fn the_json_result_of_a_failed_turn_carries_the_reset() {
        let line = r#"{"type":"result","subtype":"success","is_error":true,"result":"Claude AI usage limit reached|1785070800","session_id":"s"}"#;
        let fault =
            classify_at(RULES, &[], &[line.to_string()], &Clock::at(NOW_MS, None)).expect("hit");
        assert_eq!(
            (fault.kind, fault.retry_after_secs),
            (FaultKind::Quota, Some(3600))
        );
    }

    #[test]
    fn prose_mentioning_errors_does_not_classify() {
        assert_no_faults(
            RULES,
            &[
                "The story tests how we surface an API Error to users",
                "I handled the case where the API Error: 529 Overloaded. message appears",
                "  - map `Invalid API key · ` to a friendly message",
                "env_fault_patterns = ['API Error.*(Unable to connect|Connection ?(error|refused))']",
                "● When you see You've hit your limit · resets 3pm, wait",
            ],
        );
    }
}
