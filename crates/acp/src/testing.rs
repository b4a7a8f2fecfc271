//! A scripted peer for the protocol clients' tests.

use std::io::{BufRead, BufReader, Write};

use serde_json::{Value, json};

use crate::rpc::Connection;

/// A scripted agent on the other end of two pipes: for each line the
/// client sends, `reply` returns the lines to answer with; the thread
/// returns what the client sent.
pub fn scripted(
    reply: impl Fn(&Value) -> Vec<Value> + Send + 'static,
) -> (Connection, std::thread::JoinHandle<Vec<Value>>) {
    let (client_in, mut agent_out) = std::io::pipe().expect("pipe");
    let (agent_in, client_out) = std::io::pipe().expect("pipe");
    let agent = std::thread::spawn(move || {
        let mut seen = Vec::new();
        for line in BufReader::new(agent_in).lines() {
            let Ok(line) = line else { break };
            let message: Value = serde_json::from_str(&line).expect("client sends JSON");
            for answer in reply(&message) {
                writeln!(agent_out, "{answer}").expect("write");
            }
            seen.push(message);
        }
        seen
    });
    (Connection::new(client_in, client_out, None), agent)
}

/// The response to `message` with `result`.
pub fn result(message: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": message["id"], "result": result})
}
