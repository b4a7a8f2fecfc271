//! Reading one profile file into a [`Profile`], field by field, so every
//! error can name its line. Field names, defaults and meanings are
//! bmad-loop's `CLIProfile` (its string `adapter` kind included); drover adds
//! `component`, `aliases`, `[turn]`, `[sandbox]` and `[component_settings]`.
//! Where bmad-loop coerces a value (`str()`, `int()`, `bool()`), drover reads
//! it the same way and records a warning that says what it was read as.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::coerce;
use super::error::ProfileError;
use super::{
    AdapterKind, ComponentRef, Hooks, Profile, ProfileSource, SandboxOverrides, Turn, known, paths,
    template,
};

/// Reads a spanned TOML tree with line-aware errors (and warnings).
struct Reader<'a> {
    text: &'a str,
    source: String,
    warnings: RefCell<Vec<ProfileError>>,
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

    fn warn(&self, span: std::ops::Range<usize>, field: &str, message: impl Into<String>) {
        let warning = self.error(Some(span), field, message);
        self.warnings.borrow_mut().push(warning);
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

pub(super) fn type_name(value: &DeValue<'_>) -> &'static str {
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

    /// A field bmad-loop reads with `str()`: any value, read as Python
    /// would print it, with a warning when it was not a string.
    fn text(&mut self, key: &str) -> Option<(String, usize)> {
        let value = self.take(key)?;
        let text = self.coerced_text(&self.path(key), &value);
        Some((text, value.span().start))
    }

    fn coerced_text(&self, field: &str, value: &Spanned<DeValue<'i>>) -> String {
        let text = coerce::py_str(value.get_ref());
        if !matches!(value.get_ref(), DeValue::String(_)) {
            self.reader.warn(
                value.span(),
                field,
                format!(
                    "{} read as the string {text:?}, as bmad-loop's str() reads it; write it in quotes to say so",
                    type_name(value.get_ref())
                ),
            );
        }
        text
    }

    /// A required `str()` field, stripped (bmad-loop strips `name` and `binary`).
    fn required_text(
        &mut self,
        key: &str,
        table_span: Option<std::ops::Range<usize>>,
    ) -> Result<(String, usize), ProfileError> {
        let (value, at) = self.text(key).ok_or_else(|| {
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

    /// A flag bmad-loop reads with `bool()`: an empty string, zero or an
    /// empty container is false, anything else true (the string "false"
    /// too), with a warning when it was not a boolean.
    fn truthy(&mut self, key: &str) -> Option<bool> {
        let value = self.take(key)?;
        let truth = coerce::py_bool(value.get_ref());
        if !matches!(value.get_ref(), DeValue::Boolean(_)) {
            self.reader.warn(
                value.span(),
                &self.path(key),
                format!(
                    "{} read as {truth}, as bmad-loop's bool() reads it (any non-empty string is true); write true or false",
                    type_name(value.get_ref())
                ),
            );
        }
        Some(truth)
    }

    /// A non-negative integer that fits `u32`; `int_like` also takes what
    /// bmad-loop's `int()` takes (`2.7` is 2, `true` is 1, `"3"` is 3), with
    /// a warning.
    fn count(&mut self, key: &str, int_like: bool) -> Result<Option<u32>, ProfileError> {
        let Some(value) = self.take(key) else {
            return Ok(None);
        };
        let span = value.span();
        let n = match value.get_ref() {
            DeValue::Integer(_) => coerce::py_int(value.get_ref())
                .map_err(|m| self.reader.error(Some(span.clone()), &self.path(key), m))?,
            other if int_like => {
                let n = coerce::py_int(other).map_err(|m| {
                    self.reader.error(
                        Some(span.clone()),
                        &self.path(key),
                        format!(
                            "expected a non-negative integer, found {}: {m}",
                            type_name(other)
                        ),
                    )
                })?;
                self.reader.warn(
                    span.clone(),
                    &self.path(key),
                    format!(
                        "{} read as {n}, as bmad-loop's int() reads it; write an integer",
                        type_name(other)
                    ),
                );
                n
            }
            _ => return Err(self.wrong(key, &value, "a non-negative integer")),
        };
        if n < 0 {
            return Err(self.reader.error(
                Some(span),
                &self.path(key),
                format!("must not be negative, found {n}"),
            ));
        }
        u32::try_from(n).map(Some).map_err(|_| {
            self.reader
                .error(Some(span), &self.path(key), format!("{n} is too large"))
        })
    }

    /// A finite number >= 0 (integers accepted: `8` means `8.0`). Strings and
    /// booleans bmad-loop's `float()` reads are read the same way, with a
    /// warning.
    fn seconds(&mut self, key: &str) -> Result<Option<f64>, ProfileError> {
        let Some(value) = self.take(key) else {
            return Ok(None);
        };
        let span = value.span();
        let number = match value.get_ref() {
            DeValue::Float(_) | DeValue::Integer(_) => coerce::py_float(value.get_ref()).ok(),
            DeValue::String(_) | DeValue::Boolean(_) => {
                let n = coerce::py_float(value.get_ref()).map_err(|m| {
                    self.reader.error(
                        Some(span.clone()),
                        &self.path(key),
                        format!(
                            "expected a number of seconds, found {}: {m}",
                            type_name(value.get_ref())
                        ),
                    )
                })?;
                self.reader.warn(
                    span.clone(),
                    &self.path(key),
                    format!(
                        "{} read as {n} seconds, as bmad-loop's float() reads it; write a number",
                        type_name(value.get_ref())
                    ),
                );
                Some(n)
            }
            _ => return Err(self.wrong(key, &value, "a number of seconds")),
        };
        match number {
            Some(n) if n.is_finite() && n >= 0.0 => Ok(Some(n)),
            _ => Err(self.reader.error(
                Some(span),
                &self.path(key),
                "must be a finite number of seconds >= 0",
            )),
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
        self.strings_of(key, table)
    }

    fn strings_of(
        &self,
        key: &str,
        table: DeTable<'i>,
    ) -> Result<BTreeMap<String, String>, ProfileError> {
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

    /// A table bmad-loop reads as `{str(k): str(v)}`: values of any type,
    /// read as Python prints them, with a warning for each non-string.
    fn text_map(&mut self, key: &str) -> Result<BTreeMap<String, String>, ProfileError> {
        let Some((table, _)) = self.table(key)? else {
            return Ok(BTreeMap::new());
        };
        let mut out = BTreeMap::new();
        for (k, v) in table {
            let name = k.get_ref().to_string();
            let text = self.coerced_text(&format!("{}.{name}", self.path(key)), &v);
            out.insert(name, text);
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
    "adapter",
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
    "component_settings",
];

const TURN_FIELDS: &[&str] = &["args", "env", "argv", "resume", "session_id", "output"];

/// Parses and validates one profile file.
pub fn parse(text: &str, source: &ProfileSource) -> Result<Profile, ProfileError> {
    let reader = Reader {
        text,
        source: source.to_string(),
        warnings: RefCell::new(Vec::new()),
    };
    let root = DeTable::parse(text).map_err(|e| {
        let span = e.span();
        reader.error(span, "", format!("invalid TOML: {}", e.message()))
    })?;
    let root_span = root.span();
    let mut top = Table::new(&reader, "", root.into_inner());

    let (name, name_at) = top.required_text("name", Some(root_span.start..root_span.start))?;
    if !known::is_identifier(&name) {
        return Err(reader.error(
            Some(name_at..name_at),
            "name",
            format!("'{name}' must be letters, digits, '.', '_' or '-'"),
        ));
    }
    let (binary, _) = top.required_text("binary", Some(root_span.start..root_span.start))?;
    let (adapter_kind, mut component_settings) = adapter_field(&mut top)?;

    let explicit_component = match top.string("component")? {
        Some((value, at)) => Some(component_ref(&reader, &value, at, source)?),
        None => None,
    };
    let file_component = matches!(explicit_component, Some(ComponentRef::File(_)));

    let hooks = match top.table("hooks")? {
        Some((table, span)) => parse_hooks(&reader, table, span, !file_component)?,
        None => {
            return Err(reader.error(
                Some(root_span.start..root_span.start),
                "hooks",
                "missing [hooks] table",
            ));
        }
    };
    let adapter = match adapter_kind {
        None if hooks.dialect == "none" => AdapterKind::OpencodeHttp,
        None => AdapterKind::Generic,
        Some((kind, span)) => match kind.as_str() {
            "generic" if hooks.dialect == "none" => {
                return Err(reader.error(
                    Some(span),
                    "adapter",
                    "'generic' drives a CLI by its hook signals, but hooks.dialect is none; a hookless profile is adapter = \"opencode-http\" (the default when adapter is left out), or give it a hook dialect",
                ));
            }
            "generic" => AdapterKind::Generic,
            "opencode-http" => AdapterKind::OpencodeHttp,
            other => {
                return Err(reader.error(
                    Some(span),
                    "adapter",
                    format!(
                        "unknown adapter kind '{other}' (drover has: {})",
                        AdapterKind::NAMES.join(", ")
                    ),
                ));
            }
        },
    };
    // bmad-loop's opencode-http driver is drover's opencode component.
    let component = explicit_component.unwrap_or_else(|| match adapter {
        AdapterKind::OpencodeHttp => ComponentRef::Builtin("opencode".to_string()),
        AdapterKind::Generic => ComponentRef::Implicit(name.clone()),
    });

    let skill_tree = match top.string("skill_tree")? {
        Some((path, at)) => {
            paths::check_relative(&path)
                .map_err(|m| reader.error(Some(at..at), "skill_tree", m))?;
            path
        }
        None => ".claude/skills".to_string(),
    };
    let prompt_template = match top.text("prompt_template") {
        Some((t, at)) => {
            template::validate(&t).map_err(|m| reader.error(Some(at..at), "prompt_template", m))?;
            t
        }
        None => "{prompt}".to_string(),
    };
    let launch_args = values(top.strings("launch_args")?);
    let bypass_args = values(top.strings("bypass_args")?);
    let model_flag = top
        .text("model_flag")
        .map_or_else(|| "--model".to_string(), |(v, _)| v);
    let env = top.text_map("env")?;
    let usage_parser = match top.string("usage_parser")? {
        Some((p, at)) => {
            let p = p.trim().to_string();
            let known = if file_component {
                known::is_identifier(&p)
            } else {
                known::PARSERS.contains(&p.as_str())
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
    let stop_without_result_nudges = top.count("stop_without_result_nudges", true)?;
    let subagent_stop_without_transcript = top
        .truthy("subagent_stop_without_transcript")
        .unwrap_or(false);
    let first_run_note = top
        .text("first_run_note")
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
        Some((table, _)) => parse_turn(&reader, table, file_component)?,
        None => Turn::default(),
    };
    let sandbox = match top.table("sandbox")? {
        Some((table, _)) => {
            let mut t = Table::new(&reader, "sandbox", table);
            let timeout = t.count("call_timeout_ms", false)?;
            let memory = t.count("memory_mib", false)?;
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
    if let Some((table, span)) = top.table("component_settings")? {
        if !component_settings.is_empty() {
            return Err(reader.error(
                Some(span),
                "component_settings",
                "given twice: here and as the old [adapter] table; keep this one",
            ));
        }
        component_settings = top.strings_of("component_settings", table)?;
    }
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
        adapter,
        component,
        aliases,
        turn,
        sandbox,
        component_settings,
        warnings: {
            let mut warnings = reader.warnings.into_inner();
            warnings.sort_by_key(|w| w.line);
            warnings
        },
        source: source.clone(),
        sha256: source.path().map(|_| crate::trust::digest(text.as_bytes())),
    })
}

/// The `adapter` field: bmad-loop's driver kind (a string), or drover 0.1's
/// `[adapter]` table of component settings, read for one more release with
/// a warning.
#[allow(clippy::type_complexity)]
fn adapter_field(
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
fn parse_turn(
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
    t.finish(TURN_FIELDS)?;
    Ok(Turn {
        args,
        env,
        argv,
        resume,
        session_id,
        output,
    })
}

/// An argv template of `[turn]`: only `{placeholder}` may appear, and the
/// conversation templates must use it (a resume without the id is no resume).
fn argv_template(
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
