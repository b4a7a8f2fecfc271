//! Following a job's log as Ray streams it: the dashboard's WebSocket log
//! tail (`/api/jobs/{id}/logs/tail`). Ray sends the log from its first byte
//! on every connection, in chunks that need not end at a line, so
//! [`Position`] counts the bytes already handled and skips them after a
//! reconnect; the same bookkeeping reads the whole log (`GET …/logs`).

use std::io::ErrorKind;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use tungstenite::protocol::WebSocketConfig;
use tungstenite::{Message, WebSocket};

/// Ray sends at most 20 000 characters per message.
const MESSAGE_MAX: usize = 1 << 20;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How far into the log a follower is, across connections.
#[derive(Debug, Default)]
pub struct Position {
    /// Bytes of complete lines handled.
    consumed: u64,
    /// Bytes received on the current connection.
    received: u64,
    /// The part of a line past `consumed` received so far.
    partial: Vec<u8>,
}

impl Position {
    /// A new connection (or a whole-log read) starts again from byte 0.
    pub fn restart(&mut self) {
        self.received = 0;
        self.partial.clear();
    }

    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// Feeds the next bytes of the current connection; returns the complete
    /// lines not handled before, without their newlines.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<String> {
        let start = self.received;
        self.received += chunk.len() as u64;
        let known = self.consumed + self.partial.len() as u64;
        if self.received <= known {
            return Vec::new();
        }
        let skip = usize::try_from(known.saturating_sub(start)).unwrap_or(usize::MAX);
        self.partial
            .extend_from_slice(chunk.get(skip..).unwrap_or_default());
        let mut lines = Vec::new();
        while let Some(end) = self.partial.iter().position(|b| *b == b'\n') {
            let rest = self.partial.split_off(end + 1);
            let line = std::mem::replace(&mut self.partial, rest);
            self.consumed += line.len() as u64;
            lines.push(String::from_utf8_lossy(&line[..end]).into_owned());
        }
        lines
    }
}

/// What one wait on the stream brought.
#[derive(Debug)]
pub enum Next {
    Text(String),
    /// Nothing within the wait.
    Idle,
    /// Ray closed the stream: the job ended and its log was read to the end.
    Closed,
    /// The connection failed; reconnect.
    Broken(String),
}

pub struct Tail {
    socket: WebSocket<TcpStream>,
}

impl Tail {
    /// Connects to `url` (`ws://host:port/…`); reads wait at most `poll`.
    pub fn connect(url: &str, poll: Duration) -> Result<Tail, String> {
        let authority = url
            .strip_prefix("ws://")
            .and_then(|rest| rest.split('/').next())
            .ok_or_else(|| format!("{url} is not a ws:// URL"))?;
        let addr = authority
            .to_socket_addrs()
            .map_err(|e| format!("{authority}: {e}"))?
            .next()
            .ok_or_else(|| format!("{authority}: no address"))?;
        let stream = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT)
            .map_err(|e| format!("{authority}: {e}"))?;
        stream
            .set_read_timeout(Some(CONNECT_TIMEOUT))
            .and_then(|()| stream.set_write_timeout(Some(CONNECT_TIMEOUT)))
            .map_err(|e| e.to_string())?;
        let config = WebSocketConfig::default()
            .max_message_size(Some(MESSAGE_MAX))
            .max_frame_size(Some(MESSAGE_MAX));
        let (socket, _) = tungstenite::client::client_with_config(url, stream, Some(config))
            .map_err(|e| format!("{url}: {e}"))?;
        socket
            .get_ref()
            .set_read_timeout(Some(poll.max(Duration::from_millis(1))))
            .map_err(|e| e.to_string())?;
        Ok(Tail { socket })
    }

    pub fn receive(&mut self) -> Next {
        match self.socket.read() {
            Ok(Message::Text(text)) => Next::Text(text.as_str().to_string()),
            Ok(Message::Binary(bytes)) => Next::Text(String::from_utf8_lossy(&bytes).into_owned()),
            Ok(Message::Close(_)) => Next::Closed,
            Ok(_) => {
                // A ping: the pong goes out with the next flush.
                let _ = self.socket.flush();
                Next::Idle
            }
            Err(tungstenite::Error::Io(e))
                if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) =>
            {
                Next::Idle
            }
            Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                Next::Closed
            }
            Err(e) => Next::Broken(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_chunks_come_out_whole_and_once() {
        let mut p = Position::default();
        assert_eq!(p.feed(b"one\ntw"), ["one"]);
        assert_eq!(p.feed(b"o\nthr"), ["two"]);
        // The stream broke; Ray sends everything again, in other chunks.
        p.restart();
        assert!(p.feed(b"one\n").is_empty());
        assert_eq!(p.feed(b"two\nthree\nfo"), ["three"]);
        assert_eq!(p.consumed(), "one\ntwo\nthree\n".len() as u64);
        // A whole-log read after the job ended.
        p.restart();
        assert_eq!(p.feed(b"one\ntwo\nthree\nfour\nfive"), ["four"]);
        assert_eq!(p.feed(b"\n"), ["five"]);
    }

    #[test]
    fn a_shorter_replay_changes_nothing() {
        let mut p = Position::default();
        assert_eq!(p.feed(b"a\nb\n"), ["a", "b"]);
        p.restart();
        assert!(p.feed(b"a\n").is_empty());
        assert_eq!(p.consumed(), 4);
    }

    #[test]
    fn nothing_listening_is_an_error_not_a_hang() {
        assert!(
            Tail::connect(
                "ws://127.0.0.1:9/api/jobs/x/logs/tail",
                Duration::from_millis(10)
            )
            .is_err()
        );
        assert!(Tail::connect("http://x", Duration::from_millis(10)).is_err());
    }
}
