//! The seat host: the background drover process that holds an `acp` seat's
//! agent between commands. `drover up --workspace acp` starts it; it opens
//! the agent's session and then serves the seat's mailbox until `drover
//! down` stops it or the agent exits.
//!
//! Everything between the commands and the host is a file in the seat's
//! task directory, so nothing depends on a connection and a restarted host
//! picks up where the files say:
//!
//! ```text
//! host.json              the host's identity and state: starting, ready, stopped, failed
//! inbox/<id>.json        a message to send (`drover send` writes it)
//! inbox/<id>.cancel      `drover send` was interrupted: cancel that turn
//! results/<id>.json      the turn's TurnReport (the host writes it)
//! answers/<question>.json  a person's answer (`drover answer`)
//! ```
//!
//! When no host is alive (the machine restarted, the agent crashed), the
//! next `drover send` starts one, which resumes the seat's conversation
//! with `session/load`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::SeatRecord;
use drover_drive::{Context, Conversation, TurnReport, TurnSpec, acp};
use drover_gate::{Cleared, Provenance};
use drover_run::now_ns;
use drover_trust::policy::Policy;
use drover_types::wit::SeatState;
use drover_workspace::process::{self, Identity};

const POLL: Duration = Duration::from_millis(200);
/// How long a host may take to open the agent's session.
pub const READY_TIMEOUT: Duration = Duration::from_secs(240);

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostState {
    pub identity: Option<Identity>,
    /// `starting`, `ready`, `stopped` or `failed`.
    pub state: String,
    pub reason: Option<String>,
    pub session: Option<String>,
    pub agent_pid: Option<u32>,
    pub ts: u64,
}

/// A message for the host.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Message {
    pub id: String,
    pub prompt: String,
    pub timeout_s: f64,
    pub ts: u64,
}

fn host_path(task_dir: &Path) -> PathBuf {
    task_dir.join("host.json")
}

fn inbox(task_dir: &Path) -> PathBuf {
    task_dir.join("inbox")
}

fn result_path(task_dir: &Path, id: &str) -> PathBuf {
    task_dir.join("results").join(format!("{id}.json"))
}

/// `host.json`, if this user's drover sealed it. A host record a checkout
/// committed (naming some process of the user's) is never read as a host.
pub fn read_state(task_dir: &Path) -> Option<HostState> {
    drover_run::sealed::read_sealed::<HostState>(&host_path(task_dir))
        .ok()
        .filter(|s| s.from == Provenance::SealedRecord)
        .map(|s| s.value)
}

fn write_state(task_dir: &Path, state: &HostState) {
    if let Err(e) = drover_run::sealed::write_sealed(&host_path(task_dir), state) {
        tracing::warn!("cannot record the seat host's state: {e}");
    }
}

/// The host's state while it is still running (its sealed identity and
/// start time both match a live process).
pub fn alive(task_dir: &Path) -> Option<HostState> {
    read_state(task_dir).filter(|s| {
        s.identity.is_some_and(process::alive) && matches!(s.state.as_str(), "starting" | "ready")
    })
}

/// The running host, cleared to be signalled (`drover down`): only a host
/// whose sealed record names it.
pub fn stoppable(task_dir: &Path) -> Option<Cleared<Identity>> {
    let identity = alive(task_dir)?.identity?;
    process::clear_signal("the seat host", identity, Provenance::SealedRecord)
        .inspect_err(|e| tracing::warn!("{e}"))
        .ok()
}

/// Starts a host for `nick` in the background: its own process group, no
/// terminal, its output in `logs/<nick>.host.log`.
pub fn spawn(project: &Path, seat: &SeatRecord, log: &Path) -> std::io::Result<u32> {
    let exe = std::env::current_exe()?;
    let out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    let mut command = std::process::Command::new(exe);
    command
        .arg("--project")
        .arg(project)
        .arg("seat-host")
        .arg(&seat.nick)
        .stdin(std::process::Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(out);
    let child = process::detached(&mut command).spawn()?;
    Ok(child.id())
}

/// Waits until the host says it is ready (or failed, or died).
pub fn wait_ready(task_dir: &Path, pid: u32, timeout: Duration) -> Result<HostState, String> {
    let until = Instant::now() + timeout;
    loop {
        // Looked at before its record, so a host that recorded why it failed
        // and then ended is read with its reason. A host that died stays
        // listed as a zombie until this process (its parent) reaps it:
        // liveness is `alive`, not "listed".
        let ended = !process::identity(pid).is_some_and(process::alive);
        if let Some(state) = read_state(task_dir)
            && state.identity.map(|i| i.pid) == Some(pid)
        {
            match state.state.as_str() {
                "ready" => return Ok(state),
                "failed" | "stopped" => {
                    return Err(state
                        .reason
                        .unwrap_or_else(|| "the seat host stopped".to_string()));
                }
                _ => {}
            }
        }
        if ended {
            return Err("the seat host exited before it was ready (see its log)".to_string());
        }
        if Instant::now() >= until {
            return Err(format!(
                "the seat host was not ready within {}s",
                timeout.as_secs()
            ));
        }
        std::thread::sleep(POLL);
    }
}

/// Leaves a message for the host; its id names the result to wait for.
pub fn post(task_dir: &Path, prompt: &str, timeout: Duration) -> std::io::Result<String> {
    let id = format!("m{}", now_ns());
    let message = Message {
        id: id.clone(),
        prompt: prompt.to_string(),
        timeout_s: timeout.as_secs_f64(),
        ts: now_ns(),
    };
    drover_run::write_json_atomic(&inbox(task_dir).join(format!("{id}.json")), &message)?;
    Ok(id)
}

/// Asks the host to cancel the turn of message `id`.
pub fn cancel(task_dir: &Path, id: &str) {
    let _ = drover_state::append_line(&inbox(task_dir).join(format!("{id}.cancel")), "");
}

/// The result of message `id`, once the host wrote it.
pub fn result(task_dir: &Path, id: &str) -> Option<TurnReport> {
    serde_json::from_str(&std::fs::read_to_string(result_path(task_dir, id)).ok()?).ok()
}

/// The oldest message waiting in the inbox.
fn next_message(task_dir: &Path) -> Option<(PathBuf, Message)> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(inbox(task_dir))
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    names.sort();
    for path in names {
        match std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str::<Message>(&t).ok())
        {
            Some(message) => return Some((path, message)),
            None => {
                tracing::warn!(path = %path.display(), "dropping an unreadable seat message");
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    None
}

/// The project's policy as it is now (each message reads it, so an edit
/// applies to the next one). An invalid policy answers nothing: every
/// question waits for a person, and the mistake is reported.
fn current_policy(ctx: &Context, task: &str) -> Policy {
    Policy::load(&ctx.project).unwrap_or_else(|e| {
        ctx.run.lifecycle(
            task,
            "policy-invalid",
            serde_json::json!({"error": e.to_string()}),
        );
        ctx.attention(&format!("the policy is not used, it is invalid: {e}"));
        Policy::default()
    })
}

/// The host's loop. `stop` is set by SIGTERM/SIGINT (`drover down`).
pub fn serve(ctx: &Context, seat: &SeatRecord, stop: &Arc<AtomicBool>) -> Result<(), String> {
    let task = seat.nick.as_str();
    let task_dir = ctx.run.task_dir(task);
    let _ = std::fs::create_dir_all(inbox(&task_dir));
    let me = process::identity(std::process::id());
    let mut state = HostState {
        identity: me,
        state: "starting".to_string(),
        reason: None,
        session: seat.conversation.clone(),
        agent_pid: None,
        ts: now_ns(),
    };
    write_state(&task_dir, &state);
    let mut spec = TurnSpec::new(task, "", seat.cwd.clone());
    spec.model = seat.model.clone();
    spec.extra_args = seat.extra_args.clone();
    spec.timeout = READY_TIMEOUT;
    spec.conversation = seat
        .conversation
        .clone()
        .map_or(Conversation::Fresh, Conversation::Resume);
    spec.cancel = Some(Arc::clone(stop));
    let mut agent = match acp::open(ctx, &spec) {
        Ok(agent) => agent,
        Err(result) => {
            state.state = "failed".to_string();
            state.reason = Some(format!("{} ({})", result.reason, result.status.as_str()));
            state.ts = now_ns();
            write_state(&task_dir, &state);
            return Err(result.reason);
        }
    };
    let mut record = seat.clone();
    record.conversation = Some(agent.session.clone());
    if let Err(e) = crate::save(&ctx.project, &record) {
        tracing::warn!("cannot record seat {task}'s conversation: {e}");
    }
    state.state = "ready".to_string();
    state.session = Some(agent.session.clone());
    state.agent_pid = Some(agent.pid());
    state.ts = now_ns();
    write_state(&task_dir, &state);

    let reason = loop {
        if stop.load(Ordering::Relaxed) {
            break "stopped (drover down)".to_string();
        }
        if agent.exited() {
            ctx.state(task, SeatState::Unknown, None, "acp:agent-exited");
            break "the agent exited".to_string();
        }
        let Some((path, message)) = next_message(&task_dir) else {
            std::thread::sleep(POLL);
            continue;
        };
        let turn_cancel = Arc::new(AtomicBool::new(false));
        let watcher = watch_cancel(&task_dir, &message.id, stop, &turn_cancel);
        let mut spec = TurnSpec::new(task, &message.prompt, seat.cwd.clone());
        spec.model = seat.model.clone();
        spec.timeout = Duration::from_secs_f64(message.timeout_s.max(0.0));
        spec.keep = true;
        spec.cancel = Some(Arc::clone(&turn_cancel));
        let result = acp::turn(ctx, &spec, &mut agent, &current_policy(ctx, task));
        turn_cancel.store(true, Ordering::Relaxed);
        let _ = watcher.join();
        if let Err(e) = drover_run::write_json_atomic(&result_path(&task_dir, &message.id), &result)
        {
            tracing::warn!("cannot write the result of {}: {e}", message.id);
        }
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(inbox(&task_dir).join(format!("{}.cancel", message.id)));
    };
    acp::close(ctx, task, agent, Duration::from_secs(10));
    state.state = "stopped".to_string();
    state.reason = Some(reason);
    state.agent_pid = None;
    state.ts = now_ns();
    write_state(&task_dir, &state);
    Ok(())
}

/// Sets `turn` when the host is stopped or the message's sender cancels,
/// until `turn` is set by the host at the turn's end.
fn watch_cancel(
    task_dir: &Path,
    id: &str,
    stop: &Arc<AtomicBool>,
    turn: &Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    let cancel_file = inbox(task_dir).join(format!("{id}.cancel"));
    let stop = Arc::clone(stop);
    let turn = Arc::clone(turn);
    std::thread::spawn(move || {
        while !turn.load(Ordering::Relaxed) {
            if stop.load(Ordering::Relaxed) || cancel_file.exists() {
                turn.store(true, Ordering::Relaxed);
                return;
            }
            std::thread::sleep(POLL);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_served_oldest_first_and_junk_is_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = post(dir.path(), "one", Duration::from_secs(60)).expect("post");
        let second = post(dir.path(), "two", Duration::from_secs(60)).expect("post");
        assert!(first < second);
        std::fs::write(inbox(dir.path()).join("a-junk.json"), "{").expect("junk");
        cancel(dir.path(), &first);
        let (path, message) = next_message(dir.path()).expect("a message");
        assert_eq!(message.prompt, "one");
        std::fs::remove_file(path).expect("rm");
        let (_, message) = next_message(dir.path()).expect("a message");
        assert_eq!(message.id, second);
        assert!(!inbox(dir.path()).join("a-junk.json").exists());
        assert!(result(dir.path(), &second).is_none());
    }

    #[test]
    fn a_dead_or_finished_host_is_not_alive() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(alive(dir.path()).is_none());
        let me = process::identity(std::process::id());
        let mut state = HostState {
            identity: me,
            state: "ready".to_string(),
            reason: None,
            session: Some("s".to_string()),
            agent_pid: None,
            ts: 1,
        };
        write_state(dir.path(), &state);
        assert!(alive(dir.path()).is_some());
        state.state = "stopped".to_string();
        write_state(dir.path(), &state);
        assert!(alive(dir.path()).is_none());
        state.state = "ready".to_string();
        state.identity = me.map(|i| Identity {
            pid: i.pid,
            start: i.start + 1,
        });
        write_state(dir.path(), &state);
        assert!(alive(dir.path()).is_none());
        // The same live identity in a record drover did not seal: not a host.
        state.identity = me;
        std::fs::write(
            host_path(dir.path()),
            serde_json::to_string(&state).expect("json"),
        )
        .expect("unsealed");
        assert!(alive(dir.path()).is_none());
        assert!(stoppable(dir.path()).is_none());
    }
}
