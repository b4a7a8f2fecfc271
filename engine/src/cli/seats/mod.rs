//! Seat commands: `drover up`, `send`, `attach`, `down` and `seats`.

mod host;
pub mod jules;
mod list;
mod send;

use super::output::{errln, outln};
use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, bail};

use super::Outcome;
use super::output::{Json, print_json};
use crate::drive::{Context, Prepared, TurnSpec, interactive};
use crate::gate::{Provenance, Sourced};
use crate::hooks;
use crate::run::{Journal, RunDir, RunInfo, now_ns, safe_segment};
use crate::seat_host;
use crate::seats::{self, RaySeat, SeatRecord};
use crate::workspace::{self, WorkspaceKind, process};
use drover_types::wit::SeatState;

pub use host::host;
use host::{stop_host, up_acp};
pub use list::{list, seats_json, state_label};
pub use send::{deliver, send};

#[derive(clap::Args, Debug)]
pub struct UpArgs {
    /// The seat's nickname.
    nick: String,
    #[arg(long = "cli", value_name = "NAME")]
    cli: String,
    /// What the seat is for (shown in its pane label).
    #[arg(long, default_value = "agent")]
    role: String,
    #[arg(long, value_parser = crate::cli::workspace_kind())]
    workspace: Option<WorkspaceKind>,
    /// A seat for a person: drover never types into it or waits on it.
    #[arg(long)]
    human: bool,
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    #[arg(long, value_name = "DIR")]
    cwd: Option<std::path::PathBuf>,
    /// ray: the custom resource that picks the seat's node.
    #[arg(long, value_name = "RESOURCE")]
    place: Option<String>,
    /// ray: the dashboard address (default: [ray] address, RAY_ADDRESS).
    #[arg(long, value_name = "URL")]
    ray_address: Option<String>,
    /// How long the CLI may take to become ready.
    #[arg(long, value_parser = super::run::parse_duration, default_value = "2m")]
    timeout: Duration,
    /// Dollar budget for the seat's whole conversation, checked while each
    /// message runs (as `drover run --budget-usd`).
    #[arg(long, value_name = "DOLLARS", value_parser = super::run::parse_dollars)]
    budget_usd: Option<f64>,
    /// `warn` notes the crossing; `enforce` ends the message `over_budget`
    /// after the grace.
    #[arg(long, value_enum, default_value = "warn")]
    budget_mode: crate::cli::BudgetModeArg,
    /// Replace the profile's bypass args with these (repeatable).
    #[arg(long = "arg", value_name = "ARG", allow_hyphen_values = true)]
    args: Vec<String>,
    /// Drop the profile's bypass args (the CLI asks for permissions).
    #[arg(long, conflicts_with = "args")]
    no_bypass: bool,
    /// Never resume a message a rate limit or a quota ended (the profile's
    /// `[resume]` otherwise waits for the reset and sends it again).
    #[arg(long)]
    no_resume: bool,
    #[command(flatten)]
    json: Json,
}

#[derive(clap::Args, Debug)]
pub struct SendArgs {
    nick: String,
    #[arg(long, value_parser = super::run::parse_duration, default_value = "90m")]
    timeout: Duration,
    /// Return once the message is typed (or the turn started); the turn
    /// goes on in the background. Follow it with `drover wait NICK`.
    #[arg(long)]
    no_wait: bool,
    #[command(flatten)]
    json: Json,
    /// The message.
    prompt: String,
}

#[derive(clap::Args, Debug)]
pub struct DownArgs {
    /// Seats to stop (default: none; use --all for every seat).
    nicks: Vec<String>,
    #[arg(long)]
    all: bool,
    #[command(flatten)]
    json: Json,
}

#[derive(clap::Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    json: Json,
}

pub(super) fn check_nick(nick: &str) -> anyhow::Result<()> {
    if safe_segment(nick) != nick {
        bail!("seat nickname '{nick}' must be letters, digits, '.', '_' or '-'");
    }
    Ok(())
}

pub(super) fn ray_settings(
    project: &Path,
    cli: &str,
    seat: &RaySeat,
) -> anyhow::Result<crate::ray::Settings> {
    let overrides = crate::ray::Overrides {
        address: seat.address.clone(),
        place: seat.place.clone(),
    };
    Ok(crate::ray::Settings::resolve(project, cli, &overrides)?)
}

/// What `send` works with; the seat's profile must be trusted (it runs).
pub(super) fn context(project: &Path, seat: &SeatRecord) -> anyhow::Result<Context> {
    let prepared = Prepared::launch(project, &seat.cli)?;
    let run = RunDir::open(project, &seat.run_id)
        .with_context(|| format!("seat {}'s run {}", seat.nick, seat.run_id))?;
    Ok(Context::new(project.to_path_buf(), run, prepared))
}

/// A seat `drover up` brought up: its record and what its screen showed.
pub struct Started {
    pub record: SeatRecord,
    /// The CLI waits at a prompt of this kind.
    blocked: Option<String>,
    question: Option<crate::question::Question>,
    /// The screen did not read ready: its last lines.
    unread: Option<String>,
    /// An acp seat's host: its agent's pid and session.
    acp: Option<seat_host::HostState>,
}

impl Started {
    /// What `drover up --json` prints.
    pub fn to_json(&self) -> serde_json::Value {
        if let Some(host) = &self.acp {
            return serde_json::json!({"seat": self.record, "blocked": null, "agent_pid": host.agent_pid});
        }
        let state = match (&self.unread, &self.blocked) {
            (Some(_), _) => "unknown",
            (None, Some(_)) => "blocked",
            (None, None) => "idle",
        };
        serde_json::json!({
            "seat": self.record,
            "state": state,
            "blocked": self.blocked,
            "question": self.question,
            "last_lines": self.unread,
        })
    }

    pub fn outcome(&self) -> Outcome {
        if self.unread.is_some() {
            Outcome::Failed
        } else {
            Outcome::Ok
        }
    }
}

pub fn up(project: &Path, args: UpArgs) -> anyhow::Result<Outcome> {
    let started = start(project, &args)?;
    if args.json.json {
        print_json(&started.to_json())?;
    } else {
        print_started(&started);
    }
    Ok(started.outcome())
}

/// `drover up`'s work: the seat launched (through [`Prepared::launch`], the
/// trust and launch gate) and recorded.
pub fn start(project: &Path, args: &UpArgs) -> anyhow::Result<Started> {
    let project = project
        .canonicalize()
        .with_context(|| format!("project {}", project.display()))?;
    check_nick(&args.nick)?;
    if let Some(existing) = seats::load(&project, &args.nick).map(|s| s.value) {
        bail!(
            "seat {} is already up ({} on {}); `drover down {}` first",
            existing.nick,
            existing.cli,
            existing.workspace,
            existing.nick
        );
    }
    let prepared = Prepared::launch(&project, &args.cli)?;
    let profile = prepared.profile().clone();
    let selection = workspace::select(&crate::trust::load_config(&project)?, args.workspace)?;
    for note in &selection.ignored {
        errln!("note: {note}");
    }
    let kind = selection.kind;
    if args.human && !kind.has_panes() {
        bail!("a human seat is a pane a person works in: use --workspace tmux or herdr");
    }
    let ray = if kind == WorkspaceKind::Ray {
        let seat = RaySeat {
            address: args.ray_address.clone(),
            place: args.place.clone(),
            node: None,
        };
        let settings = ray_settings(&project, &profile.name, &seat)?;
        for note in &settings.ignored {
            errln!("note: {note}");
        }
        settings.jobs()?.version()?;
        Some(seat)
    } else {
        if args.place.is_some() || args.ray_address.is_some() {
            bail!("--place and --ray-address are for --workspace ray");
        }
        None
    };
    let jules = if kind == WorkspaceKind::Jules {
        if profile.name != "jules" {
            bail!(
                "the jules workspace drives Jules itself, through its API: use --cli jules (not {})",
                profile.name
            );
        }
        Some(jules::seat(&project)?)
    } else {
        None
    };
    if kind.has_panes() && !args.human && !profile.hookless() {
        let status = hooks::status(prepared.adapter(), &profile, &project)?;
        if !status.missing.is_empty() {
            bail!(
                "drover's relay is not registered for {}; run `drover hooks install --cli {}` first",
                status.missing.join(", "),
                profile.name
            );
        }
    }
    let cwd = match &args.cwd {
        Some(d) => d
            .canonicalize()
            .with_context(|| format!("--cwd {}", d.display()))?,
        None => project.clone(),
    };
    let run_id = format!("seat-{}-{}", args.nick, crate::run::new_run_id());
    let run = RunDir::create(&project, &run_id)?;
    let journal_path = run.journal_path();
    run.write_info(&RunInfo {
        run_id: run_id.clone(),
        created_ns: now_ns(),
        cli: profile.name.clone(),
        workspace: kind,
        project: project.clone(),
        tasks: vec![args.nick.clone()],
        driver_pid: std::process::id(),
        driver_start: process::identity(std::process::id()).map(|i| i.start),
    })?;
    let mut record = SeatRecord {
        nick: args.nick.clone(),
        role: args.role.clone(),
        cli: profile.name.clone(),
        workspace: kind,
        human: args.human,
        run_id,
        cwd: cwd.clone(),
        model: args.model.clone().unwrap_or_default(),
        conversation: None,
        pane: None,
        created_ns: now_ns(),
        budget_usd: args.budget_usd,
        budget_mode: if args.budget_usd.is_some() {
            args.budget_mode.into()
        } else {
            crate::drive::BudgetMode::Off
        },
        cost_usd: None,
        cost_approximate: false,
        extra_args: if args.no_bypass {
            Some(Vec::new())
        } else if args.args.is_empty() {
            None
        } else {
            Some(args.args.clone())
        },
        no_resume: args.no_resume,
        ray,
        jules,
    };
    if kind == WorkspaceKind::Acp {
        let (record, host) = up_acp(&project, &record)?;
        return Ok(Started {
            record,
            blocked: None,
            question: None,
            unread: None,
            acp: Some(host),
        });
    }
    let mut blocked = None;
    let mut question = None;
    let mut unread = None;
    if kind.has_panes() {
        let ctx = Context::new(project.clone(), run, prepared);
        let mut spec = TurnSpec::new(&args.nick, "", cwd);
        spec.model = record.model.clone();
        spec.extra_args = record.extra_args.clone();
        spec.timeout = args.timeout;
        spec.keep = true;
        spec.cancel = Some(super::interrupt_flag()?);
        let (seat, readiness) = match interactive::up(&ctx, &spec, args.human, kind) {
            Ok(up) => up,
            Err(result) => bail!(
                "seat {} did not come up: {} ({})",
                args.nick,
                result.status.as_str(),
                result.reason
            ),
        };
        let _ = seat
            .ws()
            .label_pane(&seat.pane, &format!("{} · {}", args.nick, args.role));
        record.pane = Some(seat.pane.clone());
        let view = crate::run::status::TaskView::of(
            &args.nick,
            &crate::run::read_transitions(&ctx.run.journal_path()),
        );
        if readiness == interactive::Readiness::Asking {
            blocked = view.prompt_kind;
            question = view.question;
        }
        if let interactive::Readiness::Unread(lines) = readiness {
            unread = Some(lines);
        }
    }
    if kind == WorkspaceKind::Jules {
        // No session yet: the first message is its prompt.
        Journal::open(journal_path).record(
            &args.nick,
            SeatState::Idle,
            None,
            "jules:up",
            serde_json::Value::Null,
        );
    }
    seats::save(&project, &record)?;
    Ok(Started {
        record,
        blocked,
        question,
        unread,
        acp: None,
    })
}

fn print_started(started: &Started) {
    let record = &started.record;
    let (blocked, question, unread) = (&started.blocked, &started.question, &started.unread);
    if let Some(host) = &started.acp {
        outln!(
            "seat {} up: {} · {} on acp (agent pid {}, session {})",
            record.nick,
            record.cli,
            record.role,
            host.agent_pid.map_or("?".to_string(), |p| p.to_string()),
            host.session.clone().unwrap_or_default()
        );
        return;
    }
    if let Some(lines) = unread {
        outln!(
            "seat {} is up, but its screen does not read ready (unknown), so nothing will be typed into it until it does",
            record.nick
        );
        outln!("  its last lines: {lines}");
        outln!(
            "  `drover attach {}` to look, `drover down {}` to remove it",
            record.nick,
            record.nick
        );
    } else {
        outln!(
            "seat {} up: {} · {} on {}{}",
            record.nick,
            record.cli,
            record.role,
            record.workspace,
            if record.human { " (human)" } else { "" }
        );
        if let Some(seat) = &record.jules {
            outln!(
                "  its first message starts a Jules session on github.com/{} ({}), branch {}: `drover send {} \"…\"`",
                seat.repo,
                seat.source,
                seat.branch,
                record.nick
            );
        }
        match (&question, &blocked) {
            (Some(q), _) if !record.human => {
                outln!("  it waits on a question: {}", q.title);
                outln!("    {}", q.options_line());
                outln!("  answer it: `drover answer {} OPTION`", record.nick);
            }
            (_, Some(kind)) => outln!(
                "  its CLI waits at a {kind} prompt: `drover attach {}` and answer it",
                record.nick
            ),
            _ => {}
        }
    }
}

/// The task directory of a seat's own run.
pub(super) fn seat_dir(project: &Path, record: &SeatRecord) -> std::path::PathBuf {
    crate::run::runs_root(project)
        .join(&record.run_id)
        .join("tasks")
        .join(&record.nick)
}

pub fn attach(project: &Path, nick: &str) -> anyhow::Result<Outcome> {
    let project = project.canonicalize()?;
    let Some(record) = seats::load(&project, nick) else {
        bail!("no seat named {nick}");
    };
    let record = seats::require_sealed(record).map_err(anyhow::Error::msg)?;
    let Some(pane) = record.pane else {
        bail!(
            "{nick} is a {} seat: there is no pane to attach to (its logs are in .drover/runs/{}/logs)",
            record.workspace,
            record.run_id
        );
    };
    let argv = match record.workspace {
        WorkspaceKind::Herdr => {
            let herdr = workspace::herdr::Herdr::connect(workspace::herdr::CALL_TIMEOUT)?;
            herdr.call("pane.focus", serde_json::json!({"pane_id": pane.id()}))?;
            vec!["herdr".to_string()]
        }
        _ => workspace::tmux::Tmux::for_project(&project)?.attach_argv(&pane),
    };
    let error = std::os::unix::process::CommandExt::exec(
        std::process::Command::new(&argv[0]).args(&argv[1..]),
    );
    bail!("cannot run {}: {error}", argv.join(" "))
}

pub fn down(project: &Path, args: DownArgs) -> anyhow::Result<Outcome> {
    let doc = stop(project, &args)?;
    if args.json.json {
        print_json(&doc)?;
    }
    Ok(Outcome::Ok)
}

/// `drover down`'s work: the seats stopped and their records removed;
/// what `down --json` prints (people's lines are printed as it goes
/// without `--json`).
pub fn stop(project: &Path, args: &DownArgs) -> anyhow::Result<serde_json::Value> {
    let project = project.canonicalize()?;
    let targets: Vec<Sourced<SeatRecord>> = if args.all {
        seats::list(&project)
    } else {
        args.nicks
            .iter()
            .map(|n| seats::load(&project, n).with_context(|| format!("no seat named {n}")))
            .collect::<anyhow::Result<_>>()?
    };
    if targets.is_empty() && !args.all {
        bail!("name the seats to stop, or pass --all");
    }
    let mut downed = Vec::new();
    for target in targets {
        if target.from != Provenance::SealedRecord {
            // Nothing a foreign record names is closed, signalled or
            // contacted. Named on the command line, its record file (a
            // safe name under .drover/seats) is removed; `--all` leaves it.
            let nick = target.value.nick;
            let removed = !args.all && seats::remove(&project, &nick).is_ok();
            if !args.json.json {
                errln!(
                    "{nick}: {}; nothing it names was touched{}",
                    seats::FOREIGN,
                    if removed {
                        ", its record was removed"
                    } else {
                        ", its record is left in place (`drover down NICK` removes it)"
                    }
                );
            }
            downed.push(
                serde_json::json!({"nick": nick, "foreign": true, "record_removed": removed}),
            );
            continue;
        }
        let record = target.value;
        let mut forced = Vec::new();
        if let Some(pane) = &record.pane
            && record.workspace.has_panes()
            && let Ok(ws) = workspace::open_panes(record.workspace, &project)
        {
            let from = Provenance::SealedRecord;
            if let (Ok(pane), Ok(session)) = (
                workspace::clear_pane(pane, from),
                workspace::clear_session(pane.session(), from),
            ) {
                forced = ws.close_pane(&pane, Duration::from_secs(10));
                ws.close_session(&session);
            }
            if !forced.is_empty() && !args.json.json {
                errln!("{}: force-killed {forced:?}", record.nick);
            }
        }
        if record.workspace == WorkspaceKind::Jules
            && let Some(follower) = jules::follower(&project, &record)
        {
            // The session stays in Jules; the drover following it stops.
            stop_host(&record.nick, &follower);
        }
        if let Some(host) = seat_host::stoppable(&seat_dir(&project, &record)) {
            stop_host(&record.nick, &host);
        }
        let mut stopped_job = None;
        if let Ok(run) = RunDir::open(&project, &record.run_id) {
            if record.ray.is_some() {
                match crate::drive::ray::driver::stop_job(&run, &record.nick) {
                    Ok(job) => stopped_job = job,
                    Err(e) => errln!("{}: cannot stop its Ray job: {e}", record.nick),
                }
                if let Some(job) = stopped_job.as_ref().filter(|_| !args.json.json) {
                    errln!("{}: stopped Ray job {job}", record.nick);
                }
            }
            let mut journal = Journal::open(run.journal_path());
            journal.record(
                &record.nick,
                SeatState::Unknown,
                None,
                "down",
                serde_json::Value::Null,
            );
        }
        seats::remove(&project, &record.nick)?;
        if !args.json.json {
            outln!("seat {} down", record.nick);
        }
        downed.push(
            serde_json::json!({"nick": record.nick, "run": record.run_id, "force_killed": forced, "stopped_job": stopped_job}),
        );
    }
    Ok(serde_json::json!({"down": downed}))
}
