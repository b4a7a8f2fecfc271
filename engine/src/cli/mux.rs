//! `drover mux`: the workspace backends, whether each is available, its
//! version (and socket), which one is selected and why, and which optional
//! operations of the contract each lacks.

use super::output::{errln, out, outln};
use std::path::Path;

use serde::Serialize;

use super::Outcome;
use super::output::{Json, print_json, table};
use crate::workspace::{self, Backend, Selection};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    json: Json,
}

#[derive(Serialize)]
struct Report {
    selected: Option<Selection>,
    error: Option<String>,
    backends: Vec<Backend>,
    ray: crate::ray::ClusterReport,
}

pub fn reason_label(reason: &str) -> &'static str {
    match reason {
        "flag" => "set by --workspace",
        "env" => "set by DROVER_WORKSPACE",
        "project" => "set by [workspace] default in .drover/config.toml",
        "user" => "set by [workspace] default in the user's config.toml",
        _ => "the default",
    }
}

/// A reachable Ray cluster's address and nodes, under the table (an
/// unreachable one is the ray row's note).
pub fn print_cluster(ray: &crate::ray::ClusterReport) {
    let Some(address) = ray.address.as_ref().filter(|_| ray.reachable) else {
        return;
    };
    let source = ray.address_source.as_deref().unwrap_or("default");
    outln!(
        "ray: {address} ({source}): ray {}, {} nodes",
        ray.ray_version.as_deref().unwrap_or("?"),
        ray.nodes.len()
    );
    for line in ray.node_lines() {
        outln!("  {line}");
    }
}

/// The project settings set aside because the project is not trusted.
pub fn print_ignored(selection: Option<&Selection>, ray: &crate::ray::ClusterReport) {
    for note in selection
        .map(|s| s.ignored.as_slice())
        .unwrap_or_default()
        .iter()
        .chain(&ray.ignored)
    {
        errln!("note: {note}");
    }
}

/// Where each backend listens and what it lacks, under the table.
pub fn print_gaps(backends: &[Backend]) {
    for b in backends {
        if let Some(socket) = &b.socket {
            outln!("{}: socket {socket}", b.name);
        }
        if !b.available {
            outln!("{}: {}", b.name, b.note);
        }
        for gap in b.lacks {
            outln!("{} lacks {}: {}", b.name, gap.operation, gap.instead);
        }
    }
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let (config, config_error) = match crate::trust::load_config(project) {
        Ok(config) => (config, None),
        Err(e) => (crate::config::Config::default(), Some(e.to_string())),
    };
    let (selected, error) = match workspace::select(&config, None) {
        Ok(s) => (Some(s), config_error),
        Err(e) => (None, Some(e.to_string())),
    };
    let ray = crate::ray::cluster_in(&config, project);
    let report = Report {
        backends: workspace::backends(
            selected.as_ref(),
            &ray.row(),
            &workspace::jules::row(&config),
        ),
        selected,
        error,
        ray,
    };
    print_ignored(report.selected.as_ref(), &report.ray);
    if args.json.json {
        print_json(&report)?;
    } else {
        let rows: Vec<Vec<String>> = report
            .backends
            .iter()
            .map(|b| {
                vec![
                    b.name.to_string(),
                    if b.available { "yes" } else { "no" }.to_string(),
                    b.version.clone().unwrap_or_else(|| "-".to_string()),
                    match (&report.selected, b.selected) {
                        (Some(s), true) => format!("* {}", reason_label(s.reason)),
                        _ => String::new(),
                    },
                ]
            })
            .collect();
        out!(
            "{}",
            table(&["NAME", "AVAILABLE", "VERSION", "SELECTED"], &rows)
        );
        print_cluster(&report.ray);
        print_gaps(&report.backends);
        if let Some(e) = &report.error {
            errln!("error: {e}");
        }
    }
    Ok(if report.error.is_none() {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}
