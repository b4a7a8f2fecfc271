//! drover against the real Codex CLI (0.171.0) and drover-model-server.
//! Skipped (with a message) when the CLI is not provisioned, except under
//! CI. See tests/support/real.rs for the isolation and seeding.

use crate::support;

use std::path::Path;

use support::real_scenarios::{self as scenario, Case, Ends, Fault, Mode};

static CASE: Case = Case {
    cli: "codex",
    args: &[],
    protocol: "responses",
    stop_event: "Stop",
    stop_carries_reply: true,
    // Keep the hook-trust bypass (or no hook fires), drop the approval
    // bypass and ask on request: an escalated command then needs approval.
    blocked_args: &[
        "--arg",
        "--dangerously-bypass-hook-trust",
        "--arg",
        "-a",
        "--arg",
        "on-request",
    ],
    tool: r#"{"name":"exec_command","args":{"cmd":"echo hi > hi.txt","sandbox_permissions":"require_escalated","justification":"Write hi.txt for the test?"},"count":1}"#,
    faults: &[
        Fault {
            name: "500",
            mode: Mode::Status(500),
            kind: "server-error",
            evidence: "currently experiencing high demand",
            ends: Ends::Exits,
        },
        Fault {
            name: "503",
            mode: Mode::Status(503),
            kind: "overload",
            evidence: "unexpected status 503 Service Unavailable",
            ends: Ends::Exits,
        },
        Fault {
            name: "529",
            mode: Mode::Status(529),
            kind: "overload",
            evidence: "unexpected status 529",
            ends: Ends::Exits,
        },
        Fault {
            name: "429",
            mode: Mode::Status(429),
            kind: "rate-limit",
            evidence: "last status: 429 Too Many Requests",
            ends: Ends::Exits,
        },
        Fault {
            name: "401",
            mode: Mode::Status(401),
            kind: "auth",
            evidence: "unexpected status 401 Unauthorized",
            ends: Ends::Exits,
        },
        Fault {
            name: "drop",
            mode: Mode::Drop,
            kind: "network",
            evidence: "stream disconnected before completion",
            ends: Ends::Exits,
        },
        // Codex never gives up on a closed port, and says so.
        Fault {
            name: "closed-port",
            mode: Mode::ClosedPort,
            kind: "network",
            evidence: "Reconnecting... waiting for network",
            ends: Ends::AtSentence,
        },
    ],
    user_hooks,
    accounted: scenario::every_request,
};

fn user_hooks(record: &Path) -> Vec<(&'static str, String)> {
    let text = format!(
        "{{\n  \"hooks\": {{\n    \"Stop\": [\n      {{ \"hooks\": [ {{ \"type\": \"command\", \"command\": \"echo user-stop >> {}\", \"timeout\": 10 }} ] }}\n    ]\n  }}\n}}\n",
        record.display()
    );
    vec![(".codex/hooks.json", text)]
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
    scenario::fresh_config(
        &CASE,
        &["codex/v1/folder-access", "codex/v1/model-nudge"],
        "allow_once",
    );
}

/// Codex with drover as an MCP server (`drover mcp install --cli codex`,
/// which appends `[mcp_servers.drover]` to its config.toml) lists drover's
/// tools and calls one: its final reply holds what `list_seats` returned.
#[test]
fn mcp_codex_lists_seats_through_drover() {
    let Some(mut real) = support::real::Real::new("codex") else {
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
    let installed = real.output(&["mcp", "install", "--cli", "codex", "--json"]);
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    real.server.control(
        "tool",
        &serde_json::json!({"name": "mcp__drover__list_seats", "args": {}, "count": 1}),
    );
    let out = real.run(
        support::HANG,
        // Codex defers MCP tools behind its `tool_search` (a Responses
        // `tool_search_call`, which the model server does not make) for
        // models its catalog says can search; for a model it does not
        // know, it offers them directly, under their full names.
        &["--workspace", "headless", "--model", "fake-model"],
        "List drover's seats. Reply with the last tool result",
    );
    let reply = out.doc["reply"].as_str().unwrap_or_default();
    assert!(
        out.status() == "completed" && reply.contains("\"lister\"") && reply.contains("\"listed\""),
        "{:#}\n{}\n{}",
        out.doc,
        out.stderr,
        real.logs(out.run_id())
    );
}
