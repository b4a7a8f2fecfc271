//! `scripted-cli`: behaves like a coding CLI, in Claude Code's formats, so
//! drover's built-in `claude` adapter drives it end to end.
//!
//! - `scripted-cli -p PROMPT --output-format json [--resume ID | --session-id UUID]`
//!   runs one headless turn and prints Claude's result object.
//! - `scripted-cli [--resume ID]` is interactive: a `❯` prompt in the
//!   terminal, a spinner while working, `● reply` when done.
//!
//! Both read hooks from `<cwd>/.scripted/settings.json` (Claude's settings shape)
//! and fire real-shaped payloads (SessionStart, UserPromptSubmit, Stop,
//! StopFailure, SubagentStop, PermissionRequest, Notification, SessionEnd), and
//! write a real-shaped transcript under `~/.scripted-cli/projects/<slug>/<id>.jsonl`
//! (its own directories, so it never touches a real Claude Code setup).
//!
//! Directives in the prompt script the turn:
//! `Reply with exactly: X` (reply X: the rest of the line without the
//! directives; else OK), `@sleep=MS` (work that long),
//! `@hang` (never finish), `@crash` (exit 3 mid-turn), `@exit-early` (exit 0
//! before finishing), `@no-stop` (finish without a Stop hook),
//! `@subagent-stops=N` (fire N subagent stops first), `@fault=529|500|429|401|refused|reset`
//! (fail with Claude's sentence), `@blocked` (ask permission; with
//! `@escapes`, over ACP, a hostile agent's question whose option ids, names
//! and command carry an OSC 52 clipboard write and a screen clear), `@write=PATH`
//! (write `{"ok":true}` to PATH, relative to the cwd), `@write-after-nudge=PATH`
//! (write it only on a later turn), `@quiet=MS` (print nothing while working),
//! `@usage-first` (write the turn's usage to the transcript before working),
//! `@hold=PATH` (after the sleep, keep working until PATH exists, relative to
//! the cwd: a test ends the turn when it has seen what it needs, however
//! slow the machine),
//! `@end-session` (fire SessionEnd and exit after the turn's work),
//! `@limit-once=SECS` (the first turn in this directory fails with Claude's
//! usage-limit sentence, resetting SECS from now; later ones do not),
//! `@limit=SECS` (every turn fails so),
//! `@reply=X` (reply X whatever the prompt says), `@as-root` (behave as
//! Claude Code does under root: refuse the bypass flags unless
//! `IS_SANDBOX=1`, with its sentence, exit 1).
//! `@write` happens before `@crash`, so a crash can leave a result behind.
//!
//! Two directives act when the interactive CLI starts, so they come from
//! `SCRIPTED_CLI_DIRECTIVES`: `@first-run-dialog` opens on Claude Code
//! 2.1.332's one-time Bypass Permissions warning (`No, exit` highlighted,
//! `Yes, I accept` one Down away; Enter exits on the first), and
//! `@unreadable-screen` shows a screen no rule reads, forever, writing
//! whatever is typed into it to `.scripted/typed-into-unread-screen.txt`.
//!
//! Three more start-up directives stand in for a message that does not
//! arrive (drover's proof of delivery, docs/sessions.md): `@drop-first-enter`
//! ignores the first submitted line (no hook fires; the text stays on the
//! screen where it was typed, as an input line whose Enter was lost);
//! `@never-accept` ignores every one; `@copy-mode` puts its own tmux pane
//! in copy mode (`tmux copy-mode -t $TMUX_PANE`) once it first draws its
//! prompt, so a paste still reaches the terminal but the Enter goes to copy
//! mode and the line is never submitted until copy mode is left.
//!
//! `scripted-cli --acp` is an Agent Client Protocol agent instead (see
//! `acp.rs`).
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a stand-in program for the tests (a fake CLI or server), not drover: its output is what the tests read"
)]

mod acp;

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

const INPUT: u64 = 1201;
const CACHE_WRITE: u64 = 1302;
const CACHE_READ: u64 = 1403;
const OUTPUT: u64 = 57;
// A real Claude model id (the one Claude Code 2.1.332 reported in
// tests/fixtures/real/claude), so a scripted run is priced like a real one;
// `--model ID` reports ID instead, as given (no alias is resolved).
const DEFAULT_MODEL: &str = "claude-opus-5-5";
static MODEL: std::sync::OnceLock<String> = std::sync::OnceLock::new();

fn model() -> &'static str {
    MODEL.get().map_or(DEFAULT_MODEL, String::as_str)
}

struct Options {
    /// `--permission-mode bypassPermissions` or `--dangerously-skip-permissions`.
    bypass: bool,
    headless_prompt: Option<String>,
    resume: Option<String>,
    preset: Option<String>,
    initial_prompt: Option<String>,
}

fn parse_args() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut o = Options {
        bypass: false,
        headless_prompt: None,
        resume: None,
        preset: None,
        initial_prompt: None,
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--version" | "-v" => {
                println!("2.1.332 (Scripted Code)");
                std::process::exit(0);
            }
            "--help" | "-h" => {
                println!(
                    "Usage: scripted-cli [options] [prompt]\n\nA scripted stand-in for a coding CLI.\n\nOptions:\n  -p, --print <prompt>     one headless turn\n  --output-format <fmt>    json\n  --resume <id>            continue a conversation\n  --session-id <uuid>      id for a new conversation\n  --model <m>              the model id to report\n  --permission-mode <m>    ignored"
                );
                std::process::exit(0);
            }
            "--acp" => std::process::exit(acp::serve()),
            "-p" | "--print" => o.headless_prompt = Some(args.next().ok_or("-p needs a prompt")?),
            "--resume" | "-r" => o.resume = Some(args.next().ok_or("--resume needs an id")?),
            "--session-id" => o.preset = Some(args.next().ok_or("--session-id needs an id")?),
            "--permission-mode" => {
                o.bypass |= args.next().as_deref() == Some("bypassPermissions");
            }
            "--dangerously-skip-permissions" => o.bypass = true,
            "--model" => {
                let id = args.next().ok_or("--model needs a model")?;
                let _ = MODEL.set(id);
            }
            "--output-format" | "--allowedTools" => {
                args.next();
            }
            other if other.starts_with('-') => {
                return Err(format!("error: unknown option '{other}'"));
            }
            other => o.initial_prompt = Some(other.to_string()),
        }
    }
    Ok(o)
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        let _ = f.read_exact(&mut buf);
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

fn uuid() -> String {
    let h = random_hex(16);
    format!(
        "{}-{}-4{}-a{}-{}",
        &h[..8],
        &h[8..12],
        &h[13..16],
        &h[17..20],
        &h[20..32]
    )
}

fn timestamp() -> String {
    let secs = (now_ns() / 1_000_000_000) as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.000Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// What the prompt asks for.
#[derive(Default)]
struct Script {
    reply: String,
    sleep: Duration,
    hang: bool,
    crash: bool,
    exit_early: bool,
    no_stop: bool,
    subagent_stops: u32,
    fault: Option<String>,
    blocked: bool,
    escapes: bool,
    write: Option<PathBuf>,
    write_after_nudge: Option<PathBuf>,
    quiet: Option<Duration>,
    hold: Option<PathBuf>,
    usage_first: bool,
    end_session: bool,
    limit_once: Option<u64>,
    limit: Option<u64>,
}

/// Directives from the prompt, plus any in `SCRIPTED_CLI_DIRECTIVES` (for
/// callers that cannot choose the prompt, like probe-adapter).
fn script(prompt: &str) -> Script {
    let extra = std::env::var("SCRIPTED_CLI_DIRECTIVES").unwrap_or_default();
    let prompt = &format!("{prompt} {extra}");
    let mut s = Script {
        reply: "OK".to_string(),
        sleep: Duration::from_millis(200),
        ..Script::default()
    };
    if let Some(at) = prompt.find("Reply with exactly:") {
        // The rest of that line without the `@directives`, as the model
        // server answers it (docs/model-server.md).
        let line = prompt[at + "Reply with exactly:".len()..]
            .lines()
            .next()
            .unwrap_or_default();
        let words: Vec<&str> = line
            .split_whitespace()
            .filter(|w| !w.starts_with('@'))
            .collect();
        let reply = words.join(" ");
        let reply = reply.trim_matches(|c| c == '"' || c == '\'');
        if !reply.is_empty() {
            s.reply = reply.to_string();
        }
    }
    for token in prompt.split_whitespace().filter(|t| t.starts_with('@')) {
        let (name, value) = token[1..].split_once('=').unwrap_or((&token[1..], ""));
        let ms = |v: &str| Duration::from_millis(v.parse().unwrap_or(0));
        match name {
            "sleep" => s.sleep = ms(value),
            "hang" => s.hang = true,
            "crash" => s.crash = true,
            "exit-early" => s.exit_early = true,
            "no-stop" => s.no_stop = true,
            "subagent-stops" => s.subagent_stops = value.parse().unwrap_or(1),
            "fault" => s.fault = Some(value.to_string()),
            "blocked" => s.blocked = true,
            "escapes" => s.escapes = true,
            "write" => s.write = Some(PathBuf::from(value)),
            "write-after-nudge" => s.write_after_nudge = Some(PathBuf::from(value)),
            "quiet" => s.quiet = Some(ms(value)),
            "hold" => s.hold = Some(PathBuf::from(value)),
            "reply" => s.reply = value.to_string(),
            "usage-first" => s.usage_first = true,
            "end-session" => s.end_session = true,
            "limit-once" => s.limit_once = value.parse().ok(),
            "limit" => s.limit = value.parse().ok(),
            _ => {}
        }
    }
    s
}

/// The turn's fault: `@limit-once=SECS` the first time it is seen in this
/// directory (Claude's usage-limit sentence with its reset time, as
/// anthropics/claude-code#11429 quotes it), else `@fault=KIND`'s.
fn turn_fault(s: &Script, cwd: &Path) -> Option<(String, &'static str, u16)> {
    let limited = |secs: u64| {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Some((
            format!("Claude AI usage limit reached|{}", now + secs),
            "rate_limit",
            429,
        ))
    };
    if let Some(secs) = s.limit {
        return limited(secs);
    }
    if let Some(secs) = s.limit_once {
        let marker = cwd.join(".scripted").join("limit-once-seen");
        if !marker.exists() {
            let _ = std::fs::create_dir_all(cwd.join(".scripted"));
            let _ = std::fs::write(&marker, b"");
            return limited(secs);
        }
    }
    s.fault.as_deref().map(|kind| {
        let (sentence, error, status) = fault_sentence(kind);
        (sentence.to_string(), error, status)
    })
}

/// Claude's sentences for each fault (docs/adapters/), and the
/// StopFailure `error` kind.
fn fault_sentence(kind: &str) -> (&'static str, &'static str, u16) {
    match kind {
        "529" => (
            "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:18001).",
            "server_error",
            529,
        ),
        "500" => (
            "API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:18001).",
            "server_error",
            500,
        ),
        "429" => (
            "API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit",
            "rate_limit",
            429,
        ),
        "401" => (
            "Invalid API key · Fix external API key",
            "authentication_failed",
            401,
        ),
        "reset" => (
            "API Error: Connection dropped (ECONNRESET). Check the gateway set in ANTHROPIC_BASE_URL, then try again.",
            "server_error",
            0,
        ),
        _ => (
            "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)",
            "server_error",
            0,
        ),
    }
}

struct Seat {
    cwd: PathBuf,
    session: String,
    transcript: PathBuf,
    turn: u32,
}

impl Seat {
    fn new(resume: Option<String>, preset: Option<String>) -> Seat {
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let session = resume.clone().or(preset).unwrap_or_else(uuid);
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        let slug = cwd.to_string_lossy().replace(['/', '.'], "-");
        let transcript = home
            .join(".scripted-cli")
            .join("projects")
            .join(slug)
            .join(format!("{session}.jsonl"));
        Seat {
            cwd,
            session,
            transcript,
            turn: 0,
        }
    }

    fn base(&self, event: &str) -> Value {
        json!({
            "session_id": self.session,
            "transcript_path": self.transcript.to_string_lossy(),
            "cwd": self.cwd.to_string_lossy(),
            "hook_event_name": event,
        })
    }

    fn hook(&self, event: &str, extra: Value) {
        let mut payload = self.base(event);
        if let (Some(obj), Value::Object(more)) = (payload.as_object_mut(), extra) {
            obj.extend(more);
        }
        let text = payload.to_string();
        for command in hook_commands(&self.cwd, event) {
            let child = Command::new("sh")
                .arg("-c")
                .arg(&command)
                .current_dir(&self.cwd)
                .env("CLAUDE_PROJECT_DIR", &self.cwd)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            if let Ok(mut child) = child {
                if let Some(mut stdin) = child.stdin.take() {
                    let _ = stdin.write_all(text.as_bytes());
                }
                let _ = child.wait();
            }
        }
    }

    fn append(&self, row: Value) {
        if let Some(dir) = self.transcript.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.transcript)
        {
            let _ = writeln!(f, "{row}");
        }
    }

    /// Writes the user row and the assistant reply (two content blocks that
    /// share one request, as Claude writes them).
    fn record_turn(&mut self, prompt: &str, reply: &str) {
        self.turn += 1;
        let ts = timestamp();
        self.append(json!({"type": "user", "sessionId": self.session, "timestamp": ts, "message": {"role": "user", "content": prompt}}));
        let id = format!("msg_{}", random_hex(8));
        let request = format!("req_{}", random_hex(8));
        let usage = json!({"input_tokens": INPUT, "cache_creation_input_tokens": CACHE_WRITE, "cache_read_input_tokens": CACHE_READ, "output_tokens": OUTPUT});
        for content in [
            json!([{"type": "thinking", "thinking": "…"}]),
            json!([{"type": "text", "text": reply}]),
        ] {
            self.append(json!({"type": "assistant", "sessionId": self.session, "timestamp": ts, "requestId": request, "message": {"id": id, "model": model(), "role": "assistant", "content": content, "usage": usage}}));
        }
        self.append(json!({"type": "cost-state", "sessionId": self.session, "modelUsage": {model(): {"inputTokens": INPUT * u64::from(self.turn)}}}));
    }

    fn error_row(&self, sentence: &str) {
        self.append(json!({"type": "assistant", "sessionId": self.session, "timestamp": timestamp(), "isApiErrorMessage": true, "error": "server_error", "message": {"id": format!("err_{}", random_hex(4)), "model": "<synthetic>", "role": "assistant", "content": [{"type": "text", "text": sentence}], "usage": {"input_tokens": 0, "output_tokens": 0}}}));
    }
}

/// Commands registered for `event` in the project's `.scripted/settings.json`
/// (Claude Code's settings shape). Only the project file is read, so the
/// stand-in never fires hooks meant for a real CLI.
fn hook_commands(cwd: &Path, event: &str) -> Vec<String> {
    let file = cwd.join(".scripted").join("settings.json");
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Vec::new();
    };
    let Ok(value) = serde_json::from_str::<Value>(&text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for group in value
        .get("hooks")
        .and_then(|h| h.get(event))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for handler in group
            .get("hooks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(command) = handler.get("command").and_then(Value::as_str) {
                out.push(command.to_string());
            }
        }
    }
    out
}

/// The turn's work: its sleep (or quiet time), then its hold.
fn work(s: &Script, cwd: &Path) {
    std::thread::sleep(s.quiet.unwrap_or(s.sleep));
    if let Some(path) = &s.hold {
        let gate = cwd.join(path);
        while !gate.exists() {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn write_result(cwd: &Path, path: &Path) {
    let target = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let _ = std::fs::write(target, "{\"ok\": true}\n");
}

fn result_object(
    seat: &Seat,
    result: &str,
    is_error: bool,
    denials: Value,
    api_status: Option<u16>,
) -> Value {
    json!({
        "type": "result",
        "subtype": "success",
        "is_error": is_error,
        "duration_ms": 10,
        "num_turns": 1,
        "result": result,
        "session_id": seat.session,
        "total_cost_usd": 0.0,
        "usage": {"input_tokens": if is_error {0} else {INPUT}, "cache_creation_input_tokens": if is_error {0} else {CACHE_WRITE}, "cache_read_input_tokens": if is_error {0} else {CACHE_READ}, "output_tokens": if is_error {0} else {OUTPUT}},
        "modelUsage": if is_error { json!({}) } else { json!({model(): {"inputTokens": INPUT, "outputTokens": OUTPUT, "cacheReadInputTokens": CACHE_READ, "cacheCreationInputTokens": CACHE_WRITE}}) },
        "permission_denials": denials,
        "terminal_reason": if is_error { "api_error" } else { "completed" },
        "api_error_status": api_status,
    })
}

fn headless(options: &Options, prompt: &str) -> i32 {
    let mut seat = Seat::new(options.resume.clone(), options.preset.clone());
    let s = script(prompt);
    seat.hook(
        "SessionStart",
        json!({"source": if options.resume.is_some() { "resume" } else { "startup" }}),
    );
    seat.hook("UserPromptSubmit", json!({"prompt": prompt}));
    if s.crash {
        if let Some(path) = &s.write {
            write_result(&seat.cwd, path);
        }
        eprintln!("scripted-cli: crashing as asked");
        return 3;
    }
    if s.exit_early {
        return 0;
    }
    if s.hang {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    if s.usage_first {
        seat.record_turn(prompt, "(working)");
    }
    work(&s, &seat.cwd);
    if let Some((sentence, _, status)) = turn_fault(&s, &seat.cwd) {
        let sentence = sentence.as_str();
        seat.error_row(sentence);
        println!(
            "{}",
            result_object(
                &seat,
                sentence,
                true,
                json!([]),
                (status > 0).then_some(status)
            )
        );
        seat.hook("SessionEnd", json!({"reason": "other"}));
        return 1;
    }
    if s.blocked {
        seat.hook("PermissionRequest", json!({"tool_name": "Bash", "tool_input": {"command": "rm -rf build"}, "permission_suggestions": []}));
        let denial = json!([{"tool_name": "Bash", "tool_use_id": "toolu_1", "tool_input": {"command": "rm -rf build"}}]);
        seat.record_turn(prompt, "I need permission to run that command.");
        println!(
            "{}",
            result_object(
                &seat,
                "I need permission to run that command.",
                false,
                denial,
                None
            )
        );
        seat.hook("Stop", json!({"stop_hook_active": false, "last_assistant_message": "I need permission to run that command."}));
        seat.hook("SessionEnd", json!({"reason": "other"}));
        return 0;
    }
    seat.record_turn(prompt, &s.reply);
    if let Some(path) = &s.write {
        write_result(&seat.cwd, path);
    }
    // A headless conversation spans processes: remember the deferred write
    // next to the transcript, and do it on the conversation's next turn.
    let pending = seat.transcript.with_extension("pending-write");
    if let Ok(path) = std::fs::read_to_string(&pending) {
        write_result(&seat.cwd, Path::new(path.trim()));
        let _ = std::fs::remove_file(&pending);
    }
    if let Some(path) = &s.write_after_nudge {
        let _ = std::fs::write(&pending, path.to_string_lossy().as_bytes());
    }
    println!("{}", result_object(&seat, &s.reply, false, json!([]), None));
    for _ in 0..s.subagent_stops {
        seat.hook("SubagentStop", json!({"stop_hook_active": false}));
    }
    if !s.no_stop {
        seat.hook(
            "Stop",
            json!({"stop_hook_active": false, "last_assistant_message": s.reply}),
        );
    }
    seat.hook("SessionEnd", json!({"reason": "other"}));
    0
}

fn show_prompt() {
    print!(
        "\r\n────────────────────────────────────────\r\n❯ \r\n────────────────────────────────────────\r\n  ⏵⏵ auto mode on (shift+tab to cycle)\r\n"
    );
    let _ = std::io::stdout().flush();
}

/// Whether `SCRIPTED_CLI_DIRECTIVES` carries `directive`.
fn at_start(directive: &str) -> bool {
    std::env::var("SCRIPTED_CLI_DIRECTIVES")
        .unwrap_or_default()
        .split_whitespace()
        .any(|w| w == directive)
}

/// Claude Code's bypass warning, as 2.1.332 draws it in an 80-column pane
/// (components/claude/fixtures/first-run/05-bypass-w80.txt). Returns
/// whether it was accepted. The terminal is line-buffered, so the arrows
/// arrive with the Enter that ends the line.
fn bypass_warning(lines: &mut impl BufRead) -> bool {
    print!(
        "\x1b[2J\x1b[H  WARNING: Claude Code running in Bypass Permissions mode\r\n\r\n  In Bypass Permissions mode, Claude Code will not ask for your approval\r\n  before running potentially dangerous commands.\r\n\r\n  By proceeding, you accept all responsibility for actions taken while running\r\n  in Bypass Permissions mode.\r\n\r\n  \u{276f} No, exit\r\n    Yes, I accept\r\n\r\n  Enter to confirm \u{b7} Esc to cancel\r\n"
    );
    let _ = std::io::stdout().flush();
    let mut answer = String::new();
    if lines.read_line(&mut answer).unwrap_or(0) == 0 {
        return false;
    }
    let downs = answer.matches("\x1b[B").count() + answer.matches("\x1bOB").count();
    let ups = answer.matches("\x1b[A").count() + answer.matches("\x1bOA").count();
    print!("\x1b[2J\x1b[H");
    downs > ups
}

/// A screen no adapter rule reads; whatever is typed is kept as evidence.
fn unreadable_screen(lines: &mut impl BufRead, cwd: &Path) -> i32 {
    print!("\x1b[2J\x1b[H  Scripted Code is warming up its caches\r\n");
    let _ = std::io::stdout().flush();
    let evidence = cwd.join(".scripted").join("typed-into-unread-screen.txt");
    loop {
        let mut typed = String::new();
        if lines.read_line(&mut typed).unwrap_or(0) == 0 {
            return 0;
        }
        if let Some(dir) = evidence.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&evidence)
        {
            let _ = f.write_all(typed.as_bytes());
        }
    }
}

/// Puts this CLI's own tmux pane in copy mode, as a person scrolling back
/// would leave it.
fn enter_copy_mode() {
    let Some(pane) = std::env::var_os("TMUX_PANE") else {
        eprintln!("scripted-cli: @copy-mode needs a tmux pane (no TMUX_PANE)");
        return;
    };
    let _ = Command::new("tmux")
        .arg("copy-mode")
        .arg("-t")
        .arg(pane)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn interactive(options: &Options) -> i32 {
    let mut seat = Seat::new(options.resume.clone(), options.preset.clone());
    // Ask the terminal for bracketed paste, as real TUIs do.
    print!("\x1b[?2004h");
    let stdin = std::io::stdin();
    let mut lines = stdin.lock();
    if at_start("@unreadable-screen") {
        return unreadable_screen(&mut lines, &seat.cwd);
    }
    if at_start("@first-run-dialog") && !bypass_warning(&mut lines) {
        return 1;
    }
    println!(
        "╭───────────────────────────╮\r\n│ ✻ Welcome to Scripted Code │\r\n╰───────────────────────────╯\r"
    );
    seat.hook(
        "SessionStart",
        json!({"source": if options.resume.is_some() { "resume" } else { "startup" }}),
    );
    show_prompt();
    if at_start("@copy-mode") {
        enter_copy_mode();
    }
    let mut drop_enters: u32 = if at_start("@never-accept") {
        u32::MAX
    } else {
        u32::from(at_start("@drop-first-enter"))
    };
    let mut pending_write: Option<PathBuf> = None;
    loop {
        let mut raw = String::new();
        match lines.read_line(&mut raw) {
            Ok(0) | Err(_) => {
                seat.hook("SessionEnd", json!({"reason": "other"}));
                return 0;
            }
            Ok(_) => {}
        }
        let prompt = raw
            .replace("\x1b[200~", "")
            .replace("\x1b[201~", "")
            .trim()
            .to_string();
        if prompt.is_empty() {
            continue;
        }
        if drop_enters > 0 {
            // The Enter is lost: nothing is submitted, nothing is drawn.
            drop_enters -= 1;
            continue;
        }
        if prompt == "/exit" {
            seat.hook("SessionEnd", json!({"reason": "prompt_input_exit"}));
            return 0;
        }
        seat.hook("UserPromptSubmit", json!({"prompt": prompt}));
        let s = script(&prompt);
        if s.crash {
            if let Some(path) = &s.write {
                write_result(&seat.cwd, path);
            }
            println!("\r\nscripted-cli: crashing as asked\r");
            return 3;
        }
        if s.usage_first {
            seat.record_turn(&prompt, "(working)");
        }
        if s.exit_early {
            return 0;
        }
        if s.quiet.is_none() {
            print!("\r\n✻ Thinking… (esc to interrupt)\r\n");
            let _ = std::io::stdout().flush();
        }
        if s.hang {
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        }
        work(&s, &seat.cwd);
        if s.quiet.is_none() {
            // The work is done: the spinner row goes, as a TUI redraws its
            // status row (a stale "esc to interrupt" reads as busy).
            print!("\x1b[1A\x1b[2K");
        }
        if s.end_session {
            if let Some(path) = &s.write {
                write_result(&seat.cwd, path);
            }
            seat.hook("SessionEnd", json!({"reason": "other"}));
            return 0;
        }
        if let Some((sentence, error, _)) = turn_fault(&s, &seat.cwd) {
            let sentence = sentence.as_str();
            seat.error_row(sentence);
            print!("\r\n● {sentence}\r\n");
            seat.hook(
                "StopFailure",
                json!({"error": error, "last_assistant_message": sentence}),
            );
            show_prompt();
            continue;
        }
        if s.blocked {
            print!(
                "\x1b[2J\x1b[H● Bash(rm -rf build)\r\n────────────────────────\r\n Bash command\r\n\r\n   rm -rf build\r\n\r\n Do you want to proceed?\r\n ❯ 1. Yes\r\n   2. No, and tell Claude what to do differently (esc)\r\n"
            );
            let _ = std::io::stdout().flush();
            seat.hook("PermissionRequest", json!({"tool_name": "Bash", "tool_input": {"command": "rm -rf build"}, "permission_suggestions": []}));
            seat.hook("Notification", json!({"message": "Claude needs your permission to use Bash", "notification_type": "permission_prompt"}));
            let mut answer = String::new();
            if lines.read_line(&mut answer).unwrap_or(0) == 0 {
                return 0;
            }
        }
        for _ in 0..s.subagent_stops {
            seat.hook("SubagentStop", json!({"stop_hook_active": false}));
        }
        seat.record_turn(&prompt, &s.reply);
        if let Some(path) = &s.write {
            write_result(&seat.cwd, path);
        }
        if let Some(path) = pending_write.take() {
            write_result(&seat.cwd, &path);
        }
        if let Some(path) = &s.write_after_nudge {
            pending_write = Some(path.clone());
        }
        print!("\r\n● {}\r\n", s.reply);
        if !s.no_stop {
            seat.hook(
                "Stop",
                json!({"stop_hook_active": false, "last_assistant_message": s.reply}),
            );
        }
        show_prompt();
    }
}

fn main() {
    let options = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    // Claude Code checks this before anything else (2.1.332 as root).
    let asked = format!(
        "{} {} {}",
        options.headless_prompt.as_deref().unwrap_or_default(),
        options.initial_prompt.as_deref().unwrap_or_default(),
        std::env::var("SCRIPTED_CLI_DIRECTIVES").unwrap_or_default()
    );
    let sandboxed = std::env::var("IS_SANDBOX").is_ok_and(|v| v == "1");
    if asked.split_whitespace().any(|w| w == "@as-root") && options.bypass && !sandboxed {
        eprintln!(
            "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"
        );
        std::process::exit(1);
    }
    let code = match options.headless_prompt.clone() {
        Some(prompt) => headless(&options, &prompt),
        None => interactive(&options),
    };
    std::process::exit(code);
}
