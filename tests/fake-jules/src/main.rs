//! A fake Jules REST API (`/v1alpha`), built from Google's published
//! reference: sources (list), sessions (create, get, list), activities
//! (list, paginated), `:approvePlan` and `:sendMessage`, errors in Google's
//! shape (`{"error":{"code","message","status"}}`), the `X-Goog-Api-Key`
//! header. Sessions move one step each time they are read (`GET
//! sessions/{id}`), so a test's order of events never depends on time:
//!
//! QUEUED → PLANNING → AWAITING_PLAN_APPROVAL (a `planGenerated`) → on
//! `approvePlan`: IN_PROGRESS (`planApproved`) → a `progressUpdated` →
//! COMPLETED (`sessionCompleted` with a git patch; a pull request in
//! `outputs`). A message while a plan awaits approval makes Jules plan
//! again (a new plan); a message to a finished session starts more work.
//!
//! Script (flags):
//! `--key K` the only key accepted (else 401 UNAUTHENTICATED);
//! `--throttle N` the first N reads of a session answer 429
//! RESOURCE_EXHAUSTED with `Retry-After: 1`;
//! `--error CODE` every read of a session answers CODE (429 quota
//! exhausted, 403 permission denied, 500 internal, 503 unavailable);
//! `--fail REASON` a session fails (`sessionFailed`) once it works;
//! `--feedback TEXT` after its plan is approved, Jules asks for feedback
//! (AWAITING_USER_FEEDBACK) with this message;
//! `--source OWNER/REPO` a connected repository (repeatable; default
//! acme/widgets); `--page N` page size cap (default 2, so lists page).
//! `--port-file F` where the port is written once listening; `--log F`
//! every request as a JSON line.
#![allow(
    clippy::disallowed_macros,
    clippy::disallowed_methods,
    reason = "a stand-in server for the tests, not drover: its output is what the tests read"
)]

use std::collections::BTreeMap;
use std::io::Write as _;
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use drover_model_server::http::{Conn, Request, write_full};
use serde_json::{Value, json};

#[derive(Default)]
struct Script {
    key: Option<String>,
    throttle: u32,
    error: Option<u16>,
    fail: Option<String>,
    feedback: Option<String>,
    sources: Vec<(String, String)>,
    page: usize,
}

struct Session {
    id: String,
    prompt: String,
    title: String,
    source: String,
    branch: String,
    require_approval: bool,
    auto_pr: bool,
    state: &'static str,
    activities: Vec<Value>,
    plans: u32,
    outputs: Vec<Value>,
    /// What the next read moves to.
    after_progress: bool,
    asked: bool,
}

struct Fake {
    script: Script,
    sessions: BTreeMap<String, Session>,
    next_id: u64,
    throttled: u32,
    log: Option<std::fs::File>,
}

fn main() {
    let mut script = Script {
        page: 2,
        ..Script::default()
    };
    let mut port_file = None;
    let mut log = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next().unwrap_or_else(|| {
                eprintln!("fake-jules: {flag} needs a value");
                std::process::exit(2)
            })
        };
        match flag.as_str() {
            "--key" => script.key = Some(value()),
            "--throttle" => script.throttle = value().parse().unwrap_or(1),
            "--fail" => script.fail = Some(value()),
            "--error" => script.error = value().parse().ok(),
            "--feedback" => script.feedback = Some(value()),
            "--page" => script.page = value().parse().unwrap_or(2).max(1),
            "--source" => {
                let v = value();
                match v.split_once('/') {
                    Some((o, r)) => script.sources.push((o.to_string(), r.to_string())),
                    None => {
                        eprintln!("fake-jules: --source OWNER/REPO, not {v}");
                        std::process::exit(2)
                    }
                }
            }
            "--port-file" => port_file = Some(value()),
            "--log" => log = Some(value()),
            other => {
                eprintln!("fake-jules: unknown flag {other}");
                std::process::exit(2)
            }
        }
    }
    if script.sources.is_empty() {
        script
            .sources
            .push(("acme".to_string(), "widgets".to_string()));
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| {
        eprintln!("fake-jules: cannot listen: {e}");
        std::process::exit(1)
    });
    let port = listener.local_addr().map(|a| a.port()).unwrap_or(0);
    let log = log.and_then(|p| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .ok()
    });
    let fake = Arc::new(Mutex::new(Fake {
        script,
        sessions: BTreeMap::new(),
        next_id: 1000,
        throttled: 0,
        log,
    }));
    match port_file {
        Some(path) => {
            let tmp = format!("{path}.tmp");
            let written = std::fs::write(&tmp, format!("{port}\n"))
                .and_then(|()| std::fs::rename(&tmp, &path));
            if let Err(e) = written {
                eprintln!("fake-jules: cannot write {path}: {e}");
                std::process::exit(1)
            }
        }
        None => println!("{port}"),
    }
    for stream in listener.incoming().flatten() {
        let fake = Arc::clone(&fake);
        std::thread::spawn(move || {
            let mut conn = Conn::new(stream);
            while let Ok(Some(request)) = conn.read_request() {
                let (status, headers, body) = {
                    let mut fake = fake.lock().unwrap_or_else(|p| p.into_inner());
                    fake.handle(&request)
                };
                let keep = request.keep_alive();
                let mut all = vec![("content-type".to_string(), "application/json".to_string())];
                all.extend(headers);
                if write_full(
                    &mut conn.stream,
                    status,
                    &all,
                    body.to_string().as_bytes(),
                    keep,
                )
                .is_err()
                    || !keep
                {
                    break;
                }
            }
        });
    }
}

type Answer = (u16, Vec<(String, String)>, Value);

fn error(code: u16, status: &str, message: &str) -> Answer {
    (
        code,
        Vec::new(),
        json!({"error": {"code": code, "message": message, "status": status}}),
    )
}

fn ok(body: Value) -> Answer {
    (200, Vec::new(), body)
}

impl Fake {
    fn handle(&mut self, request: &Request) -> Answer {
        let key = request.header("x-goog-api-key").map(str::to_string);
        if let Some(log) = &mut self.log {
            let body: Value = serde_json::from_slice(&request.body).unwrap_or(Value::Null);
            let line = json!({
                "method": request.method, "path": request.path, "query": request.query,
                "key": key, "body": body,
            });
            let _ = writeln!(log, "{line}");
        }
        let authorized = match (&self.script.key, &key) {
            (Some(want), Some(got)) => want == got,
            (Some(_), None) => false,
            (None, got) => got.is_some(),
        };
        if !authorized {
            return error(
                401,
                "UNAUTHENTICATED",
                "API key not valid. Please pass a valid API key.",
            );
        }
        let Some(path) = request.path.strip_prefix("/v1alpha/") else {
            return error(404, "NOT_FOUND", "not a v1alpha path");
        };
        let query = parse_query(&request.query);
        let body: Value = if request.body.is_empty() {
            json!({})
        } else {
            match serde_json::from_slice(&request.body) {
                Ok(v) => v,
                Err(_) => return error(400, "INVALID_ARGUMENT", "the body is not JSON"),
            }
        };
        let method = request.method.as_str();
        let parts: Vec<&str> = path.split('/').collect();
        match (method, parts.as_slice()) {
            ("GET", ["sources"]) => self.list_sources(&query),
            ("GET", ["sessions"]) => self.list_sessions(&query),
            ("POST", ["sessions"]) => self.create(&body),
            ("POST", ["sessions", action]) => match action.split_once(':') {
                Some((id, "approvePlan")) => self.approve(id),
                Some((id, "sendMessage")) => self.message(id, &body),
                _ => error(404, "NOT_FOUND", "no such method"),
            },
            ("GET", ["sessions", id]) => self.read(id),
            ("GET", ["sessions", id, "activities"]) => self.activities(id, &query),
            _ => error(404, "NOT_FOUND", "no such resource"),
        }
    }

    fn page_of(&self, items: Vec<Value>, query: &BTreeMap<String, String>, field: &str) -> Answer {
        let size = query
            .get("pageSize")
            .and_then(|s| s.parse::<usize>().ok())
            .unwrap_or(30)
            .clamp(1, 100)
            .min(self.script.page);
        let start = query
            .get("pageToken")
            .and_then(|t| t.strip_prefix("offset-"))
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0);
        let end = (start + size).min(items.len());
        let mut page = json!({ field: items.get(start..end).unwrap_or_default() });
        if end < items.len() {
            page["nextPageToken"] = json!(format!("offset-{end}"));
        }
        ok(page)
    }

    fn list_sources(&self, query: &BTreeMap<String, String>) -> Answer {
        // Another user's repositories first, so a lookup must page.
        let mut items = vec![json!({
            "name": "sources/github/someone/else", "id": "github/someone/else",
            "githubRepo": {"owner": "someone", "repo": "else", "isPrivate": false,
                "defaultBranch": {"displayName": "main"}, "branches": [{"displayName": "main"}]}
        })];
        items.extend(self.script.sources.iter().map(|(o, r)| {
            json!({
                "name": format!("sources/github/{o}/{r}"), "id": format!("github/{o}/{r}"),
                "githubRepo": {"owner": o, "repo": r, "isPrivate": true,
                    "defaultBranch": {"displayName": "main"}, "branches": [{"displayName": "main"}]}
            })
        }));
        self.page_of(items, query, "sources")
    }

    fn list_sessions(&self, query: &BTreeMap<String, String>) -> Answer {
        let items = self.sessions.values().map(|s| s.json()).collect();
        self.page_of(items, query, "sessions")
    }

    fn create(&mut self, body: &Value) -> Answer {
        let Some(prompt) = body["prompt"].as_str().filter(|p| !p.is_empty()) else {
            return error(400, "INVALID_ARGUMENT", "prompt is required");
        };
        let source = body["sourceContext"]["source"].as_str().unwrap_or_default();
        let known = self
            .script
            .sources
            .iter()
            .any(|(o, r)| format!("sources/github/{o}/{r}") == source);
        if !known {
            return error(404, "NOT_FOUND", &format!("Source {source} not found."));
        }
        self.next_id += 1;
        let id = self.next_id.to_string();
        let mut session = Session {
            id: id.clone(),
            prompt: prompt.to_string(),
            title: body["title"].as_str().unwrap_or("Untitled").to_string(),
            source: source.to_string(),
            branch: body["sourceContext"]["githubRepoContext"]["startingBranch"]
                .as_str()
                .unwrap_or("main")
                .to_string(),
            require_approval: body["requirePlanApproval"].as_bool().unwrap_or(false),
            auto_pr: body["automationMode"] == "AUTO_CREATE_PR",
            state: "QUEUED",
            activities: Vec::new(),
            plans: 0,
            outputs: Vec::new(),
            after_progress: false,
            asked: false,
        };
        session.push("user", json!({"userMessaged": {"userMessage": prompt}}), "");
        let answer = session.json();
        self.sessions.insert(id, session);
        ok(answer)
    }

    fn read(&mut self, id: &str) -> Answer {
        if self.throttled < self.script.throttle {
            self.throttled += 1;
            let (code, _, body) = error(
                429,
                "RESOURCE_EXHAUSTED",
                "Resource has been exhausted (e.g. check quota).",
            );
            return (
                code,
                vec![("retry-after".to_string(), "1".to_string())],
                body,
            );
        }
        match self.script.error {
            Some(429) => {
                return error(
                    429,
                    "RESOURCE_EXHAUSTED",
                    "Quota exceeded for quota metric 'Sessions requests' and limit 'Requests per day'.",
                );
            }
            Some(403) => {
                return error(
                    403,
                    "PERMISSION_DENIED",
                    "The caller does not have permission.",
                );
            }
            Some(503) => return error(503, "UNAVAILABLE", "The service is currently unavailable."),
            Some(code) => return error(code, "INTERNAL", "Internal error encountered."),
            None => {}
        }
        let fail = self.script.fail.clone();
        let feedback = self.script.feedback.clone();
        let Some(s) = self.sessions.get_mut(id) else {
            return error(404, "NOT_FOUND", &format!("Session {id} not found."));
        };
        s.step(fail.as_deref(), feedback.as_deref());
        ok(s.json())
    }

    fn activities(&self, id: &str, query: &BTreeMap<String, String>) -> Answer {
        let Some(s) = self.sessions.get(id) else {
            return error(404, "NOT_FOUND", &format!("Session {id} not found."));
        };
        self.page_of(s.activities.clone(), query, "activities")
    }

    fn approve(&mut self, id: &str) -> Answer {
        let Some(s) = self.sessions.get_mut(id) else {
            return error(404, "NOT_FOUND", &format!("Session {id} not found."));
        };
        if s.state != "AWAITING_PLAN_APPROVAL" {
            return error(
                400,
                "FAILED_PRECONDITION",
                "The session is not awaiting plan approval.",
            );
        }
        let plan = format!("plan-{}", s.plans);
        s.push(
            "user",
            json!({"planApproved": {"planId": plan}}),
            "Plan approved",
        );
        s.state = "IN_PROGRESS";
        ok(json!({}))
    }

    fn message(&mut self, id: &str, body: &Value) -> Answer {
        let Some(prompt) = body["prompt"].as_str().filter(|p| !p.is_empty()) else {
            return error(400, "INVALID_ARGUMENT", "prompt is required");
        };
        let Some(s) = self.sessions.get_mut(id) else {
            return error(404, "NOT_FOUND", &format!("Session {id} not found."));
        };
        s.push("user", json!({"userMessaged": {"userMessage": prompt}}), "");
        s.state = match s.state {
            // Feedback on a plan: Jules plans again.
            "AWAITING_PLAN_APPROVAL" => "PLANNING",
            _ => "IN_PROGRESS",
        };
        // Jules asks its question once; the answer lets it finish.
        s.after_progress = false;
        ok(json!({}))
    }
}

impl Session {
    fn name(&self) -> String {
        format!("sessions/{}", self.id)
    }

    fn push(&mut self, originator: &str, member: Value, description: &str) {
        let n = self.activities.len() + 1;
        let mut activity = json!({
            "name": format!("{}/activities/a{n}", self.name()),
            "id": format!("a{n}"),
            "originator": originator,
            "description": description,
            "createTime": format!("2026-12-04T10:00:{:02}Z", n % 60),
        });
        if let (Some(obj), Value::Object(extra)) = (activity.as_object_mut(), member) {
            obj.extend(extra);
        }
        self.activities.push(activity);
    }

    /// One step of Jules's work, taken when the session is read.
    fn step(&mut self, fail: Option<&str>, feedback: Option<&str>) {
        match self.state {
            "QUEUED" => self.state = "PLANNING",
            "PLANNING" => {
                self.plans += 1;
                let plan = json!({"plan": {
                    "id": format!("plan-{}", self.plans),
                    "steps": [
                        {"id": "s1", "index": 0, "title": format!("Read the code (plan {})", self.plans), "description": "Find where the change goes."},
                        {"id": "s2", "index": 1, "title": "Make the change", "description": self.prompt},
                        {"id": "s3", "index": 2, "title": "Run the tests", "description": "Check nothing broke."},
                    ],
                    "createTime": "2026-12-04T10:00:00Z"
                }});
                self.push("agent", json!({"planGenerated": plan}), "Plan generated");
                if self.require_approval {
                    self.state = "AWAITING_PLAN_APPROVAL";
                } else {
                    let id = format!("plan-{}", self.plans);
                    self.push("system", json!({"planApproved": {"planId": id}}), "");
                    self.state = "IN_PROGRESS";
                }
            }
            "IN_PROGRESS" if !self.after_progress => {
                self.after_progress = true;
                self.push(
                    "agent",
                    json!({"progressUpdated": {"title": "Editing files", "description": "Working on the change."}}),
                    "",
                );
            }
            "IN_PROGRESS" => {
                if let Some(text) = feedback.filter(|_| !self.asked) {
                    self.asked = true;
                    self.push(
                        "agent",
                        json!({"agentMessaged": {"agentMessage": text}}),
                        "",
                    );
                    self.state = "AWAITING_USER_FEEDBACK";
                } else if let Some(reason) = fail {
                    self.push("system", json!({"sessionFailed": {"reason": reason}}), "");
                    self.state = "FAILED";
                } else {
                    let mut done = json!({"sessionCompleted": {}});
                    done["artifacts"] = json!([{"changeSet": {
                        "source": self.source,
                        "gitPatch": {
                            "unidiffPatch": "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1 +1 @@\n-old\n+new\n",
                            "baseCommitId": "0123abc",
                            "suggestedCommitMessage": self.title,
                        }
                    }}]);
                    self.push("system", done, "Session completed");
                    // Without AUTO_CREATE_PR the API opens no pull request.
                    self.outputs = if !self.auto_pr {
                        Vec::new()
                    } else {
                        vec![json!({"pullRequest": {
                            "url": format!("https://github.com/{}/pull/{}", self.source.trim_start_matches("sources/github/"), self.id),
                            "title": self.title,
                            "description": "Made by the fake Jules.",
                        }})]
                    };
                    self.state = "COMPLETED";
                }
            }
            _ => {}
        }
    }

    fn json(&self) -> Value {
        json!({
            "name": self.name(),
            "id": self.id,
            "prompt": self.prompt,
            "title": self.title,
            "state": self.state,
            "url": format!("https://jules.google.com/session/{}", self.id),
            "sourceContext": {"source": self.source, "githubRepoContext": {"startingBranch": self.branch}},
            "outputs": self.outputs,
            "createTime": "2026-12-04T10:00:00Z",
            "updateTime": "2026-12-04T10:00:00Z",
        })
    }
}

fn parse_query(query: &str) -> BTreeMap<String, String> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}
