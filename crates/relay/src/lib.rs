//! The hook relay: what a CLI's hook config runs, once for every hook it
//! fires, synchronously. It must cost no more than starting a process, so it
//! links no WebAssembly runtime and no command-line framework, and it never
//! parses the payload: it drops the bytes, as they came, into
//! `$DROVER_RUN_DIR/events/` and the running engine parses them with the
//! component it already has warm when it reads the drop.
//!
//! It is inert (exits 0, writes nothing) outside a drover session, always
//! exits 0, never prints to stdout (the CLI may read it), and never loses an
//! event. The events directory is hostile ground (the driven CLI can write
//! into the project): it is opened without following links, the file is
//! created exclusively with mode 0600, written fully, and renamed into place,
//! all through a `cap-std` handle.
//!
//! A drop is one file `<ts>-<task>-<event>-<pid>.drop`: a header line of
//! JSON ([`DropHeader`]), a newline, then the payload bytes verbatim.

use std::borrow::Cow;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use serde_json::Value;

pub const ENV_RUN_DIR: &str = "DROVER_RUN_DIR";
pub const ENV_TASK_ID: &str = "DROVER_TASK_ID";
/// The profile the seat runs. A relay for another profile is ignored: some
/// CLIs also run other CLIs' hook configs (Grok reads the project's
/// `.claude/settings.json` and `.cursor/hooks.json`), so drover's Claude
/// relay would otherwise report a Grok turn as a Claude event.
pub const ENV_SEAT_CLI: &str = "DROVER_SEAT_CLI";
/// Set by `probe-adapter --probe`: keep every raw payload in its record.
pub const ENV_PROBE_CAPTURE: &str = "DROVER_PROBE_CAPTURE";

/// Largest payload kept; the rest is drained and dropped.
pub const PAYLOAD_MAX: usize = 16 << 20;
/// Longest header line a reader accepts (the fields are capped far below).
const HEADER_MAX: usize = 4 << 10;
/// Characters kept of each header field that comes from argv or env.
const FIELD_MAX: usize = 256;
/// The file extension of a relay drop.
pub const DROP_EXTENSION: &str = "drop";
/// The largest drop file a reader needs to read.
pub const DROP_FILE_MAX: u64 = (PAYLOAD_MAX + HEADER_MAX + 1) as u64;
const FORMAT: u32 = 2;

/// Who fired what, and when. Written and read by hand rather than derived:
/// the relay is built apart from drover (statically linked), and serde's
/// derive would compile `syn` once more for it on every first build.
#[derive(Debug, Clone, PartialEq)]
pub struct DropHeader {
    /// Format version (2: the raw-payload drop).
    pub v: u32,
    /// Wall-clock ns when the relay ran (orders events; floors stale ones).
    pub ts: u64,
    pub task: String,
    /// The profile named in the hook command (`--cli`).
    pub cli: String,
    /// The CLI's own event name.
    pub native: String,
    /// Keep the raw payload in the parsed record (`probe-adapter --probe`);
    /// absent means false.
    pub capture: bool,
}

/// One hook call as the relay saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct HookDrop {
    pub header: DropHeader,
    pub payload: Vec<u8>,
}

#[derive(Debug)]
pub enum DropError {
    NoHeader,
    Header(String),
    Version(u32),
}

impl std::fmt::Display for DropError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DropError::NoHeader => write!(f, "no header line"),
            DropError::Header(why) => write!(f, "the header is not drover's: {why}"),
            DropError::Version(v) => write!(f, "format version {v} is not one this drover reads"),
        }
    }
}

impl std::error::Error for DropError {}

impl DropHeader {
    /// One line of JSON, fields in a fixed order.
    pub fn to_json(&self) -> String {
        let text = |s: &str| Value::String(s.to_owned()).to_string();
        format!(
            r#"{{"v":{},"ts":{},"task":{},"cli":{},"native":{},"capture":{}}}"#,
            self.v,
            self.ts,
            text(&self.task),
            text(&self.cli),
            text(&self.native),
            self.capture
        )
    }

    /// Reads [`DropHeader::to_json`]'s line; unknown fields are ignored.
    pub fn from_json(bytes: &[u8]) -> Result<DropHeader, DropError> {
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| DropError::Header(e.to_string()))?;
        let Value::Object(fields) = value else {
            return Err(DropError::Header("not a JSON object".into()));
        };
        let number = |name: &str| {
            fields
                .get(name)
                .and_then(Value::as_u64)
                .ok_or_else(|| DropError::Header(format!("`{name}` is not a whole number")))
        };
        let text = |name: &str| {
            fields
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| DropError::Header(format!("`{name}` is not a string")))
        };
        let v = number("v")?;
        let header = DropHeader {
            v: u32::try_from(v).map_err(|_| DropError::Version(u32::MAX))?,
            ts: number("ts")?,
            task: text("task")?,
            cli: text("cli")?,
            native: text("native")?,
            capture: match fields.get("capture") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => return Err(DropError::Header("`capture` is not true or false".into())),
            },
        };
        Ok(header)
    }
}

impl HookDrop {
    pub fn to_bytes(&self) -> std::io::Result<Vec<u8>> {
        let mut bytes = self.header.to_json().into_bytes();
        bytes.push(b'\n');
        bytes.extend_from_slice(&self.payload);
        Ok(bytes)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<HookDrop, DropError> {
        let end = bytes
            .iter()
            .take(HEADER_MAX)
            .position(|&b| b == b'\n')
            .ok_or(DropError::NoHeader)?;
        let header = DropHeader::from_json(&bytes[..end])?;
        if header.v != FORMAT {
            return Err(DropError::Version(header.v));
        }
        let payload = bytes[end + 1..].to_vec();
        Ok(HookDrop { header, payload })
    }

    /// The file name: time first so a listing sorts oldest first, the pid
    /// last so two relays in the same nanosecond never collide.
    pub fn file_name(&self) -> String {
        format!(
            "{}-{}-{}-{}.{DROP_EXTENSION}",
            self.header.ts,
            drover_state::safe_segment(&self.header.task),
            event_segment(&self.header.native),
            std::process::id()
        )
    }
}

fn event_segment(native: &str) -> String {
    native
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(48)
        .collect()
}

/// Nanoseconds since the Unix epoch (wall clock; orders and floors events,
/// never measures durations).
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// The relay, given its arguments after the program name (and after
/// `hook` for `drover hook`), as the OS gave them: they may be any bytes, and
/// nothing about them may make it panic or exit non-zero.
pub fn main(args: &[OsString]) -> std::process::ExitCode {
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
    let drop = HookDrop {
        header: DropHeader {
            v: FORMAT,
            ts: now_ns(),
            task: capped(&task),
            cli: capped(&cli),
            native: capped(&native),
            capture: std::env::var_os(ENV_PROBE_CAPTURE).is_some(),
        },
        payload,
    };
    if let Err(e) = publish(&run_dir, &drop) {
        note_failure(&run_dir, &format!("relay {cli} {native}: {e}"));
    }
    std::process::ExitCode::SUCCESS
}

fn capped(field: &str) -> String {
    field.chars().take(FIELD_MAX).collect()
}

/// `[--cli NAME | --cli=NAME] EVENT`; anything odd becomes "unknown", and
/// bytes that are not UTF-8 are kept as U+FFFD.
pub fn parse_args(args: &[OsString]) -> (String, String) {
    let mut cli = None;
    let mut event = None;
    let mut it = args.iter().map(|a| a.to_string_lossy());
    while let Some(arg) = it.next() {
        if arg == "--cli" {
            cli = it.next().map(Cow::into_owned);
        } else if let Some(value) = arg.strip_prefix("--cli=") {
            cli = Some(value.to_string());
        } else if event.is_none() && !arg.starts_with("--") {
            event = Some(arg.into_owned());
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
        .take(PAYLOAD_MAX as u64)
        .read_to_end(&mut payload);
    // Drain the rest so the CLI never blocks writing to a closed pipe.
    let _ = std::io::copy(&mut handle, &mut std::io::sink());
    payload
}

/// Opens the run directory without following any link from the project
/// down (it must exist already: a hook call never creates one).
fn open_run(run_dir: &Path) -> std::io::Result<Dir> {
    match drover_state::split(run_dir) {
        Some((project, below)) => drover_state::open_dir(&project, &below, false),
        None => Dir::open_ambient_dir(run_dir, ambient_authority()),
    }
}

/// Opens `name` in `run`, not through a link, creating it when `create`.
fn open_subdir(run: &Dir, name: &str, create: bool) -> std::io::Result<Dir> {
    match run.open_dir_nofollow(name) {
        Ok(dir) => Ok(dir),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {
            run.create_dir(name)?;
            run.open_dir_nofollow(name)
        }
        Err(e) => Err(e),
    }
}

/// Opens `run_dir/events` without following any link from the project down
/// (the run directory must exist already: a hook call never creates one).
pub fn open_events(run_dir: &Path, create: bool) -> std::io::Result<Dir> {
    open_subdir(&open_run(run_dir)?, "events", create)
}

/// Opens (creating it) the subdirectory `name` of `events` where parsed
/// records of one stretch of time are kept, not through a link.
pub fn open_bucket(events: &Dir, name: &str) -> std::io::Result<Dir> {
    open_subdir(events, name, true)
}

/// Writes `bytes` as `name` in `events`: a hidden temporary created
/// exclusively with mode 0600, written fully, renamed into place.
pub fn write_event_file(events: &Dir, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let temp = format!(".{name}.tmp");
    let mut options = OpenOptions::new();
    options.write(true).create_new(true).mode(0o600);
    let mut file = events.open_with(&temp, &options)?;
    if let Err(e) = file.write_all(bytes) {
        drop(file);
        let _ = events.remove_file(&temp);
        return Err(e);
    }
    drop(file);
    events.rename(&temp, events, name).inspect_err(|_| {
        let _ = events.remove_file(&temp);
    })
}

/// Publishes one drop into `run_dir/events/`.
pub fn publish(run_dir: &Path, drop: &HookDrop) -> std::io::Result<()> {
    let events = open_events(run_dir, true)?;
    write_event_file(&events, &drop.file_name(), &drop.to_bytes()?)
}

/// Best-effort note of a relay failure in `logs/relay.log` (never stdout).
fn note_failure(run_dir: &Path, message: &str) {
    if let Ok(mut file) = open_log(run_dir) {
        let _ = file.write_all(format!("{} {message}\n", now_ns()).as_bytes());
    }
}

/// `run_dir/logs/relay.log` for appending: created 0600 (a failure can
/// quote what a hook carried), never through a link.
pub fn open_log(run_dir: &Path) -> std::io::Result<cap_std::fs::File> {
    let logs = open_subdir(&open_run(run_dir)?, "logs", true)?;
    let mut options = OpenOptions::new();
    options
        .create(true)
        .append(true)
        .mode(0o600)
        .follow(FollowSymlinks::No);
    logs.open_with("relay.log", &options)
}

#[cfg(test)]
mod properties;

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn arguments_are_read_leniently() {
        assert_eq!(
            parse_args(&args(&["--cli", "claude", "Stop"])),
            ("claude".into(), "Stop".into())
        );
        assert_eq!(
            parse_args(&args(&["Stop", "--cli=codex"])),
            ("codex".into(), "Stop".into())
        );
        assert_eq!(parse_args(&[]), ("unknown".into(), "Unknown".into()));
        use std::os::unix::ffi::OsStrExt;
        let odd = std::ffi::OsStr::from_bytes(b"St\xffop").to_os_string();
        assert_eq!(
            parse_args(&[OsString::from("--cli"), odd.clone(), odd]),
            ("St\u{fffd}op".into(), "St\u{fffd}op".into())
        );
    }

    #[test]
    fn the_log_is_private_and_never_written_through_a_link() {
        use std::os::unix::fs::PermissionsExt;
        let run = tempfile::tempdir().expect("run");
        note_failure(run.path(), "first");
        let log = run.path().join("logs/relay.log");
        let mode = std::fs::metadata(&log).expect("log").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::remove_file(&log).expect("rm");
        let elsewhere = run.path().join("elsewhere");
        std::fs::write(&elsewhere, "").expect("target");
        std::os::unix::fs::symlink(&elsewhere, &log).expect("link");
        note_failure(run.path(), "second");
        assert_eq!(std::fs::read(&elsewhere).expect("read"), b"");
    }

    #[test]
    fn a_drop_keeps_its_payload_byte_for_byte() {
        let drop = HookDrop {
            header: DropHeader {
                v: FORMAT,
                ts: 7,
                task: "t\n1".into(),
                cli: "claude".into(),
                native: "Stop".into(),
                capture: false,
            },
            payload: b"{\"a\":1}\n\xff\nsecond line".to_vec(),
        };
        let bytes = drop.to_bytes().expect("bytes");
        assert_eq!(HookDrop::from_bytes(&bytes).expect("reads"), drop);
        assert!(matches!(
            HookDrop::from_bytes(b"{\"v\":1}\n{}"),
            Err(DropError::Header(_))
        ));
        assert!(matches!(
            HookDrop::from_bytes(b"no newline"),
            Err(DropError::NoHeader)
        ));
        let mut later = drop.header.clone();
        later.v = 3;
        let bytes = [later.to_json().into_bytes(), b"\n".to_vec()].concat();
        assert!(matches!(
            HookDrop::from_bytes(&bytes),
            Err(DropError::Version(3))
        ));
    }

    #[test]
    fn file_names_are_one_safe_segment() {
        let drop = HookDrop {
            header: DropHeader {
                v: FORMAT,
                ts: 42,
                task: "../../etc".into(),
                cli: "x".into(),
                native: "a/b c".into(),
                capture: false,
            },
            payload: Vec::new(),
        };
        let name = drop.file_name();
        assert!(name.starts_with("42-etc-a-b-c-"), "{name}");
        assert!(name.ends_with(".drop") && !name.contains('/'), "{name}");
    }
}
