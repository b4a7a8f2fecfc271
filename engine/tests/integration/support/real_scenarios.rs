//! The scenarios every real-CLI test file runs, parameterised by a [`Case`]
//! (what differs per CLI: its Stop-equivalent hook, its error sentences, the
//! tool call that needs a permission, the user's own hook config).

#![allow(dead_code)]

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::real::{Bins, Real, RunOutput, expected_usage, require, wait_for};

/// How the model server (or the network) fails for a fault case.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    Status(u16),
    Drop,
    ClosedPort,
}

#[derive(Debug)]
pub struct Fault {
    pub name: &'static str,
    pub mode: Mode,
    /// The fault kind drover must report (`network`, `overload`, …), or
    /// `none` where the CLI prints no sentence at all and retries until
    /// drover's deadline: then the session must time out with no fault
    /// (rather than a guessed one).
    pub kind: &'static str,
    /// Text of the CLI's own sentence the evidence must contain.
    pub evidence: &'static str,
    /// drover's `--timeout` for this run, in seconds.
    pub timeout_s: u64,
}

pub struct Case {
    pub cli: &'static str,
    /// drover args for every run (e.g. a pinned model).
    pub args: &'static [&'static str],
    /// The wire protocol the CLI speaks to the server.
    pub protocol: &'static str,
    /// drover's `--timeout` for a normal turn, in seconds.
    pub turn_timeout_s: u64,
    /// The CLI's own name for its turn-complete hook event.
    pub stop_event: &'static str,
    /// Whether that event carries the reply text.
    pub stop_carries_reply: bool,
    /// drover args that make the CLI ask before running a tool.
    pub blocked_args: &'static [&'static str],
    /// The tool call (`/__fake/tool` body) that needs a permission.
    pub tool: &'static str,
    pub faults: &'static [Fault],
    /// The user's own hook config files (path in the project, text), with a
    /// hook that appends a line to the given file when the turn ends.
    pub user_hooks: fn(record: &Path) -> Vec<(&'static str, String)>,
    /// Which answered requests the CLI accounts for anywhere drover can
    /// read (all of them, except where a CLI keeps no record of a call).
    pub accounted: fn(request: &Value) -> bool,
}

/// Every answered request is in the CLI's own usage report.
pub fn every_request(_: &Value) -> bool {
    true
}

impl Case {
    /// The model calls after `seq` the server answered and the CLI accounts.
    fn accounted_since(&self, real: &Real, seq: u64) -> Vec<Value> {
        real.server
            .answered_since(seq)
            .into_iter()
            .filter(self.accounted)
            .collect()
    }

    fn timeout(&self) -> Duration {
        Duration::from_secs(self.turn_timeout_s)
    }

    fn args_with(&self, extra: &[&'static str]) -> Vec<&'static str> {
        let mut args = extra.to_vec();
        args.extend_from_slice(self.args);
        args
    }
}

fn context(real: &Real, out: &RunOutput) -> String {
    format!(
        "{:#}\ntook {:.1}s, drover stderr: {}\nstates: {:?}\nrelayed: {:?}\n{}",
        out.doc,
        out.elapsed.as_secs_f64(),
        out.stderr,
        real.states(out.run_id()),
        real.relayed(out.run_id())
            .iter()
            .map(|r| r["native"].clone())
            .collect::<Vec<_>>(),
        real.logs(out.run_id())
    )
}

fn timed(cli: &str, what: &str, started: Instant) {
    eprintln!(
        "[real {cli}] {what}: {:.1}s",
        started.elapsed().as_secs_f64()
    );
}

// ------------------------------------------------------------- headless

/// `drover run` completes with the reply, the conversation id and the
/// usage the server sent; a second run resumes the same conversation.
pub fn headless(case: &Case) {
    let started = Instant::now();
    let Some(real) = Real::new(case.cli) else {
        return;
    };
    let before = real.server.last_seq();
    let first = real.run(case.timeout(), case.args, "Reply with exactly: FIRST");
    assert_eq!(
        (first.status(), first.code),
        ("completed", 0),
        "{}",
        context(&real, &first)
    );
    assert_eq!(first.doc["reply"], "FIRST", "{}", context(&real, &first));
    let conversation = first.doc["session_id"]
        .as_str()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| panic!("no conversation id: {}", context(&real, &first)))
        .to_string();
    let served = case.accounted_since(&real, before);
    assert!(
        served.iter().all(|r| r["protocol"] == case.protocol),
        "{served:?}"
    );
    assert_eq!(
        first.doc["usage"],
        expected_usage(&served),
        "usage of the first run vs the {} requests the server answered: {served:#?}\n{}",
        served.len(),
        context(&real, &first)
    );
    assert_eq!(
        real.states(first.run_id()).last().map(String::as_str),
        Some("done@exit"),
        "{}",
        context(&real, &first)
    );

    let mid = real.server.last_seq();
    let mut args: Vec<&str> = case.args.to_vec();
    args.extend(["--resume", conversation.as_str()]);
    let second = real.run(case.timeout(), &args, "Reply with exactly: SECOND");
    assert_eq!(
        (second.status(), second.code),
        ("completed", 0),
        "{}",
        context(&real, &second)
    );
    assert_eq!(second.doc["reply"], "SECOND", "{}", context(&real, &second));
    assert_eq!(
        second.doc["session_id"],
        conversation.as_str(),
        "the resumed run answered in another conversation: {}",
        context(&real, &second)
    );
    let served = case.accounted_since(&real, mid);
    assert_eq!(
        second.doc["usage"],
        expected_usage(&served),
        "usage of the resumed run vs the {} requests the server answered: {served:#?}\n{}",
        served.len(),
        context(&real, &second)
    );
    timed(case.cli, "headless", started);
}

// ----------------------------------------------------------------- tmux

/// drover installs the hooks, launches the CLI in a pane, types the prompt
/// and completes on the real Stop-equivalent hook; `drover explain` reads
/// the pane as idle before the turn and working during it.
pub fn tmux(case: &Case) {
    let started = Instant::now();
    super::tmux_required();
    let Some(real) = Real::new(case.cli) else {
        return;
    };
    let installed = real.hooks("install");
    assert_eq!(installed["missing"], json!([]), "{installed:#}");
    // A slow answer keeps the turn on screen long enough to read it.
    real.server
        .control("mode", &json!({"mode": "delay", "delay_ms": 3000}));
    let args = case.args_with(&["--workspace", "tmux"]);
    let spawned = Instant::now();
    let mut child = real.spawn_run(case.timeout(), &args, "Reply with exactly: TMUXOK");
    let mut captures: Vec<String> = Vec::new();
    let limit = case.timeout() + Duration::from_secs(60);
    loop {
        if child.try_wait().expect("wait for drover").is_some() {
            break;
        }
        assert!(
            spawned.elapsed() < limit,
            "drover ignored its own --timeout"
        );
        if let Some(screen) = real
            .seat_pane(case.cli)
            .and_then(|pane| real.capture(&pane))
            && captures.last() != Some(&screen)
            && !screen.trim().is_empty()
        {
            captures.push(screen);
        }
        std::thread::sleep(Duration::from_millis(40));
    }
    let out = Real::finish_run(child, spawned);
    assert_eq!(
        (out.status(), out.code),
        ("completed", 0),
        "{}",
        context(&real, &out)
    );
    let conversation = out.doc["session_id"].as_str().unwrap_or_default();
    assert!(!conversation.is_empty(), "{}", context(&real, &out));
    if case.stop_carries_reply {
        assert_eq!(out.doc["reply"], "TMUXOK", "{}", context(&real, &out));
    }
    let relayed = real.relayed(out.run_id());
    assert!(
        relayed.iter().any(|r| r["native"] == case.stop_event),
        "no {} hook was relayed: {}",
        case.stop_event,
        context(&real, &out)
    );
    let states = real.states(out.run_id());
    assert!(
        states.iter().any(|s| s == "done@hook:Stop"),
        "{states:?}\n{}",
        context(&real, &out)
    );

    eprintln!(
        "[real {}] tmux usage {} (server answered {})",
        case.cli,
        out.doc["usage"],
        expected_usage(&real.server.answered_since(0))
    );
    // What `drover explain` says about the screens the pane showed.
    let mut readings = Vec::new();
    let mut idle_at = None;
    let mut working_at = None;
    for (i, screen) in captures.iter().enumerate() {
        let typed = screen.contains("TMUXOK");
        if idle_at.is_some() && working_at.is_some() {
            break;
        }
        if idle_at.is_none() && typed {
            // Past the pre-turn screens without an idle reading.
            break;
        }
        let reading = real.explain(&format!("capture-{i:03}"), screen);
        let state = reading["state"].as_str().unwrap_or_default().to_string();
        if state == "idle" && !typed && idle_at.is_none() {
            idle_at = Some(i);
        }
        if state == "working" && idle_at.is_some() && working_at.is_none() {
            working_at = Some(i);
        }
        readings.push(format!("#{i} {state} ({})", reading["rule"]));
    }
    let dump = || {
        captures
            .iter()
            .enumerate()
            .map(|(i, c)| format!("--- capture #{i}:\n{c}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // The poll (every 40 ms, plus a tmux fork) can miss the ready screen
    // entirely when drover reads it and types within one of its ticks; only
    // then does what drover itself read from that screen (the journal's
    // screen-rule idle, by the same component rules `drover explain`
    // applies) stand in for a capture. A pre-turn capture that does not
    // read idle still fails.
    let missed_every_pre_turn_screen = captures.first().is_some_and(|c| c.contains("TMUXOK"));
    let idle_read_by_drover = states.iter().any(|s| s.starts_with("idle@screen:"));
    assert!(
        idle_at.is_some() || (missed_every_pre_turn_screen && idle_read_by_drover),
        "no capture before the prompt was typed explains as idle: {readings:?}\n{states:?}\n{}",
        dump()
    );
    assert!(
        working_at.is_some(),
        "no capture during the turn explains as working: {readings:?}\n{}",
        dump()
    );
    // drover's teardown leaves no CLI (or daemon of it) behind.
    let left = wait_for(Duration::from_secs(10), || {
        let left = real.cli_leftovers();
        left.is_empty().then_some(())
    });
    assert!(
        left.is_some(),
        "processes survived the session: {:?}",
        real.cli_leftovers()
    );
    timed(case.cli, "tmux", started);
}

// --------------------------------------------------------------- faults

/// Each error mode (and a closed port) ends the session not completed,
/// with the right fault kind and the CLI's own sentence as evidence. The
/// modes run side by side, each in its own tree with its own server.
pub fn faults(case: &'static Case) {
    let started = Instant::now();
    let Some(bins) = require(case.cli) else {
        return;
    };
    let handles: Vec<_> = case
        .faults
        .iter()
        .map(|fault| {
            let bins = bins.clone();
            std::thread::spawn(move || fault_one(case, bins, fault))
        })
        .collect();
    let mut failures = Vec::new();
    for handle in handles {
        match handle.join() {
            Ok(Ok(line)) => eprintln!("[real {}] {line}", case.cli),
            Ok(Err(failure)) => failures.push(failure),
            Err(panic) => failures.push(format!("panicked: {panic:?}")),
        }
    }
    timed(case.cli, "faults", started);
    assert!(
        failures.is_empty(),
        "{} of {} fault cases failed:\n\n{}",
        failures.len(),
        case.faults.len(),
        failures.join("\n\n")
    );
}

fn fault_one(case: &Case, bins: Bins, fault: &Fault) -> Result<String, String> {
    let mut real = Real::with(case.cli, bins);
    match fault.mode {
        Mode::Status(status) => {
            real.server
                .control("mode", &json!({"mode": "error", "status": status}));
        }
        Mode::Drop => {
            real.server
                .control("mode", &json!({"mode": "error", "status": "drop"}));
        }
        Mode::ClosedPort => {
            real.point_at_closed_port();
        }
    }
    let out = real.run(
        Duration::from_secs(fault.timeout_s),
        case.args,
        "Reply with exactly: OK",
    );
    let status = out.status().to_string();
    let kind = out.doc["fault"]["kind"]
        .as_str()
        .unwrap_or("none")
        .to_string();
    let evidence = out.doc["fault"]["evidence"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let line = format!(
        "{}: {status} in {:.1}s, fault {kind} ({}): {evidence}",
        fault.name,
        out.elapsed.as_secs_f64(),
        out.doc["fault"]["rule"].as_str().unwrap_or("-"),
    );
    let ok = if fault.kind == "none" {
        status == "timeout" && out.code == 1 && out.doc["fault"].is_null()
    } else {
        status != "completed"
            && out.code == 1
            && kind == fault.kind
            && evidence.contains(fault.evidence)
    };
    if ok {
        Ok(line)
    } else {
        Err(format!(
            "{line}\n  wanted: not completed, fault {} with evidence containing {:?}\n{}",
            fault.kind,
            fault.evidence,
            context(&real, &out)
        ))
    }
}

// -------------------------------------------------------------- blocked

/// A tool call that needs a permission leaves the seat blocked on a
/// permission prompt: the journal records `blocked:permission`. The seat
/// then waits for a person, so the test stops drover (SIGTERM, as Ctrl-C
/// would) and the result says what the seat was blocked on.
pub fn blocked(case: &Case) {
    let started = Instant::now();
    super::tmux_required();
    let Some(real) = Real::new(case.cli) else {
        return;
    };
    real.hooks("install");
    let tool: Value = serde_json::from_str(case.tool).expect("tool JSON");
    real.server.control("tool", &tool);
    let args = case.args_with(&["--workspace", "tmux"]);
    let args: Vec<&str> = args
        .into_iter()
        .chain(case.blocked_args.iter().copied())
        .collect();
    let spawned = Instant::now();
    let limit = Duration::from_secs(90);
    let child = real.spawn_run(limit, &args, "Reply with exactly: TOOLDONE");
    // The seat's current state, not its first blocked one, and only once the
    // pane shows the prompt: a hook can say "blocked" a moment before the
    // dialog is drawn, while the screen still shows the turn working
    // (Copilot), and the screen then moves the seat back to working.
    let seen = wait_for(limit, || {
        let run = real.newest_run()?;
        let last = real.states(&run).last()?.clone();
        if last.starts_with("unknown@verdict") {
            return Some(last);
        }
        let screen = real.seat_pane(case.cli).and_then(|p| real.capture(&p))?;
        let shown = real.explain("blocked-check", &screen);
        (last.starts_with("blocked:permission@") && shown["state"] == "blocked").then_some(last)
    });
    if seen.as_deref().is_some_and(|s| s.starts_with("blocked:")) {
        // SAFETY: kill(2) on the drover child this test started.
        unsafe {
            libc::kill(child.id() as i32, libc::SIGTERM);
        }
    }
    let out = Real::finish_run(child, spawned);
    let states = real.states(out.run_id());
    assert!(
        states.iter().any(|s| s.starts_with("blocked:permission@")),
        "{states:?}\n{}",
        context(&real, &out)
    );
    assert_ne!(out.status(), "completed", "{}", context(&real, &out));
    assert_ne!(out.code, 0);
    assert_eq!(out.doc["blocked"], "permission", "{}", context(&real, &out));
    assert!(
        !real.work.join("hi.txt").exists(),
        "the tool ran although nobody approved it"
    );
    eprintln!("[real {}] blocked: {states:?}", case.cli);
    timed(case.cli, "blocked", started);
}

// ---------------------------------------------------------------- hooks

/// `drover hooks install` merges drover's relay into the user's own hook
/// config; the real CLI accepts the result (drover's relay and the user's
/// hook both fire); `drover hooks remove` restores the user's bytes.
pub fn hooks(case: &Case) {
    let started = Instant::now();
    let Some(real) = Real::new(case.cli) else {
        return;
    };
    let record = real.root.path().join("user-hook.log");
    let files = (case.user_hooks)(&record);
    for (rel, text) in &files {
        let path = real.work.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, text).expect("write the user's config");
    }
    let installed = real.hooks("install");
    assert_eq!(installed["missing"], json!([]), "{installed:#}");
    assert_eq!(installed["change"], "written", "{installed:#}");
    let config = real
        .work
        .join(installed["config_path"].as_str().unwrap_or_default());

    let out = real.run(case.timeout(), case.args, "Reply with exactly: HOOKED");
    assert_eq!(
        (out.status(), out.code),
        ("completed", 0),
        "{}",
        context(&real, &out)
    );
    let relayed = real.relayed(out.run_id());
    assert!(
        relayed
            .iter()
            .any(|r| r["native"] == case.stop_event && r["task"] == case.cli),
        "the CLI did not run drover's {} hook: {}",
        case.stop_event,
        context(&real, &out)
    );
    let fired = wait_for(Duration::from_secs(10), || {
        std::fs::read_to_string(&record)
            .ok()
            .filter(|t| t.contains("user-stop"))
    });
    assert!(
        fired.is_some(),
        "the user's own hook did not fire next to drover's: {}",
        context(&real, &out)
    );

    let removed = real.hooks("remove");
    assert_eq!(removed["registered"], json!([]), "{removed:#}");
    for (rel, text) in &files {
        let now = std::fs::read_to_string(real.work.join(rel)).unwrap_or_default();
        assert_eq!(
            &now, text,
            "drover hooks remove did not restore {rel} byte for byte"
        );
    }
    if !files.iter().any(|(rel, _)| real.work.join(rel) == config) {
        assert!(
            !config.exists(),
            "{} was drover's own file and should be gone",
            config.display()
        );
    }
    timed(case.cli, "hooks", started);
}

// ---------------------------------------------------------------- probe

/// `drover probe-adapter <cli> --probe` against the real CLI: one turn in a
/// scratch workspace captures the real hook payloads, the component parses
/// the Stop-equivalent one, the transcript is found from the payloads and
/// its usage matches what the server sent; no value (the reply, the home
/// path) reaches the report, and the scratch workspace is gone afterwards.
pub fn probe(case: &Case) {
    let started = Instant::now();
    let Some(real) = Real::new(case.cli) else {
        return;
    };
    let before = real.server.last_seq();
    let timeout = format!("{}s", case.turn_timeout_s);
    let mut args = vec!["probe-adapter", case.cli, "--probe", "--json", "--timeout"];
    args.push(&timeout);
    args.extend_from_slice(case.args);
    let out = real.output(&args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    let doc: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    assert_eq!(doc["mode"], "probe", "{doc:#}");

    let captured = doc["hooks"]["captured"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let stop = captured
        .iter()
        .find(|c| c["native"] == case.stop_event)
        .unwrap_or_else(|| panic!("no {} payload captured: {doc:#}", case.stop_event));
    assert_eq!(stop["adapter_kind"], "stop", "{stop:#}");
    assert!(
        stop["fields_found"]
            .as_array()
            .is_some_and(|f| !f.is_empty()),
        "the adapter read no field of the real {} payload: {stop:#}",
        case.stop_event
    );
    assert!(
        doc["transcript"]["file"]["size_bytes"]
            .as_u64()
            .unwrap_or(0)
            > 0,
        "no transcript found from the payloads: {doc:#}"
    );
    let served = case.accounted_since(&real, before);
    let expected = expected_usage(&served);
    let parsed = &doc["tokens"]["parsed_usage"];
    for key in ["input", "output", "cache_read", "cache_write", "reasoning"] {
        assert_eq!(
            parsed[key],
            expected[key],
            "{key}: the component's reading of the real transcript vs the server's {} requests: {doc:#}",
            served.len()
        );
    }

    // Schemas, never values.
    assert!(
        !stdout.contains("Reply with exactly"),
        "the prompt leaked into the report"
    );
    assert!(
        !stdout.contains(&real.home.display().to_string()),
        "the home path leaked into the report"
    );
    let left = super::probe_leftovers(&real.tmp);
    assert!(left.is_empty(), "scratch workspace left behind: {left:?}");
    timed(case.cli, "probe", started);
}

/// `drover up` on tmux with a fresh config home (nothing pre-accepted):
/// every first-run dialog becomes a question read by the screen rules
/// `dialogs` names, in order, and is answered through `drover answer` with
/// the option of kind `prefer` (else the first that lets the CLI go on);
/// then a message completes with its reply.
pub fn fresh_config(case: &Case, dialogs: &[&str], prefer: &str) {
    super::tmux_required();
    let Some(real) = Real::fresh(case.cli) else {
        return;
    };
    let installed = real.hooks("install");
    assert_eq!(installed["missing"], json!([]), "{installed:#}");
    let mut args = vec![
        "up",
        "fresh",
        "--cli",
        case.cli,
        "--workspace",
        "tmux",
        "--json",
    ];
    args.extend_from_slice(case.args);
    let out = real.output(&args);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "up --json: {e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let mut state = doc["state"].as_str().unwrap_or_default().to_string();
    let mut question = doc["question"].clone();
    let mut seen: Vec<String> = Vec::new();
    let mut trail = vec![doc.clone()];
    while state != "idle" {
        assert!(
            state == "blocked" && question.is_object() && seen.len() <= dialogs.len(),
            "the seat is {state} after {seen:?}, expected {dialogs:?}: {trail:#?}"
        );
        seen.push(question["tool"].as_str().unwrap_or_default().to_string());
        let kinds: Vec<&str> = question["options"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| o["kind"].as_str())
            .collect();
        let pick = [prefer, "allow_once", "allow_always"]
            .into_iter()
            .find(|k| kinds.contains(k))
            .unwrap_or_else(|| panic!("no option lets {} go on: {question:#}", case.cli));
        let out = real.output(&["answer", "fresh", pick, "--json"]);
        let answered: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "answer {pick}: {e}: {}{}\n{trail:#?}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        trail.push(answered.clone());
        state = answered["now"].as_str().unwrap_or_default().to_string();
        question = answered["next_question"].clone();
        if state == "unknown" {
            // Not settled within the answer's wait (a CLI that restarts
            // itself): the journal says what came next.
            let settled = wait_for(Duration::from_secs(60), || {
                let out = real.output(&["seats", "--json"]);
                let all: Value = serde_json::from_slice(&out.stdout).ok()?;
                let seat = all["seats"][0].clone();
                matches!(seat["state"].as_str(), Some("idle" | "blocked")).then_some(seat)
            })
            .unwrap_or_else(|| {
                let screen = real.seat_pane("fresh").and_then(|pane| real.capture(&pane));
                panic!("the seat never settled after {seen:?}: {trail:#?}\nits pane: {screen:?}")
            });
            state = settled["state"].as_str().unwrap_or_default().to_string();
            question = settled["question"].clone();
        }
    }
    assert_eq!(seen, dialogs, "{trail:#?}");
    let out = real.output(&["send", "--json", "fresh", "Reply with exactly: FRESHOK"]);
    let sent: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(
        sent["status"],
        "completed",
        "{sent:#}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if case.stop_carries_reply {
        assert_eq!(sent["reply"], "FRESHOK", "{sent:#}");
    }
    let down = real.output(&["down", "fresh"]);
    assert!(
        down.status.success(),
        "{}",
        String::from_utf8_lossy(&down.stderr)
    );
}
