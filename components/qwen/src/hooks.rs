//! Qwen Code hook payloads → canonical events.
//!
//! Qwen copies Claude Code's hook contract: every payload carries
//! `session_id`, `transcript_path`, `cwd` and `hook_event_name`. Stop adds
//! `last_assistant_message` (and `input_tokens`, `context_usage`,
//! `context_limit`), Notification `message`, `notification_type` and
//! `title`, SessionStart `source`, SessionEnd `reason`.

use drover_kit::claude_hooks::{self, Dialect};
use drover_kit::{AdapterError, HookEvent, Profile, PromptKind};

/// What a Notification asks of the user. `idle_prompt` ("Qwen Code is
/// waiting for your input") only says the seat has sat idle: not blocked.
fn notification_prompt(kind: Option<&str>, message: Option<&str>) -> Option<PromptKind> {
    match kind {
        Some("permission_prompt") => return Some(PromptKind::Permission),
        Some("elicitation_dialog") => return Some(PromptKind::Question),
        Some("idle_prompt" | "auth_success") => return None,
        _ => {}
    }
    let message = message?.to_ascii_lowercase();
    if message.contains("needs your permission") {
        Some(PromptKind::Permission)
    } else if message.contains("has a question") || message.contains("needs your input") {
        Some(PromptKind::Question)
    } else {
        None
    }
}

/// Where Qwen Code departs from Claude Code's hook contract.
const DIALECT: Dialect = Dialect {
    native_kind: claude_hooks::native_kind,
    stop_failure_reason: &["error", "error_type", "error_details"],
    notification_prompt,
    pre_compact_trigger: true,
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

    const STOP: &str = include_str!("../fixtures/hook-stop.json");
    const SESSION_START: &str = include_str!("../fixtures/hook-session-start.json");

    #[test]
    fn stop_carries_session_transcript_and_reply() {
        let e = parse(&profile(), "Stop", STOP.as_bytes()).expect("parses");
        assert_stop_carries(
            &e,
            StopCarries {
                session: "4f1c2a9e-0000-4000-8000-00000000a001",
                transcript: "/tmp/t/home-qwen/.qwen/projects/-tmp-t-work-qwen/chats/4f1c2a9e-0000-4000-8000-00000000a001.jsonl",
                cwd: "/tmp/t/work/qwen",
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
    fn session_start_and_end_report_their_reason() {
        let e = parse(&profile(), "SessionStart", SESSION_START.as_bytes()).expect("parses");
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (CanonicalEvent::SessionStart, Some("startup"))
        );
        let end = parse(
            &profile(),
            "SessionEnd",
            br#"{"session_id":"s","reason":"prompt_input_exit"}"#,
        )
        .expect("parses");
        assert_eq!(
            (end.kind, end.reason.as_deref()),
            (CanonicalEvent::SessionEnd, Some("prompt_input_exit"))
        );
    }

    #[test]
    fn failures_permissions_and_notifications() {
        let failure = parse(
            &profile(),
            "StopFailure",
            br#"{"session_id":"s","error":"rate_limit"}"#,
        )
        .expect("parses");
        assert_eq!(
            (failure.kind, failure.reason.as_deref()),
            (CanonicalEvent::StopFailure, Some("rate_limit"))
        );
        let req = br#"{"session_id":"s","hook_event_name":"PermissionRequest","tool_name":"run_shell_command","tool_input":{"command":"ls"}}"#;
        let e = parse(&profile(), "PermissionRequest", req).expect("parses");
        assert_eq!(
            (e.prompt_kind, e.reason.as_deref()),
            (Some(PromptKind::Permission), Some("run_shell_command"))
        );
        let note = br#"{"session_id":"s","message":"Qwen Code needs your permission to use run_shell_command","notification_type":"permission_prompt","title":"Permission needed"}"#;
        let e = parse(&profile(), "Notification", note).expect("parses");
        assert_eq!(
            (e.kind, e.prompt_kind),
            (CanonicalEvent::Notification, Some(PromptKind::Permission))
        );
        assert_eq!(e.reason.as_deref(), Some("permission_prompt"));
        let idle = br#"{"session_id":"s","message":"Qwen Code is waiting for your input","notification_type":"idle_prompt","title":"Waiting for input"}"#;
        assert_eq!(
            parse(&profile(), "Notification", idle)
                .expect("parses")
                .prompt_kind,
            None
        );
        let untyped = br#"{"message":"Qwen Code needs your permission to use edit"}"#;
        assert_eq!(
            parse(&profile(), "Notification", untyped)
                .expect("parses")
                .prompt_kind,
            Some(PromptKind::Permission)
        );
    }

    #[test]
    fn subagents_mapping_and_garbage() {
        let e = parse(
            &profile(),
            "SubagentStop",
            br#"{"session_id":"s","last_assistant_message":"done"}"#,
        )
        .expect("parses");
        assert!(e.subagent);
        assert_eq!(
            (e.kind, e.last_message.as_deref()),
            (CanonicalEvent::SubagentStop, Some("done"))
        );
        let mut p = profile();
        p.hook_events.retain(|(n, _)| n != "Notification");
        p.hook_events
            .push(("Notification".to_string(), "Stop".to_string()));
        assert_eq!(
            parse(&p, "Notification", b"{}").expect("parses").kind,
            CanonicalEvent::Stop
        );
        assert_eq!(
            parse(&profile(), "BeforeNothing", b"{}")
                .expect("parses")
                .kind,
            CanonicalEvent::Other
        );
        assert!(parse(&profile(), "Stop", b"\xff\xfe").is_err());
        assert!(parse(&profile(), "Stop", b"[]").is_err());
        assert_eq!(
            parse(&profile(), "Stop", b"").expect("empty ok").session_id,
            None
        );
    }
}
