//! Cassettes: the MCP traffic of one scenario run with the user's own servers, recorded to a
//! file and served again without the servers (hermetic CI).
//!
//! A cassette is JSON Lines, one file per run, `DIR/<scenario id>.r<repeat>.jsonl`:
//! - line 1, the [`Header`]: format version, scenario, repetition, and per server its
//!   `serverInfo`, the protocol version `initialize` agreed and the tools it listed (after
//!   `include`/`exclude`) with their SHA-256;
//! - every further line, one [`Interaction`]: a `tools/call` the harness handed to a server
//!   (the agent's calls and toolgate's final-state probes, in arrival order), its answer and
//!   its latency.
//!
//! Injected faults, blocked calls and calls the input schema refused never reach a server, so
//! they are not in the cassette; replay injects and refuses them again in front of it.
//! Secrets (the servers' `env` and header values, `cassettes.redact_env` variables,
//! `cassettes.redact_patterns`) are replaced by `[redacted]` before a line is written;
//! headers are never stored. See docs/cassettes.md.

mod record;
mod replay;
mod seed_dir;
pub mod verify;

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ToolAnswer;

pub use record::{RecordingBackends, Scrubber};
pub use replay::{ReplayBackend, ReplayBackends};

/// The cassette format this toolgate writes and reads.
pub const CASSETTE_VERSION: u32 = 1;

/// The longest interaction line a cassette may hold, in bytes: 16 MiB, the longest line the
/// MCP client takes from a live stdio server (rmcp's `DEFAULT_MAX_LINE_LENGTH`). A replay
/// answers nothing a live server could not have.
pub const MAX_INTERACTION_BYTES: usize = 16 * 1024 * 1024;

/// The file of run `repeat` (0-based) of scenario `scenario` in a cassette directory.
pub fn file_name(scenario: &str, repeat: u32) -> String {
    format!("{scenario}.r{repeat}.jsonl")
}

/// The first line of a cassette.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// [`CASSETTE_VERSION`] when written; a newer version is refused.
    pub cassette_version: u32,
    /// The scenario id of the run.
    pub scenario: String,
    /// The 0-based repetition.
    pub repeat: u32,
    /// The toolgate version that recorded it.
    pub toolgate: String,
    /// Every server of the suite, in `servers:` order.
    pub servers: Vec<ServerEntry>,
}

/// One server as the recording saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerEntry {
    /// The server's name under `servers:`.
    pub name: String,
    /// `serverInfo` as `name version`, when the server sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<String>,
    /// The protocol version `initialize` agreed (e.g. `2025-11-25`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// SHA-256 (hex) of `tools` as compact JSON: the same hash as the results' server pins.
    pub tools_sha256: String,
    /// The tools the suite uses, as the server listed them (`tools/list`), in its order.
    pub tools: Vec<Value>,
}

impl ServerEntry {
    /// The entry of server `name` listing `tools`.
    pub fn new(
        name: &str,
        server_info: Option<String>,
        protocol_version: Option<String>,
        tools: Vec<Value>,
    ) -> ServerEntry {
        let json = serde_json::to_string(&tools).expect("tool definitions are JSON");
        ServerEntry {
            name: name.to_owned(),
            server_info,
            protocol_version,
            tools_sha256: crate::fs::sha256_hex(json.as_bytes()),
            tools,
        }
    }
}

/// One `tools/call` and its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interaction {
    /// 1-based position among the run's interactions.
    pub seq: u64,
    /// The server that answered.
    pub server: String,
    /// The tool called.
    pub tool: String,
    /// The arguments as sent (after the harness decoded double-encoded values), redacted.
    pub arguments: Map<String, Value>,
    /// The answer, redacted.
    pub answer: RecordedAnswer,
    /// Round-trip time of the call to the server, in microseconds.
    pub latency_us: u64,
}

/// A server's answer as a cassette stores it: externally tagged, e.g.
/// `{"result": {...}}` or `{"tool_error": "not found"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum RecordedAnswer {
    /// A structured (JSON) result.
    Result(Value),
    /// A plain-text result that is not JSON.
    Text(String),
    /// A result with `isError: true`; its text.
    ToolError(String),
    /// A JSON-RPC error (or a transport failure) instead of a result; its message.
    ProtocolError(String),
}

impl RecordedAnswer {
    /// The answer to store for `answer`. A mock's unmatched call cannot come from a server;
    /// it is kept as the tool error the agent saw.
    pub fn from_answer(answer: &ToolAnswer) -> RecordedAnswer {
        match answer {
            ToolAnswer::Success(value) => RecordedAnswer::Result(value.clone()),
            ToolAnswer::Text(text) => RecordedAnswer::Text(text.clone()),
            ToolAnswer::ToolError(text)
            | ToolAnswer::Unmatched(text)
            | ToolAnswer::NotRecorded(text) => RecordedAnswer::ToolError(text.clone()),
            ToolAnswer::ProtocolError(text) => RecordedAnswer::ProtocolError(text.clone()),
        }
    }

    /// The answer the harness serves for this recording.
    pub fn to_answer(&self) -> ToolAnswer {
        match self {
            RecordedAnswer::Result(value) => ToolAnswer::Success(value.clone()),
            RecordedAnswer::Text(text) => ToolAnswer::Text(text.clone()),
            RecordedAnswer::ToolError(text) => ToolAnswer::ToolError(text.clone()),
            RecordedAnswer::ProtocolError(text) => ToolAnswer::ProtocolError(text.clone()),
        }
    }

    /// The answer as one JSON value, for comparing two answers: `{"kind": ..., "value": ...}`.
    pub fn as_value(&self) -> Value {
        serde_json::to_value(self).expect("an answer is JSON")
    }
}

/// One cassette file, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Cassette {
    /// Where it was read from.
    pub path: PathBuf,
    /// Its first line.
    pub header: Header,
    /// Its interactions, in file order; `line` is each one's 1-based line number.
    pub interactions: Vec<(usize, Interaction)>,
}

impl Cassette {
    /// Reads the cassette at `path`.
    ///
    /// Errors name the file and line: unreadable or too large (see
    /// `crate::defaults::MAX_RUN_FILE_BYTES`), an empty file, a line that is not the JSON
    /// of a header or interaction (with the field), a `cassette_version` of 0 or newer than
    /// [`CASSETTE_VERSION`], an interaction over [`MAX_INTERACTION_BYTES`], or an
    /// interaction naming a server or tool the header does not list.
    pub fn load(path: &Path) -> Result<Cassette> {
        let text = crate::fs::read_text(path, "cassette", crate::defaults::MAX_RUN_FILE_BYTES)?;
        Cassette::parse(&text, path)
    }

    /// Reads cassette text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Cassette> {
        let at = |line: usize| format!("`{}` line {line}", path.display());
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(index, line)| (index + 1, line))
            .filter(|(_, line)| !line.trim().is_empty());
        let Some((number, first)) = lines.next() else {
            bail!("`{}`: an empty cassette (no header line)", path.display());
        };
        let header: Header = parse_line(first).with_context(|| at(number))?;
        if header.cassette_version > CASSETTE_VERSION {
            bail!(
                "{}: `cassette_version` {} is newer than this toolgate reads ({CASSETTE_VERSION})",
                at(number),
                header.cassette_version
            );
        }
        if header.cassette_version == 0 {
            bail!(
                "{}: `cassette_version` 0 is no version toolgate writes (the first is 1)",
                at(number)
            );
        }
        let mut interactions = Vec::new();
        for (number, line) in lines {
            if line.len() > MAX_INTERACTION_BYTES {
                bail!(
                    "{}: an interaction of {} MiB; a live server's answer is at most {} MiB",
                    at(number),
                    line.len() / (1024 * 1024),
                    MAX_INTERACTION_BYTES / (1024 * 1024)
                );
            }
            let interaction: Interaction = parse_line(line).with_context(|| at(number))?;
            let Some(server) = header
                .servers
                .iter()
                .find(|server| server.name == interaction.server)
            else {
                bail!(
                    "{}: server `{}` is not in the header",
                    at(number),
                    interaction.server
                );
            };
            if !server
                .tools
                .iter()
                .any(|tool| tool["name"] == interaction.tool.as_str())
            {
                bail!(
                    "{}: server `{}` lists no tool `{}`",
                    at(number),
                    interaction.server,
                    interaction.tool
                );
            }
            interactions.push((number, interaction));
        }
        Ok(Cassette {
            path: path.to_path_buf(),
            header,
            interactions,
        })
    }
}

/// Every cassette in `dir` (files ending in `.jsonl`), sorted by file name.
///
/// Errors: an unreadable directory, a bad cassette (see [`Cassette::load`]), or none at all.
pub fn load_dir(dir: &Path) -> Result<Vec<Cassette>> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("failed to read cassette directory `{}`", dir.display()))?;
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry
            .with_context(|| format!("failed to read cassette directory `{}`", dir.display()))?
            .path();
        if path.extension().is_some_and(|ext| ext == "jsonl") {
            paths.push(path);
        }
    }
    paths.sort();
    if paths.is_empty() {
        bail!(
            "no cassettes (`*.jsonl`) in `{}`; record some with `toolgate gate --record {}`",
            dir.display(),
            dir.display()
        );
    }
    paths.iter().map(|path| Cassette::load(path)).collect()
}

/// A line as `T`, with the field path of a mismatch.
fn parse_line<T: serde::de::DeserializeOwned>(line: &str) -> Result<T> {
    let deserializer = &mut serde_json::Deserializer::from_str(line);
    serde_path_to_error::deserialize(deserializer).map_err(|error| {
        let field = error.path().to_string();
        let inner = error.into_inner();
        if field == "." {
            anyhow::anyhow!("{inner}")
        } else {
            anyhow::anyhow!("{field}: {inner}")
        }
    })
}

#[cfg(test)]
mod tests;
