//! Serving a [`Harness`] over MCP streamable HTTP on loopback, for agents that run as their own
//! process (the `command` agent). rmcp's tower service does the protocol; hyper serves it.
//!
//! The server is stateless (no `Mcp-Session-Id`) and answers simple requests with
//! `Content-Type: application/json`, so a client needs nothing but HTTP POST and JSON. Both
//! protocol generations are accepted, as on stdio. Where the run's tools ask the user
//! (`elicitations`), a `2025-11-25` client gets a session instead (`Mcp-Session-Id`, answers
//! as `text/event-stream`): the server's `elicitation/create` request arrives on the stream of
//! the `tools/call` POST, and the client answers it in a POST of its own.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::task::JoinHandle;

use super::Harness;
use super::server::McpServer;

/// An MCP server on `127.0.0.1`, serving until dropped.
pub struct LoopbackServer {
    url: String,
    address: SocketAddr,
    accept: JoinHandle<()>,
}

impl LoopbackServer {
    /// The MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether hosts other than this one can reach the server (it listens on an address that
    /// is not loopback, as [`Listen::allow_remote`] permits).
    pub fn remote(&self) -> bool {
        !self.address.ip().is_loopback()
    }
}

/// Who may reach an HTTP listener, and how much of it one peer may hold.
///
/// The defaults keep a listener to this machine: a non-loopback address is an error unless
/// `allow_remote`. Requests must name a loopback host in `Host` (or the bound address, when
/// remote), and a browser `Origin` must be a loopback one (the MCP specification's transport
/// section asks servers to validate `Origin` against DNS rebinding).
#[derive(Clone, Debug)]
pub struct Listen {
    /// Serve on an address other hosts can reach (`0.0.0.0`, `[::]`, an interface address).
    pub allow_remote: bool,
    /// Open connections served at once; further ones wait in the kernel's backlog until one
    /// closes. Default 512.
    pub max_connections: usize,
    /// A connection that sends no complete request head within this time (idle keep-alive
    /// included) is closed. Default 30 s, hyper's own default for servers with a timer.
    pub header_read_timeout: Duration,
}

impl Default for Listen {
    fn default() -> Self {
        Listen {
            allow_remote: false,
            max_connections: 512,
            header_read_timeout: Duration::from_secs(30),
        }
    }
}

/// Loopback names and addresses accepted in `Host` (any port).
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
/// Browser origins accepted in `Origin` (a request without one, as from any non-browser
/// client, is accepted too).
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

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
    serve_at(harness, "127.0.0.1:0", &Listen::default()).await
}

/// Serves `harness` on `address` (`HOST:PORT`; port 0 picks a free one), e.g. for
/// `toolgate mock serve --listen` (needs a Tokio runtime). The server is named
/// [`LoopbackServer`] for its usual address; another address is served only with
/// [`Listen::allow_remote`].
///
/// Errors when the catalog is invalid, the address cannot be bound, or it is not a loopback
/// address and `allow_remote` is off (the error names the `--allow-remote` flag).
pub async fn serve_at(
    harness: Arc<Harness>,
    address: &str,
    listen: &Listen,
) -> anyhow::Result<LoopbackServer> {
    // Parse the catalog once up front so a bad catalog is an error here, not per request.
    McpServer::new(Arc::clone(&harness))?;
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .with_context(|| format!("failed to bind `{address}` for the MCP server"))?;
    let bound = listener
        .local_addr()
        .context("failed to read the MCP server's loopback address")?;
    if !bound.ip().is_loopback() && !listen.allow_remote {
        return Err(not_loopback(address));
    }
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts(bound))
        .with_allowed_origins(LOOPBACK_ORIGINS)
        .enforce_origin_validation();
    // A tool that asks the user sends `elicitation/create` to a `2025-11-25` client mid-call,
    // whose answer comes back in a POST of its own: that needs a session. `2026-07-28` clients
    // are served statelessly either way (they are asked with an `input_required` result).
    config.legacy_session_mode = harness.elicitations().is_some();
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
    let slots = Arc::new(tokio::sync::Semaphore::new(listen.max_connections.max(1)));
    let header_read_timeout = listen.header_read_timeout;
    let accept = tokio::spawn(async move {
        loop {
            let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
                return;
            };
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                Err(_) => {
                    // Out of file descriptors, or a connection reset before it was taken:
                    // wait a moment rather than spin on the same error.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let service = TowerToHyperService::new(service.clone());
            tokio::spawn(async move {
                // A connection that breaks mid-request only affects that request, which the
                // agent sees as a failed call.
                let _ = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(header_read_timeout)
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
                drop(slot);
            });
        }
    });
    Ok(LoopbackServer {
        url: format!("http://{bound}/mcp"),
        address: bound,
        accept,
    })
}

/// Checks before anything starts that `address` may be served under `listen`: every address
/// it resolves to is loopback, or `allow_remote` is on. An address that does not resolve passes
/// here and fails when bound.
///
/// Errors as [`serve_at`] does for a non-loopback address.
pub fn check_address(address: &str, listen: &Listen) -> anyhow::Result<()> {
    use std::net::ToSocketAddrs as _;
    if listen.allow_remote {
        return Ok(());
    }
    let remote = address
        .to_socket_addrs()
        .is_ok_and(|mut resolved| resolved.any(|addr| !addr.ip().is_loopback()));
    if remote {
        return Err(not_loopback(address));
    }
    Ok(())
}

fn not_loopback(address: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "`{address}` is not a loopback address: any host that reaches it could call the tools \
         without credentials; pass --allow-remote to serve there anyway"
    )
}

/// The `Host` values a server bound to `bound` accepts: the loopback names, and when it is
/// remote, its own address; a wildcard address (`0.0.0.0`, `[::]`) accepts any host, since
/// the names the machine answers to are not known here.
fn allowed_hosts(bound: SocketAddr) -> Vec<String> {
    let ip = bound.ip();
    if ip.is_unspecified() {
        return Vec::new();
    }
    let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|&host| host.to_owned()).collect();
    if !ip.is_loopback() {
        hosts.push(ip.to_string());
    }
    hosts
}
