//! `muse-session`: usage from Muse's session logs,
//! `muse/sessions/YYYY/MM/DD/<session>/session.jsonl` under the data
//! directory, and each subagent's `subagent/<child>/session.jsonl` below
//! its parent's (whose log leaves the child's tokens out); a subagent's
//! usage is its parent session's.
//!
//! Every line is an envelope (`id`, `stream{kind,id}`, `recorded_at` in
//! microseconds, `payload_type`, `payload`). A model call is a
//! `runtime.session` envelope whose `payload.event.kind` is
//! `model_completed`, with `event.model` and `event.usage{input_tokens,
//! output_tokens, cache_read_tokens (older: cached_tokens),
//! cache_write_tokens, reasoning_tokens}`: input includes the cache reads,
//! output includes reasoning. A call is one (`stream.id`, `id`); calls with
//! no tokens or no model are skipped, and `goal_usage_attribution` events,
//! which repeat a call's numbers, are never counted.

use drover_kit::Request;
use drover_kit::usage::{Ledger, RowParser, contains, rfc3339_of_millis};
use serde_json::Value;

#[derive(Default)]
pub struct Sessions {
    session: String,
}

/// The session a log belongs to: its directory's name, or for a
/// subagent's log, the parent's.
fn session_of(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let dirs = &parts[..parts.len().saturating_sub(1)];
    match dirs.iter().rposition(|d| *d == "subagent") {
        Some(at) if at > 0 => dirs[at - 1].to_string(),
        _ => dirs.last().map_or_else(String::new, |d| d.to_string()),
    }
}

fn count(usage: &Value, key: &str) -> Option<u64> {
    usage.get(key).and_then(Value::as_u64)
}

impl RowParser for Sessions {
    fn begin_file(&mut self, name: &str) {
        self.session = session_of(name);
    }

    fn row(&mut self, line: &[u8], ledger: &mut Ledger) {
        if !contains(line, b"\"model_completed\"") {
            return;
        }
        let Ok(row) = serde_json::from_slice::<Value>(line) else {
            ledger.reject();
            return;
        };
        if row.get("payload_type").and_then(Value::as_str) != Some("runtime.session") {
            return;
        }
        let Some(event) = row.pointer("/payload/event") else {
            return;
        };
        if event.get("kind").and_then(Value::as_str) != Some("model_completed") {
            return;
        }
        let model = event.get("model").and_then(Value::as_str).unwrap_or("");
        let Some(usage) = event.get("usage").filter(|u| u.is_object()) else {
            ledger.reject();
            return;
        };
        let gross = count(usage, "input_tokens").unwrap_or(0);
        let cache_read = count(usage, "cache_read_tokens")
            .or_else(|| count(usage, "cached_tokens"))
            .unwrap_or(0);
        let cache_write = count(usage, "cache_write_tokens").unwrap_or(0);
        let output = count(usage, "output_tokens").unwrap_or(0);
        let reasoning = count(usage, "reasoning_tokens").unwrap_or(0);
        if model.is_empty() || gross + cache_write + output == 0 {
            return;
        }
        let stream = row
            .pointer("/stream/id")
            .and_then(Value::as_str)
            .unwrap_or("");
        let id = row.get("id").and_then(Value::as_str).unwrap_or("");
        let key = if id.is_empty() {
            String::new()
        } else {
            format!("{stream}\u{1f}{id}")
        };
        let timestamp = row
            .get("recorded_at")
            .and_then(Value::as_u64)
            .map(|micros| rfc3339_of_millis(micros / 1000))
            .unwrap_or_default();
        ledger.request(Request {
            key,
            session: self.session.clone(),
            timestamp,
            model: model.to_string(),
            cwd: String::new(),
            input: gross.saturating_sub(cache_read),
            output: output.max(reasoning),
            reasoning,
            cache_read,
            cache_write_5m: cache_write,
            cache_write_1h: 0,
        });
    }

    fn reports_requests(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_kit::usage::ChunkedTally;

    const SESSION: &str = "0f8fad5b-d9cb-469f-a165-70867728950e";

    fn completed(stream: &str, id: &str, kind: &str, model: &str, usage: &str) -> String {
        format!(
            r#"{{"schema_version":1,"id":"{id}","stream":{{"kind":"session","id":"{stream}"}},"sequence":3,"recorded_at":1796396400000000,"record_type":"event","durability":"durable","payload_type":"runtime.session","payload_schema_version":1,"payload":{{"event":{{"kind":"{kind}","model":"{model}","usage":{usage}}}}}}}"#
        )
    }

    fn tally(files: &[(&str, String)]) -> drover_kit::UsageReport {
        let tally = ChunkedTally::new(crate::PARSER, Some(Box::new(Sessions::default())));
        for (path, text) in files {
            tally.begin_file(path);
            tally.feed(text.as_bytes()).expect("feed");
        }
        tally.finish().expect("usage")
    }

    #[test]
    fn calls_count_once_net_of_cache_reads_with_subagents_in_their_parent() {
        let usage = r#"{"input_tokens":3101,"output_tokens":77,"cache_read_tokens":300,"cache_write_tokens":10,"reasoning_tokens":5}"#;
        let main = [
            completed("st-1", "ev-1", "model_completed", "gpt-5", usage),
            // The same call again (a replayed record), and its attribution.
            completed("st-1", "ev-1", "model_completed", "gpt-5", usage),
            completed("st-1", "ev-2", "goal_usage_attribution", "gpt-5", usage),
            // No tokens, no model: skipped.
            completed(
                "st-1",
                "ev-3",
                "model_completed",
                "gpt-5",
                r#"{"input_tokens":0,"output_tokens":0}"#,
            ),
            completed("st-1", "ev-4", "model_completed", "", usage),
        ]
        .join("\n");
        let child = completed(
            "st-2",
            "ev-1",
            "model_completed",
            "gpt-5-mini",
            r#"{"input_tokens":500,"output_tokens":20,"cached_tokens":100}"#,
        );
        let base = format!("/h/.local/share/muse/sessions/2026/12/04/{SESSION}");
        let report = tally(&[
            (&format!("{base}/session.jsonl"), main),
            (&format!("{base}/subagent/c-1/session.jsonl"), child),
        ]);
        let total = report.total();
        assert_eq!(
            (
                total.input,
                total.output,
                total.cache_read,
                total.cache_write,
                total.reasoning,
                total.requests
            ),
            (2801 + 400, 97, 400, 10, 5, 2)
        );
        assert!(
            report.entries.iter().all(|e| e.session == SESSION),
            "{:?}",
            report.entries
        );
        assert!(report.entries.iter().all(|e| e.day == "2026-12-04"));
    }

    #[test]
    fn a_log_without_calls_reports_none() {
        let t = ChunkedTally::new(crate::PARSER, Some(Box::new(Sessions::default())));
        t.begin_file("/x/session.jsonl");
        t.feed(br#"{"payload_type":"runtime.session","payload":{"event":{"kind":"started"}}}"#)
            .expect("feed");
        assert!(t.finish().is_none());
    }
}
