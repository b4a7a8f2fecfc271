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

/// Claude Code with drover as an MCP server (`drover mcp install --cli
/// claude`), its model scripted to call drover's tools in turn: it starts
/// a scripted seat, sends it a message without waiting, waits for the turn
/// to settle, sends another and waits for the reply, then answers with
/// the last tool result — the seat's answer. The seat's journal shows both
/// turns.
#[test]
fn mcp_claude_starts_a_seat_sends_waits_and_replies_with_its_answer() {
    let Some(mut real) = Real::new("claude") else {
        return;
    };
    // The seat runs drover's scripted stand-in CLI, built next to drover.
    let path = format!(
        "{}:{}",
        support::bin_dir().display(),
        real.env("PATH").unwrap_or_default()
    );
    real.set_env("PATH", &path);
    let installed = real.output(&["mcp", "install", "--cli", "claude", "--json"]);
    assert!(
        installed.status.success(),
        "{}",
        String::from_utf8_lossy(&installed.stderr)
    );
    let _down = support::real::Down(&real);
    for (tool, args) in [
        (
            "start_seat",
            serde_json::json!({"nick": "helper", "cli": "scripted", "workspace": "headless", "role": "helper"}),
        ),
        (
            "send",
            serde_json::json!({"nick": "helper", "prompt": "Reply with exactly: WARMED-UP", "wait": false}),
        ),
        (
            "wait",
            serde_json::json!({"targets": ["helper"], "until": "settled", "timeout": "5m"}),
        ),
        (
            "send",
            serde_json::json!({"nick": "helper", "prompt": "Reply with exactly: SEAT-ANSWER-7"}),
        ),
    ] {
        real.server.control(
            "tool",
            &serde_json::json!({"name": format!("mcp__drover__{tool}"), "args": args, "count": 1}),
        );
    }
    let out = real.run(
        support::HANG,
        &["--workspace", "headless"],
        "Start a helper seat with drover, give it work, wait for it. Reply with the last tool result",
    );
    let reply = out.doc["reply"].as_str().unwrap_or_default();
    assert!(
        out.status() == "completed" && reply.contains("SEAT-ANSWER-7"),
        "{:#}\n{}\n{}",
        out.doc,
        out.stderr,
        real.logs(out.run_id())
    );
    // Every queued call was made, and answered by drover.
    let calls: Vec<String> = real
        .server
        .requests()
        .iter()
        .filter_map(|r| r["tool_call"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        calls,
        [
            "mcp__drover__start_seat",
            "mcp__drover__send",
            "mcp__drover__wait",
            "mcp__drover__send"
        ],
        "{calls:?}"
    );
    // The seat's own journal: two turns, each working then completed.
    let seat_run = std::fs::read_dir(real.work.join(".drover/runs"))
        .expect("runs")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|name| name.starts_with("seat-helper-"))
        .expect("the seat's run");
    let journal = real.journal(&seat_run);
    let verdicts = journal
        .iter()
        .filter(|l| l["kind"] == "verdict" && l["state"] == "completed")
        .count();
    assert_eq!(verdicts, 2, "{journal:#?}");
    assert!(
        journal.iter().any(|l| l["state"] == "working"),
        "{journal:#?}"
    );
}
