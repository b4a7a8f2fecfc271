//! `drover mcp` driven by a plain MCP client (support/mcp.rs) against the
//! scripted CLI: each tool does what its command does, and says so in the
//! JSON its command prints. The real clients are in real_claude.rs and
//! real_codex.rs.

use crate::support;

use serde_json::{Value, json};
use support::Project;
use support::mcp::Client;

/// Stops every seat of the project, whatever the test did.
struct Down<'a>(&'a Project);

impl Drop for Down<'_> {
    fn drop(&mut self) {
        let _ = self.0.output(&["down", "--all"]);
    }
}

fn client(p: &Project) -> Client {
    let mut command = p.drover();
    command.arg("--project").arg(p.path()).arg("mcp");
    Client::start(command)
}

#[test]
fn the_tools_start_a_seat_send_wait_read_and_stop_it() {
    let p = Project::new();
    let _down = Down(&p);
    let mut mcp = client(&p);

    let listed = mcp.request("tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "list_seats",
            "start_seat",
            "send",
            "wait",
            "answer",
            "events",
            "usage",
            "down"
        ]
    );

    let started = mcp.ok(
        "start_seat",
        json!({"nick": "rev", "cli": "scripted", "workspace": "headless", "role": "review"}),
    );
    assert_eq!(started["seat"]["nick"], "rev", "{started:#}");
    assert_eq!(started["state"], "idle", "{started:#}");

    // wait=true: the turn's report, as `drover send --json` prints it.
    let sent = mcp.ok(
        "send",
        json!({"nick": "rev", "prompt": "Reply with exactly: R1"}),
    );
    assert_eq!(sent["status"], "completed", "{sent:#}");
    assert_eq!(sent["reply"], "R1", "{sent:#}");

    // wait=false returns once the turn started; `wait` sees it settle.
    let background = mcp.ok(
        "send",
        json!({"nick": "rev", "prompt": "Reply with exactly: R2", "wait": false}),
    );
    assert_eq!(background["seat"], "rev", "{background:#}");
    let waited = mcp.ok(
        "wait",
        json!({"targets": ["rev"], "until": "settled", "timeout": "5m"}),
    );
    assert_eq!(waited["held"], true, "{waited:#}");
    assert_eq!(waited["verdict"], "completed", "{waited:#}");

    let seats = mcp.ok("list_seats", json!({}));
    assert_eq!(seats["seats"][0]["nick"], "rev", "{seats:#}");
    assert_eq!(seats["seats"][0]["role"], "review", "{seats:#}");

    // Both turns are in the journal; `after` pages through it.
    let events = mcp.ok("events", json!({"seat": "rev"}));
    let total = events["total"].as_u64().expect("total");
    let verdicts = events["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["kind"] == "verdict" && e["state"] == "completed")
        .count();
    assert_eq!(verdicts, 2, "{events:#}");
    let page = mcp.ok(
        "events",
        json!({"seat": "rev", "after": total - 1, "limit": 5}),
    );
    assert_eq!(page["events"].as_array().map(Vec::len), Some(1), "{page:#}");
    assert_eq!(page["next"], total, "{page:#}");

    let usage = mcp.ok("usage", json!({"by": "model"}));
    assert!(
        usage.get("rows").is_some() || usage.get("totals").is_some(),
        "{usage:#}"
    );

    // A mistake is a tool error naming the argument, not a dead server.
    let error = mcp.error("send", json!({"nick": "rev"}));
    assert!(error.contains("argument `prompt` is required"), "{error}");
    let error = mcp.error("send", json!({"nick": "nobody", "prompt": "hi"}));
    assert!(error.contains("no seat named nobody"), "{error}");

    let down = mcp.ok("down", json!({"nick": "rev"}));
    assert_eq!(down["down"][0]["nick"], "rev", "{down:#}");
    let seats = mcp.ok("list_seats", json!({}));
    assert_eq!(seats["seats"], json!([]), "{seats:#}");
    let _: Value = seats;
}
