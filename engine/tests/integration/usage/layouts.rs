//! The layouts the real CLIs write (captured under tests/fixtures/real/),
//! each file found and read or skipped as `--explain-files` says.

use serde_json::Value;

use super::{World, component_fixture, explained, fields, opencode_db, real_fixture};

/// The real layout Claude Code 2.1.332 wrote for a session whose turn ran a
/// subagent, then a `--resume … --fork-session` of it
/// (tests/fixtures/real/claude/subagent/): each of the five model calls
/// (three in the session, one in the subagent, one new in the fork) once.
#[test]
fn claude_subagent_transcripts_and_forks_are_found() {
    let w = World::new();
    let project = ".claude/projects/-w-app";
    let session = "1cc7c609-16b0-4b2a-ab8c-b518f847404a";
    let subagents = format!("{project}/{session}/subagents");
    for (to, from) in [
        (format!("{project}/{session}.jsonl"), "session.jsonl"),
        (
            format!("{subagents}/agent-a275d27d8dbe07d7b.jsonl"),
            "agent.jsonl",
        ),
        (
            format!("{subagents}/agent-a275d27d8dbe07d7b.meta.json"),
            "agent.meta.json",
        ),
        (
            format!("{project}/59b2712f-9827-4ef8-8fc6-9e6870840eef.jsonl"),
            "fork.jsonl",
        ),
    ] {
        w.put(&to, &real_fixture(&format!("claude/subagent/{from}")));
    }
    let report = w.json(&["--cli", "claude", "--explain-files"], &[]);
    assert_eq!(
        explained(&w, &report),
        [
            (format!("{project}/{session}.jsonl"), "read".to_string()),
            (
                format!("{subagents}/agent-a275d27d8dbe07d7b.jsonl"),
                "read".to_string()
            ),
            (
                format!("{subagents}/agent-a275d27d8dbe07d7b.meta.json"),
                "skipped".to_string()
            ),
            (
                format!("{project}/59b2712f-9827-4ef8-8fc6-9e6870840eef.jsonl"),
                "read".to_string()
            ),
        ]
        .into_iter()
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
    );
    assert_eq!(
        fields(&report["totals"]),
        [5 * 1201, 5 * 57, 5 * 1403, 5 * 1302, 0, 5]
    );
    // Claude Code's own bill for the session with its subagent (four calls,
    // `total_cost_usd` in its `-p` output) is what drover prices it at.
    let own: Value = serde_json::from_str(
        &std::fs::read_to_string(real_fixture("claude/subagent/headless.stdout.json"))
            .expect("fixture"),
    )
    .expect("json");
    let session_cost = report["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["session"] == session)
        .and_then(|s| s["cost_usd"].as_f64())
        .expect("priced session");
    let claude_code = own["total_cost_usd"].as_f64().expect("cost");
    assert!(
        (session_cost - claude_code).abs() < 1e-9,
        "drover {session_cost} vs Claude Code {claude_code}"
    );
}

/// Codex 0.171.0 keeps live rollouts under `sessions/Y/M/D/` and moves
/// archived ones (`codex archive`) to `archived_sessions/`.
#[test]
fn codex_live_and_archived_rollouts_are_found() {
    let w = World::new();
    let live = ".codex/sessions/2026/11/30/rollout-2026-11-30T17-01-40-019dd1c5-8d42-7c31-9c1d-3b8a2e3e1c10.jsonl";
    let archived = ".codex/archived_sessions/rollout-2026-12-01T18-05-28-01a232c8-79ca-7010-972d-997a2f7bfe29.jsonl";
    w.put(live, &real_fixture("codex/rollout.jsonl"));
    w.put(archived, &real_fixture("codex/rollout-archived.jsonl"));
    w.put(".codex/config.toml", &real_fixture("codex/config.toml"));
    let report = w.json(&["--cli", "codex", "--explain-files"], &[]);
    let notes = explained(&w, &report);
    assert!(
        notes.contains(&(live.to_string(), "read".to_string())),
        "{notes:?}"
    );
    assert!(
        notes.contains(&(archived.to_string(), "read".to_string())),
        "{notes:?}"
    );
    // The archived thread made two calls, the live one its own.
    let sessions = report["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 2, "{report:#}");
    assert!(
        sessions
            .iter()
            .any(|s| s["session"] == "01a232c8-79ca-7010-972d-997a2f7bfe29" && s["requests"] == 2)
    );
}

/// Gemini CLI keeps one folder per project under `~/.gemini/tmp/`: main
/// chats, subagent chats in a folder named after the parent session, and
/// chats from before the JSONL format.
#[test]
fn gemini_project_subagent_and_legacy_chats_are_found() {
    let w = World::new();
    let chats = ".gemini/tmp/work/chats";
    let main = format!("{chats}/session-2026-11-30T17-05-9a0b1c2d.jsonl");
    let sub = format!("{chats}/9a0b1c2d-0000-4000-8000-000000000001/agent-1.jsonl");
    let legacy = format!("{chats}/session-2026-03-01T10-00-1234abcd.json");
    w.put(&main, &real_fixture("gemini/transcript.jsonl"));
    w.put(&sub, &component_fixture("gemini", "chat-subagent.jsonl"));
    w.put(&legacy, &component_fixture("gemini", "chat-legacy.json"));
    w.put(
        ".gemini/projects.json",
        &real_fixture("gemini/projects.json"),
    );
    let report = w.json(&["--cli", "gemini", "--explain-files"], &[]);
    let notes = explained(&w, &report);
    for file in [&main, &sub, &legacy] {
        assert!(
            notes.contains(&(file.clone(), "read".to_string())),
            "{file}: {notes:?}"
        );
    }
    assert!(report["totals"]["requests"].as_u64().expect("n") >= 3);
}

/// Qwen Code keeps chats per project (`~/.qwen/projects/<slug>/chats/`);
/// its `usage_record.jsonl` repeats them as per-session totals and is left
/// to the `qwen-usage-record` parser.
#[test]
fn qwen_project_chats_are_found() {
    let w = World::new();
    let chat = ".qwen/projects/-w-app/chats/0d3b1d9e-6b1a-4c52-9f1e-4f0f1a7b8c01.jsonl";
    w.put(chat, &real_fixture("qwen/transcript.jsonl"));
    w.put(
        ".qwen/usage_record.jsonl",
        &real_fixture("qwen/usage_record.jsonl"),
    );
    let report = w.json(&["--cli", "qwen", "--explain-files"], &[]);
    let notes = explained(&w, &report);
    assert!(
        notes.contains(&(chat.to_string(), "read".to_string())),
        "{notes:?}"
    );
    assert!(report["totals"]["requests"].as_u64().expect("n") >= 1);
}

/// opencode 1.18.33 keeps every message in one SQLite database.
#[test]
fn opencode_database_is_found() {
    let w = World::new();
    opencode_db(&w.home().join(".local/share/opencode/opencode.db"));
    let report = w.json(&["--cli", "opencode", "--explain-files"], &[]);
    let notes = explained(&w, &report);
    assert_eq!(
        notes,
        [(
            ".local/share/opencode/opencode.db".to_string(),
            "read".to_string()
        )]
    );
    assert_eq!(fields(&report["totals"])[5], 3);
}

/// Copilot CLI writes one `events.jsonl` per session under `session-state/`.
#[test]
fn copilot_session_state_is_found() {
    let w = World::new();
    let events = ".copilot/session-state/3f1e0c2a-7b7d-4d0e-9a51-1c2d3e4f5a6b/events.jsonl";
    w.put(
        events,
        &component_fixture("copilot", "events-cumulative.jsonl"),
    );
    let report = w.json(&["--cli", "copilot", "--explain-files"], &[]);
    let notes = explained(&w, &report);
    assert_eq!(notes, [(events.to_string(), "read".to_string())]);
    assert_eq!(fields(&report["totals"])[5], 4);
}

/// Grok keeps one folder per session under `~/.grok/sessions/<url-encoded
/// cwd>/`; of its files only `updates.jsonl` carries tokens (one
/// `turn_completed` line per finished turn).
#[test]
fn grok_session_folders_are_found() {
    let w = World::new();
    let project = ".grok/sessions/%2Fw%2Fapp";
    let mut expected = Vec::new();
    for (session, capture, files) in [
        (
            "01a232b6-c7c8-7503-899a-c911851bba2a",
            "session-interactive",
            &[
                "updates.jsonl",
                "chat_history.jsonl",
                "events.jsonl",
                "summary.json",
            ][..],
        ),
        (
            "01a232b4-758f-7130-a8e5-21646eb750e3",
            "session",
            &["updates.jsonl", "signals.json"][..],
        ),
    ] {
        for file in files {
            let to = format!("{project}/{session}/{file}");
            w.put(&to, &real_fixture(&format!("grok/{capture}-{file}")));
            let status = if *file == "updates.jsonl" {
                "read"
            } else {
                "skipped"
            };
            expected.push((to, status.to_string()));
        }
    }
    expected.sort();
    let report = w.json(&["--cli", "grok", "--explain-files"], &[]);
    let mut notes = explained(&w, &report);
    notes.sort();
    assert_eq!(notes, expected);
    // Two turns of one and two calls, and one turn of one call: each call
    // 3101 in (300 of them cache reads) and 77 out.
    assert_eq!(
        fields(&report["totals"]),
        [4 * 2801, 4 * 77, 4 * 300, 0, 0, 4]
    );
}
