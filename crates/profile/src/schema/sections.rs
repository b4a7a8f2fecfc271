//! The profile's structured fields: `adapter`, `[turn]`, argv templates,
//! `component` and `[hooks]`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};

use super::{Reader, TURN_FIELDS, Table, type_name};
use crate::error::ProfileError;
use crate::{AdapterKind, ComponentRef, Hooks, ProfileSource, Turn, known, paths, template};

/// The `adapter` field: bmad-loop's driver kind (a string), or drover 0.1's
/// `[adapter]` table of component settings, read for one more release with
/// a warning.
#[allow(clippy::type_complexity)]
pub(super) fn adapter_field(
    top: &mut Table<'_, '_, '_>,
) -> Result<
    (
        Option<(String, std::ops::Range<usize>)>,
        BTreeMap<String, String>,
    ),
    ProfileError,
> {
    let Some(value) = top.take("adapter") else {
        return Ok((None, BTreeMap::new()));
    };
    let span = value.span();
    match value.into_inner() {
        DeValue::String(kind) => Ok((Some((kind.trim().to_string(), span)), BTreeMap::new())),
        DeValue::Table(table) => {
            top.reader.warn(
                span,
                "adapter",
                "a table here is the old name of [component_settings]; rename it (drover reads the old name until its next release, when adapter is only bmad-loop's adapter kind)",
            );
            Ok((None, top.strings_of("adapter", table)?))
        }
        other => Err(top.reader.error(
            Some(span),
            "adapter",
            format!(
                "expected the adapter kind as a string (one of: {}), found {}",
                AdapterKind::NAMES.join(", "),
                type_name(&other)
            ),
        )),
    }
}

/// `[turn]`: extra args and env for every component's headless turns, and
/// the argv templates and output format the generic adapter runs a turn with.
pub(super) fn parse_turn(
    reader: &Reader<'_>,
    table: DeTable<'_>,
    file_component: bool,
) -> Result<Turn, ProfileError> {
    let mut t = Table::new(reader, "turn", table);
    let args = values(t.strings("args")?);
    let env = t.string_map("env")?;
    let argv = argv_template(reader, &mut t, "argv", "prompt")?;
    let resume = argv_template(reader, &mut t, "resume", "id")?;
    let session_id = argv_template(reader, &mut t, "session_id", "id")?;
    let output = match t.string("output")? {
        Some((format, at)) => {
            let known = if file_component {
                known::is_identifier(&format)
            } else {
                known::TURN_OUTPUTS.contains(&format.as_str())
            };
            if !known {
                return Err(reader.error(
                    Some(at..at),
                    "turn.output",
                    format!(
                        "unknown output format '{format}' (one of: {})",
                        known::TURN_OUTPUTS.join(", ")
                    ),
                ));
            }
            format
        }
        None => String::new(),
    };
    let drop = patterns_of(reader, t.strings("drop")?, "turn.drop", None)?;
    let reply = match t.string("reply")? {
        Some((pattern, at)) => {
            patterns_of(
                reader,
                vec![(pattern.clone(), at)],
                "turn.reply",
                Some("reply"),
            )?;
            Some(pattern)
        }
        None => None,
    };
    let usage = match t.table("usage")? {
        Some((table, span)) => printed_usage(reader, table, span)?,
        None => BTreeMap::new(),
    };
    t.finish(TURN_FIELDS)?;
    Ok(Turn {
        args,
        env,
        argv,
        resume,
        session_id,
        output,
        drop,
        reply,
        usage,
    })
}

/// The counts `[turn.usage]` may read from printed text, and the model.
pub(super) const PRINTED_USAGE_FIELDS: &[&str] = &[
    "input",
    "output",
    "cache_read",
    "cache_write",
    "reasoning",
    "model",
];

/// Regexes of `[turn]`: checked here so a profile that loads never fails in
/// the component. `group`: a named group each must have. One line each
/// (the component gets them a line apiece).
fn patterns_of(
    reader: &Reader<'_>,
    items: Vec<(String, usize)>,
    field: &str,
    group: Option<&str>,
) -> Result<Vec<String>, ProfileError> {
    let many = items.len() > 1 || field == "turn.drop";
    let mut out = Vec::new();
    for (n, (pattern, at)) in items.into_iter().enumerate() {
        let name = if many {
            format!("{field}[{n}]")
        } else {
            field.to_string()
        };
        let regex = checked_pattern(reader, &pattern, at, &name)?;
        if let Some(group) = group
            && !regex.capture_names().flatten().any(|g| g == group)
        {
            return Err(reader.error(
                Some(at..at),
                &name,
                format!("needs a group named {group}, as in (?P<{group}>...)"),
            ));
        }
        out.push(pattern);
    }
    Ok(out)
}

/// One `[turn]` regex: valid, and one line.
fn checked_pattern(
    reader: &Reader<'_>,
    pattern: &str,
    at: usize,
    name: &str,
) -> Result<regex::Regex, ProfileError> {
    let regex = regex::Regex::new(pattern)
        .map_err(|e| reader.error(Some(at..at), name, format!("not a valid regex: {e}")))?;
    if pattern.contains('\n') {
        return Err(reader.error(
            Some(at..at),
            name,
            "a pattern is one line (write a line break as \\n)",
        ));
    }
    Ok(regex)
}

/// `[turn.usage]`: count name (or `model`) -> a regex whose first group
/// (or the group named `n`) is the figure (or the model's name).
fn printed_usage(
    reader: &Reader<'_>,
    table: DeTable<'_>,
    span: std::ops::Range<usize>,
) -> Result<BTreeMap<String, String>, ProfileError> {
    let mut out = BTreeMap::new();
    for (key, value) in table {
        let name = key.get_ref().to_string();
        let field = format!("turn.usage.{name}");
        if !PRINTED_USAGE_FIELDS.contains(&name.as_str()) {
            return Err(reader.error(
                Some(key.span()),
                &field,
                format!(
                    "unknown count (one of: {})",
                    PRINTED_USAGE_FIELDS.join(", ")
                ),
            ));
        }
        let DeValue::String(pattern) = value.get_ref() else {
            return Err(reader.error(Some(value.span()), &field, "expected a regex as a string"));
        };
        let at = value.span().start;
        if checked_pattern(reader, pattern, at, &field)?.captures_len() < 2 {
            return Err(reader.error(
                Some(at..at),
                &field,
                "needs a group around the figure, as in Tokens: ([\\d.,]+[kM]?) sent",
            ));
        }
        out.insert(name, pattern.to_string());
    }
    if out.is_empty() {
        return Err(reader.error(
            Some(span),
            "turn.usage",
            format!(
                "names no count (one of: {})",
                PRINTED_USAGE_FIELDS.join(", ")
            ),
        ));
    }
    Ok(out)
}

/// An argv template of `[turn]`: only `{placeholder}` may appear, and the
/// conversation templates must use it (a resume without the id is no resume).
pub(super) fn argv_template(
    reader: &Reader<'_>,
    t: &mut Table<'_, '_, '_>,
    key: &str,
    placeholder: &str,
) -> Result<Vec<String>, ProfileError> {
    let items = t.strings(key)?;
    let mut uses = 0;
    for (n, (item, at)) in items.iter().enumerate() {
        uses += template::placeholders(item, &[placeholder])
            .map_err(|m| reader.error(Some(*at..*at), &format!("turn.{key}[{n}]"), m))?
            .len();
    }
    if placeholder == "id" && !items.is_empty() && uses == 0 {
        return Err(reader.error(
            items.first().map(|(_, at)| *at..*at),
            &format!("turn.{key}"),
            format!("must contain {{{placeholder}}} where the conversation id goes"),
        ));
    }
    Ok(values(items))
}

pub(super) fn values(items: Vec<(String, usize)>) -> Vec<String> {
    items.into_iter().map(|(v, _)| v).collect()
}

pub(super) fn component_ref(
    reader: &Reader<'_>,
    value: &str,
    at: usize,
    source: &ProfileSource,
) -> Result<ComponentRef, ProfileError> {
    let value = value.trim();
    if value.ends_with(".wasm") {
        let path = PathBuf::from(value);
        let resolved = if path.is_absolute() {
            path
        } else {
            match source.path().and_then(Path::parent) {
                Some(dir) => dir.join(path),
                None => {
                    return Err(reader.error(
                        Some(at..at),
                        "component",
                        "a built-in profile cannot name a component file",
                    ));
                }
            }
        };
        return Ok(ComponentRef::File(resolved));
    }
    if !known::is_identifier(value) {
        return Err(reader.error(
            Some(at..at),
            "component",
            format!("'{value}' is neither a component name nor a path ending in .wasm"),
        ));
    }
    Ok(ComponentRef::Builtin(value.to_string()))
}

pub(super) fn parse_hooks(
    reader: &Reader<'_>,
    table: DeTable<'_>,
    span: std::ops::Range<usize>,
    builtin_component: bool,
) -> Result<Hooks, ProfileError> {
    let mut t = Table::new(reader, "hooks", table);
    let (dialect, dialect_at) = t.required_text("dialect", Some(span.clone()))?;
    let dialect_known = if builtin_component {
        dialect == "none" || known::DIALECTS.contains(&dialect.as_str())
    } else {
        known::is_identifier(&dialect)
    };
    if !dialect_known {
        return Err(reader.error(
            Some(dialect_at..dialect_at),
            "hooks.dialect",
            format!(
                "unknown dialect '{dialect}' (built-in: none, {})",
                known::DIALECTS.join(", ")
            ),
        ));
    }
    let config_path = t.string("config_path")?;
    let events_table = t.table("events")?;
    t.finish(&["dialect", "config_path", "events"])?;
    let mut events = Vec::new();
    if let Some((table, _)) = events_table {
        for (native, canonical) in table {
            let native_name = native.get_ref().to_string();
            let field = format!("hooks.events.{native_name}");
            let DeValue::String(value) = canonical.get_ref() else {
                return Err(reader.error(
                    Some(canonical.span()),
                    &field,
                    format!(
                        "expected a canonical event name, found {}",
                        type_name(canonical.get_ref())
                    ),
                ));
            };
            if !known::CANONICAL_EVENTS.contains(&value.as_ref()) {
                return Err(reader.error(
                    Some(canonical.span()),
                    &field,
                    format!(
                        "'{value}' is not a canonical event (one of: {})",
                        known::CANONICAL_EVENTS.join(", ")
                    ),
                ));
            }
            events.push((native_name, value.to_string()));
        }
    }
    if dialect == "none" {
        if config_path.as_ref().is_some_and(|(p, _)| !p.is_empty()) {
            return Err(reader.error(
                Some(span),
                "hooks.config_path",
                "must be empty when the dialect is none",
            ));
        }
        if !events.is_empty() {
            return Err(reader.error(
                Some(span),
                "hooks.events",
                "must be empty when the dialect is none",
            ));
        }
        return Ok(Hooks {
            dialect,
            config_path: String::new(),
            events,
        });
    }
    let (config_path, at) = config_path.ok_or_else(|| {
        reader.error(
            Some(span.clone()),
            "hooks.config_path",
            "is required for a hook dialect",
        )
    })?;
    paths::check_relative(&config_path)
        .map_err(|m| reader.error(Some(at..at), "hooks.config_path", m))?;
    if events.is_empty() {
        return Err(reader.error(
            Some(span),
            "hooks.events",
            "must map at least one native event",
        ));
    }
    Ok(Hooks {
        dialect,
        config_path,
        events,
    })
}
