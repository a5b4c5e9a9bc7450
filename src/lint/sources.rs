//! Where a catalog comes from: the built-in catalog, a stdio server command, a streamable HTTP
//! URL, an `mcpServers` config naming several servers, or a saved tools/list JSON file.
//!
//! Live servers are listed as a suite's discovery lists them
//! ([`crate::harness::servers::list_server`]), following every page.
//! A server that cannot be reached becomes an error finding; the other servers are still linted.

use super::checks::CheckId;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use serde_json::Value;

use super::{Finding, Severity};
use crate::catalog::Catalog;
use crate::catalog::listing::ToolListing;
use crate::harness::servers::list_server;
use crate::suite::{Fields, ServerSpec, ToolFilter, Transport};

pub use crate::catalog::listing::SourcedTool;

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

/// Reads the catalog from `source`. Live servers are contacted in order, one at a time,
/// the way a suite's discovery reaches them ([`crate::harness::servers::list_server`]).
///
/// Errors: a file that cannot be read or parsed (naming the file and the field), a single
/// server that cannot be reached. In an `mcpServers` config an unreachable server, or an
/// entry that is not a server, is a `server_unreachable` finding instead, so one broken
/// server does not hide the others.
pub async fn load(source: &Source) -> anyhow::Result<LoadedCatalog> {
    let here = Path::new(".");
    match source {
        Source::Builtin => Ok(LoadedCatalog::from_tools(
            BUILTIN_SERVER,
            Catalog::builtin().definitions().to_vec(),
        )),
        Source::Command { program, args } => {
            let spec = one_server(Transport::Stdio {
                command: program.clone(),
                args: args.clone(),
                env: Vec::new(),
                cwd: None,
            });
            let mut catalog = LoadedCatalog::default();
            let listed = list_server(&spec, here).await?;
            let cwd = std::env::current_dir().unwrap_or_default();
            let name = spec.secrets().redact(&command_name(program, args, &cwd));
            catalog.add_listing(&name, listed.listing);
            Ok(catalog)
        }
        Source::Http { url } => {
            let spec = one_server(Transport::Http {
                url: url.clone(),
                headers: Vec::new(),
            });
            let mut catalog = LoadedCatalog::default();
            catalog.add_listing(url, list_server(&spec, here).await?.listing);
            Ok(catalog)
        }
        Source::Config { path, only } => load_config(path, only).await,
        Source::File { path } => load_file(path),
    }
}

/// How lint names a server started from a command line (in messages, the JSON report and
/// SARIF, which get committed): the command line with each absolute path made relative to
/// `cwd` when it lies under it, and cut to its file name otherwise, so no home or temporary
/// folder is written. A `NAME=/path` word keeps its name.
fn command_name(program: &str, args: &[String], cwd: &Path) -> String {
    let shown = |word: &str| -> String {
        let (prefix, path) = match word.split_once('=') {
            Some((name, value)) if Path::new(value).is_absolute() => (format!("{name}="), value),
            _ => (String::new(), word),
        };
        let path = Path::new(path);
        if !path.is_absolute() {
            return word.to_owned();
        }
        let relative = match path.strip_prefix(cwd) {
            Ok(inside) if !inside.as_os_str().is_empty() => inside.display().to_string(),
            Ok(_) => ".".to_owned(),
            Err(_) => path.file_name().map_or_else(
                || "/".to_owned(),
                |name| name.to_string_lossy().into_owned(),
            ),
        };
        format!("{prefix}{relative}")
    };
    std::iter::once(program)
        .chain(args.iter().map(String::as_str))
        .map(shown)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A server named on the command line, named by its command line or URL: all its tools, no
/// reset.
fn one_server(transport: Transport) -> ServerSpec {
    let mut spec = ServerSpec {
        name: String::new(),
        transport,
        filter: ToolFilter::default(),
        reset: None,
        setup: None,
    };
    spec.name = spec.label();
    spec
}

/// The servers of an `mcpServers` config, read as the suite reads one
/// ([`crate::suite::read_mcp_json`]) but as an MCP client would: fields toolgate does not
/// know are skipped, and a `${VAR}` that is not set stays as written. A relative `cwd`
/// resolves against the config file's folder.
async fn load_config(path: &Path, only: &[String]) -> anyhow::Result<LoadedCatalog> {
    let keep_unset = |name: &str| {
        std::env::var(name)
            .ok()
            .or_else(|| Some(format!("${{{name}}}")))
    };
    let entries = crate::suite::read_mcp_json(path, &keep_unset, Fields::Client)?;
    for name in only {
        if !entries.iter().any(|(known, _)| known == name) {
            let known: Vec<&str> = entries.iter().map(|(name, _)| name.as_str()).collect();
            bail!(
                "MCP config `{}` has no server `{name}` (it has: {})",
                path.display(),
                known.join(", ")
            );
        }
    }
    let base = path.parent().unwrap_or(Path::new("."));
    let mut catalog = LoadedCatalog {
        origin: Some(path.to_owned()),
        ..LoadedCatalog::default()
    };
    for (name, spec) in entries {
        if !only.is_empty() && !only.contains(&name) {
            continue;
        }
        let listed = match spec {
            Ok(spec) => list_server(&spec, base).await,
            Err(error) => Err(error),
        };
        match listed {
            Ok(listed) => catalog.add_listing(&name, listed.listing),
            Err(error) => catalog.add_unreachable(&name, &error),
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

/// Reads a saved tools/list value ([`crate::catalog::listing::parse_saved`]) into a catalog
/// ready for the checks; paging trouble becomes `pagination_stopped` warnings.
pub fn parse_saved(name: &str, value: Value) -> anyhow::Result<LoadedCatalog> {
    let mut catalog = LoadedCatalog::default();
    for (server, listing) in crate::catalog::listing::parse_saved(name, value)? {
        catalog.add_listing(&server, listing);
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
    //! Catalog sources: saved shapes, configs, paginated and unreachable servers, bad fields named.

    use serde_json::json;

    use super::*;

    /// Issue #35: a server's command line names it without absolute folders.
    #[test]
    fn a_command_line_server_is_named_without_absolute_paths() {
        let cwd = Path::new("/home/me/project");
        let args = [
            "/home/me/project/servers/db.py".to_owned(),
            "--db=/tmp/tmp.x1/seed.db".to_owned(),
            "--verbose".to_owned(),
            "/home/me/project".to_owned(),
        ];
        assert_eq!(
            command_name("/home/me/.venv/bin/python", &args, cwd),
            "python servers/db.py --db=seed.db --verbose ."
        );
        assert_eq!(command_name("npx", &["-y".to_owned()], cwd), "npx -y");
    }

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

    /// A broken file is an error naming it; a broken entry is a finding for that server
    /// alone, naming the file and the field, as the suite's reader names them.
    #[tokio::test]
    async fn names_the_file_and_field_of_a_bad_config() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("mcp.json");
        std::fs::write(&path, r#"{"mcpServers": []}"#).expect("writes");
        let error = load(&Source::Config {
            path: path.clone(),
            only: vec![],
        })
        .await
        .expect_err("mcpServers must be an object");
        assert_eq!(
            format!("{error:#}"),
            format!(
                "`{}`: mcpServers: invalid type: sequence, expected a map at line 1 column 15",
                path.display()
            )
        );
        std::fs::write(
            &path,
            r#"{"mcpServers": {"a": {"command": "x", "args": "y"}}}"#,
        )
        .expect("writes");
        let catalog = load(&Source::Config {
            path: path.clone(),
            only: vec![],
        })
        .await
        .expect("a bad entry is a finding");
        assert_eq!(catalog.servers, ["a"]);
        // Shapes that are not a config or not a server say what was expected, in the
        // product's words, and a truncated file names no made-up field.
        for (text, expected) in [
            (
                "[]",
                "invalid length 0, expected an MCP client config: an object with `mcpServers` at line 1 column 2",
            ),
            (
                "{\"mcpServers\": {",
                "mcpServers: EOF while parsing an object at line 1 column 16",
            ),
        ] {
            std::fs::write(&path, text).expect("writes");
            let error = load(&Source::Config {
                path: path.clone(),
                only: vec![],
            })
            .await
            .expect_err("not a config");
            assert_eq!(
                format!("{error:#}"),
                format!("`{}`: {expected}", path.display())
            );
        }
        std::fs::write(&path, r#"{"mcpServers": {"d": "notanobject"}}"#).expect("writes");
        let not_a_server = load(&Source::Config {
            path: path.clone(),
            only: vec![],
        })
        .await
        .expect("a bad entry is a finding");
        assert!(
            not_a_server.findings[0].message.ends_with(
                "mcpServers.d: invalid type: string \"notanobject\", expected a server: an object with `command` (stdio) or `url` (HTTP)"
            ),
            "{}",
            not_a_server.findings[0].message
        );
        assert_eq!(
            catalog.findings[0].message,
            format!(
                "`{}`: mcpServers.a.args: invalid type: string \"y\", expected a sequence",
                path.display()
            )
        );
    }

    /// An MCP client's own fields are skipped, an unset `${VAR}` stays as written (the server
    /// is still started and linted), and a disabled server is left out as the client leaves it.
    #[tokio::test]
    async fn a_client_config_is_read_as_a_client_reads_it() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("mcp.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {"c": {"command": "/nonexistent/${TOOLGATE_TEST_UNSET_VAR}", "disabled": false, "timeout": 60, "autoApprove": []}, "off": {"command": "/nonexistent/off", "disabled": true}}}"#,
        )
        .expect("writes");
        let catalog = load(&Source::Config { path, only: vec![] })
            .await
            .expect("client fields are skipped");
        assert_eq!(catalog.servers, ["c"]);
        assert_eq!(catalog.findings.len(), 1);
        assert_eq!(catalog.findings[0].check.as_str(), "server_unreachable");
        assert!(
            catalog.findings[0]
                .message
                .contains("/nonexistent/${TOOLGATE_TEST_UNSET_VAR}"),
            "{}",
            catalog.findings[0].message
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
        assert!(
            catalog.findings[1]
                .message
                .ends_with("mcp.json`: mcpServers.neither: needs `command` (a stdio server) or `url` (a streamable HTTP server)"),
            "{}",
            catalog.findings[1].message
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
