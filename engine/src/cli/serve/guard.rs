//! Who may talk to `drover serve`: a request must name a host the server
//! answers as (`Host`: DNS rebinding points a foreign name at 127.0.0.1), a
//! browser's request must come from the server's own page (`Origin`: a
//! page elsewhere cannot post an answer), and every request must carry the
//! token (the cookie the token URL sets, or `Authorization: Bearer`).

use std::net::SocketAddr;
use std::path::PathBuf;

use axum::http::{HeaderMap, Method, header};

/// The cookie the token URL sets.
pub const COOKIE: &str = "drover_token";

/// Why a request is refused.
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// `Host` is missing or not a name this server answers as.
    Host(String),
    /// `Origin` is not this server's page.
    Origin(String),
    /// No token, or not this server's.
    Token,
}

impl Refusal {
    pub fn status(&self) -> axum::http::StatusCode {
        match self {
            Refusal::Token => axum::http::StatusCode::UNAUTHORIZED,
            _ => axum::http::StatusCode::FORBIDDEN,
        }
    }

    pub fn message(&self) -> String {
        match self {
            Refusal::Host(host) => format!(
                "Host {host:?} is not a name this server answers as (a DNS-rebinding page would send one)"
            ),
            Refusal::Origin(origin) => {
                format!("Origin {origin:?} is not this server's page")
            }
            Refusal::Token => {
                "no valid token: open the URL `drover serve` printed, or send `Authorization: Bearer TOKEN`".to_string()
            }
        }
    }
}

/// What a request must match.
#[derive(Clone)]
pub struct Guard {
    token: String,
    /// `host:port` values `Host` may carry.
    hosts: Vec<String>,
}

impl Guard {
    /// Loopback names for a loopback listener; with `remote`, also the
    /// address listened on and any `--host` names given.
    pub fn new(token: String, listen: SocketAddr, names: &[String]) -> Guard {
        let port = listen.port();
        let mut hosts = vec![
            format!("127.0.0.1:{port}"),
            format!("localhost:{port}"),
            format!("[::1]:{port}"),
        ];
        if !listen.ip().is_loopback() && !listen.ip().is_unspecified() {
            hosts.push(listen.to_string());
        }
        hosts.extend(names.iter().map(|n| format!("{n}:{port}")));
        Guard { token, hosts }
    }

    pub fn token(&self) -> &str {
        &self.token
    }

    /// Whether a request with these headers (and this query token) may go
    /// on: Host first, then Origin, then the token.
    pub fn check(
        &self,
        method: &Method,
        headers: &HeaderMap,
        query_token: Option<&str>,
    ) -> Result<(), Refusal> {
        let host = text(headers, header::HOST.as_str()).unwrap_or_default();
        if !self.hosts.iter().any(|h| h.eq_ignore_ascii_case(&host)) {
            return Err(Refusal::Host(host));
        }
        // A browser sends Origin on every cross-origin request and on its
        // own POSTs; a script with the bearer token sends none.
        match text(headers, header::ORIGIN.as_str()) {
            Some(origin) if !self.own_origin(&origin) => return Err(Refusal::Origin(origin)),
            None if *method != Method::GET
                && text(headers, "sec-fetch-site").is_some_and(|s| s != "same-origin") =>
            {
                return Err(Refusal::Origin("(none, from another site)".to_string()));
            }
            _ => {}
        }
        let offered = [
            query_token.map(str::to_string),
            bearer(headers),
            cookie(headers, COOKIE),
        ];
        if offered
            .iter()
            .flatten()
            .any(|t| constant_time_eq(t.as_bytes(), self.token.as_bytes()))
        {
            Ok(())
        } else {
            Err(Refusal::Token)
        }
    }

    fn own_origin(&self, origin: &str) -> bool {
        origin
            .strip_prefix("http://")
            .is_some_and(|host| self.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)))
    }
}

fn text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_string())
}

fn bearer(headers: &HeaderMap) -> Option<String> {
    text(headers, header::AUTHORIZATION.as_str())?
        .strip_prefix("Bearer ")
        .map(|t| t.trim().to_string())
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

/// Compares without stopping at the first difference: the time a refusal
/// takes says nothing about how much of a guess was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A new random token (32 bytes, hex).
pub fn new_token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no random bytes for a token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Stores the server's URL with its token where only you can read it
/// (`$XDG_STATE_HOME/drover/serve-PORT.url`, 0600), for scripts.
pub fn store(url: &str, port: u16) -> anyhow::Result<PathBuf> {
    let dir = drover_gate::seal::state_dir()
        .ok_or_else(|| anyhow::anyhow!("no state directory (set HOME or XDG_STATE_HOME)"))?;
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("serve-{port}.url"));
    drover_state::remove_file(&path)?;
    let mut file = drover_state::create_new(&path)?
        .ok_or_else(|| anyhow::anyhow!("{} appeared while it was being written", path.display()))?;
    std::io::Write::write_all(&mut file, format!("{url}\n").as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn guard() -> Guard {
        Guard::new(
            "t0k".to_string(),
            "127.0.0.1:8080".parse().expect("addr"),
            &[],
        )
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_str(v).expect("value"));
        }
        h
    }

    #[test]
    fn a_request_needs_its_host_its_origin_and_the_token() {
        let g = guard();
        let get = Method::GET;
        let post = Method::POST;
        let ok = headers(&[("host", "127.0.0.1:8080"), ("authorization", "Bearer t0k")]);
        assert_eq!(g.check(&get, &ok, None), Ok(()));
        let cookie = headers(&[
            ("host", "localhost:8080"),
            ("cookie", "a=b; drover_token=t0k"),
        ]);
        assert_eq!(g.check(&get, &cookie, None), Ok(()));
        let query = headers(&[("host", "localhost:8080")]);
        assert_eq!(g.check(&get, &query, Some("t0k")), Ok(()));
        assert_eq!(g.check(&get, &query, Some("t0x")), Err(Refusal::Token));
        assert_eq!(g.check(&get, &query, None), Err(Refusal::Token));
        // DNS rebinding: a foreign name resolving to 127.0.0.1.
        let rebound = headers(&[
            ("host", "evil.example:8080"),
            ("authorization", "Bearer t0k"),
        ]);
        assert_eq!(
            g.check(&get, &rebound, None),
            Err(Refusal::Host("evil.example:8080".to_string()))
        );
        let other_port = headers(&[("host", "127.0.0.1:9999"), ("authorization", "Bearer t0k")]);
        assert!(matches!(
            g.check(&get, &other_port, None),
            Err(Refusal::Host(_))
        ));
        // CSRF: another page posting with the user's cookie.
        let foreign = headers(&[
            ("host", "127.0.0.1:8080"),
            ("cookie", "drover_token=t0k"),
            ("origin", "http://evil.example"),
        ]);
        assert!(matches!(
            g.check(&post, &foreign, None),
            Err(Refusal::Origin(_))
        ));
        let cross_site = headers(&[
            ("host", "127.0.0.1:8080"),
            ("cookie", "drover_token=t0k"),
            ("sec-fetch-site", "cross-site"),
        ]);
        assert!(matches!(
            g.check(&post, &cross_site, None),
            Err(Refusal::Origin(_))
        ));
        let own = headers(&[
            ("host", "127.0.0.1:8080"),
            ("cookie", "drover_token=t0k"),
            ("origin", "http://127.0.0.1:8080"),
        ]);
        assert_eq!(g.check(&post, &own, None), Ok(()));
    }

    #[test]
    fn a_remote_listener_answers_to_its_address_and_the_names_given() {
        let g = Guard::new(
            "t".to_string(),
            "192.168.1.5:80".parse().expect("addr"),
            &["box.lan".to_string()],
        );
        for host in ["192.168.1.5:80", "box.lan:80", "localhost:80"] {
            let h = headers(&[("host", host), ("authorization", "Bearer t")]);
            assert_eq!(g.check(&Method::GET, &h, None), Ok(()), "{host}");
        }
    }
}
