//! The JSON API and the event stream. Every route runs this drover's own
//! command with `--json` (`drover seats`, `status`, `events`, `usage`,
//! `answer`, `send --no-wait`, `down`) and answers its document: what the
//! API says is what the command line says, and what it launches passes the
//! command line's own trust and launch gates. A command runs in its own
//! process, so one that fails or hangs (bounded) never takes the server
//! down. Values from a request reach the command only as arguments after
//! `--`, never as options.

use std::convert::Infallible;
use std::path::PathBuf;
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

/// How long a read command may take (`drover usage` over a large history
/// is the slowest).
const READ_BOUND: Duration = Duration::from_secs(120);
/// `answer` waits for its delivery, `send --no-wait` for the turn to start.
const ACT_BOUND: Duration = Duration::from_secs(180);
/// The most lines `/api/events` answers with (the newest).
const EVENTS_MAX: usize = 2000;

#[derive(Clone)]
pub struct App {
    pub exe: PathBuf,
    /// The projects served: the one `serve` ran in first, then (with
    /// `--all-projects`) every other one drover has run in. A request names
    /// one by its index, never by a path.
    pub projects: Vec<PathBuf>,
}

/// Which project a request is about (`?project=N`, default the first).
#[derive(Deserialize, Default)]
pub struct Which {
    project: Option<usize>,
    /// `usage` only: keep the conversations known to have run in it.
    #[serde(default)]
    only: bool,
}

impl App {
    /// The project a request names, or the answer that it names none.
    fn project(&self, which: &Which) -> Result<&std::path::Path, Box<Response>> {
        let index = which.project.unwrap_or(0);
        self.projects
            .get(index)
            .map(PathBuf::as_path)
            .ok_or_else(|| {
                Box::new(
                    (
                        StatusCode::NOT_FOUND,
                        Json(json!({"error": format!("no project {index} (see /api/projects)")})),
                    )
                        .into_response(),
                )
            })
    }
}

/// The projects served, by index.
pub async fn projects(State(app): State<App>) -> Response {
    let listed: Vec<Value> = app
        .projects
        .iter()
        .enumerate()
        .map(|(index, path)| json!({"index": index, "path": path.display().to_string()}))
        .collect();
    Json(json!({"projects": listed})).into_response()
}

/// A command's outcome as an HTTP answer: its document (200), its document
/// when it failed (409: the document says why), or its error (400 for a
/// usage error such as an unknown seat, 500 otherwise).
fn answer(code: Option<i32>, stdout: &[u8], stderr: &[u8]) -> Response {
    let document = serde_json::from_slice::<Value>(stdout).ok();
    let error = || {
        let text = String::from_utf8_lossy(stderr);
        let last = text
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("failed");
        json!({"error": crate::question::clean(last.trim_start_matches("error: "))})
    };
    match (code, document) {
        (Some(0), Some(doc)) => (StatusCode::OK, Json(doc)).into_response(),
        (Some(1), Some(doc)) => (StatusCode::CONFLICT, Json(doc)).into_response(),
        (Some(1 | 2), None) => (StatusCode::BAD_REQUEST, Json(error())).into_response(),
        _ => (StatusCode::INTERNAL_SERVER_ERROR, Json(error())).into_response(),
    }
}

/// This drover's own command in `project`, named to it with `--project`
/// when `named`: no stdin, and killed when the request is dropped.
fn command(app: &App, project: &std::path::Path, named: bool) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(&app.exe);
    if named {
        command.arg("--project").arg(project);
    }
    command
        .current_dir(project)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    command
}

/// What `command` (drover `what`) printed, within `bound`; else the answer
/// saying why not.
async fn output_of(
    mut command: tokio::process::Command,
    what: &str,
    bound: Duration,
) -> Result<std::process::Output, Box<Response>> {
    let refused = |status: StatusCode, error: String| {
        Box::new((status, Json(json!({"error": error}))).into_response())
    };
    match tokio::time::timeout(bound, command.output()).await {
        Ok(Ok(output)) => Ok(output),
        Ok(Err(e)) => Err(refused(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot run drover: {e}"),
        )),
        Err(_) => Err(refused(
            StatusCode::GATEWAY_TIMEOUT,
            format!("drover {what} took over {}s", bound.as_secs()),
        )),
    }
}

async fn drover(app: &App, which: &Which, args: &[&str], bound: Duration) -> Response {
    let project = match app.project(which) {
        Ok(project) => project,
        Err(refused) => return *refused,
    };
    // `usage` given a project keeps only conversations known to have run in
    // it: the page asks for that per project (`only`), and otherwise shows
    // what `drover usage` shows run here, every transcript of this
    // machine's CLIs.
    let named = args.first() != Some(&"usage") || which.only;
    let mut command = command(app, project, named);
    command.args(args);
    match output_of(command, args.first().unwrap_or(&""), bound).await {
        Ok(output) => answer(output.status.code(), &output.stdout, &output.stderr),
        Err(refused) => *refused,
    }
}

pub async fn seats(State(app): State<App>, Query(which): Query<Which>) -> Response {
    drover(&app, &which, &["seats", "--json"], READ_BOUND).await
}

pub async fn status(State(app): State<App>, Query(which): Query<Which>) -> Response {
    drover(&app, &which, &["status", "--json"], READ_BOUND).await
}

#[derive(Deserialize)]
pub struct UsageQuery {
    by: Option<String>,
    since: Option<String>,
    until: Option<String>,
    tz: Option<String>,
}

pub async fn usage(
    State(app): State<App>,
    Query(which): Query<Which>,
    Query(q): Query<UsageQuery>,
) -> Response {
    let mut args: Vec<String> = vec!["usage".into(), "--json".into()];
    for (flag, value) in [
        ("--by", &q.by),
        ("--since", &q.since),
        ("--until", &q.until),
        ("--tz", &q.tz),
    ] {
        if let Some(value) = value {
            args.push(format!("{flag}={value}"));
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    drover(&app, &which, &args, READ_BOUND).await
}

#[derive(Deserialize)]
pub struct EventsQuery {
    since: Option<String>,
    seat: Option<String>,
    role: Option<String>,
    run: Option<String>,
}

impl EventsQuery {
    /// The `drover events` filters, each as one `--flag=value` argument
    /// (a value can never be read as another option).
    fn args(&self) -> Vec<String> {
        [
            ("--since", &self.since),
            ("--seat", &self.seat),
            ("--role", &self.role),
            ("--run", &self.run),
        ]
        .into_iter()
        .filter_map(|(flag, value)| value.as_ref().map(|v| format!("{flag}={v}")))
        .collect()
    }
}

/// `drover events --json`'s lines as one array (the newest
/// [`EVENTS_MAX`]).
pub async fn events(
    State(app): State<App>,
    Query(which): Query<Which>,
    Query(q): Query<EventsQuery>,
) -> Response {
    let project = match app.project(&which) {
        Ok(project) => project,
        Err(refused) => return *refused,
    };
    let mut command = command(&app, project, true);
    command.args(["events", "--json"]).args(q.args());
    let output = match output_of(command, "events", READ_BOUND).await {
        Ok(output) => output,
        Err(refused) => return *refused,
    };
    if !output.status.success() {
        return answer(output.status.code(), b"", &output.stderr);
    }
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let skip = lines.len().saturating_sub(EVENTS_MAX);
    Json(Value::Array(lines.into_iter().skip(skip).collect())).into_response()
}

/// The journal as it grows: each line of `drover events --follow --json`
/// (history first, or from `since` / the `Last-Event-ID` a reconnecting
/// browser sends) as one server-sent event, its id the line's timestamp.
pub async fn stream(
    State(app): State<App>,
    Query(which): Query<Which>,
    Query(mut q): Query<EventsQuery>,
    headers: HeaderMap,
) -> Response {
    let project = match app.project(&which) {
        Ok(project) => project.to_path_buf(),
        Err(refused) => return *refused,
    };
    let last_seen = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(last) = last_seen {
        // Lines at or after it; the one already seen is dropped below.
        q.since = Some(rfc3339_of_ns(last));
    }
    let mut command = command(&app, &project, true);
    command
        .args(["events", "--follow", "--json"])
        .args(q.args())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                Json(json!({"error": format!("cannot follow the journal: {e}")})),
            )
                .into_response();
        }
    };
    let Some(stdout) = child.stdout.take() else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let lines = tokio::io::BufReader::new(stdout).lines();
    // The child lives as long as the stream: a closed page stops it.
    let stream =
        futures_util::stream::unfold((lines, child), move |(mut lines, child)| async move {
            loop {
                let line = lines.next_line().await.ok().flatten()?;
                let ts = serde_json::from_str::<Value>(&line)
                    .ok()
                    .and_then(|v| v.get("ts").and_then(Value::as_u64));
                if last_seen.is_some_and(|seen| ts.is_some_and(|ts| ts <= seen)) {
                    continue;
                }
                let mut event = Event::default().data(line);
                if let Some(ts) = ts {
                    event = event.id(ts.to_string());
                }
                return Some((Ok::<Event, Infallible>(event), (lines, child)));
            }
        });
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

fn rfc3339_of_ns(ns: u64) -> String {
    let time = std::time::UNIX_EPOCH + Duration::from_nanos(ns);
    humantime::format_rfc3339_nanos(time).to_string()
}

#[derive(Deserialize)]
pub struct AnswerBody {
    option: String,
}

pub async fn answer_seat(
    State(app): State<App>,
    Query(which): Query<Which>,
    Path(nick): Path<String>,
    Json(body): Json<AnswerBody>,
) -> Response {
    let args = ["answer", "--json", "--", &nick, &body.option];
    drover(&app, &which, &args, ACT_BOUND).await
}

pub async fn answer_task(
    State(app): State<App>,
    Query(which): Query<Which>,
    Path((run, task)): Path<(String, String)>,
    Json(body): Json<AnswerBody>,
) -> Response {
    let run = format!("--run={run}");
    let args = ["answer", "--json", &run, "--", &task, &body.option];
    drover(&app, &which, &args, ACT_BOUND).await
}

#[derive(Deserialize)]
pub struct SendBody {
    prompt: String,
}

pub async fn send(
    State(app): State<App>,
    Query(which): Query<Which>,
    Path(nick): Path<String>,
    Json(body): Json<SendBody>,
) -> Response {
    let args = ["send", "--no-wait", "--json", "--", &nick, &body.prompt];
    drover(&app, &which, &args, ACT_BOUND).await
}

pub async fn down(
    State(app): State<App>,
    Query(which): Query<Which>,
    Path(nick): Path<String>,
) -> Response {
    drover(&app, &which, &["down", "--json", "--", &nick], ACT_BOUND).await
}
