//! Muse's faults. A failed run's envelope (or an MSP `turn/completed`)
//! carries an error object, `{kind, message, retryable, quota: {limitKind,
//! resetsAtMs}}`, read first: its kind decides (`authRequired` is auth; a
//! quota with its reset time is quota; `overloaded` and `backpressured`,
//! Muse's retryable RPC errors, are overload; a model error is read from its
//! message, which names the provider's status). Plain sentences (stderr, a
//! task's reason) are matched by the rules below.

use drover_kit::faults::FaultRule;
use drover_kit::resets::Clock;
use drover_kit::{Fault, FaultKind, Profile};
use serde_json::Value;

pub const RULES: &[FaultRule] = &[
    FaultRule::new(
        "muse/auth",
        FaultKind::Auth,
        r"(?i)\b(?:authRequired|not (?:logged|signed) in|run `?muse (?:login|auth)|invalid api key|401 unauthorized)\b",
    ),
    FaultRule::new(
        "muse/quota",
        FaultKind::Quota,
        r"(?i)\b(?:quota (?:exceeded|exhausted)|usage limit reached|limit reached; resets)\b",
    ),
    FaultRule::new(
        "muse/rate-limit",
        FaultKind::RateLimit,
        r"(?i)\b(?:429|rate[ -]limit(?:ed)?)\b.*\b(?:provider|model|request)",
    ),
    FaultRule::new(
        "muse/overload",
        FaultKind::Overload,
        r"(?i)\bprovider returned (?:503|529)\b|\b(?:overloaded|backpressured)\b",
    ),
    FaultRule::new(
        "muse/server-error",
        FaultKind::ServerError,
        r"(?i)\bprovider returned 5\d\d\b",
    ),
    FaultRule::new(
        "muse/network",
        FaultKind::Network,
        r"(?i)\b(?:ECONNREFUSED|ENOTFOUND|ETIMEDOUT|connection refused|network is unreachable|error sending request)\b",
    ),
];

/// The error object of an envelope or an MSP message, where one is.
fn error_of(line: &str) -> Option<Value> {
    let line = line.trim();
    let value: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        // A sentence that ends with the error object (a seat's failed turn:
        // `reason ({"kind": …})`).
        Err(_) => {
            let (open, close) = (line.find('{')?, line.rfind('}')?);
            let object = line.get(open..=close)?;
            let error: Value = serde_json::from_str(object).ok()?;
            return error.get("kind").is_some().then_some(error);
        }
    };
    [
        "/payload/error",
        "/payload/event/error",
        "/params/error",
        "/error",
    ]
    .iter()
    .find_map(|at| value.pointer(at).filter(|e| e.is_object()).cloned())
}

/// The fault an error object says, with its words as evidence.
fn fault_of(error: &Value, now_ms: u64) -> Option<Fault> {
    let kind_text = error.get("kind").and_then(Value::as_str).unwrap_or("");
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or(kind_text);
    let resets = error.pointer("/quota/resetsAtMs").and_then(Value::as_u64);
    let (kind, rule) = match kind_text {
        _ if resets.is_some() || error.get("quota").is_some() => {
            (FaultKind::Quota, "muse/error-quota")
        }
        "authRequired" => (FaultKind::Auth, "muse/error-auth"),
        "overloaded" | "backpressured" => (FaultKind::Overload, "muse/error-overload"),
        "rateLimited" => (FaultKind::RateLimit, "muse/error-rate-limit"),
        _ => {
            // A model or environment error: its message names the cause.
            let plain = drover_kit::faults::classify(RULES, &[], &[message.to_string()])?;
            return Some(Fault {
                rule: plain.rule,
                ..plain
            });
        }
    };
    let mut evidence = format!("{kind_text}: {message}");
    if let Some(at) = resets {
        evidence.push_str(&format!(
            " (resets at {})",
            drover_kit::usage::rfc3339_of_millis(at)
        ));
    }
    Some(Fault {
        kind,
        evidence: evidence
            .chars()
            .take(drover_kit::faults::EVIDENCE_MAX_CHARS)
            .collect(),
        // Rounded up like the kit's reader: resuming early only fails again.
        retry_after_secs: resets
            .map(|at| u32::try_from(at.saturating_sub(now_ms).div_ceil(1000)).unwrap_or(u32::MAX)),
        rule: rule.to_string(),
    })
}

/// The newest error object's fault, else the rules' over the plain lines
/// (their stated waits read by the kit, at the same clock).
pub fn classify(profile: &Profile, lines: &[String]) -> Option<Fault> {
    classify_at(profile, lines, &Clock::of(profile, None))
}

fn classify_at(profile: &Profile, lines: &[String], clock: &Clock) -> Option<Fault> {
    lines
        .iter()
        .rev()
        .filter_map(|line| error_of(line))
        .find_map(|error| fault_of(&error, clock.now_ms))
        .or_else(|| {
            drover_kit::faults::classify_at(RULES, &profile.env_fault_patterns, lines, clock)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;

    fn envelope(error: &str) -> String {
        format!(
            r#"{{"schema_version":1,"payload_type":"run.terminal.failed","payload":{{"terminal":"failed","error":{error}}}}}"#
        )
    }

    #[test]
    fn an_error_objects_kind_decides() {
        let cases = [
            (
                r#"{"kind":"authRequired","message":"sign in with muse login","retryable":false}"#,
                FaultKind::Auth,
            ),
            (
                r#"{"kind":"overloaded","message":"server overloaded","retryable":true}"#,
                FaultKind::Overload,
            ),
            (
                r#"{"kind":"modelError","message":"model failed after 3 attempts: provider returned 503 service_unavailable","retryable":true}"#,
                FaultKind::Overload,
            ),
            (
                r#"{"kind":"environmentError","message":"connect ECONNREFUSED 127.0.0.1:9","retryable":true}"#,
                FaultKind::Network,
            ),
        ];
        for (error, kind) in cases {
            let fault =
                classify(&profile(), &[envelope(error)]).unwrap_or_else(|| panic!("{error}"));
            assert_eq!(fault.kind, kind, "{error}");
        }
        // A step limit is the run's own end, no environment fault.
        let steps = envelope(r#"{"kind":"stepLimit","message":"stopped after 50 steps"}"#);
        assert_eq!(classify(&profile(), &[steps]), None);
    }

    #[test]
    fn a_quota_says_when_it_resets() {
        let error = r#"{"kind":"modelError","message":"weekly limit reached","retryable":false,"quota":{"limitKind":"weekly","resetsAtMs":1796400000000}}"#;
        let fault = fault_of(
            &serde_json::from_str(error).expect("json"),
            1_796_396_400_000,
        )
        .expect("a fault");
        assert_eq!(fault.kind, FaultKind::Quota);
        assert_eq!(fault.retry_after_secs, Some(3600));
        assert!(
            fault
                .evidence
                .contains("weekly limit reached (resets at 2026-12-04T16:00:00.000Z)"),
            "{}",
            fault.evidence
        );
    }

    #[test]
    fn an_envelopes_reset_is_read_at_the_given_clock_rounded_up() {
        let error = r#"{"kind":"modelError","message":"weekly limit reached","quota":{"limitKind":"weekly","resetsAtMs":1796400000500}}"#;
        let fault = classify_at(
            &profile(),
            &[envelope(error)],
            &Clock::at(1_796_396_400_000, None),
        )
        .expect("a fault");
        assert_eq!(
            (fault.kind, fault.retry_after_secs),
            (FaultKind::Quota, Some(3601))
        );
    }

    #[test]
    fn an_msp_turn_completed_error_is_read_too() {
        let line = r#"{"jsonrpc":"2.0","method":"turn/completed","params":{"turnId":"t1","terminal":"failed","error":{"kind":"authRequired","message":"no credentials"}}}"#;
        assert_eq!(
            classify(&profile(), &[line.to_string()]).map(|f| f.kind),
            Some(FaultKind::Auth)
        );
    }

    #[test]
    fn a_sentence_ending_in_the_error_object_is_read_by_it() {
        let line = r#"weekly usage limit reached ({"kind":"modelError","message":"weekly usage limit reached","quota":{"limitKind":"weekly","resetsAtMs":1}})"#;
        assert_eq!(
            classify(&profile(), &[line.to_string()]).map(|f| f.kind),
            Some(FaultKind::Quota)
        );
    }

    #[test]
    fn braces_in_any_order_are_no_error_object() {
        for line in ["a} then {b", "}{", "{", "}", "x {\"kind\": 1"] {
            assert_eq!(error_of(line), None, "{line}");
        }
    }

    #[test]
    fn plain_sentences_match_the_rules() {
        let line =
            "error: model failed after 3 attempts: provider returned 503 service_unavailable";
        assert_eq!(
            classify(&profile(), &[line.to_string()]).map(|f| f.kind),
            Some(FaultKind::Overload)
        );
        // Prose about errors is not one.
        let prose = "I fixed the 503 handling in the provider client".to_string();
        assert_eq!(classify(&profile(), &[prose]), None);
    }
}
