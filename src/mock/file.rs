//! The mock catalog file exactly as written (YAML or JSON). Unknown fields are errors: a
//! misspelled rule key must fail the load, never leave a tool answering something else.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

/// One mock catalog file.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CatalogFile {
    /// The version of this format: 1.
    #[schemars(extend("const" = 1))]
    pub schema_version: u32,
    /// A `toolgate snapshot` lock or a saved tools/list JSON, relative to this file, whose
    /// tools are served unchanged.
    #[serde(default)]
    pub tools_from: Option<String>,
    /// Inline MCP tool definitions (`name`, `description`, `inputSchema`); one with the name of
    /// an imported tool replaces it.
    #[serde(default)]
    pub tools: Vec<Value>,
    /// State tables by name; a scenario's `seed_state` replaces a table's rows.
    #[serde(default)]
    pub tables: BTreeMap<String, TableFile>,
    /// Ordered rules per tool name; the first rule that applies answers.
    #[serde(default)]
    pub rules: BTreeMap<String, Vec<RuleFile>>,
}

/// One entry of `tables`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TableFile {
    /// The field that identifies a row (default `id`).
    #[serde(default)]
    pub key: Option<String>,
    /// Prefix of generated keys; empty (the default) generates numbers.
    #[serde(default)]
    pub id_prefix: Option<String>,
    /// The first generated number (default 1).
    #[serde(default)]
    pub id_start: Option<u64>,
    /// The table's rows before any scenario seeds it.
    #[serde(default)]
    pub rows: Vec<Map<String, Value>>,
}

/// One rule of a tool: exactly one of `return`, `error`, `rpc_error` and `sequence`, and at
/// most one of `insert`, `update` and `delete`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend(
    "oneOf" = [{"required": ["return"]}, {"required": ["error"]}, {"required": ["rpc_error"]}, {"required": ["sequence"]}],
    "not" = {"anyOf": [{"required": ["insert", "update"]}, {"required": ["insert", "delete"]}, {"required": ["update", "delete"]}]}
))]
pub struct RuleFile {
    /// Free text for readers; ignored.
    #[serde(default)]
    pub note: Option<String>,
    /// Partial match of the arguments (as a scenario's `args_match`); `{"$regex": "..."}`
    /// matches strings; values may be `{{templates}}`. Empty matches every call.
    #[serde(rename = "match", default)]
    pub matches: Map<String, Value>,
    /// Rows of a table to read, for the reply's templates.
    #[serde(default)]
    pub select: Option<SelectFile>,
    /// `true`: the rule applies only when the `select` (or the `update`/`delete` filter) found
    /// rows; `false`: only when it found none.
    #[serde(default)]
    pub if_found: Option<bool>,
    /// A row to add to a table.
    #[serde(default)]
    pub insert: Option<InsertFile>,
    /// Rows to change in a table.
    #[serde(default)]
    pub update: Option<UpdateFile>,
    /// Rows to remove from a table.
    #[serde(default)]
    pub delete: Option<DeleteFile>,
    /// A successful result; strings may use {{args.x}}, {{row}}, {{rows}}, {{count}},
    /// {{state.t}}, {{call}}, {{seq}}.
    #[serde(rename = "return", default)]
    pub returns: Option<Value>,
    /// An `isError` tool result with this text.
    #[serde(default)]
    pub error: Option<Value>,
    /// A JSON-RPC error with this message.
    #[serde(default)]
    pub rpc_error: Option<Value>,
    /// Answers for the 1st, 2nd, ... matching call; the last repeats.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub sequence: Option<Vec<ResponseFile>>,
}

/// One step of a `sequence`: exactly one of `return`, `error` and `rpc_error`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend(
    "oneOf" = [{"required": ["return"]}, {"required": ["error"]}, {"required": ["rpc_error"]}]
))]
pub struct ResponseFile {
    /// A successful result (templates as in a rule's `return`).
    #[serde(rename = "return", default)]
    pub returns: Option<Value>,
    /// An `isError` tool result with this text.
    #[serde(default)]
    pub error: Option<Value>,
    /// A JSON-RPC error with this message.
    #[serde(default)]
    pub rpc_error: Option<Value>,
}

/// A rule's `select`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SelectFile {
    /// The table's name.
    pub table: String,
    /// Partial match of the rows (templates allowed).
    #[serde(rename = "where", default)]
    pub filter: Map<String, Value>,
    /// The most rows to return.
    #[serde(default)]
    pub limit: Option<usize>,
}

/// A rule's `insert`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InsertFile {
    /// The table's name.
    pub table: String,
    /// The new row (templates allowed); a missing key is generated.
    pub row: Map<String, Value>,
}

/// A rule's `update`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateFile {
    /// The table's name.
    pub table: String,
    /// Partial match of the rows to change.
    #[serde(rename = "where")]
    pub filter: Map<String, Value>,
    /// Fields to set on each (templates allowed).
    pub set: Map<String, Value>,
}

/// A rule's `delete`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteFile {
    /// The table's name.
    pub table: String,
    /// Partial match of the rows to remove.
    #[serde(rename = "where")]
    pub filter: Map<String, Value>,
}
