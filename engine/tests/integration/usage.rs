//! `drover usage` end to end: the real binary against a temporary HOME that
//! holds fixture transcripts where each CLI keeps them. Expected totals are
//! worked out by hand from the fixtures' documented numbers
//! (tests/fixtures/usage/README.md and components/*/fixtures/README.md).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const CLAUDE_A: &str = "11111111-aaaa-4aaa-8aaa-000000000001";
const CLAUDE_B: &str = "22222222-bbbb-4bbb-8bbb-000000000002";

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn component_fixture(component: &str, file: &str) -> PathBuf {
    fixture(&format!("../components/{component}/fixtures/{file}"))
}

fn claude_fixture(session: &str) -> PathBuf {
    fixture(&format!("tests/fixtures/usage/claude-{session}.jsonl"))
}

/// A temporary HOME and project, and a compile cache shared by all tests.
struct World {
    home: tempfile::TempDir,
    project: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        World {
            home: tempfile::tempdir().expect("home"),
            project: tempfile::tempdir().expect("project"),
        }
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    /// Copies `from` to `<home>/<to>`.
    fn put(&self, to: &str, from: &Path) -> PathBuf {
        let path = self.home().join(to);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::copy(from, &path).unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
        path
    }

    fn claude(&self) {
        for session in [CLAUDE_A, CLAUDE_B] {
            self.put(
                &format!(".claude/projects/-w-app/{session}.jsonl"),
                &claude_fixture(session),
            );
        }
    }

    fn drover(&self, args: &[&str], env: &[(&str, &Path)]) -> Output {
        let mut command = Command::new(env!("CARGO_BIN_EXE_drover"));
        // The project is the working directory: `--project` would also
        // keep only conversations run there.
        command
            .current_dir(self.project.path())
            .args(args)
            .env_clear()
            .env("HOME", self.home())
            .env(
                "DROVER_CACHE_DIR",
                Path::new(env!("CARGO_TARGET_TMPDIR")).join("usage-compile-cache"),
            );
        if let Some(path) = std::env::var_os("PATH") {
            command.env("PATH", path);
        }
        for (k, v) in env {
            command.env(k, v);
        }
        command.output().expect("runs drover")
    }

    /// Runs with `--json`, expects exit 0 and exactly one JSON document.
    fn json(&self, args: &[&str], env: &[(&str, &Path)]) -> Value {
        let mut all = vec!["usage", "--json"];
        all.extend_from_slice(args);
        let out = self.drover(&all, env);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON document ({e}):\n{}\nstderr: {stderr}",
                String::from_utf8_lossy(&out.stdout)
            )
        })
    }
}

/// (input, output, cache_read, cache_write, reasoning, requests) of a
/// JSON usage object.
fn fields(v: &Value) -> [u64; 6] {
    [
        "input",
        "output",
        "cache_read",
        "cache_write",
        "reasoning",
        "requests",
    ]
    .map(|k| {
        v[k].as_u64()
            .unwrap_or_else(|| panic!("{k} missing in {v}"))
    })
}

/// The sum of the sessions of one CLI.
fn cli_total(report: &Value, cli: &str) -> [u64; 6] {
    let mut total = [0u64; 6];
    for s in report["sessions"].as_array().expect("sessions") {
        if s["cli"] == cli {
            for (t, f) in total.iter_mut().zip(fields(s)) {
                *t += f;
            }
        }
    }
    total
}

fn warnings(report: &Value) -> Vec<String> {
    report["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| format!("{}: {}", w["path"].as_str().unwrap_or("-"), w["message"]))
        .collect()
}

const CLAUDE_TOTAL: [u64; 6] = [305, 96, 4103, 1342, 0, 3];

fn opencode_db(at: &Path) {
    std::fs::create_dir_all(at.parent().expect("parent")).expect("mkdir");
    let db = rusqlite::Connection::open(at).expect("db");
    db.execute_batch(
        "CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, \
         `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL);",
    )
    .expect("schema");
    let rows = std::fs::read_to_string(component_fixture("opencode", "db-messages.jsonl"))
        .expect("fixture");
    for line in rows.lines() {
        let row: Value = serde_json::from_str(line).expect("json");
        db.execute(
            "INSERT OR REPLACE INTO message VALUES (?1, ?2, 0, 0, ?3)",
            (
                row["id"].as_str().expect("id"),
                row["session_id"].as_str().expect("session"),
                row["data"].to_string(),
            ),
        )
        .expect("insert");
    }
}

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
fn the_json_document_has_the_documented_shape() {
    let w = World::new();
    w.claude();
    let report = w.json(&["--cli", "claude"], &[]);
    let keys: Vec<&str> = report
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    for key in [
        "totals",
        "sessions",
        "by",
        "groups",
        "files",
        "rejected_rows",
        "warnings",
    ] {
        assert!(keys.contains(&key), "{key} missing: {keys:?}");
    }
    assert_eq!(fields(&report["totals"]), CLAUDE_TOTAL);
    assert_eq!(report["by"], "session");
    assert_eq!(report["files"], 2);
    let sessions = report["sessions"].as_array().expect("sessions");
    assert_eq!(sessions.len(), 2);
    let a = &sessions[0];
    assert_eq!(a["cli"], "claude");
    assert_eq!(a["session"], CLAUDE_A);
    assert_eq!(a["first_day"], "2026-11-29");
    assert_eq!(a["last_day"], "2026-11-30");
    assert_eq!(a["models"], serde_json::json!(["claude-opus-5-5"]));
    assert_eq!(fields(a), [300, 87, 3403, 1302, 0, 2]);
    let b = &sessions[1];
    assert_eq!(
        (b["session"].as_str(), b["first_day"].as_str()),
        (Some(CLAUDE_B), Some("2026-12-01"))
    );
    assert_eq!(report["groups"], report["sessions"]);
}

#[test]
fn since_and_by_cut_and_group() {
    let w = World::new();
    w.claude();
    let by_day = w.json(
        &["--cli", "claude", "--since", "2026-11-30", "--by", "day"],
        &[],
    );
    // msg_A1 (2026-11-29) is before the cut.
    assert_eq!(fields(&by_day["totals"]), [205, 39, 2700, 40, 0, 2]);
    let days: Vec<&str> = by_day["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| g["day"].as_str().expect("day"))
        .collect();
    assert_eq!(days, ["2026-11-30", "2026-12-01"]);
    assert_eq!(by_day["by"], "day");

    let by_model = w.json(&["--cli", "claude", "--by", "model"], &[]);
    let models: Vec<(String, [u64; 6])> = by_model["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| (g["model"].as_str().expect("model").to_string(), fields(g)))
        .collect();
    assert_eq!(
        models,
        [
            ("claude-opus-5-5".to_string(), [300, 87, 3403, 1302, 0, 2]),
            ("claude-sonnet-5-1".to_string(), [5, 9, 700, 40, 0, 1]),
        ]
    );

    let text = w.drover(&["usage", "--cli", "claude", "--by", "day"], &[]);
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert_eq!(text.status.code(), Some(0));
    assert!(
        stdout.contains("2026-11-29") && stdout.contains("TOTAL"),
        "{stdout}"
    );
    assert!(stdout.contains("1,342"), "cache write total: {stdout}");

    let bad = w.drover(&["usage", "--since", "30/11/2026"], &[]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(bad.stdout.is_empty());
}

#[test]
fn a_broken_file_is_a_warning_and_the_rest_still_counts() {
    let w = World::new();
    w.claude();
    let dir = w.home().join(".claude/projects/-w-app");
    std::os::unix::fs::symlink("/nonexistent/target.jsonl", dir.join("dangling.jsonl"))
        .expect("symlink");
    let mut garbage: Vec<u8> = b"{\"usage\": not json\n\xff\xfe\"usage\" \x00\x01\n".to_vec();
    garbage.extend(std::iter::repeat_n(b'x', 100_000));
    std::fs::write(dir.join("garbage.jsonl"), garbage).expect("write");

    let report = w.json(&["--cli", "claude"], &[]);
    assert_eq!(fields(&report["totals"]), CLAUDE_TOTAL);
    let warned = warnings(&report);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(warned[0].contains("dangling.jsonl"), "{warned:?}");
    assert!(report["rejected_rows"].as_u64().expect("n") >= 2);
    assert_eq!(report["files"], 3);
}

/// A project profile backed by the hostile test guest, whose parser panics
/// on a `panic` line and spins on a `loop` line.
fn hostile_project(w: &World) {
    let wasm = Path::new(drover_guest_builds::DIR).join("drover_test_hostile.wasm");
    let profiles = w.project.path().join(".drover/profiles");
    std::fs::create_dir_all(&profiles).expect("mkdir");
    std::fs::write(
        profiles.join("hostile.toml"),
        format!(
            "name = \"hostile\"\nbinary = \"hostile-cli\"\ncomponent = \"{}\"\nusage_parser = \"hostile-lines\"\n[sandbox]\ncall_timeout_ms = 300\n[hooks]\ndialect = \"none\"\n",
            wasm.display()
        ),
    )
    .expect("profile");
    let logs = w.project.path().join("hostile-logs");
    std::fs::create_dir_all(&logs).expect("mkdir");
    for (name, text) in [
        ("a.log", "count 5\n"),
        ("b.log", "count 100\npanic\n"),
        ("c.log", "count 7\n"),
        ("d.log", "count 1000\nloop\n"),
        ("e.log", "count 30"),
    ] {
        std::fs::write(logs.join(name), text).expect("write");
    }
}

#[test]
fn a_file_that_kills_the_component_is_left_out_and_the_rest_counts() {
    let w = World::new();
    hostile_project(&w);
    let report = w.json(&["--cli", "hostile"], &[]);
    assert_eq!(fields(&report["totals"])[0], 5 + 7 + 30, "{report:#}");
    let warned = warnings(&report).join("\n");
    assert!(
        warned.contains("b.log") && warned.contains("panic"),
        "{warned}"
    );
    assert!(
        warned.contains("d.log") && warned.contains("time limit"),
        "{warned}"
    );
    assert!(
        !warned.contains("a.log") && !warned.contains("c.log"),
        "{warned}"
    );
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

#[test]
fn nothing_to_read_is_an_empty_report() {
    let w = World::new();
    let report = w.json(&[], &[]);
    assert_eq!(fields(&report["totals"]), [0; 6]);
    assert_eq!(report["files"], 0);
    assert_eq!(report["sessions"], serde_json::json!([]));
}

/// `--explain-files`: each file below HOME as (path relative to HOME,
/// status), in path order.
fn explained(w: &World, report: &Value) -> Vec<(String, String)> {
    let home = w.home().display().to_string();
    report["explain_files"]
        .as_array()
        .expect("explain_files")
        .iter()
        .map(|n| {
            let path = n["path"].as_str().expect("path");
            (
                path.strip_prefix(&format!("{home}/"))
                    .unwrap_or(path)
                    .to_string(),
                n["status"].as_str().expect("status").to_string(),
            )
        })
        .collect()
}

fn real_fixture(path: &str) -> PathBuf {
    fixture(&format!("../tests/fixtures/real/{path}"))
}

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

/// The price table's snapshot is named in `usage --json` and `doctor`; the
/// user's override file changes prices, and a broken one is an error that
/// names its place, in both commands.
#[test]
fn prices_come_from_the_snapshot_and_the_users_file() {
    let w = World::new();
    w.claude();
    let report = w.json(&["--cli", "claude"], &[]);
    assert_eq!(report["schema_version"], 2);
    assert!(
        report["pricing"]["snapshot"]
            .as_str()
            .expect("snapshot")
            .starts_with("litellm ")
    );
    let date = report["pricing"]["snapshot_date"].as_str().expect("date");
    assert_eq!(date.len(), 10);
    let base = report["totals"]["cost_usd"].as_f64().expect("priced");
    assert!(base > 0.0);

    let doctor = w.drover(&["doctor", "--json"], &[]);
    let doc: Value = serde_json::from_slice(&doctor.stdout).expect("doctor json");
    assert_eq!(doc["pricing"]["snapshot_date"], date);

    // The fixtures' claude-sonnet-5-1 is not in the snapshot.
    assert_eq!(
        report["totals"]["unpriced_models"],
        serde_json::json!(["claude-sonnet-5-1"])
    );
    // Every token at $1, and the unknown model added: the cost is the
    // token total.
    let config = w.home().join(".config/drover");
    std::fs::create_dir_all(&config).expect("mkdir");
    let dollar = r#"{"input_cost_per_token": 1, "output_cost_per_token": 1,
        "cache_read_input_token_cost": 1, "cache_creation_input_token_cost": 1}"#;
    std::fs::write(
        config.join("pricing.json"),
        format!(r#"{{"claude-opus-5-5": {dollar}, "claude-sonnet-5-1": {dollar}}}"#),
    )
    .expect("write");
    let report = w.json(&["--cli", "claude"], &[]);
    let total: u64 = CLAUDE_TOTAL[..4].iter().sum();
    assert_eq!(report["totals"]["cost_usd"].as_f64(), Some(total as f64));
    assert_eq!(report["unpriced"], serde_json::json!([]));
    assert_eq!(
        report["pricing"]["overrides"].as_array().map(Vec::len),
        Some(1)
    );

    std::fs::write(
        config.join("pricing.json"),
        "{\n  \"m\": {\"input_cost_per_token\": \"x\"}\n}",
    )
    .expect("write");
    let out = w.drover(&["usage", "--json"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("pricing.json: model 'm': input_cost_per_token"),
        "{stderr}"
    );
    let doctor = w.drover(&["doctor", "--json"], &[]);
    assert_eq!(doctor.status.code(), Some(1));
}

/// Months group, `--until` cuts inclusively, and an unknown `--tz` is a
/// usage error.
#[test]
fn months_until_and_zones() {
    let w = World::new();
    w.claude();
    let all = w.json(&["--cli", "claude", "--by", "month"], &[]);
    assert_eq!(all["groups"].as_array().map(Vec::len), Some(2), "{all:#}");
    let until = w.json(&["--cli", "claude", "--until", "2026-11-29"], &[]);
    assert_eq!(fields(&until["totals"])[5], 1);
    let bad = w.drover(&["usage", "--tz", "Mars/Olympus"], &[]);
    assert_eq!(bad.status.code(), Some(2));
}

/// A conversation copied into another project's folder is two tallies;
/// its requests, keyed by message id, still count once.
#[test]
fn a_conversation_copied_into_another_project_counts_once() {
    let w = World::new();
    w.claude();
    w.put(
        &format!(".claude/projects/-w-copy/{CLAUDE_A}.jsonl"),
        &claude_fixture(CLAUDE_A),
    );
    let report = w.json(&["--cli", "claude"], &[]);
    assert_eq!(fields(&report["totals"]), CLAUDE_TOTAL);
    assert!(
        report["repeated_requests"].as_u64().expect("n") >= 2,
        "{report:#}"
    );
}

const CODEX_THREAD: &str = "019a9776-0a34-7842-8627-112b63d66e90";

/// (input, output, cache_read, cache_write, reasoning, requests) of the two
/// requests in the Codex component's `rollout-resumed.jsonl`.
const CODEX_RESUMED_TOTAL: [u64; 6] = [2202, 134, 2000, 0, 10, 2];

/// A rollout both live and archived (a copy kept after `codex archive`) is
/// two tallies; its requests, keyed by response id, count once.
#[test]
fn a_codex_rollout_both_live_and_archived_counts_once() {
    let w = World::new();
    let rollout = component_fixture("codex", "rollout-resumed.jsonl");
    let name = format!("rollout-2026-11-30T10-00-00-{CODEX_THREAD}.jsonl");
    w.put(&format!(".codex/sessions/2026/11/30/{name}"), &rollout);
    w.put(&format!(".codex/archived_sessions/{name}"), &rollout);
    let report = w.json(&["--cli", "codex"], &[]);
    assert_eq!(fields(&report["totals"]), CODEX_RESUMED_TOTAL, "{report:#}");
    assert_eq!(report["repeated_requests"], 2, "{report:#}");
}

/// A thread continued in a second rollout under another year's folder (one
/// tally per year) that opens with the thread's old running total again:
/// each request once, in the month it was made.
#[test]
fn a_codex_thread_continued_in_another_year_counts_once() {
    let w = World::new();
    let text = std::fs::read_to_string(component_fixture("codex", "rollout-resumed.jsonl"))
        .expect("fixture");
    // As an older Codex wrote it: running totals only.
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("token_usage_record"))
        .collect();
    let split = lines
        .iter()
        .position(|l| l.contains("Reply with exactly: SECOND"))
        .expect("second turn");
    let old_total = lines[..split]
        .iter()
        .rev()
        .find(|l| l.contains("total_token_usage"))
        .expect("turn 1 total");
    let head = lines[..split].join("\n");
    let tail: Vec<String> = [lines[0].to_string(), old_total.to_string()]
        .into_iter()
        .chain(
            lines[split..]
                .iter()
                .map(|l| l.replace("2026-11-30T", "2027-01-02T")),
        )
        .collect();
    for (day, text) in [("2026/11/30", head), ("2027/01/02", tail.join("\n"))] {
        let path = w.home().join(format!(
            ".codex/sessions/{day}/rollout-{}-{CODEX_THREAD}.jsonl",
            day.replace('/', "-")
        ));
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    let report = w.json(&["--cli", "codex", "--by", "month"], &[]);
    assert_eq!(fields(&report["totals"]), CODEX_RESUMED_TOTAL, "{report:#}");
    let months: Vec<(&str, u64)> = report["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| (g["month"].as_str().unwrap_or("?"), fields(g)[5]))
        .collect();
    assert_eq!(months, [("2026-11", 1), ("2027-01", 1)]);
}

/// Claude's request rows carry their time, working directory and cache
/// lifetimes: 1-hour writes are priced apart, `--project` keeps the
/// conversations run there, and `--by block` has request times.
#[test]
fn claude_requests_carry_time_directory_and_cache_lifetimes() {
    let w = World::new();
    let here = std::fs::canonicalize(w.project.path()).expect("project");
    let row = |id: &str, cwd: &str, at: &str| {
        format!(
            r#"{{"type":"assistant","sessionId":"s1","cwd":"{cwd}","timestamp":"{at}","requestId":"r-{id}","message":{{"id":"{id}","model":"claude-opus-5-5","usage":{{"input_tokens":10,"output_tokens":20,"cache_read_input_tokens":0,"cache_creation_input_tokens":300,"cache_creation":{{"ephemeral_5m_input_tokens":100,"ephemeral_1h_input_tokens":200}}}}}}}}"#
        )
    };
    let text = [
        row(
            "m1",
            &here.display().to_string(),
            "2026-11-30T10:20:00.000Z",
        ),
        row("m2", "/elsewhere", "2026-11-30T11:00:00.000Z"),
    ]
    .join("\n");
    let path = w.home().join(".claude/projects/-w/s1.jsonl");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(&path, text).expect("write");

    let all = w.json(&["--cli", "claude", "--by", "block"], &[]);
    assert_eq!(all["totals"]["cache_write"], 600);
    assert_eq!(all["totals"]["cache_write_1h"], 400);
    // Claude Opus 5.5: $4/M in, $20/M out, $5/M 5-minute and $8/M 1-hour writes.
    let one = 10.0 * 4e-6 + 20.0 * 2e-5 + 100.0 * 5e-6 + 200.0 * 8e-6;
    let cost = all["totals"]["cost_usd"].as_f64().expect("priced");
    assert!((cost - 2.0 * one).abs() < 1e-12, "{cost}");
    let blocks = all["groups"].as_array().expect("blocks");
    assert_eq!(blocks.len(), 1, "{all:#}");
    assert_eq!(blocks[0]["start"], "2026-11-30T10:00:00.000Z");

    let out = w.drover(
        &[
            "--project",
            &here.display().to_string(),
            "usage",
            "--json",
            "--cli",
            "claude",
        ],
        &[],
    );
    let mine: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(mine["totals"]["requests"], 1, "{mine:#}");
    assert_eq!(
        mine["sessions"][0]["projects"],
        serde_json::json!([here.display().to_string()])
    );
}
