//! Names the built-in components understand. A profile that uses a built-in
//! component is checked against these at load; a test keeps them equal to
//! what the built-in components' `describe()` reports.

/// Canonical hook events a profile may map native events to: bmad-loop's four
/// plus the ones drover acts on, then the WIT-style spellings the guest kit
/// also reads. What each means is `CanonicalEvent::from_profile_name`.
pub const CANONICAL_EVENTS: &[&str] = &[
    "SessionStart",
    "Stop",
    "SessionEnd",
    "PreCompact",
    "StopFailure",
    "SubagentStop",
    "Notification",
    "PermissionRequest",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PromptSubmit",
    "ToolStart",
    "ToolEnd",
];

pub const DIALECTS: &[&str] = &[
    "claude-settings-json",
    "codex-hooks-json",
    "gemini-settings-json",
    "copilot-settings-json",
    "antigravity-hooks-json",
    "opencode-plugin",
    "cursor-hooks-json",
    "grok-hooks-json",
    "muse-hooks-json",
];

pub const PARSERS: &[&str] = &[
    "none",
    "claude-jsonl",
    "codex-rollout",
    "gemini-chat",
    "copilot-events",
    "qwen-chat",
    "qwen-usage-record",
    "opencode-db",
    "opencode-json",
    "cursor-json",
    "grok-updates",
    "grok-log",
    "muse-session",
];

/// How the generic adapter reads a headless turn's stdout (`[turn] output`):
/// the reply as text, common JSON result shapes, or one CLI family's format.
pub const TURN_OUTPUTS: &[&str] = &[
    "text",
    "json",
    "claude-json",
    "codex-jsonl",
    "gemini-json",
    "qwen-json",
    "copilot-jsonl",
    "cursor-json",
    "opencode-jsonl",
    "antigravity-stream-json",
    "grok-json",
];

/// `^[A-Za-z0-9][A-Za-z0-9._-]*$`
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// Whether `s` is an environment variable name as shells write them.
pub fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_types::wit::CanonicalEvent;

    #[test]
    fn every_profile_event_name_means_one_event_here_and_in_the_guest_kit() {
        for name in CANONICAL_EVENTS {
            let here = CanonicalEvent::from_profile_name(name)
                .unwrap_or_else(|| panic!("{name} is accepted in profiles but means nothing"));
            let kit = drover_kit::CanonicalEvent::from_name(name)
                .unwrap_or_else(|| panic!("the guest kit does not read {name}"));
            // Both bindings print a variant as `CanonicalEvent::Name`.
            assert_eq!(format!("{here:?}"), format!("{kit:?}"), "{name}");
        }
        assert_eq!(CanonicalEvent::from_profile_name("Stopped"), None);
    }
}
