//! drover against the real opencode (1.18.33) and drover-model-server.
//! Skipped (with a message) when the CLI is not provisioned, except under
//! CI. See tests/support/real.rs for the isolation and seeding.
//!
//! opencode has no command hooks: drover's relay is a generated plugin
//! (`.opencode/plugin/drover.js`) and `session.idle` is the turn's end.
//! Its error runs retry for about 70 s (5 retries, 2 s doubling to 30 s),
//! so the fault cases run side by side.

use crate::support;

use std::path::Path;

use serde_json::Value;

use support::real_acp::{self, AcpCase};
use support::real_scenarios::{self as scenario, Case, Ends, Fault, Mode};

/// A shell command that needs a permission.
const TOOL: &str = r#"{"name":"bash","args":{"command":"echo hi > hi.txt","description":"write hi.txt"},"count":1}"#;

static CASE: Case = Case {
    cli: "opencode",
    args: &[],
    protocol: "chat",
    stop_event: "session.idle",
    stop_carries_reply: false,
    // The seeded config asks before bash; without the bypass the TUI shows it.
    blocked_args: &["--no-bypass"],
    tool: TOOL,
    faults: &[
        Fault {
            name: "500",
            mode: Mode::Status(500),
            kind: "server-error",
            evidence: "The server had an error while processing your request",
            ends: Ends::Exits,
        },
        Fault {
            name: "503",
            mode: Mode::Status(503),
            kind: "overload",
            evidence: "The engine is currently overloaded",
            ends: Ends::Exits,
        },
        Fault {
            name: "429",
            mode: Mode::Status(429),
            kind: "rate-limit",
            evidence: "Rate limit reached for requests",
            ends: Ends::Exits,
        },
        Fault {
            name: "401",
            mode: Mode::Status(401),
            kind: "auth",
            evidence: "Incorrect API key provided",
            ends: Ends::Exits,
        },
        Fault {
            name: "drop",
            mode: Mode::Drop,
            kind: "network",
            evidence: "Cannot connect to API",
            ends: Ends::Exits,
        },
        Fault {
            name: "closed-port",
            mode: Mode::ClosedPort,
            kind: "network",
            evidence: "Cannot connect to API",
            ends: Ends::Exits,
        },
    ],
    user_hooks,
    accounted,
};

/// A fresh `opencode run` also asks the small model for a session title
/// (a request without tools). opencode records that call's usage nowhere:
/// not in `--format json` (`step_finish`), not in its database (`message`
/// rows, `session.tokens_*`). drover reports what the CLI accounts for.
fn accounted(request: &Value) -> bool {
    request["has_tools"] == true
}

fn user_hooks(record: &Path) -> Vec<(&'static str, String)> {
    let text = format!(
        "import fs from \"node:fs\";\n\n// The user's own plugin, next to drover's.\nexport const UserPlugin = async () => ({{\n  event: async ({{ event }}) => {{\n    if (event.type === \"session.idle\") fs.appendFileSync({:?}, \"user-stop\\n\");\n  }},\n}});\n",
        record.display().to_string()
    );
    vec![(".opencode/plugin/user.js", text)]
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
    cli: "opencode",
    args: &[],
    protocol: "chat",
    tool: TOOL,
    accounted,
    resumes: true,
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
    scenario::fresh_config(&CASE, &[], "allow_once");
}
