//! Budgets a checkout cannot move: a committed raise, committed spend and
//! an untrusted project's `[budget]` count for nothing.

use crate::support::Project;
use serde_json::{Value, json};

fn user_budget(p: &Project, text: &str) {
    let dir = p.home.join(".config/drover");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(dir.join("config.toml"), text).expect("config");
}

fn budgets(p: &Project) -> Value {
    let out = p.output(&["status", "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("status JSON");
    doc["budgets"].clone()
}

fn commit(p: &Project, file: &str, lines: &[Value]) {
    let dir = p.path().join(".drover");
    std::fs::create_dir_all(&dir).expect(".drover");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join(file), text).expect("committed file");
}

#[test]
fn a_committed_raise_or_spend_line_moves_no_budget() {
    let p = Project::new();
    user_budget(&p, "[budget]\nproject = { usd = 1.0 }\n");
    // A raise as drover writes it, with a seal the attacker cannot make.
    let today = "2026-12-04";
    commit(
        &p,
        "budget-raises.jsonl",
        &[
            json!({"ts": 1, "level": "project", "key": "", "usd": 1000.0, "tokens": null, "by": "person"}),
            json!({"ts": 2, "level": "day", "key": today, "usd": 1000.0, "tokens": null, "by": "person", "seal": "ab".repeat(32)}),
        ],
    );
    // Spend charged to the project, to trip its limit at once.
    commit(
        &p,
        "conversations.jsonl",
        &[
            json!({"ts": 1, "cli": "scripted", "conversation": "c", "run": "r", "task": "t",
            "usage": {"input": 1, "output": 0, "cache_read": 0, "cache_write": 0, "reasoning": 0, "requests": 1},
            "cost_usd": 999.0, "seal": "cd".repeat(32)}),
        ],
    );
    let project = &budgets(&p)[0];
    assert_eq!(project["level"], "project", "{project:#}");
    assert_eq!(
        project["limit_usd"].as_f64(),
        Some(1.0),
        "not raised: {project:#}"
    );
    assert_eq!(
        project["spent_usd"].as_f64(),
        Some(0.0),
        "nothing spent: {project:#}"
    );
    // So a run goes ahead rather than pausing.
    let (doc, code) = p.run(&["--cli", "scripted", "Reply with exactly: FINE"]);
    assert_eq!(
        (doc["status"].as_str(), code),
        (Some("completed"), 0),
        "{doc:#}"
    );
}

#[test]
fn an_untrusted_projects_budget_is_set_aside_and_said_so() {
    let p = Project::new();
    std::fs::create_dir_all(p.path().join(".drover")).expect(".drover");
    std::fs::write(
        p.path().join(".drover/config.toml"),
        "[budget]\nday = { usd = 0.000001 }\n",
    )
    .expect("config");
    assert_eq!(budgets(&p), json!([]));
    // Were it applied, the run would be held, and end when this bound does.
    let out = p.output(&[
        "run",
        "--timeout",
        "30s",
        "--cli",
        "scripted",
        "Reply with exactly: FINE",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("[budget] is ignored until you trust this project"),
        "{stderr}"
    );
}
