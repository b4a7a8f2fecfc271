//! `drover profiles`: what each profile binds, and whether its binary exists.

use super::output::{errln, out};
use std::path::Path;

use serde::Serialize;

use super::Outcome;
use super::output::{Json, print_json, table};
use crate::profile::Catalog;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    json: Json,
}

#[derive(Serialize)]
struct Row {
    name: String,
    source: String,
    source_kind: &'static str,
    component: String,
    dialect: String,
    usage_parser: String,
    binary: String,
    binary_found: Option<String>,
    aliases: Vec<String>,
}

#[derive(Serialize)]
struct Report {
    profiles: Vec<Row>,
    errors: Vec<String>,
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let catalog = Catalog::load(project);
    let profiles = catalog
        .profiles()
        .iter()
        .map(|p| Row {
            name: p.name.clone(),
            source: p.source.to_string(),
            source_kind: p.source.kind(),
            component: p.component.to_string(),
            dialect: p.hooks.dialect.clone(),
            usage_parser: p.usage_parser.clone(),
            binary: p.binary.clone(),
            binary_found: which::which(&p.binary)
                .ok()
                .map(|b| b.display().to_string()),
            aliases: p.aliases.clone(),
        })
        .collect::<Vec<_>>();
    let report = Report {
        profiles,
        errors: catalog.errors().iter().map(ToString::to_string).collect(),
    };
    if args.json.json {
        print_json(&report)?;
    } else {
        let rows: Vec<Vec<String>> = report
            .profiles
            .iter()
            .map(|r| {
                vec![
                    r.name.clone(),
                    r.source_kind.to_string(),
                    r.component.clone(),
                    r.dialect.clone(),
                    r.usage_parser.clone(),
                    match &r.binary_found {
                        Some(_) => format!("{} (found)", r.binary),
                        None => format!("{} (not found)", r.binary),
                    },
                ]
            })
            .collect();
        out!(
            "{}",
            table(
                &["NAME", "SOURCE", "COMPONENT", "DIALECT", "USAGE", "BINARY"],
                &rows
            )
        );
        for error in &report.errors {
            errln!("error: {error}");
        }
    }
    Ok(if report.errors.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}
