//! The event file a hook relay drops into `events/`: one JSON object per
//! hook call, written by `drover hook` and read by the session's watcher.

use serde::{Deserialize, Serialize};

use drover_types::wit::{CanonicalEvent, PromptKind};

/// Payload bytes kept in a record when the adapter could not parse them.
pub const RAW_PAYLOAD_MAX: usize = 64 << 10;
/// Characters of the last assistant message kept.
pub const LAST_MESSAGE_MAX: usize = 4096;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HookRecord {
    /// Format version.
    pub v: u32,
    /// Wall-clock ns when the relay ran (orders events; floors stale ones).
    pub ts: u64,
    pub task: String,
    pub cli: String,
    /// The CLI's own event name.
    pub native: String,
    pub kind: CanonicalEvent,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub transcript_path: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
    #[serde(default)]
    pub subagent: bool,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub prompt_kind: Option<PromptKind>,
    #[serde(default)]
    pub last_message: Option<String>,
    #[serde(default)]
    pub fields_found: Vec<String>,
    /// Why the adapter could not parse the payload (the kind then comes from
    /// the profile's event map).
    #[serde(default)]
    pub error: Option<String>,
    /// The raw payload, kept only when parsing failed (capped).
    #[serde(default)]
    pub payload: Option<String>,
}
