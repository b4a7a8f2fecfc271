//! Copilot CLI hook payloads → canonical events.
//!
//! Hooks registered under camelCase names (`agentStop`, `sessionStart`, …)
//! get camelCase payloads: `sessionId`, `timestamp` (ms), `cwd`, and per
//! event `transcriptPath`/`stopReason` (agentStop, subagentStop), `reason`
//! (sessionEnd), `source` (sessionStart), `error{message,name}`/
//! `errorContext`/`recoverable` (errorOccurred), `notification_type`/
//! `message` (notification). PascalCase names get VS Code-style snake_case
//! payloads; `Payload` reads both spellings.
//!
//! A subagent's turn also fires `agentStop`, with an empty `transcriptPath`
//! and a `toolu_…` session id (bmad-loop, Copilot 1.0.63): such a Stop is
//! marked `subagent` so it does not end the seat's turn.

use drover_kit::payload::{self, Payload};
use drover_kit::{AdapterError, CanonicalEvent, HookEvent, Profile, PromptKind};
use serde_json::Value;

fn native_kind(native: &str) -> CanonicalEvent {
    match native {
        "agentStop" | "Stop" => CanonicalEvent::Stop,
        "subagentStop" | "SubagentStop" => CanonicalEvent::SubagentStop,
        "sessionStart" | "SessionStart" => CanonicalEvent::SessionStart,
        "sessionEnd" | "SessionEnd" => CanonicalEvent::SessionEnd,
        "errorOccurred" | "ErrorOccurred" => CanonicalEvent::StopFailure,
        "notification" | "Notification" => CanonicalEvent::Notification,
        "permissionRequest" | "PermissionRequest" => CanonicalEvent::PermissionRequest,
        "preCompact" | "PreCompact" => CanonicalEvent::PreCompact,
        "userPromptSubmitted" | "UserPromptSubmit" => CanonicalEvent::PromptSubmit,
        "preToolUse" | "PreToolUse" => CanonicalEvent::ToolStart,
        "postToolUse" | "PostToolUse" | "postToolUseFailure" | "PostToolUseFailure" => {
            CanonicalEvent::ToolEnd
        }
        _ => CanonicalEvent::Other,
    }
}

/// What a notification asks of the user. `agent_idle`, `agent_completed`
/// and the shell notifications are about background work, not a prompt.
fn notification_prompt(kind: Option<&str>) -> Option<PromptKind> {
    match kind {
        Some("permission_prompt") => Some(PromptKind::Permission),
        Some("elicitation_dialog") => Some(PromptKind::Question),
        _ => None,
    }
}

/// A Stop that belongs to a subagent: the key is present but empty, or the
/// session id is a tool-use id. A payload without the key is not judged.
fn is_subagent_stop(payload: &Payload, session_id: Option<&str>) -> bool {
    let empty_transcript = ["transcriptPath", "transcript_path"].iter().any(|k| {
        matches!(payload.get(k), Some(Value::String(s)) if s.trim().is_empty())
            || matches!(payload.get(k), Some(Value::Null))
    });
    empty_transcript || session_id.is_some_and(|s| s.starts_with("toolu_"))
}

pub fn parse(profile: &Profile, native: &str, bytes: &[u8]) -> Result<HookEvent, AdapterError> {
    let (mut payload, mut event) = payload::begin_event(profile, native, bytes, native_kind)?;
    let mut kind = event.kind;
    let mut extra_fields: Vec<String> = Vec::new();
    match kind {
        CanonicalEvent::Stop => {
            event.subagent = matches!(native, "subagentStop" | "SubagentStop")
                || is_subagent_stop(&payload, event.session_id.as_deref());
            event.reason = payload.string(&["stopReason", "stop_reason"]);
        }
        CanonicalEvent::SubagentStop => {
            event.subagent = true;
            event.reason = payload.string(&["agentName", "agent_name"]);
        }
        CanonicalEvent::StopFailure => {
            let message = payload
                .get("error")
                .and_then(|e| e.get("message"))
                .and_then(Value::as_str)
                .map(str::to_string);
            if message.is_some() {
                extra_fields.push("error.message".to_string());
            }
            let message = message.or_else(|| payload.string(&["error", "message"]));
            let context = payload.string(&["errorContext", "error_context"]);
            event.reason = match (context, message) {
                (Some(c), Some(m)) => Some(format!("{c}: {m}")),
                (c, m) => m.or(c),
            };
            // errorOccurred also fires for errors Copilot recovers from (a
            // retried model call, a failed tool): those do not end the turn.
            if payload.flag(&["recoverable"]) == Some(true) {
                kind = CanonicalEvent::Other;
            }
        }
        CanonicalEvent::SessionEnd => {
            event.reason = payload.string(&["reason"]);
        }
        CanonicalEvent::SessionStart => {
            event.reason = payload.string(&["source"]);
        }
        CanonicalEvent::Notification => {
            let kind = payload.string(&["notification_type", "notificationType"]);
            event.prompt_kind = notification_prompt(kind.as_deref());
            event.reason = kind.or_else(|| payload.string(&["message", "title"]));
        }
        CanonicalEvent::PermissionRequest => {
            event.prompt_kind = Some(PromptKind::Permission);
            event.reason = payload.string(&["toolName", "tool_name"]);
        }
        CanonicalEvent::PreCompact => {
            event.reason = payload.string(&["trigger"]);
        }
        CanonicalEvent::ToolStart | CanonicalEvent::ToolEnd => {
            event.reason = payload.string(&["toolName", "tool_name"]);
        }
        _ => {}
    }
    event.kind = kind;
    event.fields_found = payload.fields_found();
    event.fields_found.extend(extra_fields);
    Ok(event)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests_support::profile;
    use drover_kit::testing::{StopCarries, assert_stop_carries};

    // Shapes from the Copilot CLI hooks reference (camelCase payloads) and
    // bmad-loop's observation of subagent stops (fixtures/README.md).
    const STOP: &str = include_str!("../fixtures/hook-agentstop.json");
    const SUBAGENT_STOP: &str = include_str!("../fixtures/hook-agentstop-subagent.json");

    #[test]
    fn agent_stop_carries_session_transcript_and_cwd() {
        let e = parse(&profile(), "agentStop", STOP.as_bytes()).expect("parses");
        assert_stop_carries(
            &e,
            StopCarries {
                session: "8a216c49-e51c-4eef-9405-bf83298fced2",
                transcript: "/home/u/.copilot/session-state/8a216c49-e51c-4eef-9405-bf83298fced2/events.jsonl",
                cwd: "/home/project",
                reply: None,
                reason: Some("end_turn"),
                fields: &["sessionId", "transcriptPath", "cwd", "stopReason"],
            },
        );
    }

    #[test]
    fn a_subagents_agent_stop_is_marked() {
        let e = parse(&profile(), "agentStop", SUBAGENT_STOP.as_bytes()).expect("parses");
        assert_eq!(e.kind, CanonicalEvent::Stop);
        assert!(e.subagent);
        assert_eq!(e.transcript_path, None);
        assert_eq!(
            e.session_id.as_deref(),
            Some("toolu_01AbCdEfGhIjKlMnOpQrStUv")
        );
        // Either sign alone is enough.
        let only_id = r#"{"sessionId":"toolu_x","cwd":"/w","transcriptPath":"/t"}"#;
        assert!(
            parse(&profile(), "agentStop", only_id.as_bytes())
                .expect("parses")
                .subagent
        );
        let only_path = r#"{"sessionId":"abc","cwd":"/w","transcriptPath":""}"#;
        assert!(
            parse(&profile(), "agentStop", only_path.as_bytes())
                .expect("parses")
                .subagent
        );
        // A payload without the key is not judged a subagent.
        let bare = r#"{"sessionId":"abc","cwd":"/w"}"#;
        assert!(
            !parse(&profile(), "agentStop", bare.as_bytes())
                .expect("parses")
                .subagent
        );
    }

    #[test]
    fn error_occurred_fails_the_turn_only_when_unrecoverable() {
        let fatal = r#"{"sessionId":"s","timestamp":1785657600000,"cwd":"/w","error":{"message":"Failed to get response from the AI model; retried 5 times","name":"Error"},"errorContext":"model_call","recoverable":false}"#;
        let e = parse(&profile(), "errorOccurred", fatal.as_bytes()).expect("parses");
        assert_eq!(e.kind, CanonicalEvent::StopFailure);
        assert_eq!(
            e.reason.as_deref(),
            Some("model_call: Failed to get response from the AI model; retried 5 times")
        );
        assert!(e.fields_found.contains(&"error.message".to_string()));
        let recovered = fatal.replace(r#""recoverable":false"#, r#""recoverable":true"#);
        assert_eq!(
            parse(&profile(), "errorOccurred", recovered.as_bytes())
                .expect("parses")
                .kind,
            CanonicalEvent::Other
        );
    }

    #[test]
    fn notifications_mark_blocking_prompts_only() {
        let perm = r#"{"sessionId":"s","timestamp":1,"cwd":"/w","hook_event_name":"Notification","message":"Copilot needs permission to run bash","title":"Permission needed","notification_type":"permission_prompt"}"#;
        let e = parse(&profile(), "notification", perm.as_bytes()).expect("parses");
        assert_eq!(
            (e.kind, e.prompt_kind),
            (CanonicalEvent::Notification, Some(PromptKind::Permission))
        );
        assert_eq!(e.reason.as_deref(), Some("permission_prompt"));
        let ask = perm.replace("permission_prompt", "elicitation_dialog");
        assert_eq!(
            parse(&profile(), "notification", ask.as_bytes())
                .expect("parses")
                .prompt_kind,
            Some(PromptKind::Question)
        );
        let shell = perm.replace("permission_prompt", "shell_completed");
        assert_eq!(
            parse(&profile(), "notification", shell.as_bytes())
                .expect("parses")
                .prompt_kind,
            None
        );
    }

    #[test]
    fn session_events_and_vs_code_spelling() {
        let end = r#"{"sessionId":"s","timestamp":1,"cwd":"/w","reason":"user_exit"}"#;
        let e = parse(&profile(), "sessionEnd", end.as_bytes()).expect("parses");
        assert_eq!(
            (e.kind, e.reason.as_deref()),
            (CanonicalEvent::SessionEnd, Some("user_exit"))
        );
        let pascal = r#"{"hook_event_name":"Stop","session_id":"s2","timestamp":"2026-08-02T09:00:00Z","cwd":"/w","transcript_path":"/t.jsonl","stop_reason":"end_turn"}"#;
        let e = parse(&profile(), "Stop", pascal.as_bytes()).expect("parses");
        assert_eq!(
            (
                e.kind,
                e.session_id.as_deref(),
                e.transcript_path.as_deref()
            ),
            (CanonicalEvent::Stop, Some("s2"), Some("/t.jsonl"))
        );
    }

    #[test]
    fn profile_mapping_wins_and_garbage_is_an_error() {
        let mut p = profile();
        p.hook_events
            .push(("preCompact".to_string(), "Stop".to_string()));
        assert_eq!(
            parse(&p, "preCompact", b"{}").expect("parses").kind,
            CanonicalEvent::Stop
        );
        assert!(matches!(
            parse(&profile(), "agentStop", b"\xff\xfe"),
            Err(AdapterError::InvalidInput(_))
        ));
        assert!(matches!(
            parse(&profile(), "agentStop", b"[1]"),
            Err(AdapterError::InvalidInput(_))
        ));
        assert_eq!(
            parse(&profile(), "agentStop", b"")
                .expect("empty ok")
                .session_id,
            None
        );
    }
}
