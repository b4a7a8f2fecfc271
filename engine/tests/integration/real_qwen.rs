//! drover against the real Qwen Code (0.24.4) and drover-model-server.
//! Skipped (with a message) when the CLI is not provisioned, except under
//! CI. See tests/support/real.rs for the isolation and seeding.
//!
//! A headless turn makes two requests (the turn and a memory extractor).
//! 5xx, 429 and connection failures are retried for 70–90 s whatever
//! `generationConfig.maxRetries` says (7 attempts, 1.5 s doubling to 30 s),
//! so the fault cases get a longer deadline and run side by side.

use crate::support;

use std::path::Path;

use serde_json::Value;

use support::real_acp::{self, AcpCase};
use support::real_scenarios::{self as scenario, Case, Ends, Fault, Mode};

/// A shell command that needs a permission.
const TOOL: &str = r#"{"name":"run_shell_command","args":{"command":"echo hi > hi.txt","description":"write hi.txt"},"count":1}"#;

static CASE: Case = Case {
    cli: "qwen",
    args: &[],
    protocol: "chat",
    stop_event: "Stop",
    stop_carries_reply: true,
    blocked_args: &["--arg", "--approval-mode", "--arg", "default"],
    tool: TOOL,
    faults: &[
        Fault {
            name: "500",
            mode: Mode::Status(500),
            kind: "server-error",
            evidence: "[API Error: 500 The server had an error",
            ends: Ends::Exits,
        },
        Fault {
            name: "503",
            mode: Mode::Status(503),
            kind: "overload",
            evidence: "[API Error: 503 The engine is currently overloaded",
            ends: Ends::Exits,
        },
        Fault {
            name: "429",
            mode: Mode::Status(429),
            kind: "rate-limit",
            evidence: "[API Error: 429 Rate limit reached for requests",
            ends: Ends::Exits,
        },
        Fault {
            name: "401",
            mode: Mode::Status(401),
            kind: "auth",
            evidence: "[API Error: 401 Incorrect API key provided",
            ends: Ends::Exits,
        },
        // A connection closed without an answer: qwen prints "Retrying
        // provider attempt (0 buffered tool call(s) discarded)." once and
        // retries silently for minutes (its back-off, not the machine's
        // speed: one run gave up after 234 s with "Connection error"), so
        // within drover's 45 s deadline there is no sentence to classify.
        Fault {
            name: "drop",
            mode: Mode::Drop,
            kind: "none",
            evidence: "",
            ends: Ends::AtDeadline(45),
        },
        Fault {
            name: "closed-port",
            mode: Mode::ClosedPort,
            kind: "network",
            evidence: "Connection error",
            ends: Ends::Exits,
        },
    ],
    user_hooks,
    accounted: scenario::every_request,
};

/// The user's project settings. `$version` is what Qwen Code 0.24 stamps on
/// a settings file it has migrated; without it, qwen rewrites the file
/// (its own formatting, `"$version": 4` appended) the first time it starts.
fn user_hooks(record: &Path) -> Vec<(&'static str, String)> {
    let text = format!(
        r#"{{
  "$version": 4,
  "hooks": {{
    "Stop": [
      {{
        "matcher": "*",
        "hooks": [
          {{ "type": "command", "command": "echo user-stop >> {}" }}
        ]
      }}
    ]
  }}
}}
"#,
        record.display()
    );
    vec![(".qwen/settings.json", text)]
}

#[test]
fn headless_completes_resumes_and_counts_usage() {
    scenario::headless(&CASE);
}

#[test]
fn tmux_completes_on_the_stop_hook() {
    scenario::tmux(&CASE);
}

#[test]
fn faults_carry_the_clis_sentence() {
    scenario::faults(&CASE);
}

#[test]
fn tmux_permission_prompt_blocks() {
    scenario::blocked(&CASE);
}

#[test]
fn hooks_install_is_accepted_and_remove_restores_the_users_file() {
    scenario::hooks(&CASE);
}

static ACP: AcpCase = AcpCase {
    cli: "qwen",
    args: &[],
    protocol: "chat",
    tool: TOOL,
    accounted: main_turn,
    resumes: true,
};

/// In ACP mode the transcript (and the protocol) account for the turn's
/// own model calls, not Qwen's managed auto-memory extractor call after it,
/// whose last user message is not the prompt (so the server answers it
/// with its default text, `OK`).
fn main_turn(request: &Value) -> bool {
    request["reply"] != "OK"
}

#[test]
fn acp_run_completes_and_resumes_with_session_load() {
    real_acp::run(&ACP);
}

#[test]
fn acp_seat_keeps_its_agent_and_resumes_after_its_host_died() {
    real_acp::seat(&ACP);
}

#[test]
fn acp_permission_question_is_answered_by_a_person_and_by_the_policy() {
    real_acp::questions(&ACP);
}

#[test]
fn fresh_config_dialogs_are_answered_then_a_message_completes() {
    scenario::fresh_config(&CASE, &[], "allow_once");
}
