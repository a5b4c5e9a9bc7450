//! Catalog readiness: lint the tools of one or more MCP servers, count their context cost, and
//! detect drift against a lock file.
//!
//! Data flows one way: a [`Source`] is loaded into a [`LoadedCatalog`] ([`sources`]), the checks
//! ([`schema`], [`names`], [`descriptions`], [`similarity`], [`tokens`]) turn it into a
//! [`LintReport`] ([`lint()`]), and renderers ([`render`], [`sarif`]) turn the report into text.
//! Drift (a catalog against the [`crate::catalog::lock::Lock`] written by `toolgate snapshot`) is
//! computed in [`crate::catalog::drift`]; this module renders it.
//!
//! Every check is deterministic and pure; only [`sources`] does I/O.

pub mod checks;
pub mod descriptions;
pub mod judge;
pub mod names;
mod o200k;
mod o200k_layout;
pub mod render;
mod run;
pub mod sarif;
pub mod schema;
pub mod similarity;
pub mod sources;
pub mod tokens;

use checks::CheckId;
use std::fmt;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

pub use run::{add_judged, lint, tool_names, tool_refs};
pub use sources::{LoadedCatalog, Source};

/// How serious a finding is. Ordered: `Info < Warning < Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Worth knowing; no client is known to break on it.
    Info,
    /// Some clients or models handle it badly.
    Warning,
    /// A provider or client rejects it, or the schema is broken.
    Error,
}

impl Severity {
    /// The lowercase name used in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A provider's limits on tool names, property keys and tool counts, checked by [`names`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Profile {
    /// The MCP specification (SEP-986): names SHOULD be 1-64 characters of `[A-Za-z0-9_.-/]`.
    /// Breaking a SHOULD is a warning.
    Mcp,
    /// The OpenAI API: names `^[a-zA-Z0-9_-]{1,64}$`, at most 128 tools per request.
    Openai,
    /// OpenAI structured outputs (`strict: true`): the `openai` limits, and every array
    /// needs `items` and every object `properties`.
    OpenaiStrict,
    /// The Anthropic API: names `^[a-zA-Z0-9_-]{1,128}$`, property keys `^[a-zA-Z0-9_.-]{1,64}$`.
    Anthropic,
    /// The Gemini API (function declarations): names of `[a-zA-Z0-9_.:-]`, at most 64
    /// characters; `enum` values must be strings, so a numeric enum is a warning here only.
    Gemini,
}

impl Profile {
    /// The name used on the command line and in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Mcp => "mcp",
            Profile::Openai => "openai",
            Profile::OpenaiStrict => "openai-strict",
            Profile::Anthropic => "anthropic",
            Profile::Gemini => "gemini",
        }
    }
}

/// Where a finding comes from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingSource {
    /// A deterministic check of this crate.
    #[default]
    Heuristic,
    /// The optional description judge (an LLM, `toolgate lint --judge-model`); see [`judge`].
    Judge,
}

impl FindingSource {
    /// Whether it is the deterministic default (left out of the JSON report).
    pub fn is_heuristic(&self) -> bool {
        *self == FindingSource::Heuristic
    }
}

/// One problem found in a catalog.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Which check found it (its id is stable, `snake_case`; see `docs/lint.md`).
    pub check: CheckId,
    /// How serious it is.
    pub severity: Severity,
    /// The server the tool came from; `None` for catalog-wide findings.
    pub server: Option<String>,
    /// The tool's name; `None` for server- or catalog-wide findings.
    pub tool: Option<String>,
    /// JSON Pointer (RFC 6901) into the tool's definition, e.g.
    /// `/inputSchema/properties/ids`; empty for the whole tool or catalog.
    pub pointer: String,
    /// The provider profile whose limit is broken, for profile-specific findings.
    pub profile: Option<Profile>,
    /// Who found it; written to JSON only for judge findings (`"source": "judge"`).
    #[serde(skip_serializing_if = "FindingSource::is_heuristic")]
    pub source: FindingSource,
    /// What is wrong, one sentence.
    pub message: String,
    /// How to fix it, one sentence.
    pub hint: String,
}

impl Finding {
    /// A finding about `tool`, at `pointer` into its definition.
    pub fn tool(
        check: CheckId,
        severity: Severity,
        tool: &ToolRef<'_>,
        pointer: impl Into<String>,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Self {
            check,
            severity,
            server: Some(tool.server.to_owned()),
            tool: Some(tool.name.to_owned()),
            pointer: pointer.into(),
            profile: None,
            source: FindingSource::Heuristic,
            message: message.into(),
            hint: hint.into(),
        }
    }

    /// A finding about the whole catalog (or a server, when `server` is set).
    pub fn catalog(
        check: CheckId,
        severity: Severity,
        server: Option<&str>,
        message: impl Into<String>,
        hint: impl Into<String>,
    ) -> Self {
        Self {
            check,
            severity,
            server: server.map(str::to_owned),
            tool: None,
            pointer: String::new(),
            profile: None,
            source: FindingSource::Heuristic,
            message: message.into(),
            hint: hint.into(),
        }
    }

    /// The same finding, tied to `profile`.
    pub fn with_profile(mut self, profile: Profile) -> Self {
        self.profile = Some(profile);
        self
    }
}

/// One tool definition and the server it came from, as the checks see it.
#[derive(Debug, Clone, Copy)]
pub struct ToolRef<'a> {
    /// The server's name (a key of `mcpServers`, a command, a URL or a file name).
    pub server: &'a str,
    /// The tool's `name`, or `<tool N>` when it has none.
    pub name: &'a str,
    /// The MCP tool object as the server sent it.
    pub definition: &'a Value,
}

/// What the checks look for and the limits they hold a catalog to.
#[derive(Debug, Clone)]
pub struct LintOptions {
    /// Provider profiles to check names and schema shapes against; no duplicates.
    /// Default: MCP, OpenAI and Anthropic.
    pub profiles: Vec<Profile>,
    /// Most tokens (o200k) the whole catalog may cost; more is a warning. Default 10,000.
    pub token_budget: usize,
    /// Most tokens (o200k) one tool may cost; more is an info. Default 1,000.
    pub tool_token_budget: usize,
    /// Cosine similarity (TF-IDF of names and descriptions), in 0.0..=1.0, at or above which
    /// two tools are reported as look-alikes. Default 0.5 (distinct tools of the built-in
    /// catalog stay below 0.35).
    pub similarity_threshold: f64,
}

impl Default for LintOptions {
    fn default() -> Self {
        Self {
            profiles: vec![Profile::Mcp, Profile::Openai, Profile::Anthropic],
            token_budget: 10_000,
            tool_token_budget: 1_000,
            similarity_threshold: 0.5,
        }
    }
}

/// The outcome of linting one catalog.
#[derive(Debug, Clone, Serialize)]
pub struct LintReport {
    /// Version of this JSON shape; bumped on incompatible changes.
    pub schema_version: u32,
    /// Servers linted, in source order.
    pub servers: Vec<String>,
    /// Tools linted, across all servers (every page of tools/list).
    pub tool_count: usize,
    /// Findings, sorted by severity (errors first), then server, tool and pointer.
    pub findings: Vec<Finding>,
    /// Context cost of the catalog.
    pub tokens: tokens::TokenCount,
    /// Why the description judge could not score some tools (`--judge-model`); the
    /// deterministic findings are complete whatever it says. Empty without a judge.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub judge_warnings: Vec<String>,
    /// The file the catalog was read from (a saved tools/list or an `mcpServers` config),
    /// used as the location of SARIF results; `None` for live servers and the built-in catalog.
    #[serde(skip)]
    pub origin: Option<PathBuf>,
}

impl LintReport {
    /// The current [`LintReport::schema_version`].
    pub const SCHEMA_VERSION: u32 = 1;

    /// The most serious severity among the findings; `None` when there are none.
    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|finding| finding.severity).max()
    }

    /// How many findings have `severity`.
    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|finding| finding.severity == severity)
            .count()
    }
}
