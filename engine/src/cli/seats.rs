//! Seat commands: `drover up`, `send`, `attach`, `down` and `seats`.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context as _, bail};
use serde::Serialize;

use super::Outcome;
use super::output::{Json, print_json, table};
use crate::hooks;
use crate::profile::Catalog;
use crate::registry;
use crate::run::{Journal, RunDir, RunInfo, now_ns, safe_segment};
use crate::sandbox::{CompileCache, Sandbox};
use crate::seats::{self, RaySeat, SeatRecord};
use crate::session::{Context, Conversation, SessionSpec, Status, headless, interactive};
use crate::workspace::{self, Kind, Workspace, process, tmux::Tmux};

#[derive(clap::Args, Debug)]
pub struct UpArgs {
    /// The seat's nickname.
    nick: String,
    #[arg(long = "cli", value_name = "NAME")]
    cli: String,
    /// What the seat is for (shown in its pane label).
    #[arg(long, default_value = "agent")]
    role: String,
    #[arg(long, value_enum)]
    workspace: Option<Kind>,
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
}

#[derive(clap::Args, Debug)]
pub struct SendArgs {
    nick: String,
    #[arg(long, value_parser = super::run::parse_duration, default_value = "90m")]
    timeout: Duration,
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
}

#[derive(clap::Args, Debug)]
pub struct ListArgs {
    #[command(flatten)]
    json: Json,
}

fn check_nick(nick: &str) -> anyhow::Result<()> {
    if safe_segment(nick) != nick {
        bail!("seat nickname '{nick}' must be letters, digits, '.', '_' or '-'");
    }
    Ok(())
}

fn ray_settings(project: &Path, cli: &str, seat: &RaySeat) -> anyhow::Result<crate::ray::Settings> {
    let overrides = crate::ray::Overrides {
        address: seat.address.clone(),
        place: seat.place.clone(),
    };
    Ok(crate::ray::Settings::resolve(project, cli, &overrides)?)
}

fn context(project: &Path, seat: &SeatRecord) -> anyhow::Result<Context> {
    let catalog = Catalog::load(project);
    let profile = catalog.get(&seat.cli)?.clone();
    let sandbox = Sandbox::new(CompileCache::default_location())?;
    let (adapter, _, _) = registry::load(&sandbox, &profile, project)?;
    let run = RunDir::open(project, &seat.run_id)
        .with_context(|| format!("seat {}'s run {}", seat.nick, seat.run_id))?;
    Ok(Context::new(project.to_path_buf(), run, profile, adapter))
}

pub fn up(project: &Path, args: UpArgs) -> anyhow::Result<Outcome> {
    let project = project
        .canonicalize()
        .with_context(|| format!("project {}", project.display()))?;
    check_nick(&args.nick)?;
    if let Some(existing) = seats::load(&project, &args.nick) {
        bail!(
            "seat {} is already up ({} on {}); `drover down {}` first",
            existing.nick,
            existing.cli,
            existing.workspace,
            existing.nick
        );
    }
    let catalog = Catalog::load(&project);
    let profile = catalog.get(&args.cli)?.clone();
    let kind = workspace::select(&project, args.workspace)?.kind;
    if args.human && kind != Kind::Tmux {
        bail!("a human seat is a pane a person works in: use --workspace tmux");
    }
    let ray = if kind == Kind::Ray {
        let seat = RaySeat {
            address: args.ray_address.clone(),
            place: args.place.clone(),
            node: None,
        };
        let settings = ray_settings(&project, &profile.name, &seat)?;
        crate::ray::jobs::Jobs::new(&settings.address).version()?;
        Some(seat)
    } else {
        if args.place.is_some() || args.ray_address.is_some() {
            bail!("--place and --ray-address are for --workspace ray");
        }
        None
    };
    let sandbox = Sandbox::new(CompileCache::default_location())?;
    let (adapter, _, _) = registry::load(&sandbox, &profile, &project)?;
    if kind == Kind::Tmux && !args.human && !profile.hookless() {
        let status = hooks::status(&adapter, &profile, &project)?;
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
    run.write_info(&RunInfo {
        run_id: run_id.clone(),
        created_ns: now_ns(),
        cli: profile.name.clone(),
        workspace: kind.as_str().to_string(),
        project: project.clone(),
        tasks: vec![args.nick.clone()],
        driver_pid: std::process::id(),
        driver_start: process::identity(std::process::id()).map(|i| i.start),
    })?;
    let mut record = SeatRecord {
        nick: args.nick.clone(),
        role: args.role.clone(),
        cli: profile.name.clone(),
        workspace: kind.as_str().to_string(),
        human: args.human,
        run_id,
        cwd: cwd.clone(),
        model: args.model.clone().unwrap_or_default(),
        conversation: None,
        pane: None,
        created_ns: now_ns(),
        ray,
    };
    if kind == Kind::Tmux {
        let ctx = Context::new(project.clone(), run, profile, adapter);
        let mut spec = SessionSpec::new(&args.nick, "", cwd);
        spec.model = record.model.clone();
        spec.timeout = args.timeout;
        spec.keep = true;
        spec.cancel = Some(super::interrupt_flag()?);
        let seat = match interactive::up(&ctx, &spec) {
            Ok(seat) => seat,
            Err(result) if result.blocked.is_some() && args.human => {
                bail!(
                    "the seat's CLI is waiting at a {} prompt: attach and answer it",
                    result.blocked.map(|k| k.as_str()).unwrap_or_default()
                )
            }
            Err(result) => bail!(
                "seat {} did not come up: {} ({})",
                args.nick,
                result.status.as_str(),
                result.reason
            ),
        };
        let _ = seat
            .tmux
            .label_pane(&seat.pane, &format!("{} · {}", args.nick, args.role));
        record.pane = Some(seat.pane.clone());
    }
    seats::save(&project, &record)?;
    println!(
        "seat {} up: {} · {} on {}{}",
        record.nick,
        record.cli,
        record.role,
        record.workspace,
        if record.human { " (human)" } else { "" }
    );
    Ok(Outcome::Ok)
}

pub fn send(project: &Path, args: SendArgs) -> anyhow::Result<Outcome> {
    let project = project
        .canonicalize()
        .with_context(|| format!("project {}", project.display()))?;
    let Some(mut record) = seats::load(&project, &args.nick) else {
        bail!("no seat named {} (see `drover seats`)", args.nick);
    };
    if record.human {
        bail!(
            "{} is a human seat: drover never types into it",
            record.nick
        );
    }
    let ctx = context(&project, &record)?;
    let mut spec = SessionSpec::new(&record.nick, &args.prompt, record.cwd.clone());
    spec.model = record.model.clone();
    spec.timeout = args.timeout;
    spec.keep = true;
    let interrupted = super::interrupt_flag()?;
    spec.cancel = Some(std::sync::Arc::clone(&interrupted));
    let result = if record.workspace == Kind::Tmux.as_str() {
        let pane = record.pane.clone().context("the seat record has no pane")?;
        let seat = interactive::Seat {
            tmux: Tmux::for_project(&project)?,
            pane,
        };
        if let Ok(false) = seat.tmux.pane_alive(&seat.pane) {
            bail!(
                "seat {}'s pane is gone; `drover down {}` and bring it up again",
                record.nick,
                record.nick
            );
        }
        interactive::send(&ctx, &spec, &seat, record.human)
    } else {
        spec.conversation = record
            .conversation
            .clone()
            .map_or(Conversation::Fresh, Conversation::Resume);
        match record.ray.clone() {
            Some(mut seat) => {
                let target = crate::ray::driver::Target {
                    settings: ray_settings(&project, &record.cli, &seat)?,
                    node: seat.node.clone(),
                };
                let result = crate::ray::driver::run(&ctx, &spec, &target);
                if seat.node.is_none()
                    && result.session_id.is_some()
                    && let Some(job) = crate::ray::driver::read_record(&ctx.run, &record.nick)
                {
                    seat.node = job.node_id;
                    record.ray = Some(seat);
                    seats::save(&project, &record)?;
                }
                result
            }
            None => headless::run(&ctx, &spec),
        }
    };
    if let Some(id) = &result.session_id {
        record.conversation = Some(id.clone());
        seats::save(&project, &record)?;
    }
    if args.json.json {
        print_json(&result)?;
    } else {
        println!(
            "{}: {} ({})",
            record.nick,
            result.status.as_str(),
            result.reason
        );
        if let Some(reply) = &result.reply {
            println!(
                "  reply: {}",
                crate::run::truncate_chars(reply.lines().next().unwrap_or_default(), 200)
            );
        }
    }
    Ok(if interrupted.load(std::sync::atomic::Ordering::Relaxed) {
        Outcome::Interrupted
    } else if result.status == Status::Completed {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}

pub fn attach(project: &Path, nick: &str) -> anyhow::Result<Outcome> {
    let project = project.canonicalize()?;
    let Some(record) = seats::load(&project, nick) else {
        bail!("no seat named {nick}");
    };
    let Some(pane) = record.pane else {
        bail!(
            "{nick} is a headless seat: there is no pane to attach to (its logs are in .drover/runs/{}/logs)",
            record.run_id
        );
    };
    let tmux = Tmux::for_project(&project)?;
    let argv = tmux.attach_argv(&pane);
    let error = std::os::unix::process::CommandExt::exec(
        std::process::Command::new(&argv[0]).args(&argv[1..]),
    );
    bail!("cannot run {}: {error}", argv.join(" "))
}

pub fn down(project: &Path, args: DownArgs) -> anyhow::Result<Outcome> {
    let project = project.canonicalize()?;
    let targets: Vec<SeatRecord> = if args.all {
        seats::list(&project)
    } else {
        args.nicks
            .iter()
            .map(|n| seats::load(&project, n).with_context(|| format!("no seat named {n}")))
            .collect::<anyhow::Result<_>>()?
    };
    if targets.is_empty() {
        bail!("name the seats to stop, or pass --all");
    }
    for record in targets {
        if let Some(pane) = &record.pane
            && let Ok(tmux) = Tmux::for_project(&project)
        {
            let forced = tmux.close_pane(pane, Duration::from_secs(10));
            if !forced.is_empty() {
                eprintln!("{}: force-killed {forced:?}", record.nick);
            }
        }
        if let Ok(run) = RunDir::open(&project, &record.run_id) {
            let mut journal = Journal::open(run.journal_path());
            journal.record(
                &record.nick,
                "unknown",
                None,
                "down",
                serde_json::Value::Null,
            );
        }
        seats::remove(&project, &record.nick)?;
        println!("seat {} down", record.nick);
    }
    Ok(Outcome::Ok)
}

#[derive(Serialize)]
struct SeatStatus {
    #[serde(flatten)]
    record: SeatRecord,
    state: Option<String>,
    prompt_kind: Option<String>,
    alive: Option<bool>,
}

pub fn list(project: &Path, args: ListArgs) -> anyhow::Result<Outcome> {
    let statuses: Vec<SeatStatus> = seats::list(project)
        .into_iter()
        .map(|record| {
            let journal = crate::run::runs_root(project)
                .join(&record.run_id)
                .join("events.jsonl");
            let state = Journal::open(journal.clone())
                .state(&record.nick)
                .map(str::to_string);
            let prompt_kind = crate::run::status::prompt_kind(&journal, &record.nick);
            let alive = record.pane.as_ref().map(|p| {
                Tmux::for_project(project)
                    .and_then(|t| t.alive(p))
                    .unwrap_or(false)
            });
            SeatStatus {
                record,
                state,
                prompt_kind,
                alive,
            }
        })
        .collect();
    if args.json.json {
        print_json(&serde_json::json!({"seats": statuses}))?;
    } else {
        let rows: Vec<Vec<String>> = statuses
            .iter()
            .map(|s| {
                vec![
                    s.record.nick.clone(),
                    s.record.role.clone(),
                    s.record.cli.clone(),
                    s.record.workspace.clone(),
                    if s.record.human {
                        "yes".into()
                    } else {
                        "no".into()
                    },
                    match (&s.state, &s.prompt_kind) {
                        (Some(st), Some(k)) => format!("{st} ({k})"),
                        (Some(st), None) => st.clone(),
                        _ => "-".into(),
                    },
                    match s.alive {
                        Some(true) => "pane up".into(),
                        Some(false) => "pane gone".into(),
                        None => s
                            .record
                            .conversation
                            .clone()
                            .unwrap_or_else(|| "no conversation yet".into()),
                    },
                ]
            })
            .collect();
        print!(
            "{}",
            table(
                &[
                    "SEAT",
                    "ROLE",
                    "CLI",
                    "WORKSPACE",
                    "HUMAN",
                    "STATE",
                    "WHERE"
                ],
                &rows
            )
        );
    }
    Ok(Outcome::Ok)
}
