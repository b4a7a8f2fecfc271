//! opencode's environment-fault sentences (1.18.33, docs/adapters/opencode.md)
//! `run` prints the provider's error message on stderr as
//! `Error: <message>` and exits 1; with `--format json` the same error is
//! also a stdout line `{"type":"error",…,"error":{"name":…,"data":{"message":…,
//! "statusCode":…}}}`. Rules are anchored at the start of the line (`Error: `
//! or the JSON event's opening), so prose about errors never matches.

use drover_kit::FaultKind::{Auth, Network, Overload, Quota, RateLimit, ServerError};
use drover_kit::faults::FaultRule;

/// An `{"type":"error"…}` event line whose error carries `$rest` later on.
macro_rules! json_error {
    ($rest:literal) => {
        concat!(r#"^\{"type":\s*"error",.*"error":\s*\{.*"#, $rest)
    };
}

/// The TUI shows a failed turn's error as a message row after `┃`, and a
/// retrying one in the status line after its `■⬝` progress bar (1.18.33).
macro_rules! pane {
    ($rest:literal) => {
        concat!(r"^(?:┃\s+|[■⬝]+\s+)", $rest)
    };
}

pub const RULES: &[FaultRule] = &[
    FaultRule::new(
        "opencode/pane-network",
        Network,
        pane!(r"(?:Cannot connect to API|Unable to connect)\b"),
    ),
    FaultRule::new(
        "opencode/pane-auth",
        Auth,
        pane!(r"(?:Incorrect API key provided|Invalid API key)\b"),
    ),
    FaultRule::new(
        "opencode/pane-rate-limit",
        RateLimit,
        pane!(r"Rate limit reached\b"),
    ),
    FaultRule::new(
        "opencode/pane-overload",
        Overload,
        pane!(r"The (?:server|engine) is currently overloaded\b"),
    ),
    FaultRule::new(
        "opencode/pane-server-error",
        ServerError,
        pane!(r"The server had an error while processing your request\b"),
    ),
    FaultRule::new(
        "opencode/network",
        Network,
        r"^Error: (?:Cannot connect to API|Unable to connect)\b",
    ),
    FaultRule::new(
        "opencode/auth",
        Auth,
        r"^Error: (?:Incorrect API key provided|Invalid API key|Unauthorized\b|.*\bauthentication (?:failed|error)\b)",
    ),
    FaultRule::new(
        "opencode/quota",
        Quota,
        r"^Error: (?:You exceeded your current quota|You have exceeded the \d+-hour usage quota|Insufficient (?:quota|balance)|.*\bcredit balance is too low\b)",
    ),
    // A provider's plan window, which opencode retries with a countdown
    // (anomalyco/opencode#22015).
    FaultRule::new(
        "opencode/usage-limit",
        Quota,
        r"^(?:(?:┃\s+|[■⬝]+\s+))?Usage limit reached for \d+ hours?\. Your limit will reset at ",
    ),
    FaultRule::new(
        "opencode/rate-limit",
        RateLimit,
        r"(?i)^Error: (?:Rate limit reached|Too many requests|.*\brate limit(?:ed)?\b)",
    ),
    FaultRule::new(
        "opencode/overload",
        Overload,
        r"(?i)^Error: (?:Overloaded|The (?:server|engine) is currently overloaded|.*\bservice unavailable\b)",
    ),
    FaultRule::new(
        "opencode/server-error",
        ServerError,
        r"^Error: (?:The server had an error while processing your request|Internal server error|Bad gateway)",
    ),
    // The same errors as `--format json` events (`ProviderAuthError`, or an
    // `APIError` with the HTTP status).
    FaultRule::new(
        "opencode/json-auth",
        Auth,
        json_error!(r#"(?:"name":\s*"ProviderAuthError"|"statusCode":\s*40[13]\b)"#),
    ),
    FaultRule::new(
        "opencode/json-rate-limit",
        RateLimit,
        json_error!(r#""statusCode":\s*429\b"#),
    ),
    FaultRule::new(
        "opencode/json-overload",
        Overload,
        json_error!(r#""statusCode":\s*(?:503|529)\b"#),
    ),
    FaultRule::new(
        "opencode/json-server-error",
        ServerError,
        json_error!(r#""statusCode":\s*5\d\d\b"#),
    ),
    // A dropped or refused connection has no status code (1.18.33).
    FaultRule::new(
        "opencode/json-network",
        Network,
        json_error!(r#""message":\s*"(?:Cannot connect to API|Unable to connect)\b"#),
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::FaultKind;
    use drover_kit::faults::{classify, classify_at};
    use drover_kit::resets::{Clock, Zone};
    use drover_kit::testing::{assert_fault_kinds, assert_no_faults};

    #[test]
    fn every_documented_sentence_classifies() {
        // Exact stderr lines from docs/adapters/opencode.md (opencode 1.18.33).
        let cases = [
            (
                "Error: The server had an error while processing your request.",
                FaultKind::ServerError,
            ),
            (
                "Error: Rate limit reached for requests",
                FaultKind::RateLimit,
            ),
            ("Error: Incorrect API key provided", FaultKind::Auth),
            (
                "Error: Cannot connect to API: Unable to connect. Is the computer able to access the url?",
                FaultKind::Network,
            ),
            (
                "Error: You exceeded your current quota, please check your plan and billing details.",
                FaultKind::Quota,
            ),
            ("Error: Overloaded", FaultKind::Overload),
            (
                r#"{"type":"error","timestamp":1796032801950,"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"Rate limit reached for requests","statusCode":429,"isRetryable":true}}}"#,
                FaultKind::RateLimit,
            ),
            (
                r#"{"type":"error","sessionID":"ses_1","error":{"name":"APIError","data":{"message":"Incorrect API key provided","statusCode":401}}}"#,
                FaultKind::Auth,
            ),
            (
                r#"{"type":"error","sessionID":"ses_1","error":{"name":"ProviderAuthError","data":{"providerID":"fake","message":"no key"}}}"#,
                FaultKind::Auth,
            ),
            (
                r#"{"type":"error","sessionID":"ses_1","error":{"name":"APIError","data":{"message":"The server had an error","statusCode":500}}}"#,
                FaultKind::ServerError,
            ),
        ];
        assert_fault_kinds(RULES, &cases);
    }

    /// 2026-07-26T12:00:00Z.
    const NOW_MS: u64 = 1_785_067_200_000;

    fn read(line: &str, clock: &Clock) -> (FaultKind, Option<u32>) {
        let fault = classify_at(RULES, &[], &[line.to_string()], clock).expect("classified");
        (fault.kind, fault.retry_after_secs)
    }

    #[test]
    fn provider_limits_say_when_they_reset() {
        let no_zone = Clock::at(NOW_MS, None);
        // OpenAI's 429 as opencode prints it (anomalyco/opencode#1712).
        assert_eq!(
            read(
                "Error: Rate limit reached for gpt-5 in organization org-x on tokens per min (TPM): Limit 30000, Used 14582, Requested 21045. Please try again in 11.254s. Visit https://platform.openai.com/account/rate-limits to learn more.",
                &no_zone
            ),
            (FaultKind::RateLimit, Some(12))
        );
        // anomalyco/opencode#39790: a provider's window, with its offset.
        assert_eq!(
            read(
                "Error: You have exceeded the 5-hour usage quota. It will reset at 2026-07-26 22:11:46 +0800 CST.",
                &no_zone
            ),
            (FaultKind::Quota, Some(2 * 3600 + 11 * 60 + 46))
        );
        // anomalyco/opencode#22015: no zone, so the reset is read in the
        // profile's `timezone`; without one only the retry countdown is.
        let line = "Usage limit reached for 5 hour. Your limit will reset at 2026-07-26 20:30:24 [retrying in 2m 22s #8]";
        assert_eq!(read(line, &no_zone), (FaultKind::Quota, Some(142)));
        let utc = Clock::at(NOW_MS, Some(Zone::Fixed(0)));
        assert_eq!(
            read(line, &utc),
            (FaultKind::Quota, Some(8 * 3600 + 30 * 60 + 24))
        );
        // The measured 429 (1.18.33) states no wait.
        assert_eq!(
            read("Error: Rate limit reached for requests", &no_zone),
            (FaultKind::RateLimit, None)
        );
    }

    #[test]
    fn prose_mentioning_errors_does_not_classify() {
        assert_no_faults(
            RULES,
            &[
                "The story tests how we surface Error: Rate limit reached for requests to users",
                "I fixed the `Error: Incorrect API key provided` message",
                r#"{"type":"text","part":{"text":"Error: Rate limit reached; statusCode 429 \"error\":{"}}"#,
                "> build · fake-model",
                "I saw Usage limit reached for 5 hour. Your limit will reset at noon",
                r"env_fault_patterns = ['^Error: Cannot connect']",
            ],
        );
    }

    #[test]
    fn newest_line_wins_and_profile_patterns_count() {
        let lines = vec![
            "Error: Rate limit reached for requests".to_string(),
            "Error: Incorrect API key provided".to_string(),
        ];
        assert_eq!(
            classify(RULES, &[], &lines).map(|f| f.kind),
            Some(FaultKind::Auth)
        );
        let patterns = vec![r"^Error: model .* not found".to_string()];
        let fault = classify(
            RULES,
            &patterns,
            &["Error: model fake/x not found".to_string()],
        )
        .expect("hit");
        assert_eq!(fault.rule, "profile:0");
    }
}
