//! The team contract from a script's side: `up`, `send --no-wait`, `wait`,
//! `events --follow --json` and `down`; notifications at a local webhook
//! and a command, once per event, even for a run settled after its drover
//! was killed; and nothing left running after a settled run or a downed
//! seat.

use crate::support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use support::Project;

mod contract;
mod herdr;
mod leftovers;
mod notifications;
mod unattended;

fn ok(p: &Project, args: &[&str]) -> String {
    let out = p.output(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn json(p: &Project, args: &[&str]) -> Value {
    serde_json::from_str(&ok(p, args)).unwrap_or_else(|e| panic!("{args:?}: not JSON: {e}"))
}

/// `drover events --follow --json` in the background, its lines collected.
struct Follow {
    child: Child,
    lines: Arc<Mutex<Vec<Value>>>,
}

impl Follow {
    fn start(p: &Project) -> Follow {
        let mut child = p
            .drover()
            .args(["events", "--follow", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("events --follow");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().expect("stdout");
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("events printed a non-JSON line ({e}): {line}"));
                sink.lock().expect("lines").push(value);
            }
        });
        Follow { child, lines }
    }

    /// Waits (bounded) until some line matches.
    fn until(&self, what: &str, matches: impl Fn(&Value) -> bool) -> Vec<Value> {
        let until = Instant::now() + crate::support::HANG;
        loop {
            let lines = self.lines.lock().expect("lines").clone();
            if lines.iter().any(&matches) {
                return lines;
            }
            assert!(Instant::now() < until, "no {what} line: {lines:#?}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The user config (`$XDG_CONFIG_HOME/drover/config.toml`) of a project.
fn user_config(p: &Project, text: &str) {
    let dir = p.home.join(".config/drover");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(dir.join("config.toml"), text).expect("config");
}

fn wait_for<T>(what: &str, within: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let until = Instant::now() + within;
    loop {
        if let Some(found) = probe() {
            return found;
        }
        assert!(Instant::now() < until, "{what} never happened");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn command_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// No tmux server on the project's private socket (a server that was just
/// told to end gets a moment to go).
fn assert_no_tmux(p: &Project) {
    let socket = drover::workspace::tmux::socket_for(p.path());
    let sessions = || {
        let out = std::process::Command::new("tmux")
            .args(["-L", &socket, "list-sessions"])
            .output()
            .expect("tmux");
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let until = Instant::now() + crate::support::HANG;
    while let Some(left) = sessions() {
        assert!(Instant::now() < until, "tmux sessions left behind: {left}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Nothing of the project's runs and seats is still running (a process
/// that was just hung up gets a moment to exit).
fn assert_nothing_left(p: &Project) {
    let until = Instant::now() + crate::support::HANG;
    loop {
        let left = processes_of(p);
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < until, "still running: {left:#?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What a run or seat of this project could leave running: its CLIs (they
/// carry `DROVER_RUN_DIR` under the project), the shells of its herdr
/// panes, and its private tmux server.
fn processes_of(p: &Project) -> Vec<String> {
    let run_dir = format!("DROVER_RUN_DIR={}", p.path().display());
    let pane = format!("HERDR_SOCKET_PATH={}", p.path().display());
    let socket = drover::workspace::tmux::socket_for(p.path());
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc")
        .expect("proc")
        .filter_map(Result::ok)
    {
        if entry.file_name().to_string_lossy().parse::<u32>().is_err() {
            continue;
        }
        let read = |f: &str| std::fs::read(entry.path().join(f)).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&read("cmdline")).replace('\0', " ");
        let environ = String::from_utf8_lossy(&read("environ")).into_owned();
        let stat = String::from_utf8_lossy(&read("stat")).into_owned();
        let zombie = stat
            .rfind(')')
            .is_some_and(|i| stat[i + 1..].trim_start().starts_with('Z'));
        let ours = environ.contains(&run_dir)
            || (environ.contains(&pane) && environ.contains("HERDR_PANE_ID="))
            || (cmdline.starts_with("tmux") && cmdline.contains(&socket));
        if ours && !zombie {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}
