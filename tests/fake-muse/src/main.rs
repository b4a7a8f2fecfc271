//! A fake `muse` for drover's tests, built from Muse Code's public sources
//! (docs/adapters/muse.md names them): `muse exec --json` with its
//! envelopes, `muse serve` speaking the Muse Session Protocol (MSP) on
//! stdio, the session log under `$XDG_DATA_HOME/muse/sessions/`, subagent
//! logs, and hooks from `~/.config/muse/settings.json` (and a trusted
//! workspace's `.muse/hooks.json`) run with a cleared environment.
//!
//! The prompt scripts it: `Reply with exactly: X` replies X; `@fault=auth`,
//! `@fault=quota`, `@fault=overload`, `@fault=network` fail the way Muse's
//! error objects say; `@subagent` also logs a subagent's call; over MSP,
//! `@approve` asks to write `hi.txt` first and `@slow` waits for
//! `turn/interrupt`.
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a stand-in program for the tests (a fake CLI), not drover: its output is what the tests read"
)]

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// What one model call of the fake costs: the scripted model server's
/// counts (3101 in with 300 cached, 77 out, 5 of them reasoning).
const USAGE: (u64, u64, u64, u64) = (3101, 77, 300, 5);
const MODEL: &str = "gpt-5";

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A fresh id in UUID shape.
fn new_id() -> String {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let a = nanos ^ (u64::from(std::process::id()) << 32) ^ n;
    let b = nanos.rotate_left(17) ^ n.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        (a >> 32) as u32,
        (a >> 16) as u16,
        (a & 0xfff) as u16,
        (b >> 52) as u16 & 0xfff,
        b & 0xffff_ffff_ffff
    )
}

/// `YYYY/MM/DD` (UTC) of now.
fn day_path() -> String {
    let days = (now_ms() / 86_400_000) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}/{month:02}/{day:02}")
}

fn home() -> PathBuf {
    PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
}

fn sessions_root() -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map_or_else(|| home().join(".local/share"), PathBuf::from)
        .join("muse/sessions")
}

/// The directory of session `id`: where it already is, else today's.
fn session_dir(id: &str) -> PathBuf {
    let root = sessions_root();
    let found = std::fs::read_dir(&root).ok().and_then(|years| {
        years.flatten().find_map(|y| {
            std::fs::read_dir(y.path()).ok()?.flatten().find_map(|m| {
                std::fs::read_dir(m.path())
                    .ok()?
                    .flatten()
                    .map(|d| d.path().join(id))
                    .find(|p| p.is_dir())
            })
        })
    });
    found.unwrap_or_else(|| root.join(day_path()).join(id))
}

/// Appends envelopes to a session log.
fn log(dir: &Path, records: &[Value]) {
    let _ = std::fs::create_dir_all(dir);
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("session.jsonl"))
    {
        for r in records {
            let _ = writeln!(f, "{r}");
        }
    }
}

fn envelope(stream: &str, id: &str, payload_type: &str, payload: Value) -> Value {
    json!({
        "schema_version": 1,
        "id": id,
        "stream": {"kind": "session", "id": stream},
        "sequence": 1,
        "recorded_at": now_ms() * 1000,
        "record_type": "event",
        "durability": "durable",
        "causation_id": null,
        "payload_type": payload_type,
        "payload_schema_version": 1,
        "payload": payload,
    })
}

/// One model call in a session log, as Muse writes it: the call, a
/// replayed copy of it, and the goal attribution that repeats its numbers.
fn log_call(dir: &Path, stream: &str, workspace: &str) {
    let (input, output, cached, reasoning) = USAGE;
    let usage = json!({
        "input_tokens": input, "output_tokens": output,
        "cache_read_tokens": cached, "cached_tokens": cached,
        "cache_write_tokens": 0, "reasoning_tokens": reasoning,
    });
    let call = new_id();
    let completed = envelope(
        stream,
        &call,
        "runtime.session",
        json!({"event": {"kind": "model_completed", "model": MODEL, "usage": usage}}),
    );
    log(
        dir,
        &[
            envelope(
                stream,
                &new_id(),
                "runtime.session.metadata",
                json!({"record": {"workspace_root": workspace}}),
            ),
            completed.clone(),
            completed,
            envelope(
                stream,
                &new_id(),
                "runtime.session",
                json!({"event": {"kind": "goal_usage_attribution", "model": MODEL, "usage": usage}}),
            ),
        ],
    );
}

/// What a prompt scripts.
struct Script {
    reply: String,
    fault: Option<Value>,
    subagent: bool,
    approve: bool,
    slow: bool,
}

fn script(prompt: &str) -> Script {
    let fault = prompt
        .split_whitespace()
        .find_map(|w| w.strip_prefix("@fault="))
        .map(|kind| match kind {
            "auth" => json!({"kind": "authRequired", "message": "authentication required: run `muse login`", "retryable": false}),
            "quota" => json!({"kind": "modelError", "message": "weekly usage limit reached", "retryable": false,
                "quota": {"limitKind": "weekly", "resetsAtMs": now_ms() + 2 * 3_600_000}}),
            "network" => json!({"kind": "environmentError", "message": "connect ECONNREFUSED 127.0.0.1:443", "retryable": true}),
            _ => json!({"kind": "modelError", "message": "model failed after 3 attempts: provider returned 503 service_unavailable", "retryable": true}),
        });
    let reply = prompt
        .split_once("Reply with exactly: ")
        .map_or("OK", |(_, r)| r.lines().next().unwrap_or("OK"))
        .split(" @")
        .next()
        .unwrap_or("OK")
        .trim()
        .to_string();
    Script {
        reply,
        fault,
        subagent: prompt.contains("@subagent"),
        approve: prompt.contains("@approve"),
        slow: prompt.contains("@slow"),
    }
}

/// Runs the hooks configured for `event` with a cleared environment, the
/// payload on stdin, as Muse does.
fn fire(workspace: &Path, trusted: bool, event: &str, payload: Value) {
    let mut files = vec![home().join(".config/muse/settings.json")];
    if trusted {
        files.push(workspace.join(".muse/hooks.json"));
    }
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let Ok(config) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let groups = config["hooks"][event]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for handler in groups
            .iter()
            .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        {
            let Some(command) = handler["command"].as_str() else {
                continue;
            };
            let child = std::process::Command::new("/bin/sh")
                .args(["-c", command])
                .env_clear()
                .current_dir(workspace)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .spawn();
            if let Ok(mut child) = child {
                if let Some(mut stdin) = child.stdin.take() {
                    let _ = writeln!(stdin, "{payload}");
                }
                let _ = child.wait();
            }
        }
    }
}

fn hook_payload(session: &str, workspace: &Path, event: &str, extra: Value) -> Value {
    let mut payload = json!({
        "session_id": session, "cwd": workspace, "hook_event_name": event,
        "transcript_path": null, "turn_id": new_id(),
    });
    if let (Some(p), Some(e)) = (payload.as_object_mut(), extra.as_object()) {
        p.extend(e.clone());
    }
    payload
}

const EXEC_HELP: &str = "Run Muse non-interactively

Usage: muse exec [OPTIONS]

Options:
      --json                       Print JSON-lines event envelopes
      --workspace <DIR>            The workspace root
      --session-id <UUID>          Id for a new session
      --resume <ID>                Resume a session
      --prompt-file <FILE>         Read the prompt from FILE
      --model <ID>                 The model
      --reasoning-effort <LEVEL>   none, minimal, low, medium, high, xhigh, max
      --trust-workspace            Trust the workspace (loads .muse/hooks.json)
      --disable-approval           Run tools without asking
      --user-input-auto-resolve    Answer the agent's questions automatically
      --disable-sandbox            Run without the sandbox
      --api-key-stdin              Read an API key from stdin
  -h, --help                       Print help
";

fn exec(args: &[String]) -> i32 {
    let mut json_out = false;
    let mut workspace = PathBuf::from(".");
    let (mut session, mut prompt_file, mut trusted) = (None, None, false);
    let mut i = 0;
    while i < args.len() {
        let value = || args.get(i + 1).cloned();
        match args[i].as_str() {
            "--json" => json_out = true,
            "--trust-workspace" => trusted = true,
            "--disable-approval" | "--user-input-auto-resolve" | "--disable-sandbox" => {}
            "-h" | "--help" => {
                print!("{EXEC_HELP}");
                return 0;
            }
            "--workspace" | "--session-id" | "--resume" | "--prompt-file" | "--model"
            | "--reasoning-effort" => {
                let Some(v) = value() else {
                    eprintln!("error: a value is required for '{}'", args[i]);
                    return 2;
                };
                match args[i].as_str() {
                    "--workspace" => workspace = PathBuf::from(v),
                    "--session-id" | "--resume" => session = Some(v),
                    "--prompt-file" => prompt_file = Some(v),
                    _ => {}
                }
                i += 1;
            }
            other => {
                eprintln!("error: unexpected argument '{other}' found");
                return 2;
            }
        }
        i += 1;
    }
    let Some(prompt_file) = prompt_file else {
        eprintln!("error: the prompt is required (--prompt-file)");
        return 2;
    };
    let prompt = match std::fs::read_to_string(&prompt_file) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: cannot read {prompt_file}: {e}");
            return 2;
        }
    };
    let session = session.unwrap_or_else(new_id);
    let workspace = std::fs::canonicalize(&workspace).unwrap_or(workspace);
    let script = script(&prompt);
    let emit = |payload_type: &str, payload: Value| {
        if json_out {
            println!(
                "{}",
                json!({"schema_version": 1, "sequence": 1, "record_type": "event",
                    "durability": "ephemeral", "payload_type": payload_type,
                    "payload_schema_version": 1, "payload": payload})
            );
        }
    };
    fire(
        &workspace,
        trusted,
        "SessionStart",
        hook_payload(
            &session,
            &workspace,
            "SessionStart",
            json!({"source": "startup"}),
        ),
    );
    fire(
        &workspace,
        trusted,
        "UserPromptSubmit",
        hook_payload(
            &session,
            &workspace,
            "UserPromptSubmit",
            json!({"prompt": prompt}),
        ),
    );
    emit(
        "run.model.configured",
        json!({"model_id": MODEL, "provider_id": "fake"}),
    );
    if let Some(error) = script.fault {
        let message = error["message"].as_str().unwrap_or("failed").to_string();
        if error["kind"] == "environmentError" {
            eprintln!("error: {message}");
        }
        emit(
            "task.lifecycle.failed",
            json!({"event": {"reason": message, "error": error}}),
        );
        emit(
            "run.terminal.failed",
            json!({"terminal": "failed", "reason": message, "error": error}),
        );
        return 1;
    }
    let dir = session_dir(&session);
    log_call(&dir, &session, &workspace.to_string_lossy());
    if script.subagent {
        let child = new_id();
        log_call(
            &dir.join("subagent").join(&child),
            &child,
            &workspace.to_string_lossy(),
        );
    }
    let (head, tail) = script.reply.split_at(script.reply.len() / 2);
    emit("run.output.delta", json!({"text": head}));
    emit("run.output.delta", json!({"text": tail}));
    emit(
        "run.terminal.completed",
        json!({"terminal": "completed", "reason": "end_turn", "text": script.reply}),
    );
    if !json_out {
        println!("{}", script.reply);
    }
    fire(
        &workspace,
        trusted,
        "Stop",
        hook_payload(
            &session,
            &workspace,
            "Stop",
            json!({"last_assistant_message": script.reply, "stop_hook_active": false}),
        ),
    );
    0
}

/// `muse serve`: MSP on stdio, one JSON-RPC message a line.
struct Server {
    out: std::io::Stdout,
    workspace: PathBuf,
    next_id: u64,
}

impl Server {
    fn send(&mut self, message: Value) {
        let _ = writeln!(self.out, "{message}");
        let _ = self.out.flush();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(
            json!({"jsonrpc": "2.0", "method": method, "params": params, "emittedAtMs": now_ms()}),
        );
    }

    fn session(&self, id: &str) -> Value {
        json!({"sessionId": id, "status": "idle", "turnCount": 0,
            "path": session_dir(id).join("session.jsonl"),
            "workspaceRoot": self.workspace, "providerId": "fake", "modelId": MODEL,
            "approvalMode": {"mode": "promptUnmatched", "source": "startup", "lastCommandId": null},
            "forkedFrom": null, "activeTurnId": null})
    }

    /// Reads until `pick` accepts a message; answers everything else.
    fn wait_for(
        &mut self,
        lines: &mut impl Iterator<Item = String>,
        pick: impl Fn(&Value) -> bool,
    ) -> Option<Value> {
        for line in lines.by_ref() {
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if pick(&message) {
                return Some(message);
            }
        }
        None
    }

    fn turn(&mut self, id: &Value, params: &Value, lines: &mut impl Iterator<Item = String>) {
        let session = params["sessionId"].as_str().unwrap_or_default().to_string();
        let turn = params["commandId"]
            .as_str()
            .map_or_else(new_id, str::to_string);
        let text = params["input"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.send(
            json!({"jsonrpc": "2.0", "id": id, "result": {"commandId": turn, "status": "accepted",
            "turnId": turn, "startedNewTurn": true, "disposition": "started"}}),
        );
        self.notify(
            "turn/started",
            json!({"sessionId": session, "turnId": turn, "commandId": turn}),
        );
        self.notify(
            "item/completed",
            json!({"sessionId": session, "item": {"itemId": new_id(), "kind": "userMessage",
            "turnId": turn, "status": "completed", "text": text}}),
        );
        let script = script(&text);
        if let Some(error) = script.fault {
            let reason = error["message"].clone();
            self.notify(
                "turn/completed",
                json!({"sessionId": session, "turnId": turn, "terminal": "failed",
                "reason": reason, "error": error}),
            );
            return;
        }
        if script.slow {
            let stop = self.wait_for(lines, |m| m["method"] == "turn/interrupt");
            if let Some(stop) = stop {
                self.send(
                    json!({"jsonrpc": "2.0", "id": stop["id"], "result": {"status": "accepted"}}),
                );
            }
            self.notify(
                "turn/completed",
                json!({"sessionId": session, "turnId": turn, "terminal": "interrupted"}),
            );
            return;
        }
        let mut reply = script.reply.clone();
        if script.approve {
            let (approval, item) = (new_id(), new_id());
            let requirement = json!({"approvalId": approval, "sourceIndex": 0});
            self.notify(
                "item/started",
                json!({"sessionId": session, "item": {"itemId": item, "kind": "toolCall",
                "turnId": turn, "status": "inProgress", "tool": "write_file", "callId": "call_1",
                "args": "{\"path\":\"hi.txt\"}", "approvalId": approval}}),
            );
            let ask = json!({"sessionId": session, "approvalId": approval, "turnId": turn, "itemId": item,
                "toolCallId": "call_1", "toolName": "write_file", "rawArgs": "{\"path\":\"hi.txt\"}",
                "subject": {"kind": "fileAccess", "toolName": "write_file", "path": self.workspace.join("hi.txt"), "access": "write"},
                "currentRequirementId": requirement,
                "availableChoices": [
                    {"choiceId": "allow_once", "label": "Allow once", "decision": "approved", "scope": "once"},
                    {"choiceId": "allow_session", "label": "Allow for this session", "decision": "approvedForSession", "scope": "session"},
                    {"choiceId": "abort", "label": "Reject", "decision": "abort", "scope": "once", "acceptsFeedback": true}]});
            self.notify("approval/requested", ask.clone());
            self.next_id += 1;
            let request_id = self.next_id;
            self.send(json!({"jsonrpc": "2.0", "id": request_id, "method": "approval/request", "params": ask}));
            let decide = self.wait_for(lines, |m| m["method"] == "approval/decide");
            let choice = decide
                .as_ref()
                .and_then(|d| d["params"]["choiceId"].as_str())
                .unwrap_or("abort")
                .to_string();
            if let Some(decide) = &decide {
                self.send(
                    json!({"jsonrpc": "2.0", "id": decide["id"], "result": {"status": "accepted",
                    "approvalId": approval, "terminal": true}}),
                );
            }
            let approved = choice.starts_with("allow");
            self.notify(
                "approval/resolved",
                json!({"sessionId": session, "approvalId": approval, "turnId": turn,
                "decision": if approved { "approved" } else { "abort" }, "resolvedBy": "user"}),
            );
            if approved {
                let _ = std::fs::write(self.workspace.join("hi.txt"), "hi\n");
                reply = "TOOLDONE".to_string();
            } else {
                reply = "DENIED".to_string();
            }
            self.notify(
                "item/completed",
                json!({"sessionId": session, "item": {"itemId": item, "kind": "toolCall",
                "turnId": turn, "status": "completed", "tool": "write_file", "callId": "call_1"}}),
            );
        }
        let item = new_id();
        self.notify(
            "item/started",
            json!({"sessionId": session, "item": {"itemId": item, "kind": "agentMessage",
            "turnId": turn, "status": "inProgress", "text": ""}}),
        );
        let (head, tail) = reply.split_at(reply.len() / 2);
        for part in [head, tail] {
            self.notify(
                "item/delta",
                json!({"sessionId": session, "itemId": item, "field": "text", "delta": part}),
            );
        }
        self.notify(
            "item/completed",
            json!({"sessionId": session, "item": {"itemId": item, "kind": "agentMessage",
            "turnId": turn, "status": "completed", "text": reply}}),
        );
        log_call(
            &session_dir(&session),
            &session,
            &self.workspace.to_string_lossy(),
        );
        let (input, output, cached, reasoning) = USAGE;
        let usage = json!({"inputTokens": input, "outputTokens": output, "cachedTokens": cached, "reasoningTokens": reasoning});
        self.notify(
            "session/tokenUsage",
            json!({"sessionId": session, "modelId": MODEL, "usage": usage,
            "promptTokens": input, "totalTokens": input + output, "cumulative": usage}),
        );
        self.notify(
            "turn/completed",
            json!({"sessionId": session, "turnId": turn, "terminal": "completed",
            "durationMs": 10, "usage": usage}),
        );
    }
}

fn serve(args: &[String]) -> i32 {
    let workspace = args
        .windows(2)
        .find(|w| w[0] == "--workspace")
        .map_or_else(|| PathBuf::from("."), |w| PathBuf::from(&w[1]));
    let mut server = Server {
        out: std::io::stdout(),
        workspace: std::fs::canonicalize(&workspace).unwrap_or(workspace),
        next_id: 0,
    };
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines().map_while(Result::ok);
    while let Some(line) = lines.next() {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let (id, method, params) = (
            message["id"].clone(),
            message["method"].as_str().unwrap_or(""),
            message["params"].clone(),
        );
        match method {
            "initialize" => server.send(json!({"jsonrpc": "2.0", "id": id, "result": {
                "serverInfo": {"name": "muse-session-server", "version": "1.4.14-fake"},
                "schema": {"version": 1}, "grantedCapabilities": [], "experimentalApi": false,
                "sessionDurability": "durable"}})),
            "initialized" | "" => {}
            "session/start" => {
                let session = new_id();
                if let Some(root) = params["workspaceRoot"].as_str() {
                    server.workspace = PathBuf::from(root);
                }
                let body = server.session(&session);
                server.notify("session/started", json!({"session": body}));
                server.send(json!({"jsonrpc": "2.0", "id": id, "result": {"session": body}}));
            }
            "session/resume" => {
                let session = params["sessionId"].as_str().unwrap_or_default().to_string();
                if session_dir(&session).join("session.jsonl").is_file() {
                    let body = server.session(&session);
                    server.send(json!({"jsonrpc": "2.0", "id": id, "result": {"session": body}}));
                } else {
                    server.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": format!("unknown session {session}")}}));
                }
            }
            "turn/start" => server.turn(&id, &params, &mut lines),
            "turn/interrupt" => server.send(json!({"jsonrpc": "2.0", "id": id, "result": {"status": "noActiveTurn"}})),
            _ if id.is_null() => {}
            other => server.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("method not found: {other}")}})),
        }
    }
    0
}

const HELP: &str = "Muse Code

Usage: muse [OPTIONS] [PROMPT]
       muse <COMMAND>

Commands:
  exec   Run Muse non-interactively
  serve  Speak the Muse Session Protocol on stdio

Options:
      --session-id <UUID>  Id for a new session
      --model <ID>         The model
      --yolo               Run tools without asking
  -h, --help               Print help
  -V, --version            Print version
";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match args.first().map(String::as_str) {
        Some("exec") => exec(&args[1..]),
        Some("serve") => serve(&args[1..]),
        Some("-V" | "--version") => {
            println!("muse 1.4.14 (fake)");
            0
        }
        Some("-h" | "--help") | None => {
            print!("{HELP}");
            0
        }
        Some(other) => {
            eprintln!("error: unrecognized subcommand '{other}'");
            2
        }
    };
    std::process::exit(code);
}
