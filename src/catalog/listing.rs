//! A catalog as servers list it: each server's tools/list walk ([`ToolListing`], read page by
//! page with [`page_end`]), the tools tagged with their server ([`SourcedTool`]), and saved
//! tools/list files ([`parse_saved`]). Live servers and saved files are read alike, so both
//! warn alike.

use anyhow::bail;
use serde_json::Value;

/// Every tool a server lists, as it sent them, and what went wrong while paging.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolListing {
    /// The tool objects of every page, in server order, unmodified (fields rmcp does not model
    /// are kept, and a tool missing `inputSchema` does not drop the page).
    pub tools: Vec<Value>,
    /// Why the walk stopped early or what looked wrong, one sentence each (e.g. a cursor that
    /// does not advance, or `"nextCursor": null`).
    pub warnings: Vec<String>,
}

/// What a tools/list page's `nextCursor` says about the walk.
#[derive(Debug, Clone, PartialEq)]
pub enum PageEnd {
    /// No `nextCursor`: the last page.
    Last,
    /// A cursor to send back, unchanged, for the next page.
    Next(String),
    /// `null`, `""` or a non-string: not a cursor (the MCP schema makes `nextCursor` an optional
    /// string). Treated as the last page, with this warning.
    Malformed(String),
}

/// Reads the `nextCursor` of `result`, page number `page` (1-based) of a tools/list walk, as the
/// server wrote it. Shared by live servers and saved tools/list files, so both warn alike.
pub fn page_end(page: usize, result: &Value) -> PageEnd {
    match result.get("nextCursor") {
        None => PageEnd::Last,
        Some(Value::String(next)) if !next.is_empty() => PageEnd::Next(next.clone()),
        Some(other) => PageEnd::Malformed(format!(
            "tools/list page {page} has `\"nextCursor\": {other}`; treated as the last page (leave the field out instead)"
        )),
    }
}

/// One tool as a server listed it.
#[derive(Debug, Clone, PartialEq)]
pub struct SourcedTool {
    /// The server's name: a key of `mcpServers` or of `servers`, the command line, the URL, or
    /// `toolgate` (the built-in catalog).
    pub server: String,
    /// The MCP tool object, unmodified.
    pub definition: Value,
}

/// Reads a saved tools/list value: `{"tools": [...]}`, a JSON-RPC response
/// `{"result": {"tools": [...]}}`, a bare array of tools, or
/// `{"servers": {"NAME": {"tools": [...]}}}`; each server's name and listing in order, `name`
/// naming the server of the single-server shapes.
///
/// A listing's `nextCursor` is read as a live walk reads it ([`page_end`]): `null`, `""` or a
/// non-string is a `pagination_stopped` warning, and so is a real cursor, since a saved page
/// that has one is missing the tools of the pages after it.
pub fn parse_saved(name: &str, value: Value) -> anyhow::Result<Vec<(String, ToolListing)>> {
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
    let mut servers = Vec::new();
    match value {
        Value::Array(tools) => servers.push((
            name.to_owned(),
            ToolListing {
                tools,
                warnings: Vec::new(),
            },
        )),
        Value::Object(ref object) if object.contains_key("servers") => {
            let Some(saved) = object.get("servers").and_then(Value::as_object) else {
                bail!("`servers` is not an object of server names");
            };
            for (server, listing) in saved {
                servers.push((
                    server.clone(),
                    listing_at(listing, &format!("servers.{server}."))?,
                ));
            }
        }
        Value::Object(ref object) if object.contains_key("result") => {
            servers.push((name.to_owned(), listing_at(&value["result"], "result.")?));
        }
        Value::Object(_) => servers.push((name.to_owned(), listing_at(&value, "")?)),
        _ => bail!("expected a tools/list result, an array of tools or `servers`"),
    }
    Ok(servers)
}
