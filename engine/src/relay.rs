//! `drover hook --cli NAME EVENT`: the command a CLI's hook config runs.
//!
//! It reads the hook payload on stdin, has the adapter component parse it,
//! and publishes one event file into `$DROVER_RUN_DIR/events/`. It is inert
//! (and exits 0) outside a drover session, always exits 0, never prints to
//! stdout (the CLI may read it), and never loses an event: when the
//! component cannot parse the payload, the event is still written with the
//! kind the profile's event map gives and the raw payload attached.
//!
//! The events directory is hostile ground (the driven CLI can write into the
//! project): it is opened without following links, the file is created
//! exclusively with mode 0600, written fully, and renamed into place, all
//! through a `cap-std` handle.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use cap_fs_ext::DirExt;
use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};

use crate::profile::{Catalog, Profile};
use crate::registry;
use crate::run::{HookRecord, LAST_MESSAGE_MAX, RAW_PAYLOAD_MAX, now_ns, truncate_chars};
use crate::sandbox::{CompileCache, Sandbox, wit};

/// Largest payload read from stdin; the rest is drained and dropped.
const STDIN_MAX: usize = 16 << 20;

pub const ENV_RUN_DIR: &str = "DROVER_RUN_DIR";
pub const ENV_TASK_ID: &str = "DROVER_TASK_ID";
/// The profile the seat runs. A relay for another profile is ignored: some
/// CLIs also run other CLIs' hook configs (Grok reads the project's
/// `.claude/settings.json` and `.cursor/hooks.json`), so drover's Claude
/// relay would otherwise report a Grok turn as a Claude event.
pub const ENV_SEAT_CLI: &str = "DROVER_SEAT_CLI";
/// Set by `probe-adapter --probe`: keep every raw payload in its record.
pub const ENV_PROBE_CAPTURE: &str = "DROVER_PROBE_CAPTURE";

/// Entry point for `drover hook …` (argv after the program name). Parses its
/// own arguments so that no argument mistake can make it exit non-zero.
pub fn main(args: &[String]) -> std::process::ExitCode {
    let run_dir = std::env::var_os(ENV_RUN_DIR).filter(|v| !v.is_empty());
    let task = std::env::var(ENV_TASK_ID).ok().filter(|v| !v.is_empty());
    let (Some(run_dir), Some(task)) = (run_dir, task) else {
        return std::process::ExitCode::SUCCESS;
    };
    let run_dir = PathBuf::from(run_dir);
    let (cli, native) = parse_args(args);
    let payload = read_stdin();
    if std::env::var(ENV_SEAT_CLI).is_ok_and(|seat| !seat.is_empty() && seat != cli) {
        return std::process::ExitCode::SUCCESS;
    }
    if let Err(e) = relay(&run_dir, &task, &cli, &native, &payload) {
        note_failure(&run_dir, &format!("relay {cli} {native}: {e}"));
    }
    std::process::ExitCode::SUCCESS
}

/// `hook [--cli NAME | --cli=NAME] EVENT`; anything odd becomes "unknown".
fn parse_args(args: &[String]) -> (String, String) {
    let mut cli = None;
    let mut event = None;
    let mut it = args.iter().skip_while(|a| *a != "hook").skip(1);
    while let Some(arg) = it.next() {
        if arg == "--cli" {
            cli = it.next().cloned();
        } else if let Some(value) = arg.strip_prefix("--cli=") {
            cli = Some(value.to_string());
        } else if event.is_none() && !arg.starts_with("--") {
            event = Some(arg.clone());
        }
    }
    (
        cli.unwrap_or_else(|| "unknown".to_string()),
        event.unwrap_or_else(|| "Unknown".to_string()),
    )
}

fn read_stdin() -> Vec<u8> {
    let mut payload = Vec::new();
    let stdin = std::io::stdin();
    let mut handle = stdin.lock();
    let _ = (&mut handle)
        .take(STDIN_MAX as u64)
        .read_to_end(&mut payload);
    // Drain the rest so the CLI never blocks writing to a closed pipe.
    let _ = std::io::copy(&mut handle, &mut std::io::sink());
    payload
}

/// The project a run directory belongs to: `<project>/.drover/runs/<id>`.
fn project_of(run_dir: &Path) -> Option<PathBuf> {
    let runs = run_dir.parent()?;
    let drover = runs.parent()?;
    (runs.file_name()? == "runs" && drover.file_name()? == ".drover")
        .then(|| drover.parent().map(Path::to_path_buf))?
}

fn relay(
    run_dir: &Path,
    task: &str,
    cli: &str,
    native: &str,
    payload: &[u8],
) -> std::io::Result<()> {
    let record = match parse(run_dir, cli, native, payload) {
        Ok(record) => record,
        Err(error) => fallback_record(run_dir, cli, native, payload, error),
    };
    let mut record = HookRecord {
        v: 1,
        ts: now_ns(),
        task: task.to_string(),
        ..record
    };
    // probe-adapter needs every payload's bytes to reduce them to shapes;
    // they stay in its temporary run dir.
    if record.payload.is_none() && std::env::var_os(ENV_PROBE_CAPTURE).is_some() {
        record.payload = Some(
            String::from_utf8_lossy(&payload[..payload.len().min(RAW_PAYLOAD_MAX)]).into_owned(),
        );
    }
    publish(run_dir, &record)
}

fn load_profile(run_dir: &Path, cli: &str) -> Result<(Profile, PathBuf), String> {
    let project = project_of(run_dir)
        .ok_or_else(|| format!("{} is not a .drover/runs/<id> directory", run_dir.display()))?;
    let catalog = Catalog::load_for(&project, cli);
    let profile = catalog
        .find(cli)
        .cloned()
        .ok_or_else(|| format!("unknown CLI profile '{cli}'"))?;
    Ok((profile, project))
}

fn parse(run_dir: &Path, cli: &str, native: &str, payload: &[u8]) -> Result<HookRecord, String> {
    let (profile, project) = load_profile(run_dir, cli)?;
    let sandbox = Sandbox::new(CompileCache::default_location()).map_err(|e| e.to_string())?;
    let (adapter, _, _) =
        registry::load(&sandbox, &profile, &project).map_err(|e| e.to_string())?;
    let event = adapter
        .parse_hook(&profile.to_wit(), native, payload)
        .map_err(|e| format!("the adapter trapped: {e}"))?
        .map_err(|e| match e {
            wit::AdapterError::InvalidInput(m) | wit::AdapterError::Unsupported(m) => {
                format!("the adapter refused the payload: {m}")
            }
        })?;
    Ok(HookRecord {
        v: 1,
        ts: 0,
        task: String::new(),
        cli: profile.name,
        native: native.to_string(),
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
fn fallback_record(
    run_dir: &Path,
    cli: &str,
    native: &str,
    payload: &[u8],
    error: String,
) -> HookRecord {
    let mapped = load_profile(run_dir, cli).ok().and_then(|(profile, _)| {
        profile
            .hooks
            .events
            .iter()
            .find(|(n, _)| n == native)
            .and_then(|(_, canonical)| canonical_kind(canonical))
    });
    let raw = String::from_utf8_lossy(&payload[..payload.len().min(RAW_PAYLOAD_MAX)]).into_owned();
    HookRecord {
        v: 1,
        ts: 0,
        task: String::new(),
        cli: cli.to_string(),
        native: native.to_string(),
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
        payload: Some(raw),
    }
}

/// A profile's canonical event name as the WIT enum.
pub fn canonical_kind(name: &str) -> Option<wit::CanonicalEvent> {
    use wit::CanonicalEvent as E;
    Some(match name {
        "SessionStart" => E::SessionStart,
        "UserPromptSubmit" => E::PromptSubmit,
        "Stop" => E::Stop,
        "StopFailure" => E::StopFailure,
        "SubagentStop" => E::SubagentStop,
        "SessionEnd" => E::SessionEnd,
        "PreCompact" => E::PreCompact,
        "Notification" => E::Notification,
        "PermissionRequest" => E::PermissionRequest,
        "PreToolUse" => E::ToolStart,
        "PostToolUse" => E::ToolEnd,
        _ => return None,
    })
}

/// Writes the record into `events/` atomically and symlink-safely.
pub fn publish(run_dir: &Path, record: &HookRecord) -> std::io::Result<()> {
    let run = Dir::open_ambient_dir(run_dir, ambient_authority())?;
    let events = match run.open_dir_nofollow("events") {
        Ok(dir) => dir,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            run.create_dir("events")?;
            run.open_dir_nofollow("events")?
        }
        Err(e) => return Err(e),
    };
    let native: String = record
        .native
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(48)
        .collect();
    let name = format!(
        "{}-{}-{native}-{}.json",
        record.ts,
        crate::run::safe_segment(&record.task),
        std::process::id()
    );
    let temp = format!(".{name}.tmp");
    let bytes = serde_json::to_vec(record).map_err(std::io::Error::other)?;
    let mut options = OpenOptions::new();
    options.write(true).create_new(true).mode(0o600);
    let mut file = events.open_with(&temp, &options)?;
    if let Err(e) = file.write_all(&bytes) {
        drop(file);
        let _ = events.remove_file(&temp);
        return Err(e);
    }
    drop(file);
    events.rename(&temp, &events, &name).inspect_err(|_| {
        let _ = events.remove_file(&temp);
    })
}

/// Best-effort note of a relay failure in `logs/relay.log` (never stdout).
fn note_failure(run_dir: &Path, message: &str) {
    let path = run_dir.join("logs").join("relay.log");
    let _ = crate::run::append_line(&path, &format!("{} {message}", now_ns()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn arguments_are_read_leniently() {
        assert_eq!(
            parse_args(&args(&["drover", "hook", "--cli", "claude", "Stop"])),
            ("claude".into(), "Stop".into())
        );
        assert_eq!(
            parse_args(&args(&["drover", "hook", "Stop", "--cli=codex"])),
            ("codex".into(), "Stop".into())
        );
        assert_eq!(
            parse_args(&args(&["drover", "hook"])),
            ("unknown".into(), "Unknown".into())
        );
    }

    #[test]
    fn the_project_comes_from_the_run_dir() {
        assert_eq!(
            project_of(Path::new("/p/.drover/runs/r1")),
            Some(PathBuf::from("/p"))
        );
        assert_eq!(project_of(Path::new("/p/elsewhere/r1")), None);
    }
}
