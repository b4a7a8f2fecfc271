//! Grok hook payloads → canonical events.
//!
//! Grok takes Claude Code's event names in its hook files but sends its own
//! camelCase envelope: `hookEventName` (snake case: `stop`), `sessionId`,
//! `cwd`, `workspaceRoot`, `timestamp`, `permissionMode`, and from the
//! first prompt on `transcriptPath` (the session's `updates.jsonl`). Stop
//! adds `reason`, `stopHookActive`, `lastAssistantMessage`,
//! `backgroundTasks`, `sessionCrons`; StopFailure `error` (Claude's
//! vocabulary: `rate_limit`, `authentication_failed`, `server_error`, …),
//! `errorDetails` and `lastAssistantMessage` (the error text); Notification
//! `notificationType` and `message`; SessionStart `source`; SessionEnd
//! `reason`.
//!
//! A Stop also fires when the session ends (`reason` `channel_closed` or
//! `shutdown`): that one is the session's end, not a turn's.

use drover_kit::payload::Payload;
use drover_kit::{AdapterError, CanonicalEvent, HookEvent, Profile, PromptKind, mapped_kind};

fn native_kind(native: &str) -> CanonicalEvent {
    match native {
        "SessionStart" => CanonicalEvent::SessionStart,
        "UserPromptSubmit" => CanonicalEvent::PromptSubmit,
        "Stop" => CanonicalEvent::Stop,
        "StopFailure" => CanonicalEvent::StopFailure,
        "SubagentStop" | "SubagentEnd" => CanonicalEvent::SubagentStop,
        "SessionEnd" => CanonicalEvent::SessionEnd,
        "PreCompact" => CanonicalEvent::PreCompact,
        "Notification" => CanonicalEvent::Notification,
        "PreToolUse" => CanonicalEvent::ToolStart,
        "PostToolUse" | "PostToolUseFailure" => CanonicalEvent::ToolEnd,
        _ => CanonicalEvent::Other,
    }
}

fn notification_prompt(kind: Option<&str>) -> Option<PromptKind> {
    match kind? {
        "permission_prompt" => Some(PromptKind::Permission),
        "elicitation_dialog" | "question" => Some(PromptKind::Question),
        _ => None,
    }
}

pub fn parse(profile: &Profile, native: &str, bytes: &[u8]) -> Result<HookEvent, AdapterError> {
    let mut payload = Payload::parse(bytes)?;
    let mut kind = mapped_kind(profile, native).unwrap_or_else(|| native_kind(native));
    let stop_reason = payload.string(&["reason"]);
    if kind == CanonicalEvent::Stop
        && matches!(stop_reason.as_deref(), Some("channel_closed" | "shutdown"))
    {
        kind = CanonicalEvent::SessionEnd;
    }
    let mut event = HookEvent::new(kind, native);
    event.session_id = payload.session_id();
    event.transcript_path = payload.transcript_path();
    event.cwd = payload.cwd().or_else(|| payload.string(&["workspaceRoot"]));
    event.subagent = matches!(native, "SubagentStop" | "SubagentEnd" | "SubagentStart");
    match kind {
        CanonicalEvent::Stop | CanonicalEvent::SubagentStop => {
            event.last_message = payload.string(&["lastAssistantMessage"]);
            event.reason = stop_reason;
        }
        CanonicalEvent::StopFailure => {
            event.reason = payload.string(&["error", "errorDetails"]);
            event.last_message = payload.string(&["lastAssistantMessage"]);
        }
        CanonicalEvent::SessionEnd => event.reason = stop_reason,
        CanonicalEvent::Notification => {
            let kind = payload.string(&["notificationType"]);
            event.prompt_kind = notification_prompt(kind.as_deref());
            event.reason = kind.or_else(|| payload.string(&["message"]));
        }
        CanonicalEvent::SessionStart => event.reason = payload.string(&["source"]),
        CanonicalEvent::PreCompact => event.reason = payload.string(&["trigger"]),
        CanonicalEvent::ToolStart | CanonicalEvent::ToolEnd => {
            event.reason = payload.string(&["toolName"]);
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

    #[test]
    fn the_session_end_stop_is_not_a_turn_end() {
        let end = br#"{"hookEventName":"stop","sessionId":"s","reason":"channel_closed"}"#;
        let e = parse(&profile(), "Stop", end).expect("parses");
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (CanonicalEvent::SessionEnd, Some("channel_closed"))
        );
        let turn = br#"{"hookEventName":"stop","sessionId":"s","reason":"end_turn","lastAssistantMessage":"hi"}"#;
        let e = parse(&profile(), "Stop", turn).expect("parses");
        assert_eq!(
            (e.kind, e.last_message.as_deref()),
            (CanonicalEvent::Stop, Some("hi"))
        );
    }

    #[test]
    fn hostile_payloads_are_errors_or_empty_fields() {
        assert!(parse(&profile(), "Stop", b"not json").is_err());
        let odd = br#"{"sessionId":7,"transcriptPath":["x"],"reason":{"a":1}}"#;
        let e = parse(&profile(), "Stop", odd).expect("parses");
        assert_eq!(
            (e.kind, e.session_id, e.transcript_path),
            (CanonicalEvent::Stop, None, None)
        );
    }
}
