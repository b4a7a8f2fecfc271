//! `drover trust [--show | --revoke]`: what this project's own settings
//! would run outside the sandbox, and the user's consent to it (recorded as
//! hashes in the user's config directory; see `engine/src/trust.rs`).

use std::path::Path;

use anyhow::Context as _;
use serde::Serialize;

use super::Outcome;
use super::output::{Json, outln, print_json, terminal_line};
use crate::profile::{Profile, ProfileSource};
use crate::trust::{self, Trust};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Show what the project would run and what is trusted; record nothing.
    #[arg(long, conflicts_with = "revoke")]
    show: bool,
    /// Forget this project: its settings need trust again.
    #[arg(long)]
    revoke: bool,
    #[command(flatten)]
    json: Json,
}

#[derive(Serialize, Clone, Copy, PartialEq, Debug)]
#[serde(rename_all = "lowercase")]
enum State {
    Trusted,
    New,
    Changed,
}

#[derive(Serialize)]
struct FileReport {
    /// Relative to the project.
    path: String,
    sha256: String,
    state: State,
    /// What the file would run outside the sandbox, one item each.
    wants: Vec<String>,
    /// Why the file could not be read as a profile or settings file.
    error: Option<String>,
}

#[derive(Serialize)]
struct Report {
    project: String,
    /// `show`, `trust` or `revoke`.
    action: &'static str,
    /// Every file is trusted (after this command).
    trusted: bool,
    /// `DROVER_TRUST_ALL=1` is set.
    trust_all: bool,
    files: Vec<FileReport>,
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let project = project
        .canonicalize()
        .with_context(|| format!("project directory {}", project.display()))?;
    let files = trust::project_files(&project)?;
    let action = if args.revoke {
        trust::revoke(&project)?;
        "revoke"
    } else if args.show {
        "show"
    } else {
        trust::record(&project, &files)?;
        "trust"
    };
    let current = Trust::load(&project)?;
    let catalog = crate::profile::Catalog::load(&project);
    let mut reports = Vec::new();
    for (path, bytes) in &files {
        let relative = path
            .strip_prefix(&project)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned();
        let known = current
            .record()
            .is_some_and(|r| r.files.contains_key(&relative));
        let state = if current.trusts(path, bytes) {
            State::Trusted
        } else if known {
            State::Changed
        } else {
            State::New
        };
        let (wants, error) = if path.extension().is_some_and(|x| x == "wasm") {
            component_wants_of(&project, &catalog, path, bytes)
        } else {
            wants_of(path, bytes)
        };
        reports.push(FileReport {
            path: relative,
            sha256: trust::digest(bytes),
            state,
            wants,
            error,
        });
    }
    let report = Report {
        project: project.display().to_string(),
        action,
        trusted: reports.iter().all(|f| f.state == State::Trusted),
        trust_all: current.all(),
        files: reports,
    };
    if args.json.json {
        print_json(&report)?;
    } else {
        print_human(&report);
    }
    Ok(Outcome::Ok)
}

/// What a project file wants to run: a profile's binary, argv and env, or
/// the settings file's notifier commands and URLs.
fn wants_of(path: &Path, bytes: &[u8]) -> (Vec<String>, Option<String>) {
    let text = String::from_utf8_lossy(bytes);
    if path.file_name().is_some_and(|n| n == "config.toml") {
        // Listed whatever its trust: the provenance is not asked here.
        return match crate::config::ConfigFile::parse(
            path,
            crate::config::Scope::Project,
            text.into_owned(),
            |_, _| false,
        ) {
            Ok(file) => (trust::config_wants(&file), None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
    }
    match Profile::parse(&text, &ProfileSource::Project(path.to_path_buf())) {
        Ok(profile) => (trust::wants(&profile), None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    }
}

/// What a project component would contribute to a launch: whether it
/// shadows a built-in, what the profiles it drives let it set, and what it
/// reads (its description, asked in the sandbox: parsing needs no trust).
fn component_wants_of(
    project: &Path,
    catalog: &crate::profile::Catalog,
    path: &Path,
    bytes: &[u8],
) -> (Vec<String>, Option<String>) {
    let name = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let driven: Vec<&Profile> = catalog
        .profiles()
        .iter()
        .filter(|p| {
            crate::registry::locate(&p.component, project).is_ok_and(|(_, origin)| {
                origin == crate::registry::Origin::File(path.to_path_buf())
            })
        })
        .collect();
    let described = crate::sandbox::Sandbox::with_default_cache()
        .map_err(|e| e.to_string())
        .and_then(|sandbox| {
            sandbox
                .load(&name, bytes, &trust::digest(bytes), Default::default())
                .and_then(|(adapter, _)| adapter.describe())
                .map_err(|e| e.to_string())
        });
    let (reads, error) = match described {
        Ok(d) => (Some(d.location_env), None),
        Err(e) => (None, Some(e)),
    };
    let mut wants = trust::component_wants(&name, &driven, reads.as_deref());
    let names: Vec<&str> = driven.iter().map(|p| p.name.as_str()).collect();
    wants.push(format!(
        "drives: {}",
        if names.is_empty() {
            "no profile now".to_string()
        } else {
            names.join(", ")
        }
    ));
    (wants, error)
}

/// For read-only commands: a line saying which of the project's profiles
/// and components are not trusted (they read fine, but `drover run`
/// refuses to launch with them).
pub fn untrusted_note(project: &Path) -> Option<String> {
    let trust = Trust::load(project).ok()?;
    let catalog = crate::profile::Catalog::load(project);
    let profiles: Vec<&str> = catalog
        .profiles()
        .iter()
        .filter(|p| trust.require_profile(p).is_err())
        .map(|p| p.name.as_str())
        .collect();
    let components: Vec<String> = trust::project_files(project)
        .unwrap_or_default()
        .into_iter()
        .filter(|(path, bytes)| {
            path.extension().is_some_and(|x| x == "wasm") && !trust.trusts(path, bytes)
        })
        .map(|(path, _)| trust.relative(&path))
        .collect();
    let mut parts = Vec::new();
    if !profiles.is_empty() {
        parts.push(format!("profiles {}", profiles.join(", ")));
    }
    if !components.is_empty() {
        parts.push(format!("components {}", components.join(", ")));
    }
    (!parts.is_empty()).then(|| {
        format!(
            "note: this project's {} are not trusted: `drover run` refuses them until you review `drover trust --show` and run `drover trust`",
            parts.join(" and ")
        )
    })
}

fn print_human(report: &Report) {
    let state = match (report.files.is_empty(), report.trusted, report.trust_all) {
        (true, _, _) => {
            "nothing to trust (no .drover/profiles/*.toml, .drover/config.toml or .drover/adapters/*.wasm)"
        }
        (false, _, true) => "trusted by DROVER_TRUST_ALL=1",
        (false, true, false) => "trusted",
        (false, false, false) => "not trusted",
    };
    outln!("project {}: {state}", report.project);
    for file in &report.files {
        let label = match file.state {
            State::Trusted => "trusted",
            State::New => "new",
            State::Changed => "changed",
        };
        outln!("  {label:<8} {}", terminal_line(&file.path));
        for want in &file.wants {
            outln!("             {}", terminal_line(want));
        }
        if let Some(error) = &file.error {
            outln!("             (does not load: {})", terminal_line(error));
        }
    }
    match report.action {
        "show" if !report.trusted => {
            outln!("Run `drover trust` to let drover use these as shown.");
        }
        "trust" if !report.files.is_empty() => {
            outln!("Recorded. A change to any of these files needs `drover trust` again.")
        }
        "revoke" => outln!("Forgotten: this project's settings need `drover trust` again."),
        _ => {}
    }
}
