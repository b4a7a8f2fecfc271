//! drover against the real GitHub Copilot CLI (1.0.102, bring-your-own-
//! provider mode) and drover-model-server. Skipped (with a message) when the
//! CLI is not provisioned, except under CI. See tests/support/real.rs for
//! the isolation and seeding.
//!
//! `-p --output-format json` prints no token counts: drover reads the turn's
//! usage from `~/.copilot/session-state/<id>/events.jsonl`, found by the
//! conversation id. Copilot retries a failed model call 5 times (5–60 s, no
//! knob found), so the fault cases run side by side.

use crate::support;

use std::path::Path;

use support::real_scenarios::{self as scenario, Case, Ends, Fault, Mode};

static CASE: Case = Case {
    cli: "copilot",
    args: &[],
    protocol: "chat",
    stop_event: "agentStop",
    stop_carries_reply: false,
    // The profile's bypass minus --allow-all-tools: the TUI asks.
    blocked_args: &["--arg", "--allow-all-paths"],
    tool: r#"{"name":"bash","args":{"command":"echo hi > hi.txt","description":"write hi.txt"},"count":1}"#,
    faults: &[
        Fault {
            name: "500",
            mode: Mode::Status(500),
            kind: "server-error",
            evidence: "Last error: 500 The server had an error",
            ends: Ends::Exits,
        },
        Fault {
            name: "503",
            mode: Mode::Status(503),
            kind: "overload",
            evidence: "Last error: 503 The engine is currently overloaded",
            ends: Ends::Exits,
        },
        Fault {
            name: "429",
            mode: Mode::Status(429),
            kind: "rate-limit",
            evidence: "Last error: 429 Rate limit reached for requests",
            ends: Ends::Exits,
        },
        Fault {
            name: "401",
            mode: Mode::Status(401),
            kind: "auth",
            evidence: "Authentication failed with provider at",
            ends: Ends::Exits,
        },
        Fault {
            name: "drop",
            mode: Mode::Drop,
            kind: "network",
            evidence: "Failed native model HTTP request",
            ends: Ends::Exits,
        },
        Fault {
            name: "closed-port",
            mode: Mode::ClosedPort,
            kind: "network",
            evidence: "Could not connect to local model provider at",
            ends: Ends::Exits,
        },
    ],
    user_hooks,
    accounted: scenario::every_request,
};

/// The user's own repo-level Copilot settings with an agentStop hook.
fn user_hooks(record: &Path) -> Vec<(&'static str, String)> {
    let text = format!(
        r#"{{
  "version": 1,
  "hooks": {{
    "agentStop": [
      {{ "type": "command", "command": "echo user-stop >> {}", "timeoutSec": 30 }}
    ]
  }}
}}
"#,
        record.display()
    );
    vec![(".github/copilot/settings.json", text)]
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

#[test]
fn fresh_config_dialogs_are_answered_then_a_message_completes() {
    scenario::fresh_config(&CASE, &["copilot/v1/trust-question"], "allow_once");
}
