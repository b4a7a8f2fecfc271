//! `drover doctor`: what this machine and project offer, in one place — the
//! workspaces, the compile cache, and for each profile its binary, its
//! component's capabilities, and what the component says it cannot tell
//! apart (for most CLIs: done vs idle on a pane); and which price table
//! `drover usage` and budgets bill from.

use super::output::{errln, outln};
use std::path::Path;

use serde::Serialize;

use super::Outcome;
use super::output::{Json, print_json};
use crate::pricing::{self, Prices};
use crate::profile::Catalog;
use crate::registry;
use crate::sandbox::Sandbox;
use crate::workspace;

/// The one-time dialogs a CLI shows on a fresh config home before its
/// prompt (captured from the real CLIs; docs/first-run.md).
const FIRST_RUN: &[(&str, &str)] = &[
    (
        "claude",
        "a theme, an API-key choice, security notes, folder trust and the bypass warning",
    ),
    (
        "gemini",
        "folder trust, an auth-method choice and an API-key field",
    ),
    ("copilot", "folder trust"),
    (
        "codex",
        "folder trust and, for a model with a newer one, a model nudge",
    ),
];

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
    /// What drives it: the component, or `generic (dialect …)`.
    driver: String,
    /// Project profiles only: whether the user trusts the file as it is.
    trusted: Option<bool>,
    /// Notes about how it can run (a generic profile without `[turn] argv`
    /// runs on tmux only).
    notes: Vec<String>,
    /// What will go wrong here before any run (a CLI that refuses its
    /// bypass arguments under root).
    warnings: Vec<String>,
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
    pricing: PricingHealth,
    notify: crate::notify::Notifiers,
    /// The desktop notifier found here, if any.
    desktop_notifier: Option<String>,
    relay: RelayHealth,
}

/// The relay `hooks install` registers.
#[derive(Serialize)]
struct RelayHealth {
    /// Its command (`NAME` for the CLI); `None` when drover cannot find its
    /// own executable.
    command: Option<String>,
    /// The relay binary drover carries and writes out; `None` without a data
    /// directory, when `drover hook` is registered instead.
    path: Option<String>,
    /// How that binary is linked.
    linking: crate::hooks::embedded::Linking,
    /// Whether it has been written there (by `hooks install`), intact.
    exists: bool,
}

fn relay_health() -> RelayHealth {
    let path =
        crate::hooks::embedded::data_home().map(|home| crate::hooks::embedded::path_in(&home));
    let command = std::env::current_exe().ok().map(|exe| {
        crate::hooks::relays_for(&exe, path.as_deref(), "NAME")
            .0
            .command
    });
    RelayHealth {
        command,
        exists: path
            .as_deref()
            .is_some_and(crate::hooks::embedded::is_written),
        path: path.map(|p| p.display().to_string()),
        linking: crate::hooks::embedded::LINKING,
    }
}

#[derive(Serialize)]
struct PricingHealth {
    #[serde(flatten)]
    source: pricing::Source,
    /// The user's override file, when it does not load.
    error: Option<String>,
}

fn pricing_health() -> PricingHealth {
    match Prices::load(None) {
        Ok(prices) => PricingHealth {
            source: prices.source().clone(),
            error: None,
        },
        Err(e) => PricingHealth {
            source: Prices::embedded().source().clone(),
            error: Some(e.to_string()),
        },
    }
}

fn print_relay(relay: &RelayHealth) {
    use crate::hooks::embedded::Linking;
    let Some(command) = &relay.command else {
        outln!("hook relay: unknown (drover cannot find its own executable)");
        return;
    };
    outln!("hook relay: {command} EVENT");
    match &relay.path {
        None => outln!(
            "  no data directory (set HOME or XDG_DATA_HOME): each hook starts the whole drover binary"
        ),
        Some(_) => {
            let linking = match relay.linking {
                Linking::Static => "statically linked",
                Linking::Dynamic => {
                    "dynamically linked (this target cannot link it statically: each hook also runs the dynamic loader)"
                }
            };
            let written = if relay.exists {
                "written"
            } else {
                "not written yet: `drover hooks install` writes it"
            };
            outln!("  {linking}; {written}");
        }
    }
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let (config, config_error) = match crate::trust::load_config(project) {
        Ok(config) => (config, None),
        Err(e) => (crate::config::Config::default(), Some(e.to_string())),
    };
    let selection = workspace::select(&config, None).ok();
    let sandbox = Sandbox::with_default_cache()?;
    let cache = sandbox.cache();
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
    let catalog = Catalog::load(project);
    let trust = crate::trust::Trust::load(project).ok();
    let profiles = catalog
        .profiles()
        .iter()
        .map(|p| {
            let described = registry::bind_in(&sandbox, p, project)
                .map_err(|e| e.to_string())
                .and_then(|a| a.describe().map_err(|e| e.to_string()));
            let (capabilities, limitations, error) = match described {
                Ok(d) => {
                    let mut limitations = d.limitations;
                    use drover_types::wit::{CanonicalEvent, Capability};
                    let screen = d.capabilities.contains(&Capability::Screen);
                    let prompt_hook = !p.hookless()
                        && p.hooks.events.iter().any(|(_, canonical)| {
                            CanonicalEvent::from_profile_name(canonical) == Some(CanonicalEvent::PromptSubmit)
                        });
                    // drover's own limit for this profile, beside the
                    // component's: what proves a typed message arrived.
                    limitations.extend(
                        crate::drive::interactive::delivery::cannot(prompt_hook, screen)
                            .map(str::to_string),
                    );
                    (
                        d.capabilities
                            .iter()
                            .map(|c| c.as_str().to_string())
                            .collect(),
                        limitations,
                        None,
                    )
                }
                Err(e) => (Vec::new(), Vec::new(), Some(e)),
            };
            let driver = registry::driver_label(p, project);
            let mut limitations = limitations;
            limitations.extend(unattended_limits(p, &driver));
            let mut notes = Vec::new();
            if driver.starts_with(registry::GENERIC) && p.turn.argv.is_empty() {
                notes.push("runs on tmux only: no [turn] argv for headless turns".to_string());
            }
            if let Some((_, dialogs)) = FIRST_RUN.iter().find(|(binary, _)| *binary == p.binary) {
                notes.push(format!(
                    "on a fresh config its pane first shows {dialogs}: each waits for `drover answer`; docs/first-run.md says how to pre-accept them for unattended seats"
                ));
            }
            let warnings: Vec<String> = crate::privileges::running_as_root()
                .then(|| crate::privileges::root_refusal(p, &driver))
                .flatten()
                .into_iter()
                .collect();
            ProfileHealth {
                name: p.name.clone(),
                binary: p.binary.clone(),
                binary_path: which::which(&p.binary)
                    .ok()
                    .map(|b| b.display().to_string()),
                component: p.component.to_string(),
                driver,
                trusted: matches!(p.source, crate::profile::ProfileSource::Project(_))
                    .then(|| trust.as_ref().is_some_and(|t| t.require_profile(p).is_ok())),
                notes,
                warnings,
                capabilities,
                limitations,
                error,
            }
        })
        .collect();
    let ray = crate::ray::cluster_in(&config, project);
    let report = Report {
        drover: env!("CARGO_PKG_VERSION"),
        backends: workspace::backends(
            selection.as_ref(),
            &ray.row(),
            &workspace::jules::row(&config),
        ),
        ray,
        workspace: selection,
        cache_dir: cache.dir().map(|d| d.display().to_string()),
        cache_entries,
        cache_bytes,
        profiles,
        profile_errors: catalog.errors().iter().map(ToString::to_string).collect(),
        pricing: pricing_health(),
        notify: {
            let mut notify = crate::notify::Notifiers::from_config(&config);
            notify.errors.extend(config_error);
            notify
        },
        desktop_notifier: crate::notify::desktop_notifier("")
            .map(|(path, _)| path.display().to_string()),
        relay: relay_health(),
    };
    let healthy = report.profile_errors.is_empty()
        && report.notify.errors.is_empty()
        && report.profiles.iter().all(|p| p.error.is_none())
        && report.pricing.error.is_none();
    if args.json.json {
        print_json(&report)?;
        return Ok(if healthy {
            Outcome::Ok
        } else {
            Outcome::Failed
        });
    }
    outln!("drover {}", report.drover);
    if let Some(s) = &report.workspace {
        outln!(
            "workspace: {} ({})",
            s.kind.as_str(),
            super::mux::reason_label(s.reason)
        );
    }
    for b in &report.backends {
        outln!(
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
    super::mux::print_ignored(report.workspace.as_ref(), &report.ray);
    for entry in &report.notify.entries {
        outln!(
            "notify: {} ({}) on {}",
            entry.target.kind(),
            entry.at,
            entry.on.join(", ")
        );
        if entry.target == crate::notify::Target::Desktop && report.desktop_notifier.is_none() {
            outln!("  no desktop notifier here (notify-send or osascript): these will be skipped");
        }
    }
    for ignored in &report.notify.ignored {
        outln!("notify ignored: {ignored}");
    }
    for e in &report.notify.errors {
        errln!("error: {e}");
    }
    match &report.cache_dir {
        Some(d) => outln!(
            "compile cache: {d} ({} components, {:.1} MB)",
            report.cache_entries,
            report.cache_bytes as f64 / 1e6
        ),
        None => outln!("compile cache: disabled (no HOME, XDG_CACHE_HOME or DROVER_CACHE_DIR)"),
    }
    print_relay(&report.relay);
    let prices = &report.pricing.source;
    outln!(
        "prices: {} (snapshot {}){}",
        prices.snapshot,
        prices.snapshot_date,
        if prices.overrides.is_empty() {
            String::new()
        } else {
            format!(", overrides from {}", prices.overrides.join(", "))
        }
    );
    if let Some(e) = &report.pricing.error {
        outln!("  price file error: {e}");
    }
    for p in &report.profiles {
        let binary = match &p.binary_path {
            Some(path) => format!("{} at {path}", p.binary),
            None => format!("{} not on PATH", p.binary),
        };
        outln!("\n{} ({binary}; driven by {})", p.name, p.driver);
        if p.trusted == Some(false) {
            outln!("  untrusted project profile: `drover run` refuses it until `drover trust`");
        }
        for note in &p.notes {
            outln!("  note: {note}");
        }
        for warning in &p.warnings {
            outln!("  warning: {warning}");
        }
        match &p.error {
            Some(e) => outln!("  component error: {e}"),
            None => {
                outln!("  can: {}", p.capabilities.join(", "));
                for l in &p.limitations {
                    outln!("  cannot: {l}");
                }
            }
        }
    }
    for e in &report.profile_errors {
        errln!("error: {e}");
    }
    Ok(if healthy {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}

/// What a profile cannot do of issue-26's unattended behaviours, from its
/// own fields: a budget needs its usage read, a resumption its reset time.
fn unattended_limits(p: &crate::profile::Profile, driver: &str) -> Vec<String> {
    let mut cannot = Vec::new();
    if p.usage_parser.is_empty() && p.turn.usage.is_empty() {
        cannot.push(
            "be held to a [budget]: drover reads none of its usage (no usage parser), so its spend counts as nothing"
                .to_string(),
        );
    }
    if !p.resume.on_limit {
        cannot
            .push("resume after a rate limit or quota: its [resume] on_limit is false".to_string());
    } else if driver.starts_with(registry::GENERIC) || p.binary == "grok" {
        cannot.push(
            "read when its rate limit resets (no sentence of it states one): a resumption backs off from a minute"
                .to_string(),
        );
    }
    cannot
}
