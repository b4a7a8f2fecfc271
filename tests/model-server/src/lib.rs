//! drover-model-server: one scripted fake model server speaking the
//! Anthropic Messages, OpenAI Responses, OpenAI Chat Completions and Gemini
//! wire protocols on 127.0.0.1, with control endpoints under `/__fake/` to
//! inject errors, dropped connections, delays and tool calls.
//!
//! See docs/model-server.md for the protocol coverage and endpoints.

pub mod http;
pub mod protocols;
pub mod reply;

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use protocols::{Body, Ids, Protocol, Turn};

/// What goes wrong on the next model calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Answer with this HTTP status and the API's own error body.
    Status(u16),
    /// Read the request, then close the socket without replying.
    Drop,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub port: u16,
    pub port_file: Option<PathBuf>,
    pub log: Option<PathBuf>,
    pub reply: String,
    /// Fault active from start (no count limit).
    pub fault: Option<Fault>,
    /// Delay before each model answer from start.
    pub delay_ms: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            port: 0,
            port_file: None,
            log: None,
            reply: "OK".into(),
            fault: None,
            delay_ms: 0,
        }
    }
}

/// Parse `--mode` values: `error:529`, `error:drop`, `drop`, `delay:MS`, `ok`.
pub fn parse_mode(spec: &str) -> Result<(Option<Fault>, u64), String> {
    let (kind, arg) = spec.split_once(':').unwrap_or((spec, ""));
    match kind {
        "ok" | "normal" => Ok((None, 0)),
        "drop" => Ok((Some(Fault::Drop), 0)),
        "error" if arg == "drop" => Ok((Some(Fault::Drop), 0)),
        "error" => arg
            .parse::<u16>()
            .ok()
            .filter(|s| (100..=599).contains(s))
            .map(|s| (Some(Fault::Status(s)), 0))
            .ok_or_else(|| format!("bad --mode {spec:?}: want error:<status>|error:drop")),
        "delay" => arg
            .parse::<u64>()
            .map(|ms| (None, ms))
            .map_err(|_| format!("bad --mode {spec:?}: want delay:<ms>")),
        _ => Err(format!("unknown --mode {spec:?}")),
    }
}

#[derive(Debug)]
struct ToolPlan {
    name: String,
    args: Value,
    remaining: u32,
    /// Only a request whose last real user message contains this takes the
    /// call: a CLI's side requests (prompt suggestions, titles) offer tools
    /// too and would otherwise take the call meant for the turn.
    prompt: Option<String>,
}

#[derive(Debug)]
struct State {
    initial_reply: String,
    reply: String,
    /// (fault, remaining count; None = until changed)
    fault: Option<(Fault, Option<u32>)>,
    /// (delay before answer, gap between SSE chunks, remaining count)
    delay: Option<(u64, u64, Option<u32>)>,
    tools: VecDeque<ToolPlan>,
    log: Vec<Value>,
    log_file: Option<File>,
    counter: u64,
    port: u16,
}

impl State {
    fn take_fault(&mut self) -> Option<Fault> {
        let (f, rem) = self.fault.as_mut()?;
        let f = *f;
        if let Some(r) = rem {
            *r = r.saturating_sub(1);
            if *r == 0 {
                self.fault = None;
            }
        }
        Some(f)
    }

    fn take_delay(&mut self) -> (u64, u64) {
        let Some((d, g, rem)) = self.delay.as_mut() else {
            return (0, 0);
        };
        let out = (*d, *g);
        if let Some(r) = rem {
            *r = r.saturating_sub(1);
            if *r == 0 {
                self.delay = None;
            }
        }
        out
    }

    fn take_tool(&mut self, last_user_text: &str) -> Option<(String, Value)> {
        let t = self.tools.front_mut()?;
        if t.prompt
            .as_deref()
            .is_some_and(|p| !last_user_text.contains(p))
        {
            return None;
        }
        let out = (t.name.clone(), t.args.clone());
        t.remaining = t.remaining.saturating_sub(1);
        if t.remaining == 0 {
            self.tools.pop_front();
        }
        Some(out)
    }

    fn describe(&self) -> Value {
        json!({
            "reply": self.reply,
            "fault": self.fault.map(|(f, n)| json!({
                "status": match f { Fault::Status(s) => json!(s), Fault::Drop => json!("drop") },
                "remaining": n })),
            "delay": self.delay.map(|(d, g, n)| json!({"delay_ms": d, "gap_ms": g, "remaining": n})),
            "tools": self.tools.iter().map(|t| json!({"name": t.name, "args": t.args, "remaining": t.remaining, "prompt": t.prompt}))
                .collect::<Vec<_>>(),
        })
    }

    fn record(&mut self, entry: Value) {
        if let Some(f) = self.log_file.as_mut() {
            let _ = writeln!(f, "{entry}");
            let _ = f.flush();
        }
        self.log.push(entry);
    }
}

/// A bound server; call [`Server::run`] (blocking) or [`Server::spawn`].
pub struct Server {
    listener: TcpListener,
    state: Arc<Mutex<State>>,
}

impl Server {
    pub fn bind(cfg: &Config) -> io::Result<Server> {
        let listener = TcpListener::bind(("127.0.0.1", cfg.port))?;
        let port = listener.local_addr()?.port();
        let log_file = match &cfg.log {
            Some(p) => Some(OpenOptions::new().create(true).append(true).open(p)?),
            None => None,
        };
        let state = State {
            initial_reply: cfg.reply.clone(),
            reply: cfg.reply.clone(),
            fault: cfg.fault.map(|f| (f, None)),
            delay: (cfg.delay_ms > 0).then_some((cfg.delay_ms, 0, None)),
            tools: VecDeque::new(),
            log: Vec::new(),
            log_file,
            counter: 0,
            port,
        };
        if let Some(pf) = &cfg.port_file {
            // Write-then-rename so a poller never reads a partial number.
            let tmp = pf.with_extension("tmp");
            std::fs::write(&tmp, format!("{port}\n"))?;
            std::fs::rename(&tmp, pf)?;
        }
        Ok(Server {
            listener,
            state: Arc::new(Mutex::new(state)),
        })
    }

    pub fn port(&self) -> u16 {
        self.listener.local_addr().map(|a| a.port()).unwrap_or(0)
    }

    /// Accept connections forever, one thread each.
    pub fn run(self) -> io::Result<()> {
        for conn in self.listener.incoming() {
            let stream = match conn {
                Ok(s) => s,
                Err(_) => continue,
            };
            let state = Arc::clone(&self.state);
            thread::spawn(move || {
                let _ = serve_connection(stream, state);
            });
        }
        Ok(())
    }

    /// Run on a background thread; returns the port.
    pub fn spawn(self) -> u16 {
        let port = self.port();
        thread::spawn(move || self.run());
        port
    }
}

fn now_secs() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// Where a request goes.
#[derive(Debug, Clone, PartialEq)]
pub enum Route {
    Model {
        protocol: Protocol,
        path_model: Option<String>,
        path_stream: bool,
    },
    AnthropicCountTokens,
    GeminiCountTokens {
        model: String,
    },
    Models {
        dialect: &'static str,
    },
    Control(String),
    NotFound,
}

pub fn route(method: &str, path: &str, anthropic_header: bool) -> Route {
    if let Some(op) = path.strip_prefix("/__fake/") {
        return Route::Control(op.trim_end_matches('/').to_string());
    }
    let path = path.trim_end_matches('/');
    if method == "POST" {
        if path.ends_with("/messages/count_tokens") {
            return Route::AnthropicCountTokens;
        }
        if path.ends_with("/messages") {
            return Route::Model {
                protocol: Protocol::Anthropic,
                path_model: None,
                path_stream: false,
            };
        }
        if path.ends_with("/responses") {
            return Route::Model {
                protocol: Protocol::Responses,
                path_model: None,
                path_stream: false,
            };
        }
        if path.ends_with("/chat/completions") {
            return Route::Model {
                protocol: Protocol::Chat,
                path_model: None,
                path_stream: false,
            };
        }
        if let Some(idx) = path.find("/models/") {
            let rest = &path[idx + "/models/".len()..];
            if let Some((model, verb)) = rest.rsplit_once(':') {
                let model = model.to_string();
                return match verb {
                    "generateContent" => Route::Model {
                        protocol: Protocol::Gemini,
                        path_model: Some(model),
                        path_stream: false,
                    },
                    "streamGenerateContent" => Route::Model {
                        protocol: Protocol::Gemini,
                        path_model: Some(model),
                        path_stream: true,
                    },
                    "countTokens" => Route::GeminiCountTokens { model },
                    _ => Route::NotFound,
                };
            }
        }
    }
    if method == "GET" && (path.ends_with("/models") || path.contains("/models/")) {
        let dialect = if path.contains("v1beta") || path.contains("v1alpha") {
            "gemini"
        } else if anthropic_header {
            "anthropic"
        } else {
            "openai"
        };
        return Route::Models { dialect };
    }
    Route::NotFound
}

/// What to send back.
struct Outcome {
    status: u16,
    body: Body,
    drop: bool,
    delay_ms: u64,
    gap_ms: u64,
}

impl Outcome {
    fn json(status: u16, v: Value) -> Self {
        Outcome {
            status,
            body: Body::Json(v),
            drop: false,
            delay_ms: 0,
            gap_ms: 0,
        }
    }
}

fn serve_connection(stream: TcpStream, state: Arc<Mutex<State>>) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(300)))?;
    let _ = stream.set_nodelay(true);
    let mut conn = http::Conn::new(stream);
    loop {
        let req = match conn.read_request() {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(()),
            Err(e) => {
                let body = json!({"error":{"message": e.to_string()}}).to_string();
                let _ = http::write_full(
                    &mut conn.stream,
                    400,
                    &[("content-type".into(), "application/json".into())],
                    body.as_bytes(),
                    false,
                );
                return Err(e);
            }
        };
        let keep_alive = req.keep_alive();
        let out = handle(&req, &state);
        if out.drop {
            // Close without a reply: the client sees a reset / hang-up.
            let _ = conn.stream.shutdown(Shutdown::Both);
            return Ok(());
        }
        if out.delay_ms > 0 {
            thread::sleep(Duration::from_millis(out.delay_ms));
        }
        // No request-id headers: CLIs echo them into error sentences (codex
        // appends ", request id: …"), which would make captures vary per run.
        match &out.body {
            Body::Json(v) => {
                let headers = vec![("content-type".to_string(), "application/json".to_string())];
                http::write_full(
                    &mut conn.stream,
                    out.status,
                    &headers,
                    v.to_string().as_bytes(),
                    keep_alive,
                )?;
            }
            Body::Sse(events) => {
                let headers = vec![
                    (
                        "content-type".to_string(),
                        "text/event-stream; charset=utf-8".to_string(),
                    ),
                    ("cache-control".to_string(), "no-cache".to_string()),
                ];
                let chunks: Vec<Vec<u8>> = events.iter().map(|e| e.as_bytes().to_vec()).collect();
                http::write_chunked(
                    &mut conn.stream,
                    out.status,
                    &headers,
                    &chunks,
                    Duration::from_millis(out.gap_ms),
                    keep_alive,
                )?;
            }
        }
        if !keep_alive {
            let _ = conn.stream.shutdown(Shutdown::Both);
            return Ok(());
        }
    }
}

fn handle(req: &http::Request, state: &Arc<Mutex<State>>) -> Outcome {
    let r = route(
        &req.method,
        &req.path,
        req.header("anthropic-version").is_some(),
    );
    let body_json: Option<Value> = serde_json::from_slice(&req.body).ok();
    let mut entry = json!({
        "ts": now_secs(),
        "method": req.method,
        "path": req.path,
        "query": req.query,
        "user_agent": req.header("user-agent"),
    });
    let mut st = state.lock().unwrap_or_else(|e| e.into_inner());
    st.counter += 1;
    let ids = Ids {
        n: st.counter,
        created: now_secs() as u64,
    };
    entry["seq"] = json!(st.counter);

    let out = match &r {
        Route::Control(op) => {
            entry["protocol"] = json!("control");
            control(&mut st, &req.method, op, body_json.as_ref())
        }
        Route::NotFound => {
            entry["protocol"] = json!("unknown");
            Outcome::json(
                404,
                json!({"error":{"message": format!("no route for {} {}", req.method, req.path)}}),
            )
        }
        Route::Models { dialect } => {
            entry["protocol"] = json!(format!("models:{dialect}"));
            let models: &[&str] = match *dialect {
                "gemini" => &[
                    "gemini-2.5-pro",
                    "gemini-2.5-flash",
                    "gemini-3.8-flash",
                    "gemini-3.5-flash-lite",
                ],
                "anthropic" => &["claude-opus-5-5", "claude-sonnet-4-5", "claude-haiku-4-5"],
                _ => &["fake-model", "gpt-5.5"],
            };
            Outcome::json(200, protocols::models_list(dialect, models))
        }
        Route::AnthropicCountTokens => {
            entry["protocol"] = json!("anthropic:count_tokens");
            entry["model"] = body_json
                .as_ref()
                .and_then(|b| b.get("model"))
                .cloned()
                .unwrap_or(Value::Null);
            Outcome::json(200, protocols::anthropic_count_tokens())
        }
        Route::GeminiCountTokens { model } => {
            entry["protocol"] = json!("gemini:count_tokens");
            entry["model"] = json!(model);
            Outcome::json(200, protocols::gemini_count_tokens())
        }
        Route::Model {
            protocol,
            path_model,
            path_stream,
        } => {
            entry["protocol"] = json!(protocol.name());
            model_call(
                &mut st,
                *protocol,
                path_model.as_deref(),
                *path_stream,
                body_json.as_ref(),
                ids,
                &mut entry,
            )
        }
    };
    entry["status"] = if out.drop {
        json!("drop")
    } else {
        json!(out.status)
    };
    entry["error"] = json!(out.drop || out.status >= 400);
    if let Some(b) = body_json.as_ref().and_then(Value::as_object) {
        entry["body_keys"] = json!(b.keys().collect::<Vec<_>>());
    }
    st.record(entry);
    out
}

fn model_call(
    st: &mut State,
    protocol: Protocol,
    path_model: Option<&str>,
    path_stream: bool,
    body: Option<&Value>,
    ids: Ids,
    entry: &mut Value,
) -> Outcome {
    let Some(body) = body else {
        entry["note"] = json!("request body is not JSON");
        return Outcome::json(400, protocols::error_body(protocol, 400));
    };
    let ask = reply::inspect(protocol, body);
    let model = path_model
        .map(str::to_string)
        .or(ask.model.clone())
        .unwrap_or_else(|| "fake-model".into());
    let stream = path_stream || ask.stream;
    entry["model"] = json!(model);
    entry["stream"] = json!(stream);
    entry["has_tools"] = json!(ask.has_tools);
    entry["structured"] = json!(ask.schema.is_some());

    if let Some(f) = st.take_fault() {
        return match f {
            Fault::Drop => Outcome {
                status: 0,
                body: Body::Json(Value::Null),
                drop: true,
                delay_ms: 0,
                gap_ms: 0,
            },
            Fault::Status(s) => Outcome::json(s, protocols::error_body(protocol, s)),
        };
    }
    let (delay_ms, gap_ms) = st.take_delay();
    let turn = match (ask.has_tools, ask.schema.is_some()) {
        // A forced tool (a side call such as Grok's session title) gets that
        // call and leaves the queued tool for the turn that may choose.
        (_, false) if ask.forced_tool.is_some() => {
            let (name, params) = ask.forced_tool.clone().expect("checked");
            entry["forced_tool"] = json!(name);
            entry["tool_call"] = json!(name);
            Turn::Tool {
                args: reply::instance(&params),
                name,
                namespace: None,
            }
        }
        (true, false) if let Some((name, args)) = st.take_tool(&ask.last_user_text) => {
            entry["tool_call"] = json!(name);
            // `mcp__drover__list_seats` offered as `list_seats` in a
            // `mcp__drover` namespace (Codex): called by its parts.
            match reply::namespaced(body, &name) {
                Some((namespace, tool)) => Turn::Tool {
                    name: tool,
                    args,
                    namespace: Some(namespace),
                },
                None => Turn::Tool {
                    name,
                    args,
                    namespace: None,
                },
            }
        }
        _ => {
            let text = match &ask.schema {
                Some(schema) => reply::instance(schema).to_string(),
                None => reply::reply_text(&ask, &st.reply),
            };
            entry["reply"] = json!(text);
            Turn::Text(text)
        }
    };
    let body = match protocol {
        Protocol::Anthropic => protocols::anthropic(&turn, &model, stream, ids),
        Protocol::Responses => protocols::responses(&turn, &model, stream, ids),
        Protocol::Chat => protocols::chat(&turn, &model, stream, ids),
        Protocol::Gemini => protocols::gemini(&turn, &model, stream, ids),
    };
    Outcome {
        status: 200,
        body,
        drop: false,
        delay_ms,
        gap_ms,
    }
}

fn bad(msg: impl Into<String>) -> Outcome {
    Outcome::json(400, json!({"ok": false, "error": msg.into()}))
}

fn count_of(b: &Value) -> Result<Option<u32>, Outcome> {
    match b.get("count") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(0) => Ok(None),
            Some(n) => Ok(Some(n.min(u32::MAX as u64) as u32)),
            None => Err(bad("count must be a non-negative integer")),
        },
    }
}

fn control(st: &mut State, method: &str, op: &str, body: Option<&Value>) -> Outcome {
    let empty = json!({});
    match (method, op) {
        ("GET", "health") => Outcome::json(
            200,
            json!({"ok": true, "port": st.port, "pid": std::process::id(),
            "requests": st.log.len()}),
        ),
        ("GET", "log") => Outcome::json(200, Value::Array(st.log.clone())),
        ("GET", "state") => Outcome::json(200, st.describe()),
        ("POST", "reset") => {
            st.fault = None;
            st.delay = None;
            st.tools.clear();
            st.log.clear();
            st.reply = st.initial_reply.clone();
            Outcome::json(200, json!({"ok": true, "state": st.describe()}))
        }
        ("POST", "mode") => {
            let Some(b) = body.filter(|b| b.is_object()) else {
                return bad("body must be a JSON object");
            };
            let count = match count_of(b) {
                Ok(c) => c,
                Err(o) => return o,
            };
            if let Some(r) = b.get("reply").and_then(Value::as_str) {
                st.reply = r.to_string();
            }
            let mode = b
                .get("mode")
                .and_then(Value::as_str)
                .unwrap_or(if b.get("reply").is_some() { "keep" } else { "" });
            match mode {
                "keep" => {}
                "ok" | "normal" | "off" => {
                    st.fault = None;
                    st.delay = None;
                }
                "drop" => st.fault = Some((Fault::Drop, count)),
                "error" => {
                    let fault = match b.get("status") {
                        Some(Value::String(s)) if s == "drop" => Fault::Drop,
                        Some(v) => match v
                            .as_u64()
                            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                        {
                            Some(s) if (100..=599).contains(&s) => Fault::Status(s as u16),
                            _ => return bad("status must be an HTTP status (100-599) or \"drop\""),
                        },
                        None => Fault::Status(500),
                    };
                    st.fault = Some((fault, count));
                }
                "delay" | "slow" => {
                    let d = b.get("delay_ms").and_then(Value::as_u64).unwrap_or(5000);
                    let g = b.get("gap_ms").and_then(Value::as_u64).unwrap_or(0);
                    st.delay = Some((d, g, count));
                }
                other => return bad(format!("unknown mode {other:?}: want error|drop|delay|ok")),
            }
            Outcome::json(200, json!({"ok": true, "state": st.describe()}))
        }
        ("POST", "tool") => {
            let b = body.unwrap_or(&empty);
            let Some(name) = b.get("name").and_then(Value::as_str) else {
                return bad("tool needs a \"name\"");
            };
            let remaining = match count_of(b) {
                Ok(c) => c.unwrap_or(1),
                Err(o) => return o,
            };
            let prompt = match b.get("prompt") {
                None => None,
                Some(Value::String(p)) => Some(p.clone()),
                Some(_) => return bad("prompt must be a string"),
            };
            st.tools.push_back(ToolPlan {
                name: name.to_string(),
                args: b.get("args").cloned().unwrap_or_else(|| json!({})),
                remaining,
                prompt,
            });
            Outcome::json(200, json!({"ok": true, "state": st.describe()}))
        }
        _ => Outcome::json(
            404,
            json!({"ok": false, "error": format!("unknown control endpoint {method} /__fake/{op}")}),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_by_path() {
        let m = |p| route("POST", p, false);
        assert!(matches!(
            m("/v1/messages"),
            Route::Model {
                protocol: Protocol::Anthropic,
                ..
            }
        ));
        assert_eq!(m("/v1/messages/count_tokens"), Route::AnthropicCountTokens);
        assert!(matches!(
            m("/v1/responses"),
            Route::Model {
                protocol: Protocol::Responses,
                ..
            }
        ));
        assert!(matches!(
            m("/api/v1/chat/completions"),
            Route::Model {
                protocol: Protocol::Chat,
                ..
            }
        ));
        assert_eq!(
            m("/v1beta/models/gemini-2.5-pro:streamGenerateContent"),
            Route::Model {
                protocol: Protocol::Gemini,
                path_model: Some("gemini-2.5-pro".into()),
                path_stream: true
            }
        );
        assert_eq!(
            m("/v1beta/models/g:countTokens"),
            Route::GeminiCountTokens { model: "g".into() }
        );
        assert_eq!(
            route("GET", "/v1/models", true),
            Route::Models {
                dialect: "anthropic"
            }
        );
        assert_eq!(
            route("GET", "/v1/models", false),
            Route::Models { dialect: "openai" }
        );
        assert_eq!(
            route("GET", "/v1beta/models", false),
            Route::Models { dialect: "gemini" }
        );
        assert_eq!(
            route("GET", "/__fake/log", false),
            Route::Control("log".into())
        );
        assert_eq!(m("/nope"), Route::NotFound);
    }

    #[test]
    fn mode_specs() {
        assert_eq!(parse_mode("error:529"), Ok((Some(Fault::Status(529)), 0)));
        assert_eq!(parse_mode("error:drop"), Ok((Some(Fault::Drop), 0)));
        assert_eq!(parse_mode("delay:250"), Ok((None, 250)));
        assert!(parse_mode("error:abc").is_err());
        assert!(parse_mode("bogus").is_err());
    }

    fn state() -> State {
        State {
            initial_reply: "OK".into(),
            reply: "OK".into(),
            fault: None,
            delay: None,
            tools: VecDeque::new(),
            log: vec![],
            log_file: None,
            counter: 0,
            port: 1,
        }
    }

    #[test]
    fn faults_and_tools_count_down() {
        let mut st = state();
        let o = control(
            &mut st,
            "POST",
            "mode",
            Some(&json!({"mode":"error","status":529,"count":2})),
        );
        assert_eq!(o.status, 200);
        assert_eq!(st.take_fault(), Some(Fault::Status(529)));
        assert_eq!(st.take_fault(), Some(Fault::Status(529)));
        assert_eq!(st.take_fault(), None);
        control(
            &mut st,
            "POST",
            "mode",
            Some(&json!({"mode":"error","status":"drop"})),
        );
        for _ in 0..5 {
            assert_eq!(st.take_fault(), Some(Fault::Drop));
        }
        control(&mut st, "POST", "reset", None);
        assert_eq!(st.take_fault(), None);
        control(
            &mut st,
            "POST",
            "tool",
            Some(&json!({"name":"Bash","args":{"command":"ls"}})),
        );
        assert_eq!(
            st.take_tool(""),
            Some(("Bash".into(), json!({"command":"ls"})))
        );
        assert_eq!(st.take_tool(""), None);
        assert_eq!(
            control(
                &mut st,
                "POST",
                "mode",
                Some(&json!({"mode":"error","status":"x"}))
            )
            .status,
            400
        );
    }

    /// One model call on a JSON body, as the server makes it: the answer's
    /// JSON and the request log's entry.
    fn answer(st: &mut State, protocol: Protocol, body: &Value) -> (Value, Value) {
        let mut entry = json!({});
        let ids = Ids { n: 1, created: 0 };
        let out = model_call(st, protocol, None, false, Some(body), ids, &mut entry);
        let Body::Json(doc) = out.body else {
            panic!("the answer is not JSON")
        };
        (doc, entry)
    }

    #[test]
    fn model_call_uses_tool_only_when_tools_offered() {
        let mut st = state();
        st.tools.push_back(ToolPlan {
            name: "Bash".into(),
            args: json!({}),
            remaining: 1,
            prompt: None,
        });
        let no_tools = json!({"model":"m","stream":false,"messages":[{"role":"user","content":"Reply with exactly: A"}]});
        let (d, _) = answer(&mut st, Protocol::Anthropic, &no_tools);
        assert_eq!(d["content"][0]["text"], "A");
        let mut with_tools = no_tools.clone();
        with_tools["tools"] = json!([{"name":"Bash"}]);
        let (d, e) = answer(&mut st, Protocol::Anthropic, &with_tools);
        assert_eq!(d["content"][0]["type"], "tool_use");
        assert_eq!(e["tool_call"], "Bash");
        let (d, _) = answer(&mut st, Protocol::Anthropic, &with_tools);
        assert_eq!(d["content"][0]["text"], "A");
    }

    #[test]
    fn forced_tool_answers_that_tool_and_keeps_the_queue() {
        let mut st = state();
        st.tools.push_back(ToolPlan {
            name: "run_terminal_command".into(),
            args: json!({"command":"echo hi"}),
            remaining: 1,
            prompt: None,
        });
        let title = json!({"model":"m","stream":false,"input":"Reply with exactly: A",
            "tools":[{"type":"function","name":"session_title","parameters":{"type":"object","properties":{"session_title":{"type":"string"}}}}],
            "tool_choice":{"type":"function","name":"session_title"}});
        let (d, e) = answer(&mut st, Protocol::Responses, &title);
        assert_eq!(d["output"][0]["type"], "function_call");
        assert_eq!(d["output"][0]["name"], "session_title");
        assert_eq!(d["output"][0]["arguments"], r#"{"session_title":""}"#);
        assert_eq!(e["forced_tool"], "session_title");
        assert_eq!(st.tools.len(), 1, "the queued tool is still there");
        let mut turn = title.clone();
        turn.as_object_mut().map(|o| o.remove("tool_choice"));
        let (d, e) = answer(&mut st, Protocol::Responses, &turn);
        assert_eq!(d["output"][0]["name"], "run_terminal_command");
        assert_eq!(e["forced_tool"], Value::Null);
    }

    #[test]
    fn a_tool_for_a_prompt_waits_for_that_prompt() {
        let mut st = state();
        let queued = control(
            &mut st,
            "POST",
            "tool",
            Some(&json!({"name":"Bash","args":{},"prompt":"Reply with exactly: B"})),
        );
        assert_eq!(queued.status, 200);
        let ask = |text: &str| {
            json!({"model":"m","stream":false,"tools":[{"name":"Bash"}],
                "messages":[{"role":"user","content":text}]})
        };
        // A side request (a prompt suggestion) offers tools but is not the turn.
        let (d, _) = answer(
            &mut st,
            Protocol::Anthropic,
            &ask("Suggest the next prompt"),
        );
        assert_eq!(d["content"][0]["type"], "text");
        assert_eq!(st.tools.len(), 1, "the side request left the call queued");
        let (d, _) = answer(&mut st, Protocol::Anthropic, &ask("Reply with exactly: B"));
        assert_eq!(d["content"][0]["type"], "tool_use");
        assert!(st.tools.is_empty());
        let refused = control(
            &mut st,
            "POST",
            "tool",
            Some(&json!({"name":"Bash","prompt":3})),
        );
        assert_eq!(refused.status, 400);
    }
}
