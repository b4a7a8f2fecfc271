//! drover-model-server on 127.0.0.1: starting it, steering it through its
//! control endpoints, reading its request log, and the usage drover should
//! report for the requests it answered.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::bins::model_server_exe;

/// Usage drover reports for one answered request of a protocol: drover's
/// `Tokens` convention (input excludes cache reads, output includes
/// reasoning), from the numbers drover-model-server sends
/// (docs/model-server.md).
pub fn usage_per_request(protocol: &str) -> Value {
    match protocol {
        // input 1201, cache_creation 1302, cache_read 1403, output 57; the
        // server never splits cache writes by lifetime, so no 1-hour part.
        "anthropic" => {
            json!({"input": 1201, "output": 57, "cache_read": 1403, "cache_write": 1302, "cache_write_1h": 0, "reasoning": 0})
        }
        // input 2101 (1000 cached), output 67 (5 reasoning)
        "responses" => {
            json!({"input": 1101, "output": 67, "cache_read": 1000, "cache_write": 0, "cache_write_1h": 0, "reasoning": 5})
        }
        // prompt 3101 (300 cached), completion 77
        "chat" => {
            json!({"input": 2801, "output": 77, "cache_read": 300, "cache_write": 0, "cache_write_1h": 0, "reasoning": 0})
        }
        // prompt 4101 (400 cached), candidates 87, thoughts 9
        "gemini" => {
            json!({"input": 3701, "output": 96, "cache_read": 400, "cache_write": 0, "cache_write_1h": 0, "reasoning": 9})
        }
        other => panic!("no usage known for protocol {other}"),
    }
}

/// The usage document drover should report for these answered requests.
pub fn expected_usage(requests: &[Value]) -> Value {
    let mut total = json!({"input": 0, "output": 0, "cache_read": 0, "cache_write": 0, "cache_write_1h": 0, "reasoning": 0, "requests": 0});
    for r in requests {
        let one = usage_per_request(r["protocol"].as_str().unwrap_or_default());
        for key in [
            "input",
            "output",
            "cache_read",
            "cache_write",
            "cache_write_1h",
            "reasoning",
        ] {
            total[key] = json!(total[key].as_u64().unwrap_or(0) + one[key].as_u64().unwrap_or(0));
        }
        total["requests"] = json!(total["requests"].as_u64().unwrap_or(0) + 1);
    }
    total
}

pub const MODEL_PROTOCOLS: &[&str] = &["anthropic", "responses", "chat", "gemini"];

pub struct ModelServer {
    child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl ModelServer {
    pub fn start(dir: &Path) -> ModelServer {
        let port_file = dir.join("server.port");
        let log = dir.join("server.jsonl");
        let child = Command::new(model_server_exe())
            .args(["--port", "0", "--port-file"])
            .arg(&port_file)
            .arg("--log")
            .arg(&log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(
                std::fs::File::create(dir.join("server.err"))
                    .map(Stdio::from)
                    .unwrap_or_else(|_| Stdio::null()),
            )
            .spawn()
            .expect("drover-model-server starts");
        let mut server = ModelServer {
            child,
            port: 0,
            log,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(port) = std::fs::read_to_string(&port_file)
                .ok()
                .and_then(|t| t.trim().parse::<u16>().ok())
            {
                server.port = port;
                return server;
            }
            assert!(
                Instant::now() < deadline,
                "drover-model-server wrote no port file within 20 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// POST a control endpoint (`mode`, `tool`, `reset`); panics unless 200.
    pub fn control(&self, endpoint: &str, body: &Value) -> Value {
        let body = body.to_string();
        let mut stream =
            TcpStream::connect(("127.0.0.1", self.port)).expect("connect to the model server");
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        write!(
            stream,
            "POST /__fake/{endpoint} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .expect("send the control request");
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        assert!(
            answer.starts_with("HTTP/1.1 200"),
            "/__fake/{endpoint} {body}: {answer}"
        );
        let json = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        serde_json::from_str(json.trim()).unwrap_or(Value::Null)
    }

    /// Every request the server logged so far.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    pub fn last_seq(&self) -> u64 {
        self.requests()
            .iter()
            .filter_map(|r| r["seq"].as_u64())
            .max()
            .unwrap_or(0)
    }

    /// Model calls after `seq` that the server answered with a 200.
    pub fn answered_since(&self, seq: u64) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r["seq"].as_u64().is_some_and(|s| s > seq))
            .filter(|r| MODEL_PROTOCOLS.contains(&r["protocol"].as_str().unwrap_or_default()))
            .filter(|r| r["status"] == 200 && r["error"] != true)
            .collect()
    }

    /// Model calls after `seq`, answered or not.
    pub fn model_calls_since(&self, seq: u64) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r["seq"].as_u64().is_some_and(|s| s > seq))
            .filter(|r| MODEL_PROTOCOLS.contains(&r["protocol"].as_str().unwrap_or_default()))
            .collect()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port on 127.0.0.1 with no listener. Chosen below Linux's ephemeral
/// range (32768 and up), where the tests' own servers, which bind port 0,
/// never land: a port freed from that range could be handed to a model
/// server of a test running alongside, and the "closed" CLI would reach it.
pub fn closed_port() -> u16 {
    (20_000..21_000)
        .find(|&port| std::net::TcpStream::connect(("127.0.0.1", port)).is_err())
        .expect("a closed port between 20000 and 21000")
}
