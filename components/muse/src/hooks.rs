//! Muse hook payloads → canonical events. Muse copies Claude Code's hook
//! contract: `session_id`, `cwd`, `hook_event_name`, `transcript_path`
//! (null in exec mode) and `turn_id` on every payload; Stop adds
//! `last_assistant_message` and `stop_hook_active`. Muse's own events
//! (PreLLMCall, PostLLMCall, PostCompact, SubagentStart, PostToolBatch)
//! say nothing about the seat's state.

use drover_kit::claude_hooks::{self, Dialect};
use drover_kit::{AdapterError, CanonicalEvent, HookEvent, Profile, PromptKind};

fn native_kind(native: &str) -> CanonicalEvent {
    match native {
        "PreLLMCall" | "PostLLMCall" | "PostCompact" | "SubagentStart" | "PostToolBatch" => {
            CanonicalEvent::Other
        }
        other => claude_hooks::native_kind(other),
    }
}

/// Muse's Notification is undocumented: only its words can say it asks.
fn notification_prompt(_kind: Option<&str>, message: Option<&str>) -> Option<PromptKind> {
    let message = message?.to_ascii_lowercase();
    (message.contains("permission") || message.contains("approval"))
        .then_some(PromptKind::Permission)
}

const DIALECT: Dialect = Dialect {
    native_kind,
    stop_failure_reason: &["error", "reason"],
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

    #[test]
    fn an_exec_stop_has_no_transcript_and_carries_the_reply() {
        let payload = r#"{"session_id":"0f8fad5b-d9cb-469f-a165-70867728950e","cwd":"/w","hook_event_name":"Stop","transcript_path":null,"turn_id":"t1","last_assistant_message":"DONE","stop_hook_active":false}"#;
        let e = parse(&profile(), "Stop", payload.as_bytes()).expect("parses");
        assert_eq!(e.kind, CanonicalEvent::Stop);
        assert_eq!(
            e.session_id.as_deref(),
            Some("0f8fad5b-d9cb-469f-a165-70867728950e")
        );
        assert_eq!(e.transcript_path, None);
        assert_eq!(e.last_message.as_deref(), Some("DONE"));
    }

    #[test]
    fn a_permission_request_blocks_and_muses_own_events_say_nothing() {
        let ask = r#"{"session_id":"s","cwd":"/w","hook_event_name":"PermissionRequest","transcript_path":null,"tool_name":"shell"}"#;
        let e = parse(&profile(), "PermissionRequest", ask.as_bytes()).expect("parses");
        assert_eq!(e.prompt_kind, Some(PromptKind::Permission));
        let llm = r#"{"session_id":"s","cwd":"/w","hook_event_name":"PreLLMCall","transcript_path":null}"#;
        let e = parse(&profile(), "PreLLMCall", llm.as_bytes()).expect("parses");
        assert_eq!(e.kind, CanonicalEvent::Other);
    }
}
