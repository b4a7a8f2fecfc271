//! Exact usage from a CLI's JSON-lines logs, as the profile's `[usage]`
//! table describes them: where the files are, which rows count (`where`),
//! and which field of a row holds each count, the model, the request id,
//! the session and the time.
//!
//! The table arrives as the usage parser's name, `fields:` and the table
//! as JSON (drover checked it when it loaded the profile), because a tally
//! is made from a parser name alone.

use drover_kit::usage::{Ledger, RowParser};
use drover_kit::{GlobBase, Profile, Request, TranscriptGlob};
use serde_json::Value;

const PREFIX: &str = "fields:";

/// A `[usage]` table.
pub struct Logged {
    /// Home-relative, without its `~/`.
    files: String,
    filter: Vec<(String, String)>,
    input: Option<String>,
    output: Option<String>,
    cache_read: Option<String>,
    cache_write: Option<String>,
    reasoning: Option<String>,
    model: Option<String>,
    request_id: Option<String>,
    session: Option<String>,
    timestamp: Option<String>,
    /// The input count includes cache reads and writes (OpenAI's
    /// `prompt_tokens`); drover's input does not.
    input_includes_cache: bool,
}

impl Logged {
    /// The table a parser name carries; `None` for any other parser.
    pub fn of_parser(name: &str) -> Option<Logged> {
        let spec: Value = serde_json::from_str(name.strip_prefix(PREFIX)?).ok()?;
        let text = |key: &str| spec.get(key).and_then(Value::as_str).map(str::to_string);
        Some(Logged {
            files: text("files")?.strip_prefix("~/")?.to_string(),
            filter: spec
                .get("where")
                .and_then(Value::as_object)
                .map(|map| {
                    map.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                        .collect()
                })
                .unwrap_or_default(),
            input: text("input"),
            output: text("output"),
            cache_read: text("cache_read"),
            cache_write: text("cache_write"),
            reasoning: text("reasoning"),
            model: text("model"),
            request_id: text("request_id"),
            session: text("session"),
            timestamp: text("timestamp"),
            input_includes_cache: spec
                .get("input_includes_cache")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }

    /// Where the profile says its CLI writes the logs.
    pub fn locations(profile: &Profile) -> Vec<TranscriptGlob> {
        Logged::of_parser(&profile.usage_parser)
            .map(|logged| TranscriptGlob {
                base: GlobBase::Home,
                pattern: logged.files,
                format: "jsonl".to_string(),
                parser: profile.usage_parser.clone(),
            })
            .into_iter()
            .collect()
    }
}

/// The value at a dotted path (`usage.input_tokens`, `choices.0.usage`).
fn at<'v>(row: &'v Value, path: &str) -> Option<&'v Value> {
    path.split('.').try_fold(row, |value, key| match value {
        Value::Object(map) => map.get(key),
        Value::Array(items) => items.get(key.parse::<usize>().ok()?),
        _ => None,
    })
}

/// A value as text: a string as it is, a number or a boolean as JSON
/// writes it.
fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A count: a whole number, or one written as a string. `Err` when the
/// field is there but holds no count.
fn count_of(row: &Value, path: Option<&str>) -> Result<Option<u64>, ()> {
    let Some(value) = path.and_then(|p| at(row, p)) else {
        return Ok(None);
    };
    match value {
        Value::Null => Ok(None),
        Value::Number(n) => n.as_u64().map(Some).ok_or(()),
        Value::String(s) => s.trim().parse::<u64>().map(Some).map_err(|_| ()),
        _ => Err(()),
    }
}

/// RFC 3339 for a time field: a string as written, a number as Unix
/// seconds or (past 1e11) milliseconds.
fn timestamp_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n
            .as_u64()
            .map(|t| if t > 100_000_000_000 { t } else { t * 1000 })
            .map(drover_kit::usage::rfc3339_of_millis)
            .unwrap_or_default(),
        _ => String::new(),
    }
}

pub struct LoggedParser {
    table: Logged,
    /// The file's name without its extension: the session when rows name
    /// none.
    file_session: String,
}

impl LoggedParser {
    pub fn new(table: Logged) -> LoggedParser {
        LoggedParser {
            table,
            file_session: String::new(),
        }
    }
}

impl RowParser for LoggedParser {
    fn begin_file(&mut self, name: &str) {
        let file = name.rsplit('/').next().unwrap_or(name);
        self.file_session = file
            .rsplit_once('.')
            .map_or(file, |(stem, _)| stem)
            .to_string();
    }

    fn row(&mut self, line: &[u8], ledger: &mut Ledger) {
        // A log may hold lines that are not JSON (a banner, a stack
        // trace): they carry no usage.
        let Ok(row) = serde_json::from_slice::<Value>(line) else {
            return;
        };
        let t = &self.table;
        let selected = t
            .filter
            .iter()
            .all(|(path, want)| at(&row, path).and_then(text_of).as_deref() == Some(want));
        if !selected {
            return;
        }
        let counts = [
            &t.input,
            &t.output,
            &t.cache_read,
            &t.cache_write,
            &t.reasoning,
        ]
        .map(|path| count_of(&row, path.as_deref()));
        if counts.iter().any(Result::is_err) {
            ledger.reject();
            return;
        }
        let [input, output, cache_read, cache_write, reasoning] = counts.map(|c| c.ok().flatten());
        if [input, output, cache_read, cache_write, reasoning]
            .iter()
            .all(Option::is_none)
        {
            return;
        }
        let (cache_read, cache_write) = (cache_read.unwrap_or(0), cache_write.unwrap_or(0));
        let mut input = input.unwrap_or(0);
        if t.input_includes_cache {
            input = input.saturating_sub(cache_read.saturating_add(cache_write));
        }
        let field = |path: &Option<String>| {
            path.as_deref()
                .and_then(|p| at(&row, p))
                .and_then(text_of)
                .unwrap_or_default()
        };
        let session = Some(field(&t.session))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| self.file_session.clone());
        // Ids a CLI numbers per conversation (`req-0`) repeat across
        // conversations: a request is the same only within its own.
        let key = Some(field(&t.request_id))
            .filter(|id| !id.is_empty())
            .map(|id| format!("{session}\u{1f}{id}"))
            .unwrap_or_default();
        ledger.request(Request {
            key,
            session,
            timestamp: t
                .timestamp
                .as_deref()
                .and_then(|p| at(&row, p))
                .map(timestamp_of)
                .unwrap_or_default(),
            model: field(&t.model),
            cwd: String::new(),
            input,
            output: output.unwrap_or(0),
            reasoning: reasoning.unwrap_or(0),
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

    /// aider's analytics log shape: OpenAI counts (input with the cached
    /// part), events other than `message_send` to skip.
    const TABLE: &str = r#"fields:{"files":"~/.textcli/logs/*.jsonl","where":{"event":"message_send"},"input":"properties.prompt_tokens","output":"properties.completion_tokens","cache_read":"properties.cached_tokens","model":"properties.main_model","request_id":"properties.id","timestamp":"time","input_includes_cache":true}"#;

    fn tallied(text: &str) -> ChunkedTally {
        let table = Logged::of_parser(TABLE).expect("table");
        let tally = ChunkedTally::new(TABLE, Some(Box::new(LoggedParser::new(table))));
        tally.begin_file("/h/.textcli/logs/s-42.jsonl");
        tally.feed(text.as_bytes()).expect("feed");
        tally
    }

    fn tally(text: &str) -> Option<drover_kit::UsageReport> {
        tallied(text).finish()
    }

    #[test]
    fn rows_count_by_the_tables_fields_once_per_request() {
        let text = [
            r#"{"event":"launched","time":1764756000}"#,
            "Traceback (most recent call last):",
            r#"{"event":"message_send","time":1764756000,"properties":{"id":"r1","main_model":"gpt-5","prompt_tokens":3101,"cached_tokens":300,"completion_tokens":77}}"#,
            // The same request logged again.
            r#"{"event":"message_send","time":1764756000,"properties":{"id":"r1","main_model":"gpt-5","prompt_tokens":3101,"cached_tokens":300,"completion_tokens":77}}"#,
            r#"{"event":"message_send","time":"2026-12-04T09:00:00Z","properties":{"id":"r2","main_model":"gpt-5","prompt_tokens":"10","completion_tokens":2}}"#,
        ]
        .join("\n");
        let report = tally(&text).expect("usage");
        let total = report.total();
        assert_eq!(
            (total.input, total.output, total.cache_read, total.requests),
            (2801 + 10, 79, 300, 2)
        );
        assert!(report.entries.iter().all(|e| e.session == "s-42"));
        assert!(report.entries.iter().all(|e| e.model == "gpt-5"));
        let mut days: Vec<&str> = report.entries.iter().map(|e| e.day.as_str()).collect();
        days.sort_unstable();
        assert_eq!(days, ["2025-12-03", "2026-12-04"]);
        assert_eq!(report.rejected_rows, 0);
    }

    #[test]
    fn request_ids_are_one_conversations_own() {
        let row = r#"{"event":"message_send","properties":{"id":"req-0","prompt_tokens":10,"completion_tokens":1}}"#;
        let table = Logged::of_parser(TABLE).expect("table");
        let tally = ChunkedTally::new(TABLE, Some(Box::new(LoggedParser::new(table))));
        for file in ["/h/.textcli/logs/a.jsonl", "/h/.textcli/logs/b.jsonl"] {
            tally.begin_file(file);
            tally
                .feed(format!("{row}\n{row}\n").as_bytes())
                .expect("feed");
        }
        let report = tally.finish().expect("usage");
        assert_eq!(report.total().requests, 2);
        assert_eq!(report.entries.len(), 2);
    }

    #[test]
    fn a_count_that_is_no_number_is_rejected_and_other_rows_are_not_usage() {
        let text = [
            r#"{"event":"message_send","properties":{"prompt_tokens":"many","completion_tokens":2}}"#,
            r#"{"event":"message_send","properties":{"prompt_tokens":-3}}"#,
            r#"{"event":"message_send","properties":{}}"#,
        ]
        .join("\n");
        // Rows that carry a count it cannot read are rejected; a row with
        // none of the counts is not usage.
        let tally = tallied(&text);
        assert_eq!(tally.rejected_rows(), 2);
        assert!(tally.finish().is_none());
    }

    #[test]
    fn the_table_names_its_files_below_home() {
        let profile = Profile::new("textcli", "textcli", "none", TABLE);
        let globs = Logged::locations(&profile);
        assert_eq!(globs.len(), 1);
        assert_eq!(globs[0].pattern, ".textcli/logs/*.jsonl");
        assert!(matches!(globs[0].base, GlobBase::Home));
        assert_eq!(globs[0].parser, TABLE);
        // Another parser names no files here.
        let other = Profile::new("acme", "acme", "none", "claude-jsonl");
        assert!(Logged::locations(&other).is_empty());
    }
}
