//! Jules seats: `up` finds the checkout's repository among the sources the
//! user connected to Jules; each `send` is one turn of the seat's Jules
//! session (the first creates it, with that message as its prompt).

use std::path::Path;

use anyhow::{Context as _, bail};

use crate::cli::output::errln;
use crate::drive::jules::Target;
use crate::seats::{JulesSeat, SeatRecord};
use crate::workspace::jules::{Settings, source};

/// The user's Jules settings (a project's `[jules]` set aside, with a note).
pub fn settings(project: &Path) -> anyhow::Result<Settings> {
    let settings = Settings::resolve(&crate::trust::load_config(project)?)?;
    for note in &settings.ignored {
        errln!("note: {note}");
    }
    Ok(settings)
}

/// The source and branch a new Jules session of `project` starts from:
/// its remote `origin` on GitHub, connected to Jules, and its branch.
pub fn seat(project: &Path) -> anyhow::Result<JulesSeat> {
    let settings = settings(project)?;
    let client = settings.client()?;
    let repo = source::of_checkout(project).map_err(anyhow::Error::msg)?;
    let found = client
        .find_source(&repo.owner, &repo.repo)
        .with_context(|| {
            format!(
                "looking up github.com/{}/{} in Jules",
                repo.owner, repo.repo
            )
        })?;
    let Some(found) = found else {
        bail!(
            "Jules has no source for github.com/{}/{}: connect the repository to Jules first (https://jules.google.com, or install the Jules GitHub app on it)",
            repo.owner,
            repo.repo
        );
    };
    Ok(JulesSeat {
        source: found.name,
        branch: repo.branch,
        repo: format!("{}/{}", repo.owner, repo.repo),
    })
}

/// Where a jules seat's next turn goes: the user's API settings, the
/// seat's source.
pub fn target(project: &Path, record: &SeatRecord) -> anyhow::Result<Target> {
    let seat = record
        .jules
        .clone()
        .with_context(|| format!("seat {}'s record names no Jules source", record.nick))?;
    target_of(project, seat)
}

pub fn target_of(project: &Path, seat: JulesSeat) -> anyhow::Result<Target> {
    let settings = settings(project)?;
    Ok(Target {
        client: settings.client()?,
        poll: settings.poll,
        source: seat.source,
        branch: seat.branch,
        auto_pr: settings.auto_pr,
    })
}

/// The drover process following the seat's session, cleared to be
/// signalled: only one a sealed `agent.json` names, still running as
/// recorded.
pub fn follower(
    project: &Path,
    record: &SeatRecord,
) -> Option<crate::gate::Cleared<crate::workspace::process::Identity>> {
    use crate::drive::records::{AgentRecord, Record as _};
    let run = crate::run::RunDir::open(project, &record.run_id).ok()?;
    let driver = AgentRecord::read(&run, &record.nick)?.driver?;
    if driver.pid == std::process::id() || !crate::workspace::process::alive(driver) {
        return None;
    }
    crate::workspace::process::clear_signal(
        "the drover following the Jules session",
        driver,
        crate::gate::Provenance::SealedRecord,
    )
    .ok()
}

/// One drover follows a seat's session at a time: two would both answer
/// its plan and both end its turn.
pub fn refuse_if_followed(ctx: &crate::drive::Context, record: &SeatRecord) -> anyhow::Result<()> {
    use crate::drive::records::{AgentRecord, Record as _};
    let holder = AgentRecord::read(&ctx.run, &record.nick)
        .and_then(|a| a.driver)
        .filter(|d| d.pid != std::process::id() && crate::workspace::process::alive(*d));
    if let Some(holder) = holder {
        bail!(
            "seat {}'s previous message is still being followed (drover process {}); `drover wait {} --until settled` first, or interrupt it",
            record.nick,
            holder.pid,
            record.nick
        );
    }
    Ok(())
}

/// The project's policy for the plan question; a broken one is not used
/// (every plan waits for a person) and says so.
pub fn policy(project: &Path) -> crate::policy::Policy {
    crate::policy::Policy::load(project).unwrap_or_else(|e| {
        errln!("note: the project's [policy] is not used ({e}); every plan waits for a person");
        crate::policy::Policy::default()
    })
}
