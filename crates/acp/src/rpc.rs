//! JSON-RPC 2.0 over a pair of byte streams, one message per line (the
//! ACP stdio transport). A reader thread turns lines into [`Incoming`]
//! messages on a channel, so the session drivers stay synchronous loops with
//! a timeout per wait. Every line in both directions can be copied to a
//! traffic log.
//!
//! What the agent writes is hostile: a line longer than [`LINE_MAX`] is
//! dropped whole (reported as [`Incoming::Invalid`]), and a line that is not
//! a JSON-RPC message is reported, never fatal.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use agent_client_protocol_schema::v1::{Error as RpcError, RequestId};
use serde::Serialize;
use serde_json::{Value, json};

/// The longest line read from an agent (a session/update carrying a large
/// file diff stays well below it).
pub const LINE_MAX: usize = 16 << 20;
/// Bytes of one message copied into the traffic log.
const TRAFFIC_LINE_MAX: usize = 64 << 10;

/// One message from the agent.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request {
        id: RequestId,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    Response {
        id: RequestId,
        result: Result<Value, RpcError>,
    },
    /// Not a JSON-RPC message: stray output, a torn or oversized line.
    Invalid(String),
}

/// What waiting for the next message gave.
#[derive(Debug, PartialEq)]
pub enum Next {
    Message(Incoming),
    /// Nothing arrived within the wait.
    Idle,
    /// The agent closed its output (it exited, or will).
    Closed,
}

#[derive(Debug, thiserror::Error)]
#[error("cannot write to the agent: {0}")]
pub struct SendError(#[from] pub std::io::Error);

pub struct Connection {
    writer: Mutex<Box<dyn Write + Send>>,
    incoming: Receiver<Incoming>,
    next_id: AtomicI64,
    traffic: Option<PathBuf>,
}

impl Connection {
    /// Starts the reader thread on `reader`; messages go out on `writer`.
    /// `traffic`, when given, gets every line: `-> ` out, `<- ` in.
    pub fn new(
        reader: impl Read + Send + 'static,
        writer: impl Write + Send + 'static,
        traffic: Option<PathBuf>,
    ) -> Connection {
        let (tx, rx) = channel();
        let log = traffic.clone();
        std::thread::Builder::new()
            .name("acp-reader".to_string())
            .spawn(move || {
                let mut reader = BufReader::new(reader);
                while let Some(line) = read_line(&mut reader) {
                    let message = match line {
                        Line::Text(bytes) => {
                            log_line(log.as_ref(), "<- ", &bytes);
                            classify(&bytes)
                        }
                        Line::Oversized(len) => {
                            log_line(log.as_ref(), "<- ", b"(oversized line dropped)");
                            Incoming::Invalid(format!(
                                "a line of {len} bytes (more than {LINE_MAX}) was dropped"
                            ))
                        }
                    };
                    if tx.send(message).is_err() {
                        return;
                    }
                }
            })
            .ok();
        Connection {
            writer: Mutex::new(Box::new(writer)),
            incoming: rx,
            next_id: AtomicI64::new(1),
            traffic,
        }
    }

    fn send(&self, message: &Value) -> Result<(), SendError> {
        let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
        log_line(self.traffic.as_ref(), "-> ", &line);
        line.push(b'\n');
        let mut writer = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        writer.write_all(&line)?;
        writer.flush()?;
        Ok(())
    }

    /// Sends a request; its response arrives later as [`Incoming::Response`].
    pub fn request(&self, method: &str, params: impl Serialize) -> Result<RequestId, SendError> {
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
        let params = serde_json::to_value(params).map_err(std::io::Error::other)?;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        Ok(id)
    }

    pub fn notify(&self, method: &str, params: impl Serialize) -> Result<(), SendError> {
        let params = serde_json::to_value(params).map_err(std::io::Error::other)?;
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    /// Answers one of the agent's requests.
    pub fn respond(
        &self,
        id: &RequestId,
        result: Result<Value, RpcError>,
    ) -> Result<(), SendError> {
        let message = match result {
            Ok(value) => json!({"jsonrpc": "2.0", "id": id, "result": value}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        };
        self.send(&message)
    }

    /// The next message, waiting at most `wait`.
    pub fn next(&self, wait: Duration) -> Next {
        match self.incoming.recv_timeout(wait) {
            Ok(message) => Next::Message(message),
            Err(RecvTimeoutError::Timeout) => Next::Idle,
            Err(RecvTimeoutError::Disconnected) => Next::Closed,
        }
    }
}

enum Line {
    Text(Vec<u8>),
    Oversized(usize),
}

/// One line without its terminator; `None` at the end of the stream. A line
/// past [`LINE_MAX`] is consumed to its end but not kept.
fn read_line(reader: &mut impl BufRead) -> Option<Line> {
    let mut line = Vec::new();
    let mut len = 0usize;
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        if buf.is_empty() {
            return (len > 0).then(|| finish(line, len));
        }
        let (chunk, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        len += chunk.len();
        if len <= LINE_MAX {
            line.extend_from_slice(chunk);
        } else {
            line = Vec::new();
        }
        let used = done.unwrap_or(chunk.len());
        reader.consume(used);
        if done.is_some() {
            return Some(finish(line, len));
        }
    }
}

fn finish(mut line: Vec<u8>, len: usize) -> Line {
    if len > LINE_MAX {
        return Line::Oversized(len);
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Line::Text(line)
}

fn classify(bytes: &[u8]) -> Incoming {
    let Ok(Value::Object(mut message)) = serde_json::from_slice::<Value>(bytes) else {
        return Incoming::Invalid(format!(
            "not a JSON-RPC message: {}",
            drover_types::text::truncate_chars(&String::from_utf8_lossy(bytes), 200)
        ));
    };
    let id = message
        .remove("id")
        .and_then(|id| serde_json::from_value::<RequestId>(id).ok());
    let method = message
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_string);
    let params = message.remove("params").unwrap_or(Value::Null);
    match (id, method) {
        (Some(id), Some(method)) => Incoming::Request { id, method, params },
        (None, Some(method)) => Incoming::Notification { method, params },
        (Some(id), None) => {
            if let Some(error) = message.remove("error") {
                let error =
                    serde_json::from_value::<RpcError>(error.clone()).unwrap_or_else(|_| {
                        RpcError::new(-32603, format!("malformed error object: {error}"))
                    });
                Incoming::Response {
                    id,
                    result: Err(error),
                }
            } else if let Some(result) = message.remove("result") {
                Incoming::Response {
                    id,
                    result: Ok(result),
                }
            } else {
                Incoming::Invalid("a response with neither result nor error".to_string())
            }
        }
        (None, None) => Incoming::Invalid("a JSON object that is not JSON-RPC".to_string()),
    }
}

/// Best effort: a traffic log must never break a session.
fn log_line(path: Option<&PathBuf>, prefix: &str, bytes: &[u8]) {
    let Some(path) = path else {
        return;
    };
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(TRAFFIC_LINE_MAX)]);
    let cut = if bytes.len() > TRAFFIC_LINE_MAX {
        " …(cut)"
    } else {
        ""
    };
    let _ = drover_state::append_line(path, &format!("{prefix}{text}{cut}"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<Incoming> {
        let conn = Connection::new(std::io::Cursor::new(input.to_vec()), std::io::sink(), None);
        let mut out = Vec::new();
        loop {
            match conn.next(Duration::from_secs(5)) {
                Next::Message(m) => out.push(m),
                Next::Closed => return out,
                Next::Idle => panic!("the reader stalled"),
            }
        }
    }

    #[test]
    fn messages_are_told_apart_by_id_and_method() {
        let got = lines(
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"stopReason\":\"end_turn\"}}\n\
              {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":-32000,\"message\":\"Authentication required\"}}\r\n\
              {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"session/request_permission\",\"params\":{}}\n\
              {\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"x\":1}}\n\
              Loaded cached credentials.\n\
              {\"jsonrpc\":\"2.0\",\"id\":4}",
        );
        assert_eq!(
            got[0],
            Incoming::Response {
                id: RequestId::Number(3),
                result: Ok(json!({"stopReason": "end_turn"}))
            }
        );
        assert!(matches!(
            &got[1],
            Incoming::Response { id: RequestId::Str(s), result: Err(e) } if s == "a" && i32::from(e.code) == -32000
        ));
        assert!(matches!(
            &got[2],
            Incoming::Request { id: RequestId::Number(0), method, .. } if method == "session/request_permission"
        ));
        assert_eq!(
            got[3],
            Incoming::Notification {
                method: "session/update".to_string(),
                params: json!({"x": 1})
            }
        );
        assert!(matches!(&got[4], Incoming::Invalid(t) if t.contains("Loaded cached credentials")));
        assert!(matches!(&got[5], Incoming::Invalid(t) if t.contains("neither result nor error")));
        assert_eq!(got.len(), 6);
    }

    #[test]
    fn an_oversized_line_is_dropped_and_the_next_one_still_read() {
        let mut input = vec![b'x'; LINE_MAX + 10];
        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n");
        let got = lines(&input);
        assert!(matches!(&got[0], Incoming::Invalid(t) if t.contains("dropped")));
        assert!(matches!(&got[1], Incoming::Notification { method, .. } if method == "m"));
    }

    #[test]
    fn requests_get_fresh_ids_and_traffic_is_logged_both_ways() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("traffic");
        let (reader, mut agent_out) = std::io::pipe().expect("pipe");
        let (mut agent_in, writer) = std::io::pipe().expect("pipe");
        let conn = Connection::new(reader, writer, Some(log.clone()));
        let first = conn
            .request("initialize", json!({"protocolVersion": 1}))
            .expect("send");
        let second = conn.request("session/new", json!({})).expect("send");
        assert_ne!(first, second);
        conn.respond(&RequestId::Number(0), Err(RpcError::method_not_found()))
            .expect("send");
        writeln!(
            agent_out,
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{}}}}"
        )
        .expect("write");
        assert!(matches!(
            conn.next(Duration::from_secs(5)),
            Next::Message(Incoming::Response { .. })
        ));
        drop(agent_out);
        assert_eq!(conn.next(Duration::from_secs(5)), Next::Closed);
        drop(conn);
        let mut sent = String::new();
        agent_in.read_to_string(&mut sent).expect("read");
        let sent: Vec<Value> = sent
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        assert_eq!(sent[0]["method"], "initialize");
        assert_eq!(sent[2]["error"]["code"], -32601);
        let traffic = std::fs::read_to_string(&log).expect("traffic log");
        assert_eq!(traffic.lines().filter(|l| l.starts_with("-> ")).count(), 3);
        assert_eq!(traffic.lines().filter(|l| l.starts_with("<- ")).count(), 1);
    }
}
