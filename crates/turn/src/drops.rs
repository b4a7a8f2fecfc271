//! Hook events from the relay's drops.
//!
//! The relay (`drover-relay`, or `drover hook` for older hook configs; both
//! are the `drover-relay` crate) only drops the payload bytes into the run's
//! `events/` directory. Here the engine turns a drop into a [`HookRecord`]
//! with the adapter component of the CLI that fired it, kept warm for the
//! whole session, so no hook ever waits for a component to load or compile.
//! When the component cannot parse the payload the event is still recorded,
//! with the kind the profile's event map gives and the raw payload attached.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use drover_relay::HookDrop;

use crate::component::Component;
use drover_profile::registry;
use drover_profile::{Catalog, Profile};
use drover_run::{HookRecord, LAST_MESSAGE_MAX, RAW_PAYLOAD_MAX, ReadDrop};
use drover_sandbox::{CompileCache, Sandbox};
use drover_types::text::truncate_chars;
use drover_types::wit;

pub use drover_relay::{ENV_PROBE_CAPTURE, ENV_RUN_DIR, ENV_SEAT_CLI, ENV_TASK_ID};

/// The project a run directory belongs to: `<project>/.drover/runs/<id>`.
fn project_of(run_dir: &Path) -> Option<PathBuf> {
    let runs = run_dir.parent()?;
    let drover = runs.parent()?;
    (runs.file_name()? == "runs" && drover.file_name()? == ".drover")
        .then(|| drover.parent().map(Path::to_path_buf))?
}

/// A CLI's profile and its loaded component.
type Loaded = (Profile, Box<dyn Component>);

/// Reads a run's drops, each with the component of the CLI named in it,
/// loaded once and kept.
pub struct DropParser {
    project: Option<PathBuf>,
    cache: Option<CompileCache>,
    sandbox: Option<Sandbox>,
    loaded: HashMap<String, Result<Loaded, String>>,
}

impl DropParser {
    /// Loads components as drops name them.
    pub fn for_run(run_dir: &Path) -> DropParser {
        DropParser {
            project: project_of(run_dir),
            cache: None,
            sandbox: None,
            loaded: HashMap::new(),
        }
    }

    /// Starts with the seat's own component, which a session already has.
    pub fn for_seat(run_dir: &Path, profile: &Profile, adapter: &dyn Component) -> DropParser {
        let mut parser = DropParser::for_run(run_dir);
        parser
            .loaded
            .insert(profile.name.clone(), Ok((profile.clone(), adapter.twin())));
        parser
    }

    /// Compiles (or finds compiled) components in `cache` rather than the
    /// user's default cache.
    pub fn with_compile_cache(mut self, cache: CompileCache) -> DropParser {
        self.cache = Some(cache);
        self
    }

    fn component(&mut self, cli: &str) -> Result<&Loaded, String> {
        if !self.loaded.contains_key(cli) {
            let loaded = self.load(cli);
            self.loaded.insert(cli.to_string(), loaded);
        }
        match self.loaded.get(cli) {
            Some(Ok(loaded)) => Ok(loaded),
            Some(Err(e)) => Err(e.clone()),
            None => Err(format!("unknown CLI profile '{cli}'")),
        }
    }

    fn load(&mut self, cli: &str) -> Result<Loaded, String> {
        let project = self
            .project
            .clone()
            .ok_or_else(|| "the run directory is not a .drover/runs/<id> directory".to_string())?;
        let profile = profile(&project, cli)?;
        if self.sandbox.is_none() {
            let cache = self
                .cache
                .take()
                .unwrap_or_else(CompileCache::default_location);
            self.sandbox = Some(Sandbox::new(cache).map_err(|e| e.to_string())?);
        }
        let Some(sandbox) = self.sandbox.as_ref() else {
            return Err("no sandbox".to_string());
        };
        let adapter = registry::bind_in(sandbox, &profile, &project).map_err(|e| e.to_string())?;
        Ok((profile, Box::new(adapter)))
    }

    fn parse(&mut self, drop: &HookDrop) -> Result<HookRecord, String> {
        let (profile, adapter) = self.component(&drop.header.cli)?;
        let event = adapter
            .parse_hook(&profile.to_wit(), &drop.header.native, &drop.payload)
            .map_err(|e| format!("the adapter trapped: {e}"))?
            .map_err(|e| match e {
                wit::AdapterError::InvalidInput(m) | wit::AdapterError::Unsupported(m) => {
                    format!("the adapter refused the payload: {m}")
                }
            })?;
        Ok(HookRecord {
            v: 1,
            ts: drop.header.ts,
            task: drop.header.task.clone(),
            cli: profile.name.clone(),
            native: drop.header.native.clone(),
            kind: event.kind,
            session_id: event.session_id,
            transcript_path: event.transcript_path,
            cwd: event.cwd,
            subagent: event.subagent,
            reason: event.reason,
            prompt_kind: event.prompt_kind,
            last_message: event
                .last_message
                .map(|m| truncate_chars(&m, LAST_MESSAGE_MAX)),
            fields_found: event.fields_found,
            error: None,
            payload: None,
        })
    }

    /// The event as the profile's map names it, with the raw payload kept so
    /// nothing is lost when the component could not read it.
    fn fallback(&mut self, drop: &HookDrop, error: String) -> HookRecord {
        let mapped_by = |profile: &Profile| {
            profile
                .hooks
                .events
                .iter()
                .find(|(native, _)| *native == drop.header.native)
                .and_then(|(_, canonical)| wit::CanonicalEvent::from_profile_name(canonical))
        };
        // The profile is usually loaded already (the component refused the
        // payload); read the catalog only when its component did not load.
        let mapped = match self.loaded.get(&drop.header.cli) {
            Some(Ok((profile, _))) => mapped_by(profile),
            _ => self
                .project
                .as_deref()
                .and_then(|project| profile(project, &drop.header.cli).ok())
                .and_then(|profile| mapped_by(&profile)),
        };
        HookRecord {
            v: 1,
            ts: drop.header.ts,
            task: drop.header.task.clone(),
            cli: drop.header.cli.clone(),
            native: drop.header.native.clone(),
            kind: mapped.unwrap_or(wit::CanonicalEvent::Other),
            session_id: None,
            transcript_path: None,
            cwd: None,
            subagent: false,
            reason: None,
            prompt_kind: None,
            last_message: None,
            fields_found: Vec::new(),
            error: Some(error),
            payload: Some(raw(&drop.payload)),
        }
    }
}

impl ReadDrop for DropParser {
    fn record(&mut self, drop: &HookDrop) -> HookRecord {
        let mut record = match self.parse(drop) {
            Ok(record) => record,
            Err(error) => self.fallback(drop, error),
        };
        // probe-adapter needs every payload's bytes to reduce them to shapes;
        // they stay in its temporary run dir.
        if record.payload.is_none() && drop.header.capture {
            record.payload = Some(raw(&drop.payload));
        }
        record
    }
}

fn raw(payload: &[u8]) -> String {
    String::from_utf8_lossy(&payload[..payload.len().min(RAW_PAYLOAD_MAX)]).into_owned()
}

fn profile(project: &Path, cli: &str) -> Result<Profile, String> {
    Catalog::load_for(project, cli)
        .find(cli)
        .cloned()
        .ok_or_else(|| format!("unknown CLI profile '{cli}'"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_project_comes_from_the_run_dir() {
        assert_eq!(
            project_of(Path::new("/p/.drover/runs/r1")),
            Some(PathBuf::from("/p"))
        );
        assert_eq!(project_of(Path::new("/p/elsewhere/r1")), None);
    }
}
