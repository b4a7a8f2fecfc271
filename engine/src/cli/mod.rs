//! The `drover` command line. Exit codes: 0 ok, 1 failure, 2 usage error.
//! `--json` prints exactly one JSON document on stdout, or nothing.

mod adapter;
mod output;
mod profiles;
mod usage;
mod validate;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "drover",
    version,
    about = "Drive AI coding CLIs unattended; CLI logic runs in sandboxed WebAssembly components."
)]
pub struct Cli {
    /// The project directory (state lives in <project>/.drover).
    #[arg(long, global = true, default_value = ".", value_name = "DIR")]
    project: PathBuf,

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
    /// Token usage from the CLIs' transcripts.
    Usage(usage::Args),
}

/// What a command decided: success or a reported failure (exit 1).
pub enum Outcome {
    Ok,
    Failed,
}

pub fn main() -> ExitCode {
    restore_sigpipe();
    init_logging();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let project = cli.project.clone();
    let result = match cli.command {
        Command::Profiles(args) => profiles::run(&project, args),
        Command::Validate(args) => validate::run(&project, args),
        Command::Adapter(command) => adapter::run(&project, command),
        Command::Usage(args) => usage::run(&project, args),
    };
    match result {
        Ok(Outcome::Ok) => ExitCode::SUCCESS,
        Ok(Outcome::Failed) => ExitCode::from(1),
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(1)
        }
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("DROVER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

/// Rust ignores SIGPIPE, which turns `drover … | head` into a panic on the
/// next print. A command-line tool should just stop, as other tools do.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: setting a signal disposition to its default before any threads
    // that care about it exist.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
