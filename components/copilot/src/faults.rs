//! Copilot CLI's environment-fault sentences: those measured against 1.0.102
//! in its bring-your-own-provider mode (tests/fixtures/real/copilot), and
//! those users captured in github/copilot-cli issues (0.0.328–1.0.81;
//! docs/adapters/copilot.md lists each source). The TUI prints errors after
//! `✗`/`✘`/`×`/`❌` and notices after `●`; `❌ Error: (query) ` also occurs.
//! `--output-format json` prints them as the `message` of a `session.error`
//! line, which [`sentences`] unwraps first. Every rule is anchored at the
//! start of the line so an assistant message that merely quotes one does
//! not match.

use drover_kit::FaultKind::{Auth, Network, Overload, Quota, RateLimit, ServerError, TrustDialog};
use drover_kit::faults::FaultRule;

/// The lead-ins the TUI puts before a sentence.
macro_rules! lead {
    ($rest:expr) => {
        concat!(r"^(?:[●✗✘×❌]\s*)?(?:Error:\s*\(\w+\)\s*)?", $rest)
    };
}

/// The final line after five failed attempts; its `Last error:` decides.
macro_rules! retried {
    ($last:literal) => {
        lead!(concat!(
            r"(?:Execution failed: )?(?:Error: )?Failed to get response from the AI model; retried \d+ times\b.*Last error: ",
            $last
        ))
    };
}

/// The lines to classify: a `session.error` JSONL line (headless JSON
/// output) becomes its message's lines; every other line stays as it is.
pub fn sentences(lines: &[String]) -> Vec<String> {
    drover_kit::faults::unwrap_json_lines(lines, |v| {
        if v.get("type")?.as_str()? != "session.error" {
            return None;
        }
        Some(v.get("data")?.get("message")?.as_str()?.to_string())
    })
}

pub const RULES: &[FaultRule] = &[
    FaultRule::new(
        "copilot/rate-limit",
        RateLimit,
        lead!(
            r"Sorry, you've hit a rate limit that restricts the number of Copilot model requests"
        ),
    ),
    FaultRule::new(
        "copilot/rate-limit-call",
        RateLimit,
        lead!(r#"Model call failed: \{"message":"rate limit exceeded","code":"rate_limited"\}"#),
    ),
    FaultRule::new(
        "copilot/quota-402",
        Quota,
        lead!(r"(?:Execution failed: )?402 You have no quota\b"),
    ),
    FaultRule::new(
        "copilot/quota-exceeded",
        Quota,
        lead!(r"Quota exceeded\. Upgrade to increase your limit"),
    ),
    FaultRule::new(
        "copilot/quota-call",
        Quota,
        lead!(r#"Model call failed: \{"message":"You have no quota","code":"quota_exceeded"\}"#),
    ),
    FaultRule::new(
        "copilot/auth-failed",
        Auth,
        r"^Error: Authentication failed \(Request ID: ",
    ),
    FaultRule::new(
        "copilot/auth-provider",
        Auth,
        lead!(r"Authentication failed with provider at \S+ \(HTTP 40[13]\)"),
    ),
    FaultRule::new(
        "copilot/network-provider",
        Network,
        lead!(r"Could not connect to local model provider at "),
    ),
    FaultRule::new(
        "copilot/auth-login",
        Auth,
        lead!(r"Authorization error, you may need to run /login"),
    ),
    FaultRule::new(
        "copilot/auth-401",
        Auth,
        lead!(r#"Model call failed: "?401\b"#),
    ),
    FaultRule::new(
        "copilot/network-goaway",
        Network,
        retried!(
            r#"CAPIError: 503 \{"error":\{"message":"HTTP/2 GOAWAY connection terminated","type":"connection_error"\}\}"#
        ),
    ),
    FaultRule::new(
        "copilot/network-request",
        Network,
        retried!(r"Failed native model HTTP request: .*connection"),
    ),
    FaultRule::new(
        "copilot/overload-degraded",
        Overload,
        retried!(r#"CAPIError: 503 .*"code":"model_degraded""#),
    ),
    FaultRule::new(
        "copilot/overload-503",
        Overload,
        retried!(r"CAPIError: 503\b"),
    ),
    FaultRule::new(
        "copilot/rate-limit-429",
        RateLimit,
        retried!(r"CAPIError: 429\b"),
    ),
    // Bring-your-own-provider mode quotes the provider's status and message.
    FaultRule::new(
        "copilot/overload-503-provider",
        Overload,
        retried!(r"(?:503|529)\b"),
    ),
    FaultRule::new(
        "copilot/rate-limit-429-provider",
        RateLimit,
        retried!(r"429\b"),
    ),
    FaultRule::new(
        "copilot/server-error-5xx",
        ServerError,
        retried!(r"CAPIError: 5\d\d\b"),
    ),
    FaultRule::new("copilot/server-error-retried", ServerError, retried!(r"")),
    FaultRule::new(
        "copilot/server-error-retrying",
        ServerError,
        lead!(r"Response was interrupted due to a server error\. Retrying\.\.\."),
    ),
    FaultRule::new(
        "copilot/transient-retrying",
        ServerError,
        lead!(r"Request failed due to a transient API error\. Retrying\.\.\."),
    ),
    FaultRule::new(
        "copilot/trust-dialog",
        TrustDialog,
        r"^\s*(?:│\s*)?(?:Confirm folder trust|Do you trust the files in this folder\?)",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::FaultKind;
    use drover_kit::faults::{classify, classify_at};
    use drover_kit::resets::Clock;
    use drover_kit::testing::{
        assert_every_fault_rule_fires, assert_fault_kinds, assert_no_faults, fault_of,
    };

    #[test]
    fn every_collected_sentence_classifies() {
        // Exact sentences from github/copilot-cli issues (fixtures/README.md).
        let cases = [
            (
                "✗ Sorry, you've hit a rate limit that restricts the number of Copilot model requests you can make within a specific time period. Please try again in 2 hours. Please review our Terms of ",
                FaultKind::RateLimit,
            ),
            (
                r#"× Model call failed: {"message":"rate limit exceeded","code":"rate_limited"}"#,
                FaultKind::RateLimit,
            ),
            (
                "✗ 402 You have no quota (Request ID: 0DAE:25E807:31A9BC6:3EB561C:69B79179)",
                FaultKind::Quota,
            ),
            (
                "✘ Execution failed: 402 You have no quota",
                FaultKind::Quota,
            ),
            (
                "✘ Quota exceeded. Upgrade to increase your limit: ",
                FaultKind::Quota,
            ),
            (
                r#"✘ Model call failed: {"message":"You have no quota","code":"quota_exceeded"} (Request "#,
                FaultKind::Quota,
            ),
            (
                "Error: Authentication failed (Request ID: 2915:A0B85:4D563A2:5BD65FE:6A915A71)",
                FaultKind::Auth,
            ),
            (
                "✗ Authorization error, you may need to run /login",
                FaultKind::Auth,
            ),
            (
                r#"✗ Model call failed: "401 401 unauthorized: unauthorized: AuthenticateToken authentication failed\n""#,
                FaultKind::Auth,
            ),
            (
                r#"✗ Execution failed: Error: Failed to get response from the AI model; retried 5 times (total retry wait time: 95.06408330678565 seconds) Last error: CAPIError: 503 {"error":{"message":"HTTP/2 GOAWAY connection terminated","type":"connection_error"}} "#,
                FaultKind::Network,
            ),
            (
                "Execution failed: Error: Failed to get response from the AI model; retried 5 times (total retry wait time: 6.00 seconds) Last error: Failed native model HTTP request: error sending request for url (https://api.individual.githubcopilot.com/v1/messages): client error (SendRequest): connection error: peer closed connection without sending TLS close_notify",
                FaultKind::Network,
            ),
            (
                r#"Execution failed: Error: Failed to get response from the AI model; retried 5 times (total retry wait time: 30.56 seconds) (Request-ID 9DD0:329977:76A6DF:80D0C6:6A18A998) Last error: CAPIError: 503 {"error":{"message":"Claude Opus 4.8 is currently experiencing issues. We are actively working to resolve the issue. In the meantime, you might want to use a different model.","code":"model_degraded"}}"#,
                FaultKind::Overload,
            ),
            (
                "✗ Execution failed: Error: Failed to get response from the AI model; retried 5 times (total retry wait time: 6.257302850998652 seconds) Last error: Unknown error",
                FaultKind::ServerError,
            ),
            (
                r#"❌ Error: (query) Execution failed: Error: Failed to get response from the AI model; retried 5 times (total retry wait time: 93.00126834108823 seconds) Last error: CAPIError: 503 {"error":{"message":"HTTP/2 GOAWAY connection terminated","type":"connection_error"}}"#,
                FaultKind::Network,
            ),
            (
                "● Response was interrupted due to a server error. Retrying...",
                FaultKind::ServerError,
            ),
            (
                "● Request failed due to a transient API error. Retrying...",
                FaultKind::ServerError,
            ),
            (
                " │ Confirm folder trust                                                │",
                FaultKind::TrustDialog,
            ),
        ];
        assert_fault_kinds(RULES, &cases);
    }

    #[test]
    fn the_stated_wait_is_reported() {
        let line = "✗ Sorry, you've hit a rate limit that restricts the number of Copilot model requests you can make within a specific time period. Please try again in 2 hours.";
        let fault = classify(RULES, &[], &[line.to_string()]).expect("hit");
        assert_eq!(fault.retry_after_secs, Some(7200));
    }

    #[test]
    fn rate_limits_say_when_to_try_again() {
        let clock = Clock::at(1_785_067_200_000, None);
        let cases: &[(&[&str], u32)] = &[
            // github/copilot-cli#2754.
            (
                &[
                    "Sorry, you've hit a rate limit that restricts the number of Copilot model requests you can make within a specific time period. Please try again in 15 hours 23 minutes. Please review our Terms of Service (https://docs.github.com/site-policy/github-terms/github-terms-of-service). (Request ID: AD17:22B34F:A3C7FB:B1FD5A:69E0A5CB)",
                ],
                15 * 3600 + 23 * 60,
            ),
            // github/copilot-cli#2696: the TUI wrapped the wait onto the next row.
            (
                &[
                    "✗ Sorry, you've hit a rate limit that restricts the number of Copilot model requests you can make within a specific time",
                    "  period. Please try again in 58 hours. Please review our Terms of Service",
                ],
                58 * 3600,
            ),
        ];
        for (rows, wait) in cases {
            let lines: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
            let fault = classify_at(RULES, &[], &lines, &clock).expect("classified");
            assert_eq!(
                (fault.kind, fault.retry_after_secs),
                (FaultKind::RateLimit, Some(*wait)),
                "{rows:?}"
            );
        }
        // github/copilot-cli#138: no wait stated, so none read.
        let line =
            r#"× Model call failed: {"message":"rate limit exceeded","code":"rate_limited"}"#;
        let fault = classify_at(RULES, &[], &[line.to_string()], &clock).expect("classified");
        assert_eq!(
            (fault.kind, fault.retry_after_secs),
            (FaultKind::RateLimit, None)
        );
    }

    #[test]
    fn prose_mentioning_errors_does_not_classify() {
        assert_no_faults(
            RULES,
            &[
                "● I saw 'Sorry, you've hit a rate limit that restricts the number of Copilot model requests' in the logs",
                "The handler maps 402 You have no quota to a banner",
                "  - retry when Failed to get response from the AI model; retried 5 times appears",
                "We should explain what Confirm folder trust means in the README",
            ],
        );
    }

    #[test]
    fn every_rule_compiles_and_fires() {
        // A rule whose regex fails to compile is skipped silently by the kit.
        let retried = "✗ Execution failed: Error: Failed to get response from the AI model; retried 5 times (total retry wait time: 6.0 seconds) Last error: ";
        let samples = [
            ("✗ Sorry, you've hit a rate limit that restricts the number of Copilot model requests you can make".to_string(), "copilot/rate-limit"),
            (r#"× Model call failed: {"message":"rate limit exceeded","code":"rate_limited"}"#.to_string(), "copilot/rate-limit-call"),
            ("✗ 402 You have no quota (Request ID: x)".to_string(), "copilot/quota-402"),
            ("✘ Quota exceeded. Upgrade to increase your limit: https://github.com/features/copilot/plans".to_string(), "copilot/quota-exceeded"),
            (r#"✘ Model call failed: {"message":"You have no quota","code":"quota_exceeded"}"#.to_string(), "copilot/quota-call"),
            ("Error: Authentication failed (Request ID: x)".to_string(), "copilot/auth-failed"),
            ("Authentication failed with provider at http://127.0.0.1:1/v1 (HTTP 401).".to_string(), "copilot/auth-provider"),
            ("Could not connect to local model provider at http://127.0.0.1:1/v1.".to_string(), "copilot/network-provider"),
            ("✗ Authorization error, you may need to run /login".to_string(), "copilot/auth-login"),
            ("✗ Model call failed: \"401 401 unauthorized\"".to_string(), "copilot/auth-401"),
            (format!(r#"{retried}CAPIError: 503 {{"error":{{"message":"HTTP/2 GOAWAY connection terminated","type":"connection_error"}}}}"#), "copilot/network-goaway"),
            (format!("{retried}Failed native model HTTP request: error sending request: connection error"), "copilot/network-request"),
            (format!(r#"{retried}CAPIError: 503 {{"error":{{"message":"busy","code":"model_degraded"}}}}"#), "copilot/overload-degraded"),
            (format!("{retried}CAPIError: 503 Service Unavailable"), "copilot/overload-503"),
            (format!("{retried}CAPIError: 429 Too Many Requests"), "copilot/rate-limit-429"),
            ("Failed to get response from the AI model; retried 5 times (total retry wait time: 14.20 seconds) Last error: 503 The engine is currently overloaded, please try again later.".to_string(), "copilot/overload-503-provider"),
            ("Failed to get response from the AI model; retried 5 times (total retry wait time: 55.87 seconds) Last error: 429 Rate limit reached for requests".to_string(), "copilot/rate-limit-429-provider"),
            (format!("{retried}CAPIError: 502 Bad Gateway"), "copilot/server-error-5xx"),
            (format!("{retried}Unknown error"), "copilot/server-error-retried"),
            ("● Response was interrupted due to a server error. Retrying...".to_string(), "copilot/server-error-retrying"),
            ("● Request failed due to a transient API error. Retrying...".to_string(), "copilot/transient-retrying"),
            (" │ Do you trust the files in this folder?".to_string(), "copilot/trust-dialog"),
        ];
        assert_every_fault_rule_fires(RULES, &samples, |line| {
            fault_of(RULES, line).map(|(_, rule)| rule)
        });
    }
}
