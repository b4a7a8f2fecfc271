//! Claude Code's environment-fault sentences (2.1.332, docs/adapters/claude.md)
//! In `-p` mode they are the `result` text; in a pane they are printed
//! after `●` or `⎿`. Each rule is anchored at the start of the line so an
//! assistant message that merely quotes one does not match.

use drover_kit::FaultKind::{
    Auth, Network, Overload, Privileges, Quota, RateLimit, ServerError, TrustDialog,
};
use drover_kit::faults::FaultRule;

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

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::FaultKind;
    use drover_kit::faults::classify;
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

    #[test]
    fn prose_mentioning_errors_does_not_classify() {
        assert_no_faults(
            RULES,
            &[
                "The story tests how we surface an API Error to users",
                "I handled the case where the API Error: 529 Overloaded. message appears",
                "  - map `Invalid API key · ` to a friendly message",
                "env_fault_patterns = ['API Error.*(Unable to connect|Connection ?(error|refused))']",
            ],
        );
    }
}
