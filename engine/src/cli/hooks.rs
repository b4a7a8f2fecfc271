//! `drover hooks install|remove|status --cli NAME`: edit a CLI's hook config
//! through its component (the engine does the confined, atomic write).

use super::output::outln;
use std::path::Path;

use serde::Serialize;

use super::Outcome;
use super::output::{Json, print_json};
use crate::hooks::{self, Change};
use crate::profile::Catalog;
use crate::registry;

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Register drover's relay for every event the profile maps.
    Install(Target),
    /// Remove drover's relay entries, leaving the user's config as it was.
    Remove(Target),
    /// Show which mapped events carry the relay.
    Status(Target),
}

#[derive(clap::Args, Debug)]
pub struct Target {
    /// The CLI profile.
    #[arg(long = "cli", value_name = "NAME")]
    cli: String,
    #[command(flatten)]
    json: Json,
}

#[derive(Serialize)]
struct Report {
    cli: String,
    action: &'static str,
    config_path: String,
    change: Option<Change>,
    registered: Vec<String>,
    missing: Vec<String>,
}

pub fn run(project: &Path, command: Command) -> anyhow::Result<Outcome> {
    let (action, target) = match &command {
        Command::Install(t) => ("install", t),
        Command::Remove(t) => ("remove", t),
        Command::Status(t) => ("status", t),
    };
    let catalog = Catalog::load(project);
    let profile = catalog.get(&target.cli)?;
    let adapter = registry::bind(profile, project)?;
    let change = match command {
        Command::Install(_) => Some(hooks::install(&adapter, profile, project)?),
        Command::Remove(_) => Some(hooks::remove(&adapter, profile, project)?),
        Command::Status(_) => None,
    };
    let status = hooks::status(&adapter, profile, project)?;
    let report = Report {
        cli: profile.name.clone(),
        action,
        config_path: status.config_path.clone(),
        change,
        registered: status.registered,
        missing: status.missing,
    };
    if target.json.json {
        print_json(&report)?;
    } else {
        let path = project.join(&report.config_path);
        match &report.change {
            Some(Change::Written) => {
                outln!("hooks {action}ed ({}): {}", report.cli, path.display())
            }
            Some(Change::Restored) => outln!(
                "hooks removed ({}): {} restored to its original bytes",
                report.cli,
                path.display()
            ),
            Some(Change::Deleted) => outln!(
                "hooks removed ({}): {} deleted (drover had created it)",
                report.cli,
                path.display()
            ),
            Some(Change::Unchanged) => {
                outln!("nothing to {action} ({}): {}", report.cli, path.display())
            }
            None => {}
        }
        if !report.registered.is_empty() {
            outln!("  registered: {}", report.registered.join(", "));
        }
        if !report.missing.is_empty() {
            outln!("  missing: {}", report.missing.join(", "));
        }
    }
    // An install that left events unregistered did not do its job.
    let incomplete = action == "install" && !report.missing.is_empty();
    Ok(if incomplete {
        Outcome::Failed
    } else {
        Outcome::Ok
    })
}
