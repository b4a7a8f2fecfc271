//! Codex's environment-fault sentences (0.171.0, docs/adapters/codex.md).
//!
//! One sentence S appears in three forms: `exec --json` prints
//! `{"type":"error","message":S}` and `{"type":"turn.failed","error":
//! {"message":S}}` (warnings come as `error` items), text mode prints
//! `ERROR: S`, and the TUI `■ S`. Every rule is anchored at one of those
//! lead-ins, so an assistant message that quotes a sentence (an
//! `agent_message`, a `•` reply) does not match. Codex may append
//! ` (details)` to S, so rules never anchor at the end.

use drover_kit::FaultKind::{Auth, Network, Overload, Quota, RateLimit, ServerError, TrustDialog};
use drover_kit::faults::FaultRule;

/// The `exec --json`, text-mode and TUI lead-ins before a sentence.
macro_rules! lead {
    ($($rest:expr),+) => {
        concat!(
            r#"^(?:ERROR:\s*|■\s*"#,
            r#"|\{\s*"type"\s*:\s*"(?:error|turn\.failed)"\s*,\s*(?:"error"\s*:\s*\{\s*)?"message"\s*:\s*""#,
            r#"|\{\s*"type"\s*:\s*"item\.completed"\s*,\s*"item"\s*:\s*\{\s*"id"\s*:\s*"[^"]*"\s*,\s*"type"\s*:\s*"error"\s*,\s*"message"\s*:\s*")"#,
            $($rest),+
        )
    };
}

/// `unexpected status N` (one failed request) or `exceeded retry limit,
/// last status: N` (the last of several).
macro_rules! status {
    ($codes:literal) => {
        lead!(
            r"(?:unexpected status|exceeded retry limit, last status:) ",
            $codes,
            r"\b"
        )
    };
}

pub const RULES: &[FaultRule] = &[
    // HTTP 500 reads as high demand (curly apostrophe; JSON may escape it).
    FaultRule::new(
        "codex/high-demand",
        ServerError,
        lead!(
            r"We(?:’|\\u2019|')re currently experiencing high demand, which may cause temporary errors"
        ),
    ),
    FaultRule::new("codex/overload", Overload, status!("(?:529|503)")),
    FaultRule::new("codex/rate-limit", RateLimit, status!("429")),
    FaultRule::new("codex/auth", Auth, status!("401")),
    FaultRule::new("codex/server-error", ServerError, status!(r"5\d\d")),
    FaultRule::new(
        "codex/stream-disconnected",
        Network,
        lead!(r"stream disconnected before completion\b"),
    ),
    // A closed port: Codex reconnects forever. The TUI shows it as a `◦`
    // status line with the cause on the next row.
    FaultRule::new(
        "codex/reconnecting",
        Network,
        r"^(?:[◦•]\s*)?Reconnecting\.\.\. waiting for network",
    ),
    FaultRule::new(
        "codex/reconnecting-json",
        Network,
        lead!(r"Reconnecting\.\.\. waiting for network"),
    ),
    FaultRule::new(
        "codex/connection-failed",
        Network,
        r"^└\s*Connection failed: error sending request",
    ),
    FaultRule::new(
        "codex/usage-limit",
        Quota,
        lead!(r"You(?:’|\\u2019|')ve hit your usage limit\b"),
    ),
    FaultRule::new(
        "codex/trust-dialog",
        TrustDialog,
        r"^(?:>\s*)?Do you trust the contents of this directory\?",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::FaultKind;
    use drover_kit::faults::{classify, classify_at};
    use drover_kit::resets::{Clock, Zone};
    use drover_kit::testing::{assert_fault_kinds, assert_no_faults, fault_of};

    /// The sentences of docs/adapters/codex.md (Codex 0.171.0), with their kind.
    const SENTENCES: &[(&str, FaultKind)] = &[
        (
            "We’re currently experiencing high demand, which may cause temporary errors.",
            FaultKind::ServerError,
        ),
        (
            "unexpected status 529 <unknown status code>: Overloaded, url: http://127.0.0.1:18002/v1/responses",
            FaultKind::Overload,
        ),
        (
            "exceeded retry limit, last status: 429 Too Many Requests",
            FaultKind::RateLimit,
        ),
        (
            "unexpected status 401 Unauthorized: Incorrect API key provided, url: http://127.0.0.1:18002/v1/responses",
            FaultKind::Auth,
        ),
        (
            "stream disconnected before completion: error sending request",
            FaultKind::Network,
        ),
        (
            "Reconnecting... waiting for network (Connection failed: error sending request)",
            FaultKind::Network,
        ),
    ];

    fn json_escape(s: &str) -> String {
        serde_json::to_string(s).expect("serializes")
    }

    #[test]
    fn every_documented_sentence_classifies_in_every_form() {
        for (sentence, kind) in SENTENCES {
            let quoted = json_escape(sentence);
            let forms = [
                format!(r#"{{"type":"error","message":{quoted}}}"#),
                format!(r#"{{"type":"turn.failed","error":{{"message":{quoted}}}}}"#),
                format!(
                    r#"{{"type":"item.completed","item":{{"id":"item_2","type":"error","message":{quoted}}}}}"#
                ),
                format!("ERROR: {sentence}"),
                format!("■ {sentence}"),
            ];
            for line in forms {
                assert_eq!(
                    fault_of(RULES, &line).map(|(k, _)| k),
                    Some(*kind),
                    "{line}"
                );
            }
        }
    }

    #[test]
    fn tui_and_escaped_variants_classify() {
        let cases = [
            (
                "◦ Reconnecting... waiting for network (14s • esc to interrupt)",
                FaultKind::Network,
            ),
            (
                "└ Connection failed: error sending request",
                FaultKind::Network,
            ),
            (
                "ERROR: Reconnecting... waiting for network",
                FaultKind::Network,
            ),
            (
                r#"{"type":"error","message":"We\u2019re currently experiencing high demand, which may cause temporary errors."}"#,
                FaultKind::ServerError,
            ),
            (
                r#"{"type": "error", "message": "unexpected status 503 Service Unavailable: busy (retry later)"}"#,
                FaultKind::Overload,
            ),
            (
                "■ unexpected status 502 Bad Gateway: upstream, url: http://x/v1/responses",
                FaultKind::ServerError,
            ),
            (
                "> Do you trust the contents of this directory? Working with untrusted contents",
                FaultKind::TrustDialog,
            ),
            (
                "■ You’ve hit your usage limit. Try again at 3:00 PM.",
                FaultKind::Quota,
            ),
        ];
        assert_fault_kinds(RULES, &cases);
        assert_eq!(
            fault_of(
                RULES,
                "ERROR: unexpected status 529 <unknown status code>: Overloaded"
            )
            .map(|(_, r)| r)
            .as_deref(),
            Some("codex/overload")
        );
    }

    #[test]
    fn the_newest_fault_wins_and_warnings_alone_are_not_faults() {
        let log = [
            r#"{"type":"thread.started","thread_id":"t"}"#,
            r#"{"type":"item.completed","item":{"id":"item_0","type":"error","message":"hooks run without review: --dangerously-bypass-hook-trust is set"}}"#,
            r#"{"type":"error","message":"stream disconnected before completion: error sending request"}"#,
            r#"{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests"}}"#,
        ];
        let lines: Vec<String> = log.iter().map(|l| l.to_string()).collect();
        let fault = classify(RULES, &[], &lines).expect("classified");
        assert_eq!(
            (fault.kind, fault.rule.as_str()),
            (FaultKind::RateLimit, "codex/rate-limit")
        );
        assert_eq!(classify(RULES, &[], &lines[..2]), None);
    }

    /// 2026-07-26T12:00:00Z.
    const NOW_MS: u64 = 1_785_067_200_000;

    fn usage_fault(lines: &[&str], clock: &Clock) -> (FaultKind, Option<u32>) {
        let lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let fault = classify_at(RULES, &[], &lines, clock).expect("classified");
        (fault.kind, fault.retry_after_secs)
    }

    #[test]
    fn a_usage_limit_says_how_long_to_wait() {
        let clock = Clock::at(NOW_MS, None);
        // github.com/openai/codex/issues/3124 (0.2x–0.3x sentences).
        let line = "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 2 days 17 hours 14 minutes.";
        let want = ((2 * 24 + 17) * 60 + 14) * 60;
        assert_eq!(
            usage_fault(&[&format!("ERROR: {line}")], &clock),
            (FaultKind::Quota, Some(want))
        );
        // openai/codex#4095, in the TUI.
        let line = "■ You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 4 days 6 hours 37 minutes.";
        assert_eq!(
            usage_fault(&[line], &clock),
            (FaultKind::Quota, Some(((4 * 24 + 6) * 60 + 37) * 60))
        );
        // openai/codex#3899: the TUI wrapped the wait onto the next row.
        let rows = [
            "■ You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 5 days 22 hours 11",
            "minutes.",
        ];
        assert_eq!(
            usage_fault(&rows, &clock),
            (FaultKind::Quota, Some(((5 * 24 + 22) * 60 + 11) * 60))
        );
    }

    #[test]
    fn a_usage_limit_at_a_local_time_is_read_in_the_profiles_zone() {
        // The format of codex-rs/core/src/error.rs (`retry_suffix_after_or`,
        // `format_retry_timestamp`): the host's local time, "%-I:%M %p" on
        // the same day, else "%b %-d{st|nd|rd|th}, %Y %-I:%M %p"; no zone.
        let today = r#"{"type":"turn.failed","error":{"message":"You\u2019ve hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at 3:45 PM."}}"#;
        let dated = "ERROR: You’ve hit your usage limit. Upgrade to Plus to continue using Codex (https://chatgpt.com/explore/plus), or try again at Jul 28th, 2026 1:47 AM.";
        // The sandbox cannot see the host's zone: without the profile's
        // `timezone` the time is not guessed.
        let no_zone = Clock::at(NOW_MS, None);
        assert_eq!(usage_fault(&[today], &no_zone), (FaultKind::Quota, None));
        assert_eq!(usage_fault(&[dated], &no_zone), (FaultKind::Quota, None));
        // `timezone = "-07:00"`: 3:45 PM there is 22:45 UTC; Jul 28 1:47 AM
        // is 08:47 UTC on the 28th.
        let pacific = Clock::at(NOW_MS, Some(Zone::Fixed(-7 * 3600)));
        assert_eq!(
            usage_fault(&[today], &pacific),
            (FaultKind::Quota, Some(10 * 3600 + 45 * 60))
        );
        assert_eq!(
            usage_fault(&[dated], &pacific),
            (FaultKind::Quota, Some(44 * 3600 + 47 * 60))
        );
    }

    #[test]
    fn the_profiles_timezone_setting_reaches_the_reader() {
        let mut profile = drover_kit::Profile::new("codex", "codex", "codex-hooks-json", "codex");
        profile.settings = vec![("timezone".to_string(), "UTC".to_string())];
        let line = "■ You've hit your usage limit. Visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at 11:59 PM.".to_string();
        let fault = <crate::Codex as drover_kit::Adapter>::classify_fault(&profile, &[line])
            .expect("classified");
        assert_eq!(fault.kind, FaultKind::Quota);
        assert!(fault.retry_after_secs.is_some_and(|s| s <= 86_400));
    }

    #[test]
    fn prose_mentioning_errors_does_not_classify() {
        assert_no_faults(
            RULES,
            &[
                "The story tests how we surface `ERROR: unexpected status 401` to users",
                r#"{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"ERROR: stream disconnected before completion: error sending request"}}"#,
                r#"{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"{\"type\":\"error\",\"message\":\"unexpected status 401\"}"}}"#,
                "• We’re currently experiencing high demand, which may cause temporary errors.",
                "I saw Reconnecting... waiting for network in the logs",
                "  - map `unexpected status 529` to Overload",
                "The trust prompt asks: Do you trust the contents of this directory?",
            ],
        );
    }
}
