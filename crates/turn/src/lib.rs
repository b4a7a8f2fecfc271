//! drover-turn: what every driver of a turn shares. A turn is one prompt
//! to a seat's CLI and everything until its verdict (nudges included):
//! [`TurnSpec`] in, [`TurnReport`] out. `drover-drive` has the four drivers
//! (headless, pane, ACP, Ray) and recovery; this crate has what they all
//! stand on:
//!
//! - [`launch`], the one way to a [`Context`] (profile and component, with
//!   their provenance, trust-checked), and [`spawn`], the gate every
//!   CLI start passes;
//! - [`component`], the trait through which a driver asks the seat's
//!   adapter (the sandboxed component, or a test double);
//! - [`verdict`], the rules that turn a turn's evidence into its verdict,
//!   used live and by recovery alike, and [`watchdog`], the cancel,
//!   deadline, heartbeat, budget and stall checks every driver runs under;
//! - [`records`], the typed, sealed records of what a task started;
//! - [`drops`], the hook relay's drops parsed by the seat's component;
//!   [`conversations`] and [`usage`], what each conversation's turns spent;
//!   [`privileges`], what a seat may do.

pub mod budget;
pub mod clock;
pub mod component;
mod context;
pub mod conversations;
pub mod faults;
pub mod spawn;
pub use faults::tail_lines;
pub mod drops;
pub mod launch;
pub mod privileges;
pub mod records;
pub mod result_file;
pub mod shared;
pub mod usage;
pub mod verdict;
pub mod watchdog;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub use context::Context;
pub use launch::{LaunchError, Prepared};

use drover_types::wit;

pub use drover_types::{BudgetMode, Verdict};

/// Which conversation a session continues.
#[derive(Debug, Clone, PartialEq)]
pub enum Conversation {
    Fresh,
    Preset(String),
    Resume(String),
}

/// The longest conversation id drover passes on (CLIs use UUIDs or shorter).
const CONVERSATION_ID_MAX: usize = 256;

impl Conversation {
    /// A new conversation for `profile`'s headless turns: under an id drover
    /// picks (a random UUID) when the CLI takes one from its caller (`[turn]
    /// session_id`), so the turn's logs and its resumption are found by it;
    /// else the CLI names it.
    pub fn new_for(profile: &drover_profile::Profile) -> Conversation {
        if profile.turn.session_id.is_empty() {
            return Conversation::Fresh;
        }
        match drover_run::new_conversation_id() {
            Ok(id) => Conversation::Preset(id),
            Err(e) => {
                tracing::warn!("no conversation id for {}: {e}", profile.name);
                Conversation::Fresh
            }
        }
    }

    /// The conversation as the component receives it, to put in the CLI's
    /// argv. An id can come from a record a checkout committed
    /// (`conversations.jsonl`, a seat), from a CLI's output (the session id it
    /// reported) or from the command line; whatever its source, it reaches
    /// argv only as a plain id, so it can never be read as an option
    /// (`--mcp-config=…`, `-c key=value`) or split into several words.
    pub fn to_wit(&self) -> Result<wit::Conversation, String> {
        Ok(match self {
            Conversation::Fresh => wit::Conversation::Fresh,
            Conversation::Preset(id) => wit::Conversation::Preset(plain_id(id)?),
            Conversation::Resume(id) => wit::Conversation::Resume(plain_id(id)?),
        })
    }
}

/// `id` if it is a plain conversation id: not empty, not starting with `-`,
/// no whitespace or control character, at most [`CONVERSATION_ID_MAX`] bytes.
pub fn plain_id(id: &str) -> Result<String, String> {
    let shown = || drover_types::text::truncate_chars(&format!("{id:?}"), 80);
    if id.is_empty() {
        return Err("the conversation id is empty".to_string());
    }
    if id.starts_with('-') {
        return Err(format!(
            "the conversation id {} starts with '-': a CLI would read it as an option",
            shown()
        ));
    }
    if id.len() > CONVERSATION_ID_MAX {
        return Err(format!(
            "the conversation id {} is longer than {CONVERSATION_ID_MAX} bytes",
            shown()
        ));
    }
    if id.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "the conversation id {} holds whitespace or a control character",
            shown()
        ));
    }
    Ok(id.to_string())
}

#[derive(Debug, Clone)]
pub struct TurnSpec {
    pub task: String,
    /// The canonical prompt (`/skill args` or plain text).
    pub prompt: String,
    pub cwd: PathBuf,
    /// Extra environment for the CLI, on top of the profile's.
    pub env: Vec<(String, String)>,
    /// Empty = the CLI's default.
    pub model: String,
    pub conversation: Conversation,
    /// Replaces the profile's bypass args when set.
    pub extra_args: Option<Vec<String>>,
    pub timeout: Duration,
    /// A file the work must write before the session counts as completed.
    pub result_file: Option<PathBuf>,
    /// How long to wait for the result file after a Stop.
    pub result_wait: Duration,
    /// Nudges typed when a turn ends without the result file.
    pub stop_nudges: u32,
    /// Silence (no log activity) that counts as a stall; `None` = never.
    pub stall_grace: Option<Duration>,
    /// Nudges typed on silence before the session is called stalled.
    pub stall_nudges: u32,
    pub token_budget: Option<u64>,
    /// Dollar budget, checked like the token budget (either one trips it).
    pub cost_budget: Option<f64>,
    pub budget_mode: BudgetMode,
    pub budget_grace: Duration,
    pub cache_read_weight: f64,
    /// How often the heartbeat file is written and the budget sampled.
    pub heartbeat: Duration,
    /// Time a killed seat gets before its processes are force-killed.
    pub teardown_grace: Duration,
    /// tmux: leave the pane running after the session (for a human).
    pub keep: bool,
    /// Set (by a signal handler) to stop the session early: the seat is
    /// torn down and the verdict is `crashed` ("interrupted").
    pub cancel: Option<Arc<AtomicBool>>,
}

impl TurnSpec {
    pub fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// A spec with drover's defaults (bmad-loop's constants where it has one).
    pub fn new(task: &str, prompt: &str, cwd: PathBuf) -> TurnSpec {
        TurnSpec {
            task: task.to_string(),
            prompt: prompt.to_string(),
            cwd,
            env: Vec::new(),
            model: String::new(),
            conversation: Conversation::Fresh,
            extra_args: None,
            timeout: Duration::from_secs(90 * 60),
            result_file: None,
            result_wait: Duration::from_secs(15),
            stop_nudges: 1,
            stall_grace: None,
            stall_nudges: 0,
            token_budget: None,
            cost_budget: None,
            budget_mode: BudgetMode::Off,
            budget_grace: Duration::from_secs(240),
            cache_read_weight: 0.1,
            heartbeat: Duration::from_secs(30),
            teardown_grace: Duration::from_secs(20),
            keep: false,
            cancel: None,
        }
    }
}

/// Token totals: the one token-count type, shared with `drover usage`.
pub use drover_usage::Tokens;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FaultReport {
    pub kind: wit::FaultKind,
    pub evidence: String,
    pub retry_after_secs: Option<u32>,
    pub rule: String,
    /// What to do about it, when drover knows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    pub started_ns: u64,
    pub ended_ns: u64,
    pub duration_ms: u64,
    /// Which clock fired a timeout: `monotonic`, `wall` (a suspended host)
    /// or `both`.
    pub timeout_clock: Option<String>,
}

impl TurnReport {
    /// A report of `task` in `ctx`'s run on `workspace` that says nothing
    /// yet but its verdict and reason, timed from `started_ns` to now;
    /// drivers fill in the rest.
    pub fn of_run(
        ctx: &Context,
        task: &str,
        workspace: drover_types::WorkspaceKind,
        status: Verdict,
        reason: String,
        started_ns: u64,
    ) -> TurnReport {
        let ended = drover_run::now_ns();
        TurnReport {
            status,
            run_id: ctx.run.id().to_string(),
            task: task.to_string(),
            cli: ctx.profile().name.clone(),
            workspace,
            reason,
            session_id: None,
            transcript_path: None,
            reply: None,
            usage: None,
            cost_usd: None,
            usage_approximate: false,
            fault: None,
            blocked: None,
            stop_seen: false,
            result: None,
            exit_code: None,
            budget_weighted: None,
            timings: Timings {
                started_ns,
                ended_ns: ended,
                duration_ms: ended.saturating_sub(started_ns) / 1_000_000,
                timeout_clock: None,
            },
            logs: Vec::new(),
        }
    }

    /// The seat state a verdict leaves: done when it completed, blocked when
    /// it ended on a prompt, else unknown.
    pub fn seat_state(&self) -> wit::SeatState {
        match self.status {
            Verdict::Completed => wit::SeatState::Done,
            _ if self.blocked.is_some() => wit::SeatState::Blocked,
            _ => wit::SeatState::Unknown,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnReport {
    pub status: Verdict,
    pub run_id: String,
    pub task: String,
    pub cli: String,
    pub workspace: drover_types::WorkspaceKind,
    /// Why, in words.
    pub reason: String,
    pub session_id: Option<String>,
    pub transcript_path: Option<String>,
    pub reply: Option<String>,
    pub usage: Option<Tokens>,
    /// What `usage` cost; `None` when it is unknown (no usage, or a model
    /// the price table does not know). Absent in results written before
    /// costs were recorded.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// `usage` was read from what the CLI printed for people (`Tokens: 3.1k
    /// sent`, the profile's `[turn.usage]`): an estimate, not a count.
    #[serde(default)]
    pub usage_approximate: bool,
    pub fault: Option<FaultReport>,
    /// The prompt kind a blocked seat was showing when the session ended.
    pub blocked: Option<wit::PromptKind>,
    pub stop_seen: bool,
    /// The result file's contents (JSON when it parses, else text).
    pub result: Option<serde_json::Value>,
    pub exit_code: Option<i32>,
    pub budget_weighted: Option<u64>,
    pub timings: Timings,
    pub logs: Vec<PathBuf>,
}

/// The environment a seat's CLI gets on top of its inherited one: the
/// profile's (and, for headless turns, `[turn]`'s), the command's, the
/// session's, and drover's own variables for the hook relay and the work.
pub fn seat_env(
    ctx: &Context,
    spec: &TurnSpec,
    command: &wit::Command,
    headless: bool,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = ctx
        .profile()
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if headless {
        env.extend(
            ctx.profile()
                .turn
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone())),
        );
    }
    env.extend(command.env.iter().cloned());
    env.extend(spec.env.iter().cloned());
    env.push((
        crate::drops::ENV_RUN_DIR.to_string(),
        ctx.run.root().to_string_lossy().into_owned(),
    ));
    env.push((crate::drops::ENV_TASK_ID.to_string(), spec.task.clone()));
    env.push((
        crate::drops::ENV_SEAT_CLI.to_string(),
        ctx.profile().name.clone(),
    ));
    if let Some(path) = &spec.result_file {
        env.push((
            "DROVER_RESULT_FILE".to_string(),
            path.to_string_lossy().into_owned(),
        ));
    }
    env
}

/// Hook detail worth showing for a blocked seat: the CLI's reason (tool
/// name, notification type) or message.
pub fn hook_evidence(event: &drover_run::HookRecord) -> Option<String> {
    let text = match (&event.reason, &event.last_message) {
        (Some(reason), _) => format!("{}: {reason}", event.native),
        (None, Some(message)) => message.clone(),
        (None, None) => return None,
    };
    drover_run::status::clean_evidence(&text)
}

/// Writes `tasks/<task>/session.json` and the journal's verdict line.
pub fn record_verdict(ctx: &Context, result: &TurnReport) {
    let path = ctx.run.task_dir(&result.task).join("session.json");
    if let Err(e) = drover_run::write_json_atomic(&path, result) {
        tracing::warn!(path = %path.display(), "cannot write the session result: {e}");
    }
    ctx.verdict(
        &result.task,
        result.status,
        "session",
        serde_json::json!({
            "reason": result.reason,
            "fault": result.fault.as_ref().map(|f| f.kind),
            "cost_usd": result.cost_usd,
            "usage_approximate": result.usage_approximate,
        }),
    );
}
