//! The mock catalog file exactly as written (YAML or JSON). Unknown fields are errors: a
//! misspelled rule key must fail the load, never leave a tool answering something else.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

/// One mock catalog file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogFile {
    pub schema_version: u32,
    #[serde(default)]
    pub tools_from: Option<String>,
    #[serde(default)]
    pub tools: Vec<Value>,
    #[serde(default)]
    pub tables: BTreeMap<String, TableFile>,
    #[serde(default)]
    pub rules: BTreeMap<String, Vec<RuleFile>>,
}

/// One entry of `tables`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableFile {
    #[serde(default)]
    pub key: Option<String>,
    #[serde(default)]
    pub id_prefix: Option<String>,
    #[serde(default)]
    pub id_start: Option<u64>,
    #[serde(default)]
    pub rows: Vec<Map<String, Value>>,
}

/// One rule of a tool.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    #[serde(default)]
    pub note: Option<String>,
    #[serde(rename = "match", default)]
    pub matches: Map<String, Value>,
    #[serde(default)]
    pub select: Option<SelectFile>,
    #[serde(default)]
    pub if_found: Option<bool>,
    #[serde(default)]
    pub insert: Option<InsertFile>,
    #[serde(default)]
    pub update: Option<UpdateFile>,
    #[serde(default)]
    pub delete: Option<DeleteFile>,
    #[serde(rename = "return", default)]
    pub returns: Option<Value>,
    #[serde(default)]
    pub error: Option<Value>,
    #[serde(default)]
    pub rpc_error: Option<Value>,
    #[serde(default)]
    pub sequence: Option<Vec<ResponseFile>>,
}

/// One step of a `sequence`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResponseFile {
    #[serde(rename = "return", default)]
    pub returns: Option<Value>,
    #[serde(default)]
    pub error: Option<Value>,
    #[serde(default)]
    pub rpc_error: Option<Value>,
}

/// A rule's `select`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SelectFile {
    pub table: String,
    #[serde(rename = "where", default)]
    pub filter: Map<String, Value>,
    #[serde(default)]
    pub limit: Option<usize>,
}

/// A rule's `insert`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InsertFile {
    pub table: String,
    pub row: Map<String, Value>,
}

/// A rule's `update`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateFile {
    pub table: String,
    #[serde(rename = "where")]
    pub filter: Map<String, Value>,
    pub set: Map<String, Value>,
}

/// A rule's `delete`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteFile {
    pub table: String,
    #[serde(rename = "where")]
    pub filter: Map<String, Value>,
}
