//! Ray's Jobs REST API on the dashboard address: submit, info, logs, stop,
//! plus the version and the node list `doctor` shows. Every answer is
//! bounded and checked; a cluster that cannot be reached is
//! [`RayError::Unreachable`], which sessions report as a `network` fault.

use std::collections::BTreeMap;
use std::time::Duration;

use drover_gate::Cleared;
use serde::{Deserialize, Serialize};

/// Bytes of a job's log read at once (Ray keeps the whole file).
const LOGS_MAX: u64 = 64 << 20;
/// Bytes of any other answer.
const ANSWER_MAX: u64 = 8 << 20;
/// A request that takes longer than this counts as unreachable.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Characters of an error body kept in messages.
const BODY_IN_MESSAGE: usize = 2000;

#[derive(Debug, Clone, thiserror::Error)]
pub enum RayError {
    #[error("cannot reach the Ray dashboard at {address}: {reason}")]
    Unreachable { address: String, reason: String },
    #[error("Ray refused {what} (HTTP {status}): {body}")]
    Refused {
        what: String,
        status: u16,
        body: String,
    },
    #[error("Ray's answer to {what} is not what the Jobs API documents: {reason}")]
    Malformed { what: String, reason: String },
}

/// `JobStatus` as the API spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum JobStatus {
    Pending,
    Running,
    Stopped,
    Succeeded,
    Failed,
}

impl JobStatus {
    pub fn terminal(self) -> bool {
        matches!(
            self,
            JobStatus::Stopped | JobStatus::Succeeded | JobStatus::Failed
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Pending => "PENDING",
            JobStatus::Running => "RUNNING",
            JobStatus::Stopped => "STOPPED",
            JobStatus::Succeeded => "SUCCEEDED",
            JobStatus::Failed => "FAILED",
        }
    }
}

/// The fields of `GET /api/jobs/{id}` drover uses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobInfo {
    pub status: JobStatus,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub error_type: Option<String>,
    #[serde(default)]
    pub driver_node_id: Option<String>,
    #[serde(default)]
    pub driver_agent_http_address: Option<String>,
    #[serde(default)]
    pub driver_exit_code: Option<i64>,
}

/// `GET /api/version`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Version {
    pub version: String,
    pub ray_version: String,
}

/// One node of `GET /api/v0/nodes` (Ray's state API, served by the same
/// dashboard).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub node_id: String,
    pub node_ip: String,
    #[serde(default)]
    pub is_head_node: bool,
    pub state: String,
    #[serde(default)]
    pub resources_total: BTreeMap<String, f64>,
}

/// What `POST /api/jobs/` is given.
#[derive(Debug, Clone, Serialize)]
pub struct Submission {
    pub entrypoint: String,
    pub submission_id: String,
    pub runtime_env: serde_json::Value,
    pub metadata: BTreeMap<String, String>,
    pub entrypoint_num_cpus: f64,
    pub entrypoint_resources: BTreeMap<String, f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entrypoint_label_selector: Option<BTreeMap<String, String>>,
}

/// The outcome of a submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submitted {
    New,
    /// The id was taken: a retry of a submission whose answer was lost.
    AlreadyThere,
}

/// A client for one dashboard.
#[derive(Clone)]
pub struct Jobs {
    base: String,
    agent: ureq::Agent,
}

impl Jobs {
    /// `address` is a normalized `http://host:port[/prefix]` the gate let
    /// through for a connection.
    pub fn new(address: &Cleared<String>) -> Jobs {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(REQUEST_TIMEOUT))
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .max_redirects(0)
            .build();
        Jobs {
            base: address.get().trim_end_matches('/').to_string(),
            agent: ureq::Agent::new_with_config(config),
        }
    }

    pub fn address(&self) -> &str {
        &self.base
    }

    /// `ws://…/api/jobs/{id}/logs/tail`.
    pub fn tail_url(&self, id: &str) -> String {
        let rest = self.base.strip_prefix("http://").unwrap_or(&self.base);
        format!("ws://{rest}/api/jobs/{}/logs/tail", path_segment(id))
    }

    pub fn version(&self) -> Result<Version, RayError> {
        let what = "GET /api/version";
        let (status, body) = self.call(
            what,
            self.agent.get(format!("{}/api/version", self.base)).call(),
            ANSWER_MAX,
        )?;
        expect_ok(what, status, &body)?;
        parse(what, &body)
    }

    pub fn submit(&self, submission: &Submission) -> Result<Submitted, RayError> {
        let what = "POST /api/jobs/";
        let payload = serde_json::to_vec(submission).map_err(|e| RayError::Malformed {
            what: what.to_string(),
            reason: e.to_string(),
        })?;
        let response = self
            .agent
            .post(format!("{}/api/jobs/", self.base))
            .content_type("application/json")
            .send(&payload[..]);
        let (status, body) = self.call(what, response, ANSWER_MAX)?;
        if status == 200 {
            return Ok(Submitted::New);
        }
        // Ray answers a taken submission id with a 4xx/5xx whose text says so.
        if body.contains(&submission.submission_id) && body.contains("already exists") {
            return Ok(Submitted::AlreadyThere);
        }
        Err(refused(what, status, &body))
    }

    /// `None` when Ray knows no such job.
    pub fn info(&self, id: &str) -> Result<Option<JobInfo>, RayError> {
        let what = format!("GET /api/jobs/{id}");
        let url = format!("{}/api/jobs/{}", self.base, path_segment(id));
        let (status, body) = self.call(&what, self.agent.get(url).call(), ANSWER_MAX)?;
        if status == 404 {
            return Ok(None);
        }
        expect_ok(&what, status, &body)?;
        parse(&what, &body).map(Some)
    }

    /// The job's whole log so far.
    pub fn logs(&self, id: &str) -> Result<String, RayError> {
        #[derive(Deserialize)]
        struct Logs {
            logs: String,
        }
        let what = format!("GET /api/jobs/{id}/logs");
        let url = format!("{}/api/jobs/{}/logs", self.base, path_segment(id));
        let (status, body) = self.call(&what, self.agent.get(url).call(), LOGS_MAX)?;
        expect_ok(&what, status, &body)?;
        parse::<Logs>(&what, &body).map(|l| l.logs)
    }

    /// Asks Ray to stop the job; `false` when it had already ended.
    pub fn stop(&self, id: &str) -> Result<bool, RayError> {
        #[derive(Deserialize)]
        struct Stopped {
            stopped: bool,
        }
        let what = format!("POST /api/jobs/{id}/stop");
        let url = format!("{}/api/jobs/{}/stop", self.base, path_segment(id));
        let (status, body) = self.call(&what, self.agent.post(url).send_empty(), ANSWER_MAX)?;
        expect_ok(&what, status, &body)?;
        parse::<Stopped>(&what, &body).map(|s| s.stopped)
    }

    pub fn nodes(&self) -> Result<Vec<Node>, RayError> {
        #[derive(Deserialize)]
        struct Page {
            result: Vec<Node>,
        }
        #[derive(Deserialize)]
        struct Data {
            result: Page,
        }
        #[derive(Deserialize)]
        struct Answer {
            data: Data,
        }
        let what = "GET /api/v0/nodes";
        let url = format!("{}/api/v0/nodes?limit=1000", self.base);
        let (status, body) = self.call(what, self.agent.get(url).call(), ANSWER_MAX)?;
        expect_ok(what, status, &body)?;
        parse::<Answer>(what, &body).map(|a| a.data.result.result)
    }

    fn call(
        &self,
        what: &str,
        response: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
        limit: u64,
    ) -> Result<(u16, String), RayError> {
        let mut response = response.map_err(|e| self.transport(e))?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(limit)
            .read_to_string()
            .map_err(|e| match e {
                ureq::Error::BodyExceedsLimit(n) => RayError::Malformed {
                    what: what.to_string(),
                    reason: format!("the answer is larger than {n} bytes"),
                },
                other => self.transport(other),
            })?;
        Ok((status, body))
    }

    fn transport(&self, error: ureq::Error) -> RayError {
        RayError::Unreachable {
            address: self.base.clone(),
            reason: error.to_string(),
        }
    }
}

/// Submission ids are drover's own (`[A-Za-z0-9._-]`), but escape anyway.
fn path_segment(id: &str) -> String {
    id.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn expect_ok(what: &str, status: u16, body: &str) -> Result<(), RayError> {
    if status == 200 {
        Ok(())
    } else {
        Err(refused(what, status, body))
    }
}

fn refused(what: &str, status: u16, body: &str) -> RayError {
    RayError::Refused {
        what: what.to_string(),
        status,
        body: summarize(body),
    }
}

/// Ray's error bodies are Python tracebacks: the last line says what went
/// wrong. Bounded and stripped of control characters.
pub fn summarize(body: &str) -> String {
    let clean = super::clean(body);
    let last = clean
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && *l != ".")
        .unwrap_or_default();
    drover_types::text::truncate_chars(last, BODY_IN_MESSAGE)
}

fn parse<T: serde::de::DeserializeOwned>(what: &str, body: &str) -> Result<T, RayError> {
    serde_json::from_str(body).map_err(|e| RayError::Malformed {
        what: what.to_string(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_info_reads_what_ray_answers() {
        let text = r#"{"type": "SUBMISSION", "job_id": null, "submission_id": "t1", "driver_info": null,
            "status": "FAILED", "entrypoint": "x", "message": "Job entrypoint command failed with exit code 1",
            "error_type": "JOB_ENTRYPOINT_COMMAND_ERROR", "start_time": 1, "end_time": 2, "metadata": {},
            "runtime_env": {}, "driver_agent_http_address": "http://127.0.0.3:48501",
            "driver_node_id": "e9fd", "driver_exit_code": 1}"#;
        let info: JobInfo = parse("t", text).expect("parses");
        assert_eq!(info.status, JobStatus::Failed);
        assert!(info.status.terminal());
        assert_eq!(info.driver_node_id.as_deref(), Some("e9fd"));
        assert_eq!(info.driver_exit_code, Some(1));
        let e = parse::<JobInfo>("GET x", r#"{"status": "EXPLODED"}"#).expect_err("unknown status");
        assert!(e.to_string().contains("GET x"), "{e}");
    }

    #[test]
    fn error_bodies_become_their_last_line() {
        let body = "Traceback (most recent call last):\n  File \"x\", line 1\n\u{1b}[31mValueError: Job with submission_id t1 already exists.\u{1b}[0m\n.\n";
        assert_eq!(
            summarize(body),
            "ValueError: Job with submission_id t1 already exists."
        );
    }

    fn cleared(address: &str) -> Cleared<String> {
        drover_gate::clear(
            drover_gate::Effect::Connect,
            "a test address",
            drover_gate::Sourced::new(address.to_string(), drover_gate::Provenance::Operator),
        )
        .expect("the command line may connect")
    }

    #[test]
    fn unreachable_is_typed() {
        // Port 9 on loopback: nothing listens there.
        let jobs = Jobs::new(&cleared("http://127.0.0.1:9"));
        match jobs.version() {
            Err(RayError::Unreachable { address, .. }) => assert_eq!(address, "http://127.0.0.1:9"),
            other => panic!("expected Unreachable, got {other:?}"),
        }
    }

    #[test]
    fn ids_are_escaped_in_paths() {
        assert_eq!(path_segment("drover-a_b.c"), "drover-a_b.c");
        assert_eq!(path_segment("a/b c"), "a%2Fb%20c");
        assert_eq!(
            Jobs::new(&cleared("http://h:1/")).tail_url("j"),
            "ws://h:1/api/jobs/j/logs/tail"
        );
    }
}
