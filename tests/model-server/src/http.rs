//! Minimal HTTP/1.1 plumbing over `std::net`: request parsing is done by
//! `httparse`; bodies (Content-Length or chunked), keep-alive, `Expect:
//! 100-continue`, full and chunked (SSE) responses are handled here.

use std::io::{self, Read, Write};
use std::net::TcpStream;

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// Path without the query string.
    pub path: String,
    /// Query string without the leading `?` ("" when absent).
    pub query: String,
    pub version_minor: u8,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether the client wants the connection kept open after the response.
    pub fn keep_alive(&self) -> bool {
        match self.header("connection").map(|v| v.to_ascii_lowercase()) {
            Some(v) if v.contains("close") => false,
            Some(v) if v.contains("keep-alive") => true,
            _ => self.version_minor >= 1,
        }
    }
}

/// A connection with a read buffer (bytes read past one request belong to the next).
pub struct Conn {
    pub stream: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    pub fn new(stream: TcpStream) -> Self {
        Conn {
            stream,
            buf: Vec::with_capacity(8192),
        }
    }

    /// Read more bytes into the buffer; Ok(false) on EOF.
    fn fill(&mut self) -> io::Result<bool> {
        let mut tmp = [0u8; 16 * 1024];
        let n = self.stream.read(&mut tmp)?;
        self.buf.extend_from_slice(&tmp[..n]);
        Ok(n > 0)
    }

    /// Read one request. Ok(None) when the peer closed the connection cleanly
    /// between requests.
    pub fn read_request(&mut self) -> io::Result<Option<Request>> {
        // Head.
        let (head_len, method, target, version_minor, headers) = loop {
            if !self.buf.is_empty() {
                let mut hs = [httparse::EMPTY_HEADER; 96];
                let mut req = httparse::Request::new(&mut hs);
                match req.parse(&self.buf) {
                    Ok(httparse::Status::Complete(n)) => {
                        let headers = req
                            .headers
                            .iter()
                            .map(|h| {
                                (
                                    h.name.to_string(),
                                    String::from_utf8_lossy(h.value).into_owned(),
                                )
                            })
                            .collect::<Vec<_>>();
                        break (
                            n,
                            req.method.unwrap_or("GET").to_string(),
                            req.path.unwrap_or("/").to_string(),
                            req.version.unwrap_or(1),
                            headers,
                        );
                    }
                    Ok(httparse::Status::Partial) => {}
                    Err(e) => {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            format!("bad request head: {e}"),
                        ));
                    }
                }
                if self.buf.len() > MAX_HEAD {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "request head too large",
                    ));
                }
            }
            if !self.fill()? {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "eof inside request head",
                ));
            }
        };
        self.buf.drain(..head_len);
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p.to_string(), q.to_string()),
            None => (target, String::new()),
        };
        let mut req = Request {
            method,
            path,
            query,
            version_minor,
            headers,
            body: Vec::new(),
        };

        if req
            .header("expect")
            .is_some_and(|v| v.eq_ignore_ascii_case("100-continue"))
        {
            self.stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        }

        let chunked = req
            .header("transfer-encoding")
            .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
        if chunked {
            req.body = self.read_chunked_body()?;
        } else if let Some(len) = req.header("content-length") {
            let len: usize = len
                .trim()
                .parse()
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad content-length"))?;
            if len > MAX_BODY {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "body too large"));
            }
            while self.buf.len() < len {
                if !self.fill()? {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "eof inside body",
                    ));
                }
            }
            req.body = self.buf.drain(..len).collect();
        }
        Ok(Some(req))
    }

    fn read_line(&mut self) -> io::Result<Vec<u8>> {
        loop {
            if let Some(pos) = self.buf.windows(2).position(|w| w == b"\r\n") {
                let line = self.buf[..pos].to_vec();
                self.buf.drain(..pos + 2);
                return Ok(line);
            }
            if self.buf.len() > MAX_HEAD {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "chunk line too long",
                ));
            }
            if !self.fill()? {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "eof inside chunked body",
                ));
            }
        }
    }

    fn read_chunked_body(&mut self) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        loop {
            let line = self.read_line()?;
            let text = String::from_utf8_lossy(&line);
            let size_str = text.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size_str, 16)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))?;
            if size == 0 {
                // Trailers until an empty line.
                while !self.read_line()?.is_empty() {}
                return Ok(body);
            }
            if body.len() + size > MAX_BODY {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "body too large"));
            }
            while self.buf.len() < size + 2 {
                if !self.fill()? {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "eof inside chunk",
                    ));
                }
            }
            body.extend(self.buf.drain(..size));
            self.buf.drain(..2);
        }
    }
}

pub fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Unknown",
    }
}

fn head(status: u16, headers: &[(String, String)], keep_alive: bool, framing: &str) -> Vec<u8> {
    let mut h = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    for (k, v) in headers {
        h.push_str(k);
        h.push_str(": ");
        h.push_str(v);
        h.push_str("\r\n");
    }
    h.push_str(framing);
    h.push_str(if keep_alive {
        "connection: keep-alive\r\n\r\n"
    } else {
        "connection: close\r\n\r\n"
    });
    h.into_bytes()
}

/// Write a response with a Content-Length body.
pub fn write_full(
    w: &mut impl Write,
    status: u16,
    headers: &[(String, String)],
    body: &[u8],
    keep_alive: bool,
) -> io::Result<()> {
    let mut out = head(
        status,
        headers,
        keep_alive,
        &format!("content-length: {}\r\n", body.len()),
    );
    out.extend_from_slice(body);
    w.write_all(&out)?;
    w.flush()
}

/// Write a chunked response, one chunk per item, flushing after each (SSE).
pub fn write_chunked(
    w: &mut impl Write,
    status: u16,
    headers: &[(String, String)],
    chunks: &[Vec<u8>],
    gap: std::time::Duration,
    keep_alive: bool,
) -> io::Result<()> {
    w.write_all(&head(
        status,
        headers,
        keep_alive,
        "transfer-encoding: chunked\r\n",
    ))?;
    w.flush()?;
    for (i, c) in chunks.iter().enumerate() {
        if c.is_empty() {
            continue;
        }
        if i > 0 && !gap.is_zero() {
            std::thread::sleep(gap);
        }
        let mut out = format!("{:x}\r\n", c.len()).into_bytes();
        out.extend_from_slice(c);
        out.extend_from_slice(b"\r\n");
        w.write_all(&out)?;
        w.flush()?;
    }
    w.write_all(b"0\r\n\r\n")?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    fn pair() -> (TcpStream, Conn) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (s, _) = l.accept().unwrap();
        (c, Conn::new(s))
    }

    #[test]
    fn parses_content_length_and_pipelined_requests() {
        let (mut c, mut conn) = pair();
        c.write_all(b"POST /v1/messages?beta=true HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcdGET /__fake/health HTTP/1.1\r\nConnection: close\r\n\r\n").unwrap();
        let r = conn.read_request().unwrap().unwrap();
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/v1/messages");
        assert_eq!(r.query, "beta=true");
        assert_eq!(r.body, b"abcd");
        assert!(r.keep_alive());
        let r2 = conn.read_request().unwrap().unwrap();
        assert_eq!(r2.path, "/__fake/health");
        assert!(!r2.keep_alive());
        drop(c);
        assert!(conn.read_request().unwrap().is_none());
    }

    #[test]
    fn parses_chunked_body() {
        let (mut c, mut conn) = pair();
        c.write_all(b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;ext=1\r\nde\r\n0\r\n\r\n")
            .unwrap();
        let r = conn.read_request().unwrap().unwrap();
        assert_eq!(r.body, b"abcde");
    }

    #[test]
    fn chunked_writer_frames_chunks() {
        let mut out = Vec::new();
        write_chunked(
            &mut out,
            200,
            &[],
            &[b"hello".to_vec(), b"!".to_vec()],
            std::time::Duration::ZERO,
            true,
        )
        .unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(s.starts_with("HTTP/1.1 200 OK\r\n"));
        assert!(
            s.ends_with("\r\n\r\n5\r\nhello\r\n1\r\n!\r\n0\r\n\r\n"),
            "{s:?}"
        );
    }
}
