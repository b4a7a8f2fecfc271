//! The records and enums of the `drover:adapter` WIT's `types` interface
//! (the latest version), as plain Rust. Field and variant names are the
//! WIT's, in Rust case; docs/wit.md says what each means. The enums print
//! and serialize as the WIT spells them (`rate-limit`).

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum Capability {
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

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Description {
    pub name: String,
    pub adapter_version: String,
    pub wit_version: String,
    pub capabilities: Vec<Capability>,
    pub dialects: Vec<String>,
    pub usage_parsers: Vec<UsageParser>,
    pub location_env: Vec<String>,
    pub limitations: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageParser {
    pub name: String,
    pub needles: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Profile {
    pub name: String,
    pub binary: String,
    pub prompt_template: String,
    pub launch_args: Vec<String>,
    pub bypass_args: Vec<String>,
    pub model_flag: String,
    pub dialect: String,
    pub hook_events: Vec<(String, String)>,
    pub usage_parser: String,
    pub env_fault_patterns: Vec<String>,
    pub turn_args: Vec<String>,
    pub settings: Vec<(String, String)>,
    pub turn_argv: Vec<String>,
    pub turn_resume: Vec<String>,
    pub turn_session_id: Vec<String>,
    pub turn_output: String,
}

#[derive(Clone, PartialEq, Eq)]
pub enum AdapterError {
    Unsupported(String),
    InvalidInput(String),
}

// As the wasmtime bindings print it (`AdapterError::Unsupported("…")`),
// which messages and tests already quote; Display is the same.
impl std::fmt::Debug for AdapterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AdapterError::Unsupported(m) => {
                f.debug_tuple("AdapterError::Unsupported").field(m).finish()
            }
            AdapterError::InvalidInput(m) => f
                .debug_tuple("AdapterError::InvalidInput")
                .field(m)
                .finish(),
        }
    }
}

impl std::fmt::Display for AdapterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for AdapterError {}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Conversation {
    Fresh,
    Preset(String),
    Resume(String),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchRequest {
    pub prompt: String,
    pub model: String,
    pub extra_args: Option<Vec<String>>,
    pub conversation: Conversation,
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Command {
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub stdin: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct TurnOutput {
    pub stdout: String,
    pub stderr: String,
    pub exit_code: Option<i32>,
    pub prior_usage: Option<Usage>,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum TurnOutcome {
    Success,
    Failed,
    Blocked,
    Unknown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub reasoning: u64,
    pub requests: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsageEntry {
    pub session: String,
    pub day: String,
    pub model: String,
    pub usage: Usage,
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct UsageReport {
    pub entries: Vec<UsageEntry>,
    pub rejected_rows: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnResult {
    pub outcome: TurnOutcome,
    pub reply: Option<String>,
    pub conversation_id: Option<String>,
    pub error: Option<String>,
    pub usage: Option<UsageReport>,
    pub prompt_kind: Option<PromptKind>,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum CanonicalEvent {
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

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum PromptKind {
    Permission,
    TrustDialog,
    HooksReview,
    ModelNudge,
    ResumeChoice,
    Question,
    Other,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookEvent {
    pub kind: CanonicalEvent,
    pub native: String,
    pub session_id: Option<String>,
    pub transcript_path: Option<String>,
    pub cwd: Option<String>,
    pub subagent: bool,
    pub reason: Option<String>,
    pub prompt_kind: Option<PromptKind>,
    pub last_message: Option<String>,
    pub fields_found: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct HookInstall {
    pub dialect: String,
    pub relay_command: String,
    pub events: Vec<(String, String)>,
    pub marker: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookEdit {
    pub text: String,
    pub changed: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct HookStatus {
    pub registered: Vec<String>,
    pub missing: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GlobBase {
    Home,
    Cwd,
    Absolute,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TranscriptGlob {
    pub base: GlobBase,
    pub pattern: String,
    pub format: String,
    pub parser: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LocationContext {
    pub home: String,
    pub cwd: String,
    pub env: Vec<(String, String)>,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum FaultKind {
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

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub evidence: String,
    pub retry_after_secs: Option<u32>,
    pub rule: String,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum SeatState {
    Working,
    Idle,
    Done,
    Blocked,
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Screen {
    pub rows: Vec<String>,
    pub title: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChoiceKind {
    AllowOnce,
    AllowAlways,
    RejectOnce,
    RejectAlways,
    Other,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    pub label: String,
    pub kind: ChoiceKind,
    pub keys: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dialog {
    pub text: String,
    pub choices: Vec<Choice>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScreenReading {
    pub state: SeatState,
    pub prompt_kind: Option<PromptKind>,
    pub rule: String,
    pub evidence: String,
    pub dialog: Option<Dialog>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_print_as_the_bindings_printed_them() {
        assert_eq!(format!("{:?}", SeatState::Blocked), "SeatState::Blocked");
        assert_eq!(
            AdapterError::Unsupported("no".to_string()).to_string(),
            "AdapterError::Unsupported(\"no\")"
        );
        assert_eq!(
            format!("{:?}", Some(PromptKind::TrustDialog)),
            "Some(PromptKind::TrustDialog)"
        );
    }
}
