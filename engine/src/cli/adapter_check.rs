//! `drover adapter check COMPONENT`: calls every export once with ordinary
//! inputs and reports, per export, whether it answered, declined
//! (`unsupported`), refused the input, or failed (trap, time or memory
//! limit) — and how long it took. Then the conformance suite
//! (`crate::conformance`) runs the checks of every capability `describe`
//! claims, comparing answers with the built-in adapter of the same family
//! where there is one. Exits 1 when an export fails or a claimed capability
//! fails a check. For people writing adapters.

use super::output::{out, outln};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::Outcome;
use super::output::{Json, print_json, table};
use crate::conformance::{self, Finding, Reference, Subject};
use crate::profile::{Catalog, ComponentRef};
use crate::registry;
use crate::sandbox::{Adapter, Limits, Sandbox, SandboxError};
use drover_types::wit;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A component file, or the name of a built-in component.
    component: String,
    /// Use this profile's fields as the calls' profile (default: the
    /// family's built-in profile, else a minimal one).
    #[arg(long = "cli", value_name = "NAME")]
    cli: Option<String>,
    /// Compare with this built-in adapter (default: the built-in of the same
    /// name, else one sharing a hook dialect or usage parser; `none` to
    /// compare with none).
    #[arg(long, value_name = "BUILTIN", value_parser = clap::builder::PossibleValuesParser::new(family_choices()))]
    family: Option<String>,
    #[command(flatten)]
    json: Json,
}

#[derive(Serialize)]
struct Check {
    export: &'static str,
    /// answered | unsupported | refused | failed
    result: &'static str,
    detail: String,
    micros: u128,
}

#[derive(Serialize)]
struct Report {
    component: String,
    wit_version: String,
    /// The built-in adapter answers were compared with.
    family: Option<&'static str>,
    /// One call per export.
    checks: Vec<Check>,
    /// One finding per conformance check of a claimed capability.
    findings: Vec<Finding>,
    /// Claimed capabilities with a failed check.
    failed_capabilities: Vec<wit::Capability>,
    warnings: Vec<String>,
}

fn record<T>(
    checks: &mut Vec<Check>,
    export: &'static str,
    started: Instant,
    outcome: Result<Result<T, wit::AdapterError>, SandboxError>,
    show: impl Fn(&T) -> String,
) {
    let micros = started.elapsed().as_micros();
    let (result, detail) = match outcome {
        Ok(Ok(value)) => ("answered", show(&value)),
        Ok(Err(wit::AdapterError::Unsupported(m))) => ("unsupported", m),
        Ok(Err(wit::AdapterError::InvalidInput(m))) => ("refused", m),
        Err(e) => ("failed", e.to_string()),
    };
    checks.push(Check {
        export,
        result,
        detail: drover_types::text::truncate_chars(&detail, 160),
        micros,
    });
}

/// What `--family` accepts: a built-in adapter's name, or `none`.
fn family_choices() -> Vec<&'static str> {
    crate::builtin::all()
        .iter()
        .map(|b| b.name)
        .chain(["none"])
        .collect()
}

/// A profile that names the component's own first dialect and parser.
fn minimal_profile(description: &wit::Description) -> wit::Profile {
    wit::Profile {
        name: "check".into(),
        binary: "cli".into(),
        prompt_template: "{prompt}".into(),
        launch_args: vec![],
        bypass_args: vec![],
        model_flag: "--model".into(),
        dialect: description
            .dialects
            .first()
            .cloned()
            .unwrap_or_else(|| "none".into()),
        hook_events: vec![],
        usage_parser: description
            .usage_parsers
            .first()
            .map_or_else(|| "none".into(), |p| p.name.clone()),
        env_fault_patterns: vec![],
        turn_args: vec![],
        settings: vec![],
        turn_argv: vec![],
        turn_resume: vec![],
        turn_session_id: vec![],
        turn_output: String::new(),
    }
}

/// The built-in the component is compared with, loaded.
fn reference(
    sandbox: &Sandbox,
    description: &wit::Description,
    requested: Option<&str>,
    limits: Limits,
) -> anyhow::Result<Option<(&'static str, Adapter)>> {
    let load = |builtin: &'static crate::builtin::Builtin| {
        sandbox.load_builtin(builtin, limits).map(|(a, _)| a)
    };
    let family = match requested {
        Some("none") => return Ok(None),
        Some(name) => Some(crate::builtin::find(name).map(|b| b.name).ok_or_else(|| {
            let names: Vec<&str> = crate::builtin::all().iter().map(|b| b.name).collect();
            anyhow::anyhow!(
                "--family {name}: no such built-in adapter (built-ins: {}, or none)",
                names.join(", ")
            )
        })?),
        None if crate::builtin::find(&description.name).is_some() => {
            crate::builtin::find(&description.name).map(|b| b.name)
        }
        None => {
            let mut builtins = Vec::new();
            for builtin in crate::builtin::all() {
                builtins.push((builtin.name, load(builtin)?.describe()?));
            }
            conformance::family_of(description, &builtins)
        }
    };
    let Some(family) = family.and_then(crate::builtin::find) else {
        return Ok(None);
    };
    Ok(Some((family.name, load(family)?)))
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let component = if args.component.ends_with(".wasm") || Path::new(&args.component).is_file() {
        ComponentRef::File(PathBuf::from(&args.component))
    } else {
        ComponentRef::Builtin(args.component.clone())
    };
    let sandbox = Sandbox::with_default_cache()?;
    let limits = Limits {
        call_timeout: Duration::from_secs(10),
        memory_bytes: 256 << 20,
        ..Limits::default()
    };
    let adapter = registry::load_with(&sandbox, &component, project, limits)?.0;
    let description = adapter.describe()?;
    let catalog = Catalog::load(project);
    let chosen = match &args.cli {
        Some(name) => Some(catalog.get(name)?.to_wit()),
        None => None,
    };
    let profile = chosen
        .clone()
        .unwrap_or_else(|| minimal_profile(&description));
    let mut checks = Vec::new();
    let launch = wit::LaunchRequest {
        prompt: "/review src/main.rs".into(),
        model: String::new(),
        extra_args: None,
        conversation: wit::Conversation::Fresh,
    };

    let t = Instant::now();
    record(
        &mut checks,
        "render-prompt",
        t,
        adapter.render_prompt(&profile, "/review src/main.rs"),
        |s| s.clone(),
    );
    let t = Instant::now();
    record(
        &mut checks,
        "interactive-command",
        t,
        adapter.interactive_command(&profile, &launch),
        |c| c.argv.join(" "),
    );
    let t = Instant::now();
    record(
        &mut checks,
        "headless-command",
        t,
        adapter.headless_command(&profile, &launch),
        |c| c.argv.join(" "),
    );
    let t = Instant::now();
    let output = wit::TurnOutput {
        stdout: "{}".into(),
        stderr: String::new(),
        exit_code: Some(0),
        prior_usage: None,
    };
    record(
        &mut checks,
        "parse-turn",
        t,
        adapter.parse_turn(&profile, &output),
        |r| r.outcome.to_string(),
    );
    let dialect = description
        .dialects
        .first()
        .cloned()
        .unwrap_or_else(|| profile.dialect.clone());
    let events = if profile.hook_events.is_empty() {
        vec![("Stop".to_string(), "Stop".to_string())]
    } else {
        profile.hook_events.clone()
    };
    let install = wit::HookInstall {
        dialect,
        relay_command: "/usr/bin/drover hook --cli check".into(),
        events: events.clone(),
        marker: "drover hook".into(),
    };
    let t = Instant::now();
    let installed = adapter.install_hooks("", &install);
    let text = installed
        .as_ref()
        .ok()
        .and_then(|r| r.as_ref().ok())
        .map(|e| e.text.clone())
        .unwrap_or_default();
    record(&mut checks, "install-hooks", t, installed, |e| {
        format!("{} bytes, changed {}", e.text.len(), e.changed)
    });
    let t = Instant::now();
    record(
        &mut checks,
        "detect-hooks",
        t,
        adapter.detect_hooks(&text, &install),
        |s| format!("registered {}", s.registered.join(", ")),
    );
    let t = Instant::now();
    record(
        &mut checks,
        "remove-hooks",
        t,
        adapter.remove_hooks(&text, &install),
        |e| format!("{} bytes left", e.text.len()),
    );
    let t = Instant::now();
    let native = events.first().map(|(n, _)| n.clone()).unwrap_or_default();
    record(
        &mut checks,
        "parse-hook",
        t,
        adapter.parse_hook(
            &profile,
            &native,
            br#"{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/w"}"#,
        ),
        |e| format!("{} session {:?}", e.kind, e.session_id),
    );
    let t = Instant::now();
    let context = wit::LocationContext {
        home: "/home/u".into(),
        cwd: "/w".into(),
        env: vec![],
    };
    record(
        &mut checks,
        "transcript-locations",
        t,
        adapter.transcript_locations(&profile, &context).map(Ok),
        |g| format!("{} globs", g.len()),
    );
    let t = Instant::now();
    record(
        &mut checks,
        "classify-fault",
        t,
        adapter
            .classify_fault(&profile, &["Error: connection refused".to_string()])
            .map(Ok),
        |f| format!("{:?}", f.as_ref().map(|f| f.kind.as_str())),
    );
    let t = Instant::now();
    let screen = wit::Screen {
        rows: vec!["> ".into()],
        title: String::new(),
    };
    record(
        &mut checks,
        "read-screen",
        t,
        adapter.read_screen(&profile, &screen).map(Ok),
        |r| format!("{} ({})", r.state, r.rule),
    );
    for parser in &description.usage_parsers {
        let t = Instant::now();
        let tallied = adapter.tally(&parser.name, limits).and_then(|mut tally| {
            tally.begin_file("check.jsonl")?;
            let fed = tally.feed(b"{}\n")?;
            tally.finish().map(|r| fed.map(|()| r))
        });
        record(&mut checks, "tally", t, tallied, |r| {
            format!(
                "{}: {}",
                parser.name,
                if r.is_some() { "usage" } else { "none" }
            )
        });
    }

    let mut warnings = Vec::new();
    let claims = |c: wit::Capability| description.capabilities.contains(&c);
    for (capability, exports) in [
        (wit::Capability::Prompt, &["render-prompt"][..]),
        (wit::Capability::Commands, &["interactive-command"]),
        (
            wit::Capability::Headless,
            &["headless-command", "parse-turn"],
        ),
        (
            wit::Capability::HookConfig,
            &["install-hooks", "detect-hooks", "remove-hooks"],
        ),
        (wit::Capability::HookPayloads, &["parse-hook"]),
    ] {
        for export in exports {
            if let Some(check) = checks.iter().find(|c| c.export == *export)
                && claims(capability)
                && check.result == "unsupported"
            {
                warnings.push(format!(
                    "describe claims {capability} but {export} answers unsupported"
                ));
            }
        }
    }
    let family = reference(&sandbox, &description, args.family.as_deref(), limits)?;
    let reference = family.as_ref().map(|(name, builtin)| Reference {
        family: name,
        adapter: builtin,
        profile: match &chosen {
            Some(profile) => profile.clone(),
            None => catalog
                .find(name)
                .map(|p| p.to_wit())
                .unwrap_or_else(|| profile.clone()),
        },
    });
    let subject = Subject {
        adapter: &adapter,
        description: &description,
        profile,
        limits,
    };
    let findings = conformance::run(&subject, reference.as_ref());
    let mut failed_capabilities: Vec<wit::Capability> = Vec::new();
    for finding in findings.iter().filter(|f| f.failed()) {
        if !failed_capabilities.contains(&finding.capability) {
            failed_capabilities.push(finding.capability);
        }
    }
    let failed = checks.iter().any(|c| c.result == "failed") || !failed_capabilities.is_empty();
    let report = Report {
        component: adapter.name().to_string(),
        wit_version: description.wit_version.clone(),
        family: family.as_ref().map(|(name, _)| *name),
        checks,
        findings,
        failed_capabilities,
        warnings,
    };
    if args.json.json {
        print_json(&report)?;
    } else {
        print_text(&report);
    }
    Ok(if failed { Outcome::Failed } else { Outcome::Ok })
}

/// Control characters from a component never reach the terminal.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '\u{fffd}' } else { c })
        .collect()
}

fn print_text(report: &Report) {
    let rows: Vec<Vec<String>> = report
        .checks
        .iter()
        .map(|c| {
            vec![
                c.export.to_string(),
                c.result.to_string(),
                format!("{} µs", c.micros),
                printable(&c.detail),
            ]
        })
        .collect();
    out!("{}", table(&["EXPORT", "RESULT", "TIME", "DETAIL"], &rows));
    for w in &report.warnings {
        outln!("warning: {}", printable(w));
    }
    outln!();
    match report.family {
        Some(family) => outln!("conformance, compared with the built-in {family}:"),
        None => outln!("conformance (no built-in family to compare with):"),
    }
    let rows: Vec<Vec<String>> = report
        .findings
        .iter()
        .map(|f| {
            vec![
                f.capability.to_string(),
                f.check.to_string(),
                f.result.as_str().to_string(),
                printable(&f.detail),
            ]
        })
        .collect();
    out!(
        "{}",
        table(&["CAPABILITY", "CHECK", "RESULT", "DETAIL"], &rows)
    );
    let failed: Vec<&str> = report
        .failed_capabilities
        .iter()
        .map(|c| c.as_str())
        .collect();
    if failed.is_empty() {
        outln!("every claimed capability passed its checks");
    } else {
        outln!("failed: {}", failed.join(", "));
    }
}
