//! Gemini CLI hook payloads → canonical events.
//!
//! Every payload carries `session_id`, `transcript_path`, `cwd`,
//! `hook_event_name` and `timestamp`. AfterAgent (the turn-complete hook)
//! adds `prompt`, `prompt_response` and `stop_hook_active`; SessionStart a
//! `source`, SessionEnd a `reason`, PreCompress a `trigger`, Notification a
//! `notification_type` (`ToolPermission`), `message` and `details`. No
//! event fires when a turn fails, and none says it comes from a subagent.

use drover_kit::payload;
use drover_kit::{AdapterError, CanonicalEvent, HookEvent, Profile, PromptKind};

fn native_kind(native: &str) -> CanonicalEvent {
    match native {
        "SessionStart" => CanonicalEvent::SessionStart,
        "BeforeAgent" => CanonicalEvent::PromptSubmit,
        "AfterAgent" => CanonicalEvent::Stop,
        "SessionEnd" => CanonicalEvent::SessionEnd,
        "PreCompress" => CanonicalEvent::PreCompact,
        "Notification" => CanonicalEvent::Notification,
        "BeforeTool" => CanonicalEvent::ToolStart,
        "AfterTool" => CanonicalEvent::ToolEnd,
        _ => CanonicalEvent::Other,
    }
}

/// What a Notification asks of the user. Gemini CLI has one type, sent
/// while a tool waits for approval with a message such as `Tool Shell
/// requires execution` or `Tool requires confirmation`.
fn notification_prompt(kind: Option<&str>, message: Option<&str>) -> Option<PromptKind> {
    if kind == Some("ToolPermission") {
        return Some(PromptKind::Permission);
    }
    let message = message?;
    (message.starts_with("Tool ")
        && (message.contains(" requires ") || message.ends_with("confirmation")))
    .then_some(PromptKind::Permission)
}

pub fn parse(profile: &Profile, native: &str, bytes: &[u8]) -> Result<HookEvent, AdapterError> {
    let (mut payload, mut event) = payload::begin_event(profile, native, bytes, native_kind)?;
    let kind = event.kind;
    // AfterAgent carries the reply whatever the profile maps it to.
    if native == "AfterAgent" {
        event.last_message = payload.string(&["prompt_response"]);
        payload.flag(&["stop_hook_active"]);
    }
    match kind {
        CanonicalEvent::SessionStart => {
            event.reason = payload.string(&["source"]);
        }
        CanonicalEvent::SessionEnd => {
            event.reason = payload.string(&["reason"]);
        }
        CanonicalEvent::PreCompact => {
            event.reason = payload.string(&["trigger"]);
        }
        CanonicalEvent::Notification | CanonicalEvent::PermissionRequest => {
            let kind = payload.string(&["notification_type"]);
            let message = payload.string(&["message"]);
            event.prompt_kind = notification_prompt(kind.as_deref(), message.as_deref());
            if event.kind == CanonicalEvent::PermissionRequest {
                event.prompt_kind = Some(PromptKind::Permission);
            }
            event.reason = kind.or(message);
        }
        CanonicalEvent::ToolStart | CanonicalEvent::ToolEnd => {
            event.reason = payload.string(&["tool_name"]);
        }
        _ => {}
    }
    event.fields_found = payload.fields_found();
    Ok(event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::testing::{StopCarries, assert_stop_carries};

    // Payload shapes recorded from Gemini CLI 0.61.0 (docs/adapters/gemini.md).
    const AFTER_AGENT: &str = r#"{"session_id":"7c0e5d2a-9b1f-4e43-8a47-1f2d3c4b5a69","transcript_path":"/t/home/.gemini/tmp/gemini/chats/session-2026-11-30T10-00-7c0e5d2a.jsonl","cwd":"/t/work/gemini","hook_event_name":"AfterAgent","timestamp":"2026-11-30T10:00:03.512Z","prompt":"Reply with exactly: TMUXOK","prompt_response":"TMUXOK","stop_hook_active":false}"#;

    #[test]
    fn after_agent_is_the_stop_with_the_reply() {
        let e = parse(&profile(), "AfterAgent", AFTER_AGENT.as_bytes()).expect("parses");
        assert_eq!(e.native, "AfterAgent");
        assert_stop_carries(
            &e,
            StopCarries {
                session: "7c0e5d2a-9b1f-4e43-8a47-1f2d3c4b5a69",
                transcript: "/t/home/.gemini/tmp/gemini/chats/session-2026-11-30T10-00-7c0e5d2a.jsonl",
                cwd: "/t/work/gemini",
                reply: Some("TMUXOK"),
                reason: None,
                fields: &[
                    "session_id",
                    "transcript_path",
                    "cwd",
                    "prompt_response",
                    "stop_hook_active",
                ],
            },
        );
    }

    #[test]
    fn session_events_and_compression_carry_their_reason() {
        let start = r#"{"session_id":"s","transcript_path":"","cwd":"/w","hook_event_name":"SessionStart","timestamp":"2026-11-30T10:00:00.000Z","source":"startup"}"#;
        let e = parse(&profile(), "SessionStart", start.as_bytes()).expect("parses");
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (CanonicalEvent::SessionStart, Some("startup"))
        );
        // An empty transcript path (no chat recorded yet) is absent.
        assert_eq!(e.transcript_path, None);
        let end = r#"{"session_id":"s","transcript_path":"/t","cwd":"/w","hook_event_name":"SessionEnd","timestamp":"x","reason":"exit"}"#;
        let e = parse(&profile(), "SessionEnd", end.as_bytes()).expect("parses");
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (CanonicalEvent::SessionEnd, Some("exit"))
        );
        let compress = r#"{"session_id":"s","transcript_path":"/t","cwd":"/w","hook_event_name":"PreCompress","timestamp":"x","trigger":"auto"}"#;
        let e = parse(&profile(), "PreCompress", compress.as_bytes()).expect("parses");
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (CanonicalEvent::PreCompact, Some("auto"))
        );
    }

    // Notification is registered but did not fire in the recorded runs; its
    // shape is from gemini-cli's source (hooks/types.ts, hookSystem.ts).
    #[test]
    fn tool_permission_notifications_block() {
        let note = r#"{"session_id":"s","transcript_path":"/t","cwd":"/w","hook_event_name":"Notification","timestamp":"x","notification_type":"ToolPermission","message":"Tool Shell requires execution","details":{"type":"exec","title":"Shell","command":"echo hi > hi.txt"}}"#;
        let e = parse(&profile(), "Notification", note.as_bytes()).expect("parses");
        assert_eq!(e.kind, CanonicalEvent::Notification);
        assert_eq!(e.prompt_kind, Some(PromptKind::Permission));
        assert_eq!(e.reason.as_deref(), Some("ToolPermission"));
        let untyped = r#"{"session_id":"s","message":"Tool requires confirmation"}"#;
        let e = parse(&profile(), "Notification", untyped.as_bytes()).expect("parses");
        assert_eq!(
            (e.prompt_kind, e.reason.as_deref()),
            (
                Some(PromptKind::Permission),
                Some("Tool requires confirmation")
            )
        );
        let other =
            r#"{"session_id":"s","notification_type":"Heads-up","message":"Update available"}"#;
        assert_eq!(
            parse(&profile(), "Notification", other.as_bytes())
                .expect("parses")
                .prompt_kind,
            None
        );
    }

    #[test]
    fn unmapped_native_events_use_the_adapters_table() {
        let before = r#"{"session_id":"s","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"ls"}}"#;
        let e = parse(&profile(), "BeforeTool", before.as_bytes()).expect("parses");
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (CanonicalEvent::ToolStart, Some("run_shell_command"))
        );
        assert_eq!(
            parse(&profile(), "BeforeAgent", b"{}")
                .expect("parses")
                .kind,
            CanonicalEvent::PromptSubmit
        );
        assert_eq!(
            parse(&profile(), "AfterModel", b"{}").expect("parses").kind,
            CanonicalEvent::Other
        );
    }

    #[test]
    fn profile_mapping_wins_and_garbage_is_an_error() {
        let mut p = profile();
        p.hook_events.retain(|(n, _)| n != "AfterAgent");
        p.hook_events
            .push(("AfterAgent".to_string(), "SessionEnd".to_string()));
        let e = parse(&p, "AfterAgent", AFTER_AGENT.as_bytes()).expect("parses");
        assert_eq!(e.kind, CanonicalEvent::SessionEnd);
        assert_eq!(e.last_message.as_deref(), Some("TMUXOK"));
        p.hook_events
            .push(("BeforeTool".to_string(), "PermissionRequest".to_string()));
        let e = parse(&p, "BeforeTool", b"{\"tool_name\":\"x\"}").expect("parses");
        assert_eq!(
            (e.kind, e.prompt_kind),
            (
                CanonicalEvent::PermissionRequest,
                Some(PromptKind::Permission)
            )
        );
        assert!(parse(&profile(), "AfterAgent", b"\xff\xfe").is_err());
        assert!(matches!(
            parse(&profile(), "AfterAgent", b"[1]"),
            Err(AdapterError::InvalidInput(_))
        ));
        assert_eq!(
            parse(&profile(), "AfterAgent", b"")
                .expect("empty ok")
                .session_id,
            None
        );
    }
}
