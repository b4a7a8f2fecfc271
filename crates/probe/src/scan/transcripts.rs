//! Transcripts: where the adapter says they live, which one to read, and
//! what its tally makes of it.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::{Fed, Loaded, Scan};
use crate::discover::{self, Glob, Matches};
use crate::report::{CallOutcome, ParsedUsage, TokenFields, TranscriptFile, Transcripts};
use crate::sanitize::{Clean, clean};
use crate::schema;
use drover_profile::Profile;
use drover_sandbox::SandboxError;
use drover_types::wit;

/// Bytes of one transcript fed to the adapter's tally, and the chunk size.
const MAX_FEED: u64 = 256 << 20;
const FEED_CHUNK: usize = 256 << 10;
/// Location variables passed to a component at most.
const MAX_LOCATION_ENV: usize = 16;

impl Scan<'_> {
    /// Asks the adapter where transcripts live and checks its answer.
    pub(super) fn conventions(
        &mut self,
        profile: &Profile,
        loaded: &Loaded,
    ) -> (Vec<Clean>, Vec<(Glob, String)>) {
        let env: Vec<(String, String)> = loaded
            .description
            .location_env
            .iter()
            .filter(|name| crate::sanitize::is_identifier(name))
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
            if !crate::sanitize::is_identifier(&glob.format)
                || !crate::sanitize::is_identifier(&glob.parser)
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
    pub(super) fn transcript(
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
            .filter(|f| crate::sanitize::is_identifier(f))
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
    pub(super) fn tokens(
        &mut self,
        path: &Path,
        format: &str,
        profile: Option<&Profile>,
        loaded: Option<&Loaded>,
    ) -> Option<TokenFields> {
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
        Some(TokenFields {
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
}
