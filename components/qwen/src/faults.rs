//! Qwen Code's environment-fault sentences (0.24.4, docs/adapters/qwen.md)
//! `-p` prints them on stderr as `[API Error: <status> <server
//! message>]`, or `Retrying in Ns (attempt i/n): [API Error: …]` while it
//! retries; the TUI shows the same text after `✕`. Each rule is anchored at
//! the start of the line (after an optional box border and `✕`), so a reply
//! that merely quotes one does not match.

use drover_kit::FaultKind::{Auth, Network, Overload, Quota, RateLimit, ServerError, TrustDialog};
use drover_kit::faults::FaultRule;

/// The optional `│ ` border and `✕ ` error mark before a sentence (or the
/// `"message": "` of the JSON error object `-p` ends stderr with), then the
/// optional retry notice in front of the bracketed error.
macro_rules! api_error {
    ($rest:literal) => {
        concat!(
            r#"^(?:"message":\s*")?(?:│\s*)?(?:[✕✗]\s*)?(?:Retrying in \d+s \(attempt \d+/\d+\): )?\[API Error: "#,
            $rest
        )
    };
}

pub const RULES: &[FaultRule] = &[
    // Quota before rate limit: both are 429s, the words tell them apart.
    // Inside the brackets only: 0.24.4 follows every 429 with "Possible
    // quota limitations in place or slow response times detected", which
    // says nothing about this 429.
    FaultRule::new(
        "qwen/quota",
        Quota,
        api_error!(r"429\b[^\]]*(?i:quota|billing|insufficient balance|free allocated)"),
    ),
    FaultRule::new("qwen/rate-limit", RateLimit, api_error!(r"429\b")),
    FaultRule::new("qwen/auth", Auth, api_error!(r"(?:401|403)\b")),
    FaultRule::new("qwen/overload", Overload, api_error!(r"(?:503|529)\b")),
    FaultRule::new("qwen/server-error", ServerError, api_error!(r"5\d\d\b")),
    // The OpenAI client's own sentences when no HTTP answer came back (not
    // observed offline: a closed port made 0.24.4 retry silently).
    FaultRule::new(
        "qwen/network",
        Network,
        api_error!(
            r"(?:Connection error|Request timed out|fetch failed|[^\]]*\bE(?:CONNREFUSED|CONNRESET|TIMEDOUT|NOTFOUND|AI_AGAIN)\b)"
        ),
    ),
    FaultRule::new(
        "qwen/trust-dialog",
        TrustDialog,
        r"^\s*(?:│\s*)?Do you trust this folder\?",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::FaultKind;
    use drover_kit::faults::{classify, classify_at};
    use drover_kit::resets::Clock;
    use drover_kit::testing::{assert_fault_kinds, assert_no_faults};

    #[test]
    fn every_documented_sentence_classifies() {
        // Exact stderr lines from docs/adapters/qwen.md (Qwen Code 0.24.4).
        let cases = [
            (
                "[API Error: 500 The server had an error while processing your request.]",
                FaultKind::ServerError,
            ),
            (
                "[API Error: 401 Incorrect API key provided]",
                FaultKind::Auth,
            ),
            (
                "Retrying in 60s (attempt 1/10): [API Error: 429 Rate limit reached for requests]",
                FaultKind::RateLimit,
            ),
            // The same sentences as the TUI prints them.
            ("✕ [API Error: 529 Overloaded]", FaultKind::Overload),
            (
                "│ ✕ [API Error: 401 Incorrect API key provided] │",
                FaultKind::Auth,
            ),
            (
                "[API Error: 429 You exceeded your current quota, please check your plan and billing details.]",
                FaultKind::Quota,
            ),
            ("[API Error: Connection error.]", FaultKind::Network),
            ("│ Do you trust this folder?", FaultKind::TrustDialog),
        ];
        assert_fault_kinds(RULES, &cases);
    }

    #[test]
    fn the_retry_wait_is_reported_and_the_newest_line_wins() {
        let lines = [
            "[API Error: 500 The server had an error while processing your request.]".to_string(),
            "Retrying in 60s (attempt 1/10): [API Error: 429 Rate limit reached for requests]"
                .to_string(),
            "Retrying provider attempt (0 buffered tool call(s) discarded).".to_string(),
        ];
        let fault = classify(RULES, &[], &lines).expect("classified");
        assert_eq!(
            (fault.kind, fault.retry_after_secs),
            (FaultKind::RateLimit, Some(60))
        );
        assert_eq!(fault.rule, "qwen/rate-limit");
    }

    #[test]
    fn rate_limits_say_when_to_retry() {
        let clock = Clock::at(1_785_067_200_000, None);
        let read = |line: &str| {
            let fault = classify_at(RULES, &[], &[line.to_string()], &clock).expect("hit");
            (fault.kind, fault.retry_after_secs)
        };
        // Measured against 0.24.4 (docs/adapters/qwen.md): its own retry wait.
        assert_eq!(
            read(
                "Retrying in 60s (attempt 1/10): [API Error: 429 Rate limit reached for requests]"
            ),
            (FaultKind::RateLimit, Some(60))
        );
        // An OpenAI-compatible provider's 429 message (the text of
        // anomalyco/opencode#1712) in Qwen Code's `[API Error: …]` form.
        assert_eq!(
            read(
                "[API Error: 429 Rate limit reached for gpt-5-mini in organization org-x on tokens per min (TPM): Limit 200000, Used 124035, Requested 79017. Please try again in 915ms. Visit https://platform.openai.com/account/rate-limits to learn more.]"
            ),
            (FaultKind::RateLimit, Some(1))
        );
        // QwenLM/qwen-code#1742: the free tier's daily quota states no reset.
        assert_eq!(
            read("[API Error: 429 Free allocated quota exceeded.]"),
            (FaultKind::Quota, None)
        );
    }

    #[test]
    fn prose_mentioning_errors_does_not_classify() {
        assert_no_faults(
            RULES,
            &[
                "The story tests how we surface an [API Error: 500 …] to users",
                "◆ I saw [API Error: 401 Incorrect API key provided] in the log and fixed the key",
                "  - map `[API Error: 429` to a retry",
                "Retrying provider attempt (0 buffered tool call(s) discarded).",
                "Operation cancelled.",
                "Should we ask: Do you trust this folder? No.",
                r"env_fault_patterns = ['^\[API Error: (500|529)']",
            ],
        );
    }

    #[test]
    fn profile_patterns_are_honoured() {
        let patterns = vec![r"^\[API Error: 418\b".to_string()];
        let fault = classify(
            RULES,
            &patterns,
            &["[API Error: 418 I'm a teapot]".to_string()],
        )
        .expect("hit");
        assert_eq!(
            (fault.kind, fault.rule.as_str()),
            (FaultKind::Unknown, "profile:0")
        );
    }
}
