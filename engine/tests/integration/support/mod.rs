//! Shared harness for the end-to-end tests: an isolated project (its own
//! HOME, tmux socket and run dirs), the real `drover` binary, and the
//! scripted test CLI built next to it (`cargo build --workspace`).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub use real::wait_for;

/// How long a test waits for something that takes seconds on an idle
/// machine before it calls it a hang: a bound that only catches hangs, so
/// no verdict depends on how busy the machine is.
pub const HANG: std::time::Duration = std::time::Duration::from_secs(300);

pub fn drover_exe() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_drover"))
}

/// The directory holding `drover` and (after `cargo build --workspace`) the
/// test binaries of the other workspace members.
pub fn bin_dir() -> PathBuf {
    drover_exe()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

pub fn scripted_cli() -> PathBuf {
    let path = bin_dir().join("scripted-cli");
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build --workspace` before the tests (the README's test command does)",
        path.display()
    );
    path
}

/// The relay `hooks install` registers: the binary drover carries, written
/// out (once per test process, as `hooks install` writes it) under the
/// target's temporary directory.
pub fn relay_exe() -> PathBuf {
    static RELAY: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    RELAY
        .get_or_init(|| {
            let data = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("relay-data");
            let cleared = drover::gate::clear(
                drover::gate::Effect::Write,
                "the tests' relay directory",
                drover::gate::Sourced::new(data, drover::gate::Provenance::Operator),
            )
            .expect("cleared");
            drover::hooks::embedded::write_in(&cleared).expect("the relay is written out")
        })
        .clone()
}

/// A compile cache shared by every test process, so components compile once.
pub fn shared_cache() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("drover-cache")
}

pub struct Project {
    pub dir: tempfile::TempDir,
    pub home: PathBuf,
    /// A fake herdr server this project's drover talks to.
    pub herdr: Option<FakeHerdr>,
}

/// `fake-herdr` (tests/fake-herdr) on a socket of its own.
pub struct FakeHerdr {
    pub socket: PathBuf,
    /// Every request drover sent, one JSON line each.
    pub log: PathBuf,
    child: std::process::Child,
}

impl FakeHerdr {
    pub fn start(dir: &Path, args: &[&str]) -> FakeHerdr {
        let exe = bin_dir().join("fake-herdr");
        assert!(
            exe.is_file(),
            "{} is missing: run `cargo build --workspace` before the tests",
            exe.display()
        );
        let socket = dir.join("herdr.sock");
        let log = dir.join("herdr-requests.jsonl");
        let child = Command::new(exe)
            .arg("--socket")
            .arg(&socket)
            .arg("--log")
            .arg(&log)
            .args(args)
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("fake-herdr starts");
        let until = std::time::Instant::now() + crate::support::HANG;
        while std::os::unix::net::UnixStream::connect(&socket).is_err() {
            assert!(
                std::time::Instant::now() < until,
                "fake-herdr never listened"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        FakeHerdr { socket, log, child }
    }

    /// The server disappears (SIGKILL), as a crashed herdr would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// One request to the server, its reply.
    pub fn call(&self, method: &str, params: Value) -> Value {
        use std::io::{BufRead, Write};
        let mut stream =
            std::os::unix::net::UnixStream::connect(&self.socket).expect("fake-herdr answers");
        let request = serde_json::json!({"id": "test", "method": method, "params": params});
        writeln!(stream, "{request}").expect("send");
        let mut line = String::new();
        std::io::BufReader::new(stream)
            .read_line(&mut line)
            .expect("reply");
        serde_json::from_str(&line).expect("JSON reply")
    }

    /// The methods drover called, in order.
    pub fn methods(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| v["method"].as_str().map(str::to_string))
            .collect()
    }
}

impl Drop for FakeHerdr {
    fn drop(&mut self) {
        self.kill();
    }
}

impl Project {
    pub fn new() -> Project {
        let dir = tempfile::Builder::new()
            .prefix("drover-e2e-")
            .tempdir()
            .expect("tempdir");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).expect("home");
        let _ = scripted_cli();
        Project {
            dir,
            home,
            herdr: None,
        }
    }

    /// A project whose drover talks to a fake herdr started with `args`.
    pub fn with_fake_herdr(args: &[&str]) -> Project {
        let mut p = Project::new();
        p.herdr = Some(FakeHerdr::start(p.path(), args));
        p
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// `drover` with this project's isolation: HOME, config, state, cache, PATH.
    pub fn drover(&self) -> Command {
        let mut cmd = Command::new(drover_exe());
        let path = format!(
            "{}:{}",
            bin_dir().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        cmd.current_dir(self.path())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            // The record seal's key: each project's user has their own.
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            // Where `hooks install` writes the relay.
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("DROVER_CACHE_DIR", shared_cache())
            .env("PATH", path)
            .env_remove("DROVER_WORKSPACE")
            .env_remove("DROVER_RUN_DIR")
            .env_remove("DROVER_TASK_ID")
            .env_remove("TMUX")
            .env_remove("HERDR_SESSION");
        match &self.herdr {
            Some(herdr) => cmd.env("HERDR_SOCKET_PATH", &herdr.socket),
            None => cmd.env_remove("HERDR_SOCKET_PATH"),
        };
        cmd
    }

    pub fn output(&self, args: &[&str]) -> Output {
        self.drover().args(args).output().expect("drover runs")
    }

    pub fn install_hooks(&self, cli: &str) {
        let out = self.output(&["hooks", "install", "--cli", cli]);
        assert!(
            out.status.success(),
            "hooks install: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// `drover run --json …`: the result document and the exit code.
    pub fn run(&self, args: &[&str]) -> (Value, i32) {
        let mut all = vec!["run", "--json"];
        all.extend_from_slice(args);
        let out = self.output(&all);
        let text = String::from_utf8_lossy(&out.stdout);
        let doc: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!(
                "drover run printed no JSON document ({e}):\nstdout: {text}\nstderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (doc, out.status.code().unwrap_or(-1))
    }

    pub fn run_dir(&self, run_id: &str) -> PathBuf {
        self.path().join(".drover").join("runs").join(run_id)
    }

    /// The run's `events.jsonl` lines.
    pub fn journal(&self, run_id: &str) -> Vec<Value> {
        std::fs::read_to_string(self.run_dir(run_id).join("events.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Waits until the project's first run shows its CLI working, and
    /// returns that run's id.
    pub fn first_run_working(&self) -> String {
        self.first_run_journaling("\"working\"")
    }

    /// Waits until the journal of the project's first run contains
    /// `needle`, and returns that run's id. The bound only catches a hang:
    /// the wait is for the event, however long a busy machine takes.
    pub fn first_run_journaling(&self, needle: &str) -> String {
        let runs = self.path().join(".drover").join("runs");
        let found = wait_for(HANG, || {
            let id = std::fs::read_dir(&runs)
                .ok()
                .and_then(|mut d| d.next())
                .and_then(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())?;
            std::fs::read_to_string(runs.join(&id).join("events.jsonl"))
                .is_ok_and(|t| t.contains(needle))
                .then_some(id)
        });
        found.unwrap_or_else(|| panic!("the first run never journaled {needle} within {HANG:?}"))
    }

    /// The states the journal recorded for a task, in order.
    pub fn states(&self, run_id: &str) -> Vec<String> {
        self.journal(run_id)
            .iter()
            .filter(|l| l["kind"] == "state")
            .map(|l| match l["prompt_kind"].as_str() {
                Some(kind) => format!("{}:{kind}", l["state"].as_str().unwrap_or_default()),
                None => l["state"].as_str().unwrap_or_default().to_string(),
            })
            .collect()
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        // Each project has a private tmux server; end it with the test.
        let socket = drover::workspace::tmux::socket_for(self.path());
        let _ = Command::new("tmux")
            .args(["-L", &socket, "kill-server"])
            .output();
    }
}

pub fn tmux_required() {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "tmux is required for the tmux workspace tests (CI installs it: apt-get install tmux)"
    );
}

/// The `probe-adapter --probe` scratch workspaces still present in `tmp`.
pub fn probe_leftovers(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("drover-probe-"))
                .collect()
        })
        .unwrap_or_default()
}

pub mod echo;
pub mod mcp;
pub mod ray_cluster;
pub mod real;
pub mod real_acp;
pub mod real_scenarios;
pub mod webdriver;
