//! Reading `cursor-agent -p … --output-format json` output: one result
//! object `{"type":"result","subtype":"success","is_error":false,
//! "duration_ms":…,"duration_api_ms":…,"result":"…","session_id":"…",
//! "request_id":"…"}` (Cursor's output-format docs). Recent builds add
//! `"usage":{"inputTokens","outputTokens","cacheReadTokens",
//! "cacheWriteTokens"}` (third-party captures; not in the docs). On failure
//! the process exits non-zero, writes the error to stderr and prints no
//! JSON. A run refused for workspace trust prints a plain notice and exits 0.

use drover_kit::usage::Count;
use drover_kit::{PromptKind, TurnOutcome, TurnOutput, TurnResult, Usage, UsageReport};
use serde::Deserialize;

#[derive(Deserialize)]
struct ResultObject {
    #[serde(rename = "type")]
    kind: Option<String>,
    subtype: Option<String>,
    is_error: Option<bool>,
    result: Option<String>,
    session_id: Option<String>,
    usage: Option<Tokens>,
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    #[serde(default)]
    input_tokens: Count,
    #[serde(default)]
    output_tokens: Count,
    #[serde(default)]
    cache_read_tokens: Count,
    #[serde(default)]
    cache_write_tokens: Count,
}

impl Tokens {
    /// Input is taken as reported: Cursor names the cache figures apart from
    /// it (Anthropic style), and nothing says they are inside it.
    pub fn usage(&self) -> Usage {
        Usage {
            input: self.input_tokens.0,
            output: self.output_tokens.0,
            cache_read: self.cache_read_tokens.0,
            cache_write: self.cache_write_tokens.0,
            reasoning: 0,
            requests: 0,
        }
    }
}

/// The headline of the notice a headless run prints in an untrusted
/// directory (Cursor CLI 2026.07–09, quoted by integrators).
const TRUST_NOTICE: &str = "Workspace Trust Required";

/// The result object: the whole stdout, or the last line that is one.
fn result_object(stdout: &str) -> Option<ResultObject> {
    drover_kit::output::result_object(stdout, |r: &ResultObject| {
        r.kind.as_deref() == Some("result")
    })
}

/// The CLI's own sentence: its first `Error:` line, else the last line.
fn error_sentence(text: &str) -> Option<String> {
    let lines = || text.lines().map(str::trim).filter(|l| !l.is_empty());
    lines()
        .find(|l| l.starts_with("Error:"))
        .or_else(|| lines().next_back())
        .map(str::to_string)
}

pub fn parse(output: &TurnOutput) -> TurnResult {
    let Some(result) = result_object(&output.stdout) else {
        return without_result(output);
    };
    let failed = result.is_error == Some(true)
        || result
            .subtype
            .as_deref()
            .is_some_and(|s| s.starts_with("error"))
        || output.exit_code.is_some_and(|c| c != 0);
    let session = result.session_id.clone().filter(|s| !s.is_empty());
    let usage = result
        .usage
        .map(|t| UsageReport::single(session.as_deref().unwrap_or(""), "", t.usage()));
    TurnResult {
        outcome: if failed {
            TurnOutcome::Failed
        } else {
            TurnOutcome::Success
        },
        reply: if failed { None } else { result.result.clone() },
        conversation_id: session,
        error: if failed {
            result
                .result
                .clone()
                .filter(|r| !r.trim().is_empty())
                .or_else(|| error_sentence(&output.stderr))
        } else {
            None
        },
        usage,
        prompt_kind: None,
    }
}

fn without_result(output: &TurnOutput) -> TurnResult {
    let trust = [&output.stdout, &output.stderr]
        .iter()
        .flat_map(|t| t.lines())
        .map(|l| l.trim().trim_start_matches('⚠').trim())
        .find(|l| l.starts_with(TRUST_NOTICE))
        .map(str::to_string);
    let (outcome, prompt_kind, error) = if trust.is_some() {
        (TurnOutcome::Blocked, Some(PromptKind::TrustDialog), trust)
    } else if output.exit_code.is_some_and(|c| c != 0) {
        let error = error_sentence(&output.stderr).or_else(|| error_sentence(&output.stdout));
        (TurnOutcome::Failed, None, error)
    } else {
        (TurnOutcome::Unknown, None, None)
    };
    TurnResult {
        outcome,
        reply: None,
        conversation_id: None,
        error,
        usage: None,
        prompt_kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::testing::assert_replied;
    use drover_kit::testing::turn_output as output;

    #[test]
    fn success_gives_reply_session_and_usage() {
        // Third-party capture (fixtures/README.md): 5648 in, 56 out, 5382
        // cache read, 0 cache write.
        let r = parse(&output(
            include_str!("../fixtures/headless-success.json"),
            "",
            Some(0),
        ));
        assert_eq!(
            (r.outcome, r.reply.as_deref(), r.conversation_id.as_deref()),
            (TurnOutcome::Success, Some("pong"), Some("sess-42"))
        );
        let u = r.usage.expect("usage").total();
        assert_eq!(
            (u.input, u.output, u.cache_read, u.cache_write, u.reasoning),
            (5648, 56, 5382, 0, 0)
        );
    }

    #[test]
    fn the_documented_shape_has_no_usage() {
        let r = parse(&output(
            include_str!("../fixtures/headless-documented.json"),
            "",
            Some(0),
        ));
        assert_replied(
            &r,
            "result result result",
            "6f1c2d3e-4a5b-4c6d-8e7f-9a0b1c2d3e4f",
        );
        assert_eq!(r.usage, None);
    }

    #[test]
    fn failures_report_the_clis_sentence() {
        let limit = include_str!("../fixtures/headless-usage-limit.txt");
        let r = parse(&output("", limit, Some(1)));
        assert_eq!(
            (r.outcome, r.error.as_deref()),
            (
                TurnOutcome::Failed,
                Some("Error: You've hit your usage limit")
            )
        );
        let flagged = r#"{"type":"result","subtype":"error","is_error":true,"result":"boom","session_id":"s1"}"#;
        let r = parse(&output(flagged, "", Some(0)));
        assert_eq!(
            (r.outcome, r.reply, r.error.as_deref()),
            (TurnOutcome::Failed, None, Some("boom"))
        );
    }

    #[test]
    fn an_untrusted_directory_blocks_on_trust_even_with_exit_zero() {
        let notice = include_str!("../fixtures/headless-untrusted.txt");
        let r = parse(&output(notice, "", Some(0)));
        assert_eq!(
            (r.outcome, r.prompt_kind),
            (TurnOutcome::Blocked, Some(PromptKind::TrustDialog))
        );
        assert_eq!(r.error.as_deref(), Some("Workspace Trust Required"));
    }

    #[test]
    fn stream_json_ends_with_the_same_result() {
        let stream = "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s9\"}\n{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"hi\",\"session_id\":\"s9\"}\n";
        assert_eq!(
            parse(&output(stream, "", Some(0))).reply.as_deref(),
            Some("hi")
        );
        assert_eq!(
            parse(&output("plain text answer", "", Some(0))).outcome,
            TurnOutcome::Unknown
        );
    }
}
