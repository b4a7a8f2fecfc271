//! drover against the real Claude Code (2.1.332) and drover-model-server.
//! Skipped (with a message) when the CLI is not provisioned, except under
//! CI. See tests/support/real.rs for the isolation and seeding.

use crate::support;

use std::path::Path;

use support::real::Real;
use support::real_scenarios::{self as scenario, Case, Ends, Fault, Mode};

static CASE: Case = Case {
    cli: "claude",
    args: &[],
    protocol: "anthropic",
    stop_event: "Stop",
    stop_carries_reply: true,
    // The interactive default is "auto mode", which may approve on its own.
    blocked_args: &["--arg", "--permission-mode", "--arg", "default"],
    tool: r#"{"name":"Bash","args":{"command":"echo hi > hi.txt","description":"write hi.txt"},"count":1}"#,
    faults: &[
        Fault {
            name: "500",
            mode: Mode::Status(500),
            kind: "server-error",
            evidence: "API Error: 500 Internal server error.",
            ends: Ends::Exits,
        },
        Fault {
            name: "503",
            mode: Mode::Status(503),
            // The API's own error type for it is `overloaded_error`.
            kind: "overload",
            evidence: "API Error: 503 Service unavailable.",
            ends: Ends::Exits,
        },
        Fault {
            name: "529",
            mode: Mode::Status(529),
            kind: "overload",
            evidence: "API Error: 529 Overloaded.",
            ends: Ends::Exits,
        },
        Fault {
            name: "429",
            mode: Mode::Status(429),
            kind: "rate-limit",
            evidence: "API Error: Request rejected (429)",
            ends: Ends::Exits,
        },
        Fault {
            name: "401",
            mode: Mode::Status(401),
            kind: "auth",
            evidence: "Invalid API key · Fix external API key",
            ends: Ends::Exits,
        },
        Fault {
            name: "drop",
            mode: Mode::Drop,
            kind: "network",
            evidence: "API Error: Connection dropped (ECONNRESET)",
            ends: Ends::Exits,
        },
        Fault {
            name: "closed-port",
            mode: Mode::ClosedPort,
            kind: "network",
            evidence: "API Error: Connection refused",
            ends: Ends::Exits,
        },
    ],
    user_hooks,
    accounted: scenario::every_request,
};

fn user_hooks(record: &Path) -> Vec<(&'static str, String)> {
    let text = format!(
        r#"{{
  "permissions": {{
    "allow": ["Bash(git status)"]
  }},
  "hooks": {{
    "Stop": [
      {{
        "matcher": "",
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
    vec![(".claude/settings.json", text)]
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

/// `claude -p` without the bypass asks for the tool through the
/// PermissionRequest hook (and then carries on without it): the journal
/// records the blocked state with its prompt kind.
#[test]
fn headless_permission_request_is_recorded_as_blocked() {
    let Some(real) = Real::new("claude") else {
        return;
    };
    real.hooks("install");
    real.server
        .control("tool", &serde_json::from_str(CASE.tool).expect("tool JSON"));
    let out = real.run(
        support::HANG,
        &["--no-bypass"],
        "Reply with exactly: DENIED",
    );
    let states = real.states(out.run_id());
    assert!(
        states
            .iter()
            .any(|s| s == "blocked:permission@hook:PermissionRequest"),
        "{states:?}\n{:#}",
        out.doc
    );
    assert!(
        !real.work.join("hi.txt").exists(),
        "the tool ran unapproved"
    );
}

#[test]
fn probe_adapter_reads_the_real_hooks_and_transcript() {
    scenario::probe(&CASE);
}

#[test]
fn fresh_config_dialogs_are_answered_then_a_message_completes() {
    scenario::fresh_config(
        &CASE,
        &["claude/v1/trust", "claude/v1/api-key", "claude/v1/bypass"],
        "allow_once",
    );
}
