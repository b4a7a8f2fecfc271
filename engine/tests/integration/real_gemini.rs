//! drover against the real Gemini CLI (0.61.0) and drover-model-server.
//! Skipped (with a message) when the CLI is not provisioned, except under
//! CI. See tests/support/real.rs for the isolation and seeding.
//!
//! Every run pins `--model gemini-2.5-pro`: without it each turn first asks
//! a router model, whose retries ignore `general.maxAttempts`.

use crate::support;

use std::path::Path;

use support::real_acp::{self, AcpCase};
use support::real_scenarios::{self as scenario, Case, Ends, Fault, Mode};

/// A shell command that needs a permission.
const TOOL: &str = r#"{"name":"run_shell_command","args":{"command":"echo hi > hi.txt","description":"write hi.txt"},"count":1}"#;

static CASE: Case = Case {
    cli: "gemini",
    args: &["--model", "gemini-2.5-pro"],
    protocol: "gemini",
    stop_event: "AfterAgent",
    stop_carries_reply: true,
    blocked_args: &["--no-bypass"],
    tool: TOOL,
    faults: &[
        Fault {
            name: "500",
            mode: Mode::Status(500),
            kind: "server-error",
            evidence: "\"code\":500",
            ends: Ends::Exits,
        },
        Fault {
            name: "503",
            mode: Mode::Status(503),
            kind: "overload",
            evidence: "The model is overloaded.",
            ends: Ends::Exits,
        },
        Fault {
            name: "529",
            mode: Mode::Status(529),
            kind: "overload",
            evidence: "\"code\":529",
            ends: Ends::Exits,
        },
        Fault {
            name: "429",
            mode: Mode::Status(429),
            kind: "rate-limit",
            evidence: "Resource has been exhausted",
            ends: Ends::Exits,
        },
        Fault {
            name: "401",
            mode: Mode::Status(401),
            kind: "auth",
            evidence: "API key not valid",
            ends: Ends::Exits,
        },
        Fault {
            name: "drop",
            mode: Mode::Drop,
            kind: "network",
            evidence: "fetch failed",
            ends: Ends::Exits,
        },
        Fault {
            name: "closed-port",
            mode: Mode::ClosedPort,
            kind: "network",
            evidence: "fetch failed",
            ends: Ends::Exits,
        },
    ],
    user_hooks,
    accounted: scenario::every_request,
};

fn user_hooks(record: &Path) -> Vec<(&'static str, String)> {
    let text = format!(
        r#"{{
  "ui": {{ "hideTips": true }},
  "hooks": {{
    "AfterAgent": [
      {{
        "matcher": "*",
        "hooks": [
          {{ "type": "command", "name": "user-stop", "command": "echo user-stop >> {}", "timeout": 10000 }}
        ]
      }}
    ]
  }}
}}
"#,
        record.display()
    );
    vec![(".gemini/settings.json", text)]
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
fn probe_adapter_reads_the_real_hooks_and_transcript() {
    scenario::probe(&CASE);
}

static ACP: AcpCase = AcpCase {
    cli: "gemini",
    args: &["--model", "gemini-2.5-pro"],
    protocol: "gemini",
    tool: TOOL,
    accounted: scenario::every_request,
    // Gemini CLI 0.61.0 names a session's file by the minute it starts
    // recording; an agent that loads a session in the minute the session
    // began restarts that same file, and then finds "No previous sessions"
    // (docs/sessions.md). A resume in a later minute works, which a test
    // cannot arrange without waiting.
    resumes: false,
};

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
    scenario::fresh_config(
        &CASE,
        &["gemini/v1/auth", "gemini/v1/api-key"],
        "allow_once",
    );
}

/// Gemini CLI with drover as an MCP server (`drover mcp install --cli
/// gemini`, which adds `mcpServers.drover` to its settings.json) lists
/// drover's tools and calls one: its final reply holds what `list_seats`
/// returned.
#[test]
fn mcp_gemini_lists_seats_through_drover() {
    let Some(mut real) = support::real::Real::new("gemini") else {
        return;
    };
    let path = format!(
        "{}:{}",
        support::bin_dir().display(),
        real.env("PATH").unwrap_or_default()
    );
    real.set_env("PATH", &path);
    let _down = support::real::Down(&real);
    let up = real.output(&[
        "up",
        "lister",
        "--cli",
        "scripted",
        "--workspace",
        "headless",
        "--role",
        "listed",
    ]);
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let installed = real.output(&["mcp", "install", "--cli", "gemini", "--json"]);
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    // Gemini CLI names an MCP server's tools `mcp_<server>_<tool>`.
    real.server.control(
        "tool",
        &serde_json::json!({"name": "mcp_drover_list_seats", "args": {}, "count": 1}),
    );
    let out = real.run(
        support::HANG,
        &["--workspace", "headless", "--model", "gemini-2.5-pro"],
        "List drover's seats. Reply with the last tool result",
    );
    let reply = out.doc["reply"].as_str().unwrap_or_default();
    assert!(
        out.status() == "completed" && reply.contains("lister") && reply.contains("listed"),
        "{:#}\n{}\n{}",
        out.doc,
        out.stderr,
        real.logs(out.run_id())
    );
}
