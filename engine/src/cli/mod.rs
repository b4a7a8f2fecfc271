//! The `drover` command line. Exit codes: 0 ok, 1 failure, 2 usage error.
//! `--json` prints exactly one JSON document on stdout, or nothing.

mod adapter;
mod adapter_check;
mod adapter_new;
mod answer;
mod doctor;
mod events;
mod explain;
mod hooks;
mod mcp;
mod mux;
mod output;
mod pause;
mod probe;
mod profiles;
mod ray_turn;
mod ray_worker;
mod resume;
mod run;
mod seats;
mod serve;
mod status;
mod trust;
mod usage;
mod validate;
mod wait;

use output::errln;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// `--budget-mode` as the command line parses it (the session crate, which
/// owns [`crate::drive::BudgetMode`], does not depend on clap).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum BudgetModeArg {
    Off,
    Warn,
    Enforce,
}

/// `--workspace NAME`: the names the workspace crate knows, offered and
/// checked by clap, parsed by [`crate::workspace::WorkspaceKind::parse`].
pub fn workspace_kind()
-> impl clap::builder::TypedValueParser<Value = crate::workspace::WorkspaceKind> {
    use clap::builder::TypedValueParser as _;
    let names = crate::workspace::WorkspaceKind::ALL
        .iter()
        .map(|kind| kind.as_str());
    clap::builder::PossibleValuesParser::new(names).try_map(|name| {
        crate::workspace::WorkspaceKind::parse(&name)
            .ok_or_else(|| format!("no workspace is called {name}"))
    })
}

impl From<BudgetModeArg> for crate::drive::BudgetMode {
    fn from(arg: BudgetModeArg) -> Self {
        match arg {
            BudgetModeArg::Off => Self::Off,
            BudgetModeArg::Warn => Self::Warn,
            BudgetModeArg::Enforce => Self::Enforce,
        }
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "drover",
    version,
    about = "Drive AI coding CLIs unattended; CLI logic runs in sandboxed WebAssembly components."
)]
pub struct Cli {
    /// The project directory (state lives in <project>/.drover; default:
    /// the current directory). `drover usage` also keeps only the
    /// conversations run in it when it is given.
    #[arg(long, global = true, value_name = "DIR")]
    project: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the CLI profiles this project sees.
    Profiles(profiles::Args),
    /// Check profiles, components, binaries and hook configs.
    Validate(validate::Args),
    /// Work with adapter components.
    #[command(subcommand)]
    Adapter(adapter::Command),
    /// Install, remove or inspect drover's relay in a CLI's hook config.
    #[command(subcommand)]
    Hooks(hooks::Command),
    /// Show which seat state a captured pane shows, and why.
    Explain(explain::Args),
    /// Run one session of a CLI on a prompt.
    Run(Box<run::Args>),
    /// Runs and their tasks' last states (reconciling runs whose drover died).
    Status(status::Args),
    /// Workspace backends: which are available, which is selected and why.
    Mux(mux::Args),
    /// What this machine and project offer, and what each adapter cannot tell apart.
    Doctor(doctor::Args),
    /// Start a named seat (a long-lived CLI conversation with a role).
    Up(seats::UpArgs),
    /// Send a message to a seat and wait for its turn to end.
    Send(seats::SendArgs),
    /// Attach this terminal to a seat's pane.
    Attach { nick: String },
    /// Stop seats.
    Down(seats::DownArgs),
    /// The seats on record and their states.
    Seats(seats::ListArgs),
    /// Wait until a seat's (a run's, or a team's: any or every one) state reaches or leaves a state.
    Wait(wait::Args),
    /// Every state transition and verdict, oldest first; --follow for new ones.
    Events(events::Args),
    /// Answer the question a blocked seat waits on.
    Answer(answer::Args),
    /// A live web page, a JSON API and an event stream over this project's seats and runs.
    Serve(serve::Args),
    /// The background process that holds an acp seat's agent (started by `up`).
    #[command(hide = true)]
    SeatHost { nick: String },
    /// The hook relay a CLI's hook config runs (payload on stdin).
    Hook {
        #[arg(long = "cli", value_name = "NAME")]
        cli: String,
        /// The CLI's native event name.
        event: String,
    },
    /// Report, sanitized for sharing, what a CLI and its adapter look like here.
    ProbeAdapter(probe::Args),
    /// Token usage from the CLIs' transcripts.
    Usage(usage::Args),
    /// Serve drover to an agent over MCP (stdio), or install it in a CLI's MCP config.
    Mcp(mcp::Args),
    /// Show what this project's own settings would run, and trust them.
    Trust(trust::Args),
    /// The entrypoint of a Ray job the ray workspace submits: one headless
    /// turn on this node, described by $DROVER_RAY_TURN.
    #[command(hide = true)]
    RayTurn,
    /// The entrypoint of a Ray worker job the ray workspace starts: takes
    /// turns from the mailbox $DROVER_RAY_WORKER names, one at a time.
    #[command(hide = true)]
    RayWorker,
    /// Sends the notifications one journal line asks for (started by drover).
    #[command(hide = true)]
    NotifyDispatch { run: String, task: String, ts: u64 },
}

/// What a command decided: success, a reported failure (exit 1), a usage
/// error it already explained (exit 2), or an interruption by SIGINT/SIGTERM
/// (exit 130).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    Failed,
    Usage,
    Interrupted,
}

/// A flag SIGINT and SIGTERM set, for long commands to stop cleanly (tear
/// down a seat, remove temp dirs). A second signal exits at once. One flag
/// per process, registered once: `drover mcp` asks for it on every tool
/// call, and handlers must not pile up.
pub fn interrupt_flag() -> anyhow::Result<std::sync::Arc<std::sync::atomic::AtomicBool>> {
    static FLAG: std::sync::Mutex<Option<std::sync::Arc<std::sync::atomic::AtomicBool>>> =
        std::sync::Mutex::new(None);
    let mut held = FLAG
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(flag) = held.as_ref() {
        return Ok(std::sync::Arc::clone(flag));
    }
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(
            signal,
            130,
            std::sync::Arc::clone(&flag),
        )?;
        signal_hook::flag::register(signal, std::sync::Arc::clone(&flag))?;
    }
    *held = Some(std::sync::Arc::clone(&flag));
    Ok(flag)
}

pub fn main() -> ExitCode {
    // The hook relay runs inside other CLIs' hooks: it must be fast and must
    // never exit non-zero, so it bypasses argument parsing and logging setup.
    // `args_os`: `std::env::args` panics on an argument that is not UTF-8.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "hook") {
        // `drover hook …`: the relay for hook configs written before
        // `drover-relay` existed.
        return drover_relay::main(args.get(2..).unwrap_or_default());
    }
    init_logging();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let explicit_project = cli.project.is_some();
    let project = cli.project.clone().unwrap_or_else(|| PathBuf::from("."));
    let result = match cli.command {
        Command::Profiles(args) => profiles::run(&project, args),
        Command::Validate(args) => validate::run(&project, args),
        Command::Adapter(command) => adapter::run(&project, command),
        Command::Hooks(command) => hooks::run(&project, command),
        Command::Explain(args) => explain::run(&project, args),
        Command::Run(args) => run::run(&project, *args),
        Command::Status(args) => status::run(&project, args),
        Command::Mux(args) => mux::run(&project, args),
        Command::Doctor(args) => doctor::run(&project, args),
        Command::Up(args) => seats::up(&project, args),
        Command::Send(args) => seats::send(&project, args),
        Command::Attach { nick } => seats::attach(&project, &nick),
        Command::Down(args) => seats::down(&project, args),
        Command::Seats(args) => seats::list(&project, args),
        Command::Wait(args) => wait::run(&project, args),
        Command::Events(args) => events::run(&project, args),
        Command::Serve(args) => serve::run(&project, args),
        Command::NotifyDispatch { run, task, ts } => {
            crate::notify::dispatch(&project, &run, &task, ts);
            Ok(Outcome::Ok)
        }
        Command::Answer(args) => answer::run(&project, args),
        Command::SeatHost { nick } => seats::host(&project, &nick),
        // Dispatched before argument parsing (see above); listed for --help.
        Command::Hook { .. } => Ok(Outcome::Ok),
        Command::ProbeAdapter(args) => probe::run(&project, args),
        Command::Usage(args) => usage::run(&project, explicit_project, args),
        Command::Trust(args) => trust::run(&project, args),
        Command::Mcp(args) => mcp::run(&project, explicit_project, args),
        Command::RayTurn => {
            interrupt_flag().and_then(|flag| ray_turn::main(&project, flag).map(|()| Outcome::Ok))
        }
        Command::RayWorker => interrupt_flag().and_then(|flag| ray_worker::main(&project, flag)),
    };
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Failed) => ExitCode::from(1),
        Ok(Outcome::Usage) => ExitCode::from(2),
        Ok(Outcome::Interrupted) => ExitCode::from(130),
        Err(error) => {
            errln!("error: {error:#}");
            ExitCode::from(1)
        }
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("DROVER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| output::CleanStderr)
        .with_target(false)
        .try_init();
}
