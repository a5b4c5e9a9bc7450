//! The lock file of a catalog, as `toolgate snapshot` writes it (`schema_version` 1): every
//! tool of every server as listed, read back by `drift`, by offline validation and by pins.

use std::path::Path;

use anyhow::bail;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::listing::SourcedTool;

/// A catalog as `toolgate snapshot` writes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// Version of this file's shape ([`Lock::SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// Every tool, in catalog order.
    pub tools: Vec<LockedTool>,
}

/// One tool of a lock file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedTool {
    /// The server that listed it.
    pub server: String,
    /// The tool's name (also inside `definition`).
    pub name: String,
    /// The MCP tool object as listed.
    pub definition: Value,
}

impl Lock {
    /// The lock file version this build writes and reads.
    pub const SCHEMA_VERSION: u32 = 1;

    /// The lock of a catalog's `tools`. Tools without a string `name` are left out.
    pub fn from_tools(tools: &[SourcedTool]) -> Self {
        Self {
            schema_version: Self::SCHEMA_VERSION,
            tools: tools
                .iter()
                .filter_map(|tool| {
                    let name = tool.definition.get("name")?.as_str()?;
                    Some(LockedTool {
                        server: tool.server.clone(),
                        name: name.to_owned(),
                        definition: tool.definition.clone(),
                    })
                })
                .collect(),
        }
    }

    /// Reads a lock file. Errors name the file and the field, and reject other versions.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = crate::fs::read_text(path, "lock file", crate::defaults::MAX_DATA_FILE_BYTES)?;
        let deserializer = &mut serde_json::Deserializer::from_str(&text);
        let lock: Lock = serde_path_to_error::deserialize(deserializer).map_err(|error| {
            anyhow::anyhow!(
                "failed to parse lock file `{}` at `{}`: {}",
                path.display(),
                error.path(),
                error.inner()
            )
        })?;
        if lock.schema_version != Self::SCHEMA_VERSION {
            bail!(
                "lock file `{}` has schema_version {}; this toolgate reads {} (run `toolgate snapshot` again)",
                path.display(),
                lock.schema_version,
                Self::SCHEMA_VERSION
            );
        }
        Ok(lock)
    }

    /// The lock file's text: pretty JSON with a trailing newline.
    pub fn render(&self) -> String {
        crate::json::pretty(self)
    }
}
