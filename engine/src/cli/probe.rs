//! `drover probe-adapter`: a sanitized report about a CLI and its adapter.
//! The report reaches stdout or `--out` only after the egress guard passed;
//! on refusal stdout stays empty, no file is written, and the exit is 1.

use super::output::{errln, out, stdout_json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;

use super::Outcome;
use super::output::Json;
use crate::probe::{self, Format, Identity, ScanOptions};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The CLI profile (name or alias); optional with --binary. With
    /// --draft-profile, the drafted profile's name.
    #[arg(required_unless_present = "binary", value_name = "CLI")]
    cli: Option<String>,
    /// The CLI's binary: overrides the profile's, or names a CLI without a
    /// profile (reduced report).
    #[arg(long, value_name = "NAME")]
    binary: Option<String>,
    /// Read this transcript instead of searching the adapter's conventions.
    #[arg(long, value_name = "PATH", conflicts_with = "session_dir")]
    transcript: Option<PathBuf>,
    /// Take the newest *.jsonl (else *.json) under this directory.
    #[arg(long, value_name = "DIR")]
    session_dir: Option<PathBuf>,
    /// A captured hook payload to reduce to its shape (repeatable).
    #[arg(long, value_name = "EVENT=FILE", value_parser = parse_payload)]
    payload: Vec<(String, PathBuf)>,
    /// Write the report to FILE (only if it passes the leak check).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    #[command(flatten)]
    json: Json,
    /// Seconds `--version` and `--help` may each take.
    #[arg(long, hide = true, default_value_t = probe::COMMAND_TIMEOUT.as_secs(), value_name = "SECS")]
    command_timeout: u64,
    /// Launch one trivial turn in a temporary workspace and capture every
    /// hook payload it fires.
    #[arg(long)]
    probe: bool,
    /// Probe mode: where the turn runs (default: the selected workspace).
    #[arg(long, value_parser = super::workspace_kind(), requires = "probe")]
    workspace: Option<crate::workspace::WorkspaceKind>,
    /// Probe mode: how long the turn may take, e.g. 90s.
    #[arg(long, value_parser = super::run::parse_duration, default_value = "90s")]
    timeout: Duration,
    /// Probe mode: the model to ask.
    #[arg(long, value_name = "MODEL", requires = "probe")]
    model: Option<String>,
    /// Draft a profile from the CLI's --help (and its exec/run subcommand's
    /// help) instead of a report; with --probe, one headless turn tries it.
    #[arg(long, conflicts_with_all = ["transcript", "session_dir", "payload", "workspace", "keep_temp"])]
    draft_profile: bool,
    /// Probe mode: keep the raw temp data (never share it).
    #[arg(long, hide = true)]
    keep_temp: bool,
}

fn parse_payload(text: &str) -> Result<(String, PathBuf), String> {
    match text.split_once('=') {
        Some((event, file)) if !event.is_empty() && !file.is_empty() => {
            Ok((event.to_string(), PathBuf::from(file)))
        }
        _ => Err("expected EVENT=FILE, e.g. Stop=payload.json".to_string()),
    }
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    if args.draft_profile {
        return draft(project, args);
    }
    // Scan mode runs the profile's binary bare (`--version`, `--help`): a
    // project profile's binary needs the user's trust, a `--binary` (the
    // user's own) does not. A probe turn launches through the one launch
    // path, `--binary` or not: the profile's arguments, environment and
    // component are the checkout's and need trust all the same.
    if let Some(cli) = &args.cli
        && let Some(profile) = crate::profile::Catalog::load(project).find(cli)
    {
        if args.probe {
            let sandbox = crate::sandbox::Sandbox::with_default_cache()?;
            crate::drive::Prepared::launch_profile(project, profile.clone(), &sandbox)?;
        } else if args.binary.is_none() {
            crate::trust::Trust::load(project)?.require_profile(profile)?;
        }
    }
    if args.keep_temp && !args.probe {
        errln!("warning: --keep-temp only matters with --probe (scan mode captures nothing)");
    }
    let opts = ScanOptions {
        project: project.to_path_buf(),
        cli: args.cli,
        binary: args.binary,
        transcript: args.transcript,
        session_dir: args.session_dir,
        payloads: args.payload,
        command_timeout: Duration::from_secs(args.command_timeout.max(1)),
    };
    let identity = Identity::from_env();
    let (report, sanitizer) = if args.probe {
        let workspace =
            crate::workspace::select(&crate::trust::load_config(project)?, args.workspace)?.kind;
        if workspace == crate::workspace::WorkspaceKind::Ray {
            anyhow::bail!(
                "probe-adapter --probe runs its turn on this machine (headless, tmux or herdr), not on a Ray cluster"
            );
        }
        let probe_opts = probe::live::ProbeOptions {
            scan: opts,
            workspace,
            timeout: args.timeout,
            model: args.model,
            keep_temp: args.keep_temp,
            cancel: super::interrupt_flag()?,
        };
        let cancel = std::sync::Arc::clone(&probe_opts.cancel);
        let (report, sanitizer, kept) = probe::live::probe(&probe_opts, &identity)?;
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            errln!("interrupted: the probe turn was stopped and its temporary workspace removed");
            return Ok(Outcome::Interrupted);
        }
        if let Some(dir) = kept {
            errln!(
                "WARNING: --keep-temp: RAW, UNSANITIZED probe data (hook payloads, logs) is kept at {} — DO NOT SHARE IT; delete it when done.",
                dir.display()
            );
        }
        (report, sanitizer)
    } else {
        probe::scan(&opts, &identity)?
    };
    let format = if args.json.json {
        Format::Json
    } else {
        Format::Markdown
    };
    let (text, repairs) = match probe::report::finish(&report, format, &sanitizer) {
        Ok(done) => done,
        Err(leak) => {
            errln!(
                "FAIL: refusing to emit the report: the leak check fired ({}).",
                leak.rules.join(", ")
            );
            errln!(
                "  Something personal got past the sanitizer; nothing was printed or written. \
                 Please report this (without the data) so the gap can be closed."
            );
            return Ok(Outcome::Failed);
        }
    };
    if !repairs.is_empty() {
        let total: u64 = repairs.values().sum();
        let labels: Vec<String> = repairs.iter().map(|(l, n)| format!("{l} ×{n}")).collect();
        errln!(
            "warning: the leak check replaced {total} stray occurrence(s) ({}); the report says so",
            labels.join(", ")
        );
    }
    let kind = if args.json.json { "document" } else { "report" };
    match &args.out {
        Some(path) => {
            write_atomic(path, text.as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
            errln!(
                "  ok: {kind} written to {} ({} warning(s))",
                path.display(),
                report.warnings()
            );
        }
        None => {
            if args.json.json {
                stdout_json(&text);
            } else {
                out!("{text}");
            }
            let mode = if args.probe { "probe" } else { "scan" };
            errln!("  ok: {mode} {kind} ({} warning(s))", report.warnings());
        }
    }
    Ok(Outcome::Ok)
}

/// `--draft-profile`: no profile of the project is read or launched, so no
/// trust is asked; the probe turn's launch checks what any launch checks.
fn draft(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let binary = args.binary.clone();
    let name = args
        .cli
        .clone()
        .or_else(|| {
            binary.as_ref().and_then(|b| {
                Path::new(b)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            })
        })
        .unwrap_or_default();
    let turn = if args.probe {
        Some(probe::draft::TurnOptions {
            timeout: args.timeout,
            model: args.model.clone(),
            cancel: super::interrupt_flag()?,
        })
    } else {
        None
    };
    let cancel = turn.as_ref().map(|t| std::sync::Arc::clone(&t.cancel));
    let opts = probe::draft::DraftOptions {
        scan: ScanOptions {
            project: project.to_path_buf(),
            cli: Some(name),
            binary,
            transcript: None,
            session_dir: None,
            payloads: Vec::new(),
            command_timeout: Duration::from_secs(args.command_timeout.max(1)),
        },
        turn,
    };
    let done = match probe::draft::draft_from_binary(&opts, &Identity::from_env()) {
        Ok(done) => done,
        Err(e @ probe::draft::DraftError::Leak(_)) => {
            errln!("FAIL: {e}");
            return Ok(Outcome::Failed);
        }
        Err(e) => return Err(e.into()),
    };
    if cancel.is_some_and(|c| c.load(std::sync::atomic::Ordering::Relaxed)) {
        errln!("interrupted: the probe turn was stopped and its temporary workspace removed");
        return Ok(Outcome::Interrupted);
    }
    if !done.repairs.is_empty() {
        let total: u64 = done.repairs.values().sum();
        errln!("warning: the leak check replaced {total} stray occurrence(s) in the draft");
    }
    match &args.out {
        Some(path) => {
            write_atomic(path, done.text.as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
            errln!(
                "  ok: draft profile written to {}; review its comments, then `drover validate`",
                path.display()
            );
        }
        None => {
            out!("{}", done.text);
            errln!("  ok: draft profile; review its comments, then `drover validate`");
        }
    }
    Ok(Outcome::Ok)
}

/// Writes through a sibling temp file and a rename, so a failed write never
/// leaves a partial report behind.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
