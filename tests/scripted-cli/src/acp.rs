//! `scripted-cli --acp`: an Agent Client Protocol agent on stdin/stdout, for
//! drover's `acp` workspace tests. It answers `initialize`, `session/new`
//! and `session/load` (a session whose transcript exists), runs one turn per
//! `session/prompt` under the same directives as the other modes, honours
//! `session/cancel`, and writes the same transcript rows.
//!
//! In a turn: `@blocked` asks `session/request_permission` for a shell
//! command (writing `hi.txt`, or `@write=PATH`, only when allowed); `@crash`
//! exits 3 with a sentence on stderr; `@fault=KIND` answers the prompt with
//! a JSON-RPC error carrying Claude's sentence; `@hang` never ends the turn
//! until it is cancelled; `@stop=REASON` ends it with that `stopReason`;
//! `@ask-fs` first asks the client to read a file (drover must refuse).
//! It fires the same hooks (SessionStart, Stop) when they are installed.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::{Seat, fault_sentence, script, write_result};

type Out = Arc<Mutex<std::io::Stdout>>;

fn send(out: &Out, message: Value) {
    let mut out = out.lock().unwrap_or_else(|p| p.into_inner());
    let _ = writeln!(out, "{message}");
    let _ = out.flush();
}

fn respond(out: &Out, id: &Value, result: Value) {
    send(out, json!({"jsonrpc": "2.0", "id": id, "result": result}));
}

fn error(out: &Out, id: &Value, code: i64, message: &str) {
    send(
        out,
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
    );
}

fn update(out: &Out, session: &str, update: Value) {
    send(
        out,
        json!({"jsonrpc": "2.0", "method": "session/update", "params": {"sessionId": session, "update": update}}),
    );
}

/// What reaches a running turn from the client.
enum ToTurn {
    Cancel,
    Response(Value),
}

pub fn serve() -> i32 {
    let out: Out = Arc::new(Mutex::new(std::io::stdout()));
    let mut seat: Option<Arc<Mutex<Seat>>> = None;
    let mut turn: Option<Sender<ToTurn>> = None;
    let mut next_request = 100;
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = message.get("id").cloned();
        let method = message["method"].as_str().unwrap_or_default().to_string();
        let params = message["params"].clone();
        match (id, method.as_str()) {
            (Some(id), "initialize") => respond(
                &out,
                &id,
                json!({"protocolVersion": 1, "agentCapabilities": {"loadSession": true},
                       "agentInfo": {"name": "scripted-cli", "version": "2.1.332"}, "authMethods": []}),
            ),
            (Some(id), "session/new") => {
                let s = Seat::new(None, None);
                s.hook("SessionStart", json!({"source": "startup"}));
                respond(&out, &id, json!({"sessionId": s.session}));
                seat = Some(Arc::new(Mutex::new(s)));
            }
            (Some(id), "session/load") => {
                let wanted = params["sessionId"].as_str().unwrap_or_default().to_string();
                let s = Seat::new(Some(wanted.clone()), None);
                if !s.transcript.exists() {
                    error(
                        &out,
                        &id,
                        -32002,
                        &format!("Resource not found: session {wanted}"),
                    );
                    continue;
                }
                // The history, replayed before the answer.
                update(
                    &out,
                    &wanted,
                    json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "(earlier reply)"}}),
                );
                s.hook("SessionStart", json!({"source": "resume"}));
                respond(&out, &id, json!({}));
                seat = Some(Arc::new(Mutex::new(s)));
            }
            (Some(id), "session/prompt") => {
                let Some(s) = seat.as_ref().map(Arc::clone) else {
                    error(&out, &id, -32002, "no session");
                    continue;
                };
                let prompt = params["prompt"][0]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                let (tx, rx) = channel();
                turn = Some(tx);
                let out = Arc::clone(&out);
                next_request += 1;
                let request = next_request;
                // The turn runs beside the reader, which keeps forwarding
                // cancels and responses to it.
                std::thread::spawn(move || {
                    let mut s = s.lock().unwrap_or_else(|p| p.into_inner());
                    run_turn(&out, &mut s, &id, &prompt, &rx, request);
                });
            }
            (None, "session/cancel") => {
                if let Some(tx) = &turn {
                    let _ = tx.send(ToTurn::Cancel);
                }
            }
            (Some(_), "") => {
                if let Some(tx) = &turn {
                    let _ = tx.send(ToTurn::Response(message));
                }
            }
            (Some(id), other) => error(&out, &id, -32601, &format!("Method not found: {other}")),
            (None, _) => {}
        }
    }
    0
}

fn wait_cancel(rx: &Receiver<ToTurn>, limit: Duration) -> bool {
    let until = std::time::Instant::now() + limit;
    loop {
        let left = until.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(ToTurn::Cancel) => return true,
            Ok(ToTurn::Response(_)) => {}
            Err(_) => return false,
        }
    }
}

fn run_turn(
    out: &Out,
    seat: &mut Seat,
    id: &Value,
    prompt: &str,
    rx: &Receiver<ToTurn>,
    request: i64,
) {
    let s = script(prompt);
    let session = seat.session.clone();
    update(
        out,
        &session,
        json!({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "Thinking."}}),
    );
    if prompt.contains("@ask-fs") {
        send(
            out,
            json!({"jsonrpc": "2.0", "id": request + 1000, "method": "fs/read_text_file", "params": {"sessionId": session, "path": "/etc/hostname"}}),
        );
        let answer = rx.recv_timeout(Duration::from_secs(10));
        let refused = matches!(&answer, Ok(ToTurn::Response(m)) if m["error"]["code"] == -32601);
        if !refused {
            error(out, id, -32603, "the client served fs/read_text_file");
            return;
        }
    }
    if s.crash {
        if let Some(path) = &s.write {
            write_result(&seat.cwd, path);
        }
        eprintln!(
            "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)"
        );
        std::process::exit(3);
    }
    if s.hang {
        wait_cancel(rx, Duration::from_secs(3600));
        respond(out, id, json!({"stopReason": "cancelled"}));
        return;
    }
    if let Some(kind) = &s.fault {
        let (sentence, _, _) = fault_sentence(kind);
        seat.error_row(sentence);
        eprintln!("{sentence}");
        error(out, id, -32603, sentence);
        return;
    }
    if s.blocked {
        let target = s.write.clone().unwrap_or_else(|| PathBuf::from("hi.txt"));
        // A clipboard write and a screen clear, for a hostile agent's question.
        let escapes = if s.escapes {
            "\u{1b}]52;c;cm0gLXJmIH4=\u{7}\u{1b}[2J"
        } else {
            ""
        };
        let command = format!("echo hi > {}{escapes}", target.display());
        update(
            out,
            &session,
            json!({"sessionUpdate": "tool_call", "toolCallId": "call_1", "name": "bash", "title": "Shell", "kind": "execute", "status": "pending", "rawInput": {}}),
        );
        send(
            out,
            json!({"jsonrpc": "2.0", "id": request, "method": "session/request_permission", "params": {
            "sessionId": session,
            "toolCall": {"toolCallId": "call_1", "title": command, "kind": "execute", "status": "pending", "rawInput": {"command": command}},
            "options": [
                {"optionId": format!("once{escapes}"), "name": format!("Allow once{escapes}"), "kind": "allow_once"},
                {"optionId": format!("always{escapes}"), "name": "Always allow", "kind": "allow_always"},
                {"optionId": format!("reject{escapes}"), "name": format!("Reject{escapes}"), "kind": "reject_once"}
            ]}}),
        );
        let outcome = loop {
            match rx.recv() {
                Ok(ToTurn::Response(m)) if m["id"] == request => {
                    break m["result"]["outcome"].clone();
                }
                Ok(ToTurn::Response(_)) => {}
                Ok(ToTurn::Cancel) | Err(_) => {
                    respond(out, id, json!({"stopReason": "cancelled"}));
                    return;
                }
            }
        };
        let allowed = outcome["outcome"] == "selected"
            && [format!("once{escapes}"), format!("always{escapes}")]
                .iter()
                .any(|allow| outcome["optionId"].as_str() == Some(allow.as_str()));
        if allowed {
            write_result(&seat.cwd, &target);
        }
        update(
            out,
            &session,
            json!({"sessionUpdate": "tool_call_update", "toolCallId": "call_1", "status": if allowed { "completed" } else { "failed" }}),
        );
    } else if let Some(path) = &s.write {
        write_result(&seat.cwd, path);
    }
    if wait_cancel(rx, s.sleep) {
        respond(out, id, json!({"stopReason": "cancelled"}));
        return;
    }
    update(
        out,
        &session,
        json!({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": s.reply}}),
    );
    seat.record_turn(prompt, &s.reply);
    seat.hook(
        "Stop",
        json!({"stop_hook_active": false, "last_assistant_message": s.reply}),
    );
    let reason = prompt
        .split_whitespace()
        .find_map(|w| w.strip_prefix("@stop="))
        .unwrap_or("end_turn");
    respond(out, id, json!({"stopReason": reason}));
}
