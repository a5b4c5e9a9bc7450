//! The `servers:` section as written: in `toolgate.yaml`, or the `mcpServers` object of an
//! MCP client config (`.mcp.json`). Unknown fields are errors.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

/// One server entry, in the `mcpServers` shape plus toolgate's own fields.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "a server: an object with `command` (stdio) or `url` (HTTP)"
)]
pub(crate) struct ServerFile {
    /// MCP clients write `stdio`, `http` or `streamable-http`; checked against the fields.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// stdio: the program to start, fresh for every run.
    pub command: Option<String>,
    /// stdio: its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// stdio: environment variables to set.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// stdio: the working directory, relative to the suite root (the default).
    pub cwd: Option<String>,
    /// Streamable HTTP: the server's MCP endpoint.
    pub url: Option<String>,
    /// Streamable HTTP: headers sent with every request (never written to traces).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Glob patterns of the tool names the agent sees (default: all).
    #[serde(default)]
    pub include: Vec<String>,
    /// Glob patterns of tool names hidden from the agent.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Streamable HTTP: how to reset the server's state before each run.
    pub reset: Option<ResetFile>,
    /// stdio: a command run before the server starts, for every run and for discovery.
    pub setup: Option<SetupFile>,
}

/// `setup:` of a stdio server: a program run in `{seed_dir}` after the seed is copied and
/// before the server starts.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SetupFile {
    /// The program and its arguments (`{seed}` and `{seed_dir}` are filled in); it runs with
    /// the server's `env` and must exit 0.
    pub command: Vec<String>,
}

/// `reset:` of an HTTP server: exactly one of `command` or `tool`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResetFile {
    /// A program and its arguments, run before each run.
    pub command: Option<Vec<String>>,
    /// A tool of the server to call before each run.
    pub tool: Option<String>,
    /// The arguments of `tool`.
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

/// `servers: {from: PATH}`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FromFile {
    /// The MCP client config (e.g. `.mcp.json`) whose `mcpServers` to use, relative to the
    /// suite root.
    pub from: String,
}

/// `servers: {replay: DIR}`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[expect(
    dead_code,
    reason = "only its JSON schema is used; the loader reads a JSON value"
)]
pub(crate) struct ReplayFile {
    /// A cassette directory (`toolgate gate --record DIR`), relative to `toolgate.yaml`:
    /// the suite serves its recorded answers and starts no server.
    pub replay: String,
}

/// `servers:` as the published schema describes it: server entries by name, `{from: PATH}`
/// or `{replay: DIR}`.
/// The loader reads the section as a JSON value and checks it itself
/// ([`crate::suite::from_value`]), so only its schema is used.
#[derive(schemars::JsonSchema)]
#[schemars(untagged)]
#[expect(
    dead_code,
    reason = "only its JSON schema is used; the loader reads a JSON value"
)]
pub(crate) enum ServersSchema {
    /// `{from: PATH}`: the `mcpServers` of an MCP client config (`.mcp.json`), relative to
    /// `toolgate.yaml`.
    From(FromFile),
    /// `{replay: DIR}`: recorded cassettes instead of live servers.
    Replay(ReplayFile),
    /// Server entries by name, in the `mcpServers` shape.
    Servers(BTreeMap<String, ServerFile>),
}

/// An MCP client config file. Only `mcpServers` is read; other top-level keys are the
/// client's own and are ignored.
#[derive(Debug, Deserialize)]
#[serde(
    rename_all = "camelCase",
    expecting = "an MCP client config: an object with `mcpServers`"
)]
pub(super) struct McpJson {
    pub mcp_servers: Map<String, Value>,
}
