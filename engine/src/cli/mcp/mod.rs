//! `drover mcp`: drover as a stdio MCP server for an agent (docs/mcp.md),
//! and `drover mcp install|remove --cli NAME`, which write it into (and
//! take it out of) a CLI's MCP configuration.
//!
//! - [`server`]: the protocol (rmcp) on stdin/stdout, each call run off the
//!   async runtime.
//! - [`tools`]: the tools, their argument checks and descriptions; each
//!   calls the function its command calls.
//! - [`install`]: the config edit, checked and restorable byte for byte.

mod install;
mod server;
mod tools;

use std::path::Path;

use super::Outcome;
use super::output::{Json, outln, print_json};

#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Write drover (`drover --project <this project> mcp`) into a CLI's MCP config.
    Install(InstallArgs),
    /// Take drover out of a CLI's MCP config; the file drover first edited comes back byte for byte.
    Remove(InstallArgs),
}

#[derive(clap::Args, Debug)]
struct InstallArgs {
    /// The CLI whose config to edit: claude, codex, gemini or qwen.
    #[arg(long = "cli", value_name = "NAME")]
    cli: String,
    #[command(flatten)]
    json: Json,
}

pub fn run(project: &Path, explicit_project: bool, args: Args) -> anyhow::Result<Outcome> {
    match args.command {
        None => server::serve(project, explicit_project),
        Some(Command::Install(args)) => {
            let done = install::install(project, &args.cli)?;
            report(&done, args.json.json)
        }
        Some(Command::Remove(args)) => {
            let done = install::remove(project, &args.cli)?;
            report(&done, args.json.json)
        }
    }
}

fn report(done: &install::Done, json: bool) -> anyhow::Result<Outcome> {
    if json {
        print_json(done)?;
    } else {
        outln!("{}: {} ({})", done.cli, done.change, done.path.display());
    }
    Ok(Outcome::Ok)
}
