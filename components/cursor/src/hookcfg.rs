//! The `cursor-hooks-json` dialect: Cursor's `.cursor/hooks.json`,
//! `{"version": 1, "hooks": {"stop": [{"command": "…", "timeout": 60}]}}`.
//!
//! The kit's flat (Copilot) layout with Cursor's handler keys: a handler is
//! a command hook by default (no `type`), and its timeout key is `timeout`
//! in seconds (Cursor docs and hooks.json files in the wild); the kit's
//! `hookcfg` edits it. This module only refuses the other dialects, which
//! the kit would edit too. The kit's guarantees hold: user content (keys,
//! handlers, order, indentation) is kept; installing twice changes nothing;
//! a moved drover is rewritten in place; malformed files are
//! `invalid-input` errors saying where; removal leaves the user's meaning,
//! and a file left with only drover's scaffolding becomes empty text (the
//! engine deletes it).

use drover_kit::{
    AdapterError, HookEdit, HookEditor, HookInstall, HookStatus, hookcfg, unsupported,
};

/// This module's install, remove and detect, for `Adapter::HOOK_EDITOR`.
pub const EDITOR: HookEditor = HookEditor {
    install,
    remove,
    detect,
};

pub const DIALECT: &str = "cursor-hooks-json";

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

/// Adds drover's relay under every mapped native event.
pub fn install(existing: &str, request: &HookInstall) -> Result<HookEdit, AdapterError> {
    check_dialect(request)?;
    hookcfg::install(existing, request)
}

/// Removes every drover handler, under any event. Lists that only held
/// drover's handlers go too; when nothing but `version: 1` is left the text
/// is empty.
pub fn remove(existing: &str, request: &HookInstall) -> Result<HookEdit, AdapterError> {
    check_dialect(request)?;
    hookcfg::remove(existing, request)
}

/// Which mapped native events carry drover's relay.
pub fn detect(existing: &str, request: &HookInstall) -> Result<HookStatus, AdapterError> {
    check_dialect(request)?;
    hookcfg::detect(existing, request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

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
