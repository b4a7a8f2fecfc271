//! A minimal MCP client for the tests: `drover mcp` as a child speaking
//! JSON-RPC over its stdin and stdout (one message a line), the
//! handshake done, tool calls answered within [`super::HANG`].

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};

use serde_json::{Value, json};

pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
}

impl Client {
    /// Starts `command` (a `drover … mcp`) and initializes the session.
    pub fn start(mut command: Command) -> Client {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("drover mcp starts");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut client = Client {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        let init = client.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "drover-tests", "version": "0"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "drover", "{init}");
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        client
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to drover mcp");
        stdin.flush().expect("flush");
    }

    /// One request and its response (notifications in between are skipped).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(super::HANG)
                .unwrap_or_else(|e| panic!("no answer to {method} from drover mcp: {e}"));
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("drover mcp wrote a line that is not JSON ({e}): {line}")
            });
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// `tools/call`: the result (`content`, `isError`).
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let response = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert!(
            response.get("error").is_none(),
            "{tool}: a protocol error: {response}"
        );
        response["result"].clone()
    }

    /// A successful call's JSON document.
    pub fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.call(tool, arguments.clone());
        assert_ne!(result["isError"], true, "{tool} {arguments}: {result}");
        serde_json::from_str(text(&result))
            .unwrap_or_else(|e| panic!("{tool}: not JSON ({e}): {result}"))
    }

    /// A failed call's message.
    pub fn error(&mut self, tool: &str, arguments: Value) -> String {
        let result = self.call(tool, arguments.clone());
        assert_eq!(
            result["isError"], true,
            "{tool} {arguments} did not fail: {result}"
        );
        text(&result).to_string()
    }
}

/// The first text content of a tool result.
pub fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

impl Drop for Client {
    fn drop(&mut self) {
        // Closing stdin ends the session; the server then exits.
        drop(self.stdin.take());
        let until = std::time::Instant::now() + super::HANG;
        while std::time::Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
