//! `drover validate`: findings with stable ids, in the order they ran.
//!
//! Ids: `profile.load`, `profile.warning`, `project.trust`,
//! `profile.component`, `profile.generic`, `component.load`, `component.env`,
//! `profile.dialect`, `profile.usage-parser`, `profile.fault-patterns`,
//! `adapter.binary`, `hooks.config-parse`, `hooks.registered`,
//! `profile.root`, `mux.selection`, `mux.backend`. A finding's
//! `message` is for people; `check` and `severity` are the contract. Exit 1
//! iff some finding is a problem.

use super::output::{errln, outln};
use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use super::Outcome;
use super::output::{Json, print_json};
use crate::hooks::{self, HookError};
use crate::profile::{Catalog, Profile};
use crate::registry;
use crate::sandbox::Sandbox;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Only these profiles (repeatable). Named profiles turn a missing binary
    /// or unregistered hooks into problems instead of warnings.
    #[arg(long = "cli", value_name = "NAME")]
    clis: Vec<String>,
    #[command(flatten)]
    json: Json,
}

#[derive(Serialize, Clone, Copy, PartialEq, Debug)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Ok,
    Warning,
    Problem,
}

#[derive(Serialize, Debug)]
pub struct Finding {
    pub check: &'static str,
    pub severity: Severity,
    pub message: String,
    pub detail: Value,
}

#[derive(Serialize)]
struct Report {
    ok: bool,
    findings: Vec<Finding>,
}

struct Findings(Vec<Finding>);

impl Findings {
    fn push(
        &mut self,
        check: &'static str,
        severity: Severity,
        message: impl Into<String>,
        detail: Value,
    ) {
        self.0.push(Finding {
            check,
            severity,
            message: message.into(),
            detail,
        });
    }
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let findings = collect(project, &args.clis);
    let ok = findings.iter().all(|f| f.severity != Severity::Problem);
    if args.json.json {
        print_json(&Report { ok, findings })?;
    } else {
        for f in &findings {
            match f.severity {
                Severity::Ok => outln!("  ok: {}", f.message),
                Severity::Warning => outln!("  warning: {}", f.message),
                Severity::Problem => errln!("FAIL: {}", f.message),
            }
        }
    }
    Ok(if ok { Outcome::Ok } else { Outcome::Failed })
}

pub fn collect(project: &Path, named: &[String]) -> Vec<Finding> {
    let mut out = Findings(Vec::new());
    let catalog = Catalog::load(project);
    if catalog.errors().is_empty() {
        out.push(
            "profile.load",
            Severity::Ok,
            format!("{} profiles loaded", catalog.profiles().len()),
            json!({"count": catalog.profiles().len()}),
        );
    }
    for error in catalog.errors() {
        out.push(
            "profile.load",
            Severity::Problem,
            error.to_string(),
            json!({"source": error.source, "line": error.line, "field": error.field}),
        );
    }
    let mut selected: Vec<&Profile> = Vec::new();
    if named.is_empty() {
        selected.extend(catalog.profiles());
    } else {
        for name in named {
            match catalog.find(name) {
                Some(p) => selected.push(p),
                None => out.push(
                    "profile.load",
                    Severity::Problem,
                    format!("unknown CLI profile '{name}'"),
                    json!({"profile": name}),
                ),
            }
        }
    }
    let strict = !named.is_empty();
    for profile in &selected {
        for warning in &profile.warnings {
            out.push(
                "profile.warning",
                Severity::Warning,
                warning.to_string(),
                json!({"profile": profile.name, "source": warning.source, "line": warning.line, "field": warning.field}),
            );
        }
    }
    check_trust(&mut out, project, &selected);
    check_mux(&mut out, project);
    let sandbox = match Sandbox::with_default_cache() {
        Ok(s) => s,
        Err(e) => {
            out.push(
                "component.load",
                Severity::Problem,
                e.to_string(),
                Value::Null,
            );
            return out.0;
        }
    };
    for profile in selected {
        check_profile(&mut out, &sandbox, project, profile, strict);
    }
    out.0
}

fn check_profile(
    out: &mut Findings,
    sandbox: &Sandbox,
    project: &Path,
    profile: &Profile,
    strict: bool,
) {
    let name = &profile.name;
    let component = match registry::resolve(&profile.component, project) {
        Ok(c) if c.is_generic() => {
            out.push(
                "profile.component",
                Severity::Ok,
                format!(
                    "{name}: no component of its own; the generic adapter drives it from its data (dialect {}, usage parser {})",
                    profile.hooks.dialect, profile.usage_parser
                ),
                json!({"profile": name, "component": c.name, "origin": c.origin.to_string(), "generic": true}),
            );
            c
        }
        Ok(c) => {
            let project_component = registry::is_project_component(profile, &c.origin, project);
            let shadows = project_component && crate::builtin::find(&c.name).is_some();
            let whose = match (project_component, shadows) {
                (true, true) => format!(
                    "a project component in place of the built-in {}; it launches only once trusted (`drover trust --show`)",
                    c.name
                ),
                (true, false) => {
                    "a project component; it launches only once trusted (`drover trust --show`)"
                        .to_string()
                }
                (false, _) => c.origin.to_string(),
            };
            out.push(
                "profile.component",
                Severity::Ok,
                format!("{name}: component {} ({whose}, file {})", c.name, c.origin),
                json!({"profile": name, "component": c.name, "origin": c.origin.to_string(), "project": project_component, "shadows_builtin": shadows}),
            );
            c
        }
        Err(e) => {
            out.push(
                "profile.component",
                Severity::Problem,
                format!("{name}: {e}"),
                json!({"profile": name}),
            );
            return;
        }
    };
    let adapter = match sandbox.load(
        &component.name,
        &component.bytes,
        &component.sha256,
        profile.limits(),
    ) {
        Ok((adapter, cache)) => adapter.describe().map(|d| (adapter, d, cache)),
        Err(e) => Err(e),
    };
    let (adapter, description) = match adapter {
        Ok((adapter, description, cache)) => {
            out.push(
                "component.load",
                Severity::Ok,
                format!("{name}: {} {} (drover:adapter@{})", description.name, description.adapter_version, description.wit_version),
                json!({"profile": name, "adapter": description.name, "version": description.adapter_version, "wit": description.wit_version, "cache": format!("{cache:?}").to_lowercase(), "limitations": description.limitations}),
            );
            (adapter, description)
        }
        Err(e) => {
            out.push(
                "component.load",
                Severity::Problem,
                format!("{name}: {e}"),
                json!({"profile": name}),
            );
            return;
        }
    };
    out.push(
        "component.env",
        Severity::Ok,
        format!(
            "{name}: the component may set {} and reads {}",
            listed(&profile.component_env),
            listed(&description.location_env)
        ),
        json!({"profile": name, "sets": profile.component_env, "reads": description.location_env}),
    );
    if component.is_generic() {
        check_generic(out, profile, &description);
    }
    if !profile.hookless() && !description.dialects.contains(&profile.hooks.dialect) {
        out.push(
            "profile.dialect",
            Severity::Problem,
            format!(
                "{name}: the component does not know the dialect '{}' (it knows: {})",
                profile.hooks.dialect,
                description.dialects.join(", ")
            ),
            json!({"profile": name, "dialect": profile.hooks.dialect}),
        );
    }
    if profile.usage_parser != "none"
        && !description
            .usage_parsers
            .iter()
            .any(|p| p.name == profile.usage_parser)
    {
        out.push(
            "profile.usage-parser",
            Severity::Problem,
            format!(
                "{name}: the component has no usage parser '{}'",
                profile.usage_parser
            ),
            json!({"profile": name, "usage_parser": profile.usage_parser}),
        );
    }
    if crate::privileges::running_as_root()
        && let Some(warning) = crate::privileges::root_refusal(profile, &component.name)
    {
        out.push(
            "profile.root",
            Severity::Warning,
            warning,
            json!({"profile": name}),
        );
    }
    for n in &profile.self_matching_patterns {
        out.push(
            "profile.fault-patterns",
            Severity::Warning,
            format!("{name}: env_fault_patterns[{n}] matches its own line in {}; anchor it (e.g. '^API Error:') so a log that shows the profile cannot classify", profile.source),
            json!({"profile": name, "index": n}),
        );
    }
    match which::which(&profile.binary) {
        Ok(path) => out.push(
            "adapter.binary",
            Severity::Ok,
            format!("{name}: {} found at {}", profile.binary, path.display()),
            json!({"profile": name, "binary": profile.binary, "path": path}),
        ),
        Err(_) => out.push(
            "adapter.binary",
            if strict {
                Severity::Problem
            } else {
                Severity::Warning
            },
            format!("{name}: {} not found on PATH", profile.binary),
            json!({"profile": name, "binary": profile.binary}),
        ),
    }
    if profile.hookless() {
        let settle = profile.screen_settle.as_secs_f64();
        out.push(
            "hooks.none",
            Severity::Warning,
            format!(
                "{name}: hookless: a headless turn ends when the CLI exits; on a pane, when its screen reads idle and stays unchanged for {settle}s (screen_settle_s). That cannot tell apart a finished turn from one still waiting on the model with nothing printed and the idle prompt showing, nor a question the screen rules do not know from an idle prompt; and no hook carries the reply or the transcript"
            ),
            json!({"profile": name, "screen_settle_s": settle}),
        );
        return;
    }
    match hooks::status(&adapter, profile, project) {
        Ok(status) if status.missing.is_empty() => out.push(
            "hooks.registered",
            Severity::Ok,
            format!("{name}: relay registered in {} for {}", status.config_path, status.registered.join(", ")),
            json!({"profile": name, "config_path": status.config_path, "registered": status.registered}),
        ),
        Ok(status) => out.push(
            "hooks.registered",
            if strict { Severity::Problem } else { Severity::Warning },
            format!("{name}: relay not registered in {} for {}; run `drover hooks install --cli {name}`", status.config_path, status.missing.join(", ")),
            json!({"profile": name, "config_path": status.config_path, "registered": status.registered, "missing": status.missing}),
        ),
        Err(HookError::Config { path, message }) => out.push(
            "hooks.config-parse",
            Severity::Problem,
            format!("{name}: {}: {message}", path.display()),
            json!({"profile": name, "config_path": profile.hooks.config_path}),
        ),
        Err(e) => out.push("hooks.registered", Severity::Problem, format!("{name}: {e}"), json!({"profile": name})),
    }
}

/// `project.trust`: project profiles (and notifier settings) the user has
/// not trusted, which `drover run` refuses.
fn check_trust(out: &mut Findings, project: &Path, selected: &[&Profile]) {
    let trust = match crate::trust::Trust::load(project) {
        Ok(t) => t,
        Err(e) => {
            out.push(
                "project.trust",
                Severity::Warning,
                e.to_string(),
                Value::Null,
            );
            return;
        }
    };
    for profile in selected {
        if let Err(untrusted) = trust.require_profile(profile) {
            out.push(
                "project.trust",
                Severity::Warning,
                format!(
                    "{}: {} {}; `drover run` refuses it until you review `drover trust --show` and run `drover trust`",
                    profile.name,
                    untrusted.file,
                    if untrusted.changed { "changed since you trusted it" } else { "is not trusted" }
                ),
                json!({"profile": profile.name, "file": untrusted.file, "changed": untrusted.changed, "wants": untrusted.wants}),
            );
        }
    }
    if let Ok(Some(config)) = crate::trust::load_project_config(project) {
        let wants = crate::trust::config_wants(&config);
        if !wants.is_empty() && config.provenance() != drover_gate::Provenance::TrustedProject {
            out.push(
                "project.trust",
                Severity::Warning,
                "this project's .drover/config.toml chooses what runs or where drover connects and is not trusted, so drover ignores those settings; review `drover trust --show`".to_string(),
                json!({"file": ".drover/config.toml", "wants": wants}),
            );
        }
    }
}

/// `profile.generic`: what the generic adapter can and cannot do for a
/// profile no component knows.
fn check_generic(
    out: &mut Findings,
    profile: &Profile,
    description: &drover_types::wit::Description,
) {
    let name = &profile.name;
    out.push(
        "profile.generic",
        Severity::Ok,
        format!(
            "{name}: the generic adapter cannot tell apart: {}",
            description.limitations.join("; ")
        ),
        json!({"profile": name, "limitations": description.limitations}),
    );
    if profile.turn.argv.is_empty() {
        out.push(
            "profile.generic",
            Severity::Warning,
            format!("{name}: no [turn] argv, so it runs on tmux only (headless turns need the argv template, see docs/profiles.md)"),
            json!({"profile": name, "headless": false}),
        );
    }
}

/// `mux.selection`: which workspace runs use and why; `mux.backend`: whether
/// it (and tmux, when selected) is usable here.
fn check_mux(out: &mut Findings, project: &Path) {
    let config = match crate::trust::load_config(project) {
        Ok(config) => config,
        Err(e) => {
            out.push(
                "mux.selection",
                Severity::Problem,
                e.to_string(),
                Value::Null,
            );
            return;
        }
    };
    let selection = match crate::workspace::select(&config, None) {
        Ok(s) => s,
        Err(e) => {
            out.push(
                "mux.selection",
                Severity::Problem,
                e.to_string(),
                Value::Null,
            );
            return;
        }
    };
    out.push(
        "mux.selection",
        Severity::Ok,
        format!(
            "workspace {} ({})",
            selection.kind.as_str(),
            super::mux::reason_label(selection.reason)
        ),
        json!({"workspace": selection.kind.as_str(), "reason": selection.reason}),
    );
    let ray = crate::ray::cluster_in(&config, project);
    for backend in crate::workspace::backends(
        Some(&selection),
        &ray.row(),
        &crate::workspace::jules::row(&config),
    ) {
        let severity = match (backend.available, backend.selected) {
            (true, _) => Severity::Ok,
            (false, true) => Severity::Problem,
            (false, false) => Severity::Warning,
        };
        let message = match &backend.version {
            Some(v) if backend.available => format!("{} available ({v})", backend.name),
            _ => format!("{} not available", backend.name),
        };
        out.push("mux.backend", severity, message, json!({"backend": backend.name, "available": backend.available, "version": backend.version, "selected": backend.selected}));
    }
}

/// Environment variable names for a line of output: `A, B` or `nothing`.
fn listed(names: &[String]) -> String {
    if names.is_empty() {
        "nothing".to_string()
    } else {
        names.join(", ")
    }
}
