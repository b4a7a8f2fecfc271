//! `drover events [--follow]`: every state transition and verdict of the
//! project's runs and seats, oldest first, one line each; with `--follow`,
//! new ones as they are appended, across runs that start later, until
//! interrupted. `--json` prints JSON lines: each journal line's fields plus
//! `run` and `seat`.
//!
//! A follower also settles runs whose drover died (as `drover status`
//! does), so their verdicts — and notifications — still come.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::Outcome;
use super::output::{Json, errln, outln, stdout_json};
use crate::drive::recover::{Settler, driver_alive, is_seat_run};
use crate::run::{Follower, RunDir, RunEvent};

/// How often a follower looks for runs whose drover died.
pub const SETTLE_EVERY: Duration = Duration::from_secs(2);

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Keep printing new transitions until interrupted.
    #[arg(long, short)]
    follow: bool,
    /// Only lines at or after this time: an RFC 3339 time
    /// (2026-12-01T10:00:00Z) or a duration back from now (10m, 2h).
    #[arg(long, value_name = "TS|DUR", value_parser = parse_since)]
    since: Option<u64>,
    /// Only this run.
    #[arg(long, value_name = "ID")]
    run: Option<String>,
    /// Only this seat.
    #[arg(long, value_name = "NICK")]
    seat: Option<String>,
    /// Only seats of this role (as their records say when each first
    /// appears).
    #[arg(long, value_name = "ROLE")]
    role: Option<String>,
    #[command(flatten)]
    json: Json,
}

/// `--since` as nanoseconds since the epoch.
pub fn parse_since(text: &str) -> Result<u64, String> {
    if let Ok(time) = humantime::parse_rfc3339_weak(text.trim()) {
        return time
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .map_err(|_| format!("'{text}' is before 1970"));
    }
    let back = super::run::parse_duration(text).map_err(|_| {
        format!("'{text}' is neither a time (2026-12-01T10:00:00Z) nor a duration (10m)")
    })?;
    Ok(SystemTime::now()
        .checked_sub(back)
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as u64))
}

/// The journal lines `args` asks for so far (`--follow` aside), oldest
/// first: what `drover events --json` prints, one a line, and the MCP
/// `events` tool pages through. `Err`: no such run.
pub fn matching(project: &Path, args: &Args) -> Result<Vec<RunEvent>, String> {
    if let Some(id) = &args.run
        && RunDir::open(project, id).is_err()
    {
        return Err(format!("no run {id} in {}", project.display()));
    }
    let mut keep = filter(project, args);
    Ok(Follower::new(project, args.run.as_deref())
        .read_all()
        .into_iter()
        .filter(|e| keep(e))
        .collect())
}

/// Whether a journal line passes `args`' filters (time, seat, role).
fn filter<'a>(project: &'a Path, args: &'a Args) -> impl FnMut(&RunEvent) -> bool + 'a {
    // A seat's role, read from its sealed record once.
    let mut roles: std::collections::HashMap<String, Option<String>> =
        std::collections::HashMap::new();
    move |e: &RunEvent| {
        args.since.is_none_or(|since| e.transition.ts >= since)
            && args
                .seat
                .as_ref()
                .is_none_or(|s| e.seat.as_ref() == Some(s))
            && args.role.as_ref().is_none_or(|role| {
                e.seat.as_deref().is_some_and(|nick| {
                    roles
                        .entry(nick.to_string())
                        .or_insert_with(|| {
                            crate::seats::load(project, nick)
                                .and_then(|s| crate::seats::require_sealed(s).ok())
                                .map(|s| s.role)
                        })
                        .as_ref()
                        == Some(role)
                })
            })
    }
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    if let Some(id) = &args.run
        && RunDir::open(project, id).is_err()
    {
        errln!("error: no run {id} in {}", project.display());
        return Ok(Outcome::Usage);
    }
    let mut follower = Follower::new(project, args.run.as_deref());
    let mut keep = filter(project, &args);
    for event in follower.read_all().into_iter().filter(|e| keep(e)) {
        print(&event, args.json.json);
    }
    if !args.follow {
        return Ok(Outcome::Ok);
    }
    let mut settler = Settler::new(project);
    let mut last_settle = std::time::Instant::now();
    loop {
        for event in follower.next(SETTLE_EVERY) {
            // Lines written by a process that did not notify (a remote
            // relay, a drover that died mid-write) still get their chance;
            // the ledger keeps it to once.
            crate::notify::kick(project, &event.run, &event.transition);
            if keep(&event) {
                print(&event, args.json.json);
            }
        }
        if last_settle.elapsed() >= SETTLE_EVERY {
            last_settle = std::time::Instant::now();
            settle_orphans(project, &mut follower, &mut settler);
        }
    }
}

/// Settles the open runs (not seats) whose drover is gone; their verdicts
/// land in the journals and reach the follower like any other line.
pub fn settle_orphans(project: &Path, follower: &mut Follower, settler: &mut Settler) {
    for (id, info) in follower.open_runs() {
        if is_seat_run(&info) || driver_alive(&info) {
            continue;
        }
        if let Ok(run) = RunDir::open(project, &id) {
            let _ = settler.status(&run);
        }
    }
}

fn print(event: &RunEvent, json: bool) {
    if json {
        stdout_json(&format!("{}\n", event.to_json()));
        return;
    }
    let t = &event.transition;
    let what = match &t.record {
        crate::run::Record::Verdict { verdict } => format!("verdict {verdict}"),
        other => super::seats::state_label(Some(other.value()), t.prompt_kind(), t.evidence()),
    };
    let reason = t
        .detail
        .get("reason")
        .and_then(serde_json::Value::as_str)
        .map(|r| format!(" ({r})"))
        .unwrap_or_default();
    let who = match &event.seat {
        Some(nick) => format!("seat {nick}"),
        None => format!("{} {}", event.run, t.task),
    };
    // Journal text can come from a CLI's hook payload: no control characters.
    let line = format!("{}  {who}  {what}  {}{reason}", time(t.ts), t.source);
    let line: String = line.chars().filter(|c| !c.is_control()).collect();
    outln!("{line}");
}

/// `2026-12-01T10:00:00.123Z`.
pub fn time(ns: u64) -> String {
    let (y, mo, d, h, mi, s) = crate::run::civil(ns / 1_000_000_000);
    format!(
        "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:03}Z",
        (ns / 1_000_000) % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::now_ns;

    #[test]
    fn since_takes_a_time_or_a_duration_back() {
        assert_eq!(parse_since("1970-01-01T00:00:01Z"), Ok(1_000_000_000));
        let ten_minutes_ago = parse_since("10m").expect("duration");
        let now = now_ns();
        assert!(
            now - ten_minutes_ago >= 600_000_000_000 && now - ten_minutes_ago < 660_000_000_000
        );
        assert!(parse_since("yesterday-ish").is_err());
        assert_eq!(time(1_796_040_000_123_000_000), "2026-11-30T12:00:00.123Z");
    }
}
