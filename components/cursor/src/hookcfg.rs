//! The `cursor-hooks-json` dialect: Cursor's `.cursor/hooks.json`,
//! `{"version": 1, "hooks": {"stop": [{"command": "…", "timeout": 60}]}}`.
//!
//! It is the kit's Copilot ("flat") layout with Cursor's handler keys: a
//! handler is a command hook by default (no `type`), and its timeout key is
//! `timeout` in seconds (Cursor docs and hooks.json files in the wild), where
//! the kit's copilot dialect writes `"type":"command"` and `timeoutSec`.
//! Same guarantees as the kit: user content (keys, handlers, order,
//! indentation) is kept; installing twice changes nothing; a moved drover is
//! rewritten in place; malformed files are `invalid-input` errors saying
//! where; removal leaves the user's meaning, and a file left with only
//! drover's scaffolding becomes empty text (the engine deletes it).

use drover_kit::{
    AdapterError, HookEdit, HookEditor, HookInstall, HookStatus, invalid, unsupported,
};
use serde_json::{Map, Value, json};

/// This module's install, remove and detect, for `Adapter::HOOK_EDITOR`.
pub const EDITOR: HookEditor = HookEditor {
    install,
    remove,
    detect,
};

pub const DIALECT: &str = "cursor-hooks-json";

/// Seconds Cursor waits for the relay.
const TIMEOUT_SECS: u64 = 60;

fn check_dialect(request: &HookInstall) -> Result<(), AdapterError> {
    if request.dialect == DIALECT {
        Ok(())
    } else {
        Err(unsupported(format!(
            "unknown hook dialect '{}' (this adapter writes {DIALECT})",
            request.dialect
        )))
    }
}

/// Quotes a word for a POSIX shell when it needs it.
fn shell_word(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./:=@%+,".contains(&b));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

fn relay_command(request: &HookInstall, native: &str) -> String {
    format!("{} {}", request.relay_command, shell_word(native))
}

fn is_ours(handler: &Value, marker: &str) -> bool {
    matches!(handler.get("command"), Some(Value::String(c)) if c.contains(marker))
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

/// The `hooks` object, created when asked to.
fn hooks_mut(
    root: &mut Map<String, Value>,
    create: bool,
) -> Result<Option<&mut Map<String, Value>>, AdapterError> {
    if create && !root.contains_key("hooks") {
        root.insert("hooks".to_string(), Value::Object(Map::new()));
    }
    match root.get_mut("hooks") {
        None => Ok(None),
        Some(Value::Object(map)) => Ok(Some(map)),
        Some(other) => Err(invalid(format!(
            "`hooks` is a {}, expected an object of event lists",
            kind(other)
        ))),
    }
}

fn event_list<'a>(
    hooks: &'a mut Map<String, Value>,
    native: &str,
) -> Result<&'a mut Vec<Value>, AdapterError> {
    match hooks
        .entry(native.to_string())
        .or_insert_with(|| Value::Array(Vec::new()))
    {
        Value::Array(list) => Ok(list),
        other => Err(invalid(format!(
            "`hooks.{native}` is a {}, expected an array",
            kind(other)
        ))),
    }
}

/// Adds drover's relay under every mapped native event.
pub fn install(existing: &str, request: &HookInstall) -> Result<HookEdit, AdapterError> {
    check_dialect(request)?;
    let mut document = parse_document(existing)?;
    let mut changed = false;
    if !document.root.contains_key("version") {
        document.root.insert("version".to_string(), json!(1));
        changed = true;
    }
    let hooks =
        hooks_mut(&mut document.root, true)?.ok_or_else(|| invalid("the hooks object vanished"))?;
    for (native, _) in &request.events {
        let command = relay_command(request, native);
        let list = event_list(hooks, native)?;
        let mut found = false;
        for handler in list.iter_mut().filter(|h| is_ours(h, &request.marker)) {
            found = true;
            if handler.get("command").and_then(Value::as_str) != Some(command.as_str()) {
                handler["command"] = Value::String(command.clone());
                changed = true;
            }
        }
        if !found {
            list.push(json!({"command": command, "timeout": TIMEOUT_SECS}));
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

/// Removes every drover handler, under any event. Lists that only held
/// drover's handlers go too; when nothing but `version: 1` is left the text
/// is empty.
pub fn remove(existing: &str, request: &HookInstall) -> Result<HookEdit, AdapterError> {
    check_dialect(request)?;
    let mut document = parse_document(existing)?;
    let mut changed = false;
    if let Some(hooks) = hooks_mut(&mut document.root, false)? {
        let events: Vec<String> = hooks.keys().cloned().collect();
        for native in events {
            let Some(Value::Array(list)) = hooks.get_mut(&native) else {
                continue;
            };
            let before = list.len();
            list.retain(|h| !is_ours(h, &request.marker));
            if list.len() != before {
                changed = true;
                if list.is_empty() {
                    hooks.remove(&native);
                }
            }
        }
        if changed && hooks.is_empty() {
            document.root.remove("hooks");
        }
    }
    if !changed {
        return Ok(HookEdit {
            text: existing.to_string(),
            changed: false,
        });
    }
    let only_scaffolding = document.root.is_empty()
        || (document.root.len() == 1 && document.root.get("version") == Some(&json!(1)));
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
    check_dialect(request)?;
    let mut document = parse_document(existing)?;
    let hooks = hooks_mut(&mut document.root, false)?;
    let mut status = HookStatus {
        registered: Vec::new(),
        missing: Vec::new(),
    };
    for (native, _) in &request.events {
        let present = match hooks.as_ref().and_then(|h| h.get(native)) {
            Some(Value::Array(list)) => list.iter().any(|h| is_ours(h, &request.marker)),
            Some(other) => {
                return Err(invalid(format!(
                    "`hooks.{native}` is a {}, expected an array",
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

#[cfg(test)]
mod tests {
    use super::*;

    fn request(events: &[&str]) -> HookInstall {
        HookInstall {
            dialect: DIALECT.to_string(),
            relay_command: "/opt/bin/drover hook --cli cursor".to_string(),
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

    // A user's hooks.json in the documented shape (fixtures/README.md).
    const USER: &str = include_str!("../fixtures/hooks.user.json");

    #[test]
    fn writes_cursors_shape() {
        let edit = install("", &request(&["stop"])).expect("installs");
        assert!(edit.changed);
        assert_eq!(
            parsed(&edit.text),
            json!({"version": 1, "hooks": {"stop": [{"command": "/opt/bin/drover hook --cli cursor stop", "timeout": 60}]}})
        );
    }

    #[test]
    fn install_keeps_user_content_and_is_idempotent() {
        let req = request(&["stop", "sessionStart"]);
        let first = install(USER, &req).expect("installs");
        assert!(first.changed);
        assert!(
            first.text.starts_with("{\n    \"version\": 1"),
            "indent and key order kept: {}",
            first.text
        );
        let value = parsed(&first.text);
        assert_eq!(
            value["hooks"]["stop"][0],
            json!({"command": ".cursor/hooks/on-stop.sh", "loop_limit": 5})
        );
        assert_eq!(
            value["hooks"]["stop"][1]["command"],
            "/opt/bin/drover hook --cli cursor stop"
        );
        assert_eq!(
            value["hooks"]["beforeShellExecution"],
            parsed(USER)["hooks"]["beforeShellExecution"]
        );
        assert_eq!(
            value["hooks"]["sessionStart"][0]["command"],
            "/opt/bin/drover hook --cli cursor sessionStart"
        );
        let second = install(&first.text, &req).expect("installs again");
        assert!(!second.changed);
        assert_eq!(second.text, first.text);
    }

    #[test]
    fn a_moved_drover_is_rewritten_not_duplicated() {
        let req = request(&["stop"]);
        let first = install("", &req).expect("installs");
        let mut moved = req.clone();
        moved.relay_command = "/new/drover hook --cli cursor".to_string();
        let second = install(&first.text, &moved).expect("rewrites");
        assert!(second.changed);
        let value = parsed(&second.text);
        assert_eq!(value["hooks"]["stop"].as_array().map(Vec::len), Some(1));
        assert_eq!(
            value["hooks"]["stop"][0]["command"],
            "/new/drover hook --cli cursor stop"
        );
        assert_eq!(value["hooks"]["stop"][0]["timeout"], 60);
    }

    #[test]
    fn remove_restores_the_users_meaning() {
        let req = request(&["stop", "sessionStart", "sessionEnd"]);
        let installed = install(USER, &req).expect("installs");
        let removed = remove(&installed.text, &req).expect("removes");
        assert!(removed.changed);
        assert_eq!(parsed(&removed.text), parsed(USER));
        let again = remove(&removed.text, &req).expect("removes nothing");
        assert!(!again.changed);
        assert_eq!(again.text, removed.text);
        // A drover-only file empties; a version the user wrote differently stays.
        let only = install("", &req).expect("installs");
        assert_eq!(remove(&only.text, &req).expect("removes").text, "");
        let v2 = r#"{"version": 2, "hooks": {"stop": [{"command": "/opt/bin/drover hook --cli cursor stop"}]}}"#;
        assert_eq!(
            parsed(&remove(v2, &req).expect("removes").text),
            json!({"version": 2})
        );
    }

    #[test]
    fn detect_reports_registered_and_missing() {
        let req = request(&["stop", "sessionStart"]);
        let partial = install(USER, &request(&["stop"])).expect("installs");
        let status = detect(&partial.text, &req).expect("detects");
        assert_eq!(
            (status.registered, status.missing),
            (vec!["stop".to_string()], vec!["sessionStart".to_string()])
        );
        let unrelated =
            r#"{"version":1,"hooks":{"stop":[{"command":"/home/me/drover_fork/notify"}]}}"#;
        assert!(
            detect(unrelated, &req)
                .expect("detects")
                .registered
                .is_empty()
        );
        assert_eq!(detect("", &req).expect("detects").missing.len(), 2);
    }

    #[test]
    fn malformed_files_are_errors_that_say_where() {
        let req = request(&["stop"]);
        let cases = [
            ("{\"hooks\": {", "not valid JSON (line 1"),
            ("[]", "top level is a JSON array, expected an object"),
            ("{\"hooks\": []}", "`hooks` is a array"),
            (
                "{\"hooks\": {\"stop\": {}}}",
                "`hooks.stop` is a object, expected an array",
            ),
        ];
        for (text, expected) in cases {
            for result in [
                install(text, &req).map(|_| ()),
                detect(text, &req).map(|_| ()),
            ] {
                match result {
                    Err(AdapterError::InvalidInput(m)) if m.contains(expected) => {}
                    other => panic!("{text}: {other:?}"),
                }
            }
        }
        for (text, expected) in &cases[..3] {
            assert!(
                matches!(remove(text, &req), Err(AdapterError::InvalidInput(m)) if m.contains(expected)),
                "{text}"
            );
        }
        // An event value remove() has no reason to touch is left alone, and a
        // handler whose command is not a string is not drover's.
        assert!(!remove(cases[3].0, &req).expect("tolerated").changed);
        let null_command = r#"{"version":1,"hooks":{"stop":[{"command":null}]}}"#;
        assert!(install(null_command, &req).expect("tolerated").changed);
    }

    #[test]
    fn other_dialects_are_unsupported() {
        let mut req = request(&["stop"]);
        req.dialect = "copilot-settings-json".to_string();
        assert!(matches!(
            install("", &req),
            Err(AdapterError::Unsupported(_))
        ));
        assert!(matches!(
            remove("", &req),
            Err(AdapterError::Unsupported(_))
        ));
        assert!(matches!(
            detect("", &req),
            Err(AdapterError::Unsupported(_))
        ));
    }
}
