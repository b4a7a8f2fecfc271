//! `drover profiles`: what each profile binds, what drives it (a component,
//! or the generic adapter from its dialect), whether its binary exists, and
//! whether a project profile is trusted.

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
    /// bmad-loop's driver kind.
    adapter: crate::profile::AdapterKind,
    component: String,
    /// What drives it: the component, or `generic (dialect …)`.
    driver: String,
    /// Project profiles only: whether the user trusts the file as it is.
    trusted: Option<bool>,
    warnings: Vec<String>,
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
    let trust = crate::trust::Trust::load(project);
    let profiles = catalog
        .profiles()
        .iter()
        .map(|p| Row {
            name: p.name.clone(),
            source: p.source.to_string(),
            source_kind: p.source.kind(),
            adapter: p.adapter,
            component: p.component.to_string(),
            driver: crate::registry::driver_label(p, project),
            trusted: matches!(p.source, crate::profile::ProfileSource::Project(_))
                .then(|| trust.as_ref().is_ok_and(|t| t.require_profile(p).is_ok())),
            warnings: p.warnings.iter().map(ToString::to_string).collect(),
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
                    match r.trusted {
                        Some(false) => format!("{} (untrusted)", r.source_kind),
                        _ => r.source_kind.to_string(),
                    },
                    r.driver.clone(),
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
                &["NAME", "SOURCE", "DRIVER", "DIALECT", "USAGE", "BINARY"],
                &rows
            )
        );
        if let Some(note) = super::trust::untrusted_note(project) {
            errln!("{note}");
        }
        if let Err(e) = &trust {
            errln!("warning: cannot read trust records: {e}");
        }
        for warning in report.profiles.iter().flat_map(|r| &r.warnings) {
            errln!("warning: {warning}");
        }
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
