//! `drover serve`: the project's seats and runs as a live web page, a JSON
//! API and an event stream (docs/serve.md).
//!
//! Safe by default: it listens on loopback; every request needs the token
//! it prints once as a URL (also stored 0600 for scripts), a `Host` it
//! answers as, and — from a browser — its own `Origin` ([`guard`]).
//! Listening beyond loopback takes `--allow-remote` and says what that
//! exposes. Built on axum (tokio's HTTP server, the mainstream choice; its
//! SSE support serves the stream) on a small runtime of its own.

mod api;
pub mod guard;
mod page;

use std::net::SocketAddr;
use std::path::Path;

use anyhow::{Context as _, bail};
use axum::Router;
use axum::extract::{Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};

use super::Outcome;
use super::output::{errln, outln};
use guard::Guard;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Where to listen (loopback unless --allow-remote).
    #[arg(long, default_value = "127.0.0.1:8765", value_name = "ADDR")]
    listen: SocketAddr,
    /// Listen on an address other machines can reach: anyone on that
    /// network who has the token can see every seat, answer it, send it
    /// messages and take it down.
    #[arg(long)]
    allow_remote: bool,
    /// A name the server may be reached by besides its address (checked in
    /// `Host`), e.g. this machine's name on the LAN (repeatable).
    #[arg(long = "host", value_name = "NAME")]
    hosts: Vec<String>,
    /// Open the page in the desktop's browser.
    #[arg(long)]
    open: bool,
    /// Also serve every other project drover has run in (as recorded in
    /// your state directory), each chosen on the page.
    #[arg(long)]
    all_projects: bool,
}

#[derive(Clone)]
struct Shared {
    guard: Guard,
}

pub fn run(project: &Path, args: Args) -> anyhow::Result<Outcome> {
    let project = project
        .canonicalize()
        .with_context(|| format!("project {}", project.display()))?;
    if !args.listen.ip().is_loopback() && !args.allow_remote {
        bail!(
            "{} is not a loopback address: anyone who can reach it and has the token could answer and drive your seats; add --allow-remote to listen there anyway",
            args.listen
        );
    }
    let exe = std::env::current_exe().context("finding drover's own executable")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the server's runtime")?;
    runtime.block_on(serve(project, exe, args))
}

async fn serve(
    project: std::path::PathBuf,
    exe: std::path::PathBuf,
    args: Args,
) -> anyhow::Result<Outcome> {
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("listening on {}", args.listen))?;
    let bound = listener.local_addr()?;
    let token = guard::new_token()?;
    let url = format!("http://{bound}/?token={token}");
    let stored = guard::store(&url, bound.port())?;
    if !bound.ip().is_loopback() {
        errln!(
            "drover serve: listening on {bound}, beyond this machine: whoever reaches it with the token sees every seat and run of {} and can answer, send to and take down its seats",
            project.display()
        );
    }
    // The URL goes to stdout once (a script reads it there or from the
    // 0600 file); nothing else is printed there.
    outln!("{url}");
    errln!(
        "drover serve: {} on {bound} (the URL is also in {}, readable only by you)",
        project.display(),
        stored.display()
    );
    if args.open {
        open_browser(&url);
    }
    let shared = Shared {
        guard: Guard::new(token, bound, &args.hosts),
    };
    let mut projects = vec![project.clone()];
    if args.all_projects {
        projects.extend(
            crate::run::projects::known()
                .into_iter()
                .filter(|p| *p != project),
        );
    }
    let app = api::App { exe, projects };
    let api = Router::new()
        .route("/api/projects", get(api::projects))
        .route("/api/seats", get(api::seats))
        .route("/api/status", get(api::status))
        .route("/api/events", get(api::events))
        .route("/api/usage", get(api::usage))
        .route("/api/stream", get(api::stream))
        .route("/api/seats/{nick}/answer", post(api::answer_seat))
        .route("/api/seats/{nick}/send", post(api::send))
        .route("/api/seats/{nick}/down", post(api::down))
        .route(
            "/api/runs/{run}/tasks/{task}/answer",
            post(api::answer_task),
        )
        .with_state(app);
    let router = Router::new()
        .route("/", get(page::index))
        .route("/app.js", get(page::script))
        .route("/app.css", get(page::style))
        .merge(api)
        .layer(middleware::from_fn_with_state(shared.clone(), admit))
        .with_state(shared);
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("serving")?;
    Ok(Outcome::Ok)
}

#[derive(serde::Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

/// Every request passes the guard. The page's URL carries the token once:
/// it becomes an HttpOnly, same-site cookie and the browser is sent to the
/// bare URL, so the token leaves the address bar and its history.
async fn admit(
    State(shared): State<Shared>,
    Query(query): Query<TokenQuery>,
    request: Request,
    next: Next,
) -> Response {
    if let Err(refusal) =
        shared
            .guard
            .check(request.method(), request.headers(), query.token.as_deref())
    {
        return (
            refusal.status(),
            axum::Json(serde_json::json!({"error": refusal.message()})),
        )
            .into_response();
    }
    if query.token.is_some() && request.uri().path() == "/" {
        let cookie = format!(
            "{}={}; HttpOnly; SameSite=Strict; Path=/",
            guard::COOKIE,
            shared.guard.token()
        );
        let mut response = Redirect::to("/").into_response();
        if let Ok(value) = header::HeaderValue::from_str(&cookie) {
            response.headers_mut().insert(header::SET_COOKIE, value);
        }
        return response;
    }
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    // The page is never framed, sniffed or cached with its data.
    headers.insert(
        header::X_FRAME_OPTIONS,
        header::HeaderValue::from_static("DENY"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        header::HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        header::HeaderValue::from_static(
            "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
        ),
    );
    headers.insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    if response.status() == StatusCode::METHOD_NOT_ALLOWED {
        return (
            StatusCode::METHOD_NOT_ALLOWED,
            axum::Json(serde_json::json!({"error": "method not allowed"})),
        )
            .into_response();
    }
    response
}

/// The desktop's opener (`xdg-open`, `open`), best effort: the URL is
/// printed either way.
fn open_browser(url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let spawned = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        errln!("drover serve: cannot open a browser ({opener}: {e}); open the URL above");
    }
}
