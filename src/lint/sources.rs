//! Where a catalog comes from: the built-in catalog, a stdio server command, a streamable HTTP
//! URL, an `mcpServers` config naming several servers, or a saved tools/list JSON file.
//!
//! Live servers are listed through [`McpClient::list_tool_pages`], which follows every page.
//! A server that cannot be reached becomes an error finding; the other servers are still linted.

use super::checks::CheckId;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde::Deserialize;
use serde_json::Value;

use super::{Finding, Severity};
use crate::catalog::Catalog;
use crate::harness::client::{McpClient, PageEnd, ToolListing, page_end};

/// The server name given to the built-in catalog.
pub const BUILTIN_SERVER: &str = "toolgate";

/// Where to read a catalog from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// The built-in catalog the harness serves.
    Builtin,
    /// A stdio MCP server started as `program args...`.
    Command { program: String, args: Vec<String> },
    /// A streamable HTTP MCP server.
    Http { url: String },
    /// An `mcpServers` JSON config (the format MCP clients use); `only` keeps the named servers
    /// (all when empty).
    Config { path: PathBuf, only: Vec<String> },
    /// A saved tools/list: `{"tools": [...]}`, a JSON-RPC response `{"result": {"tools": [...]}}`,
    /// a bare array of tools, or `{"servers": {"NAME": {"tools": [...]}}}` for several servers.
    File { path: PathBuf },
}

/// One tool as a server listed it.
#[derive(Debug, Clone, PartialEq)]
pub struct SourcedTool {
    /// The server's name: a key of `mcpServers` or of `servers`, the command line, the URL, or
    /// [`BUILTIN_SERVER`].
    pub server: String,
    /// The MCP tool object, unmodified.
    pub definition: Value,
}

/// A catalog ready for the checks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadedCatalog {
    /// Servers in source order (each once, even if it listed no tools).
    pub servers: Vec<String>,
    /// Every tool of every server, in server order then listing order.
    pub tools: Vec<SourcedTool>,
    /// Problems met while loading: unreachable servers (errors), paging trouble (warnings).
    pub findings: Vec<Finding>,
    /// The file read, when the source is a file.
    pub origin: Option<PathBuf>,
}

impl LoadedCatalog {
    /// A catalog of one server's tools.
    pub fn from_tools(server: &str, tools: Vec<Value>) -> Self {
        let mut catalog = Self::default();
        catalog.add(server, tools);
        catalog
    }

    /// A catalog of several servers' tools, `(server, tools)` in order.
    pub fn from_servers(servers: Vec<(String, Vec<Value>)>) -> Self {
        let mut catalog = Self::default();
        for (server, tools) in servers {
            catalog.add(&server, tools);
        }
        catalog
    }

    fn add(&mut self, server: &str, tools: Vec<Value>) {
        self.servers.push(server.to_owned());
        self.tools
            .extend(tools.into_iter().map(|definition| SourcedTool {
                server: server.to_owned(),
                definition,
            }));
    }

    fn add_listing(&mut self, server: &str, listing: ToolListing) {
        for warning in listing.warnings {
            self.findings.push(Finding::catalog(
                CheckId::PaginationStopped,
                Severity::Warning,
                Some(server),
                warning,
                "end the last page by leaving `nextCursor` out, and return a new cursor on every other page",
            ));
        }
        self.add(server, listing.tools);
    }

    fn add_unreachable(&mut self, server: &str, error: &anyhow::Error) {
        self.servers.push(server.to_owned());
        self.findings.push(Finding::catalog(
            CheckId::ServerUnreachable,
            Severity::Error,
            Some(server),
            format!("{error:#}"),
            "check the server's command or URL; its tools were not linted",
        ));
    }
}

/// Reads the catalog from `source`. Live servers are contacted in order, one at a time.
///
/// Errors: a file that cannot be read or parsed (naming the file and the field), a single
/// server that cannot be reached. In an `mcpServers` config an unreachable server is a
/// `server_unreachable` finding instead, so one broken server does not hide the others.
pub async fn load(source: &Source) -> anyhow::Result<LoadedCatalog> {
    match source {
        Source::Builtin => Ok(LoadedCatalog::from_tools(
            BUILTIN_SERVER,
            Catalog::builtin().definitions().to_vec(),
        )),
        Source::Command { program, args } => {
            let entry = ServerEntry::command(program, args);
            let mut catalog = LoadedCatalog::default();
            catalog.add_listing(&entry.label(), list_server(&entry, None).await?);
            Ok(catalog)
        }
        Source::Http { url } => {
            let entry = ServerEntry::url(url);
            let mut catalog = LoadedCatalog::default();
            catalog.add_listing(url, list_server(&entry, None).await?);
            Ok(catalog)
        }
        Source::Config { path, only } => load_config(path, only).await,
        Source::File { path } => load_file(path),
    }
}

/// An `mcpServers` config file. Only the fields toolgate needs are read; other fields that
/// MCP clients keep there (`disabled`, `timeout`, `type`, ...) are ignored rather than
/// rejected, so an existing client config works as it is.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConfigFile {
    mcp_servers: BTreeMap<String, ServerEntry>,
}

/// One server of an `mcpServers` config: either `command` (with `args`, `env`, `cwd`) or `url`.
#[derive(Debug, Deserialize)]
struct ServerEntry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
}

impl ServerEntry {
    fn command(program: &str, args: &[String]) -> Self {
        Self {
            command: Some(program.to_owned()),
            args: args.to_vec(),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
        }
    }

    fn url(url: &str) -> Self {
        Self {
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            url: Some(url.to_owned()),
        }
    }

    /// The command line or URL, for messages.
    fn label(&self) -> String {
        match (&self.command, &self.url) {
            (Some(program), _) => std::iter::once(program.as_str())
                .chain(self.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            (None, Some(url)) => url.clone(),
            (None, None) => String::new(),
        }
    }
}

/// Connects to one server, lists every page of its tools and closes the session.
/// `base` resolves a relative `cwd` (the config file's folder).
async fn list_server(entry: &ServerEntry, base: Option<&Path>) -> anyhow::Result<ToolListing> {
    let client = match (&entry.command, &entry.url) {
        (Some(program), None) => {
            let env: Vec<(String, String)> = entry
                .env
                .iter()
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            let cwd = entry.cwd.as_ref().map(|cwd| match base {
                Some(base) => base.join(cwd),
                None => cwd.clone(),
            });
            McpClient::connect_command_with(program, &entry.args, &env, cwd.as_deref()).await?
        }
        (None, Some(url)) => McpClient::connect_http(url).await?,
        (Some(_), Some(_)) => bail!("has both `command` and `url`; keep one"),
        (None, None) => bail!("has neither `command` nor `url`"),
    };
    let listing = client.list_tool_pages().await;
    let closed = client.close().await;
    let listing = listing?;
    closed?;
    Ok(listing)
}

async fn load_config(path: &Path, only: &[String]) -> anyhow::Result<LoadedCatalog> {
    let text = crate::fs::read_text(path, "MCP config", crate::defaults::MAX_SMALL_FILE_BYTES)?;
    let config: ConfigFile = parse_json(&text)
        .with_context(|| format!("failed to parse MCP config `{}`", path.display()))?;
    for name in only {
        if !config.mcp_servers.contains_key(name) {
            let known: Vec<&str> = config.mcp_servers.keys().map(String::as_str).collect();
            bail!(
                "MCP config `{}` has no server `{name}` (it has: {})",
                path.display(),
                known.join(", ")
            );
        }
    }
    let base = path.parent();
    let mut catalog = LoadedCatalog {
        origin: Some(path.to_owned()),
        ..LoadedCatalog::default()
    };
    for (name, entry) in &config.mcp_servers {
        if !only.is_empty() && !only.contains(name) {
            continue;
        }
        match list_server(entry, base).await {
            Ok(listing) => catalog.add_listing(name, listing),
            Err(error) => {
                let error = error.context(format!("server `{name}` ({})", entry.label()));
                catalog.add_unreachable(name, &error);
            }
        }
    }
    Ok(catalog)
}

/// A saved tools/list, in any of the shapes [`Source::File`] names.
fn load_file(path: &Path) -> anyhow::Result<LoadedCatalog> {
    let text = crate::fs::read_text(path, "tools file", crate::defaults::MAX_DATA_FILE_BYTES)?;
    let value: Value = parse_json(&text)
        .with_context(|| format!("failed to parse tools file `{}`", path.display()))?;
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let mut catalog = parse_saved(&name, value)
        .with_context(|| format!("failed to read tools file `{}`", path.display()))?;
    catalog.origin = Some(path.to_owned());
    Ok(catalog)
}

/// Reads a saved tools/list value; `name` names the server for single-server shapes.
///
/// A listing's `nextCursor` is read as a live walk reads it ([`page_end`]): `null`, `""` or a
/// non-string is a `pagination_stopped` warning, and so is a real cursor, since a saved page
/// that has one is missing the tools of the pages after it.
pub fn parse_saved(name: &str, value: Value) -> anyhow::Result<LoadedCatalog> {
    fn listing_at(value: &Value, field: &str) -> anyhow::Result<ToolListing> {
        let tools = match value.get("tools") {
            Some(Value::Array(tools)) => tools.clone(),
            Some(_) => bail!("`{field}tools` is not an array"),
            None => bail!("no `{field}tools` array"),
        };
        let warnings = match page_end(1, value) {
            PageEnd::Last => Vec::new(),
            PageEnd::Malformed(warning) => vec![warning],
            PageEnd::Next(cursor) => vec![format!(
                "the saved tools/list has `\"nextCursor\": {}`: it holds one page, and the tools of the pages after it are missing",
                Value::String(cursor)
            )],
        };
        Ok(ToolListing { tools, warnings })
    }
    let mut catalog = LoadedCatalog::default();
    match value {
        Value::Array(tools) => catalog.add(name, tools),
        Value::Object(ref object) if object.contains_key("servers") => {
            let Some(servers) = object.get("servers").and_then(Value::as_object) else {
                bail!("`servers` is not an object of server names");
            };
            for (server, listing) in servers {
                catalog.add_listing(server, listing_at(listing, &format!("servers.{server}."))?);
            }
        }
        Value::Object(ref object) if object.contains_key("result") => {
            catalog.add_listing(name, listing_at(&value["result"], "result.")?);
        }
        Value::Object(_) => catalog.add_listing(name, listing_at(&value, "")?),
        _ => bail!("expected a tools/list result, an array of tools or `servers`"),
    }
    Ok(catalog)
}

/// Parses JSON, naming the field path and line/column of the first error.
fn parse_json<T: serde::de::DeserializeOwned>(text: &str) -> anyhow::Result<T> {
    // Valid text takes the plain parser; only a failure is parsed again, slower, to name the
    // field (tracking the path costs a twentieth of a 1,000-tool lint).
    if let Ok(value) = serde_json::from_str(text) {
        return Ok(value);
    }
    let deserializer = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(deserializer).map_err(|error| {
        // An unknown last segment shows as `.?`; the line and column locate it.
        let path = error.path().to_string();
        let path = path.trim_end_matches(".?").to_owned();
        let inner = error.into_inner();
        if path == "." || path.is_empty() {
            anyhow::anyhow!("{inner}")
        } else {
            anyhow::anyhow!("at `{path}`: {inner}")
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_every_saved_shape() {
        let tool = json!({"name": "a", "inputSchema": {"type": "object"}});
        for value in [
            json!([tool]),
            json!({"tools": [tool]}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}}),
        ] {
            let catalog = parse_saved("saved.json", value).expect("a known shape");
            assert_eq!(catalog.servers, ["saved.json"]);
            assert_eq!(catalog.tools[0].definition, tool);
        }
        let catalog = parse_saved(
            "x",
            json!({"servers": {"srvA": {"tools": [tool]}, "srvB": {"tools": [tool, tool]}}}),
        )
        .expect("several servers");
        assert_eq!(catalog.servers, ["srvA", "srvB"]);
        let servers: Vec<&str> = catalog.tools.iter().map(|t| t.server.as_str()).collect();
        assert_eq!(servers, ["srvA", "srvB", "srvB"]);
    }

    #[test]
    fn names_the_field_of_a_bad_saved_shape() {
        let error = parse_saved("x", json!({"servers": {"srvA": {"tools": 3}}}))
            .expect_err("tools must be an array");
        assert_eq!(error.to_string(), "`servers.srvA.tools` is not an array");
        let error = parse_saved("x", json!({"result": {}})).expect_err("no tools");
        assert_eq!(error.to_string(), "no `result.tools` array");
    }

    /// B18: a saved page whose `nextCursor` is `null` (or any non-cursor) ends paging with the
    /// same warning a live walk gives; a real cursor warns that later pages are missing.
    #[test]
    fn warns_about_the_next_cursor_of_a_saved_page_b18() {
        let tool = json!({"name": "a", "inputSchema": {"type": "object"}});
        let warnings = |value: Value| -> Vec<(String, Option<String>)> {
            parse_saved("saved.json", value)
                .expect("a known shape")
                .findings
                .into_iter()
                .map(|f| {
                    assert_eq!(
                        (f.check.as_str(), f.severity),
                        ("pagination_stopped", Severity::Warning)
                    );
                    (f.message, f.server)
                })
                .collect()
        };
        let null = "tools/list page 1 has `\"nextCursor\": null`; treated as the last page (leave the field out instead)";
        assert_eq!(
            warnings(json!({"tools": [tool], "nextCursor": null})),
            [(null.to_owned(), Some("saved.json".to_owned()))]
        );
        assert_eq!(
            warnings(
                json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [tool], "nextCursor": null}})
            ),
            [(null.to_owned(), Some("saved.json".to_owned()))]
        );
        assert_eq!(
            warnings(
                json!({"servers": {"srvA": {"tools": [tool], "nextCursor": null}, "srvB": {"tools": [tool]}}})
            ),
            [(null.to_owned(), Some("srvA".to_owned()))]
        );
        assert_eq!(
            warnings(json!({"tools": [tool], "nextCursor": 7})),
            [(
                "tools/list page 1 has `\"nextCursor\": 7`; treated as the last page (leave the field out instead)".to_owned(),
                Some("saved.json".to_owned())
            )]
        );
        assert_eq!(
            warnings(json!({"tools": [tool], "nextCursor": "eyJvZmZzZXQiOjUwfQ=="})),
            [(
                "the saved tools/list has `\"nextCursor\": \"eyJvZmZzZXQiOjUwfQ==\"`: it holds one page, and the tools of the pages after it are missing".to_owned(),
                Some("saved.json".to_owned())
            )]
        );
        assert_eq!(warnings(json!({"tools": [tool]})), []);
        assert_eq!(
            parse_saved("x", json!({"tools": [tool], "nextCursor": null}))
                .expect("loads")
                .tools
                .len(),
            1
        );
    }

    #[tokio::test]
    async fn names_the_file_and_field_of_a_bad_config() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("mcp.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {"a": {"command": "x", "args": "y"}}}"#,
        )
        .expect("writes");
        let error = load(&Source::Config {
            path: path.clone(),
            only: vec![],
        })
        .await
        .expect_err("args must be a list");
        assert_eq!(
            format!("{error:#}"),
            format!(
                "failed to parse MCP config `{}`: at `mcpServers.a.args`: invalid type: string \"y\", expected a sequence at line 1 column 49",
                path.display()
            )
        );
    }

    #[tokio::test]
    async fn reports_an_unreachable_server_and_keeps_the_others() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("mcp.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {"broken": {"command": "/nonexistent/server"}, "neither": {}}}"#,
        )
        .expect("writes");
        let catalog = load(&Source::Config { path, only: vec![] })
            .await
            .expect("a broken server is a finding");
        assert_eq!(catalog.servers, ["broken", "neither"]);
        let checks: Vec<(&str, Option<&str>)> = catalog
            .findings
            .iter()
            .map(|f| (f.check.as_str(), f.server.as_deref()))
            .collect();
        assert_eq!(
            checks,
            [
                ("server_unreachable", Some("broken")),
                ("server_unreachable", Some("neither"))
            ]
        );
        assert_eq!(
            catalog.findings[1].message,
            "server `neither` (): has neither `command` nor `url`"
        );
    }

    /// B18: the linter sees all 101 tools of a three-page listing.
    #[tokio::test]
    async fn lints_every_page_of_a_paginated_server_b18() {
        use crate::harness::client::scripted::{self, numbered_tools};
        let (client, _) = scripted::connect(Box::new(|_, params| {
            Ok(match params["cursor"].as_str() {
                None => json!({"tools": numbered_tools(1, 50), "nextCursor": "p2"}),
                Some("p2") => json!({"tools": numbered_tools(51, 50), "nextCursor": "p3"}),
                Some(_) => json!({"tools": numbered_tools(101, 1)}),
            })
        }))
        .await;
        let mut catalog = LoadedCatalog::default();
        catalog.add_listing("paged", client.list_tool_pages().await.expect("lists"));
        let report = crate::lint::lint(&catalog, &crate::lint::LintOptions::default());
        assert_eq!(report.tool_count, 101);
    }
}
