//! `toolgate init --servers`: draft a suite of the user's real MCP server, not of mocks.
//!
//! The suite's `toolgate.yaml` names the server under `servers:` (its command line or URL as
//! given, `${VAR}` left for the environment), and each tool gets one draft scenario. Values
//! come from the tool's schema ([`super::init::example_arguments`]); a read-only tool
//! (`readOnlyHint: true`) is called once with them while drafting ([`probe_tools`]), and its
//! draft is a happy path (`<tool>-happy`, `succeeds: true`) only when that call succeeded.
//! A rejected call gives a `<tool>-rejected` draft that quotes the server's error, and a tool
//! that may write is never called: its `<tool>-untried` draft says so. Both keep
//! `succeeds: true`, so they fail `verify` until a person has put in values the server takes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Result, bail};
use serde_json::{Map, Value};

use super::init::{Written, example_arguments, safe, smoke_text, write_files, yaml_string};
use crate::harness::client::McpClient;

/// How long one probe call may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// The most characters of a rejected probe's error text a draft quotes.
const ERROR_SHOWN: usize = 400;

/// What the probe call of one tool showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// The server ran the call and answered without an error.
    Accepted,
    /// The server answered with an error: its text (a tool error's text content, a JSON-RPC
    /// error, a timeout or a broken connection).
    Rejected(String),
    /// Not called: the tool is not annotated `readOnlyHint: true`, so it may write.
    NotTried,
}

/// One tool of the server, the arguments its draft sends and what the probe showed.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbedTool {
    /// The MCP tool object as listed.
    pub definition: Value,
    /// The arguments built from its input schema (required properties, enums, defaults,
    /// formats, patterns).
    pub arguments: Map<String, Value>,
    /// What the probe call showed.
    pub probe: Probe,
}

/// How `toolgate.yaml` reaches the server: as written into the suite (secrets as `${VAR}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerEntry {
    /// A stdio server: program, arguments, and its working directory relative to the suite
    /// root (`None`: the suite root itself).
    Command {
        program: String,
        args: Vec<String>,
        cwd: Option<String>,
    },
    /// A streamable HTTP server.
    Http { url: String },
}

/// Calls every read-only tool of `definitions` once on `client` with its schema's example
/// arguments; other tools are [`Probe::NotTried`]. Tools stay in listing order.
pub async fn probe_tools(client: &McpClient, definitions: Vec<Value>) -> Vec<ProbedTool> {
    let mut probed = Vec::with_capacity(definitions.len());
    for definition in definitions {
        let arguments = example_arguments(&definition["inputSchema"]);
        let read_only = definition["annotations"]["readOnlyHint"] == Value::Bool(true);
        let probe = if !read_only {
            Probe::NotTried
        } else {
            let name = definition["name"].as_str().unwrap_or_default();
            match client
                .call_tool(name, arguments.clone(), PROBE_TIMEOUT)
                .await
            {
                Ok(reply) if !reply.is_error => Probe::Accepted,
                Ok(reply) => Probe::Rejected(reply.text),
                Err(failure) => Probe::Rejected(failure.to_string()),
            }
        };
        probed.push(ProbedTool {
            definition,
            arguments,
            probe,
        });
    }
    probed
}

/// Writes the suite of server `name` (reached as `entry`) under `dir`: `toolgate.yaml`, one
/// draft per tool of `tools` under `scenarios/`, and `smoke-set.yaml` (tier 1: the happy
/// drafts). `source` names the server in messages.
///
/// Errors: no tools, a file that already exists (unless `force`), or a write that fails.
pub fn write_server_suite(
    name: &str,
    entry: &ServerEntry,
    tools: &[ProbedTool],
    source: &str,
    dir: &Path,
    force: bool,
) -> Result<Written> {
    if tools.is_empty() {
        bail!("{source} lists no tools");
    }
    let mut files: Vec<(PathBuf, String)> =
        vec![(dir.join("toolgate.yaml"), config_text(name, entry))];
    for tool in tools {
        let tool_name = tool.definition["name"].as_str().unwrap_or_default();
        let (suffix, text) = draft(tool_name, tool);
        let id = format!("{}-{suffix}", safe(tool_name));
        files.push((
            dir.join(format!("scenarios/{id}.yaml")),
            text.replace("{ID}", &id),
        ));
    }
    files.push((dir.join("smoke-set.yaml"), smoke_text()));
    write_files(&files, force)?;
    Ok(Written {
        files: files.into_iter().map(|(path, _)| path).collect(),
        tools: tools.len(),
        drafts: tools.len(),
    })
}

/// The server's name for `servers:`: `serverInfo`'s name (the first word of `version`), made
/// file-name safe, or `server` when there is none.
pub fn server_name(version: Option<&str>) -> String {
    let name = version
        .and_then(|version| version.split_whitespace().next())
        .map(safe)
        .unwrap_or_default();
    if name.is_empty() {
        "server".to_owned()
    } else {
        name
    }
}

/// `to` relative to `from` (both made absolute against the working directory), with `..`
/// where `to` is outside `from`; `None` when they are the same folder.
///
/// Errors: a path that cannot be made absolute.
pub fn relative_path(from: &Path, to: &Path) -> Result<Option<String>> {
    let from = std::path::absolute(from)?;
    let to = std::path::absolute(to)?;
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_owned(); from.len() - common];
    parts.extend(
        to[common..]
            .iter()
            .map(|part| part.as_os_str().to_string_lossy().into_owned()),
    );
    Ok((!parts.is_empty()).then(|| parts.join("/")))
}

fn config_text(name: &str, entry: &ServerEntry) -> String {
    let mut text = String::from(
        "# toolgate's settings for this suite (see docs/own-servers.md): the real server, started\n\
         # fresh for every run. `${VAR}` is read from the environment when the suite loads.\n\
         # Switch `agent` to `openai`, `anthropic` or `command` to measure yours.\n\
         agent: reference\nservers:\n",
    );
    let _ = writeln!(text, "  {}:", yaml_string(name));
    match entry {
        ServerEntry::Command { program, args, cwd } => {
            let args: Vec<String> = args.iter().map(|arg| yaml_string(arg)).collect();
            // A relative program path is resolved from the suite root whatever `cwd` says
            // (a bare name is looked up on PATH), so it is written from the suite root too.
            let program = match cwd {
                Some(cwd) if program.contains('/') && !Path::new(program).is_absolute() => {
                    format!("{cwd}/{}", program.trim_start_matches("./"))
                }
                _ => program.clone(),
            };
            let _ = writeln!(text, "    command: {}", yaml_string(&program));
            let _ = writeln!(text, "    args: [{}]", args.join(", "));
            if let Some(cwd) = cwd {
                let _ = writeln!(
                    text,
                    "    # where `toolgate init` was run, relative to this suite root\n    cwd: {}",
                    yaml_string(cwd)
                );
            }
        }
        ServerEntry::Http { url } => {
            let _ = writeln!(text, "    url: {}", yaml_string(url));
        }
    }
    text
}

/// The draft of one tool: (file suffix, text with `{ID}` for the id).
fn draft(name: &str, tool: &ProbedTool) -> (&'static str, String) {
    let title = tool.definition["title"]
        .as_str()
        .or_else(|| tool.definition["description"].as_str())
        .and_then(|text| text.lines().next())
        .unwrap_or(name);
    let arguments = Value::Object(tool.arguments.clone());
    let (suffix, tier, comment) = match &tool.probe {
        Probe::Accepted => (
            "happy",
            1,
            "The happy path: the server accepted these values (from the tool's schema) in\n\
             # a probe call while drafting."
                .to_owned(),
        ),
        Probe::Rejected(error) => ("rejected", 2, rejected_comment(error)),
        Probe::NotTried => (
            "untried",
            2,
            "A tool that may change the server's state (it is not annotated\n\
             # `readOnlyHint: true`), so it was NOT tried while drafting: the values below come\n\
             # from its schema and the server may reject them. Put in values it accepts."
                .to_owned(),
        ),
    };
    let read_only = tool.definition["annotations"]["readOnlyHint"] == Value::Bool(true);
    let budget = if read_only {
        "max_reads: 3\nmax_writes: 0\n"
    } else {
        "max_reads: 3\nmax_writes: 1\n"
    };
    let mut text = format!(
        "# DRAFT written by `toolgate init --servers`.\n# {comment}\n\
         # Make the prompt a real user request, check what the answer must state, then delete\n\
         # `draft: true`. See docs/writing-scenarios.md.\n\
         draft: true\nid: {{ID}}\ntier: {tier}\ntype: single_call\nprompt: {}\n\
         expected_calls:\n  - tool: {}\n    args_match: {arguments}\n    succeeds: true\n{budget}",
        yaml_string(&format!("Use {name} ({title}) with {arguments}.")),
        yaml_string(name),
    );
    if tool.probe == Probe::Accepted {
        text.push_str(&happy_trajectories(name, &arguments));
    }
    (suffix, text)
}

/// The comment of a draft whose probe call the server rejected, quoting the first
/// [`ERROR_SHOWN`] characters of its error, one `#` line per line.
fn rejected_comment(error: &str) -> String {
    let mut shown: String = error.trim().chars().take(ERROR_SHOWN).collect();
    if error.trim().chars().count() > ERROR_SHOWN {
        shown.push_str(" ...");
    }
    let quoted: Vec<String> = shown.lines().map(|line| format!("#   {line}")).collect();
    format!(
        "The server REJECTED the values below (from the tool's\n\
         # schema) in a probe call while drafting, with:\n{}\n\
         # Put in values the server accepts (prompt and args_match); until then this fails.",
        quoted.join("\n")
    )
}

/// A happy draft's written trajectories: the call then a plain answer (must pass), and an
/// answer without the call (must fail).
fn happy_trajectories(name: &str, arguments: &Value) -> String {
    format!(
        "# Written trajectories: this one must pass, and this one must fail.\n\
         alternatives:\n  - name: \"the call, then a plain answer\"\n    calls:\n      - tool: {}\n        arguments: {arguments}\n    answer: \"Done.\"\n\
         counterexamples:\n  - name: \"answers without calling the tool\"\n    why: \"the task needs the tool, and the agent never called it\"\n    calls: []\n    answer: \"Done.\"\n",
        yaml_string(name)
    )
}

#[cfg(test)]
mod tests {
    //! The drafts `init --servers` writes: what a probe showed decides happy or not.

    use super::*;
    use serde_json::json;

    fn tool(read_only: bool, probe: Probe) -> ProbedTool {
        ProbedTool {
            definition: json!({"name": "get_item", "description": "Reads an item.",
                "annotations": {"readOnlyHint": read_only},
                "inputSchema": {"type": "object", "required": ["id"],
                    "properties": {"id": {"type": "string"}}}}),
            arguments: example_arguments(&json!({"type": "object", "required": ["id"],
                    "properties": {"id": {"type": "string"}}})),
            probe,
        }
    }

    #[test]
    fn only_an_accepted_probe_makes_a_happy_draft() {
        let (suffix, text) = draft("get_item", &tool(true, Probe::Accepted));
        assert_eq!(suffix, "happy");
        assert!(text.contains("    args_match: {\"id\":\"example-id\"}\n    succeeds: true\n"));
        assert!(text.contains("tier: 1\n"));
        assert!(text.contains("alternatives:"));
        let rejected = tool(
            true,
            Probe::Rejected("no item `example-id`\nsee logs".into()),
        );
        let (suffix, text) = draft("get_item", &rejected);
        assert_eq!(suffix, "rejected");
        assert!(
            text.contains("#   no item `example-id`\n#   see logs\n"),
            "{text}"
        );
        assert!(text.contains("succeeds: true\n") && text.contains("tier: 2\n"));
        assert!(!text.contains("alternatives:"));
        let (suffix, text) = draft("get_item", &tool(false, Probe::NotTried));
        assert_eq!(suffix, "untried");
        assert!(text.contains("NOT tried") && text.contains("max_writes: 1\n"));
    }

    #[test]
    fn config_names_the_server_without_absolute_paths() {
        let entry = ServerEntry::Command {
            program: "uv".into(),
            args: vec!["run".into(), "--token".into(), "${TOKEN}".into()],
            cwd: Some("..".into()),
        };
        assert_eq!(
            config_text("sqlite", &entry)
                .split_once("servers:\n")
                .map(|(_, rest)| rest),
            Some(
                "  \"sqlite\":\n    command: \"uv\"\n    args: [\"run\", \"--token\", \"${TOKEN}\"]\n    # where `toolgate init` was run, relative to this suite root\n    cwd: \"..\"\n"
            )
        );
        // A relative program path is written from the suite root, where it is resolved.
        let local = ServerEntry::Command {
            program: "./node/.bin/mcp-server-memory".into(),
            args: Vec::new(),
            cwd: Some("..".into()),
        };
        assert!(
            config_text("memory", &local)
                .contains("    command: \"../node/.bin/mcp-server-memory\"\n"),
            "{}",
            config_text("memory", &local)
        );
        assert_eq!(
            relative_path(Path::new("/a/b/suite"), Path::new("/a/b")).expect("absolute"),
            Some("..".to_owned())
        );
        assert_eq!(
            relative_path(Path::new("/a/b"), Path::new("/a/c/d")).expect("absolute"),
            Some("../c/d".to_owned())
        );
        assert_eq!(
            relative_path(Path::new("/a"), Path::new("/a")).expect("absolute"),
            None
        );
        assert_eq!(server_name(Some("mcp-server-git 1.0")), "mcp-server-git");
        assert_eq!(server_name(None), "server");
    }
}
