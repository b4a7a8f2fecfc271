//! `drover run`: one session of a CLI on a prompt, on the selected
//! workspace. Prints a summary (or one JSON document) and exits 0 only when
//! the session completed.

use super::output::{errln, outln, terminal_line};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, bail};

use super::Outcome;
use super::output::{Json, print_json};
use crate::config::Config;
use crate::drive::recover::{TaskSpec, write_task_spec};
use crate::drive::{
    BudgetMode, Context, Conversation, Prepared, TurnReport, TurnSpec, Verdict, acp, conversations,
    headless, interactive,
};
use crate::hooks;
use crate::run::{RunDir, RunInfo, new_run_id, now_ns, safe_segment};
use crate::workspace::{self, WorkspaceKind, process};
use drover_gate::Effect;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The CLI profile (default: `[run] cli` in .drover/config.toml, else claude).
    #[arg(long = "cli", value_name = "NAME")]
    cli: Option<String>,
    /// headless (default), tmux, herdr, acp or ray.
    #[arg(long, value_parser = super::workspace_kind())]
    workspace: Option<WorkspaceKind>,
    /// ray: the custom resource that picks the node (e.g. host_b).
    #[arg(long, value_name = "RESOURCE")]
    place: Option<String>,
    /// ray: the dashboard address (default: [ray] address, RAY_ADDRESS).
    #[arg(long, value_name = "URL")]
    ray_address: Option<String>,
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// Where the CLI runs (default: the project).
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Session deadline, e.g. 90m, 30s, 1h30m (default 90m).
    #[arg(long, value_parser = parse_duration, default_value = "90m")]
    timeout: Duration,
    /// A file the work must write for the session to count as completed.
    #[arg(long, value_name = "PATH")]
    result_file: Option<PathBuf>,
    /// How long to wait for the result file after the turn ends.
    #[arg(long, value_parser = parse_duration, default_value = "15s")]
    result_wait: Duration,
    /// Nudges when a turn ends without the result file (default: the profile's, else 1).
    #[arg(long, value_name = "N")]
    nudges: Option<u32>,
    /// Continue this conversation.
    #[arg(long, value_name = "ID", conflicts_with_all = ["continue_last", "session_id"])]
    resume: Option<String>,
    /// Continue this CLI's most recent conversation in the project.
    #[arg(long = "continue", conflicts_with = "session_id")]
    continue_last: bool,
    /// Start a new conversation with this id (CLIs that allow it).
    #[arg(long, value_name = "ID")]
    session_id: Option<String>,
    /// Replace the profile's bypass args with these (repeatable).
    #[arg(long = "arg", value_name = "ARG", allow_hyphen_values = true)]
    args: Vec<String>,
    /// Drop the profile's bypass args (the CLI asks for permissions).
    #[arg(long, conflicts_with = "args")]
    no_bypass: bool,
    /// When a rate limit or a quota ends the turn, wait for the reset the
    /// CLI states (else back off, per the profile's `[resume]`) and send the
    /// prompt again in the same conversation (headless and ray). A run
    /// reports the fault at once without it; a seat resumes by default.
    #[arg(long)]
    resume_after_limit: bool,
    /// Silence that counts as a stall, e.g. 10m (default: never).
    #[arg(long, value_parser = parse_duration)]
    stall: Option<Duration>,
    /// Nudges typed on silence before the session is called stalled.
    #[arg(long, default_value_t = 0)]
    stall_nudges: u32,
    /// Token budget for the session (cost-weighted: cache reads count 0.1).
    #[arg(long, value_name = "TOKENS")]
    budget: Option<u64>,
    /// Dollar budget for the session, priced like `drover usage`; checked
    /// with the token budget (either one trips it) under --budget-mode.
    #[arg(long, value_name = "DOLLARS", value_parser = parse_dollars)]
    budget_usd: Option<f64>,
    #[arg(long, value_enum, default_value = "warn")]
    budget_mode: super::BudgetModeArg,
    /// Grace after an enforced budget trip before `over_budget`.
    #[arg(long, value_parser = parse_duration, default_value = "240s")]
    budget_grace: Duration,
    /// tmux, herdr: leave the pane running after the session.
    #[arg(long)]
    keep: bool,
    /// How often the heartbeat is written and the budget sampled.
    #[arg(long, value_parser = parse_duration, default_value = "30s", hide = true)]
    heartbeat: Duration,
    /// How long a killed seat gets before its processes are force-killed.
    #[arg(long, value_parser = parse_duration, default_value = "20s", hide = true)]
    teardown_grace: Duration,
    /// Task name (default: the CLI's name).
    #[arg(long, value_name = "NAME")]
    task: Option<String>,
    #[command(flatten)]
    json: Json,
    /// The prompt (`-` reads it from stdin).
    prompt: String,
}

/// A dollar amount: a finite, non-negative number (`2`, `0.5`, `$3.25`).
pub fn parse_dollars(s: &str) -> Result<f64, String> {
    s.trim()
        .trim_start_matches('$')
        .parse::<f64>()
        .ok()
        .filter(|d| d.is_finite() && *d >= 0.0)
        .ok_or_else(|| format!("'{s}' is not an amount of dollars (e.g. 2.50)"))
}

pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if let Ok(secs) = text.parse::<f64>() {
        return if secs.is_finite() && secs >= 0.0 {
            Ok(Duration::from_secs_f64(secs))
        } else {
            Err(format!("'{text}' is not a duration"))
        };
    }
    humantime::parse_duration(text)
        .map_err(|e| format!("'{text}' is not a duration (e.g. 90m, 30s, 1h30m): {e}"))
}

/// `[run] cli` from a trusted project's config.toml, else the user's, else
/// claude. The CLI is what runs, so a project's choice goes through the gate.
fn default_cli(config: &Config) -> String {
    let (found, refused) = config.get_for(Effect::Spawn, &["run", "cli"]);
    for r in &refused {
        errln!("note: {}", crate::config::set_aside(r));
    }
    found
        .and_then(|(v, _)| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "claude".to_string())
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let project = project
        .canonicalize()
        .with_context(|| format!("project directory {}", project.display()))?;
    let prompt = if args.prompt == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .context("reading the prompt from stdin")?;
        text.trim_end().to_string()
    } else {
        args.prompt.clone()
    };
    if prompt.trim().is_empty() {
        bail!("the prompt is empty");
    }
    // Each settings file is read once for the whole command.
    let config = crate::trust::load_config(&project)?;
    let cli = match &args.cli {
        Some(cli) => cli.clone(),
        None => default_cli(&config),
    };
    let prepared = Prepared::launch(&project, &cli)?;
    let profile = prepared.profile().clone();
    let selection = workspace::select(&config, args.workspace)?;
    for note in &selection.ignored {
        errln!("note: {note}");
    }
    let ray_target = if selection.kind == WorkspaceKind::Ray {
        let overrides = crate::ray::Overrides {
            address: args.ray_address.clone(),
            place: args.place.clone(),
        };
        let settings =
            crate::ray::Settings::resolve_in(&config, &project, &profile.name, &overrides)?;
        for note in &settings.ignored {
            errln!("note: {note}");
        }
        Some(crate::drive::ray::driver::Target {
            settings,
            node: None,
        })
    } else {
        if args.place.is_some() || args.ray_address.is_some() {
            bail!("--place and --ray-address are for --workspace ray");
        }
        None
    };
    if selection.kind.has_panes() {
        workspace::open_panes(selection.kind, &project)?;
        // A hookless seat's turn ends when its idle screen settles
        // (`screen_settle_s`); a hooked one's when its Stop hook fires, so
        // the relay must be registered.
        let status = if profile.hookless() {
            None
        } else {
            Some(hooks::status(prepared.adapter(), &profile, &project)?)
        };
        if let Some(status) = status.filter(|s| !s.missing.is_empty()) {
            bail!(
                "drover's relay is not registered in {} for {}; run `drover hooks install --cli {}` first",
                project.join(&status.config_path).display(),
                status.missing.join(", "),
                profile.name
            );
        }
    }
    // `drover run --workspace jules`: one Jules session, its prompt this one.
    let jules_target = if selection.kind == WorkspaceKind::Jules {
        if profile.name != "jules" {
            bail!(
                "the jules workspace drives Jules itself, through its API: use --cli jules (not {})",
                profile.name
            );
        }
        let seat = super::seats::jules::seat(&project)?;
        Some(super::seats::jules::target_of(&project, seat)?)
    } else {
        None
    };
    let policy = if matches!(selection.kind, WorkspaceKind::Acp | WorkspaceKind::Jules) {
        crate::policy::Policy::from_config(&config)?
    } else {
        crate::policy::Policy::default()
    };
    let cwd = match &args.cwd {
        Some(dir) => dir
            .canonicalize()
            .with_context(|| format!("--cwd {}", dir.display()))?,
        None => project.clone(),
    };
    let conversation = if let Some(id) = &args.resume {
        Conversation::Resume(
            crate::drive::plain_id(id).map_err(|e| anyhow::anyhow!("--resume: {e}"))?,
        )
    } else if args.continue_last {
        match conversations::last(&project, &profile.name) {
            Some(id) => Conversation::Resume(id),
            None => bail!(
                "--continue: no earlier {} conversation recorded in this project",
                profile.name
            ),
        }
    } else if let Some(id) = &args.session_id {
        Conversation::Preset(
            crate::drive::plain_id(id).map_err(|e| anyhow::anyhow!("--session-id: {e}"))?,
        )
    } else if matches!(selection.kind, WorkspaceKind::Headless | WorkspaceKind::Ray) {
        Conversation::new_for(&profile)
    } else {
        Conversation::Fresh
    };
    let task = safe_segment(args.task.as_deref().unwrap_or(&profile.name));
    let mut spec = TurnSpec::new(&task, &prompt, cwd);
    spec.model = args.model.clone().unwrap_or_default();
    spec.conversation = conversation;
    spec.extra_args = if args.no_bypass {
        Some(Vec::new())
    } else if args.args.is_empty() {
        None
    } else {
        Some(args.args.clone())
    };
    spec.timeout = args.timeout;
    spec.result_file = args.result_file.as_ref().map(|p| {
        if p.is_absolute() {
            p.clone()
        } else {
            spec.cwd.join(p)
        }
    });
    spec.result_wait = args.result_wait;
    spec.stop_nudges = args
        .nudges
        .or(profile.stop_without_result_nudges)
        .unwrap_or(1);
    spec.stall_grace = args.stall;
    spec.stall_nudges = args.stall_nudges;
    spec.token_budget = args.budget;
    spec.cost_budget = args.budget_usd;
    spec.budget_mode = if args.budget.is_some() || args.budget_usd.is_some() {
        args.budget_mode.into()
    } else {
        BudgetMode::Off
    };
    spec.budget_grace = args.budget_grace;
    spec.keep = args.keep;
    spec.heartbeat = args.heartbeat;
    spec.teardown_grace = args.teardown_grace;

    let run_id = new_run_id();
    let run = RunDir::create(&project, &run_id)
        .with_context(|| format!("creating the run directory for {run_id}"))?;
    let me = process::identity(std::process::id());
    run.write_info(&RunInfo {
        run_id: run_id.clone(),
        created_ns: now_ns(),
        cli: profile.name.clone(),
        workspace: selection.kind,
        project: project.clone(),
        tasks: vec![task.clone()],
        driver_pid: std::process::id(),
        driver_start: me.map(|m| m.start),
    })?;
    write_task_spec(
        &run,
        &task,
        &TaskSpec {
            result_file: spec.result_file.clone(),
            launched_ns: now_ns(),
            keep: spec.keep,
        },
    );
    let interactive_terminal = super::output::stderr_is_terminal() && !args.json.json;
    if interactive_terminal {
        errln!(
            "drover: {} on {} (run {run_id}, logs in {})",
            profile.name,
            selection.kind.as_str(),
            run.root().join("logs").display()
        );
    }
    let interrupted = super::interrupt_flag()?;
    spec.cancel = Some(std::sync::Arc::clone(&interrupted));
    let cli = profile.name.clone();
    let held = super::pause::hold(
        &project,
        super::pause::Holder::Task(&task),
        || {
            Ok(Context::new(
                project.clone(),
                RunDir::open(&project, &run_id)?,
                Prepared::launch(&project, &cli)?,
            ))
        },
        args.timeout,
        &interrupted,
    )?;
    let ctx = Context::new(project.clone(), run, prepared);
    if let super::pause::Hold::Stopped(why) = held {
        ctx.verdict(
            &task,
            Verdict::OverBudget,
            "budget:stop",
            serde_json::json!({"reason": why}),
        );
        if args.json.json {
            print_json(
                &serde_json::json!({"status": "over_budget", "run_id": run_id, "task": task, "reason": why}),
            )?;
        } else {
            outln!("over_budget: {why}");
        }
        return Ok(Outcome::Failed);
    }
    let resumable = matches!(selection.kind, WorkspaceKind::Headless | WorkspaceKind::Ray);
    let opted_out =
        (!args.resume_after_limit).then_some("drover run resumes only with --resume-after-limit");
    let mut resumed = 0;
    let result = loop {
        let result = match (selection.kind, &ray_target) {
            (WorkspaceKind::Ray, Some(target)) => {
                crate::drive::ray::driver::run(&ctx, &spec, target)
            }
            (kind, _) if kind.has_panes() => interactive::run(&ctx, &spec, kind),
            (WorkspaceKind::Acp, _) => acp::run(&ctx, &spec, &policy),
            (WorkspaceKind::Jules, _) => match &jules_target {
                Some(target) => crate::drive::jules::run(&ctx, &spec, target, &policy),
                None => bail!("the jules workspace has no target"),
            },
            _ => headless::run(&ctx, &spec),
        };
        // Only a conversation drover can resume by id is sent again: a
        // pane's run ends with its pane, an acp agent with its process.
        let Some(id) = result.session_id.clone().filter(|_| resumable) else {
            break result;
        };
        let Some(wait) = super::resume::plan(&ctx, &task, opted_out, &result, resumed) else {
            break result;
        };
        if !super::resume::wait(&ctx, &task, &result, wait, resumed, &interrupted, &|| false) {
            break result;
        }
        resumed += 1;
        spec.conversation = Conversation::Resume(id);
        spec.prompt = ctx
            .profile()
            .resume
            .message
            .clone()
            .unwrap_or_else(|| prompt.clone());
    };
    if args.json.json {
        print_json(&result)?;
    } else {
        print_summary(&result);
    }
    Ok(if interrupted.load(std::sync::atomic::Ordering::Relaxed) {
        Outcome::Interrupted
    } else if result.status == Verdict::Completed {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}

/// The models of the turn's transcript the price table does not know, read
/// as `drover usage FILE` reads it; empty when the turn named no transcript
/// or it cannot be read.
fn unpriced_models(r: &TurnReport) -> Vec<String> {
    let Some(transcript) = &r.transcript_path else {
        return Vec::new();
    };
    let request = crate::usage::Request {
        clis: vec![r.cli.clone()],
        paths: vec![PathBuf::from(transcript)],
        ..crate::usage::Request::default()
    };
    match crate::usage::run(Path::new("."), &request, &crate::usage::Quiet) {
        Ok(report) => report.unpriced.into_iter().map(|u| u.model).collect(),
        Err(e) => {
            tracing::debug!("the unpriced models of {transcript}: {e}");
            Vec::new()
        }
    }
}

fn print_summary(r: &TurnReport) {
    outln!(
        "{}: {} ({})",
        r.task,
        r.status.as_str(),
        terminal_line(&r.reason)
    );
    outln!(
        "  run {} · {} · {} · {:.1}s",
        r.run_id,
        r.cli,
        r.workspace,
        r.timings.duration_ms as f64 / 1000.0
    );
    if let Some(id) = &r.session_id {
        outln!("  conversation {}", terminal_line(id));
    }
    if let Some(reply) = &r.reply {
        let first = reply.lines().next().unwrap_or_default();
        outln!(
            "  reply: {}",
            terminal_line(&drover_types::text::truncate_chars(first, 200))
        );
    }
    // Printed figures (`3.1k`) are estimates; say so beside every one.
    let about = if r.usage_approximate { "~" } else { "" };
    if r.usage_approximate {
        outln!("  usage is approximate: read from the CLI's printed summary ([turn.usage])");
    }
    if let Some(u) = &r.usage {
        outln!(
            "  tokens: input {about}{} · output {about}{} (reasoning {about}{}) · cache read {about}{} · cache write {about}{} · {} requests",
            u.input,
            u.output,
            u.reasoning,
            u.cache_read,
            u.cache_write,
            u.requests
        );
    }
    if r.usage.is_some() {
        match r.cost_usd {
            Some(c) => outln!("  cost: {about}${c:.4}"),
            None => {
                let models = unpriced_models(r);
                let shown: Vec<&str> = models.iter().map(String::as_str).collect();
                let which = if models.is_empty() {
                    "a model it used".to_string()
                } else {
                    models.join(", ")
                };
                outln!(
                    "  cost: unpriced: no price for {}; {}",
                    terminal_line(&which),
                    terminal_line(&crate::pricing::how_to_price(&shown, false))
                );
            }
        }
    }
    if let Some(kind) = &r.blocked {
        outln!("  blocked on a {kind} prompt");
    }
    if let Some(f) = &r.fault {
        let retry = f
            .retry_after_secs
            .map(|s| format!(", retry after {s}s"))
            .unwrap_or_default();
        outln!(
            "  fault: {} ({}{retry}): {}",
            f.kind,
            terminal_line(&f.rule),
            terminal_line(&f.evidence)
        );
        if let Some(hint) = &f.hint {
            outln!("  hint: {hint}");
        }
    }
    for log in &r.logs {
        outln!("  log: {}", log.display());
    }
}
