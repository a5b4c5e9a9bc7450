//! The `servers:` section as written: in `toolgate.yaml`, or the `mcpServers` object of an
//! MCP client config (`.mcp.json`). Unknown fields are errors.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

/// One server entry, in the `mcpServers` shape plus toolgate's own fields.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ServerFile {
    /// MCP clients write `stdio`, `http` or `streamable-http`; checked against the fields.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    pub cwd: Option<String>,
    pub url: Option<String>,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    pub reset: Option<ResetFile>,
}

/// `reset:` of an HTTP server: exactly one of `command` or `tool`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ResetFile {
    pub command: Option<Vec<String>>,
    pub tool: Option<String>,
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

/// `servers: {from: PATH}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FromFile {
    pub from: String,
}

/// An MCP client config file. Only `mcpServers` is read; other top-level keys are the
/// client's own and are ignored.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct McpJson {
    pub mcp_servers: Map<String, Value>,
}
