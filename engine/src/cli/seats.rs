//! Seat commands: `drover up`, `send`, `attach`, `down` and `seats`.

use super::output::{errln, out, outln};
use std::os::unix::process::CommandExt as _;
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
use crate::seat_host;
use crate::seats::{self, RaySeat, SeatRecord};
use crate::session::{Context, Conversation, SessionSpec, Status, headless, interactive};
use crate::workspace::{self, Kind, process};

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
    /// Dollar budget for the seat's whole conversation, checked while each
    /// message runs (as `drover run --budget-usd`).
    #[arg(long, value_name = "DOLLARS", value_parser = super::run::parse_dollars)]
    budget_usd: Option<f64>,
    /// `warn` notes the crossing; `enforce` ends the message `over_budget`
    /// after the grace.
    #[arg(long, value_enum, default_value = "warn")]
    budget_mode: crate::session::BudgetMode,
    /// Replace the profile's bypass args with these (repeatable).
    #[arg(long = "arg", value_name = "ARG", allow_hyphen_values = true)]
    args: Vec<String>,
    /// Drop the profile's bypass args (the CLI asks for permissions).
    #[arg(long, conflicts_with = "args")]
    no_bypass: bool,
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

/// What `send` works with; the seat's profile must be trusted (it runs).
fn context(project: &Path, seat: &SeatRecord) -> anyhow::Result<Context> {
    let catalog = Catalog::load(project);
    let profile = catalog.get(&seat.cli)?.clone();
    crate::trust::Trust::load(project)?.require_profile(&profile)?;
    let adapter = registry::bind(&profile, project)?;
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
    crate::trust::Trust::load(&project)?.require_profile(&profile)?;
    let kind = workspace::select(&project, args.workspace)?.kind;
    if args.human && !kind.has_panes() {
        bail!("a human seat is a pane a person works in: use --workspace tmux or herdr");
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
    let adapter = registry::bind(&profile, &project)?;
    if kind.has_panes() && !args.human && !profile.hookless() {
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
        budget_usd: args.budget_usd,
        budget_mode: if args.budget_usd.is_some() {
            args.budget_mode
        } else {
            crate::session::BudgetMode::Off
        },
        cost_usd: None,
        extra_args: if args.no_bypass {
            Some(Vec::new())
        } else if args.args.is_empty() {
            None
        } else {
            Some(args.args.clone())
        },
        ray,
    };
    if kind == Kind::Acp {
        return up_acp(&project, &record, args.json.json);
    }
    let mut blocked = None;
    if kind.has_panes() {
        let ctx = Context::new(project.clone(), run, profile, adapter);
        let mut spec = SessionSpec::new(&args.nick, "", cwd);
        spec.model = record.model.clone();
        spec.extra_args = record.extra_args.clone();
        spec.timeout = args.timeout;
        spec.keep = true;
        spec.cancel = Some(super::interrupt_flag()?);
        let seat = match interactive::up(&ctx, &spec, args.human) {
            Ok(seat) => seat,
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
        blocked = crate::run::status::TaskView::of(
            &args.nick,
            &crate::run::read_transitions(&ctx.run.journal_path()),
        )
        .prompt_kind;
    }
    seats::save(&project, &record)?;
    if args.json.json {
        print_json(&serde_json::json!({"seat": record, "blocked": blocked}))?;
    } else {
        outln!(
            "seat {} up: {} · {} on {}{}",
            record.nick,
            record.cli,
            record.role,
            record.workspace,
            if record.human { " (human)" } else { "" }
        );
        if let Some(kind) = &blocked {
            outln!(
                "  its CLI waits at a {kind} prompt: `drover attach {}` and answer it",
                record.nick
            );
        }
    }
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
    if args.no_wait {
        return send_in_background(&project, &record, &args);
    }
    if record.workspace == Kind::Acp.as_str() {
        return send_acp(&project, &record, &args);
    }
    let ctx = context(&project, &record)?;
    let mut spec = SessionSpec::new(&record.nick, &args.prompt, record.cwd.clone());
    spec.model = record.model.clone();
    spec.extra_args = record.extra_args.clone();
    spec.timeout = args.timeout;
    spec.keep = true;
    spec.cost_budget = record.budget_usd;
    spec.budget_mode = record.budget_mode;
    let interrupted = super::interrupt_flag()?;
    spec.cancel = Some(std::sync::Arc::clone(&interrupted));
    let kind = Kind::parse(&record.workspace).unwrap_or(Kind::Headless);
    let result = if kind.has_panes() {
        let pane = record.pane.clone().context("the seat record has no pane")?;
        let seat = interactive::Seat {
            workspace: workspace::open(kind, &project)?,
            pane,
        };
        if let Ok(false) = seat.ws().pane_alive(&seat.pane) {
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
    let mut changed = false;
    if let Some(id) = &result.session_id {
        record.conversation = Some(id.clone());
        changed = true;
    }
    if let Some(cost) = result.cost_usd {
        // A pane's transcript holds the whole conversation; a headless
        // message reports its own turns.
        record.cost_usd = Some(if record.workspace == Kind::Tmux.as_str() {
            cost
        } else {
            record.cost_usd.unwrap_or(0.0) + cost
        });
        changed = true;
    }
    if changed {
        seats::save(&project, &record)?;
    }
    report_send(&record, &result, args.json.json)?;
    Ok(send_outcome(&interrupted, &result))
}

fn send_outcome(
    interrupted: &std::sync::atomic::AtomicBool,
    result: &crate::session::SessionResult,
) -> Outcome {
    if interrupted.load(std::sync::atomic::Ordering::Relaxed) {
        Outcome::Interrupted
    } else if result.status == Status::Completed {
        Outcome::Ok
    } else {
        Outcome::Failed
    }
}

fn report_send(
    record: &SeatRecord,
    result: &crate::session::SessionResult,
    json: bool,
) -> anyhow::Result<()> {
    if json {
        print_json(result)?;
    } else {
        outln!(
            "{}: {} ({})",
            record.nick,
            result.status.as_str(),
            result.reason
        );
        if let Some(reply) = &result.reply {
            outln!(
                "  reply: {}",
                crate::run::truncate_chars(reply.lines().next().unwrap_or_default(), 200)
            );
        }
    }
    Ok(())
}

/// The task directory of a seat's own run.
fn seat_dir(project: &Path, record: &SeatRecord) -> std::path::PathBuf {
    crate::run::runs_root(project)
        .join(&record.run_id)
        .join("tasks")
        .join(&record.nick)
}

/// `drover up --workspace acp`: the seat is recorded, then its host starts
/// the agent and opens its session.
fn up_acp(project: &Path, record: &SeatRecord, json: bool) -> anyhow::Result<Outcome> {
    crate::policy::Policy::load(project)?;
    seats::save(project, record)?;
    let state = match start_host(project, record) {
        Ok(state) => state,
        Err(e) => {
            let _ = seats::remove(project, &record.nick);
            bail!("seat {} did not come up: {e}", record.nick);
        }
    };
    let record = seats::load(project, &record.nick).unwrap_or_else(|| record.clone());
    if json {
        print_json(
            &serde_json::json!({"seat": record, "blocked": null, "agent_pid": state.agent_pid}),
        )?;
    } else {
        println!(
            "seat {} up: {} · {} on acp (agent pid {}, session {})",
            record.nick,
            record.cli,
            record.role,
            state.agent_pid.map_or("?".to_string(), |p| p.to_string()),
            state.session.unwrap_or_default()
        );
    }
    Ok(Outcome::Ok)
}

/// Starts an acp seat's host and waits until its agent has a session.
fn start_host(project: &Path, record: &SeatRecord) -> anyhow::Result<seat_host::HostState> {
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
fn send_acp(project: &Path, record: &SeatRecord, args: &SendArgs) -> anyhow::Result<Outcome> {
    let dir = seat_dir(project, record);
    let host = match seat_host::alive(&dir) {
        Some(host) => host,
        None => start_host(project, record)?,
    };
    let id = seat_host::post(&dir, &args.prompt, args.timeout)
        .with_context(|| format!("leaving the message for seat {}", record.nick))?;
    let interrupted = super::interrupt_flag()?;
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
    report_send(record, &result, args.json.json)?;
    Ok(send_outcome(&interrupted, &result))
}

/// `drover seat-host NICK`: the background process of an acp seat.
pub fn host(project: &Path, nick: &str) -> anyhow::Result<Outcome> {
    let project = project.canonicalize()?;
    let Some(record) = seats::load(&project, nick) else {
        bail!("no seat named {nick}");
    };
    let ctx = context(&project, &record)?;
    let stop = super::interrupt_flag()?;
    seat_host::serve(&ctx, &record, &stop).map_err(|e| anyhow::anyhow!(e))?;
    Ok(Outcome::Ok)
}

/// Asks a seat host to stop (it closes its agent), then makes sure.
fn stop_host(nick: &str, host: process::Identity) {
    process::terminate(host);
    let until = std::time::Instant::now() + Duration::from_secs(15);
    while process::alive(host) && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    if process::alive(host) {
        for member in &process::tree(host.pid) {
            process::force_kill(*member);
        }
        eprintln!("{nick}: force-killed its host {}", host.pid);
    }
}

pub fn attach(project: &Path, nick: &str) -> anyhow::Result<Outcome> {
    let project = project.canonicalize()?;
    let Some(record) = seats::load(&project, nick) else {
        bail!("no seat named {nick}");
    };
    let Some(pane) = record.pane else {
        bail!(
            "{nick} is a {} seat: there is no pane to attach to (its logs are in .drover/runs/{}/logs)",
            record.workspace,
            record.run_id
        );
    };
    let argv = match Kind::parse(&record.workspace) {
        Some(Kind::Herdr) => {
            let herdr = workspace::herdr::Herdr::connect(workspace::herdr::CALL_TIMEOUT)?;
            herdr.call("pane.focus", serde_json::json!({"pane_id": pane.pane}))?;
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
    let project = project.canonicalize()?;
    let targets: Vec<SeatRecord> = if args.all {
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
    for record in targets {
        let mut forced = Vec::new();
        if let Some(pane) = &record.pane
            && let Some(kind) = Kind::parse(&record.workspace)
            && let Ok(ws) = workspace::open(kind, &project)
        {
            forced = ws.close_pane(pane, Duration::from_secs(10));
            ws.close_session(&pane.session);
            if !forced.is_empty() && !args.json.json {
                errln!("{}: force-killed {forced:?}", record.nick);
            }
        }
        if let Some(host) = seat_host::alive(&seat_dir(&project, &record))
            && let Some(identity) = host.identity
        {
            stop_host(&record.nick, identity);
        }
        let mut stopped_job = None;
        if let Ok(run) = RunDir::open(&project, &record.run_id) {
            if record.ray.is_some() {
                match crate::ray::driver::stop_job(&run, &record.nick) {
                    Ok(job) => stopped_job = job,
                    Err(e) => eprintln!("{}: cannot stop its Ray job: {e}", record.nick),
                }
                if let Some(job) = stopped_job.as_ref().filter(|_| !args.json.json) {
                    eprintln!("{}: stopped Ray job {job}", record.nick);
                }
            }
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
        if !args.json.json {
            outln!("seat {} down", record.nick);
        }
        downed.push(
            serde_json::json!({"nick": record.nick, "run": record.run_id, "force_killed": forced, "stopped_job": stopped_job}),
        );
    }
    if args.json.json {
        print_json(&serde_json::json!({"down": downed}))?;
    }
    Ok(Outcome::Ok)
}

/// `drover send --no-wait`: the same `drover send` in a detached process;
/// returns once that process typed the message (the seat's journal shows
/// it working) or gave up.
fn send_in_background(
    project: &Path,
    record: &SeatRecord,
    args: &SendArgs,
) -> anyhow::Result<Outcome> {
    let started = now_ns();
    let mut follower = crate::run::Follower::new(project, Some(&record.run_id));
    follower.read_all();
    let mut child = std::process::Command::new(std::env::current_exe()?)
        .arg("--project")
        .arg(project)
        .args(["send", "--timeout"])
        .arg(format!("{}s", args.timeout.as_secs()))
        .arg(&record.nick)
        .arg(&args.prompt)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .context("starting the background send")?;
    let pid = child.id();
    let until = std::time::Instant::now() + Duration::from_secs(120);
    let started_line = loop {
        let line = follower
            .next(Duration::from_millis(200))
            .into_iter()
            .find(|e| e.transition.task == record.nick && e.transition.ts >= started);
        if let Some(line) = line {
            break line;
        }
        if let Ok(Some(status)) = child.try_wait() {
            bail!(
                "the background send of {} ended before the turn started ({status})",
                record.nick
            );
        }
        if std::time::Instant::now() >= until {
            bail!(
                "the background send of {} did not start its turn within 2 minutes",
                record.nick
            );
        }
    };
    // Reaped on a thread: the turn may outlive this command, never as a zombie of it.
    std::thread::spawn(move || child.wait());
    if args.json.json {
        print_json(&serde_json::json!({
            "seat": record.nick, "run": record.run_id, "task": record.nick,
            "pid": pid, "started": started_line.to_json(),
        }))?;
    } else {
        outln!(
            "{}: {} (`drover wait {}` for its verdict)",
            record.nick,
            started_line.transition.state,
            record.nick
        );
    }
    Ok(Outcome::Ok)
}

/// A task's state as `seats` and `status` print it.
pub fn state_label(
    state: Option<&str>,
    prompt_kind: Option<&str>,
    evidence: Option<&str>,
) -> String {
    match (state, prompt_kind) {
        (Some("blocked"), kind) => {
            let mut label = format!("blocked ({})", kind.unwrap_or("other"));
            if let Some(e) = evidence {
                label.push_str(": ");
                label.push_str(&crate::run::truncate_chars(e, 60));
            }
            label
        }
        (Some(s), _) => s.to_string(),
        (None, _) => "-".to_string(),
    }
}

#[derive(Serialize)]
struct SeatStatus {
    #[serde(flatten)]
    record: SeatRecord,
    state: Option<String>,
    prompt_kind: Option<String>,
    evidence: Option<String>,
    /// The question a blocked seat waits on, with its options.
    question: Option<crate::question::Question>,
    verdict: Option<String>,
    alive: Option<bool>,
}

pub fn list(project: &Path, args: ListArgs) -> anyhow::Result<Outcome> {
    let statuses: Vec<SeatStatus> = seats::list(project)
        .into_iter()
        .map(|record| {
            let journal = crate::run::runs_root(project)
                .join(&record.run_id)
                .join("events.jsonl");
            let view = crate::run::status::TaskView::of(
                &record.nick,
                &crate::run::read_transitions(&journal),
            );
            let alive = if record.workspace == Kind::Acp.as_str() {
                Some(seat_host::alive(&seat_dir(project, &record)).is_some())
            } else {
                record.pane.as_ref().map(|p| {
                    Kind::parse(&record.workspace)
                        .and_then(|k| workspace::open(k, project).ok())
                        .and_then(|ws| ws.pane_alive(p).ok())
                        .unwrap_or(false)
                })
            };
            SeatStatus {
                record,
                state: view.state,
                prompt_kind: view.prompt_kind,
                evidence: view.evidence,
                question: view.question,
                verdict: view.verdict,
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
                    state_label(
                        s.state.as_deref(),
                        s.prompt_kind.as_deref(),
                        s.evidence.as_deref(),
                    ),
                    match (s.alive, s.record.workspace == Kind::Acp.as_str()) {
                        (Some(true), true) => "agent up".into(),
                        (Some(false), true) => "agent stopped (send resumes it)".into(),
                        (Some(true), false) => "pane up".into(),
                        (Some(false), false) => "pane gone".into(),
                        (None, _) => s
                            .record
                            .conversation
                            .clone()
                            .unwrap_or_else(|| "no conversation yet".into()),
                    },
                    match (s.record.cost_usd, s.record.budget_usd) {
                        (Some(c), Some(b)) => format!("${c:.2} of ${b:.2}"),
                        (Some(c), None) => format!("${c:.2}"),
                        (None, Some(b)) => format!("- of ${b:.2}"),
                        (None, None) => "-".into(),
                    },
                ]
            })
            .collect();
        out!(
            "{}",
            table(
                &[
                    "SEAT",
                    "ROLE",
                    "CLI",
                    "WORKSPACE",
                    "HUMAN",
                    "STATE",
                    "WHERE",
                    "COST"
                ],
                &rows
            )
        );
        for s in &statuses {
            if let Some(q) = &s.question {
                println!("\n{} asks: {}", s.record.nick, q.summary());
                println!(
                    "  answer with `drover answer {} OPTION`: {}",
                    s.record.nick,
                    q.options_line()
                );
            }
        }
    }
    Ok(Outcome::Ok)
}
