//! Reading `gemini -p … --output-format json` output.
//!
//! Success prints one pretty-printed object on stdout:
//! `{"session_id":"…","response":"…","stats":{"models":{"<modelVersion>":
//! {"api":{"totalRequests":…},"tokens":{input,prompt,candidates,total,
//! cached,thoughts,tool},"roles":{…}}},"tools":{…},"files":{…}}}`.
//! Stats are per process: a `--resume` turn reports only its own calls, so
//! `prior_usage` is not needed. Without `-m` the model router makes its own
//! request under its own model key; it is a real API call and is counted.
//!
//! API failures leave stdout empty, exit 1 and write to stderr, always
//! ending with `An unexpected critical error occurred:[object Object]`.
//! The reported error is the meaningful line before it (`Error when talking
//! to Gemini API … _ApiError: {…}`). Errors the CLI handles itself print
//! `{"session_id":…,"error":{"type":…,"message":…,"code":…}}`.
//!
//! Gemini CLI 0.61.0 (tests/fixtures/real/gemini) prints that object on
//! stderr for every API failure in JSON mode, stdout stays empty, and the
//! exit code is the HTTP status mod 256 (500 → 244, 429 → 173; 1 for a
//! dropped or refused connection); text mode still ends with the catch-all.
//!
//! Text mode (no `--output-format`): stdout is the reply alone. Stream-json:
//! `init{session_id}`, `message{role, content, delta}` chunks, `tool_use`,
//! `tool_result`, then `result{status, stats}`; its stats carry no thoughts
//! count (it is `total_tokens − input_tokens − output_tokens`) and no request
//! count (one call per model, plus one per tool call for the main model).

use drover_kit::output::last_line;
use drover_kit::usage::count;
use drover_kit::{TurnOutcome, TurnOutput, TurnResult, Usage, UsageEntry, UsageReport};
use serde_json::{Map, Value};

/// The CLI's output object: the last top-level object (a line starting
/// with `{`) that has the output's keys. Noise lines may precede it.
fn output_object(text: &str) -> Option<Map<String, Value>> {
    if let Ok(Value::Object(whole)) = serde_json::from_str::<Value>(text.trim())
        && is_cli_output(&whole)
    {
        return Some(whole);
    }
    let mut found = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with('{') {
            let mut values =
                serde_json::Deserializer::from_str(&text[offset..]).into_iter::<Value>();
            if let Some(Ok(Value::Object(object))) = values.next()
                && is_cli_output(&object)
            {
                found = Some(object);
            }
        }
        offset += line.len();
    }
    found
}

fn is_cli_output(object: &Map<String, Value>) -> bool {
    let own_error = object
        .get("error")
        .is_some_and(|e| e.get("type").is_some() && e.get("message").is_some_and(Value::is_string));
    own_error
        || ["session_id", "response", "stats"]
            .iter()
            .any(|k| object.contains_key(*k))
}

/// Lines that never carry the turn's error: the catch-all last line, stack
/// frames, and startup chatter.
fn is_noise(line: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "An unexpected critical error occurred",
        "at ",
        "Warning: 256-color support not detected",
        "Ripgrep is not available",
        "[STARTUP]",
        "YOLO mode is enabled",
        "Loaded cached credentials",
        "Data collection is disabled",
    ];
    PREFIXES.iter().any(|p| line.starts_with(p)) || line.chars().all(|c| "{}[](),".contains(c))
}

fn states_error(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    lower.contains("error") || lower.contains("failed") || lower.contains("exception")
}

/// The meaningful error sentence on stderr: the CLI's final report line,
/// else the newest line that states an error, else the newest line that is
/// not noise. Only when nothing else is there is the catch-all line used.
fn error_sentence(stderr: &str) -> Option<String> {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let meaningful: Vec<&str> = lines.iter().copied().filter(|l| !is_noise(l)).collect();
    meaningful
        .iter()
        .rfind(|l| l.starts_with("Error when talking to Gemini API"))
        .or_else(|| meaningful.iter().rfind(|l| states_error(l)))
        .or_else(|| meaningful.last())
        .or_else(|| lines.last())
        .map(|l| l.to_string())
}

/// A `stream-json` run: `None` when stdout holds no stream events.
fn stream_json(output: &TurnOutput) -> Option<TurnResult> {
    let mut session = None;
    let mut reply = String::new();
    let mut result = None;
    let mut last_error = None;
    let mut saw_stream = false;
    for line in output.stdout.lines().map(str::trim) {
        if !line.starts_with('{') {
            continue;
        }
        let Ok(Value::Object(event)) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let text = |key: &str| event.get(key).and_then(Value::as_str);
        match text("type") {
            Some("init") => {
                saw_stream = true;
                session = text("session_id").map(str::to_string);
            }
            Some("message") if text("role") == Some("assistant") => {
                saw_stream = true;
                let chunk = text("content").unwrap_or("");
                if event.get("delta").and_then(Value::as_bool) == Some(true) {
                    reply.push_str(chunk);
                } else {
                    reply = chunk.to_string();
                }
            }
            // The reply is what the model said after its last tool call.
            Some("tool_use" | "tool_result") => reply.clear(),
            Some("error") => {
                last_error = text("message").map(str::to_string).or(last_error);
            }
            Some("result") => {
                saw_stream = true;
                result = Some(event);
            }
            _ => {}
        }
    }
    if !saw_stream {
        return None;
    }
    let succeeded = result
        .as_ref()
        .and_then(|r| r.get("status"))
        .and_then(Value::as_str)
        == Some("success")
        && output.exit_code == Some(0);
    let error = result
        .as_ref()
        .and_then(|r| r.get("error"))
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .or(last_error)
        .or_else(|| error_sentence(&output.stderr));
    let usage = result
        .as_ref()
        .and_then(|r| r.get("stats"))
        .map(|stats| stream_usage(stats, session.as_deref().unwrap_or("")));
    Some(TurnResult {
        outcome: if succeeded {
            TurnOutcome::Success
        } else if result.is_none() && output.exit_code == Some(0) {
            TurnOutcome::Unknown
        } else {
            TurnOutcome::Failed
        },
        reply: (succeeded && !reply.is_empty()).then_some(reply),
        conversation_id: session,
        error: if succeeded { None } else { error },
        usage,
        prompt_kind: None,
    })
}

/// Stream-json `result.stats`: per model (or overall) `input_tokens`
/// (prompt, with the cached part), `output_tokens` (candidates), `cached`,
/// `input`, `total_tokens`.
fn stream_usage(stats: &Value, session: &str) -> UsageReport {
    let one = |tokens: &Value| {
        let field = |name: &str| count(tokens.get(name));
        let prompt = field("input_tokens");
        let candidates = field("output_tokens");
        let cached = field("cached");
        let thoughts = field("total_tokens").saturating_sub(prompt.saturating_add(candidates));
        Usage {
            input: tokens
                .get("input")
                .map_or(prompt.saturating_sub(cached), |i| count(Some(i))),
            output: candidates.saturating_add(thoughts),
            cache_read: cached,
            cache_write: 0,
            reasoning: thoughts,
            requests: 1,
        }
    };
    let mut entries: Vec<UsageEntry> = match stats.get("models").and_then(Value::as_object) {
        Some(models) if !models.is_empty() => models
            .iter()
            .map(|(model, tokens)| UsageEntry {
                session: session.to_string(),
                day: String::new(),
                model: model.clone(),
                usage: one(tokens),
            })
            .collect(),
        _ => vec![UsageEntry {
            session: session.to_string(),
            day: String::new(),
            model: String::new(),
            usage: one(stats),
        }],
    };
    entries.retain(|e| {
        !Usage {
            requests: 0,
            ..e.usage
        }
        .is_zero()
    });
    let tool_calls = count(stats.get("tool_calls"));
    if let Some(main) = entries.iter_mut().max_by_key(|e| e.usage.output) {
        main.usage.requests = main.usage.requests.saturating_add(tool_calls);
    }
    UsageReport {
        entries,
        rejected_rows: 0,
    }
}

pub fn parse(output: &TurnOutput) -> TurnResult {
    if let Some(result) = stream_json(output) {
        return result;
    }
    let object = output_object(&output.stdout).or_else(|| output_object(&output.stderr));
    let Some(object) = object else {
        // Text mode: the reply itself on success.
        let text = output.stdout.trim();
        if output.exit_code == Some(0) && !text.is_empty() && !text.starts_with('{') {
            return TurnResult::replied(text.to_string(), None);
        }
        return TurnResult::no_result(
            output.exit_code,
            None,
            error_sentence(&output.stderr).or_else(|| last_line(&output.stdout)),
        );
    };
    let text = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let session = text(object.get("session_id"));
    let own_error = text(object.get("error").and_then(|e| e.get("message")));
    let reply = object
        .get("response")
        .and_then(Value::as_str)
        .map(str::to_string);
    let usage = object
        .get("stats")
        .and_then(|stats| usage_of(stats, session.as_deref().unwrap_or("")));
    let failed = own_error.is_some() || output.exit_code.is_some_and(|c| c != 0);
    let outcome = if failed {
        TurnOutcome::Failed
    } else if reply.is_some() {
        TurnOutcome::Success
    } else {
        TurnOutcome::Unknown
    };
    TurnResult {
        outcome,
        reply: if failed { None } else { reply },
        conversation_id: session,
        error: if failed {
            own_error.or_else(|| error_sentence(&output.stderr))
        } else {
            None
        },
        usage,
        prompt_kind: None,
    }
}

/// One entry per model key. Gemini's `prompt` includes cached tokens and
/// its `candidates` exclude thoughts.
fn usage_of(stats: &Value, session: &str) -> Option<UsageReport> {
    let models = stats.get("models")?.as_object()?;
    let entries = models
        .iter()
        .filter_map(|(model, metrics)| {
            let tokens = metrics.get("tokens")?;
            let field = |name: &str| count(tokens.get(name));
            let cached = field("cached");
            let input = match tokens.get("prompt") {
                Some(prompt) => count(Some(prompt)).saturating_sub(cached),
                // `input` is already prompt minus cached.
                None => field("input"),
            };
            let thoughts = field("thoughts");
            let usage = Usage {
                input,
                output: field("candidates").saturating_add(thoughts),
                cache_read: cached,
                cache_write: 0,
                reasoning: thoughts,
                requests: count(metrics.get("api").and_then(|api| api.get("totalRequests"))),
            };
            (!usage.is_zero()).then(|| UsageEntry {
                session: session.to_string(),
                day: String::new(),
                model: model.clone(),
                usage,
            })
        })
        .collect();
    Some(UsageReport {
        entries,
        rejected_rows: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::testing::assert_replied;
    use drover_kit::testing::turn_output as output;

    const SUCCESS: &str = include_str!("../fixtures/turn-success-router.json");
    const NOISE: &str = include_str!("../fixtures/turn-success.stderr");

    #[test]
    fn success_gives_reply_id_and_per_model_usage() {
        let r = parse(&output(SUCCESS, NOISE, Some(0)));
        assert_replied(&r, "OK", "7c0e5d2a-9b1f-4e43-8a47-1f2d3c4b5a69");
        assert_eq!(r.error, None);
        let report = r.usage.expect("usage");
        // The scripted server answers every Gemini call with prompt 4101,
        // cached 400, candidates 87, thoughts 9: router and main model each.
        assert_eq!(report.entries.len(), 2);
        for entry in &report.entries {
            assert_eq!(entry.session, "7c0e5d2a-9b1f-4e43-8a47-1f2d3c4b5a69");
            let u = entry.usage;
            assert_eq!(
                (
                    u.input,
                    u.output,
                    u.cache_read,
                    u.cache_write,
                    u.reasoning,
                    u.requests
                ),
                (4101 - 400, 87 + 9, 400, 0, 9, 1),
                "{}",
                entry.model
            );
        }
        let models: Vec<&str> = report.entries.iter().map(|e| e.model.as_str()).collect();
        assert_eq!(models, ["gemini-3.5-flash-lite", "gemini-3.8-flash"]);
        assert_eq!(report.total().requests, 2);
    }

    #[test]
    fn stats_without_prompt_use_input_as_already_uncached() {
        let stdout = r#"{"session_id":"s","response":"hi","stats":{"models":{"gemini-2.5-pro":{"api":{"totalRequests":3},"tokens":{"input":3701,"candidates":87,"cached":400,"thoughts":9}}}}}"#;
        let u = parse(&output(stdout, "", Some(0)))
            .usage
            .expect("usage")
            .total();
        assert_eq!(
            (u.input, u.output, u.cache_read, u.requests),
            (3701, 96, 400, 3)
        );
        let none = parse(&output(
            r#"{"session_id":"s","response":"hi"}"#,
            "",
            Some(0),
        ));
        assert_eq!(none.usage, None);
        let empty = parse(&output(
            r#"{"session_id":"s","response":"/help","stats":{"models":{}}}"#,
            "",
            Some(0),
        ));
        assert_eq!(empty.usage.map(|r| r.total()), Some(Usage::ZERO));
    }

    #[test]
    fn api_errors_report_the_meaningful_line_not_object_object() {
        let cases = [
            (
                include_str!("../fixtures/turn-500.stderr"),
                r#"_ApiError: {"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}"#,
            ),
            (
                include_str!("../fixtures/turn-503.stderr"),
                r#""message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}"#,
            ),
            (
                include_str!("../fixtures/turn-429.stderr"),
                "RetryableQuotaError: Resource has been exhausted (e.g. check quota).",
            ),
            (
                include_str!("../fixtures/turn-401.stderr"),
                "API key not valid. Please pass a valid API key.",
            ),
            (
                include_str!("../fixtures/turn-network.stderr"),
                "Error: exception TypeError: fetch failed sending request",
            ),
        ];
        for (stderr, tail) in cases {
            assert!(
                stderr
                    .trim_end()
                    .ends_with("An unexpected critical error occurred:[object Object]")
            );
            let r = parse(&output("", stderr, Some(1)));
            assert_eq!(r.outcome, TurnOutcome::Failed);
            let error = r.error.expect("error sentence");
            assert!(
                error.starts_with("Error when talking to Gemini API"),
                "{error}"
            );
            assert!(error.contains(tail), "{error}");
            assert_eq!((r.reply, r.usage, r.conversation_id), (None, None, None));
        }
    }

    #[test]
    fn error_sentence_falls_back_sensibly() {
        let retrying = "Attempt 1 failed: Resource has been exhausted (e.g. check quota).. Max attempts reached\n    at retryWithBackoff (file:///x.js:1:1)\nAn unexpected critical error occurred:[object Object]\n";
        assert_eq!(
            error_sentence(retrying).as_deref(),
            Some(
                "Attempt 1 failed: Resource has been exhausted (e.g. check quota).. Max attempts reached"
            )
        );
        assert_eq!(
            error_sentence("An unexpected critical error occurred:[object Object]\n").as_deref(),
            Some("An unexpected critical error occurred:[object Object]")
        );
        assert_eq!(
            error_sentence("Unknown argument: bogus\n").as_deref(),
            Some("Unknown argument: bogus")
        );
        assert_eq!(error_sentence(""), None);
    }

    #[test]
    fn the_clis_own_json_error_is_a_failure_with_its_message() {
        let stderr = "{\n  \"session_id\": \"s-9\",\n  \"error\": {\n    \"type\": \"FatalTurnLimitedError\",\n    \"message\": \"Reached max session turns for this session.\",\n    \"code\": 53\n  }\n}\n";
        let r = parse(&output("", stderr, Some(53)));
        assert_eq!(r.outcome, TurnOutcome::Failed);
        assert_eq!(
            r.error.as_deref(),
            Some("Reached max session turns for this session.")
        );
        assert_eq!(r.conversation_id.as_deref(), Some("s-9"));
    }

    #[test]
    fn noise_before_the_object_and_odd_exits() {
        let noisy = format!(
            "YOLO mode is enabled. All tool calls will be automatically approved.\n{SUCCESS}"
        );
        assert_eq!(
            parse(&output(&noisy, "", Some(0))).reply.as_deref(),
            Some("OK")
        );
        let nonzero = parse(&output(SUCCESS, "Error: EPIPE\n", Some(2)));
        assert_eq!(
            (nonzero.outcome, nonzero.error.as_deref()),
            (TurnOutcome::Failed, Some("Error: EPIPE"))
        );
        assert!(nonzero.usage.is_some());
        assert_eq!(
            parse(&output("", "", Some(0))).outcome,
            TurnOutcome::Unknown
        );
        assert_eq!(parse(&output("", "", None)).outcome, TurnOutcome::Failed);
        let no_reply = parse(&output(r#"{"session_id":"s"}"#, "", Some(0)));
        assert_eq!(no_reply.outcome, TurnOutcome::Unknown);
        // An API error body on its own is not the CLI's output object.
        let body = parse(&output(
            "",
            "{\"error\":{\"code\":500,\"message\":\"x\"}}\n",
            Some(1),
        ));
        assert_eq!(body.conversation_id, None);
    }
}
