//! Probe mode: launch one trivial turn ("Reply with exactly: OK") in a
//! temporary workspace, capture every hook payload, and feed what it learned
//! — the payloads and the transcript the Stop payload names — through the
//! same scan, so the report shows what the adapter made of real data.
//!
//! The temporary workspace (a scratch project with its own `.drover/`,
//! hook config and tmux socket) is removed on every exit path: success,
//! failure, and SIGINT/SIGTERM (the session loop checks the interrupt flag
//! and tears the seat down first). `--keep-temp` keeps it, with a loud
//! warning, because it holds raw, unsanitized payloads.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::report::{Finding, Mode, Report, Severity};
use super::sanitize::{Clean, Identity, Sanitizer, clean};
use super::scan::{ScanError, ScanOptions, scan};
use drover_drive::drops::ENV_PROBE_CAPTURE;
use drover_drive::{Context, Prepared, TurnReport, TurnSpec, Verdict, headless, interactive};
use drover_profile::{Catalog, Profile};
use drover_run::{EventWatcher, RunDir, RunInfo, new_run_id, now_ns};
use drover_sandbox::Sandbox;
use drover_workspace::{WorkspaceKind, process};

pub const PROMPT: &str = "Reply with exactly: OK";
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(90);

pub struct ProbeOptions {
    pub scan: ScanOptions,
    pub workspace: WorkspaceKind,
    pub timeout: Duration,
    pub model: Option<String>,
    pub keep_temp: bool,
    pub cancel: Arc<AtomicBool>,
}

/// What the live turn left behind, raw (never reported as is).
struct Live {
    payloads: Vec<(String, PathBuf)>,
    transcript: Option<PathBuf>,
    notes: Vec<(&'static str, Severity, String)>,
    log_tail: Option<String>,
}

pub fn probe(
    opts: &ProbeOptions,
    identity: &Identity,
) -> Result<(Report, Sanitizer, Option<PathBuf>), ScanError> {
    let catalog = Catalog::load(&opts.scan.project);
    let name = opts.scan.cli.clone().ok_or(ScanError::NothingToScan)?;
    let profile = catalog
        .find(&name)
        .cloned()
        .ok_or_else(|| ScanError::UnknownProfile {
            name: name.clone(),
            known: catalog
                .profiles()
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    let binary = opts
        .scan
        .binary
        .clone()
        .unwrap_or_else(|| profile.binary.clone());
    let workspace_ok = opts.workspace == WorkspaceKind::Headless
        || drover_workspace::tmux::Tmux::version().is_some();
    if which::which(&binary).is_err() || !workspace_ok {
        let missing = if workspace_ok {
            "the CLI's binary"
        } else {
            "tmux"
        };
        let (mut report, s) = scan(&opts.scan, identity)?;
        report.mode = Mode::Probe;
        push(
            &mut report,
            "probe.skipped",
            Severity::Warning,
            clean!(
                "{} is not available here — cannot probe; this is the scan report",
                Clean::lit(missing)
            ),
        );
        return Ok((report, s, None));
    }
    let temp = tempfile::Builder::new()
        .prefix("drover-probe-")
        .tempdir()
        .map_err(|_| ScanError::NothingToScan)?;
    let mut turn_profile = profile.clone();
    turn_profile.binary = binary.clone();
    let live = run_turn(opts, turn_profile, temp.path());
    let mut scan_opts = opts.scan.clone();
    scan_opts.payloads.extend(live.payloads.iter().cloned());
    if scan_opts.transcript.is_none() && scan_opts.session_dir.is_none() {
        scan_opts.transcript = live.transcript.clone();
    }
    let result = scan(&scan_opts, identity);
    let kept = if opts.keep_temp {
        Some(temp.keep())
    } else {
        None
    };
    let (mut report, s) = result?;
    report.mode = Mode::Probe;
    for (id, severity, message) in &live.notes {
        let message = s.text(message, 3);
        push(&mut report, id, *severity, message);
    }
    if let Some(tail) = &live.log_tail {
        let tail = s.text(tail, 20);
        push(
            &mut report,
            "probe.log-tail",
            Severity::Info,
            clean!("the session's last output, sanitized:\n{}", tail),
        );
    }
    if live.payloads.is_empty() {
        report.next_steps.push(Clean::lit(
            "no hook fired: check that the CLI accepts the hook config (`drover hooks install` then run the CLI once by hand), and that no first-run dialog (login, trust) is waiting",
        ));
    }
    Ok((report, s, kept))
}

fn push(report: &mut Report, id: &'static str, severity: Severity, message: Clean) {
    report.findings.push(Finding {
        id: Clean::lit(id),
        severity,
        message,
    });
}

/// Runs one turn of `profile` (its binary already the one to probe) in a
/// temporary directory and returns what it left behind, sanitized into
/// notes: `(id, severity, message)`. `--draft-profile --probe` runs its
/// drafted profile through here, so a draft's turn takes the same launch
/// path as any probe's.
pub fn turn_notes(
    opts: &ProbeOptions,
    profile: Profile,
    s: &Sanitizer,
) -> Vec<(&'static str, Severity, Clean)> {
    let Ok(temp) = tempfile::Builder::new().prefix("drover-probe-").tempdir() else {
        return vec![(
            "probe.workspace",
            Severity::Warning,
            Clean::lit("cannot create the temporary workspace"),
        )];
    };
    let live = run_turn(opts, profile, temp.path());
    let mut notes: Vec<_> = live
        .notes
        .iter()
        .map(|(id, severity, message)| (*id, *severity, s.text(message, 3)))
        .collect();
    if let Some(tail) = live.log_tail.filter(|t| !t.trim().is_empty()) {
        notes.push((
            "probe.log-tail",
            Severity::Info,
            clean!("its last output: {}", s.text(&tail, 5)),
        ));
    }
    notes
}

/// Runs the turn in `root/project` and collects what it produced. Every
/// failure becomes a note; nothing here returns an error.
fn run_turn(opts: &ProbeOptions, profile: Profile, root: &Path) -> Live {
    let cli = profile.name.clone();
    let mut live = Live {
        payloads: Vec::new(),
        transcript: None,
        notes: Vec::new(),
        log_tail: None,
    };
    let project = root.join("project");
    let captures = root.join("captures");
    for dir in [&project, &captures] {
        if let Err(e) = std::fs::create_dir_all(dir) {
            live.notes.push((
                "probe.workspace",
                Severity::Warning,
                format!("cannot create the temporary workspace: {e}"),
            ));
            return live;
        }
    }
    // The relay inside the scratch project must see the same profile and
    // component as the real project does.
    for sub in ["profiles", "adapters"] {
        copy_dir(
            &opts.scan.project.join(".drover").join(sub),
            &project.join(".drover").join(sub),
        );
    }
    let sandbox = match Sandbox::with_default_cache() {
        Ok(s) => s,
        Err(e) => {
            live.notes
                .push(("probe.sandbox", Severity::Warning, e.to_string()));
            return live;
        }
    };
    // Trust is the real project's (the scratch copy has the same bytes): a
    // `--binary` is the user's own, but the profile's arguments and
    // environment and its component are the checkout's.
    let prepared = match Prepared::launch_profile(&opts.scan.project, profile.clone(), &sandbox) {
        Ok(prepared) => prepared,
        Err(e) => {
            live.notes.push((
                "probe.component",
                Severity::Warning,
                format!("the profile and component cannot launch: {e}"),
            ));
            return live;
        }
    };
    let adapter = prepared.adapter();
    if profile.hookless() {
        live.notes.push((
            "probe.hookless",
            Severity::Info,
            format!("{cli} has no hook dialect: only the turn's output and transcript are probed"),
        ));
    } else {
        match drover_hooks::install(adapter, &profile, &project) {
            Ok(_) => live.notes.push(("probe.hooks-installed", Severity::Info, format!("registered a capture hook for {} native events via {}", profile.hooks.events.len(), profile.hooks.dialect))),
            Err(e) => live.notes.push(("probe.dialect", Severity::Warning, format!("the adapter could not write the hook config, so the dialect is not usable here: {e}"))),
        }
    }
    let run_id = new_run_id();
    let run = match RunDir::create(&project, &run_id) {
        Ok(r) => r,
        Err(e) => {
            live.notes.push((
                "probe.workspace",
                Severity::Warning,
                format!("cannot create the run directory: {e}"),
            ));
            return live;
        }
    };
    let _ = run.write_info(&RunInfo {
        run_id: run_id.clone(),
        created_ns: now_ns(),
        cli: profile.name.clone(),
        workspace: opts.workspace,
        project: project.clone(),
        tasks: vec!["probe".to_string()],
        driver_pid: std::process::id(),
        driver_start: process::identity(std::process::id()).map(|i| i.start),
    });
    let mut spec = TurnSpec::new("probe", PROMPT, project.clone());
    spec.timeout = opts.timeout;
    spec.model = opts.model.clone().unwrap_or_default();
    spec.env = vec![(ENV_PROBE_CAPTURE.to_string(), "1".to_string())];
    spec.stop_nudges = 0;
    spec.teardown_grace = Duration::from_secs(5);
    spec.cancel = Some(Arc::clone(&opts.cancel));
    let ctx = Context::new(project.clone(), run.clone(), prepared);
    let result = match opts.workspace {
        kind if kind.has_panes() => interactive::run(&ctx, &spec, kind),
        WorkspaceKind::Acp => {
            drover_drive::acp::run(&ctx, &spec, &drover_trust::policy::Policy::default())
        }
        // The command refuses ray before a probe starts.
        _ => headless::run(&ctx, &spec),
    };
    if opts.workspace == WorkspaceKind::Tmux {
        // The scratch project's private tmux server goes with it.
        if let Ok(tmux) = drover_workspace::tmux::Tmux::for_project(&project) {
            tmux.kill_server();
        }
    }
    describe_result(&mut live, &result);
    let mut watcher = EventWatcher::new(
        run.events_dir(),
        drover_drive::drops::DropParser::for_run(run.root()),
    );
    for (n, record) in watcher.poll().into_iter().enumerate() {
        if let Some(path) = record.transcript_path.as_ref().filter(|p| !p.is_empty()) {
            // Ground truth from the CLI beats the adapter's conventions.
            live.transcript = Some(PathBuf::from(path));
        }
        let Some(raw) = &record.payload else { continue };
        let file = captures.join(format!(
            "{n:03}-{}.json",
            drover_run::safe_segment(&record.native)
        ));
        if std::fs::write(&file, raw).is_ok() {
            live.payloads.push((record.native.clone(), file));
        }
    }
    live.transcript = live.transcript.filter(|t| t.is_file()).or_else(|| {
        result
            .transcript_path
            .as_ref()
            .map(PathBuf::from)
            .filter(|t| t.is_file())
    });
    if live.payloads.is_empty() {
        let logs: Vec<String> = result
            .logs
            .iter()
            .flat_map(|l| drover_drive::tail_lines(l))
            .collect();
        let start = logs.len().saturating_sub(20);
        live.log_tail = Some(logs[start..].join("\n"));
    }
    live
}

fn describe_result(live: &mut Live, result: &TurnReport) {
    let severity = if result.status == Verdict::Completed {
        Severity::Info
    } else {
        Severity::Warning
    };
    live.notes.push((
        "probe.turn",
        severity,
        format!(
            "the probe turn ended {}: {}",
            result.status.as_str(),
            result.reason
        ),
    ));
    if let Some(kind) = result.blocked {
        live.notes.push(("probe.blocked", Severity::Warning, format!("the CLI stopped at a {kind} prompt; answer it once by hand (first-run login or trust), then probe again")));
    }
    if let Some(fault) = &result.fault {
        live.notes.push((
            "probe.fault",
            Severity::Warning,
            format!(
                "environment fault {} ({}): {}",
                fault.kind, fault.rule, fault.evidence
            ),
        ));
    }
}

fn copy_dir(from: &Path, to: &Path) {
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    let _ = std::fs::create_dir_all(to);
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_file() {
            let _ = std::fs::copy(&path, to.join(entry.file_name()));
        }
    }
}
