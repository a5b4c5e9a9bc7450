//! The command line. The doc comments here are the `--help` text.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::agent::AgentKind;
use crate::lint::Profile;

/// Measure how well an LLM agent uses tools over MCP, and gate pull requests on it.
#[derive(Debug, Parser)]
#[command(name = "toolgate", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the smoke set, compare with the baseline, print the verdict (exit 0 pass, 1 fail,
    /// 2 error, 3 no verdict).
    Gate(GateArgs),
    /// Load and validate every scenario and the smoke set, run nothing.
    Validate(SuiteArgs),
    /// Serve the harness's tools over MCP on stdin/stdout, backed by a fixture.
    Serve(ServeArgs),
    /// Lint a catalog: schemas, names, descriptions, look-alike tools and context cost
    /// (exit 0 clean, 1 a finding at or above --fail-on, 2 error).
    Lint(LintArgs),
    /// Write a lock file of a catalog, to compare with later (`toolgate drift`).
    Snapshot(SnapshotArgs),
    /// Compare a catalog with its lock file (exit 0 no drift, 1 breaking, 4 descriptions
    /// changed, 5 only non-breaking changes, 2 error).
    Drift(DriftArgs),
}

/// Where the catalog comes from; without any of these, the built-in catalog.
#[derive(Debug, Args)]
pub struct CatalogArgs {
    /// A streamable HTTP MCP server, e.g. `http://127.0.0.1:3001/mcp`.
    #[arg(long, value_name = "URL", group = "source")]
    pub url: Option<String>,
    /// An `mcpServers` JSON config (as MCP clients use); every server in it is listed.
    #[arg(long, value_name = "FILE", group = "source")]
    pub config: Option<PathBuf>,
    /// Only this server of `--config` (repeatable).
    #[arg(long = "server", value_name = "NAME", requires = "config")]
    pub servers: Vec<String>,
    /// A saved tools/list: `{"tools": [...]}`, a JSON-RPC response, an array of tools, or
    /// `{"servers": {"NAME": {"tools": [...]}}}`.
    #[arg(long, value_name = "FILE", group = "source")]
    pub tools_json: Option<PathBuf>,
    /// A stdio MCP server command, after `--`
    /// (e.g. `-- npx -y @modelcontextprotocol/server-memory`).
    #[arg(last = true, value_name = "COMMAND", conflicts_with = "source")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct LintArgs {
    #[command(flatten)]
    pub catalog: CatalogArgs,
    /// Provider profiles whose name and schema limits apply (comma-separated or repeated).
    #[arg(long = "profile", value_enum, value_delimiter = ',', default_values = ["mcp", "openai", "anthropic"])]
    pub profiles: Vec<Profile>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = LintFormat::Table)]
    pub format: LintFormat,
    /// Write the report to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Exit 1 when a finding is at least this severe.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
    /// Most tokens (o200k) the whole catalog may cost before a warning.
    #[arg(long, default_value_t = 10_000)]
    pub token_budget: usize,
    /// Most tokens (o200k) one tool may cost before an info.
    #[arg(long, default_value_t = 1_000)]
    pub tool_token_budget: usize,
    /// TF-IDF cosine similarity (0.0-1.0) at which two tools count as look-alikes.
    #[arg(long, default_value_t = 0.5, value_parser = parse_fraction)]
    pub similarity: f64,
}

/// How `toolgate lint` writes its report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LintFormat {
    /// A table for terminals and CI logs.
    Table,
    /// The report as JSON.
    Json,
    /// SARIF 2.1.0, for GitHub code scanning.
    Sarif,
}

/// The least severe finding that fails `toolgate lint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    Error,
    Warning,
    Info,
    /// Never fail on findings (exit 0 unless the lint itself fails).
    Never,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    #[command(flatten)]
    pub catalog: CatalogArgs,
    /// The lock file to write.
    #[arg(long, value_name = "FILE", default_value = "toolgate.lock.json")]
    pub lock: PathBuf,
}

#[derive(Debug, Args)]
pub struct DriftArgs {
    #[command(flatten)]
    pub catalog: CatalogArgs,
    /// The lock file written by `toolgate snapshot`.
    #[arg(long, value_name = "FILE", default_value = "toolgate.lock.json")]
    pub lock: PathBuf,
    /// Output format (`sarif` is not available for drift).
    #[arg(long, value_enum, default_value_t = LintFormat::Table)]
    pub format: LintFormat,
}

/// Where the suite lives.
#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// Suite root: holds `scenarios/`, `smoke-set.yaml` and the fixtures that scenario
    /// `seed_state` paths name (relative to this root).
    #[arg(long, default_value = ".", env = "TOOLGATE_ROOT")]
    pub root: PathBuf,
}

#[derive(Debug, Args)]
pub struct GateArgs {
    #[command(flatten)]
    pub suite: SuiteArgs,
    /// Run every scenario instead of the smoke set.
    #[arg(long, conflicts_with = "only")]
    pub all: bool,
    /// Run only these scenario ids (repeatable).
    #[arg(long, value_name = "ID")]
    pub only: Vec<String>,
    /// The agent under test.
    #[arg(long, value_enum, default_value_t = AgentKind::Reference, env = "TOOLGATE_AGENT")]
    pub agent: AgentKind,
    /// Model name for model-backed agents (`--agent openai`); the endpoint comes from
    /// OPENAI_BASE_URL (default https://api.openai.com/v1) and the key from OPENAI_API_KEY.
    #[arg(long, env = "TOOLGATE_MODEL")]
    pub model: Option<String>,
    /// Model turns per scenario before the run stops.
    #[arg(long, default_value_t = 12)]
    pub max_turns: u32,
    /// Sampling temperature passed to the model.
    #[arg(long)]
    pub temperature: Option<f64>,
    /// Sampling seed passed to the model.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Output-token limit per model turn.
    #[arg(long)]
    pub max_tokens: Option<u32>,
    /// A file whose text is the system prompt for model-backed agents.
    #[arg(long, value_name = "FILE")]
    pub system_prompt: Option<PathBuf>,
    /// Results file of an earlier run to compare with; missing is reported, not an error.
    /// Default: `baseline.json` under the root.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Largest allowed drop of the overall pass rate, in percentage points.
    #[arg(long, default_value_t = 3.0, value_parser = parse_tolerance)]
    pub tolerance: f64,
    /// Directory for `results.json` and `trace.jsonl`.
    #[arg(long, default_value = "toolgate-out")]
    pub out: PathBuf,
    /// Scenarios run at the same time.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: u16,
    /// Wall-time limit per scenario run (e.g. `90s`, `5m`).
    #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
    pub timeout: Duration,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Fixture file with the seeded state (a JSON object of collections).
    #[arg(long, value_name = "FILE")]
    pub fixture: PathBuf,
    /// Write the trace of every call here (JSON Lines) when the client disconnects.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
}

fn parse_fraction(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if (0.0..=1.0).contains(&value) => Ok(value),
        _ => Err(format!("`{text}` is not a number in 0.0..=1.0")),
    }
}

fn parse_tolerance(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(points) if (0.0..=100.0).contains(&points) => Ok(points),
        _ => Err(format!("`{text}` is not a number of points in 0..=100")),
    }
}
