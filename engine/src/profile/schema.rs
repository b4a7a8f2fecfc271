//! Reading one profile file into a [`Profile`], field by field, so every
//! error can name its line. Field names, defaults and meanings are
//! bmad-loop's `CLIProfile`; drover adds `component`, `aliases`, `[turn]`,
//! `[sandbox]` and `[adapter]`. Unlike bmad-loop nothing is coerced: a
//! number where a string belongs is an error, not `"1"`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::error::ProfileError;
use super::{
    ComponentRef, Hooks, Profile, ProfileSource, SandboxOverrides, Turn, known, paths, template,
};

/// Reads a spanned TOML tree with line-aware errors.
struct Reader<'a> {
    text: &'a str,
    source: String,
}

impl<'a> Reader<'a> {
    fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    fn error(
        &self,
        span: Option<std::ops::Range<usize>>,
        field: &str,
        message: impl Into<String>,
    ) -> ProfileError {
        ProfileError {
            source: self.source.clone(),
            line: span.map(|s| self.line_of(s.start)),
            field: (!field.is_empty()).then(|| field.to_string()),
            message: message.into(),
        }
    }

    /// The text of the line `offset` is on.
    fn line_text(&self, offset: usize) -> &'a str {
        let start = self.text[..offset.min(self.text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let end = self.text[start..]
            .find('\n')
            .map_or(self.text.len(), |i| start + i);
        &self.text[start..end]
    }
}

fn type_name(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a datetime",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

/// One table's fields, consumed by name; leftovers are unknown fields.
struct Table<'r, 'a, 'i> {
    reader: &'r Reader<'a>,
    prefix: String,
    entries: Vec<(Spanned<std::borrow::Cow<'i, str>>, Spanned<DeValue<'i>>)>,
}

impl<'r, 'a, 'i> Table<'r, 'a, 'i> {
    fn new(reader: &'r Reader<'a>, prefix: &str, table: DeTable<'i>) -> Self {
        Table {
            reader,
            prefix: prefix.to_string(),
            entries: table.into_iter().collect(),
        }
    }

    fn path(&self, key: &str) -> String {
        if self.prefix.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.prefix)
        }
    }

    fn take(&mut self, key: &str) -> Option<Spanned<DeValue<'i>>> {
        let at = self
            .entries
            .iter()
            .position(|(k, _)| k.get_ref().as_ref() == key)?;
        Some(self.entries.remove(at).1)
    }

    fn wrong(&self, key: &str, value: &Spanned<DeValue<'i>>, expected: &str) -> ProfileError {
        self.reader.error(
            Some(value.span()),
            &self.path(key),
            format!("expected {expected}, found {}", type_name(value.get_ref())),
        )
    }

    fn string(&mut self, key: &str) -> Result<Option<(String, usize)>, ProfileError> {
        match self.take(key) {
            None => Ok(None),
            Some(value) => match value.get_ref() {
                DeValue::String(s) => Ok(Some((s.to_string(), value.span().start))),
                _ => Err(self.wrong(key, &value, "a string")),
            },
        }
    }

    fn required_string(
        &mut self,
        key: &str,
        table_span: Option<std::ops::Range<usize>>,
    ) -> Result<(String, usize), ProfileError> {
        let (value, at) = self.string(key)?.ok_or_else(|| {
            self.reader
                .error(table_span, &self.path(key), "is required")
        })?;
        if value.trim().is_empty() {
            return Err(self
                .reader
                .error(Some(at..at), &self.path(key), "must not be empty"));
        }
        Ok((value.trim().to_string(), at))
    }

    /// An array of strings, with each element's offset.
    fn strings(&mut self, key: &str) -> Result<Vec<(String, usize)>, ProfileError> {
        let Some(value) = self.take(key) else {
            return Ok(Vec::new());
        };
        let DeValue::Array(items) = value.get_ref() else {
            return Err(self.wrong(key, &value, "an array of strings"));
        };
        let mut out = Vec::new();
        for (n, item) in items.iter().enumerate() {
            match item.get_ref() {
                DeValue::String(s) => out.push((s.to_string(), item.span().start)),
                other => {
                    return Err(self.reader.error(
                        Some(item.span()),
                        &format!("{}[{n}]", self.path(key)),
                        format!("expected a string, found {}", type_name(other)),
                    ));
                }
            }
        }
        Ok(out)
    }

    fn boolean(&mut self, key: &str) -> Result<Option<bool>, ProfileError> {
        match self.take(key) {
            None => Ok(None),
            Some(value) => match value.get_ref() {
                DeValue::Boolean(b) => Ok(Some(*b)),
                _ => Err(self.wrong(key, &value, "true or false")),
            },
        }
    }

    /// A non-negative integer that fits `u32`.
    fn count(&mut self, key: &str) -> Result<Option<u32>, ProfileError> {
        match self.take(key) {
            None => Ok(None),
            Some(value) => match value.get_ref() {
                DeValue::Integer(i) => {
                    let digits = i.as_str().replace('_', "");
                    match i64::from_str_radix(&digits, i.radix()) {
                        Ok(n) if n >= 0 => u32::try_from(n).map(Some).map_err(|_| {
                            self.reader.error(
                                Some(value.span()),
                                &self.path(key),
                                format!("{n} is too large"),
                            )
                        }),
                        Ok(n) => Err(self.reader.error(
                            Some(value.span()),
                            &self.path(key),
                            format!("must not be negative, found {n}"),
                        )),
                        Err(_) => Err(self.reader.error(
                            Some(value.span()),
                            &self.path(key),
                            "integer out of range",
                        )),
                    }
                }
                _ => Err(self.wrong(key, &value, "a non-negative integer")),
            },
        }
    }

    /// A finite number >= 0 (integers accepted: `8` means `8.0`).
    fn seconds(&mut self, key: &str) -> Result<Option<f64>, ProfileError> {
        match self.take(key) {
            None => Ok(None),
            Some(value) => {
                let number = match value.get_ref() {
                    DeValue::Float(f) => f.as_str().replace('_', "").parse::<f64>().ok(),
                    DeValue::Integer(i) => {
                        i64::from_str_radix(&i.as_str().replace('_', ""), i.radix())
                            .ok()
                            .map(|n| n as f64)
                    }
                    _ => return Err(self.wrong(key, &value, "a number of seconds")),
                };
                match number {
                    Some(n) if n.is_finite() && n >= 0.0 => Ok(Some(n)),
                    _ => Err(self.reader.error(
                        Some(value.span()),
                        &self.path(key),
                        "must be a finite number of seconds >= 0",
                    )),
                }
            }
        }
    }

    fn table(
        &mut self,
        key: &str,
    ) -> Result<Option<(DeTable<'i>, std::ops::Range<usize>)>, ProfileError> {
        match self.take(key) {
            None => Ok(None),
            Some(value) => {
                let span = value.span();
                match value.into_inner() {
                    DeValue::Table(t) => Ok(Some((t, span))),
                    other => Err(self.reader.error(
                        Some(span),
                        &self.path(key),
                        format!("expected a table, found {}", type_name(&other)),
                    )),
                }
            }
        }
    }

    /// A table whose values must all be strings.
    fn string_map(&mut self, key: &str) -> Result<BTreeMap<String, String>, ProfileError> {
        let Some((table, _)) = self.table(key)? else {
            return Ok(BTreeMap::new());
        };
        let mut out = BTreeMap::new();
        for (k, v) in table {
            let name = k.get_ref().to_string();
            match v.get_ref() {
                DeValue::String(s) => {
                    out.insert(name, s.to_string());
                }
                other => {
                    return Err(self.reader.error(
                        Some(v.span()),
                        &format!("{}.{name}", self.path(key)),
                        format!(
                            "expected a string, found {} (write it in quotes)",
                            type_name(other)
                        ),
                    ));
                }
            }
        }
        Ok(out)
    }

    /// Errors on the first field nobody asked for.
    fn finish(self, known_fields: &[&str]) -> Result<(), ProfileError> {
        if let Some((key, _)) = self.entries.first() {
            return Err(self.reader.error(
                Some(key.span()),
                &self.path(key.get_ref()),
                format!("unknown field (known: {})", known_fields.join(", ")),
            ));
        }
        Ok(())
    }
}

const TOP_FIELDS: &[&str] = &[
    "name",
    "binary",
    "hooks",
    "skill_tree",
    "prompt_template",
    "launch_args",
    "bypass_args",
    "model_flag",
    "env",
    "usage_parser",
    "usage_grace_s",
    "stop_without_result_nudges",
    "subagent_stop_without_transcript",
    "first_run_note",
    "seed_files",
    "env_fault_patterns",
    "component",
    "aliases",
    "turn",
    "sandbox",
    "adapter",
];

/// Parses and validates one profile file.
pub fn parse(text: &str, source: &ProfileSource) -> Result<Profile, ProfileError> {
    let reader = Reader {
        text,
        source: source.to_string(),
    };
    let root = DeTable::parse(text).map_err(|e| {
        let span = e.span();
        reader.error(span, "", format!("invalid TOML: {}", e.message()))
    })?;
    let root_span = root.span();
    let mut top = Table::new(&reader, "", root.into_inner());

    let (name, name_at) = top.required_string("name", Some(root_span.start..root_span.start))?;
    if !known::is_identifier(&name) {
        return Err(reader.error(
            Some(name_at..name_at),
            "name",
            format!("'{name}' must be letters, digits, '.', '_' or '-'"),
        ));
    }
    let (binary, _) = top.required_string("binary", Some(root_span.start..root_span.start))?;

    let component = match top.string("component")? {
        Some((value, at)) => component_ref(&reader, &value, at, source)?,
        None => ComponentRef::Builtin(name.clone()),
    };
    let builtin_component = matches!(component, ComponentRef::Builtin(_));

    let hooks = match top.table("hooks")? {
        Some((table, span)) => parse_hooks(&reader, table, span, builtin_component)?,
        None => {
            return Err(reader.error(
                Some(root_span.start..root_span.start),
                "hooks",
                "missing [hooks] table",
            ));
        }
    };

    let skill_tree = match top.string("skill_tree")? {
        Some((path, at)) => {
            paths::check_relative(&path)
                .map_err(|m| reader.error(Some(at..at), "skill_tree", m))?;
            path
        }
        None => ".claude/skills".to_string(),
    };
    let prompt_template = match top.string("prompt_template")? {
        Some((t, at)) => {
            template::validate(&t).map_err(|m| reader.error(Some(at..at), "prompt_template", m))?;
            t
        }
        None => "{prompt}".to_string(),
    };
    let launch_args = values(top.strings("launch_args")?);
    let bypass_args = values(top.strings("bypass_args")?);
    let model_flag = top
        .string("model_flag")?
        .map_or_else(|| "--model".to_string(), |(v, _)| v);
    let env = top.string_map("env")?;
    let usage_parser = match top.string("usage_parser")? {
        Some((p, at)) => {
            let p = p.trim().to_string();
            let known = if builtin_component {
                known::PARSERS.contains(&p.as_str())
            } else {
                known::is_identifier(&p)
            };
            if !known {
                return Err(reader.error(
                    Some(at..at),
                    "usage_parser",
                    format!(
                        "unknown usage parser '{p}' (built-in: {})",
                        known::PARSERS.join(", ")
                    ),
                ));
            }
            p
        }
        None => "none".to_string(),
    };
    let usage_grace = top.seconds("usage_grace_s")?.unwrap_or(0.0);
    let stop_without_result_nudges = top.count("stop_without_result_nudges")?;
    let subagent_stop_without_transcript = top
        .boolean("subagent_stop_without_transcript")?
        .unwrap_or(false);
    let first_run_note = top
        .string("first_run_note")?
        .map(|(v, _)| v)
        .unwrap_or_default();
    let mut seed_files = Vec::new();
    for (n, (path, at)) in top.strings("seed_files")?.into_iter().enumerate() {
        paths::check_relative(&path)
            .map_err(|m| reader.error(Some(at..at), &format!("seed_files[{n}]"), m))?;
        seed_files.push(path);
    }
    let mut env_fault_patterns = Vec::new();
    let mut self_matching_patterns = Vec::new();
    for (n, (pattern, at)) in top.strings("env_fault_patterns")?.into_iter().enumerate() {
        let field = format!("env_fault_patterns[{n}]");
        let regex = regex::Regex::new(&pattern)
            .map_err(|e| reader.error(Some(at..at), &field, format!("not a valid regex: {e}")))?;
        if regex.is_match(reader.line_text(at)) {
            self_matching_patterns.push(n);
        }
        env_fault_patterns.push(pattern);
    }
    let aliases = values(top.strings("aliases")?);
    for alias in &aliases {
        if !known::is_identifier(alias) {
            return Err(reader.error(
                None,
                "aliases",
                format!("'{alias}' must be letters, digits, '.', '_' or '-'"),
            ));
        }
    }
    let turn = match top.table("turn")? {
        Some((table, _)) => {
            let mut t = Table::new(&reader, "turn", table);
            let turn = Turn {
                args: values(t.strings("args")?),
                env: t.string_map("env")?,
            };
            t.finish(&["args", "env"])?;
            turn
        }
        None => Turn::default(),
    };
    let sandbox = match top.table("sandbox")? {
        Some((table, _)) => {
            let mut t = Table::new(&reader, "sandbox", table);
            let timeout = t.count("call_timeout_ms")?;
            let memory = t.count("memory_mib")?;
            t.finish(&["call_timeout_ms", "memory_mib"])?;
            for (field, value) in [
                ("sandbox.call_timeout_ms", timeout),
                ("sandbox.memory_mib", memory),
            ] {
                if value == Some(0) {
                    return Err(reader.error(None, field, "must be greater than 0"));
                }
            }
            SandboxOverrides {
                call_timeout: timeout.map(|ms| Duration::from_millis(u64::from(ms))),
                memory_bytes: memory.map(|mib| (mib as usize) << 20),
            }
        }
        None => SandboxOverrides::default(),
    };
    let adapter_settings = top.string_map("adapter")?;
    top.finish(TOP_FIELDS)?;

    Ok(Profile {
        name,
        binary,
        hooks,
        skill_tree,
        prompt_template,
        launch_args,
        bypass_args,
        model_flag,
        env,
        usage_parser,
        usage_grace: Duration::from_secs_f64(usage_grace),
        stop_without_result_nudges,
        subagent_stop_without_transcript,
        first_run_note,
        seed_files,
        env_fault_patterns,
        self_matching_patterns,
        component,
        aliases,
        turn,
        sandbox,
        adapter_settings,
        source: source.clone(),
    })
}

fn values(items: Vec<(String, usize)>) -> Vec<String> {
    items.into_iter().map(|(v, _)| v).collect()
}

fn component_ref(
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

fn parse_hooks(
    reader: &Reader<'_>,
    table: DeTable<'_>,
    span: std::ops::Range<usize>,
    builtin_component: bool,
) -> Result<Hooks, ProfileError> {
    let mut t = Table::new(reader, "hooks", table);
    let (dialect, dialect_at) = t.required_string("dialect", Some(span.clone()))?;
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
