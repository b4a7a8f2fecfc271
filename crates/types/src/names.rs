//! WIT enum names as the WIT spells them (`hook-config`, `rate-limit`), for
//! text output and JSON.

use crate::wit::{CanonicalEvent, Capability, FaultKind, PromptKind, SeatState, TurnOutcome};

macro_rules! wit_names {
    ($ty:ty { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            pub fn as_str(&self) -> &'static str {
                match self {
                    $(<$ty>::$variant => $name,)+
                }
            }

            pub fn from_name(name: &str) -> Option<$ty> {
                match name {
                    $($name => Some(<$ty>::$variant),)+
                    _ => None,
                }
            }
        }

        // As the wasmtime bindings print it (`CanonicalEvent::Stop`), which
        // messages and tests already quote.
        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                match self {
                    $(<$ty>::$variant => f.write_str(concat!(stringify!($ty), "::", stringify!($variant))),)+
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $ty {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<$ty, D::Error> {
                let name = String::deserialize(deserializer)?;
                <$ty>::from_name(&name).ok_or_else(|| serde::de::Error::custom(format!("unknown {} '{name}'", stringify!($ty))))
            }
        }
    };
}

wit_names!(Capability {
    Prompt => "prompt",
    Commands => "commands",
    Headless => "headless",
    HookConfig => "hook-config",
    HookPayloads => "hook-payloads",
    Transcripts => "transcripts",
    Usage => "usage",
    Faults => "faults",
    Screen => "screen",
    Acp => "acp",
});

wit_names!(CanonicalEvent {
    SessionStart => "session-start",
    PromptSubmit => "prompt-submit",
    Stop => "stop",
    StopFailure => "stop-failure",
    SubagentStop => "subagent-stop",
    SessionEnd => "session-end",
    PreCompact => "pre-compact",
    Notification => "notification",
    PermissionRequest => "permission-request",
    ToolStart => "tool-start",
    ToolEnd => "tool-end",
    Other => "other",
});

impl CanonicalEvent {
    /// A `[hooks.events]` value (drover's `profile::known::CANONICAL_EVENTS`) as the
    /// event it names: the one place profile spellings are read.
    pub fn from_profile_name(name: &str) -> Option<CanonicalEvent> {
        use CanonicalEvent as E;
        Some(match name {
            "SessionStart" => E::SessionStart,
            "UserPromptSubmit" | "PromptSubmit" => E::PromptSubmit,
            "Stop" => E::Stop,
            "StopFailure" => E::StopFailure,
            "SubagentStop" => E::SubagentStop,
            "SessionEnd" => E::SessionEnd,
            "PreCompact" => E::PreCompact,
            "Notification" => E::Notification,
            "PermissionRequest" => E::PermissionRequest,
            "PreToolUse" | "ToolStart" => E::ToolStart,
            "PostToolUse" | "ToolEnd" => E::ToolEnd,
            _ => return None,
        })
    }
}

wit_names!(PromptKind {
    Permission => "permission",
    TrustDialog => "trust-dialog",
    HooksReview => "hooks-review",
    ModelNudge => "model-nudge",
    ResumeChoice => "resume-choice",
    Question => "question",
    Other => "other",
});

wit_names!(FaultKind {
    Auth => "auth",
    RateLimit => "rate-limit",
    Quota => "quota",
    Overload => "overload",
    ServerError => "server-error",
    Network => "network",
    TrustDialog => "trust-dialog",
    Unknown => "unknown",
    Privileges => "privileges",
});

wit_names!(SeatState {
    Working => "working",
    Idle => "idle",
    Done => "done",
    Blocked => "blocked",
    Unknown => "unknown",
});

wit_names!(TurnOutcome {
    Success => "success",
    Failed => "failed",
    Blocked => "blocked",
    Unknown => "unknown",
});
