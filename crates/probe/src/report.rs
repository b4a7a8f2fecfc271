//! The report: a data model whose every string is a [`Clean`], and its two
//! renderings (Markdown, and one JSON document with keys sorted at every
//! depth). Probe mode fills the same model: `mode = probe` and captured hook
//! payloads in `hooks.captured`.

use serde::Serialize;
use serde_json::Value;

use super::sanitize::{Clean, Leak, Repairs, Sanitizer};
use super::schema::KeyPath;

mod markdown;

pub use markdown::markdown;

/// The JSON document's version. Bump on any change a consumer could notice.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Read what is on disk; launch nothing but `--version`/`--help`.
    Scan,
    /// Also launch one real turn and capture its hook payloads.
    Probe,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Scan => "scan",
            Mode::Probe => "probe",
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub schema_version: u32,
    pub mode: Mode,
    pub cli: Clean,
    pub known_profile: bool,
    /// `built-in`, `user` or `project`; absent without a profile.
    pub profile_source: Option<Clean>,
    pub binary: Binary,
    pub adapter: Option<AdapterInfo>,
    pub hooks: Option<Hooks>,
    pub usage_parser: Option<Clean>,
    pub transcript: Transcripts,
    pub tokens: Option<TokenFields>,
    pub findings: Vec<Finding>,
    pub next_steps: Vec<Clean>,
}

#[derive(Debug, Serialize, Default)]
pub struct Binary {
    pub name: Clean,
    pub found: bool,
    pub path: Option<Clean>,
    pub version: Option<Clean>,
    pub help: Option<Clean>,
}

#[derive(Debug, Serialize)]
pub struct AdapterInfo {
    pub component: Clean,
    /// `built-in` or `file` (a project, user or profile-named component).
    pub origin: Clean,
    pub name: Clean,
    pub version: Clean,
    pub wit_version: Clean,
    pub capabilities: Vec<Clean>,
    pub dialects: Vec<Clean>,
    pub usage_parsers: Vec<Clean>,
    pub limitations: Vec<Clean>,
    /// Every call made into the component, in order, with its outcome.
    pub calls: Vec<Call>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
#[serde(rename_all = "kebab-case")]
pub enum CallOutcome {
    Ok,
    Unsupported,
    InvalidInput,
    Trapped,
    TimeLimit,
    MemoryLimit,
    Failed,
    Garbage,
}

impl CallOutcome {
    pub fn name(self) -> &'static str {
        match self {
            CallOutcome::Ok => "ok",
            CallOutcome::Unsupported => "unsupported",
            CallOutcome::InvalidInput => "invalid-input",
            CallOutcome::Trapped => "trapped",
            CallOutcome::TimeLimit => "time-limit",
            CallOutcome::MemoryLimit => "memory-limit",
            CallOutcome::Failed => "failed",
            CallOutcome::Garbage => "garbage",
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Call {
    pub export: Clean,
    pub outcome: CallOutcome,
    pub detail: Clean,
}

#[derive(Debug, Serialize)]
pub struct Hooks {
    pub dialect: Clean,
    pub hookless: bool,
    pub config_path: Option<Clean>,
    /// `None` when it could not be determined.
    pub registered: Option<bool>,
    pub events: Vec<DeclaredEvent>,
    /// Payloads seen: from `--payload` files now, from a live turn in probe
    /// mode.
    pub captured: Vec<Capture>,
}

#[derive(Debug, Serialize)]
pub struct DeclaredEvent {
    pub native: Clean,
    pub canonical: Clean,
    pub registered: Option<bool>,
}

/// One hook payload, reduced to its shape.
#[derive(Debug, Serialize)]
pub struct Capture {
    pub native: Clean,
    /// What the profile maps the native event to.
    pub canonical: Option<Clean>,
    /// What the adapter's `parse-hook` made of it.
    pub adapter_kind: Option<Clean>,
    pub subagent: Option<bool>,
    /// Payload keys the adapter says it read.
    pub fields_found: Vec<Clean>,
    pub payload_keys: Vec<Clean>,
    pub payload_schema: Vec<KeyPath>,
}

#[derive(Debug, Serialize, Default)]
pub struct Transcripts {
    /// The adapter's location globs, sanitized.
    pub conventions: Vec<Clean>,
    /// `--transcript`, `--session-dir` or `conventions`.
    pub source: Clean,
    pub file: Option<TranscriptFile>,
}

#[derive(Debug, Serialize)]
pub struct TranscriptFile {
    pub location: Clean,
    pub format: Clean,
    pub size_bytes: u64,
    pub line_count: u64,
    /// UTC date of the last modification (never the time of day).
    pub modified_date: Clean,
    /// Files the search matched (the newest is reported).
    pub matches: u64,
    /// The convention that found it.
    pub glob: Option<Clean>,
}

/// Where a transcript keeps its token counts (field paths and candidates),
/// not the counts themselves (those are `usage::Tokens`).
#[derive(Debug, Serialize)]
pub struct TokenFields {
    pub entries_scanned: u64,
    pub unreadable_entries: u64,
    pub key_paths: Vec<KeyPath>,
    pub paths_omitted: u64,
    pub token_field_candidates: Vec<Clean>,
    /// The adapter's own reading of the same file, when it has a parser.
    pub parsed_usage: Option<ParsedUsage>,
}

#[derive(Debug, Serialize, Default, Clone)]
pub struct ParsedUsage {
    pub parser: Clean,
    /// False when the tally found no usage at all (distinct from zero).
    pub found: bool,
    pub entries: u64,
    pub rejected_rows: u64,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub reasoning: u64,
    pub requests: u64,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
}

#[derive(Debug, Serialize)]
pub struct Finding {
    /// Stable id, e.g. `adapter.transcript-locations`.
    pub id: Clean,
    pub severity: Severity,
    pub message: Clean,
}

impl Report {
    pub fn warnings(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Warning)
            .count()
    }
}

/// Which rendering.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Format {
    Markdown,
    Json,
}

/// Renders and guards a report. Returns the bytes to emit and the repairs
/// the guard made (already disclosed inside the bytes).
pub fn finish(report: &Report, format: Format, s: &Sanitizer) -> Result<(String, Repairs), Leak> {
    let rendered = match format {
        Format::Markdown => markdown(report),
        Format::Json => json(report),
    };
    let (mut text, repairs) = s.guard(rendered)?;
    if !repairs.is_empty() {
        text = match format {
            Format::Markdown => {
                let mut t = text;
                t.push_str("\n### Backstop repairs\n\n");
                t.push_str(
                    "The leak check found these originals outside the fields that alias them \
                     and replaced them (a routing gap in drover; please report it):\n\n",
                );
                for (label, n) in &repairs {
                    t.push_str(&format!("- `{label}` ×{n}\n"));
                }
                t
            }
            Format::Json => {
                let mut value: Value = serde_json::from_str(&text).map_err(|_| Leak {
                    rules: vec!["repaired-json-unparsable"],
                })?;
                if let Value::Object(map) = &mut value {
                    let repairs_value = repairs
                        .iter()
                        .map(|(k, v)| (k.clone(), Value::from(*v)))
                        .collect::<serde_json::Map<_, _>>();
                    map.insert("backstop_repairs".to_string(), Value::Object(repairs_value));
                }
                pretty(&sorted(value))
            }
        };
        s.check(&text)?;
    }
    Ok((text, repairs))
}

/// One JSON document, keys sorted at every depth, with a trailing newline.
pub fn json(report: &Report) -> String {
    let value = serde_json::to_value(report).unwrap_or(Value::Null);
    pretty(&sorted(value))
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".to_string());
    text.push('\n');
    text
}

/// Rebuilds every object with its keys in order (serde_json may be built to
/// preserve insertion order, so sorting is done here, explicitly).
pub fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorting_reaches_every_depth() {
        let v: Value =
            serde_json::from_str(r#"{"b":{"z":1,"a":[{"y":1,"x":2}]},"a":0}"#).expect("json");
        let text = serde_json::to_string(&sorted(v)).expect("json");
        assert_eq!(text, r#"{"a":0,"b":{"a":[{"x":2,"y":1}],"z":1}}"#);
    }
}
