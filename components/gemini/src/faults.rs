//! Gemini CLI's environment-fault sentences (0.61.0, docs/adapters/gemini.md)
//! A failing headless turn writes them to stderr:
//! `Attempt N failed with status 500. Retrying with backoff... _ApiError:
//! {…}` while retrying, then `Error when talking to Gemini API Full report
//! available at: … <ErrorClass>: <details>`, then always the catch-all
//! `An unexpected critical error occurred:[object Object]`, which decides
//! only when nothing specific matched. The pane shows API errors as
//! `✕ [API Error: <message> (Status: <STATUS>)]` (format from gemini-cli's
//! `parseAndFormatApiError`; not seen in the recorded runs).
//!
//! Rules are anchored at the line start and need the error-class part of
//! the sentence, so an assistant message that merely quotes a prefix does
//! not match. Within one line the first rule listed wins: 503 before 5xx.

use drover_kit::FaultKind::{
    Auth, Network, Overload, Quota, RateLimit, ServerError, TrustDialog, Unknown,
};
use drover_kit::faults::FaultRule;

/// The final stderr report, up to the error class.
macro_rules! talking {
    ($rest:expr) => {
        concat!(r"^Error when talking to Gemini API\b.*", $rest)
    };
}

/// The API's error body as the CLI prints it after the error class.
macro_rules! api_code {
    ($code:literal) => {
        concat!(
            r#"\b_?ApiError: \{\s*"error"\s*:\s*\{\s*"code"\s*:\s*"#,
            $code,
            r"\b"
        )
    };
}

/// The pane's error line, after its `✕` mark.
macro_rules! pane {
    ($rest:expr) => {
        concat!(r"^(?:✕\s*)?\[API Error: ", $rest)
    };
}

/// The API's error body as 0.61.0 prints it in the pane:
/// `✕ [API Error: {"error":{"code":401,…}}]`.
macro_rules! pane_code {
    ($code:literal) => {
        pane!(concat!(
            r#"\{\s*"error"\s*:\s*\{\s*"code"\s*:\s*"#,
            $code,
            r"\b"
        ))
    };
}

pub const RULES: &[FaultRule] = &[
    FaultRule::new(
        "gemini/overload",
        Overload,
        talking!(api_code!("(?:503|529)")),
    ),
    FaultRule::new(
        "gemini/server-error",
        ServerError,
        talking!(api_code!(r"5\d\d")),
    ),
    FaultRule::new("gemini/auth", Auth, talking!(api_code!("(?:401|403)"))),
    // 0.61.0 reports a 503 as `RetryableQuotaError: The model is overloaded.`
    FaultRule::new(
        "gemini/overload-retryable",
        Overload,
        talking!(r"\bRetryableQuotaError: The model is overloaded\b"),
    ),
    // A 429 gemini-cli will retry (per-minute limits, no quota details):
    // `RetryableQuotaError: Resource has been exhausted (e.g. check quota).`
    FaultRule::new(
        "gemini/rate-limit",
        RateLimit,
        talking!(
            r#"\b(?:RetryableQuotaError: |_?ApiError: \{\s*"error"\s*:\s*\{\s*"code"\s*:\s*429\b)"#
        ),
    ),
    // Daily or otherwise exhausted quota, which retrying does not fix.
    FaultRule::new("gemini/quota", Quota, talking!(r"\bTerminalQuotaError: ")),
    FaultRule::new(
        "gemini/network",
        Network,
        talking!(
            r"\b(?:TypeError: fetch failed|E(?:CONNREFUSED|CONNRESET|TIMEDOUT|NOTFOUND|AI_AGAIN)\b)"
        ),
    ),
    FaultRule::new(
        "gemini/retry-overload",
        Overload,
        r"^Attempt \d+ failed with status (?:503|529)\. Retrying with backoff\.\.\.",
    ),
    FaultRule::new(
        "gemini/retry-server-error",
        ServerError,
        r"^Attempt \d+ failed with (?:status 5\d\d|5xx error)\. Retrying with backoff\.\.\.",
    ),
    FaultRule::new(
        "gemini/retry-rate-limit",
        RateLimit,
        r"^Attempt \d+ failed with (?:status 429|429 error \(no Retry-After header\))\. Retrying with backoff\.\.\.",
    ),
    // The retry loop gave up (0.61.0 with `maxAttempts=1`:
    // `Attempt 1 failed: <message>. Max attempts reached`).
    FaultRule::new(
        "gemini/retry-exhausted-rate-limit",
        RateLimit,
        r"^Attempt \d+ failed: Resource has been exhausted \(e\.g\. check quota\)\.\.? Max attempts reached",
    ),
    // Code Assist's per-model capacity, retried while its stated wait is
    // short (gemini-cli#22107: `Attempt 1 failed: You have exhausted your
    // capacity on this model. Your quota will reset after 5s.. Retrying
    // after 6173ms...`).
    FaultRule::new(
        "gemini/retry-capacity",
        Quota,
        r"^Attempt \d+ failed: You have exhausted your capacity on this model\.",
    ),
    FaultRule::new(
        "gemini/retry-exhausted-overload",
        Overload,
        r#"^Attempt \d+ failed: (?:The model is overloaded\b|\{\s*"error"\s*:\s*\{\s*"code"\s*:\s*(?:503|529)\b).*Max attempts reached"#,
    ),
    FaultRule::new(
        "gemini/retry-exhausted-server-error",
        ServerError,
        r#"^Attempt \d+ failed: \{\s*"error"\s*:\s*\{\s*"code"\s*:\s*5\d\d\b.*Max attempts reached"#,
    ),
    FaultRule::new(
        "gemini/pane-overload-body",
        Overload,
        pane_code!("(?:503|529)"),
    ),
    FaultRule::new(
        "gemini/pane-server-error-body",
        ServerError,
        pane_code!(r"5\d\d"),
    ),
    FaultRule::new("gemini/pane-auth-body", Auth, pane_code!("(?:401|403)")),
    FaultRule::new("gemini/pane-rate-limit-body", RateLimit, pane_code!("429")),
    FaultRule::new(
        "gemini/pane-overload",
        Overload,
        pane!(r".*\(Status: UNAVAILABLE\)\]"),
    ),
    FaultRule::new(
        "gemini/pane-server-error",
        ServerError,
        pane!(r".*\(Status: INTERNAL\)\]"),
    ),
    FaultRule::new(
        "gemini/pane-auth",
        Auth,
        pane!(r"(?:API key not valid\b|.*\(Status: UNAUTHENTICATED\)\])"),
    ),
    FaultRule::new(
        "gemini/pane-quota",
        Quota,
        pane!(r"(?:Resource has been exhausted\b|.*\(Status: RESOURCE_EXHAUSTED\)\])"),
    ),
    FaultRule::new("gemini/pane-network", Network, pane!(r".*\bfetch failed\b")),
    FaultRule::new(
        "gemini/trust-dialog",
        TrustDialog,
        r"^(?:│\s*)?Do you trust (?:the files in )?this folder\?",
    ),
    FaultRule::generic(
        "gemini/critical",
        Unknown,
        r"^An unexpected critical error occurred:\s*\[object Object\]$",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::FaultKind;
    use drover_kit::faults::{classify, classify_at};
    use drover_kit::resets::Clock;
    use drover_kit::testing::{assert_fault_kinds, assert_no_faults};

    fn log(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn every_recorded_failure_classifies_on_its_meaningful_line() {
        // Whole stderr captures shaped on docs/adapters/gemini.md.
        let cases = [
            (
                include_str!("../fixtures/turn-500.stderr"),
                FaultKind::ServerError,
                "gemini/server-error",
            ),
            (
                include_str!("../fixtures/turn-503.stderr"),
                FaultKind::Overload,
                "gemini/overload",
            ),
            (
                include_str!("../fixtures/turn-429.stderr"),
                FaultKind::RateLimit,
                "gemini/rate-limit",
            ),
            (
                include_str!("../fixtures/turn-401.stderr"),
                FaultKind::Auth,
                "gemini/auth",
            ),
            (
                include_str!("../fixtures/turn-network.stderr"),
                FaultKind::Network,
                "gemini/network",
            ),
        ];
        for (stderr, kind, rule) in cases {
            let fault = classify(RULES, &[], &log(stderr)).expect("classified");
            assert_eq!((fault.kind, fault.rule.as_str()), (kind, rule), "{stderr}");
            assert!(
                fault
                    .evidence
                    .starts_with("Error when talking to Gemini API"),
                "{}",
                fault.evidence
            );
            assert!(!fault.evidence.contains("[object Object]"));
        }
    }

    #[test]
    fn retry_lines_are_evidence_too() {
        let cases = [
            (
                r#"Attempt 1 failed with status 500. Retrying with backoff... _ApiError: {"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}"#,
                FaultKind::ServerError,
            ),
            (
                r#"Attempt 2 failed with status 503. Retrying with backoff... _ApiError: {"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}"#,
                FaultKind::Overload,
            ),
            (
                "Attempt 3 failed with status 429. Retrying with backoff...",
                FaultKind::RateLimit,
            ),
            (
                "Attempt 5 failed: Resource has been exhausted (e.g. check quota).. Max attempts reached",
                FaultKind::RateLimit,
            ),
            (
                "Attempt 4 failed with 5xx error. Retrying with backoff...",
                FaultKind::ServerError,
            ),
        ];
        assert_fault_kinds(RULES, &cases);
    }

    #[test]
    fn pane_errors_and_the_trust_dialog_classify() {
        let cases = [
            (
                "✕ [API Error: The model is overloaded. Please try again later. (Status: UNAVAILABLE)]",
                FaultKind::Overload,
            ),
            (
                "✕ [API Error: Internal error encountered. (Status: INTERNAL)]",
                FaultKind::ServerError,
            ),
            (
                "✕ [API Error: API key not valid. Please pass a valid API key. (Status: UNAUTHENTICATED)]",
                FaultKind::Auth,
            ),
            (
                "✕ [API Error: Resource has been exhausted (e.g. check quota).]",
                FaultKind::Quota,
            ),
            (
                "[API Error: exception TypeError: fetch failed sending request]",
                FaultKind::Network,
            ),
            (
                "│ Do you trust the files in this folder?",
                FaultKind::TrustDialog,
            ),
            ("Do you trust this folder?", FaultKind::TrustDialog),
        ];
        assert_fault_kinds(RULES, &cases);
    }

    #[test]
    fn the_catch_all_decides_only_alone() {
        let fault = classify(RULES, &[], &log("Ripgrep is not available. Falling back to GrepTool.\nAn unexpected critical error occurred:[object Object]")).expect("generic");
        assert_eq!(
            (fault.kind, fault.rule.as_str()),
            (FaultKind::Unknown, "gemini/critical")
        );
        // A newer specific line and an older one both beat the catch-all.
        let older = log(
            "Attempt 1 failed with status 503. Retrying with backoff...\nAn unexpected critical error occurred:[object Object]",
        );
        assert_eq!(
            classify(RULES, &[], &older).map(|f| f.kind),
            Some(FaultKind::Overload)
        );
    }

    #[test]
    fn newest_specific_line_wins() {
        let text = "Attempt 1 failed with status 503. Retrying with backoff...\nError when talking to Gemini API Full report available at: /tmp/r.json Error: exception TypeError: fetch failed sending request\nAn unexpected critical error occurred:[object Object]";
        assert_eq!(
            classify(RULES, &[], &log(text)).map(|f| f.kind),
            Some(FaultKind::Network)
        );
    }

    /// 2026-07-26T12:00:00Z.
    const NOW_MS: u64 = 1_785_067_200_000;

    fn at_now(lines: &[&str]) -> (FaultKind, Option<u32>) {
        let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let fault = classify_at(RULES, &[], &lines, &Clock::at(NOW_MS, None)).expect("classified");
        (fault.kind, fault.retry_after_secs)
    }

    #[test]
    fn quota_and_rate_limit_errors_say_when_they_reset() {
        // The API's message as gemini-cli's TerminalQuotaError carries it
        // (packages/core/src/utils/googleQuotaErrors.ts); the sentence is
        // the one google-gemini/gemini-cli#22107 shows.
        assert_eq!(
            at_now(&[
                r"Error when talking to Gemini API Full report available at: C:\Users\u\AppData\Local\Temp\gemini-client-error-Turn.run-sendMessageStream-2026-03-21T21-58-34-185Z.json TerminalQuotaError: You have exhausted your capacity on this model. Your quota will reset after 1h49m8s.",
                "An unexpected critical error occurred:[object Object]",
            ]),
            (FaultKind::Quota, Some(3600 + 49 * 60 + 8))
        );
        // google-gemini/gemini-cli#22107 (stderr while retrying).
        assert_eq!(
            at_now(&[
                "Attempt 1 failed: You have exhausted your capacity on this model. Your quota will reset after 5s.. Retrying after 6173ms..."
            ]),
            (FaultKind::Quota, Some(5))
        );
        // google-gemini/gemini-cli#22486 and #13112: the Gemini API's 429
        // body ends "Please retry in 25.465784708s."; headless it follows
        // `_ApiError:` on the final report line.
        assert_eq!(
            at_now(&[
                r#"Error when talking to Gemini API Full report available at: /tmp/r.json _ApiError: {"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/usage?tab=rate-limit. \n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: gemini-3.1-pro\nPlease retry in 25.465784708s.","status":"RESOURCE_EXHAUSTED"}}"#
            ]),
            (FaultKind::RateLimit, Some(26))
        );
        // The pane wraps the body (#13112): the wait is on the next row.
        assert_eq!(
            at_now(&[
                r#"✕ [API Error: {"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. \n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 250000, model: gemini-2.5-flash\nPlease retry in"#,
                r#"  39.844676573s.","status":"RESOURCE_EXHAUSTED"}}]"#,
            ]),
            (FaultKind::RateLimit, Some(40))
        );
        // The measured 0.61.0 429 states no wait: the engine backs off.
        assert_eq!(
            at_now(&[
                "Attempt 5 failed: Resource has been exhausted (e.g. check quota).. Max attempts reached"
            ]),
            (FaultKind::RateLimit, None)
        );
    }

    #[test]
    fn prose_mentioning_errors_does_not_classify() {
        assert_no_faults(
            RULES,
            &[
                "✦ The story tests how we surface Error when talking to Gemini API to users",
                "  Error when talking to Gemini API is what users saw before the fix",
                "I made `Attempt 1 failed with status 500. Retrying with backoff...` quieter",
                "✦ An unexpected critical error occurred:[object Object] is a poor message",
                "  - map [API Error: …] lines to friendly text",
                "We should ask: do you trust this folder? before running",
                "env_fault_patterns = ['Error when talking to Gemini API']",
                "✦ Attempt 1 failed: You have exhausted your capacity on this model. is what it printed",
            ],
        );
    }

    #[test]
    fn profile_patterns_are_applied() {
        let patterns = vec![r"^Error: Quota exceeded for quota metric".to_string()];
        let fault = classify(
            RULES,
            &patterns,
            &log("Error: Quota exceeded for quota metric 'Requests per day'"),
        )
        .expect("hit");
        assert_eq!(
            (fault.kind, fault.rule.as_str()),
            (FaultKind::Quota, "profile:0")
        );
    }
}
