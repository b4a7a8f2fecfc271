//! `drover explain --cli NAME --screen FILE`: which seat state a captured
//! pane shows, which rule decided, and the text it matched. For people
//! writing or debugging screen rules.

use super::output::{outln, terminal_line};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::Serialize;

use super::Outcome;
use super::output::{Json, print_json};
use crate::profile::Catalog;
use crate::registry;
use drover_types::wit;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long = "cli", value_name = "NAME")]
    cli: String,
    /// A pane capture (`tmux capture-pane -p`, ANSI codes allowed); `-` reads stdin.
    #[arg(long, value_name = "FILE")]
    screen: PathBuf,
    /// The pane or window title, when the rules look at it.
    #[arg(long, default_value = "")]
    title: String,
    #[command(flatten)]
    json: Json,
}

#[derive(Serialize)]
struct Report {
    cli: String,
    state: wit::SeatState,
    prompt_kind: Option<wit::PromptKind>,
    rule: String,
    evidence: String,
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let raw = if args.screen.as_os_str() == "-" {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)
            .context("reading the screen from stdin")?;
        buf
    } else {
        std::fs::read(&args.screen).with_context(|| format!("reading {}", args.screen.display()))?
    };
    let catalog = Catalog::load(project);
    let profile = catalog.get(&args.cli)?;
    let adapter = registry::bind(profile, project)?;
    let reading = adapter.read_screen(
        &profile.to_wit(),
        &crate::workspace::screen_of(&raw, &args.title),
    )?;
    let report = Report {
        cli: profile.name.clone(),
        state: reading.state,
        prompt_kind: reading.prompt_kind,
        rule: reading.rule,
        evidence: reading.evidence,
    };
    if args.json.json {
        print_json(&report)?;
    } else {
        match report.prompt_kind {
            Some(kind) => outln!("{} ({kind})", report.state),
            None => outln!("{}", report.state),
        }
        outln!("  rule: {}", terminal_line(&report.rule));
        if !report.evidence.is_empty() {
            outln!("  evidence: {}", report.evidence);
        }
    }
    Ok(Outcome::Ok)
}
