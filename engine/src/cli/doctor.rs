//! `drover doctor`: what this machine and project offer, in one place — the
//! workspaces, the compile cache, and for each profile its binary, its
//! component's capabilities, and what the component says it cannot tell
//! apart (for most CLIs: done vs idle on a pane).

use std::path::Path;

use serde::Serialize;

use super::Outcome;
use super::output::{Json, print_json};
use crate::profile::Catalog;
use crate::registry;
use crate::sandbox::{CompileCache, Sandbox};
use crate::workspace;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    json: Json,
}

#[derive(Serialize)]
struct ProfileHealth {
    name: String,
    binary: String,
    binary_path: Option<String>,
    component: String,
    capabilities: Vec<String>,
    limitations: Vec<String>,
    error: Option<String>,
}

#[derive(Serialize)]
struct Report {
    drover: &'static str,
    workspace: Option<workspace::Selection>,
    backends: Vec<workspace::Backend>,
    ray: crate::ray::ClusterReport,
    cache_dir: Option<String>,
    cache_entries: usize,
    cache_bytes: u64,
    profiles: Vec<ProfileHealth>,
    profile_errors: Vec<String>,
    notify: crate::notify::Notifiers,
    /// The desktop notifier found here, if any.
    desktop_notifier: Option<String>,
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let selection = workspace::select(project, None).ok();
    let cache = CompileCache::default_location();
    let (cache_entries, cache_bytes) = cache
        .dir()
        .and_then(|d| std::fs::read_dir(d).ok())
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
                .fold((0, 0), |(n, b), e| {
                    (n + 1, b + e.metadata().map(|m| m.len()).unwrap_or(0))
                })
        })
        .unwrap_or((0, 0));
    let sandbox = Sandbox::new(cache.clone())?;
    let catalog = Catalog::load(project);
    let profiles = catalog
        .profiles()
        .iter()
        .map(|p| {
            let described = registry::load(&sandbox, p, project)
                .map_err(|e| e.to_string())
                .and_then(|(a, _, _)| a.describe().map_err(|e| e.to_string()));
            let (capabilities, limitations, error) = match described {
                Ok(d) => (
                    d.capabilities
                        .iter()
                        .map(|c| c.as_str().to_string())
                        .collect(),
                    d.limitations,
                    None,
                ),
                Err(e) => (Vec::new(), Vec::new(), Some(e)),
            };
            ProfileHealth {
                name: p.name.clone(),
                binary: p.binary.clone(),
                binary_path: which::which(&p.binary)
                    .ok()
                    .map(|b| b.display().to_string()),
                component: p.component.to_string(),
                capabilities,
                limitations,
                error,
            }
        })
        .collect();
    let ray = crate::ray::cluster(project);
    let report = Report {
        drover: env!("CARGO_PKG_VERSION"),
        backends: workspace::backends(selection.as_ref(), &ray),
        ray,
        workspace: selection,
        cache_dir: cache.dir().map(|d| d.display().to_string()),
        cache_entries,
        cache_bytes,
        profiles,
        profile_errors: catalog.errors().iter().map(ToString::to_string).collect(),
        notify: crate::notify::Notifiers::load(project),
        desktop_notifier: crate::notify::desktop_notifier("")
            .map(|(path, _)| path.display().to_string()),
    };
    let healthy = report.profile_errors.is_empty()
        && report.notify.errors.is_empty()
        && report.profiles.iter().all(|p| p.error.is_none());
    if args.json.json {
        print_json(&report)?;
        return Ok(if healthy {
            Outcome::Ok
        } else {
            Outcome::Failed
        });
    }
    println!("drover {}", report.drover);
    if let Some(s) = &report.workspace {
        println!(
            "workspace: {} ({})",
            s.kind.as_str(),
            super::mux::reason_label(s.reason)
        );
    }
    for b in &report.backends {
        println!(
            "  {}: {}",
            b.name,
            if b.available {
                b.version.clone().unwrap_or_default()
            } else {
                "not available".to_string()
            }
        );
    }
    super::mux::print_cluster(&report.ray);
    super::mux::print_gaps(&report.backends);
    for entry in &report.notify.entries {
        println!(
            "notify: {} ({}) on {}",
            entry.target.kind(),
            entry.at,
            entry.on.join(", ")
        );
        if entry.target == crate::notify::Target::Desktop && report.desktop_notifier.is_none() {
            println!(
                "  no desktop notifier here (notify-send or osascript): these will be skipped"
            );
        }
    }
    for ignored in &report.notify.ignored {
        println!("notify ignored: {ignored}");
    }
    for e in &report.notify.errors {
        eprintln!("error: {e}");
    }
    match &report.cache_dir {
        Some(d) => println!(
            "compile cache: {d} ({} components, {:.1} MB)",
            report.cache_entries,
            report.cache_bytes as f64 / 1e6
        ),
        None => println!("compile cache: disabled (no HOME, XDG_CACHE_HOME or DROVER_CACHE_DIR)"),
    }
    for p in &report.profiles {
        let binary = match &p.binary_path {
            Some(path) => format!("{} at {path}", p.binary),
            None => format!("{} not on PATH", p.binary),
        };
        println!("\n{} ({binary}; component {})", p.name, p.component);
        match &p.error {
            Some(e) => println!("  component error: {e}"),
            None => {
                println!("  can: {}", p.capabilities.join(", "));
                for l in &p.limitations {
                    println!("  cannot: {l}");
                }
            }
        }
    }
    for e in &report.profile_errors {
        eprintln!("error: {e}");
    }
    Ok(if healthy {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}
