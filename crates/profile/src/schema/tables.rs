//! The reader's line-aware errors and warnings, and one table's fields
//! read by name and type.

use std::collections::BTreeMap;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::{Reader, Table, type_name};
use crate::coerce;
use crate::error::ProfileError;

impl<'a> Reader<'a> {
    pub(super) fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .matches('\n')
            .count()
            + 1
    }

    pub(super) fn error(
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

    pub(super) fn warn(
        &self,
        span: std::ops::Range<usize>,
        field: &str,
        message: impl Into<String>,
    ) {
        let warning = self.error(Some(span), field, message);
        self.warnings.borrow_mut().push(warning);
    }

    /// The text of the line `offset` is on.
    pub(super) fn line_text(&self, offset: usize) -> &'a str {
        let start = self.text[..offset.min(self.text.len())]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let end = self.text[start..]
            .find('\n')
            .map_or(self.text.len(), |i| start + i);
        &self.text[start..end]
    }
}

impl<'r, 'a, 'i> Table<'r, 'a, 'i> {
    pub(super) fn new(reader: &'r Reader<'a>, prefix: &str, table: DeTable<'i>) -> Self {
        Table {
            reader,
            prefix: prefix.to_string(),
            entries: table.into_iter().collect(),
        }
    }

    pub(super) fn path(&self, key: &str) -> String {
        if self.prefix.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.prefix)
        }
    }

    pub(super) fn take(&mut self, key: &str) -> Option<Spanned<DeValue<'i>>> {
        let at = self
            .entries
            .iter()
            .position(|(k, _)| k.get_ref().as_ref() == key)?;
        Some(self.entries.remove(at).1)
    }

    pub(super) fn wrong(
        &self,
        key: &str,
        value: &Spanned<DeValue<'i>>,
        expected: &str,
    ) -> ProfileError {
        self.reader.error(
            Some(value.span()),
            &self.path(key),
            format!("expected {expected}, found {}", type_name(value.get_ref())),
        )
    }

    pub(super) fn string(&mut self, key: &str) -> Result<Option<(String, usize)>, ProfileError> {
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
    pub(super) fn text(&mut self, key: &str) -> Option<(String, usize)> {
        let value = self.take(key)?;
        let text = self.coerced_text(&self.path(key), &value);
        Some((text, value.span().start))
    }

    pub(super) fn coerced_text(&self, field: &str, value: &Spanned<DeValue<'i>>) -> String {
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
    pub(super) fn required_text(
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
    pub(super) fn strings(&mut self, key: &str) -> Result<Vec<(String, usize)>, ProfileError> {
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
    pub(super) fn truthy(&mut self, key: &str) -> Option<bool> {
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
    pub(super) fn count(&mut self, key: &str, int_like: bool) -> Result<Option<u32>, ProfileError> {
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
    pub(super) fn seconds(&mut self, key: &str) -> Result<Option<f64>, ProfileError> {
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

    pub(super) fn table(
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
    pub(super) fn string_map(
        &mut self,
        key: &str,
    ) -> Result<BTreeMap<String, String>, ProfileError> {
        let Some((table, _)) = self.table(key)? else {
            return Ok(BTreeMap::new());
        };
        self.strings_of(key, table)
    }

    pub(super) fn strings_of(
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
    pub(super) fn text_map(&mut self, key: &str) -> Result<BTreeMap<String, String>, ProfileError> {
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
    pub(super) fn finish(self, known_fields: &[&str]) -> Result<(), ProfileError> {
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
