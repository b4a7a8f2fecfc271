//! Scan mode: what can be learned about a CLI and its adapter without
//! running a turn. Every value on its way into the [`Report`] passes through
//! the [`Sanitizer`]; every call into the component is recorded with its
//! outcome, and a component that traps, spins or answers garbage becomes a
//! finding, never an error of the command.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::binary;
use super::discover::{self, Glob, Matches};
use super::report::{
    AdapterInfo, Binary, Call, CallOutcome, Capture, DeclaredEvent, Finding, Hooks, Mode,
    ParsedUsage, Report, SCHEMA_VERSION, Severity, Tokens, TranscriptFile, Transcripts,
};
use super::sanitize::{Clean, Identity, Sanitizer, clean};
use super::schema;
use crate::hooks::{self, HookError};
use crate::profile::{Catalog, Profile};
use crate::registry::{self, Origin};
use crate::sandbox::{Adapter, CompileCache, Sandbox, SandboxError, wit};

/// Deadline for `--version` and `--help` each.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);
/// Lines of `--version` and `--help` kept.
const VERSION_LINES: usize = 5;
const HELP_LINES: usize = 80;
/// Bytes of one transcript fed to the adapter's tally, and the chunk size.
const MAX_FEED: u64 = 256 << 20;
const FEED_CHUNK: usize = 256 << 10;
/// Largest `--payload` file read.
const MAX_PAYLOAD: u64 = 4 << 20;
/// Location variables passed to a component at most.
const MAX_LOCATION_ENV: usize = 16;

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

    fn binary(&mut self, name: &str) -> Binary {
        let mut binary = Binary {
            name: self.s.path(name, false),
            ..Binary::default()
        };
        let Some(path) = binary::locate(name) else {
            self.warn(
                "binary.missing",
                clean!(
                    "binary {} not found on PATH: version and help unavailable (the scan continues from on-disk conventions)",
                    binary.name
                ),
            );
            return binary;
        };
        binary.found = true;
        binary.path = Some(self.s.path(&path.to_string_lossy(), false));
        for (arg, lines) in [("--version", VERSION_LINES), ("--help", HELP_LINES)] {
            let run = binary::run(&path, arg, self.opts.command_timeout);
            let text = run.text().map(|t| self.s.text(t, lines));
            match &run {
                binary::Run::TimedOut { .. } => self.warn(
                    "binary.timeout",
                    clean!(
                        "`{} {}` did not finish within {} s and was stopped",
                        binary.name,
                        Clean::lit(if arg == "--help" {
                            "--help"
                        } else {
                            "--version"
                        }),
                        Clean::count(self.opts.command_timeout.as_secs())
                    ),
                ),
                binary::Run::Failed(e) => self.warn(
                    "binary.run",
                    clean!(
                        "{} could not be started: {}",
                        binary.name,
                        self.s.text(&e.to_string(), 1)
                    ),
                ),
                binary::Run::Printed {
                    exit_code: Some(code),
                    ..
                } if *code != 0 => self.info(
                    "binary.exit",
                    clean!(
                        "`{} {}` exited with status {}",
                        binary.name,
                        Clean::lit(if arg == "--help" {
                            "--help"
                        } else {
                            "--version"
                        }),
                        self.s.identifier(&code.to_string())
                    ),
                ),
                binary::Run::Printed { .. } => {}
            }
            if arg == "--version" {
                binary.version = text;
            } else {
                binary.help = text;
            }
        }
        binary
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

    fn record(&mut self, export: &'static str, outcome: CallOutcome, detail: Clean) {
        self.calls.push(Call {
            export: Clean::lit(export),
            outcome,
            detail,
        });
    }

    /// Records a failed call and the finding that reports it.
    fn call_failed(&mut self, export: &'static str, error: &SandboxError, fed: Fed) {
        let (outcome, detail) = self.describe_error(error, fed);
        let verb = match outcome {
            CallOutcome::TimeLimit | CallOutcome::MemoryLimit => "hit a limit",
            CallOutcome::Trapped => "trapped",
            _ => "failed",
        };
        self.warn(
            "adapter.call",
            clean!(
                "the adapter's {} {}: {}",
                Clean::lit(export),
                Clean::lit(verb),
                detail
            ),
        );
        self.record(export, outcome, detail);
    }

    fn describe_error(&self, error: &SandboxError, fed: Fed) -> (CallOutcome, Clean) {
        match error {
            SandboxError::Limit { limit, .. } => match limit {
                crate::sandbox::Limit::Time(d) => (
                    CallOutcome::TimeLimit,
                    clean!(
                        "exceeded its time limit of {} ms",
                        Clean::count(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
                    ),
                ),
                crate::sandbox::Limit::Memory(bytes) => (
                    CallOutcome::MemoryLimit,
                    clean!(
                        "exceeded its memory limit of {} MiB",
                        Clean::count((*bytes >> 20) as u64)
                    ),
                ),
            },
            SandboxError::Trap { reason, stderr, .. } => {
                let reason = self.s.text(reason, 1);
                let location = panic_location(stderr).map(|l| self.location(l));
                let message = match (fed, error.panic_message()) {
                    (_, None) => None,
                    (Fed::Nothing, Some(m)) => Some(self.s.text(m, 1)),
                    (fed, Some(_)) => Some(clean!(
                        "message withheld: the call was fed {}",
                        Clean::lit(fed.what())
                    )),
                };
                let detail = match (location, message) {
                    (Some(l), Some(m)) => clean!("panicked at {} ({})", l, m),
                    (Some(l), None) => clean!("panicked at {}", l),
                    (None, Some(m)) => clean!("{} ({})", reason, m),
                    (None, None) => reason,
                };
                (CallOutcome::Trapped, detail)
            }
            other => (CallOutcome::Failed, self.s.text(&other.to_string(), 2)),
        }
    }

    /// `src/lib.rs:12:5`: the file as a path, the position kept when numeric.
    fn location(&self, raw: &str) -> Clean {
        let mut parts = raw.rsplitn(3, ':');
        let (col, line, file) = (parts.next(), parts.next(), parts.next());
        match (file, line, col) {
            (Some(file), Some(line), Some(col))
                if line.bytes().all(|b| b.is_ascii_digit())
                    && col.bytes().all(|b| b.is_ascii_digit()) =>
            {
                clean!(
                    "{}:{}:{}",
                    self.s.path(file, false),
                    self.s.identifier(line),
                    self.s.identifier(col)
                )
            }
            _ => self.s.path(raw, false),
        }
    }

    /// An adapter's own error answer; its text is shown only when the
    /// adapter is built in or was fed nothing private.
    fn adapter_error(
        &self,
        error: &wit::AdapterError,
        trusted: bool,
        fed: Fed,
    ) -> (CallOutcome, Clean) {
        let (outcome, text) = match error {
            wit::AdapterError::Unsupported(m) => (CallOutcome::Unsupported, m),
            wit::AdapterError::InvalidInput(m) => (CallOutcome::InvalidInput, m),
        };
        let detail = if trusted || matches!(fed, Fed::Nothing) {
            self.s.text(text, 2)
        } else {
            clean!(
                "message withheld: a third-party adapter was fed {}",
                Clean::lit(fed.what())
            )
        };
        (outcome, detail)
    }

    fn load(&mut self, profile: &Profile) -> Option<Loaded> {
        let found = match registry::resolve(&profile.component, &self.project) {
            Ok(found) => found,
            Err(e) => {
                let detail = self.s.text(&e.to_string(), 2);
                self.warn(
                    "adapter.load",
                    clean!("the adapter could not be found: {}", detail),
                );
                self.record("load", CallOutcome::Failed, detail);
                return None;
            }
        };
        let trusted = found.origin == Origin::Builtin;
        let loaded = Sandbox::new(CompileCache::default_location()).and_then(|sandbox| {
            sandbox.load(&found.name, &found.bytes, &found.sha256, profile.limits())
        });
        let adapter = match loaded {
            Ok((adapter, _)) => adapter,
            Err(e) => {
                self.call_failed("load", &e, Fed::Nothing);
                return None;
            }
        };
        match adapter.describe() {
            Ok(description) => {
                self.record("describe", CallOutcome::Ok, Clean::lit("answered"));
                Some(Loaded {
                    adapter,
                    trusted,
                    description,
                })
            }
            Err(e) => {
                self.call_failed("describe", &e, Fed::Nothing);
                None
            }
        }
    }

    fn hooks(&mut self, profile: &Profile, loaded: Option<&Loaded>) -> Hooks {
        let s = &self.s;
        let mut hooks = Hooks {
            dialect: s.identifier(&profile.hooks.dialect),
            hookless: profile.hookless(),
            config_path: (!profile.hookless()).then(|| s.path(&profile.hooks.config_path, false)),
            registered: None,
            events: profile
                .hooks
                .events
                .iter()
                .map(|(native, canonical)| DeclaredEvent {
                    native: s.identifier(native),
                    canonical: s.identifier(canonical),
                    registered: None,
                })
                .collect(),
            captured: Vec::new(),
        };
        if profile.hookless() {
            return hooks;
        }
        let Some(loaded) = loaded else {
            return hooks;
        };
        let config = hooks.config_path.clone().unwrap_or_default();
        match hooks::status(&loaded.adapter, profile, &self.project) {
            Ok(status) => {
                for (event, (native, _)) in hooks.events.iter_mut().zip(&profile.hooks.events) {
                    event.registered = Some(status.registered.contains(native));
                }
                let all = status.missing.is_empty() && !status.registered.is_empty();
                hooks.registered = Some(all);
                self.record(
                    "detect-hooks",
                    CallOutcome::Ok,
                    clean!(
                        "{} of {} mapped events carry the relay",
                        Clean::count(status.registered.len() as u64),
                        Clean::count(profile.hooks.events.len() as u64)
                    ),
                );
                if !all {
                    let cli = self.s.identifier(&profile.name);
                    self.warn(
                        "hooks.registered",
                        clean!(
                            "drover's relay is not registered in {} for every mapped event",
                            config
                        ),
                    );
                    self.next_steps.push(clean!(
                        "run `drover hooks install --cli {}` so the CLI reports turn ends to drover",
                        cli
                    ));
                }
            }
            Err(HookError::Sandbox(e)) => self.call_failed("detect-hooks", &e, Fed::HookConfig),
            Err(HookError::Config { message, .. }) => {
                let error = match message.strip_prefix("unsupported: ") {
                    Some(m) => wit::AdapterError::Unsupported(m.to_string()),
                    None => wit::AdapterError::InvalidInput(message),
                };
                let (outcome, detail) = self.adapter_error(&error, loaded.trusted, Fed::HookConfig);
                self.warn(
                    "hooks.config",
                    clean!(
                        "the hook config {} could not be checked: {}",
                        config,
                        detail
                    ),
                );
                self.record("detect-hooks", outcome, detail);
            }
            Err(
                e @ (HookError::Io { .. } | HookError::Executable(_) | HookError::Hookless { .. }),
            ) => {
                let detail = self.s.text(&e.to_string(), 2);
                self.warn(
                    "hooks.config",
                    clean!("hook status unavailable: {}", detail),
                );
            }
        }
        hooks
    }

    /// Asks the adapter where transcripts live and checks its answer.
    fn conventions(
        &mut self,
        profile: &Profile,
        loaded: &Loaded,
    ) -> (Vec<Clean>, Vec<(Glob, String)>) {
        let env: Vec<(String, String)> = loaded
            .description
            .location_env
            .iter()
            .filter(|name| super::sanitize::is_identifier(name))
            .take(MAX_LOCATION_ENV)
            .filter_map(|name| std::env::var(name).ok().map(|v| (name.clone(), v)))
            .collect();
        for (name, value) in &env {
            self.s.add_variable(name, value);
        }
        let context = wit::LocationContext {
            home: self
                .home
                .as_ref()
                .map(|h| h.to_string_lossy().into_owned())
                .unwrap_or_default(),
            cwd: self.project.to_string_lossy().into_owned(),
            env,
        };
        let answer = match loaded
            .adapter
            .transcript_locations(&profile.to_wit(), &context)
        {
            Ok(answer) => answer,
            Err(e) => {
                self.call_failed("transcript-locations", &e, Fed::HostPaths);
                return (Vec::new(), Vec::new());
            }
        };
        let mut garbage = Vec::new();
        if answer.len() > discover::MAX_GLOBS {
            garbage.push(clean!(
                "{} globs answered; only the first {} are used",
                Clean::count(answer.len() as u64),
                Clean::count(discover::MAX_GLOBS as u64)
            ));
        }
        let mut shown = Vec::new();
        let mut globs = Vec::new();
        for glob in answer.iter().take(discover::MAX_GLOBS) {
            let pattern = self.s.path(&glob.pattern, true);
            if !super::sanitize::is_identifier(&glob.format)
                || !super::sanitize::is_identifier(&glob.parser)
            {
                garbage.push(clean!(
                    "glob {} names format {} and parser {}",
                    pattern,
                    self.s.identifier(&glob.format),
                    self.s.identifier(&glob.parser)
                ));
            }
            match discover::check(glob, self.home.as_deref(), &self.project) {
                Ok(checked) => {
                    shown.push(self.s.path(&checked.display, true));
                    globs.push((checked, glob.format.clone()));
                }
                Err(rejected) => garbage.push(clean!(
                    "glob {} refused: {}",
                    pattern,
                    Clean::lit(rejected.reason())
                )),
            }
        }
        if garbage.is_empty() {
            self.record(
                "transcript-locations",
                CallOutcome::Ok,
                clean!("{} globs", Clean::count(answer.len() as u64)),
            );
        } else {
            let count = garbage.len() as u64;
            for g in garbage.into_iter().take(5) {
                self.warn(
                    "adapter.garbage",
                    clean!("the adapter's transcript-locations answered garbage: {}", g),
                );
            }
            self.record(
                "transcript-locations",
                CallOutcome::Garbage,
                clean!(
                    "{} problems in the answer (the first 5 are listed)",
                    Clean::count(count)
                ),
            );
        }
        (shown, globs)
    }

    /// Picks the transcript: `--transcript`, else the newest under
    /// `--session-dir`, else the newest the conventions match.
    fn transcript(
        &mut self,
        conventions: Vec<Clean>,
        globs: &[(Glob, String)],
    ) -> (Transcripts, Option<(PathBuf, String)>) {
        let opts = self.opts;
        let mut out = Transcripts {
            conventions,
            ..Transcripts::default()
        };
        let from_conventions = opts.transcript.is_none() && opts.session_dir.is_none();
        if from_conventions && globs.is_empty() {
            out.source = Clean::lit("adapter conventions");
            self.info(
                "transcript.none",
                Clean::lit("no transcript conventions to search (no adapter answered any)"),
            );
            self.next_steps.push(Clean::lit(
                "pass --transcript PATH or --session-dir DIR to include a transcript",
            ));
            return (out, None);
        }
        let (matches, glob_format) = if let Some(path) = &opts.transcript {
            out.source = Clean::lit("--transcript");
            let found = discover::regular_file(path);
            if found.is_none() {
                self.warn(
                    "transcript.flag",
                    clean!(
                        "--transcript {} is not a readable regular file",
                        self.s.path(&path.to_string_lossy(), false)
                    ),
                );
            }
            let count = u64::from(found.is_some());
            (
                Matches {
                    newest: found,
                    count,
                    ..Matches::default()
                },
                None,
            )
        } else if let Some(dir) = &opts.session_dir {
            out.source = Clean::lit("--session-dir");
            (discover::newest_in_dir(dir), None)
        } else {
            out.source = Clean::lit("adapter conventions");
            let only: Vec<Glob> = globs.iter().map(|(g, _)| g.clone()).collect();
            let m = discover::newest(&only);
            let format = m
                .newest_glob
                .and_then(|i| globs.get(i))
                .map(|(_, f)| f.clone());
            (m, format)
        };
        if matches.truncated {
            self.warn(
                "transcript.truncated",
                clean!(
                    "a transcript search stopped after {} directory entries; the newest file may have been missed (pass --transcript)",
                    Clean::count(discover::WALK_BUDGET as u64)
                ),
            );
        }
        let Some(found) = matches.newest else {
            if opts.transcript.is_none() {
                self.warn("transcript.none", Clean::lit("no transcript found"));
                self.next_steps.push(Clean::lit(
                    "run the CLI once in this project, or pass --transcript PATH or --session-dir DIR",
                ));
            }
            return (out, None);
        };
        if matches.count > 1 {
            self.info(
                "transcript.multiple",
                clean!(
                    "{} transcripts matched; the newest is reported (pass --transcript to pin one)",
                    Clean::count(matches.count)
                ),
            );
        }
        let by_extension = match found.path.extension().and_then(|e| e.to_str()) {
            Some("jsonl") => "jsonl",
            Some("json") => "json",
            Some("db" | "sqlite") => "sqlite",
            _ => "unknown",
        };
        let format = glob_format
            .filter(|f| super::sanitize::is_identifier(f))
            .unwrap_or_else(|| by_extension.to_string());
        let line_count = match discover::count_lines(&found.path) {
            Ok(n) => n,
            Err(_) => {
                self.warn(
                    "transcript.read",
                    Clean::lit("the transcript could not be read"),
                );
                0
            }
        };
        out.file = Some(TranscriptFile {
            location: self.s.path(&found.path.to_string_lossy(), false),
            format: self.s.identifier(&format),
            size_bytes: found.size,
            line_count,
            modified_date: self.s.identifier(&discover::utc_date(found.modified)),
            matches: matches.count,
            glob: matches
                .newest_glob
                .filter(|_| from_conventions)
                .and_then(|i| globs.get(i))
                .map(|(g, _)| self.s.path(&g.display, true)),
        });
        (out, Some((found.path, format)))
    }

    /// The schema of the transcript and, with a usage parser, the adapter's
    /// own reading of it.
    fn tokens(
        &mut self,
        path: &Path,
        format: &str,
        profile: Option<&Profile>,
        loaded: Option<&Loaded>,
    ) -> Option<Tokens> {
        if format != "jsonl" && format != "json" {
            self.info(
                "tokens.format",
                clean!(
                    "the transcript's format {} has no schema reader in scan mode",
                    self.s.identifier(format)
                ),
            );
            return None;
        }
        let file = std::fs::File::open(path).ok()?;
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        let inferred = match schema::infer(
            &self.s,
            std::io::BufReader::new(file),
            format == "json",
            size,
        ) {
            Ok(schema) => schema,
            Err(_) => {
                self.warn(
                    "transcript.read",
                    Clean::lit("the transcript could not be read"),
                );
                return None;
            }
        };
        if inferred.token_candidates.is_empty() {
            self.info(
                "tokens.none",
                Clean::lit("no integer field named like a token count was found in the transcript"),
            );
        }
        let parsed = match (profile, loaded) {
            (Some(p), Some(l)) if p.usage_parser != "none" => {
                self.tally(p, l, path, size, &inferred)
            }
            _ => None,
        };
        Some(Tokens {
            entries_scanned: inferred.entries_scanned,
            unreadable_entries: inferred.unreadable_entries,
            key_paths: inferred.key_paths,
            paths_omitted: inferred.paths_omitted,
            token_field_candidates: inferred.token_candidates,
            parsed_usage: parsed,
        })
    }

    /// Feeds the transcript to the adapter's tally. Its numbers are shown
    /// only when the file could hold them: a component that invents numbers
    /// (or encodes something in them) is reported, not believed.
    fn tally(
        &mut self,
        profile: &Profile,
        loaded: &Loaded,
        path: &Path,
        size: u64,
        inferred: &schema::Schema,
    ) -> Option<ParsedUsage> {
        let parser = self.s.identifier(&profile.usage_parser);
        if !loaded
            .description
            .usage_parsers
            .iter()
            .any(|p| p.name == profile.usage_parser)
        {
            self.warn(
                "adapter.usage-parser",
                clean!(
                    "the adapter does not list the usage parser {} the profile names",
                    parser
                ),
            );
        }
        let report = match self.feed(profile, loaded, path) {
            Ok(Ok(report)) => report,
            Ok(Err(error)) => {
                let (outcome, detail) = self.adapter_error(&error, loaded.trusted, Fed::Transcript);
                self.warn(
                    "adapter.call",
                    clean!("the adapter's tally refused the transcript: {}", detail),
                );
                self.record("tally", outcome, detail);
                return None;
            }
            Err((export, e)) => {
                self.call_failed(export, &e, Fed::Transcript);
                return None;
            }
        };
        let mut usage = ParsedUsage {
            parser,
            found: report.is_some(),
            ..ParsedUsage::default()
        };
        if let Some(report) = report {
            usage.entries = report.entries.len() as u64;
            usage.rejected_rows = report.rejected_rows;
            for e in &report.entries {
                let u = &e.usage;
                usage.input = usage.input.saturating_add(u.input);
                usage.output = usage.output.saturating_add(u.output);
                usage.cache_read = usage.cache_read.saturating_add(u.cache_read);
                usage.cache_write = usage.cache_write.saturating_add(u.cache_write);
                usage.reasoning = usage.reasoning.saturating_add(u.reasoning);
                usage.requests = usage.requests.saturating_add(u.requests);
            }
        }
        let tokens = [
            usage.input,
            usage.output,
            usage.cache_read,
            usage.cache_write,
            usage.reasoning,
        ];
        let counts = [usage.entries, usage.rejected_rows, usage.requests];
        let plausible = (!inferred.complete
            || tokens.iter().all(|&t| u128::from(t) <= inferred.int_sum))
            && counts.iter().all(|&c| c <= size);
        if !plausible {
            self.warn(
                "adapter.tally-implausible",
                Clean::lit("the adapter's tally answered numbers larger than the transcript can hold; they are withheld"),
            );
            self.record(
                "tally",
                CallOutcome::Garbage,
                Clean::lit("implausible numbers withheld"),
            );
            return None;
        }
        self.record(
            "tally",
            CallOutcome::Ok,
            if usage.found {
                clean!("{} usage entries", Clean::count(usage.entries))
            } else {
                Clean::lit("no usage in this file")
            },
        );
        Some(usage)
    }

    #[allow(clippy::type_complexity)]
    fn feed(
        &self,
        profile: &Profile,
        loaded: &Loaded,
        path: &Path,
    ) -> Result<Result<Option<wit::UsageReport>, wit::AdapterError>, (&'static str, SandboxError)>
    {
        let mut tally = loaded
            .adapter
            .tally(&profile.usage_parser, loaded.adapter.limits())
            .map_err(|e| ("tally", e))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        tally
            .begin_file(&name)
            .map_err(|e| ("tally.begin-file", e))?;
        if let Ok(file) = std::fs::File::open(path) {
            let mut reader = file.take(MAX_FEED);
            let mut chunk = vec![0u8; FEED_CHUNK];
            loop {
                let n = match reader.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                if let Err(error) = tally.feed(&chunk[..n]).map_err(|e| ("tally.feed", e))? {
                    return Ok(Err(error));
                }
            }
        }
        tally.finish().map(Ok).map_err(|e| ("tally.finish", e))
    }

    /// `--payload NATIVE=FILE`: each captured payload reduced to its shape,
    /// plus what the adapter's `parse-hook` made of it.
    fn captures(&mut self, profile: Option<&Profile>, loaded: Option<&Loaded>) -> Vec<Capture> {
        let opts = self.opts;
        let mut captures = Vec::new();
        for (native, path) in &opts.payloads {
            let bytes = match std::fs::File::open(path).and_then(|f| {
                let mut bytes = Vec::new();
                f.take(MAX_PAYLOAD).read_to_end(&mut bytes).map(|_| bytes)
            }) {
                Ok(bytes) => bytes,
                Err(_) => {
                    self.warn(
                        "hooks.payload",
                        clean!(
                            "--payload {} could not be read",
                            self.s.path(&path.to_string_lossy(), false)
                        ),
                    );
                    continue;
                }
            };
            let shape = schema::infer(&self.s, &bytes[..], true, bytes.len() as u64).ok();
            let payload_keys = match serde_json::from_slice::<serde_json::Value>(&bytes) {
                Ok(serde_json::Value::Object(map)) => map.keys().map(|k| self.s.key(k)).collect(),
                _ => {
                    self.warn(
                        "hooks.payload",
                        clean!(
                            "the {} payload is not a JSON object",
                            self.s.identifier(native)
                        ),
                    );
                    Vec::new()
                }
            };
            let mut capture = Capture {
                native: self.s.identifier(native),
                canonical: profile.and_then(|p| {
                    p.hooks
                        .events
                        .iter()
                        .find(|(n, _)| n == native)
                        .map(|(_, c)| self.s.identifier(c))
                }),
                adapter_kind: None,
                subagent: None,
                fields_found: Vec::new(),
                payload_keys,
                payload_schema: shape.map(|s| s.key_paths).unwrap_or_default(),
            };
            if let (Some(p), Some(l)) = (profile, loaded) {
                match l.adapter.parse_hook(&p.to_wit(), native, &bytes) {
                    Ok(Ok(event)) => {
                        capture.adapter_kind = Some(self.s.identifier(event.kind.as_str()));
                        capture.subagent = Some(event.subagent);
                        capture.fields_found =
                            event.fields_found.iter().map(|f| self.s.key(f)).collect();
                        self.record(
                            "parse-hook",
                            CallOutcome::Ok,
                            clean!("{} read", capture.native),
                        );
                    }
                    Ok(Err(error)) => {
                        let (outcome, detail) =
                            self.adapter_error(&error, l.trusted, Fed::HookPayload);
                        self.warn(
                            "adapter.call",
                            clean!(
                                "the adapter's parse-hook refused the {} payload: {}",
                                capture.native,
                                detail
                            ),
                        );
                        self.record("parse-hook", outcome, detail);
                    }
                    Err(e) => self.call_failed("parse-hook", &e, Fed::HookPayload),
                }
            }
            captures.push(capture);
        }
        captures
    }

    fn adapter_info(&mut self, profile: Option<&Profile>, loaded: Loaded) -> AdapterInfo {
        let s = &self.s;
        let d = &loaded.description;
        AdapterInfo {
            component: profile
                .map(|p| match &p.component {
                    crate::profile::ComponentRef::Builtin(name)
                    | crate::profile::ComponentRef::Implicit(name) => s.identifier(name),
                    // The file's name says which component; its directory
                    // says only where the user keeps it.
                    crate::profile::ComponentRef::File(path) => path
                        .file_name()
                        .map(|n| s.path(&n.to_string_lossy(), false))
                        .unwrap_or_default(),
                })
                .unwrap_or_default(),
            origin: Clean::lit(if loaded.trusted { "built-in" } else { "file" }),
            name: s.identifier(&d.name),
            version: s.identifier(&d.adapter_version),
            wit_version: s.identifier(&d.wit_version),
            capabilities: d
                .capabilities
                .iter()
                .map(|c| s.identifier(c.as_str()))
                .collect(),
            dialects: d
                .dialects
                .iter()
                .take(32)
                .map(|x| s.identifier(x))
                .collect(),
            usage_parsers: d
                .usage_parsers
                .iter()
                .take(32)
                .map(|p| s.identifier(&p.name))
                .collect(),
            limitations: d
                .limitations
                .iter()
                .take(16)
                .map(|l| s.text(l, 1))
                .collect(),
            calls: std::mem::take(&mut self.calls),
        }
    }
}

/// `src/lib.rs:12:5` from a Rust panic header on the guest's stderr.
fn panic_location(stderr: &str) -> Option<&str> {
    let line = stderr.lines().find(|l| l.contains("panicked at "))?;
    let rest = line.split("panicked at ").nth(1)?;
    Some(
        rest.trim_end_matches(':')
            .split_whitespace()
            .next()
            .unwrap_or(rest),
    )
}
