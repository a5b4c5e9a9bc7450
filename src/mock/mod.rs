//! Declarative mock tools: the user's own catalog (names, descriptions and input schemas
//! imported from a `toolgate snapshot` lock or a saved tools/list), answered by ordered rules
//! over optional state tables, with no code. See `docs/mocks.md` for the file format.
//!
//! Two layers, as for every file users write: [`file`](mod@file) mirrors the YAML/JSON
//! exactly, [`load()`] turns it into the validated [`MockCatalog`] (regular expressions
//! compiled, templates parsed, tables and tools resolved). A [`MockBackends`] factory makes a
//! fresh [`MockBackend`] per scenario run; it sits behind the same
//! [`Backend`](crate::harness::Backend) seam as the built-in world, so the harness's
//! argument validation, fault injection, budgets and trace apply unchanged, and the tables
//! are the state that `final_state_assertions` read.
//!
//! A call no rule matches is answered with a tool error naming the tool, and recorded as
//! unmatched ([`ToolAnswer::Unmatched`](crate::harness::ToolAnswer::Unmatched)): scoring fails
//! the run. A mock never invents an empty success.

mod backend;
pub mod file;
pub mod from_cassette;
pub mod init;
pub mod init_servers;
pub mod load;
pub mod pattern;
mod state;
pub mod template;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::catalog::{Catalog, ToolDef};
use crate::harness::ToolSet;

pub use backend::{MockBackend, MockBackends};
pub use load::load;
pub use pattern::Pattern;
pub use template::Template;

/// The mock catalog's `schema_version` this toolgate reads.
pub const SCHEMA_VERSION: u32 = 1;

/// A validated mock catalog.
#[derive(Debug)]
pub struct MockCatalog {
    /// The file it was loaded from.
    pub path: PathBuf,
    /// The served tools (definitions in file order, imported ones first) with validators.
    pub tools: Arc<ToolSet>,
    /// The declared tables, in name order.
    pub tables: Vec<TableSpec>,
    /// The rules of each tool, in file order; a tool without an entry has no rule.
    pub rules: HashMap<String, Vec<Rule>>,
}

impl MockCatalog {
    /// The served tools as a [`Catalog`], for loading and checking scenarios against them.
    pub fn catalog(&self) -> Catalog {
        Catalog::from_tools(
            self.tools
                .definitions()
                .iter()
                .cloned()
                .map(ToolDef::from_definition)
                .collect(),
        )
    }
}

/// One declared state table.
#[derive(Debug, Clone)]
pub struct TableSpec {
    /// The table's name: a top-level key of the state.
    pub name: String,
    /// The field that identifies a row; `insert` fills it when the row lacks it.
    pub key: String,
    /// Prefix of generated keys (`T-` gives `T-1`, `T-2`, ...); empty gives numbers.
    pub id_prefix: String,
    /// The first generated number, at least 1; generation continues after the highest
    /// number already in the table.
    pub id_start: u64,
    /// The rows a run starts with when the scenario's `seed_state` does not name the table.
    pub rows: Vec<Map<String, Value>>,
}

/// One rule of a tool: when it applies and what it answers.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The fields the arguments must match (empty matches every call).
    pub matcher: Vec<(String, Pattern)>,
    /// Rows to read before answering.
    pub select: Option<Select>,
    /// Applies only when the `select` (or the `update`/`delete` filter) found rows (`true`)
    /// or found none (`false`).
    pub if_found: Option<bool>,
    /// The state change, made only when the reply is a `return`.
    pub effect: Option<Effect>,
    /// The answer.
    pub response: Response,
}

/// A rule's `select`: the rows of `table` matching `filter`, at most `limit`.
#[derive(Debug, Clone)]
pub struct Select {
    /// Index into [`MockCatalog::tables`].
    pub table: usize,
    /// Fields each row must match.
    pub filter: Vec<(String, Pattern)>,
    /// The most rows returned; `None` for all.
    pub limit: Option<usize>,
}

/// A rule's state change.
#[derive(Debug, Clone)]
pub enum Effect {
    /// Appends a row, generating its key when absent.
    Insert {
        /// Index into [`MockCatalog::tables`].
        table: usize,
        /// The row, an object template.
        row: Template,
    },
    /// Sets fields of every row matching the filter.
    Update {
        /// Index into [`MockCatalog::tables`].
        table: usize,
        /// Fields each changed row matches.
        filter: Vec<(String, Pattern)>,
        /// The fields to set, an object template.
        set: Template,
    },
    /// Removes every row matching the filter.
    Delete {
        /// Index into [`MockCatalog::tables`].
        table: usize,
        /// Fields each removed row matches.
        filter: Vec<(String, Pattern)>,
    },
}

/// What a rule answers.
#[derive(Debug, Clone)]
pub enum Response {
    /// The same reply every time.
    Always(Reply),
    /// The n-th time the rule applies, the n-th reply; the last one repeats.
    Sequence(Vec<Reply>),
}

/// One reply.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A successful result (any JSON; the agent sees it as structured content).
    Return(Template),
    /// A tool error (`isError: true`) with this text.
    Error(Template),
    /// A JSON-RPC error with this message.
    RpcError(Template),
}
