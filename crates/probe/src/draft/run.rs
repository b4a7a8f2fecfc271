//! The draft from a real binary: its `--version`, `--help` and the
//! non-interactive subcommand's help, run as scan mode runs them
//! (crate::binary: deadline, closed stdin, bounded capture), and on request
//! one probe turn with the drafted command through the one launch path
//! (live::turn_notes → `Prepared::launch_profile`).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::{Draft, Help, draft, wanted_subcommand};
use crate::binary::{self, Run};
use crate::live::{ProbeOptions, turn_notes};
use crate::report::Severity;
use crate::sanitize::{Identity, Leak, Repairs, Sanitizer};
use crate::scan::ScanOptions;
use drover_profile::{ComponentRef, Profile, ProfileSource};
use drover_workspace::WorkspaceKind;

/// `--probe` with `--draft-profile`: one headless turn.
pub struct TurnOptions {
    pub timeout: Duration,
    pub model: Option<String>,
    pub cancel: Arc<AtomicBool>,
}

pub struct DraftOptions {
    /// `cli` is the draft's name; `binary` the binary (else the name).
    pub scan: ScanOptions,
    pub turn: Option<TurnOptions>,
}

/// The draft's text, past the egress guard.
pub struct DraftOutcome {
    pub text: String,
    pub repairs: Repairs,
}

#[derive(Debug, thiserror::Error)]
pub enum DraftError {
    #[error("binary {0} not found on PATH (pass --binary PATH)")]
    NotFound(String),
    #[error("`{0} --help` printed nothing a draft could be made from")]
    NoHelp(String),
    #[error("the draft is not a valid profile: {0}")]
    Invalid(String),
    #[error(
        "refusing to emit the draft: the leak check fired ({}); nothing was printed or written",
        .0.rules.join(", ")
    )]
    Leak(Leak),
}

fn text_of(run: &Run) -> Option<&str> {
    run.text().filter(|t| !t.trim().is_empty())
}

pub fn draft_from_binary(
    opts: &DraftOptions,
    identity: &Identity,
) -> Result<DraftOutcome, DraftError> {
    let name = opts.scan.cli.clone().unwrap_or_default();
    let given = opts.scan.binary.clone().unwrap_or_else(|| name.clone());
    let path = binary::locate(&given).ok_or_else(|| DraftError::NotFound(given.clone()))?;
    let base = Path::new(&given)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| given.clone());
    let timeout = opts.scan.command_timeout;
    let main_run = binary::run(&path, &["--help"], timeout);
    let main_text = text_of(&main_run).ok_or_else(|| DraftError::NoHelp(base.clone()))?;
    let main = Help::parse(&format!("{base} --help"), main_text);
    let sub = wanted_subcommand(&main).and_then(|sub| {
        let run = binary::run(&path, &[sub.as_str(), "--help"], timeout);
        text_of(&run).map(|t| Help::parse(&format!("{base} {sub} --help"), t))
    });
    let mut draft = draft(&name, &base, &main, sub.as_ref());
    draft.binary_how = binary_how(&given, &base, &path);
    let mut s = Sanitizer::new(identity);
    // As scan does: the project's real path, so a relative `.` is not what
    // gets aliased.
    let project =
        std::fs::canonicalize(&opts.scan.project).unwrap_or_else(|_| opts.scan.project.clone());
    s.add_project(&project, &[name.as_str(), base.as_str()]);
    let version = binary::run(&path, &["--version"], timeout);
    draft.version = text_of(&version)
        .and_then(|t| t.lines().map(str::trim).find(|l| !l.is_empty()))
        .map(|l| s.text(l, 1).as_str().to_string());
    if let Some(turn) = &opts.turn {
        draft.probe = Some(probe(opts, turn, &draft, &path, &s)?);
    }
    let text = draft.render();
    // What is written must load: a name that is no identifier, say, stops here.
    Profile::parse(&text, &source_of(&draft)).map_err(|e| DraftError::Invalid(e.to_string()))?;
    let (text, repairs) = s.guard(text).map_err(DraftError::Leak)?;
    Ok(DraftOutcome { text, repairs })
}

/// A draft is the user's own: it comes from their binary at their request.
fn source_of(draft: &Draft) -> ProfileSource {
    ProfileSource::User(format!("{}.toml", draft.name).into())
}

fn binary_how(given: &str, base: &str, path: &Path) -> String {
    let on_path = binary::locate(base)
        .and_then(|p| std::fs::canonicalize(p).ok())
        .is_some_and(|p| std::fs::canonicalize(path).is_ok_and(|q| p == q));
    if given == base {
        format!("`{base}`, found on PATH")
    } else if on_path {
        "the file name of --binary, which PATH finds".to_string()
    } else {
        "the file name of --binary, which is NOT on PATH: put its directory on PATH or write the full path here".to_string()
    }
}

/// Runs one headless turn with the drafted command and says how it went.
fn probe(
    opts: &DraftOptions,
    turn: &TurnOptions,
    draft: &Draft,
    path: &Path,
    s: &Sanitizer,
) -> Result<String, DraftError> {
    if draft.argv.value.is_none() {
        return Ok("not run: no headless command was drafted".to_string());
    }
    let mut profile = Profile::parse(&draft.render(), &source_of(draft))
        .map_err(|e| DraftError::Invalid(e.to_string()))?;
    // The draft names no component, so the generic adapter drives it; the
    // turn says so explicitly, whatever a hookless profile defaults to.
    profile.component = ComponentRef::Builtin("generic".to_string());
    profile.binary = path.to_string_lossy().into_owned();
    let probe_opts = ProbeOptions {
        scan: opts.scan.clone(),
        workspace: WorkspaceKind::Headless,
        timeout: turn.timeout,
        model: turn.model.clone(),
        keep_temp: false,
        cancel: Arc::clone(&turn.cancel),
    };
    let notes = turn_notes(&probe_opts, profile, s);
    let sentences: Vec<String> = notes
        .iter()
        .filter(|(id, _, _)| *id != "probe.hookless")
        .map(|(_, severity, message)| {
            let mark = if *severity == Severity::Warning {
                "warning: "
            } else {
                ""
            };
            format!("{mark}{}", message.as_str())
        })
        .collect();
    Ok(sentences.join("; "))
}
