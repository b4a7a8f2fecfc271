//! The Jules REST API over HTTPS: one blocking client per endpoint, every
//! answer bounded, every refusal typed. Errors follow Google's API error
//! shape (`{"error":{"code","message","status"}}`); a refusal's kind
//! decides the fault a turn reports and whether a retry may help.

use std::time::Duration;

use drover_gate::Cleared;
use drover_types::wit::FaultKind;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Endpoint;
use super::api::{
    Activity, ActivityPage, NewSession, Session, Source, SourcePage, plain, session_name,
};

/// Bytes of an answer read at most (an activity list with patches can be large).
const ANSWER_MAX: u64 = 32 << 20;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Pages of a list read at most: a bound, not a expected size.
const PAGES_MAX: usize = 200;
/// Characters of an error message kept.
const MESSAGE_MAX: usize = 500;

#[derive(Debug, Clone, thiserror::Error)]
pub enum JulesError {
    #[error("cannot reach the Jules API at {url}: {reason}")]
    Unreachable { url: String, reason: String },
    #[error("Jules refused {what} (HTTP {code} {status}): {message}")]
    Refused {
        what: String,
        code: u16,
        /// The API's status name (`UNAUTHENTICATED`, `RESOURCE_EXHAUSTED`, …).
        status: String,
        message: String,
        /// How long the API asked to wait (`Retry-After`, or a `RetryInfo`
        /// detail's `retryDelay`).
        retry_after: Option<Duration>,
    },
    #[error("Jules's answer to {what} is not what its API reference documents: {reason}")]
    Malformed { what: String, reason: String },
}

impl JulesError {
    /// The fault a turn that ended on this error reports.
    pub fn fault_kind(&self) -> FaultKind {
        match self {
            JulesError::Unreachable { .. } => FaultKind::Network,
            JulesError::Malformed { .. } => FaultKind::ServerError,
            JulesError::Refused {
                code,
                status,
                message,
                ..
            } => match code {
                401 | 403 => FaultKind::Auth,
                429 if message.to_ascii_lowercase().contains("quota") => FaultKind::Quota,
                429 => FaultKind::RateLimit,
                503 => FaultKind::Overload,
                500..=599 => FaultKind::ServerError,
                _ if status == "RESOURCE_EXHAUSTED" => FaultKind::Quota,
                _ if status == "UNAUTHENTICATED" || status == "PERMISSION_DENIED" => {
                    FaultKind::Auth
                }
                _ => FaultKind::Unknown,
            },
        }
    }

    /// Whether the same request may succeed later: throttling, a server
    /// error, or no answer at all. `idempotent` is false for a request that
    /// must not be repeated once the server may have acted on it (creating a
    /// session, sending a message): those are retried only when the server
    /// said it did not act (429).
    pub fn retryable(&self, idempotent: bool) -> bool {
        match self {
            JulesError::Refused { code: 429, .. } => true,
            JulesError::Refused {
                code: 500 | 502 | 503 | 504,
                ..
            }
            | JulesError::Unreachable { .. } => idempotent,
            _ => false,
        }
    }

    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            JulesError::Refused { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// The API's own status name, or what went wrong, for the fault's rule.
    pub fn rule(&self) -> String {
        match self {
            JulesError::Refused { code, status, .. } => format!("jules/http-{code}/{status}"),
            JulesError::Unreachable { .. } => "jules/unreachable".to_string(),
            JulesError::Malformed { .. } => "jules/malformed".to_string(),
        }
    }
}

/// A client of one Jules API endpoint, cleared by the gate to connect.
#[derive(Clone)]
pub struct Client {
    base: String,
    key: String,
    agent: ureq::Agent,
}

impl Client {
    pub fn new(endpoint: &Cleared<Endpoint>) -> Client {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(REQUEST_TIMEOUT))
            .timeout_connect(Some(CONNECT_TIMEOUT))
            // The key goes only to the address the user named.
            .max_redirects(0)
            .build();
        Client {
            base: endpoint.url.trim_end_matches('/').to_string(),
            key: endpoint.key.clone(),
            agent: ureq::Agent::new_with_config(config),
        }
    }

    pub fn url(&self) -> &str {
        &self.base
    }

    /// The connected source for GitHub's `owner/repo`: `None` when the
    /// user has not connected it to Jules. Matched on the source's
    /// `githubRepo` (any case), so either naming of sources works.
    pub fn find_source(&self, owner: &str, repo: &str) -> Result<Option<Source>, JulesError> {
        let mut token: Option<String> = None;
        for _ in 0..PAGES_MAX {
            let mut path = "sources?pageSize=100".to_string();
            if let Some(t) = &token {
                path.push_str("&pageToken=");
                path.push_str(&query_value(t));
            }
            let page: SourcePage = self.get("GET sources", &path)?;
            let found = page.sources.into_iter().find(|s| {
                s.github_repo.as_ref().is_some_and(|g| {
                    g.owner.eq_ignore_ascii_case(owner) && g.repo.eq_ignore_ascii_case(repo)
                })
            });
            if let Some(source) = found {
                return checked_source(source).map(Some);
            }
            match page.next_page_token.filter(|t| !t.is_empty()) {
                Some(t) => token = Some(t),
                None => return Ok(None),
            }
        }
        Ok(None)
    }

    /// One page of sources: whether the key works (`doctor`, `mux`).
    pub fn ping(&self) -> Result<usize, JulesError> {
        let page: SourcePage = self.get("GET sources", "sources?pageSize=1")?;
        Ok(page.sources.len())
    }

    pub fn create_session(&self, new: &NewSession) -> Result<Session, JulesError> {
        let body = serde_json::to_value(new).map_err(|e| JulesError::Malformed {
            what: "POST sessions".to_string(),
            reason: e.to_string(),
        })?;
        let session: Session = self.post("POST sessions", "sessions", &body)?;
        checked_session("POST sessions", session)
    }

    pub fn session(&self, name: &str) -> Result<Session, JulesError> {
        let what = format!("GET {name}");
        let session: Session = self.get(&what, &checked_name(&what, name)?)?;
        checked_session(&what, session)
    }

    /// Every activity of the session, oldest first, all pages.
    pub fn activities(&self, name: &str) -> Result<Vec<Activity>, JulesError> {
        let what = format!("GET {name}/activities");
        let name = checked_name(&what, name)?;
        let mut all = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..PAGES_MAX {
            let mut path = format!("{name}/activities?pageSize=100");
            if let Some(t) = &token {
                path.push_str("&pageToken=");
                path.push_str(&query_value(t));
            }
            let page: ActivityPage = self.get(&what, &path)?;
            all.extend(page.activities);
            match page.next_page_token.filter(|t| !t.is_empty()) {
                Some(t) => token = Some(t),
                None => break,
            }
        }
        Ok(all)
    }

    pub fn approve_plan(&self, name: &str) -> Result<(), JulesError> {
        let what = format!("POST {name}:approvePlan");
        let path = format!("{}:approvePlan", checked_name(&what, name)?);
        let _: Value = self.post(&what, &path, &serde_json::json!({}))?;
        Ok(())
    }

    pub fn send_message(&self, name: &str, prompt: &str) -> Result<(), JulesError> {
        let what = format!("POST {name}:sendMessage");
        let path = format!("{}:sendMessage", checked_name(&what, name)?);
        let _: Value = self.post(&what, &path, &serde_json::json!({ "prompt": prompt }))?;
        Ok(())
    }

    fn get<T: DeserializeOwned>(&self, what: &str, path: &str) -> Result<T, JulesError> {
        let response = self
            .agent
            .get(format!("{}/{path}", self.base))
            .header("X-Goog-Api-Key", &self.key)
            .call();
        self.answer(what, response)
    }

    fn post<T: DeserializeOwned>(
        &self,
        what: &str,
        path: &str,
        body: &Value,
    ) -> Result<T, JulesError> {
        let payload = body.to_string();
        let response = self
            .agent
            .post(format!("{}/{path}", self.base))
            .header("X-Goog-Api-Key", &self.key)
            .content_type("application/json")
            .send(payload.as_bytes());
        self.answer(what, response)
    }

    fn answer<T: DeserializeOwned>(
        &self,
        what: &str,
        response: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
    ) -> Result<T, JulesError> {
        let mut response = response.map_err(|e| self.transport(e))?;
        let code = response.status().as_u16();
        let retry_header = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let body = response
            .body_mut()
            .with_config()
            .limit(ANSWER_MAX)
            .read_to_string()
            .map_err(|e| match e {
                ureq::Error::BodyExceedsLimit(n) => JulesError::Malformed {
                    what: what.to_string(),
                    reason: format!("the answer is larger than {n} bytes"),
                },
                other => self.transport(other),
            })?;
        if !(200..300).contains(&code) {
            return Err(refusal(what, code, &body, retry_header));
        }
        // An empty answer (approvePlan's) reads as an empty object.
        let text = if body.trim().is_empty() { "{}" } else { &body };
        serde_json::from_str(text).map_err(|e| JulesError::Malformed {
            what: what.to_string(),
            reason: e.to_string(),
        })
    }

    fn transport(&self, error: ureq::Error) -> JulesError {
        JulesError::Unreachable {
            url: self.base.clone(),
            reason: error.to_string(),
        }
    }
}

/// A non-2xx answer as a typed refusal: Google's error object when the body
/// is one, else the HTTP status alone.
fn refusal(what: &str, code: u16, body: &str, retry_header: Option<Duration>) -> JulesError {
    let error = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("error").cloned());
    let text = |key: &str| {
        error
            .as_ref()
            .and_then(|e| e.get(key))
            .and_then(Value::as_str)
            .map(|s| clean(s, MESSAGE_MAX))
    };
    let retry_info = error
        .as_ref()
        .and_then(|e| e.get("details"))
        .and_then(Value::as_array)
        .and_then(|details| {
            details.iter().find_map(|d| {
                let is_retry_info = d
                    .get("@type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"));
                is_retry_info
                    .then(|| d.get("retryDelay").and_then(Value::as_str))
                    .flatten()
                    .and_then(parse_delay)
            })
        });
    JulesError::Refused {
        what: what.to_string(),
        code,
        status: text("status").unwrap_or_default(),
        message: text("message").unwrap_or_else(|| clean(body, 200)),
        retry_after: retry_header.or(retry_info),
    }
}

/// A protobuf `Duration` in JSON: `"30s"`, `"1.5s"`.
fn parse_delay(text: &str) -> Option<Duration> {
    let seconds: f64 = text.trim().strip_suffix('s')?.parse().ok()?;
    (seconds.is_finite() && (0.0..=86_400.0).contains(&seconds))
        .then(|| Duration::from_secs_f64(seconds))
}

/// Text from the API, safe to journal and print: no control characters,
/// bounded.
pub fn clean(text: &str, max: usize) -> String {
    let folded: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    drover_types::text::truncate_chars(folded.trim(), max)
}

fn checked_name(what: &str, name: &str) -> Result<String, JulesError> {
    session_name(name).ok_or_else(|| JulesError::Malformed {
        what: what.to_string(),
        reason: format!(
            "{:?} is not a session name (sessions/<id>)",
            clean(name, 80)
        ),
    })
}

fn checked_session(what: &str, session: Session) -> Result<Session, JulesError> {
    checked_name(what, &session.name)?;
    Ok(session)
}

fn checked_source(source: Source) -> Result<Source, JulesError> {
    let ok = source
        .name
        .strip_prefix("sources/")
        .is_some_and(|rest| rest.split('/').all(plain));
    if ok {
        Ok(source)
    } else {
        Err(JulesError::Malformed {
            what: "GET sources".to_string(),
            reason: format!("{:?} is not a source name", clean(&source.name, 80)),
        })
    }
}

/// A page token as a query value: percent-encoded outside the unreserved set.
fn query_value(text: &str) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn google_error_json_becomes_a_typed_refusal() {
        let e = refusal(
            "GET sessions/1",
            429,
            r#"{"error":{"code":429,"message":"Quota exceeded for requests per day","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"7s"}]}}"#,
            None,
        );
        assert_eq!(e.fault_kind(), FaultKind::Quota);
        assert_eq!(e.retry_after(), Some(Duration::from_secs(7)));
        assert!(e.retryable(false));
        let e = refusal(
            "GET sessions/1",
            401,
            r#"{"error":{"code":401,"message":"API key not valid","status":"UNAUTHENTICATED"}}"#,
            None,
        );
        assert_eq!(e.fault_kind(), FaultKind::Auth);
        assert!(!e.retryable(true));
        let e = refusal(
            "POST sessions",
            503,
            "<html>\x1b[2J</html>",
            Some(Duration::from_secs(2)),
        );
        assert_eq!(e.fault_kind(), FaultKind::Overload);
        assert!(e.retryable(true) && !e.retryable(false));
        assert_eq!(e.retry_after(), Some(Duration::from_secs(2)));
        assert!(!e.to_string().contains('\x1b'));
    }

    #[test]
    fn a_retry_delay_is_a_bounded_protobuf_duration() {
        assert_eq!(parse_delay("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_delay("30"), None);
        assert_eq!(parse_delay("-1s"), None);
        assert_eq!(parse_delay("1e12s"), None);
    }
}
