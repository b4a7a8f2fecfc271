//! drover against the real Grok CLI (0.2.111, the PyPI wheel grok-cli-bin)
//! and drover-model-server. Skipped (with a message) when the CLI is not
//! provisioned, except under CI. See tests/support/real.rs for the isolation
//! and seeding.
//!
//! The first prompt of every session also makes a side call (Responses,
//! forcing a `session_title` tool) that grok accounts nowhere; usage is
//! compared with the other calls. `[models] max_retries = 0` makes a failed
//! call fail in a second or two; a closed port is retried silently for good.

use crate::support;

use std::path::Path;

use serde_json::Value;
use support::real_acp::{self, AcpCase};
use support::real_scenarios::{self as scenario, Case, Ends, Fault, Mode};

static CASE: Case = Case {
    cli: "grok",
    args: &[],
    protocol: "chat",
    stop_event: "Stop",
    stop_carries_reply: true,
    // The profile's bypass minus --always-approve: the TUI asks.
    blocked_args: &["--arg", "--trust"],
    tool: r#"{"name":"run_terminal_command","args":{"command":"echo hi > hi.txt","description":"write hi.txt"},"count":1}"#,
    faults: &[
        Fault {
            name: "500",
            mode: Mode::Status(500),
            kind: "server-error",
            evidence: "API error (status 500 Internal Server Error)",
            ends: Ends::Exits,
        },
        Fault {
            name: "503",
            mode: Mode::Status(503),
            kind: "overload",
            evidence: "API error (status 503 Service Unavailable)",
            ends: Ends::Exits,
        },
        Fault {
            name: "429",
            mode: Mode::Status(429),
            kind: "rate-limit",
            evidence: "requests: Rate limit reached for requests",
            ends: Ends::Exits,
        },
        Fault {
            name: "401",
            mode: Mode::Status(401),
            kind: "auth",
            evidence: "Unauthorized (401) from",
            ends: Ends::Exits,
        },
        Fault {
            name: "drop",
            mode: Mode::Drop,
            kind: "network",
            evidence: "reqwest error stream: error sending request for url",
            ends: Ends::Exits,
        },
        // Nothing listening: grok retries silently until drover's deadline,
        // so there is no sentence to classify.
        Fault {
            name: "closed-port",
            mode: Mode::ClosedPort,
            kind: "none",
            evidence: "",
            ends: Ends::AtDeadline(30),
        },
    ],
    user_hooks,
    accounted: not_a_side_call,
};

/// grok keeps no record of the session-title call it forces.
fn not_a_side_call(request: &Value) -> bool {
    request["forced_tool"].is_null()
}

/// The user's own project hook file next to drover's.
fn user_hooks(record: &Path) -> Vec<(&'static str, String)> {
    let text = format!(
        r#"{{
  "hooks": {{
    "Stop": [
      {{ "hooks": [ {{ "type": "command", "command": "echo user-stop >> {}" }} ] }}
    ]
  }}
}}
"#,
        record.display()
    );
    vec![(".grok/hooks/user.json", text)]
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
    cli: "grok",
    args: &[],
    protocol: CASE.protocol,
    tool: CASE.tool,
    accounted: a_model_call,
    resumes: true,
};

/// In ACP mode grok's side call (Responses, its own `grok-4.5` model) is not
/// forced to a tool, so it is told apart by its wire format: the turn's
/// model calls are the Chat Completions ones.
fn a_model_call(request: &Value) -> bool {
    request["protocol"] == CASE.protocol
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
