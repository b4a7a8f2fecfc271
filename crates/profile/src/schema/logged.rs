//! `[usage]`: exact usage from a CLI's JSON-lines logs, described in the
//! profile: where the files are and which field of a row holds each count,
//! the model, the request id, the session and the time. The generic
//! adapter reads them; the table travels to it as the usage parser's name
//! (`fields:` and the table as JSON), because a tally is made from a parser
//! name alone.

use std::collections::BTreeMap;

use toml::de::DeTable;

use super::{Reader, Table};
use crate::error::ProfileError;

/// What a usage parser name made from a `[usage]` table starts with.
const LOGGED_PREFIX: &str = "fields:";

/// The fields of `[usage]` that name a field of a row.
const PATH_FIELDS: &[&str] = &[
    "input",
    "output",
    "cache_read",
    "cache_write",
    "reasoning",
    "model",
    "request_id",
    "session",
    "timestamp",
];

const COUNTS: &[&str] = &["input", "output", "cache_read", "cache_write", "reasoning"];

const FIELDS: &[&str] = &[
    "files",
    "where",
    "input_includes_cache",
    "input",
    "output",
    "cache_read",
    "cache_write",
    "reasoning",
    "model",
    "request_id",
    "session",
    "timestamp",
];

/// Reads `[usage]` into the usage parser name the generic adapter reads.
pub(super) fn parse_logged(
    reader: &Reader<'_>,
    table: DeTable<'_>,
    span: std::ops::Range<usize>,
) -> Result<String, ProfileError> {
    let mut t = Table::new(reader, "usage", table);
    let Some((files, at)) = t.string("files")? else {
        return Err(reader.error(
            Some(span),
            "usage.files",
            "missing: where the CLI writes its JSON-lines logs, below home (as in \"~/.acme/logs/**/*.jsonl\")",
        ));
    };
    check_files(&files).map_err(|m| reader.error(Some(at..at), "usage.files", m))?;
    let mut spec = serde_json::Map::new();
    spec.insert("files".into(), files.into());
    for field in PATH_FIELDS {
        if let Some((path, at)) = t.string(field)? {
            check_path(&path)
                .map_err(|m| reader.error(Some(at..at), &format!("usage.{field}"), m))?;
            spec.insert((*field).into(), path.into());
        }
    }
    if !COUNTS.iter().any(|c| spec.contains_key(*c)) {
        return Err(reader.error(
            Some(span),
            "usage",
            format!(
                "names no count: give the field of at least one of {}",
                COUNTS.join(", ")
            ),
        ));
    }
    let filter: BTreeMap<String, String> = t.string_map("where")?;
    for path in filter.keys() {
        check_path(path)
            .map_err(|m| reader.error(Some(span.clone()), &format!("usage.where.{path}"), m))?;
    }
    if !filter.is_empty() {
        spec.insert(
            "where".into(),
            filter
                .into_iter()
                .map(|(k, v)| (k, v.into()))
                .collect::<serde_json::Map<_, _>>()
                .into(),
        );
    }
    if t.truthy("input_includes_cache") == Some(true) {
        spec.insert("input_includes_cache".into(), true.into());
    }
    t.finish(FIELDS)?;
    Ok(format!(
        "{LOGGED_PREFIX}{}",
        serde_json::Value::Object(spec)
    ))
}

/// A home-relative glob whose first directory is named: the CLI's own
/// directory, never home as a whole.
fn check_files(files: &str) -> Result<(), String> {
    let Some(rest) = files.strip_prefix("~/") else {
        return Err(format!(
            "'{files}' must start with ~/ (the logs a CLI writes below home)"
        ));
    };
    let mut segments = rest.split('/');
    let first = segments.next().unwrap_or_default();
    if first.is_empty() || first.contains(['*', '?', '[', '{']) || first == "." {
        return Err(format!(
            "'{files}' must name the CLI's own directory below home before any wildcard (as in ~/.acme/logs/*.jsonl)"
        ));
    }
    if rest.split('/').any(|s| s == "..") {
        return Err(format!("'{files}' must not climb with .."));
    }
    if files.ends_with('/') {
        return Err(format!(
            "'{files}' names a directory; add the files' pattern (as in */*.jsonl)"
        ));
    }
    Ok(())
}

/// A field of a JSON row: keys joined by `.`, a number for an array item.
fn check_path(path: &str) -> Result<(), String> {
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '$' | '@'))
    };
    if path.split('.').all(plain) {
        Ok(())
    } else {
        Err(format!(
            "'{path}' is not a field path (keys joined by '.', as in usage.input_tokens or choices.0.usage)"
        ))
    }
}
