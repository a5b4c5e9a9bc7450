//! The command line. The doc comments here are the `--help` text.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::agent::AgentKind;
use crate::score::OmittedDefaults;

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
    /// List the built-in tool catalog: name, category, title and annotations.
    Tools(ToolsArgs),
    /// Run every scenario with the reference agent and check that all pass (exit 0, else 1);
    /// with `--mutants`, also check that the scenarios' checks fail broken trajectories.
    Verify(VerifyArgs),
}

/// Output format of `toolgate tools`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ToolsFormat {
    /// An ASCII table.
    Table,
    /// A JSON array of tools.
    Json,
}

#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// How to print the catalog.
    #[arg(long, value_enum, default_value_t = ToolsFormat::Table)]
    pub format: ToolsFormat,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub suite: SuiteArgs,
    /// Also derive broken trajectories from each reference run (dropped call, look-alike
    /// tool, changed argument, invented id, exceeded budget, forbidden call, ignored result)
    /// and require the checks to fail them: at least 95% killed overall and at least one per
    /// scenario.
    #[arg(long)]
    pub mutants: bool,
    /// List every surviving mutant, not only the per-scenario counts.
    #[arg(long)]
    pub verbose: bool,
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
    /// What a left-out argument whose expected value is its schema default counts as:
    /// `strict` (missing, as BFCL scores it) or `schema` (the default was meant).
    #[arg(long, value_enum, default_value_t = OmittedDefaults::Strict)]
    pub omitted_defaults: OmittedDefaults,
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

fn parse_tolerance(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(points) if (0.0..=100.0).contains(&points) => Ok(points),
        _ => Err(format!("`{text}` is not a number of points in 0..=100")),
    }
}
