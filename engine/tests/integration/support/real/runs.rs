//! `drover` in a tree: its commands, `drover run --json` and what a run
//! leaves in the project (journal, relayed hooks, logs).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Real;
use crate::support::drover_exe;

/// What `drover run --json` answered.
#[derive(Debug)]
pub struct RunOutput {
    pub doc: Value,
    pub code: i32,
    pub stderr: String,
    pub elapsed: Duration,
}

impl RunOutput {
    pub fn status(&self) -> &str {
        self.doc["status"].as_str().unwrap_or_default()
    }
    pub fn run_id(&self) -> &str {
        self.doc["run_id"].as_str().unwrap_or_default()
    }
}

impl Real {
    /// `drover` in the project, with exactly this tree's environment.
    pub fn drover(&self) -> Command {
        let mut cmd = Command::new(drover_exe());
        cmd.env_clear()
            .envs(&self.env)
            .current_dir(&self.work)
            .stdin(Stdio::null());
        cmd
    }

    pub fn output(&self, args: &[&str]) -> std::process::Output {
        self.drover().args(args).output().expect("drover runs")
    }

    /// `drover hooks <action> --cli <cli> --json`; panics unless it succeeds.
    pub fn hooks(&self, action: &str) -> Value {
        let out = self.output(&["hooks", action, "--cli", self.cli, "--json"]);
        assert!(
            out.status.success(),
            "drover hooks {action} --cli {}: {}{}",
            self.cli,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
    }

    /// The argv of `drover run --json --cli <cli> --timeout <t> … PROMPT`.
    fn run_argv(&self, timeout: Duration, args: &[&str], prompt: &str) -> Vec<String> {
        let mut argv: Vec<String> = [
            "run",
            "--json",
            "--cli",
            self.cli,
            "--teardown-grace",
            "5s",
            "--timeout",
        ]
        .map(String::from)
        .to_vec();
        argv.push(format!("{}s", timeout.as_secs()));
        argv.extend(args.iter().map(|a| a.to_string()));
        argv.push(prompt.to_string());
        argv
    }

    /// `drover run --json` bounded by drover's own `--timeout`.
    pub fn run(&self, timeout: Duration, args: &[&str], prompt: &str) -> RunOutput {
        let started = Instant::now();
        let out = self
            .drover()
            .args(self.run_argv(timeout, args, prompt))
            .output()
            .expect("drover runs");
        parse_run(out, started.elapsed())
    }

    /// Starts `drover run --json` in the background.
    pub fn spawn_run(&self, timeout: Duration, args: &[&str], prompt: &str) -> Child {
        self.drover()
            .args(self.run_argv(timeout, args, prompt))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("drover runs")
    }

    pub fn finish_run(child: Child, started: Instant) -> RunOutput {
        let out = child.wait_with_output().expect("drover finishes");
        parse_run(out, started.elapsed())
    }

    /// `drover explain --cli <cli> --screen FILE --json` on a pane capture.
    pub fn explain(&self, name: &str, screen: &str) -> Value {
        let dir = self.root.path().join("screens");
        std::fs::create_dir_all(&dir).expect("mkdir");
        let file = dir.join(format!("{name}.txt"));
        std::fs::write(&file, screen).expect("write screen");
        let out = self.output(&[
            "explain",
            "--cli",
            self.cli,
            "--screen",
            &file.display().to_string(),
            "--json",
        ]);
        assert!(
            out.status.success(),
            "drover explain: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("explain prints JSON")
    }

    pub fn run_dir(&self, run_id: &str) -> PathBuf {
        self.work.join(".drover").join("runs").join(run_id)
    }

    pub fn journal(&self, run_id: &str) -> Vec<Value> {
        std::fs::read_to_string(self.run_dir(run_id).join("events.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// `state[:prompt_kind]@source` for every state transition.
    pub fn states(&self, run_id: &str) -> Vec<String> {
        self.journal(run_id)
            .iter()
            .filter(|l| l["kind"] == "state")
            .map(|l| {
                let state = l["state"].as_str().unwrap_or_default();
                let source = l["source"].as_str().unwrap_or_default();
                match l["prompt_kind"].as_str() {
                    Some(kind) => format!("{state}:{kind}@{source}"),
                    None => format!("{state}@{source}"),
                }
            })
            .collect()
    }

    /// The hook relay's drops for a run (one record per hook call): the
    /// parsed records in their time buckets under `events/`.
    pub fn relayed(&self, run_id: &str) -> Vec<Value> {
        let listed = |dir: &std::path::Path| -> Vec<std::path::PathBuf> {
            std::fs::read_dir(dir)
                .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
                .unwrap_or_default()
        };
        let mut records: Vec<Value> = listed(&self.run_dir(run_id).join("events"))
            .into_iter()
            .flat_map(|path| {
                if path.is_dir() {
                    listed(&path)
                } else {
                    vec![path]
                }
            })
            .filter_map(|path| std::fs::read_to_string(path).ok())
            .filter_map(|t| serde_json::from_str(&t).ok())
            .collect();
        records.sort_by_key(|r| r["ts"].as_u64().unwrap_or(0));
        records
    }

    /// The task's logs, for failure messages.
    pub fn logs(&self, run_id: &str) -> String {
        let dir = self.run_dir(run_id).join("logs");
        let mut text = String::new();
        for entry in std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
        {
            let body = std::fs::read(entry.path()).unwrap_or_default();
            let body = strip_ansi_escapes::strip_str(String::from_utf8_lossy(&body));
            let tail: String = body
                .chars()
                .rev()
                .take(3000)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            text.push_str(&format!("--- {}:\n{tail}\n", entry.path().display()));
        }
        text
    }
}

fn parse_run(out: std::process::Output, elapsed: Duration) -> RunOutput {
    let text = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!("drover run printed no JSON document ({e}):\nstdout: {text}\nstderr: {stderr}")
    });
    RunOutput {
        doc,
        code: out.status.code().unwrap_or(-1),
        stderr,
        elapsed,
    }
}
