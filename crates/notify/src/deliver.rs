//! Delivering one notification, bounded: a command is killed, a webhook
//! abandoned, a multiplexer call given up after [`BOUND`].

use std::io::{Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use wait_timeout::ChildExt as _;

use super::{Entry, Target};
use drover_gate::{Cleared, Effect, Sourced};
use drover_run::RunInfo;

/// The most one notifier may take.
pub const BOUND: Duration = Duration::from_secs(5);
/// Bytes of a failing command's stderr or webhook's reply kept as the reason.
const REASON_MAX: usize = 300;

pub enum Sent {
    Sent(String),
    /// This notifier does not apply (no desktop notifier here, a headless
    /// run has no tmux session, …).
    Skipped(String),
}

pub fn deliver(entry: &Entry, doc: &Value, project: &Path, info: &RunInfo) -> Result<Sent, String> {
    let target = &entry.target;
    let text = doc["text"].as_str().unwrap_or("drover").to_string();
    // The multiplexer notifiers show the message where the run's panes are.
    let needs = match target {
        Target::Tmux => Some(drover_types::WorkspaceKind::Tmux),
        Target::Herdr => Some(drover_types::WorkspaceKind::Herdr),
        _ => None,
    };
    if let Some(needs) = needs
        && info.workspace != needs
    {
        return Ok(Sent::Skipped(format!(
            "the run is on {}, not {needs}",
            info.workspace
        )));
    }
    match target {
        Target::Command { argv } => command(cleared(Effect::Spawn, entry, argv)?, doc),
        Target::Webhook { url, headers } => {
            webhook(cleared(Effect::Connect, entry, url)?, headers, doc)
        }
        Target::Desktop => desktop(&text),
        Target::Tmux => {
            let tmux =
                drover_workspace::tmux::Tmux::for_project(project).map_err(|e| e.to_string())?;
            let session = drover_workspace::tmux::session_name(&info.run_id);
            match tmux.display_message(&session, &text, BOUND) {
                Ok(true) => Ok(Sent::Sent(format!("shown on tmux session {session}"))),
                Ok(false) => Ok(Sent::Skipped(format!(
                    "nobody is attached to tmux session {session}"
                ))),
                Err(e) => Err(e.to_string()),
            }
        }
        Target::Herdr => {
            let herdr =
                drover_workspace::herdr::Herdr::connect(BOUND).map_err(|e| e.to_string())?;
            herdr
                .notify("drover", &text)
                .map(Sent::Sent)
                .map_err(|e| e.to_string())
        }
    }
}

/// The entry's own value, through the gate, against its file's provenance.
fn cleared<'a, T: ?Sized>(
    effect: Effect,
    entry: &Entry,
    value: &'a T,
) -> Result<Cleared<&'a T>, String> {
    drover_gate::clear(effect, &entry.at, Sourced::new(value, entry.from))
        .map_err(|refused| refused.to_string())
}

fn command(argv: Cleared<&Vec<String>>, doc: &Value) -> Result<Sent, String> {
    let argv = argv.into_inner();
    let (program, args) = argv.split_first().ok_or("no program")?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    let body = format!("{doc}\n");
    if let Some(mut stdin) = child.stdin.take() {
        // A command that never reads must not block us: a writer thread.
        std::thread::spawn(move || {
            let _ = stdin.write_all(body.as_bytes());
        });
    }
    let stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(pipe) = stderr {
            let _ = pipe.take(64 << 10).read_to_string(&mut text);
        }
        text
    });
    match child.wait_timeout(BOUND) {
        Ok(Some(status)) if status.success() => Ok(Sent::Sent(format!("{program} exited 0"))),
        Ok(Some(status)) => {
            let err = reader.join().unwrap_or_default();
            Err(format!(
                "{program} failed ({status}): {}",
                drover_types::text::truncate_chars(err.trim(), REASON_MAX)
            ))
        }
        Ok(None) => {
            // Its own process group: take everything it started with it.
            // SAFETY: killpg on the group of a child we spawned with
            // process_group(0), whose pgid is its pid.
            unsafe {
                libc::killpg(child.id() as i32, libc::SIGKILL);
            }
            let _ = child.wait();
            Err(format!(
                "{program} did not finish within {} s; killed",
                BOUND.as_secs()
            ))
        }
        Err(e) => Err(format!("cannot wait for {program}: {e}")),
    }
}

fn webhook(
    url: Cleared<&String>,
    headers: &std::collections::BTreeMap<String, String>,
    doc: &Value,
) -> Result<Sent, String> {
    let url = url.into_inner();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(BOUND))
        .http_status_as_error(false)
        .build()
        .into();
    let mut request = agent.post(url).header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(name.as_str(), value.as_str());
    }
    let body = doc.to_string();
    let mut response = request
        .send(body.as_bytes())
        .map_err(|e| format!("POST {url}: {e}"))?;
    let status = response.status().as_u16();
    if (200..300).contains(&status) {
        Ok(Sent::Sent(format!("POST {url}: {status}")))
    } else {
        let reply = response
            .body_mut()
            .with_config()
            .limit(REASON_MAX as u64)
            .read_to_string()
            .unwrap_or_default();
        Err(format!(
            "POST {url}: {status} {}",
            drover_run::status::clean_evidence(&reply).unwrap_or_default()
        ))
    }
}

fn desktop(text: &str) -> Result<Sent, String> {
    let Some((program, args)) = desktop_notifier(text) else {
        return Ok(Sent::Skipped(
            "no desktop notifier here (notify-send or osascript)".to_string(),
        ));
    };
    let mut child = Command::new(&program)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    match child.wait_timeout(BOUND) {
        Ok(Some(status)) if status.success() => {
            Ok(Sent::Sent(format!("{} exited 0", program.display())))
        }
        Ok(Some(status)) => Err(format!("{} failed ({status})", program.display())),
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(format!("{} did not finish; killed", program.display()))
        }
        Err(e) => Err(e.to_string()),
    }
}

/// The platform's notifier and its arguments, when there is one.
pub fn desktop_notifier(text: &str) -> Option<(std::path::PathBuf, Vec<String>)> {
    if let Ok(path) = which::which("notify-send") {
        return Some((path, vec!["drover".to_string(), text.to_string()]));
    }
    if let Ok(path) = which::which("osascript") {
        let quoted = text.replace('\\', "\\\\").replace('"', "\\\"");
        return Some((
            path,
            vec![
                "-e".to_string(),
                format!("display notification \"{quoted}\" with title \"drover\""),
            ],
        ));
    }
    None
}
