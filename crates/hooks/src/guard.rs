//! The check every hook-config edit passes before drover writes it.
//!
//! A hook config is something the CLI executes, and it holds the user's own
//! settings, so a component's edit is compared with the file as parsed
//! documents (JSON or TOML by the file's extension), key by key and value by
//! value. Only the dialect's hook table ([`hook_table`]: `hooks`, or
//! `drover` for Antigravity's group-keyed files) may change, and only by
//! drover's relay entries: an install may add them, a removal may take away
//! entries that carry drover's marker. Everywhere else the document must stay
//! exactly as it was — a key added beside the table (`apiKeyHelper`,
//! `env.X`, `statusLine`, `permissions.allow`) is refused even when its value
//! is the relay command, because the CLI would run it as something other
//! than a hook. Anything else — a removed or changed key, a user entry
//! moved, a command that is not the relay, a flag slipped in beside the
//! relay — refuses the edit and names the first difference by its key path.
//! Files in any other format (opencode's plugin is JavaScript) are compared
//! whole, by the caller.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

/// String values a relay entry may hold besides the relay command: the
/// handler type, an empty or catch-all matcher, the entry's name.
const ENTRY_LITERALS: &[&str] = &["command", "", "*", "drover"];

/// A config file's contents as a document the check can compare.
#[derive(Debug)]
pub enum Document {
    /// JSON or TOML, as a JSON value (an empty file is an empty object).
    Tree(Value),
    /// A format the check cannot read (a plugin's source code).
    Opaque,
}

/// Parses a config by its extension: `.json` as JSON, `.toml` as TOML.
pub fn parse(path: &Path, text: &str) -> Result<Document, String> {
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    if text.trim().is_empty() && matches!(extension.as_deref(), Some("json" | "toml")) {
        return Ok(Document::Tree(Value::Object(serde_json::Map::new())));
    }
    match extension.as_deref() {
        Some("json") => serde_json::from_str(text).map(Document::Tree).map_err(|e| {
            format!(
                "not valid JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            )
        }),
        Some("toml") => text
            .parse::<toml::Table>()
            .map_err(|e| format!("not valid TOML: {}", e.message()))
            .and_then(|t| serde_json::to_value(t).map_err(|e| e.to_string()))
            .map(Document::Tree),
        _ => Ok(Document::Opaque),
    }
}

/// The top-level key that holds a dialect's hook entries, the only part of
/// the document drover's edits may touch. The built-in components lay every
/// dialect out under `hooks` except Antigravity's, keyed by hook group
/// (`drover`). A third-party dialect gets `hooks` too: a component does not
/// get to name its own table, or it could name `env`.
pub fn hook_table(dialect: &str) -> &'static str {
    match dialect {
        "antigravity-hooks-json" => "drover",
        _ => "hooks",
    }
}

/// Which way the edit goes, and what counts as drover's.
#[derive(Clone, Copy)]
enum Direction<'a> {
    /// Added entries must run exactly the relay (`<relay> <event>`).
    Install { relay: &'a str, marker: &'a str },
    /// Removed entries must carry drover's marker (any drover, any version).
    Remove { marker: &'a str },
}

/// Checks that `after` is `before` plus drover's relay entries under `table`.
pub fn check_install(
    before: &Value,
    after: &Value,
    table: &str,
    relay: &str,
    marker: &str,
) -> Result<(), String> {
    compare(before, after, table, Direction::Install { relay, marker })
}

/// Checks that `after` is `before` minus entries under `table` carrying
/// drover's marker.
pub fn check_remove(
    before: &Value,
    after: &Value,
    table: &str,
    marker: &str,
) -> Result<(), String> {
    compare(after, before, table, Direction::Remove { marker })
}

/// Whether `current` is `original` plus drover's entries under `table` and
/// nothing else (then removing drover means putting `original` back).
pub fn only_drover_added(original: &Value, current: &Value, table: &str, marker: &str) -> bool {
    compare(original, current, table, Direction::Remove { marker }).is_ok()
}

/// One way `extended` is not `base` plus drover's entries.
enum Difference {
    /// In `base`, not in `extended`.
    Missing(String),
    /// In `extended`, not in `base`, and not drover's.
    Extra(String),
    /// In `extended`, not in `base`, outside the hook table.
    Outside(String),
    /// At the same place with different values (`base`, `extended`).
    Changed(String, String, String),
    /// A `base` array item found later in `extended`.
    Moved(String),
}

fn compare(
    base: &Value,
    extended: &Value,
    table: &str,
    direction: Direction<'_>,
) -> Result<(), String> {
    let mut path = String::new();
    match top_level(&mut path, base, extended, table, direction) {
        None => Ok(()),
        Some(found) => Err(describe(found, table, direction)),
    }
}

/// The hook table is compared as drover's entries may change it; every
/// other top-level key must be as it was, key for key.
fn top_level(
    path: &mut String,
    base: &Value,
    extended: &Value,
    table: &str,
    direction: Direction<'_>,
) -> Option<Difference> {
    let (Value::Object(b), Value::Object(e)) = (base, extended) else {
        return unchanged(path, base, extended);
    };
    for (key, b_value) in b {
        push_key(path, key);
        let found = match e.get(key) {
            None => Some(Difference::Missing(path.clone())),
            Some(e_value) if key == table => difference(path, b_value, e_value, direction),
            Some(e_value) => unchanged(path, b_value, e_value),
        };
        if found.is_some() {
            return found;
        }
        path.clear();
    }
    for (key, e_value) in e.iter().filter(|(k, _)| !b.contains_key(*k)) {
        // The flat dialects' files carry a `"version": 1` drover adds when
        // it is missing (and takes away with its last entry).
        let scaffolding = key == "version" && e_value.is_number();
        if (key == table && is_ours(e_value, direction)) || scaffolding {
            continue;
        }
        push_key(path, key);
        return Some(if key == table {
            Difference::Extra(path.clone())
        } else {
            Difference::Outside(deepest(path, e_value))
        });
    }
    None
}

/// The first difference between `base` and `extended` where nothing may
/// change at all.
fn unchanged(path: &mut String, base: &Value, extended: &Value) -> Option<Difference> {
    match (base, extended) {
        (b, e) if b == e => None,
        (Value::Object(b), Value::Object(e)) => {
            let depth = path.len();
            for (key, b_value) in b {
                push_key(path, key);
                let found = match e.get(key) {
                    None => Some(Difference::Missing(path.clone())),
                    Some(e_value) => unchanged(path, b_value, e_value),
                };
                if found.is_some() {
                    return found;
                }
                path.truncate(depth);
            }
            let (key, e_value) = e.iter().find(|(k, _)| !b.contains_key(*k))?;
            push_key(path, key);
            Some(Difference::Outside(deepest(path, e_value)))
        }
        (Value::Array(b), Value::Array(e)) => {
            let depth = path.len();
            for (i, b_item) in b.iter().enumerate() {
                let _ = write!(path, "[{i}]");
                let found = match e.get(i) {
                    None => Some(Difference::Missing(path.clone())),
                    Some(e_item) => unchanged(path, b_item, e_item),
                };
                if found.is_some() {
                    return found;
                }
                path.truncate(depth);
            }
            let _ = write!(path, "[{}]", b.len());
            Some(Difference::Outside(path.clone()))
        }
        (b, e) => Some(Difference::Changed(path.clone(), shown(b), shown(e))),
    }
}

fn describe(found: Difference, table: &str, direction: Direction<'_>) -> String {
    let at = |p: String| {
        if p.is_empty() {
            "the top level".to_string()
        } else {
            p
        }
    };
    match (found, direction) {
        (Difference::Missing(p), Direction::Install { .. }) => format!("it removed {}", at(p)),
        (Difference::Missing(p), Direction::Remove { .. }) => format!("it added {}", at(p)),
        (Difference::Extra(p), Direction::Install { .. }) => {
            format!("it added {}, which is not drover's relay entry", at(p))
        }
        (Difference::Extra(p), Direction::Remove { .. }) => {
            format!("it removed {}, which does not carry drover's marker", at(p))
        }
        (Difference::Outside(p), Direction::Install { .. }) => format!(
            "it added {}, outside the hook table `{table}` (drover only adds relay entries there)",
            at(p)
        ),
        (Difference::Outside(p), Direction::Remove { .. }) => format!(
            "it removed {}, outside the hook table `{table}` (drover only removes relay entries there)",
            at(p)
        ),
        (Difference::Changed(p, base, extended), Direction::Install { .. }) => {
            format!("it changed {} from {base} to {extended}", at(p))
        }
        (Difference::Changed(p, base, extended), Direction::Remove { .. }) => {
            format!("it changed {} from {extended} to {base}", at(p))
        }
        (Difference::Moved(p), _) => {
            format!("it moved {} (the user's entries keep their order)", at(p))
        }
    }
}

fn difference(
    path: &mut String,
    base: &Value,
    extended: &Value,
    direction: Direction<'_>,
) -> Option<Difference> {
    match (base, extended) {
        (Value::Object(b), Value::Object(e)) => {
            let depth = path.len();
            for (key, b_value) in b {
                push_key(path, key);
                let found = match e.get(key) {
                    None => Some(Difference::Missing(path.clone())),
                    Some(e_value) => difference(path, b_value, e_value, direction),
                };
                if found.is_some() {
                    return found;
                }
                path.truncate(depth);
            }
            for (key, e_value) in e.iter().filter(|(k, _)| !b.contains_key(*k)) {
                if !is_ours(e_value, direction) {
                    push_key(path, key);
                    return Some(Difference::Extra(path.clone()));
                }
            }
            None
        }
        (Value::Array(b), Value::Array(e)) => {
            let depth = path.len();
            let mut j = 0;
            for (i, b_item) in b.iter().enumerate() {
                let _ = write!(path, "[{i}]");
                loop {
                    let Some(e_item) = e.get(j) else {
                        return Some(Difference::Missing(path.clone()));
                    };
                    j += 1;
                    if e_item == b_item {
                        break;
                    }
                    // The same item with drover's entry added inside it (or
                    // drover's own command rewritten)?
                    let here = path.len();
                    let inner = difference(path, b_item, e_item, direction);
                    if inner.is_none() {
                        break;
                    }
                    path.truncate(here);
                    if is_ours(e_item, direction) {
                        continue;
                    }
                    if e[j..].contains(b_item) {
                        return Some(Difference::Moved(path.clone()));
                    }
                    return inner;
                }
                path.truncate(depth);
            }
            match e[j..].iter().position(|item| !is_ours(item, direction)) {
                Some(k) => {
                    let _ = write!(path, "[{}]", j + k);
                    Some(Difference::Extra(path.clone()))
                }
                None => None,
            }
        }
        (b, e) if b == e => None,
        (Value::String(b), Value::String(e)) if relay_moved(b, e, direction) => None,
        (b, e) => Some(Difference::Changed(path.clone(), shown(b), shown(e))),
    }
}

/// An install may rewrite drover's own command when drover moved.
fn relay_moved(old: &str, new: &str, direction: Direction<'_>) -> bool {
    match direction {
        Direction::Install { relay, marker } => old.contains(marker) && is_relay(new, relay),
        Direction::Remove { .. } => false,
    }
}

/// `<relay> <event>` and nothing after it that a shell would run.
fn is_relay(command: &str, relay: &str) -> bool {
    command.strip_prefix(relay).is_some_and(|rest| {
        rest.is_empty()
            || rest.strip_prefix(' ').is_some_and(|event| {
                !event.is_empty()
                    && event
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "._-:'".contains(c))
            })
    })
}

/// Whether a whole subtree is a drover entry: it holds drover's command,
/// its other strings are entry literals, its numbers are timeouts, it has no
/// flags, and every nested container leads to drover's command.
fn is_ours(value: &Value, direction: Direction<'_>) -> bool {
    fn walk(value: &Value, direction: Direction<'_>) -> Option<bool> {
        match value {
            Value::String(s) => {
                let ours = match direction {
                    Direction::Install { relay, .. } => is_relay(s, relay),
                    Direction::Remove { marker } => s.contains(marker),
                };
                if ours {
                    Some(true)
                } else if ENTRY_LITERALS.contains(&s.as_str()) {
                    Some(false)
                } else {
                    None
                }
            }
            Value::Number(_) => Some(false),
            Value::Bool(_) | Value::Null => None,
            Value::Array(items) => {
                let mut holds = false;
                for item in items {
                    let inner = walk(item, direction)?;
                    if (item.is_array() || item.is_object()) && !inner {
                        return None;
                    }
                    holds |= inner;
                }
                holds.then_some(true)
            }
            Value::Object(map) => {
                let mut holds = false;
                for (key, item) in map {
                    if key.len() > 64 {
                        return None;
                    }
                    let inner = walk(item, direction)?;
                    if (item.is_array() || item.is_object()) && !inner {
                        return None;
                    }
                    holds |= inner;
                }
                holds.then_some(true)
            }
        }
    }
    walk(value, direction) == Some(true)
}

/// The path of an added value, down through objects of one key (so the
/// message names `env.ANTHROPIC_BASE_URL`, not just `env`).
fn deepest(path: &mut String, mut value: &Value) -> String {
    while let Value::Object(map) = value
        && map.len() == 1
        && let Some((key, inner)) = map.iter().next()
    {
        push_key(path, key);
        value = inner;
    }
    path.clone()
}

fn push_key(path: &mut String, key: &str) {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c));
    if plain {
        if !path.is_empty() {
            path.push('.');
        }
        path.push_str(key);
    } else {
        let _ = write!(path, "[{}]", serde_json::Value::String(key.to_string()));
    }
}

/// A value as JSON, cut to 80 characters for a message.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 80 {
        format!("{}…", text.chars().take(80).collect::<String>())
    } else {
        text
    }
}

#[cfg(test)]
mod tests;
