//! The adapter component: loading it, recording each call into it, and
//! describing its failures without echoing what it was fed.

use super::{Fed, Loaded, Scan};
use crate::report::Call;
use crate::report::{AdapterInfo, CallOutcome};
use crate::sanitize::{Clean, clean};
use drover_profile::Profile;
use drover_profile::registry::{self, Origin};
use drover_sandbox::{Sandbox, SandboxError};
use drover_types::wit;

impl Scan<'_> {
    pub(super) fn record(&mut self, export: &'static str, outcome: CallOutcome, detail: Clean) {
        self.calls.push(Call {
            export: Clean::lit(export),
            outcome,
            detail,
        });
    }

    /// Records a failed call and the finding that reports it.
    pub(super) fn call_failed(&mut self, export: &'static str, error: &SandboxError, fed: Fed) {
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
                drover_sandbox::Limit::Time(d) => (
                    CallOutcome::TimeLimit,
                    clean!(
                        "exceeded its time limit of {} ms",
                        Clean::count(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
                    ),
                ),
                drover_sandbox::Limit::Memory(bytes) => (
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
    pub(super) fn adapter_error(
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

    pub(super) fn load(&mut self, profile: &Profile) -> Option<Loaded> {
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
        let loaded = Sandbox::with_default_cache().and_then(|sandbox| {
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

    pub(super) fn adapter_info(
        &mut self,
        profile: Option<&Profile>,
        loaded: Loaded,
    ) -> AdapterInfo {
        let s = &self.s;
        let d = &loaded.description;
        AdapterInfo {
            component: profile
                .map(|p| match &p.component {
                    drover_profile::ComponentRef::Builtin(name)
                    | drover_profile::ComponentRef::Implicit(name) => s.identifier(name),
                    // The file's name says which component; its directory
                    // says only where the user keeps it.
                    drover_profile::ComponentRef::File(path) => path
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
