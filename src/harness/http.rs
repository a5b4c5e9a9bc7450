//! Serving a [`Harness`] over MCP streamable HTTP on loopback, for agents that run as their own
//! process (the `command` agent). rmcp's tower service does the protocol; hyper serves it.
//!
//! The server is stateless (no `Mcp-Session-Id`) and answers simple requests with
//! `Content-Type: application/json`, so a client needs nothing but HTTP POST and JSON. Both
//! protocol generations are accepted, as on stdio.

use std::sync::Arc;

use anyhow::Context as _;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::task::JoinHandle;

use super::Harness;
use super::server::McpServer;

/// An MCP server on `127.0.0.1`, serving until dropped.
pub struct LoopbackServer {
    url: String,
    accept: JoinHandle<()>,
}

impl LoopbackServer {
    /// The MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for LoopbackServer {
    fn drop(&mut self) {
        // Stop accepting; open connections end when their client disconnects.
        self.accept.abort();
    }
}

/// Serves `harness` on a free loopback port (needs a Tokio runtime).
///
/// Errors when the catalog is invalid or no loopback port can be bound.
pub async fn serve_loopback(harness: Arc<Harness>) -> anyhow::Result<LoopbackServer> {
    serve_at(harness, "127.0.0.1:0").await
}

/// Serves `harness` on `address` (`HOST:PORT`; port 0 picks a free one), e.g. for
/// `toolgate mock serve --listen` (needs a Tokio runtime). The server is named
/// [`LoopbackServer`] for its usual address; any address the caller gives is served.
///
/// Errors when the catalog is invalid or the address cannot be bound.
pub async fn serve_at(harness: Arc<Harness>, address: &str) -> anyhow::Result<LoopbackServer> {
    // Parse the catalog once up front so a bad catalog is an error here, not per request.
    McpServer::new(Arc::clone(&harness))?;
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("failed to bind `{address}` for the MCP server"))?;
    let address = listener
        .local_addr()
        .context("failed to read the MCP server's loopback address")?;
    let mut config = StreamableHttpServerConfig::default();
    config.legacy_session_mode = false;
    config.json_response = true;
    config.sse_keep_alive = None;
    let service = StreamableHttpService::new(
        move || {
            McpServer::new(Arc::clone(&harness))
                .map_err(|error| std::io::Error::other(format!("{error:#}")))
        },
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let accept = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let service = TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                // A connection that breaks mid-request only affects that request, which the
                // agent sees as a failed call.
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(LoopbackServer {
        url: format!("http://{address}/mcp"),
        accept,
    })
}
