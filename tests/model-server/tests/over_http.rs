//! Starts the real `drover-model-server` binary and speaks every protocol to
//! it over real HTTP (a tiny HTTP/1.1 client over std::net, so the test does
//! not depend on the server's own parsing code).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Server {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Server {
    fn start(extra: &[&str]) -> Server {
        // Unique per test process and per server within it.
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "drover-model-server-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let port_file = dir.join("port");
        let child = Command::new(env!("CARGO_BIN_EXE_drover-model-server"))
            .args(["--port", "0", "--port-file"])
            .arg(&port_file)
            .arg("--log")
            .arg(dir.join("requests.jsonl"))
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn drover-model-server");
        let deadline = Instant::now() + Duration::from_secs(10);
        let port = loop {
            if let Some(p) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                break p;
            }
            assert!(
                Instant::now() < deadline,
                "server did not write its port file"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        Server { child, port, dir }
    }

    fn request(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Resp {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let body = body.map(|b| b.to_string()).unwrap_or_default();
        let mut req =
            format!("{method} {path} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n");
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str(&format!(
            "content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        ));
        s.write_all(req.as_bytes()).unwrap();
        read_response(&mut s)
    }

    fn post(&self, path: &str, body: Value) -> Resp {
        self.request("POST", path, &[], Some(&body))
    }

    fn get(&self, path: &str) -> Resp {
        self.request("GET", path, &[], None)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[derive(Debug)]
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Resp {
    fn header(&self, k: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(k))
            .map(|(_, v)| v.as_str())
    }
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
    /// SSE events as (event name, data) pairs; `[DONE]` becomes a JSON string.
    fn sse(&self) -> Vec<(Option<String>, Value)> {
        assert!(
            self.header("content-type")
                .unwrap_or("")
                .starts_with("text/event-stream"),
            "{self:?}"
        );
        self.body
            .split("\n\n")
            .filter(|b| !b.trim().is_empty())
            .map(|block| {
                let mut name = None;
                let mut data = String::new();
                for line in block.lines() {
                    if let Some(n) = line.strip_prefix("event:") {
                        name = Some(n.trim().to_string());
                    } else if let Some(d) = line.strip_prefix("data:") {
                        data.push_str(d.trim());
                    }
                }
                let v = if data == "[DONE]" {
                    json!("[DONE]")
                } else {
                    serde_json::from_str(&data).unwrap()
                };
                (name, v)
            })
            .collect()
    }
}

/// Read a whole response (status line, headers, content-length or chunked body).
fn read_response(s: &mut TcpStream) -> Resp {
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 "), "bad status line {line:?}");
    let status: u16 = line[9..12].parse().unwrap();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':').unwrap();
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    let find = |k: &str| {
        headers
            .iter()
            .find(|(n, _): &&(String, String)| n.eq_ignore_ascii_case(k))
            .map(|(_, v)| v.clone())
    };
    let mut body = Vec::new();
    if find("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).unwrap();
            let n = usize::from_str_radix(size.trim(), 16).unwrap();
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk).unwrap();
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(len) = find("content-length") {
        body.resize(len.parse().unwrap(), 0);
        r.read_exact(&mut body).unwrap();
    }
    Resp {
        status,
        headers,
        body: String::from_utf8(body).unwrap(),
    }
}

fn user(text: &str) -> Value {
    json!([{"role":"user","content":text}])
}

#[test]
fn anthropic_messages_stream_and_count_tokens() {
    let srv = Server::start(&[]);
    let r = srv.post(
        "/v1/messages?beta=true",
        json!({"model":"claude-opus-5-5","stream":true,"max_tokens":100,"messages":user("Reply with exactly: \"HELLO\"")}),
    );
    assert_eq!(r.status, 200);
    let ev = r.sse();
    let names: Vec<_> = ev
        .iter()
        .filter_map(|(n, _)| n.as_deref())
        .filter(|n| *n != "ping")
        .collect();
    assert_eq!(
        names,
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    let text: String = ev
        .iter()
        .filter_map(|(_, d)| d["delta"]["text"].as_str())
        .collect();
    assert_eq!(text, "HELLO");
    let usage = &ev
        .iter()
        .find(|(n, _)| n.as_deref() == Some("message_delta"))
        .unwrap()
        .1["usage"];
    assert_eq!(usage["input_tokens"], 1201);
    assert_eq!(usage["cache_creation_input_tokens"], 1302);
    assert_eq!(usage["cache_read_input_tokens"], 1403);
    assert_eq!(usage["output_tokens"], 57);

    let ct = srv.post(
        "/v1/messages/count_tokens?beta=true",
        json!({"model":"m","messages":user("x")}),
    );
    assert_eq!(ct.json(), json!({"input_tokens":1201}));
    let models = srv.request(
        "GET",
        "/v1/models",
        &[("anthropic-version", "2023-06-01")],
        None,
    );
    assert_eq!(models.json()["data"][0]["type"], "model");
}

#[test]
fn openai_responses_stream() {
    let srv = Server::start(&["--reply", "DEFAULT"]);
    let r = srv.post(
        "/v1/responses",
        json!({"model":"gpt-5.5","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}),
    );
    let ev = r.sse();
    assert_eq!(ev.first().unwrap().0.as_deref(), Some("response.created"));
    let (name, done) = ev.last().unwrap();
    assert_eq!(name.as_deref(), Some("response.completed"));
    let resp = &done["response"];
    assert_eq!(resp["output"][0]["content"][0]["text"], "DEFAULT");
    assert_eq!(resp["usage"]["input_tokens"], 2101);
    assert_eq!(resp["usage"]["input_tokens_details"]["cached_tokens"], 1000);
    assert_eq!(resp["usage"]["output_tokens"], 67);
    assert_eq!(
        resp["usage"]["output_tokens_details"]["reasoning_tokens"],
        5
    );
    assert_eq!(resp["usage"]["total_tokens"], 2168);

    // Structured output via text.format.
    let r = srv.post(
        "/v1/responses",
        json!({"model":"m","stream":false,"input":"x","text":{"format":{"type":"json_schema","name":"s",
            "schema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}}}),
    );
    let text = r.json()["output"][0]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        json!({"ok":false})
    );
}

#[test]
fn chat_completions_stream_usage_and_done() {
    let srv = Server::start(&[]);
    let r = srv.post(
        "/v1/chat/completions",
        json!({"model":"fake-model","stream":true,"stream_options":{"include_usage":true},
               "messages":[{"role":"user","content":"\"Reply with exactly: C1\""}]}),
    );
    let ev = r.sse();
    assert_eq!(ev.last().unwrap().1, json!("[DONE]"));
    let text: String = ev
        .iter()
        .filter_map(|(_, d)| d["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "C1");
    let usage = ev.iter().find(|(_, d)| d.get("usage").is_some()).unwrap().1["usage"].clone();
    assert_eq!(usage["prompt_tokens"], 3101);
    assert_eq!(usage["prompt_tokens_details"]["cached_tokens"], 300);
    assert_eq!(usage["completion_tokens"], 77);
    assert_eq!(usage["total_tokens"], 3178);

    let r = srv.post(
        "/v1/chat/completions",
        json!({"model":"m","messages":user("x"),"response_format":{"type":"json_schema",
            "json_schema":{"name":"t","schema":{"type":"object","properties":{"title":{"type":"string"}}}}}}),
    );
    let content = r.json()["choices"][0]["message"]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        serde_json::from_str::<Value>(&content).unwrap(),
        json!({"title":""})
    );
    assert_eq!(srv.get("/v1/models").json()["object"], "list");
}

#[test]
fn gemini_generate_stream_count_and_router_schema() {
    let srv = Server::start(&[]);
    let body = json!({"contents":[{"role":"user","parts":[{"text":"Reply with exactly: G1"}]}]});
    let r = srv.post(
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
        body.clone(),
    );
    let ev = r.sse();
    let text: String = ev
        .iter()
        .filter_map(|(_, d)| d["candidates"][0]["content"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(text, "G1");
    let last = &ev.last().unwrap().1;
    assert_eq!(last["modelVersion"], "gemini-2.5-pro");
    assert_eq!(last["usageMetadata"]["promptTokenCount"], 4101);
    assert_eq!(last["usageMetadata"]["cachedContentTokenCount"], 400);
    assert_eq!(last["usageMetadata"]["candidatesTokenCount"], 87);
    assert_eq!(last["usageMetadata"]["thoughtsTokenCount"], 9);
    assert_eq!(last["usageMetadata"]["totalTokenCount"], 4197);

    let router = srv.post(
        "/v1beta/models/gemini-3.5-flash-lite:generateContent",
        json!({"contents":[{"role":"user","parts":[{"text":"classify"}]}],
               "generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"object",
                 "properties":{"complexity_reasoning":{"type":"string"},"complexity_score":{"type":"integer"}},
                 "required":["complexity_reasoning","complexity_score"]}}}),
    );
    let t = router.json()["candidates"][0]["content"]["parts"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        serde_json::from_str::<Value>(&t).unwrap(),
        json!({"complexity_reasoning":"","complexity_score":0})
    );

    let ct = srv.post("/v1beta/models/gemini-2.5-pro:countTokens", body);
    assert_eq!(ct.json(), json!({"totalTokens":4101}));
    assert!(
        srv.get("/v1beta/models").json()["models"]
            .as_array()
            .unwrap()
            .len()
            > 1
    );
}

#[test]
fn error_modes_use_each_api_shape_and_count_down() {
    let srv = Server::start(&[]);
    let ok = srv.post(
        "/__fake/mode",
        json!({"mode":"error","status":529,"count":1}),
    );
    assert_eq!(ok.status, 200);
    let r = srv.post("/v1/messages", json!({"model":"m","messages":user("x")}));
    assert_eq!(r.status, 529);
    assert_eq!(r.json()["error"]["type"], "overloaded_error");
    let r = srv.post("/v1/messages", json!({"model":"m","messages":user("x")}));
    assert_eq!(r.status, 200, "count 1 applies once");

    srv.post("/__fake/mode", json!({"mode":"error","status":503}));
    let g = srv.post("/v1beta/models/g:generateContent", json!({"contents":[]}));
    assert_eq!(
        (g.status, g.json()["error"]["status"].clone()),
        (503, json!("UNAVAILABLE"))
    );
    let c = srv.post(
        "/v1/chat/completions",
        json!({"model":"m","messages":user("x")}),
    );
    assert_eq!(c.status, 503);
    assert!(c.json()["error"]["message"].is_string());
    srv.post("/__fake/mode", json!({"mode":"error","status":401}));
    let o = srv.post("/v1/responses", json!({"model":"m","input":"x"}));
    assert_eq!(o.status, 401);
    assert_eq!(o.json()["error"]["code"], "invalid_api_key");

    // drop: the socket closes with no status line at all.
    srv.post(
        "/__fake/mode",
        json!({"mode":"error","status":"drop","count":1}),
    );
    let mut s = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
    let body = json!({"model":"m","messages":user("x")}).to_string();
    write!(
        s,
        "POST /v1/messages HTTP/1.1\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut got = Vec::new();
    let _ = s.read_to_end(&mut got);
    assert!(
        got.is_empty(),
        "dropped connection must not reply: {:?}",
        String::from_utf8_lossy(&got)
    );
    assert_eq!(
        srv.post("/v1/messages", json!({"model":"m","messages":user("x")}))
            .status,
        200
    );

    // reset clears a persistent fault.
    srv.post("/__fake/mode", json!({"mode":"error","status":500}));
    srv.post("/__fake/reset", json!({}));
    assert_eq!(
        srv.post("/v1/responses", json!({"model":"m","input":"x"}))
            .status,
        200
    );
    assert_eq!(srv.post("/__fake/mode", json!({"mode":"nope"})).status, 400);
}

#[test]
fn tool_call_then_text_after_tool_result() {
    let srv = Server::start(&[]);
    srv.post(
        "/__fake/tool",
        json!({"name":"Bash","args":{"command":"echo hi"},"count":1}),
    );
    // A call without tools is not consumed by the plan.
    let r = srv.post(
        "/v1/messages",
        json!({"model":"m","stream":false,"messages":user("Reply with exactly: T")}),
    );
    assert_eq!(r.json()["content"][0]["type"], "text");
    let tools = json!([{"name":"Bash","input_schema":{"type":"object"}}]);
    let r = srv.post(
        "/v1/messages",
        json!({"model":"m","stream":true,"tools":tools,"messages":user("Reply with exactly: T")}),
    );
    let ev = r.sse();
    let start = ev
        .iter()
        .find(|(n, _)| n.as_deref() == Some("content_block_start"))
        .unwrap();
    assert_eq!(start.1["content_block"]["type"], "tool_use");
    assert_eq!(start.1["content_block"]["name"], "Bash");
    let delta = ev
        .iter()
        .find(|(n, _)| n.as_deref() == Some("message_delta"))
        .unwrap();
    assert_eq!(delta.1["delta"]["stop_reason"], "tool_use");
    // After the tool result the model answers with text again.
    let follow = json!({"model":"m","stream":false,"tools":tools,"messages":[
        {"role":"user","content":"Reply with exactly: T"},
        {"role":"assistant","content":[{"type":"tool_use","id":"x","name":"Bash","input":{}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":"hi"}]}]});
    assert_eq!(
        srv.post("/v1/messages", follow).json()["content"][0]["text"],
        "T"
    );

    // Same plan in the other three shapes.
    for (path, body, check) in [
        (
            "/v1/responses",
            json!({"model":"m","stream":false,"input":"x","tools":[{"type":"function","name":"exec_command"}]}),
            "/output/0/name",
        ),
        (
            "/v1/chat/completions",
            json!({"model":"m","messages":user("x"),"tools":[{"type":"function","function":{"name":"bash"}}]}),
            "/choices/0/message/tool_calls/0/function/name",
        ),
        (
            "/v1beta/models/g:generateContent",
            json!({"contents":[],"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]}),
            "/candidates/0/content/parts/0/functionCall/name",
        ),
    ] {
        srv.post(
            "/__fake/tool",
            json!({"name":"shell","args":{"command":"ls"}}),
        );
        let got = srv.post(path, body).json();
        assert_eq!(got.pointer(check), Some(&json!("shell")), "{path}: {got}");
    }
}

#[test]
fn log_endpoint_and_jsonl_file_record_every_request() {
    let srv = Server::start(&["--mode", "error:429"]);
    assert_eq!(srv.get("/__fake/health").json()["ok"], true);
    let r = srv.post(
        "/v1/chat/completions",
        json!({"model":"fake-model","messages":user("x")}),
    );
    assert_eq!(r.status, 429);
    assert_eq!(srv.get("/nope").status, 404);
    let log = srv.get("/__fake/log").json();
    let entries = log.as_array().unwrap();
    assert_eq!(
        entries.len(),
        3,
        "health, chat, 404 (the log request itself is logged after it answers)"
    );
    assert_eq!(entries[1]["protocol"], "chat");
    assert_eq!(entries[1]["model"], "fake-model");
    assert_eq!(entries[1]["error"], true);
    assert_eq!(entries[1]["status"], 429);
    assert_eq!(entries[0]["error"], false);
    let file = std::fs::read_to_string(srv.dir.join("requests.jsonl")).unwrap();
    let lines: Vec<Value> = file
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[3]["path"], "/__fake/log");
    for l in &lines {
        for k in ["method", "path", "protocol", "error", "status"] {
            assert!(l.get(k).is_some(), "log line lacks {k}: {l}");
        }
    }
}

#[test]
fn keep_alive_serves_several_requests_on_one_connection() {
    let srv = Server::start(&[]);
    let mut s = TcpStream::connect(("127.0.0.1", srv.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    for i in 0..3 {
        let body = json!({"model":"m","stream":true,"messages":user(&format!("Reply with exactly: K{i}"))}).to_string();
        write!(
            s,
            "POST /v1/chat/completions HTTP/1.1\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let r = read_response(&mut s);
        assert_eq!(r.header("connection"), Some("keep-alive"));
        assert!(
            r.body.contains(&format!("\"content\":\"K{i}\"")),
            "{}",
            r.body
        );
    }
}
