//! Where each CLI keeps its transcripts, the variables that move them,
//! and paths attributed by their shape or by `--cli`.

use super::{
    CLAUDE_A, CLAUDE_B, CLAUDE_TOTAL, World, claude_fixture, cli_total, component_fixture, fields,
    opencode_db, warnings,
};

#[test]
fn every_cli_is_read_where_it_keeps_transcripts() {
    let w = World::new();
    w.claude();
    w.put(
        ".codex/sessions/2026/11/30/rollout-2026-11-30T10-00-00-019a9776-0a34-7842-8627-112b63d66e90.jsonl",
        &component_fixture("codex", "rollout-resumed.jsonl"),
    );
    w.put(
        ".gemini/tmp/app/chats/session-2026-11-30T10-00-7c0e5d2a.jsonl",
        &component_fixture("gemini", "chat-session.jsonl"),
    );
    w.put(
        ".qwen/projects/-w-app/chats/4f1c2a9e-0000-4000-8000-00000000a001.jsonl",
        &component_fixture("qwen", "chat.jsonl"),
    );
    w.put(
        ".copilot/session-state/s1/events.jsonl",
        &component_fixture("copilot", "events-cumulative.jsonl"),
    );
    opencode_db(&w.home().join(".local/share/opencode/opencode.db"));

    let report = w.json(&[], &[]);
    assert_eq!(warnings(&report), Vec::<String>::new());
    assert_eq!(cli_total(&report, "claude"), CLAUDE_TOTAL);
    // Codex: two requests of 2101 in (1000 cached) / 67 out (5 reasoning).
    assert_eq!(
        cli_total(&report, "codex"),
        [2 * 1101, 2 * 67, 2 * 1000, 0, 2 * 5, 2]
    );
    // Gemini: three messages of 4101 in (400 cached) / 87 out + 9 thoughts.
    assert_eq!(
        cli_total(&report, "gemini"),
        [3 * 3701, 3 * 96, 3 * 400, 0, 3 * 9, 3]
    );
    // Qwen: two calls of prompt 3101 (300 cached) / 77 out.
    assert_eq!(cli_total(&report, "qwen"), [2 * 2801, 2 * 77, 600, 0, 0, 2]);
    // opencode: two such calls, plus a reasoner call stored as input 1101,
    // output 62 + reasoning 5, cache read 1000, cache write 12.
    assert_eq!(
        cli_total(&report, "opencode"),
        [2 * 2801 + 1101, 2 * 77 + 67, 600 + 1000, 12, 5, 3]
    );
    // Copilot: last snapshot 120000 in (90000 read, 26000 write), 950 out,
    // 275 reasoning, 4 requests.
    assert_eq!(
        cli_total(&report, "copilot"),
        [4000, 950, 90000, 26000, 275, 4]
    );
    let totals = fields(&report["totals"]);
    let mut sum = [0u64; 6];
    for cli in ["claude", "codex", "gemini", "qwen", "opencode", "copilot"] {
        for (s, v) in sum.iter_mut().zip(cli_total(&report, cli)) {
            *s += v;
        }
    }
    assert_eq!(totals, sum);
    assert_eq!(report["files"], 7);
}

#[test]
fn location_variables_move_the_search() {
    let w = World::new();
    // Files in the default place must not be read when CLAUDE_CONFIG_DIR
    // points elsewhere.
    w.put(
        ".claude/projects/-w-app/ignored.jsonl",
        &claude_fixture(CLAUDE_A),
    );
    let config = w.home().join("elsewhere/claude-config");
    w.put(
        &format!("elsewhere/claude-config/projects/-w-app/{CLAUDE_B}.jsonl"),
        &claude_fixture(CLAUDE_B),
    );
    let report = w.json(&["--cli", "claude"], &[("CLAUDE_CONFIG_DIR", &config)]);
    // Without session A's own file, its copied msg_A1 row and the sidechain
    // replay of msg_A2 are the only record of those requests: both count.
    assert_eq!(fields(&report["totals"]), [305, 96, 4103, 1342, 0, 3]);
    assert_eq!(report["files"], 1);

    let data = w.home().join("xdg-data");
    opencode_db(&data.join("opencode/opencode.db"));
    let report = w.json(&["--cli", "opencode"], &[("XDG_DATA_HOME", &data)]);
    assert_eq!(fields(&report["totals"])[5], 3);
}

#[test]
fn paths_are_attributed_by_their_shape_or_by_cli() {
    let w = World::new();
    // A copy of a Claude tree kept somewhere else still reads as Claude.
    let backup = w.home().join("backup/.claude/projects/-w-app");
    std::fs::create_dir_all(&backup).expect("mkdir");
    for s in [CLAUDE_A, CLAUDE_B] {
        std::fs::copy(claude_fixture(s), backup.join(format!("{s}.jsonl"))).expect("copy");
    }
    std::fs::write(backup.join("notes.txt"), "not a transcript").expect("write");
    let dir = w.home().join("backup");
    let report = w.json(&[dir.to_str().expect("utf8")], &[]);
    assert_eq!(fields(&report["totals"]), CLAUDE_TOTAL);
    let warned = warnings(&report).join("\n");
    assert!(
        warned.contains("1 files look like no selected CLI"),
        "{warned}"
    );

    // A bare file: no CLI claims it until --cli says which.
    let bare = component_fixture("qwen", "chat.jsonl");
    let bare = bare.to_str().expect("utf8");
    let refused = w.drover(&["usage", "--json", bare], &[]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(refused.stdout.is_empty());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--cli"));
    let report = w.json(&["--cli", "qwen", bare], &[]);
    assert_eq!(fields(&report["totals"]), [2 * 2801, 2 * 77, 600, 0, 0, 2]);

    let unknown = w.drover(&["usage", "--cli", "nope"], &[]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(unknown.stdout.is_empty());
}
