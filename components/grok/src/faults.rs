//! Grok's environment-fault sentences, measured against 0.2.111
//! (tests/fixtures/real/grok). Headless runs print `Error: <message>` on
//! stderr and `{"type":"error","message":…}` on stdout, where the message
//! is `Internal error: {"message": "API error (status N …): …",
//! "http_status": N}` over several lines, `Internal error: "Unauthorized
//! (401) from <url>: …"`, `requests: Rate limit reached for requests` or
//! `Internal error: "reqwest error stream: error sending request for url
//! (…)"`. The TUI prints `Retry failed: API error (status N …)` and `Turn
//! failed in Xs: Internal error: {…}`, and for a 401 `Authentication
//! required — your session has expired or your credentials were rejected.`
//! [`sentences`] unwraps the stdout JSON first. Every rule is anchored at
//! the start of the line, so a reply that quotes one does not match.

use drover_kit::FaultKind::{Auth, Network, Overload, RateLimit, ServerError, TrustDialog};
use drover_kit::faults::FaultRule;

/// The lead-ins before an API error: the JSON message key (headless) or
/// the TUI's retry line.
macro_rules! api_error {
    ($status:literal) => {
        concat!(
            r#"^\s*(?:"message":\s*"|Retry failed:\s*)API error \(status "#,
            $status
        )
    };
}

pub const RULES: &[FaultRule] = &[
    FaultRule::new("grok/overload", Overload, api_error!(r"(?:503|529)\b")),
    FaultRule::new("grok/rate-limit-status", RateLimit, api_error!(r"429\b")),
    FaultRule::new("grok/server-error", ServerError, api_error!(r"5\d\d\b")),
    FaultRule::new(
        "grok/rate-limit",
        RateLimit,
        r"^(?:Error:\s*)?requests: Rate limit reached\b",
    ),
    FaultRule::new(
        "grok/auth-401",
        Auth,
        r#"^(?:Error:\s*)?Internal error:\s*"?Unauthorized \(40[13]\) from "#,
    ),
    FaultRule::new(
        "grok/auth-required",
        Auth,
        r"^\s*(?:┃\s*)?Authentication required — your session has expired or your credentials were rejected",
    ),
    FaultRule::new(
        "grok/network",
        Network,
        r#"^(?:Error:\s*)?Internal error:\s*"?reqwest error stream: error sending request for url\b"#,
    ),
    FaultRule::new(
        "grok/trust-dialog",
        TrustDialog,
        r"^\s*Do you trust the contents of this directory\?",
    ),
];

/// The lines to classify: a `{"type":"error","message":…}` line (headless
/// JSON output) becomes its message's lines; every other line stays.
pub fn sentences(lines: &[String]) -> Vec<String> {
    drover_kit::faults::unwrap_json_lines(lines, |v| {
        if v.get("type")?.as_str()? != "error" {
            return None;
        }
        Some(v.get("message")?.as_str()?.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::testing::assert_every_fault_rule_fires;

    fn one(line: &str) -> Option<String> {
        drover_kit::faults::classify(RULES, &[], &[line.to_string()]).map(|f| f.rule)
    }

    #[test]
    fn rate_limits_state_no_reset_so_none_is_read() {
        // Measured against 0.2.111 (tests/fixtures/real/grok): a 429 says
        // nothing of when to retry; the engine backs off.
        for line in [
            "Error: requests: Rate limit reached for requests",
            r#"  "message": "API error (status 429 Too Many Requests): slow down","#,
        ] {
            let fault =
                drover_kit::faults::classify(RULES, &[], &[line.to_string()]).expect("classified");
            assert_eq!(
                (fault.kind, fault.retry_after_secs),
                (drover_kit::FaultKind::RateLimit, None),
                "{line}"
            );
        }
    }

    #[test]
    fn every_rule_compiles_and_fires() {
        let samples = [
            (
                r#"  "message": "API error (status 503 Service Unavailable): busy","#,
                "grok/overload",
            ),
            (
                "     Retry failed: API error (status 529 <unknown status code>): Overloaded",
                "grok/overload",
            ),
            (
                r#"  "message": "API error (status 429 Too Many Requests): slow down","#,
                "grok/rate-limit-status",
            ),
            (
                r#"  "message": "API error (status 500 Internal Server Error): oops","#,
                "grok/server-error",
            ),
            (
                "Error: requests: Rate limit reached for requests",
                "grok/rate-limit",
            ),
            (
                r#"Error: Internal error: "Unauthorized (401) from http://x/v1/chat/completions: nope"#,
                "grok/auth-401",
            ),
            (
                "  ┃  Authentication required — your session has expired or your credentials were rejected. Run /login",
                "grok/auth-required",
            ),
            (
                r#"Error: Internal error: "reqwest error stream: error sending request for url (http://x)""#,
                "grok/network",
            ),
            (
                "          Do you trust the contents of this directory?",
                "grok/trust-dialog",
            ),
        ];
        assert_every_fault_rule_fires(RULES, &samples, one);
        // A reply quoting a sentence is not a fault.
        assert_eq!(
            one("The log said: API error (status 500 Internal Server Error)"),
            None
        );
    }
}
