//! `drover adapter check COMPONENT`: calls every export once with ordinary
//! inputs and reports, per export, whether it answered, declined
//! (`unsupported`), refused the input, or failed (trap, time or memory
//! limit) — and how long it took. A capability `describe` claims but whose
//! functions answer `unsupported` is flagged. For people writing adapters.

use super::output::{out, outln};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::Outcome;
use super::output::{Json, print_json, table};
use crate::profile::{Catalog, ComponentRef};
use crate::registry;
use crate::sandbox::{CompileCache, Limits, Sandbox, SandboxError, wit};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A component file, or the name of a built-in component.
    component: String,
    /// Use this profile's fields as the calls' profile (default: a minimal one).
    #[arg(long = "cli", value_name = "NAME")]
    cli: Option<String>,
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
    checks: Vec<Check>,
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
        detail: crate::run::truncate_chars(&detail, 160),
        micros,
    });
}

fn minimal_profile() -> wit::Profile {
    wit::Profile {
        name: "check".into(),
        binary: "cli".into(),
        prompt_template: "{prompt}".into(),
        launch_args: vec![],
        bypass_args: vec![],
        model_flag: "--model".into(),
        dialect: "none".into(),
        hook_events: vec![],
        usage_parser: "none".into(),
        env_fault_patterns: vec![],
        turn_args: vec![],
        settings: vec![],
        turn_argv: vec![],
        turn_resume: vec![],
        turn_session_id: vec![],
        turn_output: String::new(),
    }
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let reference = if args.component.ends_with(".wasm") || Path::new(&args.component).is_file() {
        ComponentRef::File(PathBuf::from(&args.component))
    } else {
        ComponentRef::Builtin(args.component.clone())
    };
    let sandbox = Sandbox::new(CompileCache::default_location())?;
    let limits = Limits {
        call_timeout: Duration::from_secs(10),
        memory_bytes: 256 << 20,
        ..Limits::default()
    };
    let (adapter, _, _) = registry::load_with(&sandbox, &reference, project, limits)?;
    let profile = match &args.cli {
        Some(name) => Catalog::load(project).get(name)?.to_wit(),
        None => minimal_profile(),
    };
    let description = adapter.describe()?;
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
    let failed = checks.iter().any(|c| c.result == "failed");
    let report = Report {
        component: adapter.name().to_string(),
        checks,
        warnings,
    };
    if args.json.json {
        print_json(&report)?;
    } else {
        let rows: Vec<Vec<String>> = report
            .checks
            .iter()
            .map(|c| {
                vec![
                    c.export.to_string(),
                    c.result.to_string(),
                    format!("{} µs", c.micros),
                    c.detail.clone(),
                ]
            })
            .collect();
        out!("{}", table(&["EXPORT", "RESULT", "TIME", "DETAIL"], &rows));
        for w in &report.warnings {
            outln!("warning: {w}");
        }
    }
    Ok(if failed { Outcome::Failed } else { Outcome::Ok })
}
