//! The boundary between the wasmtime bindings and drover's plain types
//! (`drover-types`): every argument is crossed into the bindings just
//! before a call and every answer out of them just after it is bounded, so
//! nothing above this crate names a generated type (or compiles wasmtime to
//! speak the vocabulary). Field names are the same on both sides; the
//! macros keep each mapping to one line per type, and the compiler checks
//! every field and variant.

use drover_types::{requests as plain_requests, wit as plain};

use crate::versions::latest::drover::adapter::types as bind;
use crate::versions::latest::exports::drover::adapter::requests as bind_requests;

/// A value moved across the boundary, in either direction.
pub(crate) trait Cross<T> {
    fn cross(self) -> T;
}

macro_rules! same {
    ($($ty:ty),+) => {$(
        impl Cross<$ty> for $ty {
            fn cross(self) -> $ty {
                self
            }
        }
    )+};
}

same!(String, bool, u32, u64, i32);

impl<A: Cross<B>, B> Cross<Vec<B>> for Vec<A> {
    fn cross(self) -> Vec<B> {
        self.into_iter().map(Cross::cross).collect()
    }
}

impl<A: Cross<B>, B> Cross<Option<B>> for Option<A> {
    fn cross(self) -> Option<B> {
        self.map(Cross::cross)
    }
}

impl<A1: Cross<B1>, B1, A2: Cross<B2>, B2> Cross<(B1, B2)> for (A1, A2) {
    fn cross(self) -> (B1, B2) {
        (self.0.cross(), self.1.cross())
    }
}

impl<A: Cross<B>, B, E: Cross<F>, F> Cross<Result<B, F>> for Result<A, E> {
    fn cross(self) -> Result<B, F> {
        self.map(Cross::cross).map_err(Cross::cross)
    }
}

/// A record: each field crossed, both ways.
macro_rules! record {
    ($bind:path, $plain:path { $($field:ident),+ $(,)? }) => {
        impl Cross<$plain> for $bind {
            fn cross(self) -> $plain {
                use $plain as P;
                P { $($field: self.$field.cross()),+ }
            }
        }
        impl Cross<$bind> for $plain {
            fn cross(self) -> $bind {
                use $bind as B;
                B { $($field: self.$field.cross()),+ }
            }
        }
    };
}

/// An enum without payloads: each variant to its namesake, both ways.
macro_rules! cases {
    ($bind:path, $plain:path { $($case:ident),+ $(,)? }) => {
        impl Cross<$plain> for $bind {
            fn cross(self) -> $plain {
                use $bind as B;
                use $plain as P;
                match self { $(B::$case => P::$case),+ }
            }
        }
        impl Cross<$bind> for $plain {
            fn cross(self) -> $bind {
                use $bind as B;
                use $plain as P;
                match self { $(P::$case => B::$case),+ }
            }
        }
    };
}

cases!(
    bind::Capability,
    plain::Capability {
        Prompt,
        Commands,
        Headless,
        HookConfig,
        HookPayloads,
        Transcripts,
        Usage,
        Faults,
        Screen,
        Acp,
    }
);
cases!(
    bind::TurnOutcome,
    plain::TurnOutcome {
        Success,
        Failed,
        Blocked,
        Unknown
    }
);
cases!(
    bind::CanonicalEvent,
    plain::CanonicalEvent {
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
    }
);
cases!(
    bind::PromptKind,
    plain::PromptKind {
        Permission,
        TrustDialog,
        HooksReview,
        ModelNudge,
        ResumeChoice,
        Question,
        Other,
    }
);
cases!(
    bind::GlobBase,
    plain::GlobBase {
        Home,
        Cwd,
        Absolute
    }
);
cases!(
    bind::FaultKind,
    plain::FaultKind {
        Auth,
        RateLimit,
        Quota,
        Overload,
        ServerError,
        Network,
        TrustDialog,
        Unknown,
        Privileges,
    }
);
cases!(
    bind::SeatState,
    plain::SeatState {
        Working,
        Idle,
        Done,
        Blocked,
        Unknown
    }
);
cases!(
    bind::ChoiceKind,
    plain::ChoiceKind {
        AllowOnce,
        AllowAlways,
        RejectOnce,
        RejectAlways,
        Other,
    }
);

record!(
    bind::Description,
    plain::Description {
        name,
        adapter_version,
        wit_version,
        capabilities,
        dialects,
        usage_parsers,
        location_env,
        limitations,
    }
);
record!(bind::UsageParser, plain::UsageParser { name, needles });
record!(
    bind::Profile,
    plain::Profile {
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
        turn_argv,
        turn_resume,
        turn_session_id,
        turn_output,
    }
);
record!(
    bind::LaunchRequest,
    plain::LaunchRequest {
        prompt,
        model,
        extra_args,
        conversation
    }
);
record!(bind::Command, plain::Command { argv, env, stdin });
record!(
    bind::TurnOutput,
    plain::TurnOutput {
        stdout,
        stderr,
        exit_code,
        prior_usage
    }
);
record!(
    bind::Usage,
    plain::Usage {
        input,
        output,
        cache_read,
        cache_write,
        reasoning,
        requests
    }
);
record!(
    bind::UsageEntry,
    plain::UsageEntry {
        session,
        day,
        model,
        usage
    }
);
record!(
    bind::UsageReport,
    plain::UsageReport {
        entries,
        rejected_rows
    }
);
record!(
    bind::TurnResult,
    plain::TurnResult {
        outcome,
        reply,
        conversation_id,
        error,
        usage,
        prompt_kind,
    }
);
record!(
    bind::HookEvent,
    plain::HookEvent {
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
    }
);
record!(
    bind::HookInstall,
    plain::HookInstall {
        dialect,
        relay_command,
        events,
        marker
    }
);
record!(bind::HookEdit, plain::HookEdit { text, changed });
record!(
    bind::HookStatus,
    plain::HookStatus {
        registered,
        missing
    }
);
record!(
    bind::TranscriptGlob,
    plain::TranscriptGlob {
        base,
        pattern,
        format,
        parser
    }
);
record!(
    bind::LocationContext,
    plain::LocationContext { home, cwd, env }
);
record!(
    bind::Fault,
    plain::Fault {
        kind,
        evidence,
        retry_after_secs,
        rule
    }
);
record!(bind::Screen, plain::Screen { rows, title });
record!(bind::Choice, plain::Choice { label, kind, keys });
record!(bind::Dialog, plain::Dialog { text, choices });
record!(
    bind::ScreenReading,
    plain::ScreenReading {
        state,
        prompt_kind,
        rule,
        evidence,
        dialog
    }
);
record!(
    bind_requests::Request,
    plain_requests::Request {
        key,
        session,
        timestamp,
        model,
        cwd,
        input,
        output,
        reasoning,
        cache_read,
        cache_write_5m,
        cache_write_1h,
    }
);
record!(
    bind_requests::RequestTail,
    plain_requests::RequestTail {
        requests,
        rejected_rows
    }
);

impl Cross<plain::AdapterError> for bind::AdapterError {
    fn cross(self) -> plain::AdapterError {
        match self {
            bind::AdapterError::Unsupported(m) => plain::AdapterError::Unsupported(m),
            bind::AdapterError::InvalidInput(m) => plain::AdapterError::InvalidInput(m),
        }
    }
}

impl Cross<bind::AdapterError> for plain::AdapterError {
    fn cross(self) -> bind::AdapterError {
        match self {
            plain::AdapterError::Unsupported(m) => bind::AdapterError::Unsupported(m),
            plain::AdapterError::InvalidInput(m) => bind::AdapterError::InvalidInput(m),
        }
    }
}

impl Cross<plain::Conversation> for bind::Conversation {
    fn cross(self) -> plain::Conversation {
        match self {
            bind::Conversation::Fresh => plain::Conversation::Fresh,
            bind::Conversation::Preset(id) => plain::Conversation::Preset(id),
            bind::Conversation::Resume(id) => plain::Conversation::Resume(id),
        }
    }
}

impl Cross<bind::Conversation> for plain::Conversation {
    fn cross(self) -> bind::Conversation {
        match self {
            plain::Conversation::Fresh => bind::Conversation::Fresh,
            plain::Conversation::Preset(id) => bind::Conversation::Preset(id),
            plain::Conversation::Resume(id) => bind::Conversation::Resume(id),
        }
    }
}

/// An argument for a call: a copy, crossed.
pub(crate) fn arg<P: Clone + Cross<B>, B>(value: &P) -> B {
    value.clone().cross()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_screen_reading_crosses_back_unchanged() {
        let reading = plain::ScreenReading {
            state: plain::SeatState::Blocked,
            prompt_kind: Some(plain::PromptKind::TrustDialog),
            rule: "trust".to_string(),
            evidence: "Do you trust".to_string(),
            dialog: Some(plain::Dialog {
                text: "Do you trust this folder?".to_string(),
                choices: vec![plain::Choice {
                    label: "Yes".to_string(),
                    kind: plain::ChoiceKind::AllowOnce,
                    keys: vec!["enter".to_string()],
                }],
            }),
        };
        let there: bind::ScreenReading = arg(&reading);
        assert_eq!(there.state, bind::SeatState::Blocked);
        let back: plain::ScreenReading = there.cross();
        assert_eq!(back, reading);
    }
}
