//! The MCP server on stdio: rmcp speaks the protocol, [`super::tools`]
//! does the work. Each tool call runs on a blocking thread (a turn or a
//! wait can take minutes, and several calls may be in flight); a panic in
//! one becomes that call's error, never the server's end. stdout carries
//! only the protocol ([`crate::cli::output::protocol_stdout`]); logs go to
//! stderr.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    InitializeResult, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};

use crate::cli::Outcome;
use crate::cli::output::{errln, protocol_stdout};

/// How long the server lets calls still running finish (a turn is
/// interrupted, as Ctrl-C would) once the client has gone.
const DRAIN: Duration = Duration::from_secs(30);

#[derive(Clone)]
struct Drover {
    project: Arc<PathBuf>,
    explicit_project: bool,
    /// Tool calls still running, for the drain when the session ends.
    running: Arc<AtomicUsize>,
}

impl ServerHandler for Drover {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("drover", env!("CARGO_PKG_VERSION")))
            .with_instructions(super::tools::INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(super::tools::all()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let project = Arc::clone(&self.project);
        let explicit = self.explicit_project;
        let name = request.name.to_string();
        let arguments = request.arguments.unwrap_or_default();
        let counted = Counted::new(&self.running);
        let joined = tokio::task::spawn_blocking(move || {
            let _counted = counted;
            super::tools::call(&project, explicit, &name, &arguments)
        })
        .await;
        let result = joined.unwrap_or_else(|e| {
            // A panic is a bug; it ends this call, the server goes on.
            errln!("drover mcp: a tool call ended abnormally: {e}");
            CallToolResult::error(vec![ContentBlock::text(format!(
                "drover failed while running the tool (a bug; its log is on the server's stderr): {e}"
            ))])
        });
        Ok(result.into())
    }
}

/// One call counted as running until it ends, a panic included.
struct Counted(Arc<AtomicUsize>);

impl Counted {
    fn new(running: &Arc<AtomicUsize>) -> Counted {
        running.fetch_add(1, Ordering::SeqCst);
        Counted(Arc::clone(running))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// `drover mcp`: serves until the client closes stdin.
pub fn serve(project: &Path, explicit_project: bool) -> anyhow::Result<Outcome> {
    let project = project
        .canonicalize()
        .with_context(|| format!("project {}", project.display()))?;
    // Registered before any call asks for it, so the drain below can stop
    // a turn in progress.
    let interrupted = crate::cli::interrupt_flag()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the MCP server's runtime")?;
    let running = Arc::new(AtomicUsize::new(0));
    let server = Drover {
        project: Arc::new(project),
        explicit_project,
        running: Arc::clone(&running),
    };
    let served = runtime.block_on(async {
        let transport = (tokio::io::stdin(), protocol_stdout());
        let running = server
            .serve(transport)
            .await
            .context("the MCP handshake failed")?;
        // SIGINT or SIGTERM ends the session as the client closing it
        // would (a turn in progress sees the same flag and stops).
        let token = running.cancellation_token();
        let watched = std::sync::Arc::clone(&interrupted);
        tokio::spawn(async move {
            while !watched.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            token.cancel();
        });
        running.waiting().await.context("the MCP server stopped")?;
        anyhow::Ok(())
    });
    // The client is gone: calls still running (a turn, a wait) are asked
    // to stop as Ctrl-C would ask them, and given a moment to tidy up.
    // The thread reading stdin cannot be cancelled, so the runtime is not
    // waited for: only the calls are, by their count.
    interrupted.store(true, Ordering::Relaxed);
    let until = std::time::Instant::now() + DRAIN;
    while running.load(Ordering::SeqCst) > 0 && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    runtime.shutdown_background();
    served.map(|()| Outcome::Ok)
}
