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
        r"^Error: (?:You exceeded your current quota|Insufficient (?:quota|balance)|.*\bcredit balance is too low\b)",
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
    use drover_kit::faults::classify;
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

    #[test]
    fn prose_mentioning_errors_does_not_classify() {
        assert_no_faults(
            RULES,
            &[
                "The story tests how we surface Error: Rate limit reached for requests to users",
                "I fixed the `Error: Incorrect API key provided` message",
                r#"{"type":"text","part":{"text":"Error: Rate limit reached; statusCode 429 \"error\":{"}}"#,
                "> build · fake-model",
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
