//! Scan mode: what can be learned about a CLI and its adapter without
//! running a turn. Every value on its way into the [`Report`] passes through
//! the [`Sanitizer`]; every call into the component is recorded with its
//! outcome, and a component that traps, spins or answers garbage becomes a
//! finding, never an error of the command.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::report::{Binary, Call, Finding, Mode, Report, SCHEMA_VERSION, Severity};
use super::sanitize::{Clean, Identity, Sanitizer, clean};
use drover_profile::{Catalog, Profile};
use drover_sandbox::Adapter;
use drover_types::wit;

mod adapter;
mod binary;
mod captures;
mod hooks;
mod transcripts;

/// Deadline for `--version` and `--help` each.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// What to scan.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    pub project: PathBuf,
    /// A profile name or alias.
    pub cli: Option<String>,
    /// Overrides the profile's binary; alone, gives a reduced report.
    pub binary: Option<String>,
    pub transcript: Option<PathBuf>,
    pub session_dir: Option<PathBuf>,
    /// Captured hook payloads: (native event, file).
    pub payloads: Vec<(String, PathBuf)>,
    pub command_timeout: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error(
        "unknown CLI profile '{name}' (known: {known}); pass --binary NAME for a reduced report"
    )]
    UnknownProfile { name: String, known: String },
    #[error("name a CLI profile, or pass --binary NAME")]
    NothingToScan,
}

/// What the component was given in a call, which decides whether its own
/// words (panic and error messages) may be shown: a third-party component
/// could echo what it was fed into them.
#[derive(Clone, Copy)]
enum Fed {
    Nothing,
    HostPaths,
    HookConfig,
    HookPayload,
    Transcript,
}

impl Fed {
    fn what(self) -> &'static str {
        match self {
            Fed::Nothing => "nothing",
            Fed::HostPaths => "host paths",
            Fed::HookConfig => "the hook config",
            Fed::HookPayload => "a hook payload",
            Fed::Transcript => "transcript bytes",
        }
    }
}

struct Loaded {
    adapter: Adapter,
    trusted: bool,
    description: wit::Description,
}

/// Collects everything a report needs. The report is built here and only
/// here; the sanitizer comes back with it for the egress guard.
struct Scan<'a> {
    opts: &'a ScanOptions,
    s: Sanitizer,
    findings: Vec<Finding>,
    next_steps: Vec<Clean>,
    calls: Vec<Call>,
    home: Option<PathBuf>,
    project: PathBuf,
}

pub fn scan(opts: &ScanOptions, identity: &Identity) -> Result<(Report, Sanitizer), ScanError> {
    let catalog = Catalog::load(&opts.project);
    let profile = match &opts.cli {
        Some(name) => match catalog.find(name) {
            Some(p) => Some(p.clone()),
            None if opts.binary.is_some() => None,
            None => {
                return Err(ScanError::UnknownProfile {
                    name: name.clone(),
                    known: catalog
                        .profiles()
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        },
        None if opts.binary.is_some() => None,
        None => return Err(ScanError::NothingToScan),
    };
    let binary_name = opts
        .binary
        .clone()
        .or_else(|| profile.as_ref().map(|p| p.binary.clone()))
        .unwrap_or_default();
    let binary_base = Path::new(&binary_name)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| binary_name.clone());
    let cli_name = profile
        .as_ref()
        .map(|p| p.name.clone())
        .or_else(|| opts.cli.clone())
        .unwrap_or_else(|| binary_base.clone());

    let project = std::fs::canonicalize(&opts.project).unwrap_or_else(|_| opts.project.clone());
    let mut s = Sanitizer::new(identity);
    // The CLI's own names must stay readable even if the project shares one.
    s.add_project(&project, &[cli_name.as_str(), binary_base.as_str()]);
    let mut scan = Scan {
        opts,
        s,
        findings: Vec::new(),
        next_steps: Vec::new(),
        calls: Vec::new(),
        home: identity.home.as_ref().map(PathBuf::from),
        project,
    };
    if !catalog.errors().is_empty() {
        scan.warn(
            "profile.load",
            clean!(
                "{} profile file(s) failed to load; `drover validate` shows why",
                Clean::count(catalog.errors().len() as u64)
            ),
        );
    }
    if profile.is_none() {
        scan.info(
            "profile.none",
            clean!(
                "no profile named {}: reduced report from --binary (no adapter, hooks or usage parser)",
                scan.s.identifier(&cli_name)
            ),
        );
    }
    let binary = scan.binary(&binary_name);
    let report = scan.finish(profile.as_ref(), &cli_name, binary);
    Ok((report, scan.s))
}

impl Scan<'_> {
    fn warn(&mut self, id: &'static str, message: Clean) {
        self.findings.push(Finding {
            id: Clean::lit(id),
            severity: Severity::Warning,
            message,
        });
    }

    fn info(&mut self, id: &'static str, message: Clean) {
        self.findings.push(Finding {
            id: Clean::lit(id),
            severity: Severity::Info,
            message,
        });
    }

    fn finish(&mut self, profile: Option<&Profile>, cli_name: &str, binary: Binary) -> Report {
        let loaded = profile.and_then(|p| self.load(p));
        let hooks = profile.map(|p| self.hooks(p, loaded.as_ref()));
        let (conventions, globs) = match (profile, &loaded) {
            (Some(p), Some(l)) => self.conventions(p, l),
            _ => (Vec::new(), Vec::new()),
        };
        let mut hooks = hooks;
        let captures = self.captures(profile, loaded.as_ref());
        if let Some(h) = hooks.as_mut() {
            h.captured = captures;
        } else if !captures.is_empty() {
            self.info(
                "hooks.payload",
                Clean::lit("--payload shapes are listed only with a profile"),
            );
        }
        let (transcript, found) = self.transcript(conventions, &globs);
        let tokens = found
            .as_ref()
            .and_then(|(path, format)| self.tokens(path, format, profile, loaded.as_ref()));
        let adapter = loaded.map(|l| self.adapter_info(profile, l));
        Report {
            schema_version: SCHEMA_VERSION,
            mode: Mode::Scan,
            cli: self.s.identifier(cli_name),
            known_profile: profile.is_some(),
            profile_source: profile.map(|p| Clean::lit(p.source.kind())),
            binary,
            adapter,
            hooks,
            usage_parser: profile.map(|p| self.s.identifier(&p.usage_parser)),
            transcript,
            tokens,
            findings: std::mem::take(&mut self.findings),
            next_steps: std::mem::take(&mut self.next_steps),
        }
    }
}
