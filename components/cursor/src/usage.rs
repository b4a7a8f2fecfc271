//! The `cursor-json` usage parser: `cursor-agent --output-format json` (or
//! `stream-json`) result objects, one per line, as a caller saves them.
//! Cursor's own transcripts (`agent-transcripts/*.jsonl`, legacy `*.txt`)
//! carry no token counts, so the built-in profile tallies nothing
//! (`usage_parser = "none"`); this parser is for saved headless results.
//!
//! Counting rules: only `type: "result"` rows with a `usage` object count;
//! a result re-emitted (same `session_id` and non-empty `request_id`, or the
//! same bytes) counts once. Results carry no model, timestamp or call count.

use std::collections::HashSet;

use drover_kit::usage::{Ledger, RowParser, contains, key_of};
use serde::Deserialize;

use crate::turn::Tokens;

/// The parser of that name, if it is this adapter's.
pub fn parser(name: &str) -> Option<Box<dyn RowParser>> {
    (name == crate::PARSER).then(|| Box::new(CursorJson::default()) as Box<dyn RowParser>)
}

#[derive(Default)]
pub struct CursorJson {
    seen: HashSet<u64>,
}

#[derive(Deserialize)]
struct Row {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    request_id: Option<String>,
    #[serde(default)]
    usage: Option<Tokens>,
}

impl RowParser for CursorJson {
    fn row(&mut self, line: &[u8], ledger: &mut Ledger) {
        if !contains(line, b"\"usage\"") {
            return;
        }
        let Ok(row) = serde_json::from_slice::<Row>(line) else {
            ledger.reject();
            return;
        };
        let (Some("result"), Some(tokens)) = (row.kind.as_deref(), row.usage) else {
            return;
        };
        ledger.mark_seen();
        let session = row.session_id.unwrap_or_default();
        let key = match row.request_id.as_deref() {
            Some(request) if !request.is_empty() => key_of(&[&session, request]),
            _ => key_of(&[&String::from_utf8_lossy(line)]),
        };
        if self.seen.insert(key) {
            ledger.add(&session, "", "", &tokens.usage());
        }
    }
}

#[cfg(test)]
mod tests {
    use drover_kit::UsageReport;
    use drover_kit::usage::ChunkedTally;

    fn tally(text: &str) -> Option<UsageReport> {
        let t = ChunkedTally::of::<crate::Cursor>(crate::PARSER);
        for chunk in text.as_bytes().chunks(23) {
            t.feed(chunk).expect("feeds");
        }
        t.finish()
    }

    #[test]
    fn results_are_summed_per_session_and_repeats_count_once() {
        // Two captured-shape results of one chat, the first saved twice.
        let report = tally(include_str!("../fixtures/results.jsonl")).expect("usage");
        let total = report.total();
        assert_eq!(
            (
                total.input,
                total.output,
                total.cache_read,
                total.cache_write
            ),
            (5648 + 1200, 56 + 30, 5382 + 6000, 10)
        );
        assert_eq!(report.entries.len(), 1);
        assert_eq!(report.entries[0].session, "sess-42");
        assert_eq!(report.rejected_rows, 1);
    }

    #[test]
    fn none_without_results_and_zero_for_a_zero_result() {
        assert_eq!(
            tally("{\"type\":\"assistant\",\"message\":\"no usage here\"}\n"),
            None
        );
        let zero =
            r#"{"type":"result","session_id":"s","usage":{"inputTokens":0,"outputTokens":0}}"#;
        assert_eq!(tally(zero).expect("usage").total(), drover_kit::Usage::ZERO);
    }
}
