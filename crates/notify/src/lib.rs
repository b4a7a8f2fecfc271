//! Notifications: reaching a person when a seat blocks or a run ends.
//!
//! They come from the journal. Whichever process appends a line that some
//! `[[notify]]` entry asks for (the live driver, or `drover status` /
//! `drover events --follow` settling a run whose drover died) kicks a
//! detached dispatcher (`drover notify-dispatch`), so a slow or hanging
//! notifier never delays a session. The dispatcher claims each (line, entry)
//! pair by creating `<run>/notify/<ts>-<task>-<entry>.json` exclusively —
//! whoever creates it sends, nobody else does — delivers with a bound
//! ([`deliver::BOUND`]), and records the outcome in that same file.

pub mod config;
mod deliver;

use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value, json};

pub use config::{Entry, Notifiers, Target};
pub use deliver::desktop_notifier;

use drover_run::{Record, RunDir, RunInfo, Transition, follow};
use drover_types::wit::SeatState;

/// The `on` names a journal line answers to, most specific first.
pub fn events_of(line: &Transition) -> Vec<&'static str> {
    let named = |s: &str| config::EVENTS.iter().copied().find(|e| *e == s);
    match &line.record {
        // The prompt kinds and source drover's own pauses journal (a
        // reached budget; a rate limit waited out, and its end).
        Record::State { state, prompt_kind } => match (state, prompt_kind.as_deref()) {
            (SeatState::Blocked, Some("budget")) => vec!["budget", "blocked"],
            (SeatState::Blocked, Some("waiting")) => vec!["suspended", "blocked"],
            (SeatState::Blocked, _) => vec!["blocked"],
            (SeatState::Idle, _) if line.source == "resume" => vec!["resumed"],
            (SeatState::Done, _) => vec!["done"],
            _ => Vec::new(),
        },
        Record::Verdict { verdict } => {
            let mut events: Vec<&'static str> = named(verdict.as_str()).into_iter().collect();
            if line.detail.get("fault").is_some_and(|f| !f.is_null()) {
                events.push("fault");
            }
            events
        }
        Record::Event { .. } | Record::Answer { .. } => Vec::new(),
    }
}

/// Starts a dispatcher for `line` if an entry asks for it. Never fails and
/// never waits: notifying is not the session's business.
pub fn kick(project: &Path, run_id: &str, line: &Transition) {
    let events = events_of(line);
    if events.is_empty() {
        return;
    }
    let notifiers = Notifiers::load(project);
    if !notifiers.entries.iter().any(|e| e.wants(&events).is_some()) {
        return;
    }
    // Only the drover binary has the dispatcher; a test binary linking the
    // library would read `notify-dispatch` as a test filter.
    let Some(exe) = std::env::current_exe()
        .ok()
        .filter(|e| e.file_stem().is_some_and(|s| s == "drover"))
    else {
        return;
    };
    let spawned = std::process::Command::new(exe)
        .arg("--project")
        .arg(project)
        .args(["notify-dispatch", run_id, &line.task, &line.ts.to_string()])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        // Out of the terminal's process group: Ctrl-C on the session does
        // not cut a notification short.
        .process_group(0)
        .spawn();
    match spawned {
        // Reaped on a thread so a long-lived kicker leaves no zombies.
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
        }
        Err(e) => tracing::warn!("cannot start the notification dispatcher: {e}"),
    }
}

/// What happened to one (line, entry) pair.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Delivery {
    pub entry: String,
    pub kind: &'static str,
    pub event: String,
    /// `sent`, `failed` or `skipped` (this notifier does not apply here).
    pub status: &'static str,
    pub detail: String,
    pub elapsed_ms: u64,
}

/// Sends `run`'s line (`task`, `ts`) to every configured entry that asks
/// for it and that nobody has claimed yet.
pub fn dispatch(project: &Path, run_id: &str, task: &str, ts: u64) -> Vec<Delivery> {
    send(project, run_id, task, ts, Notifiers::load(project))
}

fn send(project: &Path, run_id: &str, task: &str, ts: u64, notifiers: Notifiers) -> Vec<Delivery> {
    let Ok(run) = RunDir::open(project, run_id) else {
        return Vec::new();
    };
    let Ok(info) = run.read_info() else {
        return Vec::new();
    };
    let (lines, _) = follow::read_from(&run.journal_path(), 0);
    let Some((line, fields)) = lines
        .into_iter()
        .find(|(t, _)| t.task == task && t.ts == ts)
    else {
        return Vec::new();
    };
    let events = events_of(&line);
    let mut workers = Vec::new();
    for entry in notifiers.entries {
        let Some(event) = entry.wants(&events) else {
            continue;
        };
        let Some(claim) = Claim::take(&run, &line, &entry) else {
            continue;
        };
        let doc = document(project, &info, &line, &fields, event);
        let project = project.to_path_buf();
        let info = info.clone();
        workers.push(std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let (status, detail) = match deliver::deliver(&entry, &doc, &project, &info) {
                Ok(deliver::Sent::Sent(detail)) => ("sent", detail),
                Ok(deliver::Sent::Skipped(detail)) => ("skipped", detail),
                Err(detail) => ("failed", detail),
            };
            let delivery = Delivery {
                entry: entry.id.clone(),
                kind: entry.target.kind(),
                event: event.to_string(),
                status,
                detail,
                elapsed_ms: started.elapsed().as_millis() as u64,
            };
            claim.settle(&delivery);
            delivery
        }));
    }
    workers.into_iter().filter_map(|w| w.join().ok()).collect()
}

/// The JSON document a webhook receives and a command reads on stdin: the
/// journal line as `drover events --json` prints it, plus the event it
/// matched, the project, the run's CLI and workspace, and a sentence.
pub fn document(
    project: &Path,
    info: &RunInfo,
    line: &Transition,
    fields: &Map<String, Value>,
    event: &str,
) -> Value {
    let seat = follow::seat_of(&info.run_id, &line.task);
    let mut doc = drover_run::RunEvent {
        run: info.run_id.clone(),
        seat: seat.clone(),
        transition: line.clone(),
        fields: fields.clone(),
    }
    .to_json();
    let who = match &seat {
        Some(nick) => format!("seat {nick}"),
        None => format!("task {} of run {}", line.task, info.run_id),
    };
    let reason = line
        .detail
        .get("reason")
        .and_then(Value::as_str)
        .map(|r| format!(": {r}"))
        .unwrap_or_default();
    let text = match event {
        "blocked" => format!(
            "{who} is blocked on a {} prompt{}",
            line.prompt_kind().unwrap_or("other"),
            line.evidence()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        ),
        "done" => format!("{who} finished its turn"),
        _ => format!("{who} {}{reason}", line.record.value()),
    };
    if let Value::Object(map) = &mut doc {
        map.insert("event".to_string(), json!(event));
        map.insert("project".to_string(), json!(project));
        map.insert("cli".to_string(), json!(info.cli));
        map.insert("workspace".to_string(), json!(info.workspace));
        map.insert(
            "text".to_string(),
            json!(drover_run::status::clean_evidence(&format!(
                "drover: {text}"
            ))),
        );
    }
    doc
}

/// A claimed (line, entry) pair: its ledger file exists, and only we send.
struct Claim {
    path: std::path::PathBuf,
    base: Value,
}

impl Claim {
    fn take(run: &RunDir, line: &Transition, entry: &Entry) -> Option<Claim> {
        let dir = run.root().join("notify");
        std::fs::create_dir_all(&dir).ok()?;
        let name = format!(
            "{}-{}-{}.json",
            line.ts,
            drover_run::safe_segment(&line.task),
            entry.id
        );
        let path = dir.join(name);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .ok()?;
        let base = json!({
            "entry": entry.id, "at": entry.at, "kind": entry.target.kind(),
            "task": line.task, "ts": line.ts,
        });
        let mut first = base.clone();
        first["status"] = json!("sending");
        let _ = writeln!(file, "{first}");
        Some(Claim { path, base })
    }

    fn settle(self, delivery: &Delivery) {
        let mut record = self.base;
        record["event"] = json!(delivery.event);
        record["status"] = json!(delivery.status);
        record["detail"] = json!(delivery.detail);
        record["elapsed_ms"] = json!(delivery.elapsed_ms);
        record["done_ns"] = json!(drover_run::now_ns());
        if let Err(e) = drover_run::write_json_atomic(&self.path, &record) {
            tracing::warn!(path = %self.path.display(), "cannot record a notification: {e}");
        }
    }
}

/// The ledger of a run: one record per (line, entry) a dispatcher claimed.
pub fn ledger(run: &RunDir) -> Vec<Value> {
    let mut records: Vec<Value> = std::fs::read_dir(run.root().join("notify"))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter_map(|e| std::fs::read_to_string(e.path()).ok())
                .filter_map(|t| serde_json::from_str(&t).ok())
                .collect()
        })
        .unwrap_or_default();
    records.sort_by_key(|r| r["ts"].as_u64());
    records
}

#[cfg(test)]
mod tests {
    use super::*;
    use drover_run::Journal;
    use drover_types::Verdict;

    fn run(project: &Path) -> RunDir {
        let run = RunDir::create(project, "seat-dev-1").expect("run");
        run.write_info(&RunInfo {
            run_id: "seat-dev-1".into(),
            created_ns: 0,
            cli: "claude".into(),
            workspace: drover_types::WorkspaceKind::Headless,
            project: project.to_path_buf(),
            tasks: vec!["dev".into()],
            driver_pid: 0,
            driver_start: None,
        })
        .expect("info");
        run
    }

    fn state(state: SeatState) -> Record {
        Record::State {
            state,
            prompt_kind: None,
        }
    }

    fn verdict(verdict: Verdict) -> Record {
        Record::Verdict { verdict }
    }

    #[test]
    fn lines_map_to_events() {
        let line = |record: Record, detail: Value| Transition {
            ts: 1,
            task: "t".into(),
            record,
            source: "x".into(),
            detail,
            origin: None,
        };
        assert_eq!(
            events_of(&line(state(SeatState::Blocked), Value::Null)),
            ["blocked"]
        );
        assert!(events_of(&line(state(SeatState::Working), Value::Null)).is_empty());
        let paused = |kind: &str| Record::State {
            state: SeatState::Blocked,
            prompt_kind: Some(kind.to_string()),
        };
        assert_eq!(
            events_of(&line(paused("budget"), Value::Null)),
            ["budget", "blocked"]
        );
        assert_eq!(
            events_of(&line(paused("waiting"), Value::Null)),
            ["suspended", "blocked"]
        );
        let mut resumed = line(state(SeatState::Idle), Value::Null);
        resumed.source = "resume".into();
        assert_eq!(events_of(&resumed), ["resumed"]);
        assert!(events_of(&line(state(SeatState::Idle), Value::Null)).is_empty());
        assert_eq!(
            events_of(&line(
                verdict(Verdict::Stalled),
                json!({"reason": "r", "fault": "rate-limit"})
            )),
            ["stalled", "fault"]
        );
        assert_eq!(
            events_of(&line(verdict(Verdict::Completed), json!({"fault": null}))),
            ["completed"]
        );
    }

    #[test]
    fn a_line_is_sent_once_per_entry_and_recorded() {
        let project = tempfile::tempdir().expect("tempdir");
        let out = project.path().join("got.jsonl");
        let user = drover_config::ConfigFile::parse(
            Path::new("/u/config.toml"),
            drover_config::Scope::User,
            format!(
                "[[notify]]\nkind = \"command\"\nargv = [\"sh\", \"-c\", \"cat >> {}; echo >> {}\"]\non = [\"blocked\"]\n",
                out.display(),
                out.display()
            ),
            |_, _| false,
        )
        .expect("config");
        let config = drover_config::Config {
            user: Some(user),
            project: None,
        };
        let notifiers = || Notifiers::from_config(&config);
        let run = run(project.path());
        let mut journal = Journal::open(run.journal_path());
        journal.record(
            "dev",
            SeatState::Blocked,
            Some("permission"),
            "hook:PermissionRequest",
            json!({"evidence": "Bash"}),
        );
        let line = journal.last_written().cloned().expect("written");
        let first = send(project.path(), "seat-dev-1", "dev", line.ts, notifiers());
        let again = send(project.path(), "seat-dev-1", "dev", line.ts, notifiers());
        assert_eq!(
            first.iter().map(|d| d.status).collect::<Vec<_>>(),
            ["sent"],
            "{first:?}"
        );
        assert!(again.is_empty(), "sent twice: {again:?}");
        let got: Vec<Value> = std::fs::read_to_string(&out)
            .expect("the command ran")
            .lines()
            .filter(|l| !l.is_empty())
            .map(|l| serde_json::from_str(l).expect("one JSON document"))
            .collect();
        assert_eq!(got.len(), 1);
        assert_eq!(
            (
                got[0]["event"].as_str(),
                got[0]["seat"].as_str(),
                got[0]["prompt_kind"].as_str(),
                got[0]["text"].as_str()
            ),
            (
                Some("blocked"),
                Some("dev"),
                Some("permission"),
                Some("drover: seat dev is blocked on a permission prompt: Bash")
            )
        );
        let ledger = ledger(&run);
        assert_eq!(ledger.len(), 1);
        assert_eq!(ledger[0]["status"], "sent");
    }
}
