//! Hook-config editing for every dialect: install, remove and detect
//! drover's relay entries in a CLI's JSON settings text.
//!
//! Everything that is not drover's is kept: unknown keys, the user's own
//! handlers (in their order), key order and the file's indentation. An entry
//! is drover's when its `command` contains the request's marker.

use serde_json::{Map, Value, json};

use crate::{AdapterError, HookEdit, HookEditor, HookInstall, HookStatus, invalid, unsupported};

/// This module's install, remove and detect, for `Adapter::HOOK_EDITOR`.
pub const JSON: HookEditor = HookEditor {
    install,
    remove,
    detect,
};

/// The dialects this module knows.
pub const DIALECTS: &[&str] = &[
    "claude-settings-json",
    "codex-hooks-json",
    "gemini-settings-json",
    "copilot-settings-json",
    "antigravity-hooks-json",
    "grok-hooks-json",
    "cursor-hooks-json",
    "muse-hooks-json",
];

/// How a dialect lays out its handlers.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Shape {
    /// `{"hooks": {Event: [{"hooks": [handler]}]}}` (Claude, Codex, Qwen, Grok).
    Grouped,
    /// Grouped, with `"matcher": ""` and a timeout in milliseconds (Gemini).
    GroupedWithMatcher,
    /// `{"version": 1, "hooks": {event: [handler]}}`, seconds in `timeoutSec` (Copilot).
    Flat,
    /// Flat, with handlers that are commands by default (no `type`) and
    /// seconds in `timeout` (Cursor).
    FlatUntyped,
    /// `{"drover": {Event: [handler]}}`: agy keys files by hook group.
    GroupKeyed,
}

impl Shape {
    /// The flat shapes carry a `"version": 1` drover adds when it is missing.
    fn is_flat(self) -> bool {
        matches!(self, Shape::Flat | Shape::FlatUntyped)
    }
}

fn shape_of(dialect: &str) -> Result<Shape, AdapterError> {
    match dialect {
        "claude-settings-json" | "codex-hooks-json" | "grok-hooks-json" | "muse-hooks-json" => {
            Ok(Shape::Grouped)
        }
        "gemini-settings-json" => Ok(Shape::GroupedWithMatcher),
        "copilot-settings-json" => Ok(Shape::Flat),
        "cursor-hooks-json" => Ok(Shape::FlatUntyped),
        "antigravity-hooks-json" => Ok(Shape::GroupKeyed),
        other => Err(unsupported(format!("unknown hook dialect '{other}'"))),
    }
}

/// The top-level key that holds the event map.
fn container_key(shape: Shape) -> &'static str {
    match shape {
        Shape::GroupKeyed => "drover",
        _ => "hooks",
    }
}

fn handler(shape: Shape, command: String) -> Value {
    match shape {
        Shape::Grouped => json!({"type": "command", "command": command}),
        Shape::GroupedWithMatcher => {
            json!({"type": "command", "name": "drover", "command": command, "timeout": 60000})
        }
        Shape::Flat => json!({"type": "command", "command": command, "timeoutSec": 60}),
        Shape::FlatUntyped => json!({"command": command, "timeout": 60}),
        Shape::GroupKeyed => json!({"type": "command", "command": command, "timeout": 60}),
    }
}

fn entry(shape: Shape, command: String) -> Value {
    match shape {
        Shape::Grouped => json!({"hooks": [handler(shape, command)]}),
        Shape::GroupedWithMatcher => json!({"matcher": "", "hooks": [handler(shape, command)]}),
        Shape::Flat | Shape::FlatUntyped | Shape::GroupKeyed => handler(shape, command),
    }
}

fn relay_command(request: &HookInstall, native: &str) -> String {
    format!("{} {}", request.relay_command, crate::shell::word(native))
}

fn is_ours(handler: &Value, marker: &str) -> bool {
    matches!(handler.get("command"), Some(Value::String(c)) if c.contains(marker))
}

/// The handlers inside one event-list element, whatever the shape.
fn handlers_of(shape: Shape, element: &Value) -> Vec<&Value> {
    match shape {
        Shape::Grouped | Shape::GroupedWithMatcher => match element.get("hooks") {
            Some(Value::Array(handlers)) => handlers.iter().collect(),
            _ => Vec::new(),
        },
        Shape::Flat | Shape::FlatUntyped | Shape::GroupKeyed => vec![element],
    }
}

struct Document {
    root: Map<String, Value>,
    indent: Vec<u8>,
}

fn parse_document(existing: &str) -> Result<Document, AdapterError> {
    if existing.trim().is_empty() {
        return Ok(Document {
            root: Map::new(),
            indent: b"  ".to_vec(),
        });
    }
    let value: Value = serde_json::from_str(existing).map_err(|e| {
        invalid(format!(
            "not valid JSON (line {}, column {}): {e}",
            e.line(),
            e.column()
        ))
    })?;
    match value {
        Value::Object(root) => Ok(Document {
            root,
            indent: detect_indent(existing),
        }),
        other => Err(invalid(format!(
            "the top level is a JSON {}, expected an object",
            kind(&other)
        ))),
    }
}

/// The indentation unit of the first indented line (two spaces by default).
fn detect_indent(text: &str) -> Vec<u8> {
    for line in text.lines().skip(1) {
        let width = line.len() - line.trim_start_matches([' ', '\t']).len();
        if width > 0 && !line.trim().is_empty() {
            return line.as_bytes()[..width].to_vec();
        }
    }
    b"  ".to_vec()
}

fn render(document: &Document) -> Result<String, AdapterError> {
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(&document.indent);
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    serde::Serialize::serialize(&document.root, &mut serializer)
        .map_err(|e| invalid(format!("cannot serialize the edited config: {e}")))?;
    out.push(b'\n');
    String::from_utf8(out).map_err(|e| invalid(format!("edited config is not UTF-8: {e}")))
}

fn container_mut(
    root: &mut Map<String, Value>,
    shape: Shape,
    create: bool,
) -> Result<Option<&mut Map<String, Value>>, AdapterError> {
    let key = container_key(shape);
    if !root.contains_key(key) {
        if !create {
            return Ok(None);
        }
        root.insert(key.to_string(), Value::Object(Map::new()));
    }
    match root.get_mut(key) {
        Some(Value::Object(map)) => Ok(Some(map)),
        Some(other) => Err(invalid(format!(
            "`{key}` is a {}, expected an object of event lists",
            kind(other)
        ))),
        None => Ok(None),
    }
}

fn event_list<'a>(
    container: &'a mut Map<String, Value>,
    shape: Shape,
    native: &str,
) -> Result<&'a mut Vec<Value>, AdapterError> {
    let value = container
        .entry(native.to_string())
        .or_insert_with(|| Value::Array(Vec::new()));
    match value {
        Value::Array(list) => Ok(list),
        other => Err(invalid(format!(
            "`{}.{native}` is a {}, expected an array",
            container_key(shape),
            kind(other)
        ))),
    }
}

/// Adds drover's relay under every mapped native event. An existing drover
/// entry whose command differs (drover moved) is rewritten in place.
pub fn install(existing: &str, request: &HookInstall) -> Result<HookEdit, AdapterError> {
    let shape = shape_of(&request.dialect)?;
    let mut document = parse_document(existing)?;
    let mut changed = false;
    if shape.is_flat() && !document.root.contains_key("version") {
        document.root.insert("version".to_string(), json!(1));
        changed = true;
    }
    let container = container_mut(&mut document.root, shape, true)?
        .ok_or_else(|| invalid("hook container vanished"))?;
    for (native, _) in &request.events {
        let command = relay_command(request, native);
        let list = event_list(container, shape, native)?;
        let mut found = false;
        for element in list.iter_mut() {
            for handler in handlers_mut(shape, element) {
                if is_ours(handler, &request.marker) {
                    found = true;
                    if handler.get("command").and_then(Value::as_str) != Some(command.as_str()) {
                        handler["command"] = Value::String(command.clone());
                        changed = true;
                    }
                }
            }
        }
        if !found {
            list.push(entry(shape, command));
            changed = true;
        }
    }
    if !changed {
        return Ok(HookEdit {
            text: existing.to_string(),
            changed: false,
        });
    }
    Ok(HookEdit {
        text: render(&document)?,
        changed: true,
    })
}

fn handlers_mut(shape: Shape, element: &mut Value) -> Vec<&mut Value> {
    match shape {
        Shape::Grouped | Shape::GroupedWithMatcher => match element.get_mut("hooks") {
            Some(Value::Array(handlers)) => handlers.iter_mut().collect(),
            _ => Vec::new(),
        },
        Shape::Flat | Shape::FlatUntyped | Shape::GroupKeyed => vec![element],
    }
}

/// Removes every drover entry, under any event. Groups and event lists that
/// only held drover's entries go too. When nothing but drover's scaffolding
/// is left the text is empty: the engine then deletes the file.
pub fn remove(existing: &str, request: &HookInstall) -> Result<HookEdit, AdapterError> {
    let shape = shape_of(&request.dialect)?;
    let mut document = parse_document(existing)?;
    let mut changed = false;
    let key = container_key(shape);
    if let Some(container) = container_mut(&mut document.root, shape, false)? {
        let events: Vec<String> = container.keys().cloned().collect();
        for native in events {
            let Some(Value::Array(list)) = container.get_mut(&native) else {
                continue;
            };
            let before = list.len();
            let mut touched = false;
            list.retain_mut(|element| match shape {
                Shape::Grouped | Shape::GroupedWithMatcher => {
                    if let Some(Value::Array(handlers)) = element.get_mut("hooks") {
                        let n = handlers.len();
                        handlers.retain(|h| !is_ours(h, &request.marker));
                        if handlers.len() != n {
                            touched = true;
                            return !handlers.is_empty();
                        }
                    }
                    true
                }
                Shape::Flat | Shape::FlatUntyped | Shape::GroupKeyed => {
                    !is_ours(element, &request.marker)
                }
            });
            if touched || list.len() != before {
                changed = true;
                if list.is_empty() {
                    container.remove(&native);
                }
            }
        }
        if changed && container.is_empty() {
            document.root.remove(key);
        }
    }
    if !changed {
        return Ok(HookEdit {
            text: existing.to_string(),
            changed: false,
        });
    }
    let only_scaffolding = document.root.is_empty()
        || (shape.is_flat()
            && document.root.len() == 1
            && document.root.get("version") == Some(&json!(1)));
    let text = if only_scaffolding {
        String::new()
    } else {
        render(&document)?
    };
    Ok(HookEdit {
        text,
        changed: true,
    })
}

/// Which mapped native events carry drover's relay.
pub fn detect(existing: &str, request: &HookInstall) -> Result<HookStatus, AdapterError> {
    let shape = shape_of(&request.dialect)?;
    let mut document = parse_document(existing)?;
    let container = container_mut(&mut document.root, shape, false)?;
    let mut status = HookStatus {
        registered: Vec::new(),
        missing: Vec::new(),
    };
    for (native, _) in &request.events {
        let present = match container.as_ref().and_then(|c| c.get(native)) {
            Some(Value::Array(list)) => list.iter().any(|element| {
                handlers_of(shape, element)
                    .iter()
                    .any(|h| is_ours(h, &request.marker))
            }),
            Some(other) => {
                return Err(invalid(format!(
                    "`{}.{native}` is a {}, expected an array",
                    container_key(shape),
                    kind(other)
                )));
            }
            None => false,
        };
        if present {
            status.registered.push(native.clone());
        } else {
            status.missing.push(native.clone());
        }
    }
    Ok(status)
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(dialect: &str, events: &[&str]) -> HookInstall {
        HookInstall {
            dialect: dialect.to_string(),
            relay_command: "/opt/bin/drover hook --cli x".to_string(),
            events: events
                .iter()
                .map(|e| (e.to_string(), "Stop".to_string()))
                .collect(),
            marker: "drover hook".to_string(),
        }
    }

    fn parsed(text: &str) -> Value {
        serde_json::from_str(text).expect("valid JSON")
    }

    #[test]
    fn each_dialect_writes_its_own_shape() {
        let claude = install("", &request("claude-settings-json", &["Stop"])).expect("installs");
        assert_eq!(
            parsed(&claude.text),
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/opt/bin/drover hook --cli x Stop"}]}]}})
        );
        let gemini =
            install("", &request("gemini-settings-json", &["AfterAgent"])).expect("installs");
        assert_eq!(
            parsed(&gemini.text),
            json!({"hooks": {"AfterAgent": [{"matcher": "", "hooks": [{"type": "command", "name": "drover", "command": "/opt/bin/drover hook --cli x AfterAgent", "timeout": 60000}]}]}})
        );
        let copilot =
            install("", &request("copilot-settings-json", &["agentStop"])).expect("installs");
        assert_eq!(
            parsed(&copilot.text),
            json!({"version": 1, "hooks": {"agentStop": [{"type": "command", "command": "/opt/bin/drover hook --cli x agentStop", "timeoutSec": 60}]}})
        );
        let agy = install("", &request("antigravity-hooks-json", &["Stop"])).expect("installs");
        assert_eq!(
            parsed(&agy.text),
            json!({"drover": {"Stop": [{"type": "command", "command": "/opt/bin/drover hook --cli x Stop", "timeout": 60}]}})
        );
    }

    #[test]
    fn install_keeps_user_content_and_is_idempotent() {
        let user = "{\n    \"permissions\": {\"allow\": [\"Bash\"]},\n    \"hooks\": {\n        \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}]\n    }\n}\n";
        let req = request("claude-settings-json", &["Stop", "SessionStart"]);
        let first = install(user, &req).expect("installs");
        assert!(first.changed);
        assert!(
            first.text.starts_with("{\n    \"permissions\""),
            "indent kept: {}",
            first.text
        );
        let value = parsed(&first.text);
        assert_eq!(value["permissions"], json!({"allow": ["Bash"]}));
        assert_eq!(
            value["hooks"]["Stop"][0]["hooks"][0]["command"],
            "notify-send done"
        );
        assert_eq!(
            value["hooks"]["Stop"][1]["hooks"][0]["command"],
            "/opt/bin/drover hook --cli x Stop"
        );
        let second = install(&first.text, &req).expect("installs again");
        assert!(!second.changed);
        assert_eq!(second.text, first.text);
    }

    #[test]
    fn a_moved_drover_is_rewritten_not_duplicated() {
        let req = request("codex-hooks-json", &["Stop"]);
        let first = install("", &req).expect("installs");
        let mut moved = req.clone();
        moved.relay_command = "/new/drover hook --cli x".to_string();
        let second = install(&first.text, &moved).expect("rewrites");
        assert!(second.changed);
        let value = parsed(&second.text);
        assert_eq!(value["hooks"]["Stop"].as_array().map(Vec::len), Some(1));
        assert_eq!(
            value["hooks"]["Stop"][0]["hooks"][0]["command"],
            "/new/drover hook --cli x Stop"
        );
    }

    #[test]
    fn remove_restores_the_users_meaning() {
        for dialect in DIALECTS {
            let user = match *dialect {
                "antigravity-hooks-json" => {
                    json!({"lint-checker": {"Stop": [{"type": "command", "command": "lint"}]}})
                }
                "copilot-settings-json" | "cursor-hooks-json" => {
                    json!({"version": 1, "hooks": {"agentStop": [{"type": "command", "command": "mine"}]}})
                }
                _ => {
                    json!({"theme": "dark", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}})
                }
            };
            let text = serde_json::to_string_pretty(&user).expect("serializes");
            let req = request(dialect, &["Stop", "agentStop", "SessionEnd"]);
            let installed = install(&text, &req).expect("installs");
            assert!(installed.changed, "{dialect}");
            let removed = remove(&installed.text, &req).expect("removes");
            assert!(removed.changed, "{dialect}");
            assert_eq!(parsed(&removed.text), user, "{dialect}");
            let again = remove(&removed.text, &req).expect("removes nothing");
            assert!(!again.changed, "{dialect}");
        }
    }

    #[test]
    fn removing_from_a_drover_only_file_empties_it() {
        for dialect in DIALECTS {
            let req = request(dialect, &["Stop"]);
            let installed = install("", &req).expect("installs");
            let removed = remove(&installed.text, &req).expect("removes");
            assert_eq!(removed.text, "", "{dialect}");
        }
    }

    #[test]
    fn detect_reports_registered_and_missing() {
        let req = request("gemini-settings-json", &["AfterAgent", "SessionStart"]);
        let partial =
            install("", &request("gemini-settings-json", &["AfterAgent"])).expect("installs");
        let status = detect(&partial.text, &req).expect("detects");
        assert_eq!(status.registered, ["AfterAgent"]);
        assert_eq!(status.missing, ["SessionStart"]);
        let unrelated = r#"{"hooks": {"AfterAgent": [{"hooks": [{"command": "/home/me/drover_fork/notify"}]}]}}"#;
        assert_eq!(
            detect(unrelated, &req).expect("detects").registered,
            Vec::<String>::new()
        );
    }

    #[test]
    fn malformed_files_are_errors_that_say_where() {
        let req = request("claude-settings-json", &["Stop"]);
        let cases = [
            ("{\"hooks\": {", "not valid JSON (line 1"),
            ("[]", "top level is a JSON array, expected an object"),
            ("{\"hooks\": []}", "`hooks` is a array"),
            (
                "{\"hooks\": {\"Stop\": {}}}",
                "`hooks.Stop` is a object, expected an array",
            ),
        ];
        for (text, expected) in cases {
            match install(text, &req) {
                Err(AdapterError::InvalidInput(m)) if m.contains(expected) => {}
                other => panic!("install {text}: {other:?}"),
            }
        }
        for (text, expected) in &cases[..3] {
            match remove(text, &req) {
                Err(AdapterError::InvalidInput(m)) if m.contains(expected) => {}
                other => panic!("remove {text}: {other:?}"),
            }
        }
        // An event value remove() has no reason to touch is left alone.
        let untouched = remove(cases[3].0, &req).expect("tolerated");
        assert!(!untouched.changed);
        let handler_null =
            r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": null}]}]}}"#;
        assert!(
            install(handler_null, &req)
                .expect("null command tolerated")
                .changed
        );
    }

    #[test]
    fn unknown_dialect_is_unsupported() {
        assert!(matches!(
            install("", &request("vim-rc", &["Stop"])),
            Err(AdapterError::Unsupported(_))
        ));
    }
}
