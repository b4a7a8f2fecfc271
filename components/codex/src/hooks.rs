//! Codex hook payloads → canonical events.
//!
//! Every payload carries `session_id`, `transcript_path`, `cwd` and
//! `hook_event_name` (plus `model`, `permission_mode`, and `turn_id` on
//! turn events). Stop carries `last_assistant_message`, SessionStart a
//! `source`, SessionEnd a `reason`, tool events a `tool_name`. Codex has no
//! StopFailure and no Notification event: a failed turn fires nothing.

use drover_kit::claude_hooks::{self, Dialect};
use drover_kit::{AdapterError, CanonicalEvent, HookEvent, Profile};

fn native_kind(native: &str) -> CanonicalEvent {
    match native {
        "SessionStart" => CanonicalEvent::SessionStart,
        "UserPromptSubmit" => CanonicalEvent::PromptSubmit,
        "Stop" => CanonicalEvent::Stop,
        "SubagentStop" => CanonicalEvent::SubagentStop,
        "SessionEnd" => CanonicalEvent::SessionEnd,
        "PreCompact" => CanonicalEvent::PreCompact,
        "PermissionRequest" => CanonicalEvent::PermissionRequest,
        "PreToolUse" => CanonicalEvent::ToolStart,
        "PostToolUse" => CanonicalEvent::ToolEnd,
        // SubagentStart, PostCompact, and Interrupt (the user pressed esc;
        // not a failure) have no canonical counterpart.
        _ => CanonicalEvent::Other,
    }
}

/// Where Codex departs from Claude Code's hook contract: fewer events. A
/// StopFailure or Notification comes only from a profile's mapping; its
/// reason is then read from Claude Code's fields.
const DIALECT: Dialect = Dialect {
    native_kind,
    stop_failure_reason: &["error"],
    notification_prompt: |_, _| None,
    pre_compact_trigger: false,
};

pub fn parse(profile: &Profile, native: &str, bytes: &[u8]) -> Result<HookEvent, AdapterError> {
    claude_hooks::parse(profile, native, bytes, &DIALECT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::PromptKind;
    use drover_kit::testing::{StopCarries, assert_stop_carries};

    const STOP: &str = include_str!("../fixtures/hook-stop.json");
    const SESSION_START: &str = include_str!("../fixtures/hook-session-start.json");
    const PERMISSION: &str = include_str!("../fixtures/hook-permission-request.json");
    const SESSION: &str = "019a9776-0a34-7842-8627-112b63d66e90";

    #[test]
    fn stop_carries_session_transcript_and_reply() {
        let e = parse(&profile(), "Stop", STOP.as_bytes()).expect("parses");
        assert_eq!((e.kind, e.native.as_str()), (CanonicalEvent::Stop, "Stop"));
        assert_stop_carries(
            &e,
            StopCarries {
                session: SESSION,
                transcript: "/t/home/.codex/sessions/2026/11/30/rollout-2026-11-30T10-00-00-019a9776-0a34-7842-8627-112b63d66e90.jsonl",
                cwd: "/t/work/codex",
                reply: Some("TMUXOK"),
                reason: None,
                fields: &[
                    "session_id",
                    "transcript_path",
                    "cwd",
                    "last_assistant_message",
                ],
            },
        );
    }

    #[test]
    fn session_start_and_end_give_their_reason() {
        let e = parse(&profile(), "SessionStart", SESSION_START.as_bytes()).expect("parses");
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (CanonicalEvent::SessionStart, Some("startup"))
        );
        let end = br#"{"session_id":"s","transcript_path":"/t","cwd":"/w","hook_event_name":"SessionEnd","reason":"other"}"#;
        let e = parse(&profile(), "SessionEnd", end).expect("parses");
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (CanonicalEvent::SessionEnd, Some("other"))
        );
    }

    #[test]
    fn permission_requests_block_on_a_permission() {
        let e = parse(&profile(), "PermissionRequest", PERMISSION.as_bytes()).expect("parses");
        assert_eq!(
            (e.kind, e.prompt_kind),
            (
                CanonicalEvent::PermissionRequest,
                Some(PromptKind::Permission)
            )
        );
        assert_eq!(e.reason.as_deref(), Some("Bash"));
    }

    #[test]
    fn subagent_and_unmapped_events() {
        let stop = br#"{"session_id":"s","hook_event_name":"SubagentStop","last_assistant_message":"done"}"#;
        let e = parse(&profile(), "SubagentStop", stop).expect("parses");
        assert_eq!(
            (e.kind, e.subagent, e.last_message.as_deref()),
            (CanonicalEvent::SubagentStop, true, Some("done"))
        );
        let start = parse(&profile(), "SubagentStart", br#"{"session_id":"s"}"#).expect("parses");
        assert_eq!((start.kind, start.subagent), (CanonicalEvent::Other, true));
        assert_eq!(
            parse(&profile(), "Interrupt", b"{}").expect("parses").kind,
            CanonicalEvent::Other
        );
        let tool = br#"{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"c1","turn_id":"t1"}"#;
        let e = parse(&profile(), "PreToolUse", tool).expect("parses");
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (CanonicalEvent::ToolStart, Some("Bash"))
        );
        let prompt = br#"{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"hi","turn_id":"t1"}"#;
        assert_eq!(
            parse(&profile(), "UserPromptSubmit", prompt)
                .expect("parses")
                .kind,
            CanonicalEvent::PromptSubmit
        );
    }

    #[test]
    fn profile_mapping_wins_and_garbage_is_an_error() {
        let mut p = profile();
        p.hook_events
            .push(("Interrupt".to_string(), "Stop".to_string()));
        assert_eq!(
            parse(&p, "Interrupt", b"{}").expect("parses").kind,
            CanonicalEvent::Stop
        );
        assert!(matches!(
            parse(&profile(), "Stop", b"\xff\xfe"),
            Err(AdapterError::InvalidInput(_))
        ));
        assert!(parse(&profile(), "Stop", b"[\"Stop\"]").is_err());
        assert_eq!(
            parse(&profile(), "Stop", b"").expect("empty ok").session_id,
            None
        );
    }
}
