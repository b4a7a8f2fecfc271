//! Relayed opencode bus events → canonical events.
//!
//! drover's plugin (see `plugin.rs`) sends `{"type", "properties",
//! "session_id", "cwd"[, "subagent": true]}`. The session id comes from
//! `properties.sessionID` (`session.idle`, `session.error`,
//! `permission.*`) or `properties.info.id` (`session.created`); the plugin
//! copies it to `session_id`, and this module falls back to the nested
//! fields for payloads relayed some other way.

use drover_kit::payload::Payload;
use drover_kit::{AdapterError, CanonicalEvent, HookEvent, Profile, PromptKind, mapped_kind};
use serde_json::Value;

fn native_kind(native: &str) -> CanonicalEvent {
    match native {
        "session.created" => CanonicalEvent::SessionStart,
        "session.idle" => CanonicalEvent::Stop,
        "session.error" => CanonicalEvent::StopFailure,
        "session.deleted" => CanonicalEvent::SessionEnd,
        "permission.asked" | "permission.updated" => CanonicalEvent::PermissionRequest,
        "question.asked" => CanonicalEvent::Notification,
        _ => CanonicalEvent::Other,
    }
}

/// Reads `properties.<path>` as a non-empty string, noting the key it used.
fn nested(payload: &Payload, path: &[&str], found: &mut Vec<String>) -> Option<String> {
    let mut value = payload.get("properties")?;
    for key in path {
        value = value.get(key)?;
    }
    let text = value.as_str().filter(|s| !s.is_empty())?;
    found.push(format!("properties.{}", path.join(".")));
    Some(text.to_string())
}

/// `NamedError` `{name, data: {message}}` as "name: message" (either alone
/// when the other is missing); a bare string error as itself.
fn error_text(payload: &Payload, found: &mut Vec<String>) -> Option<String> {
    let error = payload.get("properties")?.get("error")?;
    found.push("properties.error".to_string());
    if let Value::String(s) = error {
        return Some(s.clone()).filter(|s| !s.is_empty());
    }
    let name = error
        .get("name")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    let message = error
        .get("data")
        .and_then(|d| d.get("message"))
        .or_else(|| error.get("message"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty());
    match (name, message) {
        (Some(n), Some(m)) => Some(format!("{n}: {m}")),
        (Some(one), None) | (None, Some(one)) => Some(one.to_string()),
        (None, None) => None,
    }
}

pub fn parse(profile: &Profile, native: &str, bytes: &[u8]) -> Result<HookEvent, AdapterError> {
    let mut payload = Payload::parse(bytes)?;
    let kind = mapped_kind(profile, native).unwrap_or_else(|| native_kind(native));
    let mut event = HookEvent::new(kind, native);
    let mut found = Vec::new();
    event.session_id = payload
        .session_id()
        .or_else(|| nested(&payload, &["sessionID"], &mut found))
        .or_else(|| nested(&payload, &["info", "id"], &mut found));
    event.cwd = payload.cwd();
    // `info` is a session only on session events: on `message.updated` it is
    // the message, whose `parentID` names the user message it answers.
    let child = native.starts_with("session.")
        && nested(&payload, &["info", "parentID"], &mut found).is_some();
    event.subagent = payload.flag(&["subagent"]) == Some(true) || child;
    match kind {
        CanonicalEvent::StopFailure => {
            event.reason = error_text(&payload, &mut found);
        }
        CanonicalEvent::PermissionRequest => {
            event.prompt_kind = Some(PromptKind::Permission);
            // 1.x `permission.asked` names the permission; the older
            // `permission.updated` carries a type and a title.
            event.reason = nested(&payload, &["permission"], &mut found)
                .or_else(|| nested(&payload, &["type"], &mut found))
                .or_else(|| nested(&payload, &["title"], &mut found));
        }
        CanonicalEvent::Notification if native == "question.asked" => {
            event.prompt_kind = Some(PromptKind::Question);
            event.reason = Some("question".to_string());
        }
        _ => {}
    }
    let mut fields = payload.fields_found();
    for key in found {
        if !fields.contains(&key) {
            fields.push(key);
        }
    }
    event.fields_found = fields;
    Ok(event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;

    const IDLE: &str = include_str!("../fixtures/hook-session-idle.json");
    const CREATED: &str = include_str!("../fixtures/hook-session-created.json");

    #[test]
    fn idle_is_the_turn_end() {
        let e = parse(&profile(), "session.idle", IDLE.as_bytes()).expect("parses");
        assert_eq!(e.kind, CanonicalEvent::Stop);
        assert_eq!(
            e.session_id.as_deref(),
            Some("ses_3a1f0c2b7ffeAbCdEfGhIjKlMn")
        );
        assert_eq!(e.cwd.as_deref(), Some("/tmp/t/work/opencode"));
        assert_eq!(
            (e.transcript_path, e.last_message, e.subagent),
            (None, None, false)
        );
        assert_eq!(e.fields_found, ["session_id", "cwd"]);
    }

    #[test]
    fn created_reads_the_id_from_info_and_marks_children() {
        let e = parse(&profile(), "session.created", CREATED.as_bytes()).expect("parses");
        assert_eq!(
            (e.kind, e.session_id.as_deref()),
            (
                CanonicalEvent::SessionStart,
                Some("ses_3a1f0c2b7ffeAbCdEfGhIjKlMn")
            )
        );
        assert!(!e.subagent);
        let raw = r#"{"type":"session.created","properties":{"info":{"id":"ses_child","parentID":"ses_parent","title":"Explore"}}}"#;
        let child = parse(&profile(), "session.created", raw.as_bytes()).expect("parses");
        assert_eq!(child.session_id.as_deref(), Some("ses_child"));
        assert!(child.subagent);
        assert_eq!(
            child.fields_found,
            ["properties.info.id", "properties.info.parentID"]
        );
        let flagged = parse(
            &profile(),
            "session.idle",
            br#"{"session_id":"ses_c","subagent":true}"#,
        )
        .expect("parses");
        assert!(flagged.subagent);
    }

    #[test]
    fn errors_and_permissions() {
        let error = r#"{"type":"session.error","properties":{"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"Rate limit reached for requests","statusCode":429,"isRetryable":true}}},"session_id":"ses_1"}"#;
        let e = parse(&profile(), "session.error", error.as_bytes()).expect("parses");
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (
                CanonicalEvent::StopFailure,
                Some("APIError: Rate limit reached for requests")
            )
        );
        let bare = parse(
            &profile(),
            "session.error",
            br#"{"properties":{"sessionID":"ses_2","error":{"name":"MessageAbortedError"}}}"#,
        )
        .expect("parses");
        assert_eq!(
            (bare.session_id.as_deref(), bare.reason.as_deref()),
            (Some("ses_2"), Some("MessageAbortedError"))
        );
        let asked = r#"{"type":"permission.asked","properties":{"id":"per_1","sessionID":"ses_1","permission":"bash","patterns":["rm -rf build"],"always":["rm *"],"metadata":{}},"session_id":"ses_1"}"#;
        let e = parse(&profile(), "permission.asked", asked.as_bytes()).expect("parses");
        assert_eq!(
            (e.kind, e.prompt_kind, e.reason.as_deref()),
            (
                CanonicalEvent::PermissionRequest,
                Some(PromptKind::Permission),
                Some("bash")
            )
        );
        let updated = r#"{"properties":{"id":"per_2","sessionID":"ses_1","type":"edit","title":"Edit src/a.rs"}}"#;
        assert_eq!(
            parse(&profile(), "permission.updated", updated.as_bytes())
                .expect("parses")
                .reason
                .as_deref(),
            Some("edit")
        );
        let question = parse(
            &profile(),
            "question.asked",
            br#"{"properties":{"sessionID":"ses_1"}}"#,
        )
        .expect("parses");
        assert_eq!(
            (question.kind, question.prompt_kind),
            (CanonicalEvent::Notification, Some(PromptKind::Question))
        );
    }

    #[test]
    fn mapping_wins_and_garbage_is_refused() {
        let mut p = profile();
        p.hook_events
            .push(("session.status".to_string(), "Stop".to_string()));
        assert_eq!(
            parse(&p, "session.status", b"{}").expect("parses").kind,
            CanonicalEvent::Stop
        );
        assert_eq!(
            parse(&profile(), "message.part.delta", b"{}")
                .expect("parses")
                .kind,
            CanonicalEvent::Other
        );
        assert!(parse(&profile(), "session.idle", b"{\"properties\":").is_err());
        assert!(parse(&profile(), "session.idle", b"\"session.idle\"").is_err());
        let odd = parse(
            &profile(),
            "session.error",
            br#"{"properties":{"error":42,"sessionID":7}}"#,
        )
        .expect("parses");
        assert_eq!((odd.session_id, odd.reason), (None, None));
    }
}
