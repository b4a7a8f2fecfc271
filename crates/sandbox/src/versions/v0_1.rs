//! `drover:adapter@0.1`, frozen in `wit/since_v0_1/`: its bindings, and the
//! conversions between its types and the latest ones.
//!
//! Arguments go down ([`Downgrade`]: the latest type to 0.1's, dropping what
//! 0.1 does not have), answers come up ([`Upgrade`]: 0.1's type to the
//! latest, filling what 0.1 did not say). The `record!` and `enumeration!`
//! lines list each type's fields or cases once; when 0.2 changes a type, the
//! compiler points at its line here (docs/wit.md).

wasmtime::component::bindgen!({
    world: "adapter",
    path: "../../wit/since_v0_1",
    additional_derives: [PartialEq],
});

use self::drover::adapter::types as old;
use super::latest::drover::adapter::types as new;

/// A latest-version value as 0.1 spells it (for arguments).
pub(crate) trait Downgrade {
    type Old;
    fn downgrade(&self) -> Self::Old;
}

/// A 0.1 value as the latest version spells it (for answers).
pub(crate) trait Upgrade {
    type New;
    fn upgrade(self) -> Self::New;
}

macro_rules! unchanged {
    ($($ty:ty),+) => {$(
        impl Downgrade for $ty {
            type Old = $ty;
            fn downgrade(&self) -> $ty {
                self.clone()
            }
        }
        impl Upgrade for $ty {
            type New = $ty;
            fn upgrade(self) -> $ty {
                self
            }
        }
    )+};
}

unchanged!(String, bool, u8, u32, u64, i32);

impl Downgrade for str {
    type Old = String;
    fn downgrade(&self) -> String {
        self.to_string()
    }
}

impl<T: Downgrade> Downgrade for [T] {
    type Old = Vec<T::Old>;
    fn downgrade(&self) -> Vec<T::Old> {
        self.iter().map(Downgrade::downgrade).collect()
    }
}

impl<T: Downgrade> Downgrade for Vec<T> {
    type Old = Vec<T::Old>;
    fn downgrade(&self) -> Vec<T::Old> {
        self.as_slice().downgrade()
    }
}

impl<T: Downgrade> Downgrade for Option<T> {
    type Old = Option<T::Old>;
    fn downgrade(&self) -> Option<T::Old> {
        self.as_ref().map(Downgrade::downgrade)
    }
}

impl<A: Downgrade, B: Downgrade> Downgrade for (A, B) {
    type Old = (A::Old, B::Old);
    fn downgrade(&self) -> Self::Old {
        (self.0.downgrade(), self.1.downgrade())
    }
}

impl<T: Upgrade> Upgrade for Vec<T> {
    type New = Vec<T::New>;
    fn upgrade(self) -> Vec<T::New> {
        self.into_iter().map(Upgrade::upgrade).collect()
    }
}

impl<T: Upgrade> Upgrade for Option<T> {
    type New = Option<T::New>;
    fn upgrade(self) -> Option<T::New> {
        self.map(Upgrade::upgrade)
    }
}

impl<T: Upgrade, E: Upgrade> Upgrade for Result<T, E> {
    type New = Result<T::New, E::New>;
    fn upgrade(self) -> Self::New {
        self.map(Upgrade::upgrade).map_err(Upgrade::upgrade)
    }
}

impl<A: Upgrade, B: Upgrade> Upgrade for (A, B) {
    type New = (A::New, B::New);
    fn upgrade(self) -> Self::New {
        (self.0.upgrade(), self.1.upgrade())
    }
}

/// A record whose fields are the same in both versions, converted field by
/// field: `up` for answers, `down` for arguments.
macro_rules! record {
    (up $name:ident { $($field:ident),+ $(,)? }) => {
        impl Upgrade for old::$name {
            type New = new::$name;
            fn upgrade(self) -> new::$name {
                new::$name { $($field: self.$field.upgrade()),+ }
            }
        }
    };
    (down $name:ident { $($field:ident),+ $(,)? }) => {
        impl Downgrade for new::$name {
            type Old = old::$name;
            fn downgrade(&self) -> old::$name {
                old::$name { $($field: self.$field.downgrade()),+ }
            }
        }
    };
}

/// An enum whose cases are the same in both versions.
macro_rules! enumeration {
    (up $name:ident { $($case:ident),+ $(,)? }) => {
        impl Upgrade for old::$name {
            type New = new::$name;
            fn upgrade(self) -> new::$name {
                match self {
                    $(old::$name::$case => new::$name::$case,)+
                }
            }
        }
    };
}

// Answers.
record!(up Description {
    name,
    adapter_version,
    wit_version,
    capabilities,
    dialects,
    usage_parsers,
    location_env,
    limitations,
});
record!(up UsageParser { name, needles });
record!(up Command { argv, env, stdin });
record!(up TurnResult {
    outcome,
    reply,
    conversation_id,
    error,
    usage,
    prompt_kind,
});
record!(up UsageReport {
    entries,
    rejected_rows,
});
record!(up UsageEntry {
    session,
    day,
    model,
    usage,
});
record!(up Usage {
    input,
    output,
    cache_read,
    cache_write,
    reasoning,
    requests,
});
record!(up HookEvent {
    kind,
    native,
    session_id,
    transcript_path,
    cwd,
    subagent,
    reason,
    prompt_kind,
    last_message,
    fields_found,
});
record!(up HookEdit { text, changed });
record!(up HookStatus {
    registered,
    missing,
});
record!(up TranscriptGlob {
    base,
    pattern,
    format,
    parser,
});
record!(up Fault {
    kind,
    evidence,
    retry_after_secs,
    rule,
});
// 0.1 reads no dialogs: its blocked screens come without options.
impl Upgrade for old::ScreenReading {
    type New = new::ScreenReading;
    fn upgrade(self) -> new::ScreenReading {
        new::ScreenReading {
            state: self.state.upgrade(),
            prompt_kind: self.prompt_kind.upgrade(),
            rule: self.rule,
            evidence: self.evidence,
            dialog: None,
        }
    }
}
enumeration!(up Capability {
    Prompt,
    Commands,
    Headless,
    HookConfig,
    HookPayloads,
    Transcripts,
    Usage,
    Faults,
    Screen,
});
enumeration!(up TurnOutcome {
    Success,
    Failed,
    Blocked,
    Unknown,
});
enumeration!(up PromptKind {
    Permission,
    TrustDialog,
    HooksReview,
    ModelNudge,
    ResumeChoice,
    Question,
    Other,
});
enumeration!(up CanonicalEvent {
    SessionStart,
    PromptSubmit,
    Stop,
    StopFailure,
    SubagentStop,
    SessionEnd,
    PreCompact,
    Notification,
    PermissionRequest,
    ToolStart,
    ToolEnd,
    Other,
});
enumeration!(up GlobBase {
    Home,
    Cwd,
    Absolute,
});
enumeration!(up FaultKind {
    Auth,
    RateLimit,
    Quota,
    Overload,
    ServerError,
    Network,
    TrustDialog,
    Unknown,
});
enumeration!(up SeatState {
    Working,
    Idle,
    Done,
    Blocked,
    Unknown,
});

impl Upgrade for old::AdapterError {
    type New = new::AdapterError;
    fn upgrade(self) -> new::AdapterError {
        match self {
            old::AdapterError::Unsupported(m) => new::AdapterError::Unsupported(m),
            old::AdapterError::InvalidInput(m) => new::AdapterError::InvalidInput(m),
        }
    }
}

// Arguments.
record!(down Profile {
    name,
    binary,
    prompt_template,
    launch_args,
    bypass_args,
    model_flag,
    dialect,
    hook_events,
    usage_parser,
    env_fault_patterns,
    turn_args,
    settings,
});
record!(down LaunchRequest {
    prompt,
    model,
    extra_args,
    conversation,
});
record!(down TurnOutput {
    stdout,
    stderr,
    exit_code,
    prior_usage,
});
record!(down Usage {
    input,
    output,
    cache_read,
    cache_write,
    reasoning,
    requests,
});
record!(down HookInstall {
    dialect,
    relay_command,
    events,
    marker,
});
record!(down LocationContext { home, cwd, env });
record!(down Screen { rows, title });

impl Downgrade for new::Conversation {
    type Old = old::Conversation;
    fn downgrade(&self) -> old::Conversation {
        match self {
            new::Conversation::Fresh => old::Conversation::Fresh,
            new::Conversation::Preset(id) => old::Conversation::Preset(id.clone()),
            new::Conversation::Resume(id) => old::Conversation::Resume(id.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_go_down_and_answers_come_up_unchanged() {
        let request = new::LaunchRequest {
            prompt: "/review x".to_string(),
            model: "m".to_string(),
            extra_args: Some(vec!["--yes".to_string()]),
            conversation: new::Conversation::Resume("c1".to_string()),
        };
        let old_request = request.downgrade();
        assert_eq!(old_request.extra_args, request.extra_args);
        assert_eq!(
            old_request.conversation,
            old::Conversation::Resume("c1".to_string())
        );
        let answer: Result<old::TurnResult, old::AdapterError> = Ok(old::TurnResult {
            outcome: old::TurnOutcome::Blocked,
            reply: Some("r".to_string()),
            conversation_id: None,
            error: None,
            usage: Some(old::UsageReport {
                entries: vec![old::UsageEntry {
                    session: "s".to_string(),
                    day: "2026-12-01".to_string(),
                    model: "m".to_string(),
                    usage: old::Usage {
                        input: 1,
                        output: 2,
                        cache_read: 3,
                        cache_write: 4,
                        reasoning: 5,
                        requests: 6,
                    },
                }],
                rejected_rows: 7,
            }),
            prompt_kind: Some(old::PromptKind::TrustDialog),
        });
        let upgraded = answer.upgrade().expect("ok stays ok");
        assert_eq!(upgraded.outcome, new::TurnOutcome::Blocked);
        assert_eq!(upgraded.prompt_kind, Some(new::PromptKind::TrustDialog));
        let report = upgraded.usage.expect("usage");
        assert_eq!(
            (report.rejected_rows, report.entries[0].usage.reasoning),
            (7, 5)
        );
        let refused: Result<old::Command, old::AdapterError> =
            Err(old::AdapterError::InvalidInput("bad".to_string()));
        assert_eq!(
            refused.upgrade(),
            Err(new::AdapterError::InvalidInput("bad".to_string()))
        );
    }
}
