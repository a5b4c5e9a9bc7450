//! Checking the `servers:` section and turning it into [`ServerSpec`]s.

use std::path::Path;

use anyhow::{Result, bail};
use globset::{Glob, GlobSetBuilder};
use serde_json::Value;

use super::file::{FromFile, McpJson, ResetFile, ServerFile};
use super::{Reset, ServerSpec, ToolFilter, Transport};

/// Reads the `servers:` value of the config file at `config_path`: a map of server names to
/// entries, or `{from: PATH}` naming an `mcpServers` file (relative to the config file's
/// folder). `env` reads an environment variable for `${VAR}`.
///
/// Errors name the file and the field path (`servers.memory.comand: unknown field ...`): an
/// unknown field, a server with both or neither of `command` and `url`, stdio-only fields on
/// an HTTP server or the reverse, a bad glob, an unset `${VAR}`, or no server at all.
pub(crate) fn from_value(
    value: &Value,
    config_path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ServerSpec>> {
    let at = |field: &str| format!("`{}`: {field}", config_path.display());
    let Value::Object(object) = value else {
        bail!(
            "{}: must map server names to servers, or be `{{from: .mcp.json}}`",
            at("servers")
        );
    };
    if object.contains_key("replay") {
        bail!(
            "{}: `{{replay: DIR}}` serves recorded cassettes; this command needs live servers (give them by name, or `{{from: .mcp.json}}`)",
            at("servers")
        );
    }
    if object.contains_key("from") {
        let from: FromFile = typed(value)
            .map_err(|error| anyhow::anyhow!("{}{error}", at("servers").trim_end_matches(':')))?;
        let base = config_path.parent().unwrap_or(Path::new("."));
        return load_mcp_json(&base.join(&from.from), env);
    }
    servers(object, config_path, "servers", env)
}

/// Reads the `mcpServers` of an MCP client config file (`.mcp.json`). Errors as
/// [`from_value`], naming this file and `mcpServers.NAME.field`.
pub(crate) fn load_mcp_json(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ServerSpec>> {
    read_mcp_json(path, env, Fields::Strict)?
        .into_iter()
        .map(|(_, spec)| spec)
        .collect()
}

/// How the fields of a server entry are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fields {
    /// An unknown field is an error (a misspelled field must not be ignored): the suite's own
    /// servers.
    Strict,
    /// Fields toolgate does not know are skipped, as MCP clients keep their own there
    /// (`timeout`, `autoApprove`, ...), and a server marked `"disabled": true` is left out, as
    /// the client leaves it out: a client config read as it is, for `lint`.
    Client,
}

/// Each server of the `mcpServers` of the MCP client config file at `path`, in file order:
/// its name, and its spec or why the entry is not a server (naming the file and
/// `mcpServers.NAME.field`), so one broken entry need not hide the others.
///
/// Errors: the file cannot be read, is not JSON, has no `mcpServers` object, or names no
/// server; each naming the file (and the field and line for JSON errors).
pub(crate) fn read_mcp_json(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
    fields: Fields,
) -> Result<Vec<(String, Result<ServerSpec>)>> {
    let text = crate::fs::read_text(path, "MCP config", crate::defaults::MAX_SMALL_FILE_BYTES)?;
    let deserializer = &mut serde_json::Deserializer::from_str(&text);
    let config: McpJson = serde_path_to_error::deserialize(deserializer).map_err(|error| {
        // `?` marks a place the JSON ended before naming (a truncated file), `.` the whole
        // document: neither is a field to show.
        let path_text = error.path().to_string();
        let field = path_text.trim_end_matches('?').trim_end_matches('.');
        match field {
            "" => anyhow::anyhow!("`{}`: {}", path.display(), error.into_inner()),
            field => anyhow::anyhow!("`{}`: {field}: {}", path.display(), error.into_inner()),
        }
    })?;
    if config.mcp_servers.is_empty() {
        bail!("`{}`: mcpServers: names no server", path.display());
    }
    let disabled = |entry: &Value| fields == Fields::Client && entry["disabled"] == true;
    Ok(config
        .mcp_servers
        .iter()
        .filter(|(_, entry)| !disabled(entry))
        .map(|(name, entry)| {
            let spec = server_entry(name, entry, path, "mcpServers", env, fields);
            (name.clone(), spec)
        })
        .collect())
}

fn servers(
    object: &serde_json::Map<String, Value>,
    path: &Path,
    section: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ServerSpec>> {
    if object.is_empty() {
        bail!("`{}`: {section}: names no server", path.display());
    }
    object
        .iter()
        .map(|(name, entry)| server_entry(name, entry, path, section, env, Fields::Strict))
        .collect()
}

/// The server `name` of `section` in the file at `path`, from its entry.
fn server_entry(
    name: &str,
    entry: &Value,
    path: &Path,
    section: &str,
    env: &dyn Fn(&str) -> Option<String>,
    fields: Fields,
) -> Result<ServerSpec> {
    let field = format!("{section}.{name}");
    let at = |sub: &str| format!("`{}`: {field}{sub}", path.display());
    let known;
    let entry = match (fields, entry) {
        (Fields::Client, Value::Object(object)) => {
            known = Value::Object(
                object
                    .iter()
                    .filter(|(key, _)| SERVER_FIELDS.contains(&key.as_str()))
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect(),
            );
            &known
        }
        _ => entry,
    };
    let raw: ServerFile = typed(entry).map_err(|error| anyhow::anyhow!("{}{error}", at("")))?;
    server(name, raw, &at, env)
}

/// The fields of a server entry that toolgate reads ([`ServerFile`]).
const SERVER_FIELDS: [&str; 11] = [
    "type", "command", "args", "env", "cwd", "url", "headers", "include", "exclude", "reset",
    "setup",
];

/// Deserializes `value` into `T`; the error starts with `.field.path: ` when it has one, else
/// `: `.
fn typed<T: serde::de::DeserializeOwned>(value: &Value) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|error| {
        let field = error.path().to_string();
        let inner = error.into_inner();
        if field == "." {
            format!(": {inner}")
        } else {
            format!(".{field}: {inner}")
        }
    })
}

fn server(
    name: &str,
    raw: ServerFile,
    at: &dyn Fn(&str) -> String,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ServerSpec> {
    let expand = |text: &str, sub: &str| {
        expand_vars(text, env).map_err(|e| anyhow::anyhow!("{}: {e}", at(sub)))
    };
    let transport = match (raw.command, raw.url) {
        (Some(_), Some(_)) => bail!("{}: has both `command` and `url`; keep one", at("")),
        (None, None) => bail!(
            "{}: needs `command` (a stdio server) or `url` (a streamable HTTP server)",
            at("")
        ),
        (Some(command), None) => {
            if let Some(kind) = raw.kind.as_deref().filter(|kind| *kind != "stdio") {
                bail!(
                    "{}: `{kind}` does not go with `command` (use `stdio`)",
                    at(".type")
                );
            }
            if !raw.headers.is_empty() {
                bail!("{}: is for HTTP servers (`url`)", at(".headers"));
            }
            if raw.reset.is_some() {
                bail!(
                    "{}: a stdio server is a fresh process for every run and needs no reset",
                    at(".reset")
                );
            }
            if command.trim().is_empty() {
                bail!("{}: must not be empty", at(".command"));
            }
            let mut args = Vec::new();
            for (i, arg) in raw.args.iter().enumerate() {
                args.push(expand(arg, &format!(".args[{i}]"))?);
            }
            let mut vars = Vec::new();
            for (key, value) in &raw.env {
                vars.push((key.clone(), expand(value, &format!(".env.{key}"))?));
            }
            Transport::Stdio {
                command: expand(&command, ".command")?,
                args,
                env: vars,
                cwd: raw.cwd.map(|cwd| expand(&cwd, ".cwd")).transpose()?,
            }
        }
        (None, Some(url)) => {
            if let Some(kind) = raw
                .kind
                .as_deref()
                .filter(|kind| !matches!(*kind, "http" | "streamable-http" | "streamableHttp"))
            {
                bail!(
                    "{}: `{kind}` does not go with `url` (use `http`)",
                    at(".type")
                );
            }
            for (field, present) in [
                (".args", !raw.args.is_empty()),
                (".env", !raw.env.is_empty()),
                (".cwd", raw.cwd.is_some()),
                (".setup", raw.setup.is_some()),
            ] {
                if present {
                    bail!("{}: is for stdio servers (`command`)", at(field));
                }
            }
            let mut headers = Vec::new();
            for (key, value) in &raw.headers {
                headers.push((key.clone(), expand(value, &format!(".headers.{key}"))?));
            }
            Transport::Http {
                url: expand(&url, ".url")?,
                headers,
            }
        }
    };
    let filter = ToolFilter {
        include: glob_set(&raw.include, &|i| at(&format!(".include[{i}]")))?,
        exclude: glob_set(&raw.exclude, &|i| at(&format!(".exclude[{i}]")))?,
    };
    let reset = raw.reset.map(|reset| parse_reset(reset, at)).transpose()?;
    let setup = match raw.setup {
        Some(setup) if setup.command.first().is_none_or(|p| p.trim().is_empty()) => {
            bail!("{}: must name a program", at(".setup.command"))
        }
        Some(setup) => {
            let mut command = Vec::new();
            for (i, part) in setup.command.iter().enumerate() {
                command.push(expand(part, &format!(".setup.command[{i}]"))?);
            }
            Some(command)
        }
        None => None,
    };
    Ok(ServerSpec {
        name: name.to_string(),
        transport,
        filter,
        reset,
        setup,
    })
}

fn parse_reset(reset: ResetFile, at: &dyn Fn(&str) -> String) -> Result<Reset> {
    match (reset.command, reset.tool) {
        (Some(command), None) => {
            if command.is_empty() || command[0].trim().is_empty() {
                bail!("{}: must name a program", at(".reset.command"));
            }
            if !reset.arguments.is_empty() {
                bail!("{}: is for `tool` resets", at(".reset.arguments"));
            }
            Ok(Reset::Command(command))
        }
        (None, Some(name)) => Ok(Reset::Tool {
            name,
            arguments: reset.arguments,
        }),
        _ => bail!(
            "{}: needs exactly one of `command` (a program and its arguments) or `tool`",
            at(".reset")
        ),
    }
}

fn glob_set(patterns: &[String], at: &dyn Fn(usize) -> String) -> Result<Option<globset::GlobSet>> {
    if patterns.is_empty() {
        return Ok(None);
    }
    let mut builder = GlobSetBuilder::new();
    for (i, pattern) in patterns.iter().enumerate() {
        let glob = Glob::new(pattern)
            .map_err(|error| anyhow::anyhow!("{}: `{pattern}` is not a glob: {error}", at(i)))?;
        builder.add(glob);
    }
    Ok(Some(
        builder
            .build()
            .map_err(|error| anyhow::anyhow!("{}: {error}", at(0)))?,
    ))
}

/// `text` with every `${VAR}` replaced by the variable's value; `$$` is a literal `$`.
///
/// Errors: an unset variable, or a `${` without its `}`.
pub(crate) fn expand_vars(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('$') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        if let Some(stripped) = after.strip_prefix('$') {
            out.push('$');
            rest = stripped;
        } else if let Some(inner) = after.strip_prefix('{') {
            let Some(end) = inner.find('}') else {
                return Err(format!("`${{` without a closing `}}` in `{text}`"));
            };
            let name = &inner[..end];
            match env(name) {
                Some(value) => out.push_str(&value),
                None => return Err(format!("environment variable `{name}` is not set")),
            }
            rest = &inner[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}
