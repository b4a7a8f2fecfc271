//! Claude Code hook payloads → canonical events.
//!
//! Every payload carries `session_id`, `transcript_path`, `cwd` and
//! `hook_event_name`. Stop carries `last_assistant_message`; StopFailure an
//! `error` kind (`server_error`, `rate_limit`, `authentication_failed`);
//! Notification a `message` and, in 2.x, a `notification_type`.

use drover_kit::claude_hooks::{self, Dialect};
use drover_kit::{AdapterError, HookEvent, Profile, PromptKind};

/// What a Notification asks of the user. `idle_prompt` only says the seat
/// has been idle a while: not blocked.
fn notification_prompt(kind: Option<&str>, message: Option<&str>) -> Option<PromptKind> {
    match kind {
        Some("permission_prompt") => return Some(PromptKind::Permission),
        Some("elicitation_dialog") => return Some(PromptKind::Question),
        Some("idle_prompt" | "auth_success") => return None,
        _ => {}
    }
    let message = message?.to_ascii_lowercase();
    if message.contains("needs your permission") || message.contains("permission to use") {
        Some(PromptKind::Permission)
    } else if message.contains("needs your input") || message.contains("has a question") {
        Some(PromptKind::Question)
    } else {
        None
    }
}

/// Where Claude Code departs from Claude Code's hook contract.
const DIALECT: Dialect = Dialect {
    native_kind: claude_hooks::native_kind,
    stop_failure_reason: &["error", "error_type"],
    notification_prompt,
    pre_compact_trigger: false,
};

pub fn parse(profile: &Profile, native: &str, bytes: &[u8]) -> Result<HookEvent, AdapterError> {
    claude_hooks::parse(profile, native, bytes, &DIALECT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::CanonicalEvent;
    use drover_kit::testing::{StopCarries, assert_stop_carries};

    // Payload shapes observed from Claude Code 2.1.332 (docs/adapters/claude.md).
    const STOP: &str = r#"{"session_id":"5f0c","transcript_path":"/h/.claude/projects/-w/5f0c.jsonl","cwd":"/w","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"TMUXOK","background_tasks":[],"session_crons":[],"effort":"high","permission_mode":"auto","prompt_id":"p1"}"#;

    #[test]
    fn stop_carries_session_transcript_and_reply() {
        let e = parse(&profile(), "Stop", STOP.as_bytes()).expect("parses");
        assert_stop_carries(
            &e,
            StopCarries {
                session: "5f0c",
                transcript: "/h/.claude/projects/-w/5f0c.jsonl",
                cwd: "/w",
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
    fn stop_failure_reports_its_error_kind() {
        let payload = r#"{"session_id":"s","transcript_path":"/t","cwd":"/w","hook_event_name":"StopFailure","error":"rate_limit","last_assistant_message":"API Error: Request rejected (429)"}"#;
        let e = parse(&profile(), "StopFailure", payload.as_bytes()).expect("parses");
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (CanonicalEvent::StopFailure, Some("rate_limit"))
        );
    }

    #[test]
    fn permission_and_notifications_mark_blocking_prompts() {
        let req = r#"{"session_id":"s","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"},"permission_suggestions":[]}"#;
        let e = parse(&profile(), "PermissionRequest", req.as_bytes()).expect("parses");
        assert_eq!(
            (e.kind, e.prompt_kind),
            (
                CanonicalEvent::PermissionRequest,
                Some(PromptKind::Permission)
            )
        );
        let note = r#"{"session_id":"s","hook_event_name":"Notification","message":"Claude needs your permission to use Bash"}"#;
        let e = parse(&profile(), "Notification", note.as_bytes()).expect("parses");
        assert_eq!(e.prompt_kind, Some(PromptKind::Permission));
        let idle = r#"{"session_id":"s","message":"Claude is waiting for your input","notification_type":"idle_prompt"}"#;
        assert_eq!(
            parse(&profile(), "Notification", idle.as_bytes())
                .expect("parses")
                .prompt_kind,
            None
        );
    }

    #[test]
    fn subagent_stops_are_marked() {
        let e = parse(&profile(), "SubagentStop", br#"{"session_id":"s"}"#).expect("parses");
        assert_eq!(e.kind, CanonicalEvent::SubagentStop);
        assert!(e.subagent);
    }

    #[test]
    fn profile_mapping_wins_and_garbage_is_an_error() {
        let mut p = profile();
        p.hook_events
            .push(("Notification".to_string(), "Stop".to_string()));
        assert_eq!(
            parse(&p, "Notification", b"{}").expect("parses").kind,
            CanonicalEvent::Stop
        );
        assert!(parse(&profile(), "Stop", b"\xff\xfe").is_err());
        assert_eq!(
            parse(&profile(), "Stop", b"").expect("empty ok").session_id,
            None
        );
    }
}
