//! The command line. The doc comments here are the `--help` text.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::agent::AgentKind;

/// Measure how well an LLM agent uses tools over MCP, and gate pull requests on it.
#[derive(Debug, Parser)]
#[command(name = "toolgate", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
#[expect(
    clippy::large_enum_variant,
    reason = "parsed once per process; boxing would only add noise"
)]
pub enum Command {
    /// Run the smoke set, compare with the baseline, print the verdict (exit 0 pass, 1 fail,
    /// 2 error, 3 no verdict).
    Gate(GateArgs),
    /// Load and validate every scenario and the smoke set, run nothing.
    Validate(SuiteArgs),
    /// Serve the harness's tools over MCP on stdin/stdout, backed by a fixture.
    Serve(ServeArgs),
    /// Aggregate the recent default-branch runs of a history into a baseline file.
    Baseline(BaselineArgs),
    /// Append a results file to a history (JSON Lines), e.g. after a nightly full run.
    Record(RecordArgs),
    /// Combine the results of `gate --shard i/n --collect-only` jobs into one results file.
    Merge(MergeArgs),
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
    /// Baseline to compare with: a baseline file (`toolgate baseline`), a results file, or
    /// `artifact:NAME` (the newest artifact NAME of a successful default-branch workflow run,
    /// through the GitHub API with GITHUB_TOKEN). A missing file is reported, not an error.
    /// Default: `baseline.json` under the root.
    #[arg(long, value_name = "FILE|artifact:NAME", env = "TOOLGATE_BASELINE")]
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
    #[command(flatten)]
    pub ci: GateCiArgs,
}

/// The verdict, reports and CI integration of `gate`.
#[derive(Debug, Args)]
pub struct GateCiArgs {
    /// Judge this results file (e.g. from `toolgate merge`) instead of running scenarios.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["all", "only", "shard"])]
    pub results: Option<PathBuf>,
    /// Run only shard `i` of `n` (1-based) of the selected scenarios; scenario number `j` in
    /// suite order goes to shard `j % n + 1`.
    #[arg(long, value_name = "i/n", value_parser = crate::pins::Shard::parse)]
    pub shard: Option<crate::pins::Shard>,
    /// Run and write results only, no verdict (exit 0 unless an error); for shard jobs.
    #[arg(long, conflicts_with = "results")]
    pub collect_only: bool,
    /// Quarantine list: expiring Tier 5 exemptions. Missing is an empty list. Default:
    /// `quarantine.yaml` under the root.
    #[arg(long, value_name = "FILE")]
    pub quarantine: Option<PathBuf>,
    /// Significance level of the one-sided regression test.
    #[arg(long, default_value_t = 0.05, value_parser = parse_alpha)]
    pub alpha: f64,
    /// Exit code of an inconclusive verdict: `pass` (0), `fail` (1) or `distinct` (4).
    #[arg(long, value_enum, default_value_t = OnInconclusive::Pass, env = "TOOLGATE_ON_INCONCLUSIVE")]
    pub on_inconclusive: OnInconclusive,
    /// Post or update the sticky pull-request comment (needs GITHUB_TOKEN with
    /// `pull-requests: write`); failing to comment is a warning, never a verdict.
    #[arg(long, env = "TOOLGATE_COMMENT")]
    pub comment: bool,
    /// Key of the sticky comment: one comment per key and pull request.
    #[arg(long, default_value = "toolgate", env = "TOOLGATE_COMMENT_KEY")]
    pub comment_key: String,
    /// Login whose comments may be updated (the token's identity).
    #[arg(
        long,
        default_value = "github-actions[bot]",
        env = "TOOLGATE_COMMENT_AUTHOR"
    )]
    pub comment_author: String,
    /// The pull request to comment on. Default: from `$GITHUB_EVENT_PATH`.
    #[arg(long, value_name = "NUMBER", env = "TOOLGATE_PR")]
    pub pr: Option<u64>,
    /// Judge at this time instead of now (RFC 3339); for reproducible quarantine expiry.
    #[arg(long, hide = true, value_parser = humantime::parse_rfc3339_weak)]
    pub now: Option<std::time::SystemTime>,
}

/// What an inconclusive verdict exits with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnInconclusive {
    /// Exit 0: report it, do not block.
    Pass,
    /// Exit 1, like a failed gate.
    Fail,
    /// Exit 4.
    Distinct,
}

#[derive(Debug, Args)]
pub struct BaselineArgs {
    /// The history file (JSON Lines, written by `toolgate record`).
    #[arg(long, value_name = "FILE")]
    pub history: PathBuf,
    /// The default branch: only its runs count.
    #[arg(long, default_value = "main")]
    pub branch: String,
    /// How far back runs count (e.g. `7d`, `36h`).
    #[arg(long, default_value = "7d", value_parser = humantime::parse_duration)]
    pub window: Duration,
    /// Where to write the baseline.
    #[arg(long, default_value = "baseline.json")]
    pub out: PathBuf,
    /// End the window at this time instead of now (RFC 3339).
    #[arg(long, hide = true, value_parser = humantime::parse_rfc3339_weak)]
    pub now: Option<std::time::SystemTime>,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The results file of the run.
    #[arg(long, value_name = "FILE")]
    pub results: PathBuf,
    /// The history file to append to (created when missing).
    #[arg(long, value_name = "FILE")]
    pub history: PathBuf,
    /// The branch the run measured.
    #[arg(long, env = "GITHUB_REF_NAME")]
    pub branch: String,
    /// The commit the run measured.
    #[arg(long, env = "GITHUB_SHA")]
    pub commit: Option<String>,
    /// Record at this time instead of now (RFC 3339).
    #[arg(long, hide = true, value_parser = humantime::parse_rfc3339_weak)]
    pub at: Option<std::time::SystemTime>,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Results files of the shards, in any order.
    #[arg(required = true, value_name = "RESULTS")]
    pub inputs: Vec<PathBuf>,
    /// Where to write the merged results.
    #[arg(long, default_value = "toolgate-out/results.json")]
    pub out: PathBuf,
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

fn parse_alpha(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(alpha) if alpha > 0.0 && alpha < 1.0 => Ok(alpha),
        _ => Err(format!("`{text}` is not a significance level in (0, 1)")),
    }
}

fn parse_tolerance(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(points) if (0.0..=100.0).contains(&points) => Ok(points),
        _ => Err(format!("`{text}` is not a number of points in 0..=100")),
    }
}
