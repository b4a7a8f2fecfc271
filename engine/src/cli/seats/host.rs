//! ACP seats: their background host, which holds the agent and its session.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, bail};

use super::send::{Sent, send_outcome};
use super::{SendArgs, context, seat_dir};
use crate::cli::Outcome;
use crate::cli::output::errln;
use crate::gate::Cleared;
use crate::run::RunDir;
use crate::seat_host;
use crate::seats::{self, SeatRecord};
use crate::workspace::process;

/// `drover up --workspace acp`: the seat is recorded, then its host starts
/// the agent and opens its session.
pub(super) fn up_acp(
    project: &Path,
    record: &SeatRecord,
) -> anyhow::Result<(SeatRecord, seat_host::HostState)> {
    crate::policy::Policy::load(project)?;
    seats::save(project, record)?;
    let state = match start_host(project, record) {
        Ok(state) => state,
        Err(e) => {
            let _ = seats::remove(project, &record.nick);
            bail!("seat {} did not come up: {e}", record.nick);
        }
    };
    let record = seats::load(project, &record.nick)
        .and_then(|r| seats::require_sealed(r).ok())
        .unwrap_or_else(|| record.clone());
    Ok((record, state))
}

/// Starts an acp seat's host and waits until its agent has a session.
pub(super) fn start_host(
    project: &Path,
    record: &SeatRecord,
) -> anyhow::Result<seat_host::HostState> {
    let run = RunDir::open(project, &record.run_id)?;
    let log = run
        .root()
        .join("logs")
        .join(format!("{}.host.log", record.nick));
    let pid = seat_host::spawn(project, record, &log)
        .with_context(|| format!("starting the seat host for {}", record.nick))?;
    seat_host::wait_ready(&seat_dir(project, record), pid, seat_host::READY_TIMEOUT)
        .map_err(|e| anyhow::anyhow!("{e} (log: {})", log.display()))
}

/// `drover send` to an acp seat: the message goes to the seat's host (one
/// is started, resuming the conversation, if none is alive), and the turn's
/// result comes back as a file.
pub(super) fn send_acp(
    project: &Path,
    record: &SeatRecord,
    args: &SendArgs,
) -> anyhow::Result<Sent> {
    let dir = seat_dir(project, record);
    let host = match seat_host::alive(&dir) {
        Some(host) => host,
        None => start_host(project, record)?,
    };
    let id = seat_host::post(&dir, &args.prompt, args.timeout)
        .with_context(|| format!("leaving the message for seat {}", record.nick))?;
    let interrupted = crate::cli::interrupt_flag()?;
    let mut cancelled = false;
    let result = loop {
        if let Some(result) = seat_host::result(&dir, &id) {
            break result;
        }
        if interrupted.load(std::sync::atomic::Ordering::Relaxed) && !cancelled {
            seat_host::cancel(&dir, &id);
            cancelled = true;
        }
        if !host.identity.is_some_and(process::alive) {
            bail!(
                "seat {}'s host stopped before the turn ended; `drover send` again to restart it (the conversation resumes)",
                record.nick
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    // The record as it is now (the host may have written it meanwhile).
    if let Some(mut now) =
        seats::load(project, &record.nick).and_then(|r| seats::require_sealed(r).ok())
        && super::send::add_cost(&mut now, &result)
    {
        seats::save(project, &now)?;
    }
    let outcome = send_outcome(&interrupted, &result);
    Ok(Sent::Turn {
        seat: record.nick.clone(),
        result: Box::new(result),
        outcome,
    })
}

/// `drover seat-host NICK`: the background process of an acp seat.
pub fn host(project: &Path, nick: &str) -> anyhow::Result<Outcome> {
    let project = project.canonicalize()?;
    let Some(record) = seats::load(&project, nick) else {
        bail!("no seat named {nick}");
    };
    let record = seats::require_sealed(record).map_err(anyhow::Error::msg)?;
    let ctx = context(&project, &record)?;
    let stop = crate::cli::interrupt_flag()?;
    seat_host::serve(&ctx, &record, &stop).map_err(|e| anyhow::anyhow!(e))?;
    Ok(Outcome::Ok)
}

/// Asks a seat host to stop (it closes its agent), then makes sure. Only a
/// host the gate cleared: one a sealed `host.json` names, still running
/// with its recorded start time.
pub(super) fn stop_host(nick: &str, host: &Cleared<process::Identity>) {
    process::terminate(host);
    let until = std::time::Instant::now() + Duration::from_secs(15);
    while process::alive(**host) && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    if process::alive(**host) {
        for member in &process::cleared_tree(host) {
            process::force_kill(member);
        }
        errln!("{nick}: force-killed its host {}", host.pid);
    }
}
