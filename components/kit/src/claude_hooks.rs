//! Claude Code's hook contract, which other CLIs (Qwen Code, Codex) copy: the
//! native event names, and the snake_case fields each event carries.
//!
//! Every payload carries `session_id`, `transcript_path`, `cwd` and
//! `hook_event_name`. Stop carries `last_assistant_message`; StopFailure an
//! error kind; Notification a `message` and a `notification_type`;
//! PermissionRequest and the tool events a `tool_name`; SessionStart a
//! `source`, SessionEnd a `reason`. What differs between the CLIs is a
//! [`Dialect`].

use crate::payload::begin_event;
use crate::{AdapterError, CanonicalEvent, HookEvent, Profile, PromptKind};

/// Where a CLI departs from Claude Code's contract.
pub struct Dialect {
    /// The canonical event of a native name; [`native_kind`] for a CLI that
    /// fires all of Claude Code's events.
    pub native_kind: fn(&str) -> CanonicalEvent,
    /// The keys a StopFailure's reason is read from, first found wins.
    pub stop_failure_reason: &'static [&'static str],
    /// What a Notification asks of the user, from its
    /// `notification_type` and `message`.
    pub notification_prompt: fn(Option<&str>, Option<&str>) -> Option<PromptKind>,
    /// Whether PreCompact's reason is its `trigger`.
    pub pre_compact_trigger: bool,
}

/// The canonical event of a native event name: Claude Code's names are
/// the canonical ones, and a failed tool call ends the tool too.
pub fn native_kind(native: &str) -> CanonicalEvent {
    match native {
        "PostToolUseFailure" => CanonicalEvent::ToolEnd,
        // Canonical aliases that are no native name.
        "PromptSubmit" | "ToolStart" | "ToolEnd" => CanonicalEvent::Other,
        _ => CanonicalEvent::from_name(native).unwrap_or(CanonicalEvent::Other),
    }
}

/// A hook payload as a canonical event.
pub fn parse(
    profile: &Profile,
    native: &str,
    bytes: &[u8],
    dialect: &Dialect,
) -> Result<HookEvent, AdapterError> {
    let (mut payload, mut event) = begin_event(profile, native, bytes, dialect.native_kind)?;
    let kind = event.kind;
    event.subagent = matches!(native, "SubagentStop" | "SubagentStart");
    match kind {
        CanonicalEvent::Stop | CanonicalEvent::SubagentStop => {
            event.last_message = payload.string(&["last_assistant_message"]);
        }
        CanonicalEvent::StopFailure => {
            event.reason = payload.string(dialect.stop_failure_reason);
            event.last_message = payload.string(&["last_assistant_message"]);
        }
        CanonicalEvent::SessionEnd => {
            event.reason = payload.string(&["reason"]);
        }
        CanonicalEvent::Notification => {
            let kind = payload.string(&["notification_type"]);
            let message = payload.string(&["message"]);
            event.prompt_kind = (dialect.notification_prompt)(kind.as_deref(), message.as_deref());
            event.reason = kind.or(message);
        }
        CanonicalEvent::PermissionRequest => {
            event.prompt_kind = Some(PromptKind::Permission);
            event.reason = payload.string(&["tool_name"]);
        }
        CanonicalEvent::SessionStart => {
            event.reason = payload.string(&["source"]);
        }
        CanonicalEvent::PreCompact if dialect.pre_compact_trigger => {
            event.reason = payload.string(&["trigger"]);
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

    #[test]
    fn native_names_map_as_claude_code_fires_them() {
        let cases = [
            ("SessionStart", CanonicalEvent::SessionStart),
            ("UserPromptSubmit", CanonicalEvent::PromptSubmit),
            ("Stop", CanonicalEvent::Stop),
            ("StopFailure", CanonicalEvent::StopFailure),
            ("SubagentStop", CanonicalEvent::SubagentStop),
            ("SessionEnd", CanonicalEvent::SessionEnd),
            ("PreCompact", CanonicalEvent::PreCompact),
            ("Notification", CanonicalEvent::Notification),
            ("PermissionRequest", CanonicalEvent::PermissionRequest),
            ("PreToolUse", CanonicalEvent::ToolStart),
            ("PostToolUse", CanonicalEvent::ToolEnd),
            ("PostToolUseFailure", CanonicalEvent::ToolEnd),
            ("PromptSubmit", CanonicalEvent::Other),
            ("ToolStart", CanonicalEvent::Other),
            ("ToolEnd", CanonicalEvent::Other),
            ("PostToolBatch", CanonicalEvent::Other),
        ];
        for (native, kind) in cases {
            assert_eq!(native_kind(native), kind, "{native}");
        }
    }
}
