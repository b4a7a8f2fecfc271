//! The report: a data model whose every string is a [`Clean`], and its two
//! renderings (Markdown, and one JSON document with keys sorted at every
//! depth). Probe mode fills the same model: `mode = probe` and captured hook
//! payloads in `hooks.captured`.

use serde::Serialize;
use serde_json::Value;

use super::sanitize::{Clean, Leak, Repairs, Sanitizer};
use super::schema::KeyPath;

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

/// A fence longer than any backtick run inside `body`.
fn fenced(out: &mut String, body: &str) {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    out.push_str(&fence);
    out.push_str("text\n");
    out.push_str(body);
    if !body.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&fence);
    out.push('\n');
}

fn yes_no(value: Option<bool>) -> &'static str {
    match value {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    }
}

fn code(c: &Clean) -> String {
    format!("`{}`", c.as_str().replace('`', "'"))
}

pub fn markdown(r: &Report) -> String {
    let mut o = String::new();
    o.push_str(&format!(
        "# drover probe-adapter report — {} ({})\n\n",
        code(&r.cli),
        r.mode.name()
    ));

    o.push_str("## Summary\n\n");
    match &r.profile_source {
        Some(source) => o.push_str(&format!("- CLI: {} (profile: {})\n", code(&r.cli), source)),
        None => o.push_str(&format!(
            "- CLI: {} (no profile: reduced report)\n",
            code(&r.cli)
        )),
    }
    o.push_str(&format!(
        "- Binary: {} {}\n",
        code(&r.binary.name),
        if r.binary.found { "found" } else { "NOT found" }
    ));
    if let Some(a) = &r.adapter {
        o.push_str(&format!(
            "- Adapter: {} {} ({}, drover:adapter@{})\n",
            code(&a.name),
            a.version,
            a.origin,
            a.wit_version
        ));
    }
    if let Some(h) = &r.hooks {
        if h.hookless {
            o.push_str("- Hook dialect: none (hookless)\n");
        } else {
            o.push_str(&format!(
                "- Hook dialect: {}; hooks registered: {}\n",
                code(&h.dialect),
                yes_no(h.registered)
            ));
        }
    }
    if let Some(p) = &r.usage_parser {
        o.push_str(&format!("- Usage parser: {}\n", code(p)));
    }
    match &r.transcript.file {
        Some(f) => o.push_str(&format!(
            "- Transcript: found ({}, {} lines)\n",
            f.format, f.line_count
        )),
        None => o.push_str("- Transcript: none found\n"),
    }
    o.push_str(&format!("- Warnings: {}\n\n", r.warnings()));

    o.push_str("## CLI flags\n\n");
    match &r.binary.version {
        Some(v) => {
            o.push_str("`--version`:\n\n");
            fenced(&mut o, v.as_str());
        }
        None => o.push_str("`--version`: not available\n"),
    }
    match &r.binary.help {
        Some(h) => {
            o.push_str("\n<details><summary><code>--help</code> (scrubbed)</summary>\n\n");
            fenced(&mut o, h.as_str());
            o.push_str("\n</details>\n\n");
        }
        None => o.push_str("\n`--help`: not available\n\n"),
    }

    o.push_str("## Hook payload shape\n\n");
    match &r.hooks {
        None => o.push_str("No profile: no hook dialect is declared.\n\n"),
        Some(h) if h.hookless => o.push_str(
            "The profile is hookless (dialect `none`): turn ends come from the process exit.\n\n",
        ),
        Some(h) => {
            if let Some(path) = &h.config_path {
                o.push_str(&format!("Hook config: {}\n\n", code(path)));
            }
            o.push_str("Declared events (native → canonical, relay registered):\n\n");
            for e in &h.events {
                o.push_str(&format!(
                    "- {} → {} ({})\n",
                    code(&e.native),
                    code(&e.canonical),
                    yes_no(e.registered)
                ));
            }
            o.push('\n');
            for c in &h.captured {
                o.push_str(&format!(
                    "### {} → {} (adapter: {})\n\n",
                    code(&c.native),
                    c.canonical.as_ref().map_or("`?`".to_string(), code),
                    c.adapter_kind.as_ref().map_or("`?`".to_string(), code)
                ));
                let keys: Vec<String> = c.payload_keys.iter().map(code).collect();
                o.push_str(&format!("- payload keys: {}\n", keys.join(", ")));
                let read: Vec<String> = c.fields_found.iter().map(code).collect();
                o.push_str(&format!("- read by the adapter: {}\n", read.join(", ")));
                if let Some(sub) = c.subagent {
                    o.push_str(&format!("- subagent: {}\n", yes_no(Some(sub))));
                }
                o.push('\n');
                let schema: Vec<String> = c.payload_schema.iter().map(key_path_line).collect();
                fenced(&mut o, &schema.join("\n"));
                o.push('\n');
            }
        }
    }

    o.push_str("## Adapter self-check\n\n");
    match &r.adapter {
        None => o.push_str("No adapter component was loaded.\n\n"),
        Some(a) => {
            o.push_str(&format!(
                "Component {} ({}); capabilities: {}\n\n",
                code(&a.component),
                a.origin,
                join_code(&a.capabilities)
            ));
            if !a.limitations.is_empty() {
                o.push_str("Limitations the adapter states:\n\n");
                for l in &a.limitations {
                    o.push_str(&format!("- {}\n", code(l)));
                }
                o.push('\n');
            }
            o.push_str("| call | outcome | detail |\n| --- | --- | --- |\n");
            for c in &a.calls {
                o.push_str(&format!(
                    "| {} | {} | {} |\n",
                    code(&c.export),
                    c.outcome.name(),
                    code(&c.detail).replace('|', "\\|")
                ));
            }
            o.push('\n');
        }
    }

    o.push_str("## Transcript\n\n");
    if !r.transcript.conventions.is_empty() {
        o.push_str(&format!(
            "Adapter conventions: {}\n\n",
            join_code(&r.transcript.conventions)
        ));
    }
    match &r.transcript.file {
        None => o.push_str(&format!(
            "No transcript found (searched: {}).\n\n",
            r.transcript.source
        )),
        Some(f) => {
            o.push_str(&format!("- source: {}\n", r.transcript.source));
            o.push_str(&format!("- location: {}\n", code(&f.location)));
            if let Some(g) = &f.glob {
                o.push_str(&format!("- matched by: {}\n", code(g)));
            }
            o.push_str(&format!("- format: {}\n", code(&f.format)));
            o.push_str(&format!(
                "- size: {} bytes, {} lines\n",
                f.size_bytes, f.line_count
            ));
            o.push_str(&format!("- modified: {} (UTC)\n", f.modified_date));
            o.push_str(&format!("- files matched: {}\n\n", f.matches));
        }
    }

    o.push_str("## Token usage schema\n\n");
    match &r.tokens {
        None => o.push_str("No transcript was read.\n\n"),
        Some(t) => {
            o.push_str(&format!(
                "- entries scanned: {} ({} unreadable)\n",
                t.entries_scanned, t.unreadable_entries
            ));
            o.push_str(&format!(
                "- token-field candidates: {}\n",
                if t.token_field_candidates.is_empty() {
                    "none".to_string()
                } else {
                    join_code(&t.token_field_candidates)
                }
            ));
            match &t.parsed_usage {
                Some(p) if p.found => o.push_str(&format!(
                    "- parsed by the adapter ({}): input {}, output {}, cache read {}, cache write {}, reasoning {}, requests {} ({} entries, {} rejected rows)\n",
                    code(&p.parser), p.input, p.output, p.cache_read, p.cache_write, p.reasoning, p.requests, p.entries, p.rejected_rows
                )),
                Some(p) => o.push_str(&format!(
                    "- parsed by the adapter ({}): no usage in this file\n",
                    code(&p.parser)
                )),
                None => o.push_str("- parsed by the adapter: not available\n"),
            }
            o.push_str("\n<details><summary>All key paths (types only)</summary>\n\n");
            let mut lines: Vec<String> = t.key_paths.iter().map(key_path_line).collect();
            if t.paths_omitted > 0 {
                lines.push(format!("… {} more paths not listed", t.paths_omitted));
            }
            fenced(&mut o, &lines.join("\n"));
            o.push_str("\n</details>\n\n");
        }
    }

    o.push_str("## Warnings / next steps\n\n");
    if r.findings.is_empty() && r.next_steps.is_empty() {
        o.push_str("None.\n");
    }
    for f in &r.findings {
        let mark = match f.severity {
            Severity::Warning => "⚠️",
            Severity::Info => "ℹ️",
        };
        o.push_str(&format!(
            "- {mark} {} ({})\n",
            inline(f.message.as_str()),
            code(&f.id)
        ));
    }
    for step in &r.next_steps {
        o.push_str(&format!("- → {}\n", inline(step.as_str())));
    }
    o
}

/// Prose with code spans: markers such as `<redacted:str>` outside a span
/// would read as HTML tags and vanish, so `<`, `>` and `&` are escaped
/// there (inside spans they are literal already).
fn inline(text: &str) -> String {
    text.split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                part.to_string()
            } else {
                part.replace('&', "&amp;")
                    .replace('<', "&lt;")
                    .replace('>', "&gt;")
            }
        })
        .collect::<Vec<_>>()
        .join("`")
}

fn key_path_line(k: &KeyPath) -> String {
    let types: Vec<&str> = k.types.iter().map(|t| t.name()).collect();
    format!("{} : {}", k.path, types.join(" | "))
}

fn join_code(items: &[Clean]) -> String {
    items.iter().map(code).collect::<Vec<_>>().join(", ")
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

    #[test]
    fn prose_escapes_markers_outside_code_spans() {
        assert_eq!(
            inline("glob <redacted> in `a <b>` & more"),
            "glob &lt;redacted&gt; in `a <b>` &amp; more"
        );
    }

    #[test]
    fn fences_outgrow_the_body() {
        let mut out = String::new();
        fenced(&mut out, "a ```` b");
        assert!(out.starts_with("`````text\n"), "{out}");
    }
}
