//! The user's own MCP servers as a backend: catalog discovery (each server started once,
//! `initialize`, every page of `tools/list`) and a fresh set of servers for every scenario run.
//!
//! A stdio server is a new process per run and repetition, in its own process group, started
//! with a fresh copy of the scenario's `seed_path`; the group is killed when the run ends. An
//! HTTP server is reset by its `reset:` hook before each run. A server that does not start,
//! does not initialize, lists no tools or dies mid-run makes the run errored, with the end of
//! its stderr. Secrets (`env` and header values) are redacted from every message.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::client::{CallFailure, McpClient, ToolReply, kill_group};
use super::{Backend, BackendFactory, ToolAnswer, ToolSet};
use crate::catalog::listing::ToolListing;
use crate::catalog::{Catalog, ToolDef};
use crate::redact::Redactor;
use crate::scenario::Scenario;
use crate::suite::{
    Launch, Reset, RunPaths, ServerSpec, Transport, archive_stem, fill_templates, unpack,
};

/// The most characters of a server's stderr shown in an error.
const STDERR_SHOWN_CHARS: usize = 2_000;

/// What one server listed when the suite discovered its catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct DiscoveredServer {
    /// The server's name in `servers:`.
    pub name: String,
    /// Its command line or URL (no secrets; see `ServerSpec::label`).
    pub label: String,
    /// `serverInfo` `name version` from `initialize`, when the server sent one.
    pub version: Option<String>,
    /// The protocol version `initialize` agreed, when known.
    pub protocol_version: Option<String>,
    /// The tools the suite uses (after `include`/`exclude`), as listed, in server order.
    pub tools: Vec<Value>,
    /// What went wrong while listing them (paging stopped early, repeated tools merged), one
    /// sentence each; empty for a clean listing, a lock file or a recording.
    pub warnings: Vec<String>,
}

/// The catalog of a suite's servers.
#[derive(Debug, Clone, PartialEq)]
pub struct Discovery {
    /// Every server, in `servers:` order; each lists at least one tool.
    pub servers: Vec<DiscoveredServer>,
}

impl Discovery {
    /// A discovery from saved listings (a lock file): `(server, definition)` pairs in order.
    /// Servers appear in order of their first tool; `label` and `version` are unknown.
    pub fn from_listing(tools: impl IntoIterator<Item = (String, Value)>) -> Discovery {
        let mut servers: Vec<DiscoveredServer> = Vec::new();
        for (server, definition) in tools {
            match servers.iter_mut().find(|known| known.name == server) {
                Some(known) => known.tools.push(definition),
                None => servers.push(DiscoveredServer {
                    name: server,
                    label: String::new(),
                    version: None,
                    protocol_version: None,
                    tools: vec![definition],
                    warnings: Vec::new(),
                }),
            }
        }
        Discovery { servers }
    }

    /// The merged catalog: every server's tools, server by server.
    ///
    /// Errors: a tool name listed by two servers (or twice by one).
    pub fn catalog(&self) -> Result<Catalog> {
        let mut owner: HashMap<&str, &str> = HashMap::new();
        let mut tools = Vec::new();
        for server in &self.servers {
            for definition in &server.tools {
                let tool = ToolDef::from_server(&server.name, definition.clone());
                if let Some(first) = owner.get(tool.name.as_str()) {
                    bail!(
                        "tool `{}` is listed by both server `{first}` and server `{}`; scenarios could not tell them apart (leave one out with `exclude:`)",
                        tool.name,
                        server.name
                    );
                }
                owner.insert(
                    definition["name"].as_str().unwrap_or_default(),
                    &server.name,
                );
                tools.push(tool);
            }
        }
        Ok(Catalog::from_tools(tools))
    }
}

/// One server's answer to a tools/list walk: every tool as listed (no `include`/`exclude`
/// applied), what went wrong while paging, and what `initialize` said.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedServer {
    /// The tools of every page and the paging warnings.
    pub listing: ToolListing,
    /// `serverInfo` `name version` from `initialize`, when the server sent one.
    pub version: Option<String>,
    /// The protocol version `initialize` agreed, when known.
    pub protocol_version: Option<String>,
}

/// Starts one server (with an empty seed directory; a relative `cwd` resolves against
/// `root`), lists every page of its tools and stops it. Shared by the suite's discovery and
/// by `lint`, so both reach a server the same way.
///
/// Errors: the server does not start, does not initialize or does not answer `tools/list`;
/// naming the server, with its stderr tail and secrets redacted.
pub async fn list_server(spec: &ServerSpec, root: &Path) -> Result<ListedServer> {
    list_seeded(spec, root, None).await
}

/// [`list_server`] on a fresh copy of `seed` (a file, directory or archive), its `setup`
/// run first, as a run would start it.
async fn list_seeded(spec: &ServerSpec, root: &Path, seed: Option<&Path>) -> Result<ListedServer> {
    let seed = SeedDir::new(seed)?;
    let mut running = start(spec, root, &seed.paths).await?;
    let listed = running
        .client()
        .list_tool_pages()
        .await
        .map_err(|error| running.fail(&format!("{error:#}")));
    let version = running.client().server_version();
    let protocol_version = running.client().protocol_version();
    running.close().await;
    Ok(ListedServer {
        listing: listed.map_err(anyhow::Error::msg)?,
        version,
        protocol_version,
    })
}

/// Starts every server once (with an empty seed directory), lists its tools and stops it.
///
/// Errors: a server that does not start, does not initialize or answer `tools/list` (with its
/// stderr), one that lists no tools or none that pass its `include`/`exclude`, or a tool
/// without a string `name`.
pub async fn discover(specs: &[ServerSpec], root: &Path) -> Result<Discovery> {
    discover_seeded(specs, root, None).await
}

/// [`discover`], each server started on its own fresh copy of `seed` (the suite's
/// `seed_path`: a file, directory or archive) after its `setup`, as a run starts it; with an
/// empty seed directory when `seed` is `None`.
///
/// Errors: as [`discover`], and a seed that cannot be copied or unpacked, or a failing
/// `setup` (with its stderr).
pub async fn discover_seeded(
    specs: &[ServerSpec],
    root: &Path,
    seed: Option<&Path>,
) -> Result<Discovery> {
    let mut servers = Vec::new();
    for spec in specs {
        let mut listed = list_seeded(spec, root, seed).await?;
        if listed.listing.tools.is_empty() {
            bail!("server `{}` (`{}`) lists no tools", spec.name, spec.label());
        }
        let mut tools = Vec::new();
        for definition in std::mem::take(&mut listed.listing.tools) {
            let Some(name) = definition["name"].as_str() else {
                bail!(
                    "server `{}` lists a tool without a string `name`",
                    spec.name
                );
            };
            if spec.filter.admits(name) {
                tools.push(definition);
            }
        }
        if tools.is_empty() {
            bail!(
                "server `{}`: no tool passes its `include`/`exclude` globs",
                spec.name
            );
        }
        servers.push(DiscoveredServer {
            name: spec.name.clone(),
            label: spec.label(),
            version: listed.version,
            protocol_version: listed.protocol_version,
            tools,
            warnings: listed.listing.warnings,
        });
    }
    Ok(Discovery { servers })
}

/// Fresh servers for every run of a suite, serving the discovered catalog.
pub struct ServerBackends {
    specs: Vec<ServerSpec>,
    root: PathBuf,
    tools: Arc<ToolSet>,
    /// Tool name -> index into `specs`.
    routes: Arc<HashMap<String, usize>>,
    call_timeout: Duration,
}

impl ServerBackends {
    /// These backends checking arguments in the scoring modes `numbers` and
    /// `double_encoded` (see [`ToolSet::with_modes`]).
    ///
    /// Errors: a schema that no longer compiles (it compiled in [`ServerBackends::new`]).
    pub fn with_modes(
        mut self,
        numbers: crate::json::NumberMode,
        double_encoded: crate::json::DoubleEncoded,
    ) -> Result<ServerBackends> {
        let tools = ToolSet::from_definitions(self.tools.definitions().to_vec())?;
        self.tools = Arc::new(tools.with_modes(numbers, double_encoded));
        Ok(self)
    }

    /// Backends for `specs` (resolved against the suite `root`) serving `discovery`'s tools;
    /// each call may take `call_timeout`.
    ///
    /// Errors: duplicate tool names, or an `inputSchema` that is not a valid JSON Schema.
    pub fn new(
        specs: Vec<ServerSpec>,
        root: &Path,
        discovery: &Discovery,
        call_timeout: Duration,
    ) -> Result<ServerBackends> {
        let catalog = discovery.catalog()?;
        let tools = ToolSet::from_definitions(catalog.definitions().to_vec())?;
        let mut routes = HashMap::new();
        for server in &discovery.servers {
            let Some(index) = specs.iter().position(|spec| spec.name == server.name) else {
                bail!(
                    "the catalog names server `{}`, which `servers:` does not",
                    server.name
                );
            };
            for definition in &server.tools {
                routes.insert(
                    definition["name"].as_str().unwrap_or_default().to_string(),
                    index,
                );
            }
        }
        Ok(ServerBackends {
            specs,
            root: root.to_path_buf(),
            tools: Arc::new(tools),
            routes: Arc::new(routes),
            call_timeout,
        })
    }

    /// Fresh servers for one run, with a copy of `seed` (a file, directory or archive) as
    /// `{seed}`. `Err` says why they did not start.
    pub fn start_seeded<'a>(
        &'a self,
        seed: Option<&'a Path>,
    ) -> BoxFuture<'a, Result<Box<dyn Backend>, String>> {
        Box::pin(async move {
            let backend = self.start_all(seed).await?;
            Ok(Box::new(backend) as Box<dyn Backend>)
        })
    }

    async fn start_all(&self, seed: Option<&Path>) -> Result<ServerBackend, String> {
        let seed = SeedDir::new(seed).map_err(|e| format!("{e:#}"))?;
        let mut servers = Vec::new();
        for spec in &self.specs {
            match start(spec, &self.root, &seed.paths).await {
                Ok(running) => servers.push(running),
                Err(error) => {
                    for mut running in servers {
                        running.close().await;
                    }
                    return Err(format!("{error:#}"));
                }
            }
        }
        let mut backend = ServerBackend {
            tools: Arc::clone(&self.tools),
            routes: Arc::clone(&self.routes),
            servers,
            call_timeout: self.call_timeout,
            failure: None,
            _seed: seed,
        };
        for index in 0..self.specs.len() {
            if let Err(error) = backend.reset(index, &self.specs[index], &self.root).await {
                backend.close_all().await;
                return Err(error);
            }
        }
        Ok(backend)
    }
}

impl BackendFactory for ServerBackends {
    fn tools(&self) -> &Arc<ToolSet> {
        &self.tools
    }

    fn start<'a>(
        &'a self,
        scenario: &'a Scenario,
        _repeat: u32,
    ) -> BoxFuture<'a, Result<Box<dyn Backend>, String>> {
        self.start_seeded(scenario.seed_path.as_deref())
    }
}

/// One run's servers.
pub struct ServerBackend {
    tools: Arc<ToolSet>,
    routes: Arc<HashMap<String, usize>>,
    servers: Vec<Running>,
    call_timeout: Duration,
    failure: Option<String>,
    /// Removed (with the servers' files) when the run's backend is dropped.
    _seed: SeedDir,
}

impl ServerBackend {
    async fn reset(&mut self, index: usize, spec: &ServerSpec, root: &Path) -> Result<(), String> {
        let Some(reset) = &spec.reset else {
            return Ok(());
        };
        let running = &self.servers[index];
        match reset {
            Reset::Command(command) => {
                let mut reset = tokio::process::Command::new(&command[0]);
                reset
                    .args(&command[1..])
                    .current_dir(root)
                    .stdin(std::process::Stdio::null());
                crate::process::die_with_parent(reset.as_std_mut());
                let output = reset.output().await.map_err(|error| {
                    running.fail(&format!(
                        "failed to run its reset command `{}`: {error}",
                        command[0]
                    ))
                })?;
                if !output.status.success() {
                    let stderr = String::from_utf8_lossy(&output.stderr);
                    return Err(running.fail(&format!(
                        "its reset command `{}` failed ({}): {}",
                        command.join(" "),
                        output.status,
                        stderr.trim()
                    )));
                }
            }
            Reset::Tool { name, arguments } => {
                let reply = running
                    .client()
                    .call_tool(name, arguments.clone(), self.call_timeout)
                    .await;
                match reply {
                    Ok(reply) if !reply.is_error => {}
                    Ok(reply) => {
                        return Err(running
                            .fail(&format!("its reset tool `{name}` failed: {}", reply.text)));
                    }
                    Err(failure) => {
                        return Err(
                            running.fail(&format!("its reset tool `{name}` failed: {failure}"))
                        );
                    }
                }
            }
        }
        Ok(())
    }

    async fn close_all(&mut self) {
        for running in &mut self.servers {
            running.close().await;
        }
    }
}

impl Backend for ServerBackend {
    fn tools(&self) -> &Arc<ToolSet> {
        &self.tools
    }

    fn call<'a>(
        &'a mut self,
        tool: &'a str,
        arguments: &'a Map<String, Value>,
    ) -> BoxFuture<'a, ToolAnswer> {
        Box::pin(async move {
            let Some(&index) = self.routes.get(tool) else {
                return ToolAnswer::ProtocolError(format!("unknown tool `{tool}`"));
            };
            let running = &self.servers[index];
            let reply = running
                .client()
                .call_tool(tool, arguments.clone(), self.call_timeout)
                .await;
            match reply {
                Ok(reply) => {
                    let answer = answer(reply);
                    running.redact_answer(answer)
                }
                Err(CallFailure::Transport(message)) => {
                    let failure = running.died(&message).await;
                    self.failure.get_or_insert(failure.clone());
                    ToolAnswer::ProtocolError(failure)
                }
                // Not the agent's doing: the run is errored, never judged.
                Err(failure @ CallFailure::Breach(_)) => {
                    let failure = running.fail(&format!("`{tool}`: {failure}"));
                    self.failure.get_or_insert(failure.clone());
                    ToolAnswer::ProtocolError(failure)
                }
                Err(failure) => {
                    if running.client().is_closed() {
                        let failure = running.died(&failure.to_string()).await;
                        self.failure.get_or_insert(failure.clone());
                        return ToolAnswer::ProtocolError(failure);
                    }
                    ToolAnswer::ProtocolError(running.redactor.redact(&failure.to_string()))
                }
            }
        })
    }

    fn state(&self) -> Option<Value> {
        None
    }

    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }

    fn paths(&self) -> Option<RunPaths> {
        Some(self._seed.paths.clone())
    }

    fn close(&mut self) -> BoxFuture<'_, ()> {
        Box::pin(self.close_all())
    }
}

/// How a tools/call result becomes an answer: an `isError` result is a tool error (its text);
/// otherwise `structuredContent` when present, else the text content parsed as JSON, else
/// the text itself.
pub fn answer(reply: ToolReply) -> ToolAnswer {
    if reply.is_error {
        return ToolAnswer::ToolError(reply.text);
    }
    if let Some(structured) = reply.structured {
        return ToolAnswer::Success(structured);
    }
    match serde_json::from_str::<Value>(&reply.text) {
        Ok(value) => ToolAnswer::Success(value),
        Err(_) => ToolAnswer::Text(reply.text),
    }
}

/// One started server of one run.
struct Running {
    name: String,
    label: String,
    client: Option<McpClient>,
    /// The stdio server's process group, killed on close and on drop.
    pgid: Option<i32>,
    redactor: Redactor,
}

impl Running {
    fn client(&self) -> &McpClient {
        self.client
            .as_ref()
            .expect("a running server has a client until it is closed")
    }

    /// `what` as an error about this server, with its stderr tail, secrets redacted.
    fn fail(&self, what: &str) -> String {
        let tail = self
            .client
            .as_ref()
            .map(McpClient::stderr_tail)
            .unwrap_or_default();
        let server = server_named(&self.name, &self.label);
        self.redactor
            .redact(&with_stderr(&format!("{server}: {what}"), &tail))
    }

    /// The message for a server whose connection broke mid-run: waits briefly for its last
    /// words on stderr.
    async fn died(&self, what: &str) -> String {
        tokio::time::sleep(Duration::from_millis(200)).await;
        self.fail(&format!("died during the run ({what})"))
    }

    fn redact_answer(&self, answer: ToolAnswer) -> ToolAnswer {
        match answer {
            ToolAnswer::ToolError(text) => ToolAnswer::ToolError(self.redactor.redact(&text)),
            ToolAnswer::Text(text) => ToolAnswer::Text(self.redactor.redact(&text)),
            other => other,
        }
    }

    async fn close(&mut self) {
        if let Some(pgid) = self.pgid.take() {
            kill_group(pgid);
        }
        if let Some(client) = self.client.take() {
            let _closed = client.close().await;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // A run dropped before `close` (a timeout, Ctrl-C) still leaves no process behind.
        if let Some(pgid) = self.pgid.take() {
            kill_group(pgid);
        }
    }
}

fn with_stderr(message: &str, tail: &str) -> String {
    let tail = tail.trim();
    if tail.is_empty() {
        return message.to_string();
    }
    let chars: Vec<char> = tail.chars().collect();
    let shown: String = chars[chars.len().saturating_sub(STDERR_SHOWN_CHARS)..]
        .iter()
        .collect();
    format!("{message}; its stderr ends with:\n{shown}")
}

/// "server `NAME` (`LABEL`)", or "server `NAME`" for a server named by its own command line
/// or URL (one given on the command line), which would otherwise be said twice.
fn server_named(name: &str, label: &str) -> String {
    if name == label {
        format!("server `{name}`")
    } else {
        format!("server `{name}` (`{label}`)")
    }
}

/// Starts (stdio) or connects to (HTTP) `spec` for a run with `paths`.
async fn start(spec: &ServerSpec, root: &Path, paths: &RunPaths) -> Result<Running> {
    let redactor = spec.secrets();
    let label = spec.label();
    let (client, pgid) = match &spec.transport {
        Transport::Stdio { .. } => {
            let launch = spec
                .launch_for(root, paths)
                .expect("a stdio server has a launch");
            if let Some(setup) = &spec.setup {
                run_setup(setup, root, &launch, paths)
                    .await
                    .map_err(|error| {
                        anyhow::anyhow!(
                            "{}",
                            redactor
                                .redact(&format!("{}: {error}", server_named(&spec.name, &label)))
                        )
                    })?;
            }
            let mut command = tokio::process::Command::new(&launch.command);
            command
                .args(&launch.args)
                .envs(launch.env.iter().map(|(k, v)| (k, v)))
                .current_dir(&launch.cwd);
            McpClient::connect_child(command, &launch.command)
                .await
                .map_err(|error| {
                    anyhow::anyhow!(
                        "{}",
                        redactor
                            .redact(&format!("{}: {error:#}", server_named(&spec.name, &label)))
                    )
                })?
        }
        Transport::Http { url, headers } => {
            let client = McpClient::connect_http_with(url, headers)
                .await
                .map_err(|error| {
                    anyhow::anyhow!(
                        "{}",
                        redactor
                            .redact(&format!("{}: {error:#}", server_named(&spec.name, &label)))
                    )
                })?;
            (client, None)
        }
    };
    Ok(Running {
        name: spec.name.clone(),
        label,
        client: Some(client),
        pgid,
        redactor,
    })
}

/// How long a server's `setup` command may take.
const SETUP_TIMEOUT: Duration = Duration::from_secs(300);

/// Runs a stdio server's `setup` command (templates filled from `paths`) in `{seed_dir}`
/// with the server's `env` (from `launch`), before the server starts. A program named by a
/// relative path with a `/` (`scripts/load.sh`) is the suite `root`'s; a bare name is looked
/// up on `PATH`.
///
/// Errors: the command cannot start, runs longer than [`SETUP_TIMEOUT`], or exits non-zero
/// (with the end of its stderr); the message starts "failed to run its setup command" or
/// "its setup command".
async fn run_setup(
    setup: &[String],
    root: &Path,
    launch: &Launch,
    paths: &RunPaths,
) -> Result<(), String> {
    let command: Vec<String> = setup.iter().map(|p| fill_templates(p, paths)).collect();
    // As written, so the message reads the same in every run.
    let shown = setup.join(" ");
    let program = Path::new(&command[0]);
    let program = if program.is_relative() && command[0].contains('/') {
        root.join(program)
    } else {
        program.to_path_buf()
    };
    let mut process = tokio::process::Command::new(program);
    process
        .args(&command[1..])
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .current_dir(&paths.seed_dir)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    crate::process::die_with_parent(process.as_std_mut());
    let output = match tokio::time::timeout(SETUP_TIMEOUT, process.output()).await {
        Ok(Ok(output)) => output,
        Ok(Err(error)) => {
            return Err(format!(
                "failed to run its setup command `{shown}`: {error}"
            ));
        }
        Err(_) => {
            return Err(format!(
                "its setup command `{shown}` did not finish within {}",
                humantime::format_duration(SETUP_TIMEOUT)
            ));
        }
    };
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    Err(with_stderr(
        &format!("its setup command `{shown}` failed ({})", output.status),
        &stderr,
    ))
}

/// A run's fresh temporary directory with its copy of the scenario's seed.
struct SeedDir {
    paths: RunPaths,
    _dir: tempfile::TempDir,
}

impl SeedDir {
    /// A new directory; `seed` is copied into it under its own name (a file or directory),
    /// or unpacked into it under its name without the extension (an archive, see
    /// [`crate::suite::unpack`]).
    fn new(seed: Option<&Path>) -> Result<SeedDir> {
        let dir = tempfile::Builder::new()
            .prefix("toolgate-run-")
            .tempdir()
            .context("failed to create the run's seed directory")?;
        let paths = RunPaths::for_seed(dir.path(), seed);
        if let Some(seed) = seed {
            if archive_stem(seed).is_some() && seed.is_file() {
                unpack(seed, &paths.seed)?;
            } else {
                copy_tree(seed, &paths.seed)
                    .with_context(|| format!("failed to copy seed `{}`", seed.display()))?;
            }
        }
        Ok(SeedDir { paths, _dir: dir })
    }
}

/// Copies the seed `from` (a file, or a directory of files and directories) to `to`. Errors on
/// anything else under it (a FIFO, socket or device: copying one could block or never end).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    let kind = std::fs::metadata(from)?;
    if kind.is_dir() {
        std::fs::create_dir_all(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else if kind.is_file() {
        std::fs::copy(from, to).map(|_| ())
    } else {
        Err(std::io::Error::other(format!(
            "`{}` is not a regular file (a FIFO, socket or device)",
            from.display()
        )))
    }
}

#[cfg(test)]
mod tests {
    //! User servers: structured results first, duplicate tools fail, seeds are fresh per run.

    use serde_json::json;

    use super::*;

    #[test]
    fn a_seed_holding_a_fifo_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().expect("tempdir");
        let seed = dir.path().join("seed");
        std::fs::create_dir_all(&seed).expect("mkdir");
        std::fs::write(seed.join("a.txt"), "a").expect("write");
        let made = std::process::Command::new("mkfifo")
            .arg(seed.join("pipe"))
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        let error = copy_tree(&seed, &dir.path().join("copy")).expect_err("a FIFO");
        assert_eq!(
            error.to_string(),
            format!(
                "`{}` is not a regular file (a FIFO, socket or device)",
                seed.join("pipe").display()
            )
        );
    }

    fn reply(is_error: bool, structured: Option<Value>, text: &str) -> ToolReply {
        ToolReply {
            is_error,
            structured,
            text: text.to_string(),
        }
    }

    #[test]
    fn a_result_is_structured_content_else_json_text_else_text() {
        assert_eq!(
            answer(reply(false, Some(json!({"a": 1})), "{\"a\": 2}")),
            ToolAnswer::Success(json!({"a": 1}))
        );
        assert_eq!(
            answer(reply(false, None, "[1, 2]")),
            ToolAnswer::Success(json!([1, 2]))
        );
        assert_eq!(
            answer(reply(false, None, "3 rows")),
            ToolAnswer::Text("3 rows".into())
        );
        assert_eq!(
            answer(reply(true, Some(json!({})), "no such table")),
            ToolAnswer::ToolError("no such table".into())
        );
    }

    #[test]
    fn duplicate_tool_names_across_servers_are_an_error() {
        let tool = json!({"name": "search", "inputSchema": {"type": "object"}});
        let discovery =
            Discovery::from_listing([("a".to_string(), tool.clone()), ("b".to_string(), tool)]);
        assert_eq!(
            discovery.catalog().expect_err("a duplicate").to_string(),
            "tool `search` is listed by both server `a` and server `b`; scenarios could not tell them apart (leave one out with `exclude:`)"
        );
    }

    #[test]
    fn a_seed_directory_is_copied_fresh_for_each_run() {
        let source = tempfile::tempdir().expect("a temporary folder");
        let seed = source.path().join("files");
        std::fs::create_dir_all(seed.join("sub")).expect("creates");
        std::fs::write(seed.join("sub/a.txt"), "one").expect("writes");
        let first = SeedDir::new(Some(&seed)).expect("copies");
        std::fs::write(first.paths.seed.join("sub/a.txt"), "changed").expect("writes");
        let second = SeedDir::new(Some(&seed)).expect("copies");
        assert_ne!(first.paths.seed_dir, second.paths.seed_dir);
        assert_eq!(second.paths.seed, second.paths.seed_dir.join("files"));
        assert_eq!(
            std::fs::read_to_string(second.paths.seed.join("sub/a.txt")).expect("reads"),
            "one"
        );
        assert_eq!(
            std::fs::read_to_string(seed.join("sub/a.txt")).expect("reads"),
            "one"
        );
    }
}
