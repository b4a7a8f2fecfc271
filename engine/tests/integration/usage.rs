//! `drover usage` end to end: the real binary against a temporary HOME that
//! holds fixture transcripts where each CLI keeps them. Expected totals are
//! worked out by hand from the fixtures' documented numbers
//! (tests/fixtures/usage/README.md and components/*/fixtures/README.md).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod broken_files;
mod counted_once;
mod layouts;
mod locations;
mod prices;
mod report;

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
