//! The MCP client: connects to a server (in process, a child process or a streamable HTTP URL)
//! to list and call tools.
//!
//! The client always opens with the `initialize` handshake at protocol version `2025-11-25`, the
//! last one that has it: rmcp servers and older servers (the TypeScript reference servers, MCP
//! Inspector) all accept it, whereas rmcp's default offer, `2026-07-28`, has no handshake.

use crate::catalog::listing::{PageEnd, ToolListing, page_end};
use std::{
    collections::HashSet,
    fmt,
    path::Path,
    sync::{Arc, Mutex},
    time::Duration,
};

use anyhow::Context as _;
use rmcp::{
    ClientHandler, ErrorData, RoleClient, ServiceError, ServiceExt as _,
    model::{
        CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ClientRequest,
        CustomRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability,
        FormElicitationCapability, Implementation, ProtocolVersion, ServerResult,
    },
    service::PeerRequestOptions,
    service::{RequestContext, RunningService},
    transport::{
        StreamableHttpClientTransport, streamable_http_client::StreamableHttpClientTransportConfig,
    },
};
use serde_json::Value;
use tokio::{io::AsyncReadExt as _, process::ChildStderr, task::JoinHandle};

use super::{
    Elicitations, Harness,
    child::ChildTransport,
    server,
    wire_tap::{ListingTap, TappedHttp},
};

/// How long the `initialize` handshake may take before a connection attempt fails.
/// Generous because `npx -y <server>` may install the server first.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long [`McpClient::close`] waits for an in-process server task to wind down.
const SERVER_STOP_TIMEOUT: Duration = Duration::from_secs(5);

/// The most bytes of a child server's stderr kept for error messages (the tail).
const STDERR_TAIL_BYTES: usize = 4 * 1024;

/// A connected MCP client session (rmcp), shareable across tasks by reference.
pub struct McpClient {
    service: RunningService<RoleClient, ClientSide>,
    /// The in-process server task, awaited by [`McpClient::close`].
    server_task: Option<JoinHandle<anyhow::Result<()>>>,
    /// tools/list answers as the server wrote them (child and HTTP servers; empty in process).
    tap: ListingTap,
    /// A child server's stderr, kept for [`McpClient::stderr_tail`] (child servers started by
    /// [`McpClient::connect_child`] only).
    stderr: Option<StderrTail>,
}

/// How long one tools/list page may take.
const LIST_PAGE_TIMEOUT: Duration = Duration::from_secs(60);

/// The most tools/list pages followed before the walk stops with a warning.
const MAX_LIST_PAGES: usize = 10_000;

/// The code that starts the warning of a tools/list walk stopped because the server handed
/// back a cursor it had already sent (it would otherwise loop forever).
pub const NON_ADVANCING_CURSOR: &str = "non_advancing_cursor";

/// `listing` with one warning naming the tools that were listed more than once with the same
/// definition and kept once (`names` as JSON strings, in the order repeated), if any.
fn with_merged(mut listing: ToolListing, names: &[String]) -> ToolListing {
    if !names.is_empty() {
        let mut distinct: Vec<&str> = Vec::new();
        for name in names {
            if !distinct.contains(&name.as_str()) {
                distinct.push(name);
            }
        }
        let shown = distinct.len().min(5);
        let more = match distinct.len() - shown {
            0 => String::new(),
            rest => format!(" and {rest} more"),
        };
        listing.warnings.push(format!(
            "{} tool listings repeated an identical tool and were merged: {}{more}",
            names.len(),
            distinct[..shown].join(", ")
        ));
    }
    listing
}

/// Result of one tools/call as the client saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolReply {
    /// The result's `isError` (absent counts as false).
    pub is_error: bool,
    /// The result's `structuredContent`, if the server sent one.
    pub structured: Option<serde_json::Value>,
    /// The result's text content blocks joined with `\n`; other block types are left out.
    pub text: String,
}

/// Why a tools/call produced no result.
#[derive(Debug, Clone, PartialEq)]
pub enum CallFailure {
    /// The server answered with a JSON-RPC error (e.g. `-32602` for an unknown tool).
    Protocol { code: i32, message: String },
    /// No answer within the call's timeout; the request was cancelled.
    Timeout,
    /// The connection failed or the server sent something that is not a tool result.
    Transport(String),
    /// While the call waited, a stdio server wrote what no MCP server may write on stdout
    /// (a line that is not JSON-RPC, a line over the client's limit): what it wrote.
    Breach(String),
}

impl fmt::Display for CallFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallFailure::Protocol { code, message } => {
                write!(f, "JSON-RPC error {code}: {message}")
            }
            CallFailure::Timeout => f.write_str("timed out"),
            CallFailure::Transport(message) => write!(f, "transport failure: {message}"),
            CallFailure::Breach(what) => {
                write!(f, "the server broke the MCP stdio framing: {what}")
            }
        }
    }
}

impl std::error::Error for CallFailure {}

impl McpClient {
    /// Connects to `harness` through an in-process duplex pipe, its server on a spawned task.
    ///
    /// When the harness's tools ask the user ([`Harness::eliciting`]), the client declares the
    /// elicitation capability and answers each request as the run's user does
    /// ([`Elicitations::ask_user`]): a faithful client, as a model agent's host would be.
    pub async fn connect_in_process(harness: Arc<Harness>) -> anyhow::Result<Self> {
        let user = harness.elicitations().cloned();
        let (stream, server_task) = server::serve_in_process(harness)?;
        let service = handshake_as(stream, user)
            .await
            .context("failed to connect to the in-process MCP server")?;
        Ok(Self {
            service,
            server_task: Some(server_task),
            tap: ListingTap::default(),
            stderr: None,
        })
    }

    /// Spawns `program args...` as a child MCP server over stdio and connects to it.
    ///
    /// The child's stderr is captured, never shown: its last 4 KiB are appended to the error when
    /// the handshake fails. The child is shut down by [`McpClient::close`] (stdin closed, then
    /// `SIGTERM`, then kill) or killed when the client is dropped.
    pub async fn connect_command(program: &str, args: &[String]) -> anyhow::Result<Self> {
        Self::connect_command_with(program, args, &[], None).await
    }

    /// As [`McpClient::connect_command`], with extra environment variables for the child and,
    /// when `cwd` is set, its working directory (an `mcpServers` entry's `env` and `cwd`).
    pub async fn connect_command_with(
        program: &str,
        args: &[String],
        env: &[(String, String)],
        cwd: Option<&Path>,
    ) -> anyhow::Result<Self> {
        let mut command = tokio::process::Command::new(program);
        command.args(args);
        command.envs(env.iter().map(|(key, value)| (key, value)));
        if let Some(cwd) = cwd {
            command.current_dir(cwd);
        }
        crate::process::die_with_parent(command.as_std_mut());
        let tap = ListingTap::default();
        let (transport, stderr) = ChildTransport::spawn(command, tap.clone())
            .with_context(|| format!("failed to start MCP server `{program}`"))?;
        let mut stderr_tail = StderrTail::drain(stderr);
        let service = match handshake(transport).await {
            Ok(service) => service,
            Err(error) => {
                let mut message = format!("failed to connect to MCP server `{program}`");
                let tail = stderr_tail.settle().await;
                if !tail.trim().is_empty() {
                    message.push_str("; its stderr ends with:\n");
                    message.push_str(tail.trim_end());
                }
                return Err(error.context(message));
            }
        };
        Ok(Self {
            service,
            server_task: None,
            tap,
            stderr: None,
        })
    }

    /// Spawns `command` (already given its arguments, environment and working directory) as a
    /// child MCP server in its own process group, and connects to it; `label` names it in
    /// errors. Returns the client and the process group id (the child's pid), which the
    /// caller kills when the run ends so that no grandchild (`npx` starts `node`) survives.
    ///
    /// As [`McpClient::connect_command_with`], a failed handshake's error ends with the last
    /// 4 KiB of the child's stderr; after a successful one the stderr stays readable through
    /// [`McpClient::stderr_tail`].
    pub async fn connect_child(
        mut command: tokio::process::Command,
        label: &str,
    ) -> anyhow::Result<(Self, Option<i32>)> {
        crate::process::contain(command.as_std_mut());
        let tap = ListingTap::default();
        let (transport, stderr) = ChildTransport::spawn(command, tap.clone())
            .with_context(|| format!("failed to start MCP server `{label}`"))?;
        let pgid = transport.pid().and_then(|pid| i32::try_from(pid).ok());
        let mut stderr_tail = StderrTail::drain(stderr);
        let service = match handshake(transport).await {
            Ok(service) => service,
            Err(error) => {
                let mut message = format!("failed to initialize MCP server `{label}`");
                let tail = stderr_tail.settle().await;
                if !tail.trim().is_empty() {
                    message.push_str("; its stderr ends with:\n");
                    message.push_str(tail.trim_end());
                }
                if let Some(pgid) = pgid {
                    kill_group(pgid);
                }
                return Err(error.context(message));
            }
        };
        Ok((
            Self {
                service,
                server_task: None,
                tap,
                stderr: Some(stderr_tail),
            },
            pgid,
        ))
    }

    /// The last 4 KiB of a child server's stderr so far (`""` for other servers).
    pub fn stderr_tail(&self) -> String {
        self.stderr
            .as_ref()
            .map(StderrTail::snapshot)
            .unwrap_or_default()
    }

    /// The server's `serverInfo` from `initialize`, as `name version`.
    pub fn server_version(&self) -> Option<String> {
        let info = self.service.peer_info()?;
        let server = info.server_info.as_ref()?;
        Some(format!("{} {}", server.name, server.version))
    }

    /// The protocol version the server agreed in `initialize` (e.g. `2025-11-25`).
    pub fn protocol_version(&self) -> Option<String> {
        Some(self.service.peer_info()?.protocol_version.to_string())
    }

    /// Whether the session has ended (the server closed the connection or exited).
    pub fn is_closed(&self) -> bool {
        self.service.is_closed()
    }

    /// Connects to a streamable HTTP MCP server at `url` (e.g. `http://127.0.0.1:3001/mcp`).
    pub async fn connect_http(url: &str) -> anyhow::Result<Self> {
        Self::connect_http_with(url, &[]).await
    }

    /// As [`McpClient::connect_http`], sending `headers` with every request (an `mcpServers`
    /// entry's `headers`; values are never put in errors).
    ///
    /// Errors: a header name or value HTTP does not allow, or the connection.
    ///
    /// Credentials in the URL (`https://user:pass@host/mcp`) become an `Authorization: Basic`
    /// header unless `headers` already has an `Authorization`, which wins; either way they
    /// are taken out of the URL, which errors then show.
    pub async fn connect_http_with(
        url: &str,
        headers: &[(String, String)],
    ) -> anyhow::Result<Self> {
        crate::tls::install_crypto_provider();
        let (url, basic) = split_credentials(url);
        let url = url.as_str();
        let mut default_headers = reqwest::header::HeaderMap::new();
        if let Some(basic) = basic
            && !headers
                .iter()
                .any(|(name, _)| name.eq_ignore_ascii_case("authorization"))
        {
            let value = reqwest::header::HeaderValue::from_str(&format!("Basic {basic}"))
                .context("the URL's credentials are not valid in HTTP")?;
            default_headers.insert(reqwest::header::AUTHORIZATION, value);
        }
        for (name, value) in headers {
            let header = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                .with_context(|| format!("`{name}` is not an HTTP header name"))?;
            let value = reqwest::header::HeaderValue::from_str(value).map_err(|_| {
                anyhow::anyhow!("the value of header `{name}` is not valid in HTTP")
            })?;
            default_headers.insert(header, value);
        }
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .default_headers(default_headers)
            .build()
            .context("failed to set up the HTTP client (are CA certificates installed?)")?;
        let tap = ListingTap::default();
        let transport = StreamableHttpClientTransport::with_client(
            TappedHttp {
                http,
                tap: tap.clone(),
            },
            StreamableHttpClientTransportConfig::with_uri(url),
        );
        let service = handshake(transport)
            .await
            .with_context(|| format!("failed to connect to MCP server `{url}`"))?;
        Ok(Self {
            service,
            server_task: None,
            tap,
            stderr: None,
        })
    }

    /// All tools, following `nextCursor` pagination, each as MCP tool JSON in server order.
    /// Paging problems are dropped; [`McpClient::list_tool_pages`] reports them.
    pub async fn list_tools(&self) -> anyhow::Result<Vec<serde_json::Value>> {
        Ok(self.list_tool_pages().await?.tools)
    }

    /// Every page of tools/list, as the server sent the tools.
    ///
    /// Cursors are passed back unchanged (they are opaque). An absent `nextCursor` ends the walk;
    /// `""`, `null` or a non-string end it with a warning ([`page_end`]); so does a cursor seen
    /// before (a server that does not advance would otherwise loop forever), a page after the
    /// first that lists only tools of earlier pages (a cursor that changes over the same
    /// tools), and the 10,000th page. Each page may take 60 s.
    ///
    /// Pages are read as the server wrote them (one raw request per page), so `null` is told
    /// apart from an absent cursor and tool fields rmcp does not model are kept.
    pub async fn list_tool_pages(&self) -> anyhow::Result<ToolListing> {
        let mut listing = ToolListing::default();
        let mut merged: Vec<String> = Vec::new();
        // Each name's definitions so far, as canonical JSON.
        let mut definitions: std::collections::HashMap<String, HashSet<String>> =
            std::collections::HashMap::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for page in 1..=MAX_LIST_PAGES {
            let params = match &cursor {
                None => serde_json::json!({}),
                Some(cursor) => serde_json::json!({ "cursor": cursor }),
            };
            let result = self.list_page(params).await.with_context(|| {
                format!("failed to list the server's tools (tools/list page {page})")
            })?;
            let Some(Value::Array(tools)) = result.get("tools") else {
                anyhow::bail!("tools/list page {page} has no `tools` array");
            };
            let before = listing.tools.len();
            for tool in tools {
                // The same tool again (a page served twice, a cursor that does not advance):
                // one tool, not two, so no false duplicate name or look-alike pair follows.
                // Two different definitions under one name are both kept for the linter.
                let key = tool.get("name").map(Value::to_string).unwrap_or_default();
                if !definitions
                    .entry(key)
                    .or_default()
                    .insert(crate::json::canonical(tool))
                {
                    merged.push(tool.get("name").map_or_else(String::new, |n| n.to_string()));
                } else {
                    listing.tools.push(tool.clone());
                }
            }
            cursor = match page_end(page, &result) {
                PageEnd::Last => return Ok(with_merged(listing, &merged)),
                PageEnd::Malformed(warning) => {
                    listing.warnings.push(warning);
                    return Ok(with_merged(listing, &merged));
                }
                PageEnd::Next(next) => {
                    if !seen.insert(next.clone()) {
                        listing.warnings.push(format!(
                            "{NON_ADVANCING_CURSOR}: tools/list page {page} repeats cursor `{next}`; stopped after {} tools (the cursor does not advance)",
                            listing.tools.len()
                        ));
                        return Ok(with_merged(listing, &merged));
                    }
                    // A cursor that advances but serves tools already listed would be
                    // followed to the page limit: the walk ends at the first such page.
                    if page > 1 && !tools.is_empty() && listing.tools.len() == before {
                        listing.warnings.push(format!(
                            "{NON_ADVANCING_CURSOR}: tools/list page {page} lists only tools of earlier pages; stopped after {} tools (the cursor changes, the tools do not)",
                            listing.tools.len()
                        ));
                        return Ok(with_merged(listing, &merged));
                    }
                    Some(next)
                }
            };
        }
        listing.warnings.push(format!(
            "stopped after {MAX_LIST_PAGES} tools/list pages ({} tools)",
            listing.tools.len()
        ));
        Ok(with_merged(listing, &merged))
    }

    /// One tools/list request, its result as the server wrote it.
    ///
    /// rmcp decodes every answer into its typed model, which reads `"nextCursor": null` as an
    /// absent cursor and drops tool fields it does not model. Child and HTTP connections read
    /// the answer's bytes through a [`ListingTap`], and that raw result is used. Otherwise the
    /// request goes out as a custom request so a page rmcp cannot type (a tool without
    /// `inputSchema`) still arrives raw, and a typed page is encoded back to JSON.
    async fn list_page(&self, params: Value) -> anyhow::Result<Value> {
        let request = ClientRequest::CustomRequest(CustomRequest::new("tools/list", Some(params)));
        let mut options = PeerRequestOptions::no_options();
        options.timeout = Some(LIST_PAGE_TIMEOUT);
        let handle = self
            .service
            .peer()
            .send_cancellable_request(request, options)
            .await?;
        let id = handle.id.clone();
        let result = handle.await_response().await.map_err(|error| match error {
            ServiceError::Timeout { .. } => {
                anyhow::anyhow!("no answer within {LIST_PAGE_TIMEOUT:?}")
            }
            other => other.into(),
        })?;
        if let Some(raw) = self.tap.take(&id) {
            return Ok(raw);
        }
        match result {
            ServerResult::CustomResult(raw) => Ok(raw.0),
            ServerResult::ListToolsResult(typed) => Ok(serde_json::to_value(typed)?),
            other => anyhow::bail!("the answer is not a tool list: {other:?}"),
        }
    }

    /// One tools/call with a timeout.
    ///
    /// Tool errors (`isError: true`) are `Ok(ToolReply { is_error: true, .. })`; JSON-RPC errors
    /// are [`CallFailure::Protocol`]. On timeout the request is cancelled
    /// (`notifications/cancelled`) and the session stays usable.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        timeout: Duration,
    ) -> Result<ToolReply, CallFailure> {
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        // Garbage instead of the answer would otherwise read as a slow server.
        let breached = self.tap.breached();
        tokio::select! {
            called = tokio::time::timeout(timeout, self.service.peer().call_tool(params)) => {
                match called {
                    Err(_elapsed) => Err(CallFailure::Timeout),
                    Ok(Err(error)) => Err(CallFailure::from(error)),
                    Ok(Ok(result)) => Ok(ToolReply::from(result)),
                }
            }
            what = breached => Err(CallFailure::Breach(what)),
        }
    }

    /// Ends the session: closes the connection, stops a child server, and waits for an
    /// in-process server task, returning its error if it failed.
    pub async fn close(self) -> anyhow::Result<()> {
        self.service
            .cancel()
            .await
            .context("the MCP client task failed")?;
        if let Some(task) = self.server_task {
            tokio::time::timeout(SERVER_STOP_TIMEOUT, task)
                .await
                .context("the in-process MCP server did not stop")?
                .context("the in-process MCP server task failed")??;
        }
        Ok(())
    }
}

/// Kills the process group `pgid` (`SIGKILL`); a group that is already gone is fine.
pub fn kill_group(pgid: i32) {
    // Only groups toolgate created itself (`process_group(0)` on a child it spawned) are
    // passed here, so the id cannot name someone else's group while the child is unreaped.
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pgid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

/// The client's side of the session: its capabilities, and the answers to what the server
/// asks it (elicitations, when it has a user to ask).
#[derive(Clone)]
struct ClientSide {
    config: ClientConfig,
    /// Who answers elicitations; `None`: the capability is not declared.
    user: Option<Arc<Elicitations>>,
}

impl ClientHandler for ClientSide {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let (
            Some(user),
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            },
        ) = (&self.user, request)
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(requested_schema).unwrap_or(Value::Null);
        let reply = user.ask_user(&message, &schema).await;
        serde_json::to_value(reply)
            .and_then(serde_json::from_value)
            .map_err(|error| ErrorData::internal_error(format!("{error}"), None))
    }
}

/// Runs the `initialize` handshake at `2025-11-25` over `transport`, declaring no
/// elicitation capability.
async fn handshake<T, E, A>(transport: T) -> anyhow::Result<RunningService<RoleClient, ClientSide>>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    handshake_as(transport, None).await
}

/// Runs the `initialize` handshake at `2025-11-25` over `transport`; with a `user`, the
/// client declares the elicitation capability (form mode) and lets the user answer.
async fn handshake_as<T, E, A>(
    transport: T,
    user: Option<Arc<Elicitations>>,
) -> anyhow::Result<RunningService<RoleClient, ClientSide>>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let mut capabilities = ClientCapabilities::default();
    if user.is_some() {
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
    }
    let config = ClientConfig::new(
        capabilities,
        Implementation::new("toolgate", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25);
    let side = ClientSide { config, user };
    let service = tokio::time::timeout(HANDSHAKE_TIMEOUT, side.serve(transport))
        .await
        .with_context(|| format!("no `initialize` answer within {HANDSHAKE_TIMEOUT:?}"))?
        .map_err(|error| anyhow::anyhow!(readable(&error)))?;
    Ok(service)
}

/// An error of the MCP SDK as a person reads it: the Rust type names it puts in brackets
/// (`Transport [rmcp::transport::worker::WorkerTransport<...>] error`) are dropped, and the
/// root cause (`Connection refused (os error 111)`) is added when the message lacks it.
fn readable(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut depth = 0usize;
    let mut bracket = String::new();
    for c in error.to_string().chars() {
        match c {
            '[' => {
                depth += 1;
                bracket.push(c);
            }
            ']' if depth > 0 => {
                depth -= 1;
                bracket.push(c);
                if depth == 0 {
                    if !bracket.contains("::") {
                        text.push_str(&bracket);
                    }
                    bracket.clear();
                }
            }
            c if depth > 0 => bracket.push(c),
            c => text.push(c),
        }
    }
    text.push_str(&bracket);
    let mut text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut root = error.source();
    while let Some(next) = root.and_then(std::error::Error::source) {
        root = Some(next);
    }
    if let Some(root) = root.map(ToString::to_string)
        && !text.contains(&root)
    {
        text.push_str(": ");
        text.push_str(&root);
    }
    text
}

impl From<CallToolResult> for ToolReply {
    fn from(result: CallToolResult) -> Self {
        let text: Vec<&str> = result
            .content
            .iter()
            .filter_map(|block| block.as_text())
            .map(|text| text.text.as_str())
            .collect();
        Self {
            is_error: result.is_error.unwrap_or(false),
            text: text.join("\n"),
            structured: result.structured_content,
        }
    }
}

impl From<ServiceError> for CallFailure {
    fn from(error: ServiceError) -> Self {
        match error {
            ServiceError::McpError(error) => CallFailure::Protocol {
                code: error.code.0,
                message: error.message.into_owned(),
            },
            ServiceError::Timeout { .. } => CallFailure::Timeout,
            other => CallFailure::Transport(other.to_string()),
        }
    }
}

/// The tail of a child's stderr, drained by a background task so the child never blocks on a
/// full pipe.
struct StderrTail {
    buffer: Arc<Mutex<Vec<u8>>>,
    drain: Option<JoinHandle<()>>,
}

impl StderrTail {
    /// How long [`StderrTail::settle`] waits for the child to finish writing its stderr.
    const SETTLE_TIMEOUT: Duration = Duration::from_millis(500);

    fn drain(stderr: Option<ChildStderr>) -> Self {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let drain = stderr.map(|mut stderr| {
            let buffer = Arc::clone(&buffer);
            tokio::spawn(async move {
                let mut chunk = [0_u8; 1024];
                while let Ok(read @ 1..) = stderr.read(&mut chunk).await {
                    let mut buffer = buffer
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                    buffer.extend_from_slice(&chunk[..read]);
                    let excess = buffer.len().saturating_sub(STDERR_TAIL_BYTES);
                    buffer.drain(..excess);
                }
            })
        });
        Self { buffer, drain }
    }

    /// The tail so far, without waiting.
    fn snapshot(&self) -> String {
        let buffer = self
            .buffer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        String::from_utf8_lossy(&buffer).into_owned()
    }

    /// The tail so far, after waiting briefly for the child to close its stderr (a server that
    /// failed the handshake has usually exited and its last words are still in the pipe).
    async fn settle(&mut self) -> String {
        if let Some(drain) = self.drain.take() {
            let _still_writing = tokio::time::timeout(Self::SETTLE_TIMEOUT, drain).await;
        }
        let buffer = self
            .buffer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        String::from_utf8_lossy(&buffer).into_owned()
    }
}

/// `url` without its user information, and that information as `Basic` credentials
/// (Base64 of the percent-decoded `user:password`), if it had any. A URL that does not parse
/// is returned as it is (the connection then reports it).
fn split_credentials(url: &str) -> (String, Option<String>) {
    let Ok(mut parsed) = reqwest::Url::parse(url) else {
        return (url.to_owned(), None);
    };
    if parsed.username().is_empty() && parsed.password().is_none() {
        return (url.to_owned(), None);
    }
    let decode = crate::redact::percent_decoded;
    let userinfo = format!(
        "{}:{}",
        decode(parsed.username()),
        decode(parsed.password().unwrap_or_default())
    );
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    (
        parsed.to_string(),
        Some(crate::redact::basic_credentials(&userinfo)),
    )
}

#[cfg(test)]
mod tests {
    //! The MCP client: paging, tool vs protocol errors, timeouts, auth and broken commands.

    use serde_json::{Map, Value, json};

    use super::*;

    /// The SDK's transport errors name Rust types; what a user reads names none.
    #[test]
    fn sdk_errors_lose_their_type_names_and_gain_their_root_cause() {
        #[derive(Debug)]
        struct Outer(std::io::Error);
        impl std::fmt::Display for Outer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(
                    f,
                    "Send message error Transport [rmcp::transport::worker::WorkerTransport<x::Y<z>>] error: Client error: error sending request for url (http://127.0.0.1:9/mcp), when send initialize request"
                )
            }
        }
        impl std::error::Error for Outer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.0)
            }
        }
        let error = Outer(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "Connection refused (os error 111)",
        ));
        assert_eq!(
            readable(&error),
            "Send message error Transport error: Client error: error sending request for url (http://127.0.0.1:9/mcp), when send initialize request: Connection refused (os error 111)"
        );
    }
    use crate::harness::{Backend, ToolAnswer, ToolSet};

    /// A small catalog: `add` sums two numbers, `fail` always fails, `slow` takes half a second,
    /// `list` returns an array.
    struct Fixture {
        definitions: Vec<Value>,
        tools: Arc<ToolSet>,
    }

    impl Fixture {
        fn new() -> Self {
            let definitions = vec![
                json!({
                    "name": "add",
                    "title": "Add",
                    "description": "Add two numbers.",
                    "inputSchema": {
                        "type": "object",
                        "properties": {"b": {"type": "number"}, "a": {"type": "number"}},
                        "required": ["b", "a"]
                    },
                    "outputSchema": {
                        "type": "object",
                        "properties": {"sum": {"type": "number"}}
                    },
                    "annotations": {"readOnlyHint": true}
                }),
                json!({
                    "name": "fail",
                    "description": "Always fails.",
                    "inputSchema": {"type": "object"}
                }),
                json!({
                    "name": "slow",
                    "description": "Takes half a second.",
                    "inputSchema": {"type": "object"}
                }),
                json!({
                    "name": "list",
                    "description": "Lists letters.",
                    "inputSchema": {"type": "object", "properties": {}}
                }),
            ];
            let tools = ToolSet::from_definitions(definitions.clone()).expect("valid schemas");
            Self {
                definitions,
                tools: Arc::new(tools),
            }
        }
    }

    impl Backend for Fixture {
        fn tools(&self) -> &Arc<ToolSet> {
            &self.tools
        }

        fn call<'a>(
            &'a mut self,
            tool: &'a str,
            arguments: &'a Map<String, Value>,
        ) -> futures::future::BoxFuture<'a, ToolAnswer> {
            Box::pin(async move {
                match tool {
                    "add" => {
                        let number = |key: &str| arguments.get(key).and_then(Value::as_f64);
                        match (number("a"), number("b")) {
                            (Some(a), Some(b)) => ToolAnswer::Success(json!({"sum": a + b})),
                            _ => ToolAnswer::ToolError("`a` and `b` must be numbers".to_owned()),
                        }
                    }
                    "list" => ToolAnswer::Success(json!(["x", "y"])),
                    "slow" => {
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        ToolAnswer::Success(json!({}))
                    }
                    _ => ToolAnswer::ToolError(format!("tool `{tool}` is broken")),
                }
            })
        }

        fn state(&self) -> Option<Value> {
            None
        }
    }

    async fn connect() -> McpClient {
        let harness = Harness::new(Box::new(Fixture::new()), Vec::new());
        McpClient::connect_in_process(Arc::new(harness))
            .await
            .expect("the in-process server accepts the handshake")
    }

    fn arguments(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => panic!("arguments must be an object"),
        }
    }

    const TIMEOUT: Duration = Duration::from_secs(5);

    #[test]
    fn client_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<McpClient>();
    }

    #[tokio::test]
    async fn lists_all_tools_in_catalog_order_with_keys_in_original_order() {
        let client = connect().await;
        let tools = client.list_tools().await.expect("tools/list succeeds");
        assert_eq!(tools, Fixture::new().definitions);
        let keys: Vec<&String> = tools[0]["inputSchema"]["properties"]
            .as_object()
            .expect("properties is an object")
            .keys()
            .collect();
        assert_eq!(keys, ["b", "a"]);
        client.close().await.expect("the session closes cleanly");
    }

    #[tokio::test]
    async fn returns_structured_content_and_its_text_on_success() {
        let client = connect().await;
        let reply = client
            .call_tool("add", arguments(json!({"a": 2, "b": 3})), TIMEOUT)
            .await
            .expect("the call succeeds");
        assert_eq!(
            reply,
            ToolReply {
                is_error: false,
                structured: Some(json!({"sum": 5.0})),
                text: r#"{"sum":5.0}"#.to_owned(),
            }
        );
        client.close().await.expect("the session closes cleanly");
    }

    #[tokio::test]
    async fn wraps_a_non_object_result_under_result() {
        let client = connect().await;
        let reply = client
            .call_tool("list", Map::new(), TIMEOUT)
            .await
            .expect("the call succeeds");
        assert_eq!(reply.structured, Some(json!({"result": ["x", "y"]})));
        assert_eq!(reply.text, r#"{"result":["x","y"]}"#);
        client.close().await.expect("the session closes cleanly");
    }

    #[tokio::test]
    async fn reports_a_backend_error_as_a_tool_error() {
        let client = connect().await;
        let reply = client
            .call_tool("fail", Map::new(), TIMEOUT)
            .await
            .expect("a tool error is still a result");
        assert_eq!(
            reply,
            ToolReply {
                is_error: true,
                structured: None,
                text: "tool `fail` is broken".to_owned(),
            }
        );
        client.close().await.expect("the session closes cleanly");
    }

    #[tokio::test]
    async fn reports_an_unknown_tool_as_invalid_params() {
        let client = connect().await;
        let failure = client
            .call_tool("delete_everything", Map::new(), TIMEOUT)
            .await
            .expect_err("the tool does not exist");
        assert_eq!(
            failure,
            CallFailure::Protocol {
                code: -32602,
                message: "unknown tool `delete_everything`".to_owned(),
            }
        );
        assert_eq!(
            failure.to_string(),
            "JSON-RPC error -32602: unknown tool `delete_everything`"
        );
        client.close().await.expect("the session closes cleanly");
    }

    #[tokio::test]
    async fn serves_concurrent_calls_from_a_shared_client() {
        let client = connect().await;
        let call = |a: i64| client.call_tool("add", arguments(json!({"a": a, "b": 1})), TIMEOUT);
        let (one, two, three) = tokio::join!(call(0), call(1), call(2));
        let sums: Vec<Option<Value>> = [one, two, three]
            .into_iter()
            .map(|reply| reply.expect("the call succeeds").structured)
            .collect();
        assert_eq!(
            sums,
            [
                Some(json!({"sum": 1.0})),
                Some(json!({"sum": 2.0})),
                Some(json!({"sum": 3.0}))
            ]
        );
        client.close().await.expect("the session closes cleanly");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn times_out_a_slow_call_and_keeps_the_session_usable() {
        let client = connect().await;
        let failure = client
            .call_tool("slow", Map::new(), Duration::from_millis(50))
            .await
            .expect_err("the call takes longer than its timeout");
        assert_eq!(failure, CallFailure::Timeout);
        let reply = client
            .call_tool("add", arguments(json!({"a": 1, "b": 1})), TIMEOUT)
            .await
            .expect("the session survives a timeout");
        assert_eq!(reply.structured, Some(json!({"sum": 2.0})));
        client.close().await.expect("the session closes cleanly");
    }

    #[tokio::test]
    async fn reports_a_missing_program_when_connecting_to_a_command() {
        let error = McpClient::connect_command("/nonexistent/toolgate-test-server", &[])
            .await
            .err()
            .expect("the program does not exist");
        assert_eq!(
            error.to_string(),
            "failed to start MCP server `/nonexistent/toolgate-test-server`"
        );
    }

    #[tokio::test]
    async fn shows_the_stderr_of_a_command_that_is_not_an_mcp_server() {
        let args = ["-c".to_owned(), "echo 'no such server' >&2".to_owned()];
        let error = McpClient::connect_command("sh", &args)
            .await
            .err()
            .expect("`sh` is not an MCP server");
        let message = error.to_string();
        assert!(
            message.starts_with(
                "failed to connect to MCP server `sh`; its stderr ends with:\nno such server"
            ),
            "{message}"
        );
    }
}

/// A scripted MCP server for tests: answers `initialize` itself and every other request with
/// a closure, over an in-process pipe, writing exactly the JSON it is given.
#[cfg(test)]
pub(crate) mod scripted {
    use std::sync::{Arc, Mutex};

    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

    use super::{
        super::wire_tap::{ListingTap, TapReader},
        McpClient, handshake,
    };

    /// Answers one request (`method`, `params`): `Ok` is sent as the JSON-RPC `result`, `Err`
    /// as the JSON-RPC `error`.
    pub(crate) type Script = Box<dyn FnMut(&str, &Value) -> Result<Value, Value> + Send>;

    /// Every request the client sent after `initialize`, as `{"method", "params"}`.
    pub(crate) type Requests = Arc<Mutex<Vec<Value>>>;

    /// Connects a client to a server that answers with `script`.
    pub(crate) async fn connect(mut script: Script) -> (McpClient, Requests) {
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        let requests: Requests = Arc::default();
        let seen = Arc::clone(&requests);
        tokio::spawn(async move {
            let (read, mut write) = tokio::io::split(server_end);
            let mut lines = BufReader::new(read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let message: Value = serde_json::from_str(&line).expect("the client sends JSON");
                let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str())
                else {
                    continue;
                };
                let params = message.get("params").cloned().unwrap_or(Value::Null);
                let answer = if method == "initialize" {
                    Ok(json!({
                        "protocolVersion": "2025-11-25",
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "scripted", "version": "1.0.0"}
                    }))
                } else {
                    seen.lock()
                        .expect("no test panics while holding the lock")
                        .push(json!({"method": method, "params": params}));
                    script(method, &params)
                };
                let reply = match answer {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                    Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
                };
                let mut bytes = serde_json::to_vec(&reply).expect("JSON encodes");
                bytes.push(b'\n');
                if write.write_all(&bytes).await.is_err() {
                    break;
                }
            }
        });
        let tap = ListingTap::default();
        let (read, write) = tokio::io::split(client_end);
        let service = handshake((TapReader::new(read, tap.clone()), write))
            .await
            .expect("the scripted server accepts the handshake");
        let client = McpClient {
            service,
            server_task: None,
            tap,
            stderr: None,
        };
        (client, requests)
    }

    /// `count` minimal tools named `t001`, `t002`, ... starting at `first`.
    pub(crate) fn numbered_tools(first: usize, count: usize) -> Vec<Value> {
        (first..first + count)
            .map(|n| {
                json!({
                    "name": format!("t{n:03}"),
                    "description": format!("Tool number {n}."),
                    "inputSchema": {"type": "object", "properties": {}}
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod field_case_tests {
    use serde_json::{Map, Value, json};

    use super::scripted::{self, numbered_tools};
    use super::*;

    /// The `cursor` each tools/list request carried (`null` when none).
    fn params_of(requests: &scripted::Requests) -> Vec<Value> {
        requests
            .lock()
            .expect("no test panics while holding the lock")
            .iter()
            .map(|request| {
                request["params"]
                    .get("cursor")
                    .cloned()
                    .unwrap_or(Value::Null)
            })
            .collect()
    }

    /// B18: three pages of 50, 50 and 1 tools; cursors go back unchanged, 101 tools come out.
    #[tokio::test]
    async fn follows_every_page_of_tools_list_b18() {
        let (client, requests) = scripted::connect(Box::new(|_, params| {
            Ok(match params["cursor"].as_str() {
                None => {
                    json!({"tools": numbered_tools(1, 50), "nextCursor": "eyJvZmZzZXQiOjUwfQ=="})
                }
                Some("eyJvZmZzZXQiOjUwfQ==") => {
                    json!({"tools": numbered_tools(51, 50), "nextCursor": "eyJvZmZzZXQiOjEwMH0="})
                }
                Some(_) => json!({"tools": numbered_tools(101, 1)}),
            })
        }))
        .await;
        let listing = client.list_tool_pages().await.expect("tools/list succeeds");
        assert_eq!(listing.tools.len(), 101);
        assert_eq!(listing.tools[100]["name"], "t101");
        assert_eq!(listing.warnings, Vec::<String>::new());
        assert_eq!(
            params_of(&requests),
            [
                json!(null),
                json!("eyJvZmZzZXQiOjUwfQ=="),
                json!("eyJvZmZzZXQiOjEwMH0=")
            ]
        );
        assert_eq!(client.list_tools().await.expect("succeeds").len(), 101);
    }

    /// B18: `"nextCursor": ""` and `null` end the walk like an absent cursor, with a warning,
    /// whether or not rmcp could type the page (a tool without `inputSchema` makes it untyped).
    #[tokio::test]
    async fn treats_a_null_or_empty_cursor_as_the_last_page_b18() {
        let untyped = json!([{"name": "legacy_tool", "description": "old server"}]);
        let warning = |cursor: &str| {
            vec![format!(
                "tools/list page 1 has `\"nextCursor\": {cursor}`; treated as the last page (leave the field out instead)"
            )]
        };
        for (tools, cursor, warnings) in [
            (json!(numbered_tools(1, 2)), json!(""), warning("\"\"")),
            (untyped.clone(), json!(""), warning("\"\"")),
            (untyped, json!(null), warning("null")),
            (json!(numbered_tools(1, 2)), json!(null), warning("null")),
        ] {
            let count = tools.as_array().map_or(0, Vec::len);
            let (client, requests) = scripted::connect(Box::new(move |_, _| {
                Ok(json!({"tools": tools.clone(), "nextCursor": cursor.clone()}))
            }))
            .await;
            let listing = client.list_tool_pages().await.expect("tools/list succeeds");
            assert_eq!(listing.tools.len(), count);
            assert_eq!(params_of(&requests).len(), 1);
            assert_eq!(listing.warnings, warnings);
        }
    }

    /// A server that hands back the same cursor forever is stopped with `non_advancing_cursor`,
    /// and the page it served twice is one set of tools (8 tools listed as 16).
    #[tokio::test]
    async fn stops_on_a_cursor_that_does_not_advance_and_merges_the_repeated_page() {
        let (client, requests) = scripted::connect(Box::new(|_, _| {
            Ok(json!({"tools": numbered_tools(1, 8), "nextCursor": "same"}))
        }))
        .await;
        let listing = client.list_tool_pages().await.expect("tools/list succeeds");
        assert_eq!(params_of(&requests).len(), 2);
        assert_eq!(listing.tools.len(), 8);
        assert_eq!(
            listing.warnings,
            [
                "non_advancing_cursor: tools/list page 2 repeats cursor `same`; stopped after 8 tools (the cursor does not advance)",
                "8 tool listings repeated an identical tool and were merged: \"t001\", \"t002\", \"t003\", \"t004\", \"t005\" and 3 more"
            ]
        );
    }

    /// Issue #35: a cursor that changes on every page while the pages repeat the tools
    /// already listed is stopped at the first such page, not followed to the page limit.
    #[tokio::test]
    async fn stops_when_an_advancing_cursor_serves_only_tools_already_listed() {
        let (client, requests) = scripted::connect(Box::new(|_, params| {
            let next = match params["cursor"].as_str() {
                None => 1,
                Some(cursor) => cursor.trim_start_matches('p').parse::<u32>().unwrap_or(0) + 1,
            };
            Ok(json!({"tools": numbered_tools(1, 3), "nextCursor": format!("p{next}")}))
        }))
        .await;
        let listing = client.list_tool_pages().await.expect("tools/list succeeds");
        assert_eq!(params_of(&requests), [json!(null), json!("p1")]);
        assert_eq!(listing.tools.len(), 3);
        assert_eq!(
            listing.warnings,
            [
                "non_advancing_cursor: tools/list page 2 lists only tools of earlier pages; stopped after 3 tools (the cursor changes, the tools do not)",
                "3 tool listings repeated an identical tool and were merged: \"t001\", \"t002\", \"t003\""
            ]
        );
    }

    /// B27: one tool without `inputSchema` must not drop the page; the others are kept as sent.
    #[tokio::test]
    async fn keeps_a_page_whose_tool_lacks_an_input_schema_b27() {
        let tools = json!([
            {"name": "test_err", "inputSchema": {}},
            {"name": "legacy_tool", "description": "old server", "schema": {}},
            {"name": "sub", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}}
        ]);
        let page = json!({ "tools": tools });
        let (client, _) = scripted::connect(Box::new(move |_, _| Ok(page.clone()))).await;
        let listing = client.list_tool_pages().await.expect("tools/list succeeds");
        assert_eq!(Value::Array(listing.tools), tools);
    }

    fn reply_with(result: Result<Value, Value>) -> scripted::Script {
        Box::new(move |_, _| result.clone())
    }

    /// B20 A: `isError: true` is a tool error with its text kept, not a success.
    #[tokio::test]
    async fn reports_is_error_true_as_a_tool_error_b20() {
        let (client, _) = scripted::connect(reply_with(Ok(json!({
            "content": [{"type": "text", "text": "Error executing tool: 401 Unauthorized"}],
            "isError": true
        }))))
        .await;
        let reply = client
            .call_tool("x", Map::new(), TIMEOUT)
            .await
            .expect("a tool error is a result");
        assert!(reply.is_error);
        assert_eq!(reply.text, "Error executing tool: 401 Unauthorized");
    }

    /// B20 B: a JSON-RPC -32602 is a protocol error carrying the code and the message.
    #[tokio::test]
    async fn reports_invalid_params_as_a_protocol_error_b20() {
        let (client, _) = scripted::connect(reply_with(Err(json!({
            "code": -32602,
            "message": "invalid params: required field 'project' absent"
        }))))
        .await;
        let failure = client
            .call_tool("x", Map::new(), TIMEOUT)
            .await
            .expect_err("a JSON-RPC error is no result");
        assert_eq!(
            failure,
            CallFailure::Protocol {
                code: -32602,
                message: "invalid params: required field 'project' absent".to_owned()
            }
        );
    }

    /// B20 C: error-looking text in a result marked `isError: false` is still a success.
    #[tokio::test]
    async fn never_reads_error_text_as_a_failure_b20() {
        let (client, _) = scripted::connect(reply_with(Ok(json!({
            "content": [{"type": "text", "text": "Error: index not found"}],
            "isError": false
        }))))
        .await;
        let reply = client
            .call_tool("x", Map::new(), TIMEOUT)
            .await
            .expect("a result");
        assert!(!reply.is_error);
        assert_eq!(reply.text, "Error: index not found");
    }

    /// B21 A and B: `content: []` with or without `structuredContent` is a valid result.
    #[tokio::test]
    async fn accepts_empty_content_with_and_without_structured_content_b21() {
        let structured = json!({"accounts": [{"id": "a1"}], "total": 36});
        let (client, _) = scripted::connect(reply_with(Ok(
            json!({"content": [], "structuredContent": structured}),
        )))
        .await;
        let reply = client.call_tool("x", Map::new(), TIMEOUT).await;
        assert_eq!(
            reply,
            Ok(ToolReply {
                is_error: false,
                structured: Some(structured),
                text: String::new()
            })
        );
        let (client, _) =
            scripted::connect(reply_with(Ok(json!({"content": [], "isError": false})))).await;
        let reply = client.call_tool("x", Map::new(), TIMEOUT).await;
        assert_eq!(
            reply,
            Ok(ToolReply {
                is_error: false,
                structured: None,
                text: String::new()
            })
        );
    }

    /// B21 C: text and structured copies that disagree are both kept; structured data wins.
    #[tokio::test]
    async fn keeps_both_copies_when_text_and_structured_content_disagree_b21() {
        let (client, _) = scripted::connect(reply_with(Ok(json!({
            "content": [{"type": "text", "text": "{\"total\": 36}"}],
            "structuredContent": {"total": 35}
        }))))
        .await;
        let reply = client
            .call_tool("x", Map::new(), TIMEOUT)
            .await
            .expect("a result");
        assert_eq!(reply.structured, Some(json!({"total": 35})));
        assert_eq!(reply.text, "{\"total\": 36}");
        let finding = crate::lint::schema::structured_text_mismatch("x", &reply)
            .expect("the copies disagree");
        assert_eq!(
            (finding.check.as_str(), finding.severity),
            ("structured_text_mismatch", crate::lint::Severity::Info)
        );
        assert_eq!(
            finding.message,
            "the text content `{\"total\":36}` disagrees with `structuredContent` `{\"total\":35}`"
        );
    }

    const TIMEOUT: Duration = Duration::from_secs(5);
}

#[cfg(test)]
mod credential_tests {
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};

    use super::*;

    /// The `Authorization` headers a server that refuses everything was sent by a connection
    /// to `url` with `headers`, and the connection's error.
    async fn authorization_sent(
        url_of: impl Fn(&str) -> String,
        headers: &[(String, String)],
    ) -> (Vec<String>, String) {
        let server = MockServer::start().await;
        Mock::given(method("POST"))
            .respond_with(ResponseTemplate::new(500))
            .mount(&server)
            .await;
        let url = url_of(&server.address().to_string());
        let error = McpClient::connect_http_with(&url, headers)
            .await
            .err()
            .expect("a server that answers 500 fails the handshake");
        let sent = server
            .received_requests()
            .await
            .expect("recorded")
            .iter()
            .filter_map(|request| request.headers.get("authorization"))
            .map(|value| value.to_str().expect("ASCII").to_owned())
            .collect();
        (sent, format!("{error:#}"))
    }

    /// Issue case: URL credentials replaced a configured `Authorization: Bearer`, and errors
    /// showed the URL with its password.
    #[tokio::test]
    async fn a_configured_authorization_wins_over_url_credentials_which_leave_the_url() {
        let with_password = |address: &str| format!("http://bob:pw-secret-123@{address}/mcp");
        let bearer = vec![(
            "Authorization".to_owned(),
            "Bearer configured-token-1".to_owned(),
        )];
        let (sent, error) = authorization_sent(with_password, &bearer).await;
        assert!(!sent.is_empty());
        assert!(
            sent.iter()
                .all(|value| value == "Bearer configured-token-1"),
            "{sent:?}"
        );
        assert!(!error.contains("pw-secret-123"), "{error}");
        // Without a configured header, the URL's credentials are sent as `Basic`.
        let (sent, _) = authorization_sent(with_password, &[]).await;
        let basic = format!(
            "Basic {}",
            crate::redact::basic_credentials("bob:pw-secret-123")
        );
        assert!(!sent.is_empty());
        assert!(sent.iter().all(|value| *value == basic), "{sent:?}");
    }
}
