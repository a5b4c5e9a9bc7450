//! The command line. The doc comments here are the `--help` text.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::agent::AgentKind;
use crate::lint::Profile;
use crate::provider::Api;
use crate::score::OmittedDefaults;

/// The environment variable the GitHub Action puts its `args` input in: one string, split
/// here with POSIX shell word rules (`--command "python3 my agent.py"` is two arguments).
pub const ACTION_ARGS_VARIABLE: &str = "TOOLGATE_ACTION_ARGS";

/// `argv` with the words of `action_args` (the value of [`ACTION_ARGS_VARIABLE`]) appended.
///
/// Errors: an unclosed quote or a trailing backslash, named with the input.
pub fn with_action_args(
    mut argv: Vec<std::ffi::OsString>,
    action_args: Option<&str>,
) -> Result<Vec<std::ffi::OsString>, String> {
    let Some(text) = action_args.filter(|text| !text.trim().is_empty()) else {
        return Ok(argv);
    };
    let words = shell_words::split(text).map_err(|error| {
        format!("the action's `args` input (`{ACTION_ARGS_VARIABLE}`) does not split into words: {error}")
    })?;
    argv.extend(words.into_iter().map(std::ffi::OsString::from));
    Ok(argv)
}

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
    /// 2 error, 3 no verdict, 6 inconclusive with --on-inconclusive distinct, 130
    /// interrupted).
    Gate(Box<GateArgs>),
    /// Load and validate every scenario and the smoke set, run nothing. With `servers:` in
    /// the suite's `toolgate.yaml`, tool names and arguments are checked against the servers'
    /// live tools/list, or against `--lock` offline.
    Validate(ValidateArgs),
    /// Serve the harness's tools over MCP on stdin/stdout, backed by a fixture.
    Serve(ServeArgs),
    /// List the built-in tool catalog: name, category, title and annotations.
    Tools(ToolsArgs),
    /// Run every scenario with the reference agent and check that all pass (exit 0, else 1);
    /// with `--mutants`, also check that the scenarios' checks fail broken trajectories.
    Verify(VerifyArgs),
    /// Lint a catalog: schemas, names, descriptions, look-alike tools and context cost
    /// (exit 0 clean, 1 a finding at or above --fail-on, 2 error).
    Lint(LintArgs),
    /// Write a lock file of a catalog, to compare with later (`toolgate drift`).
    Snapshot(SnapshotArgs),
    /// Compare a catalog with its lock file (exit 0 no drift, 1 breaking, 4 descriptions
    /// changed, 5 only non-breaking changes, 2 error).
    Drift(DriftArgs),
    /// Aggregate the recent default-branch runs of a history into a baseline file.
    Baseline(BaselineArgs),
    /// Append a results file to a history (JSON Lines), e.g. after a nightly full run.
    Record(RecordArgs),
    /// Combine the results of `gate --shard i/n --collect-only` jobs into one results file.
    Merge(MergeArgs),
    /// Declarative mock tools (docs/mocks.md): serve a mock catalog as an MCP server, or
    /// write one from recorded cassettes.
    Mock(MockArgs),
    /// Recorded MCP traffic (docs/cassettes.md): check cassettes against live servers
    /// (exit 0 unchanged, 1 an answer or the tools changed, 2 error).
    Cassette(CassetteArgs),
    /// Score production traces (OTLP JSON, OpenAI message logs, Langfuse exports, toolgate
    /// traces) with the checks that need no scenario (exit 0, 2 error).
    Score(ScoreArgs),
    /// Stand between any MCP client and a stdio server (a drop-in `mcpServers` entry): trace
    /// every call, inject faults, optionally record a cassette.
    Proxy(ProxyArgs),
    /// Write a suite skeleton for your own tools: toolgate.yaml, a mock catalog, three draft
    /// scenarios per tool, a smoke set and a GitHub workflow.
    Init(InitArgs),
    /// Print the JSON Schema of a file toolgate reads or writes (scenario, config,
    /// mock-catalog, results, verdict), for editors and validators; with no name, list them.
    Schema(SchemaArgs),
    /// Serve a results folder (`report.html` and the files beside it) on a loopback address
    /// for a browser, until Ctrl-C (exit 0, 2 error).
    View(ViewArgs),
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
pub struct SchemaArgs {
    /// The schema to print: scenario, config, mock-catalog, results or verdict.
    pub name: Option<String>,
    /// Write every schema into this directory as `<name>.schema.json` instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "name")]
    pub write: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    #[command(flatten)]
    pub suite: SuiteArgs,
    /// Also derive broken trajectories from each reference run (dropped call, look-alike
    /// tool, changed argument, invented id, exceeded budget, forbidden call, ignored result,
    /// failed call) and require the checks to fail them: at least 95% killed over the
    /// finished scenarios and at least one per scenario. Kills on drafts (`draft: true`) are
    /// counted apart: drafts are not evidence.
    #[arg(long)]
    pub mutants: bool,
    /// Print, per tier, how many written alternatives (valid trajectories) were rejected and
    /// how many counterexamples (invalid ones) were accepted. Every trajectory is played and
    /// judged with or without this flag; a wrong verdict on one fails `verify`.
    #[arg(long)]
    pub alternatives: bool,
    /// List every surviving mutant, not only the per-scenario counts, and every draft; for
    /// each wrongly judged trajectory, its failing checks.
    #[arg(long)]
    pub verbose: bool,
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
    /// The servers of a suite's `toolgate.yaml` (`servers:`, as `gate` starts them), after
    /// their `include`/`exclude` globs.
    #[arg(long = "suite", value_name = "DIR", group = "source")]
    pub suite: Option<PathBuf>,
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
    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// Where the optional judge model is and how to reach it; shared by `gate` (the answer judge)
/// and `lint` (the description judge).
#[derive(Debug, Args)]
pub struct JudgeArgs {
    /// Turn on the judge with this pinned model. In `gate` it reads runs that passed every
    /// deterministic check and may only mark them `degraded`; in `lint` it scores each tool's
    /// description.
    #[arg(long, value_name = "MODEL", env = "TOOLGATE_JUDGE_MODEL")]
    pub judge_model: Option<String>,
    /// The API the judge speaks: `openai` (any OpenAI-compatible chat-completions endpoint)
    /// or `anthropic` (the Messages API).
    #[arg(long, value_enum, env = "TOOLGATE_JUDGE_PROVIDER", default_value_t = Api::Openai)]
    pub judge_provider: Api,
    /// The judge's base URL [default: OPENAI_BASE_URL, else `https://api.openai.com/v1`; with
    /// `--judge-provider anthropic`: ANTHROPIC_BASE_URL, else `https://api.anthropic.com`]; its
    /// key comes from TOOLGATE_JUDGE_API_KEY, else OPENAI_API_KEY or ANTHROPIC_API_KEY.
    #[arg(long, value_name = "URL", env = "TOOLGATE_JUDGE_BASE_URL")]
    pub judge_base_url: Option<String>,
    /// Directory of cached judge answers, keyed by a hash of everything the judge saw
    /// (`gate`: under the suite root; `lint`: under the current directory).
    #[arg(long, value_name = "DIR", default_value = ".toolgate-cache/judge")]
    pub judge_cache: PathBuf,
}

/// The user simulator of the scenarios with a `simulated_user` (`gate`): its model and
/// endpoint, and where its messages are recorded or replayed from.
#[derive(Debug, Args)]
pub struct UserArgs {
    /// Play the scenarios' simulated users (`simulated_user`) with this pinned model, at
    /// temperature 0 with a seed [default: `user_simulator.model` in toolgate.yaml]. Without
    /// one (and no recording to replay), such a scenario's runs are errored; the reference
    /// agent never needs one.
    #[arg(long, value_name = "MODEL", env = "TOOLGATE_USER_MODEL")]
    pub user_model: Option<String>,
    /// The user simulator's OpenAI-compatible base URL [default: `user_simulator.base_url` in
    /// toolgate.yaml, else OPENAI_BASE_URL, else `https://api.openai.com/v1`]; its key comes
    /// from TOOLGATE_USER_API_KEY, else OPENAI_API_KEY.
    #[arg(long, value_name = "URL", env = "TOOLGATE_USER_BASE_URL")]
    pub user_base_url: Option<String>,
    /// Record every message of the user simulator into `DIR/users/<scenario>.r<repeat>.jsonl`,
    /// to replay with `--user-replay DIR` [default: the `--record` directory, with a user
    /// model].
    #[arg(long, value_name = "DIR", conflicts_with = "user_replay")]
    pub user_record: Option<PathBuf>,
    /// Answer as the user simulator from the recordings in `DIR/users/` (`--user-record`),
    /// with no model; a conversation the recording does not hold makes its run errored
    /// (`not_recorded`) [default: the `--replay` cassette directory, when it has `users/`].
    #[arg(long, value_name = "DIR", env = "TOOLGATE_USER_REPLAY")]
    pub user_replay: Option<PathBuf>,
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
    /// Name the scenarios under this suite root (its `scenarios/`) that call or forbid a
    /// changed tool.
    #[arg(long, value_name = "ROOT")]
    pub scenarios: Option<PathBuf>,
}

/// Where the suite lives.
#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// Suite root: holds `scenarios/`, `smoke-set.yaml` and the fixtures that scenario
    /// `seed_state` paths name (relative to this root).
    #[arg(long, default_value = ".", env = "TOOLGATE_ROOT")]
    pub root: PathBuf,
    /// Run on this declarative mock catalog (YAML or JSON, see docs/mocks.md) instead of the
    /// built-in tools [default: `mocks.catalog` of `toolgate.yaml` under the root, if set].
    #[arg(long, value_name = "CATALOG", env = "TOOLGATE_MOCKS")]
    pub mocks: Option<PathBuf>,
    /// Serve the answers recorded in this cassette directory (`gate --record DIR`) instead of
    /// starting the suite's `servers:`; a call not recorded makes its run errored
    /// (`not_recorded`), see docs/cassettes.md.
    #[arg(long, value_name = "DIR", conflicts_with = "mocks")]
    pub replay: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    #[command(flatten)]
    pub suite: SuiteArgs,
    /// Validate against this lock file (written by `toolgate snapshot --suite DIR`) instead of
    /// starting the suite's servers.
    #[arg(long, value_name = "FILE")]
    pub lock: Option<PathBuf>,
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
    /// Write every run as OpenTelemetry spans (OTLP JSON, GenAI semantic conventions) to this
    /// file, to load next to production traces (docs/production.md).
    #[arg(long, value_name = "FILE")]
    pub otel: Option<PathBuf>,
    /// Send the same spans to this OTLP/HTTP collector (e.g. `http://localhost:4318`; headers
    /// from `OTEL_EXPORTER_OTLP_HEADERS`). A failed export is a warning, not a verdict.
    #[arg(long, value_name = "URL", env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
    pub otel_endpoint: Option<String>,
    /// Record every run's traffic with the suite's `servers:` into this directory, one
    /// cassette per run (`<scenario>.r<repeat>.jsonl`), to replay with `--replay DIR`.
    #[arg(long, value_name = "DIR", conflicts_with = "replay")]
    pub record: Option<PathBuf>,
    /// Config file (default: `toolgate.yaml` under the root, when it exists). Flags and
    /// environment variables override it.
    #[arg(long, value_name = "FILE", env = "TOOLGATE_CONFIG")]
    pub config: Option<PathBuf>,
    /// The agent under test [default: reference].
    #[arg(long, value_enum, env = "TOOLGATE_AGENT")]
    pub agent: Option<AgentKind>,
    /// Model name for `openai` and `anthropic` (the endpoint comes from OPENAI_BASE_URL /
    /// ANTHROPIC_BASE_URL, the key from OPENAI_API_KEY / ANTHROPIC_API_KEY).
    #[arg(long, env = "TOOLGATE_MODEL")]
    pub model: Option<String>,
    /// `command` agent: shell command line of your agent program (see docs/agents.md).
    #[arg(long, value_name = "CMD", env = "TOOLGATE_COMMAND")]
    pub command: Option<String>,
    /// `replay` agent: JSON Lines of recorded trajectories (e.g. a `trace.jsonl`).
    #[arg(long, value_name = "FILE", env = "TOOLGATE_RECORDINGS")]
    pub recordings: Option<PathBuf>,
    /// Model turns per scenario run before it stops [default: 12].
    #[arg(long, env = "TOOLGATE_MAX_TURNS")]
    pub max_turns: Option<u32>,
    /// Sampling temperature passed to the model.
    #[arg(long, env = "TOOLGATE_TEMPERATURE")]
    pub temperature: Option<f64>,
    /// Sampling seed passed to the model.
    #[arg(long, env = "TOOLGATE_SEED")]
    pub seed: Option<u64>,
    /// Output-token limit per model turn [default: 4096; 0 sends none]. A reply that reaches
    /// it without a tool call fails the run as `truncated`.
    #[arg(long, env = "TOOLGATE_MAX_TOKENS")]
    pub max_tokens: Option<u32>,
    /// `openai` agent: ask for streamed responses and join their chunks (a new call id on an
    /// occupied index starts a new call). Overrides `stream:` in toolgate.yaml.
    #[arg(long)]
    pub stream: bool,
    /// `openai` agent: how the model is offered the tools. `native`: the provider's function
    /// calling. `prompted`: the tools written into the system prompt (Hermes `<tools>`) and the
    /// calls read from the reply's text (`<tool_call>` blocks, fenced or bare call JSON), for
    /// local servers whose chat format loses native calls [default: native].
    #[arg(long, value_enum, env = "TOOLGATE_TOOL_CALLING")]
    pub tool_calling: Option<crate::agent::ToolCalling>,
    /// Model agents: which tools each scenario offers. `all`: the whole catalog. `scenario`:
    /// the tools of the groups (categories, or servers) the scenario names, and their
    /// look-alikes, for models whose context window cannot hold the catalog [default: all].
    #[arg(long, value_enum, env = "TOOLGATE_TOOL_OFFER")]
    pub tool_offer: Option<crate::runner::ToolOffer>,
    /// Whether the model must call tools: auto, required, none [default: the provider's].
    #[arg(long, value_enum, env = "TOOLGATE_TOOL_CHOICE")]
    pub tool_choice: Option<crate::agent::ToolChoice>,
    /// A file whose text is the system prompt (its SHA-256 is recorded in the results).
    #[arg(long, value_name = "FILE", env = "TOOLGATE_SYSTEM_PROMPT_FILE")]
    pub system_prompt: Option<PathBuf>,
    /// The system prompt, inline.
    #[arg(long, value_name = "TEXT", conflicts_with = "system_prompt")]
    pub system_prompt_text: Option<String>,
    /// Baseline to compare with: a baseline file (`toolgate baseline`), a results file, or
    /// `artifact:NAME` (the newest artifact NAME of a successful default-branch workflow run,
    /// through the GitHub API with GITHUB_TOKEN). A missing file is reported, not an error
    /// (a first pull request has no baseline yet), unless `--require-baseline`.
    /// Default: `baseline.json` under the root.
    #[arg(long, value_name = "FILE|artifact:NAME", env = "TOOLGATE_BASELINE")]
    pub baseline: Option<PathBuf>,
    /// A missing baseline file is an error (exit 2) instead of a note: a mistyped path must
    /// not quietly leave only the Tier 5 rule to gate on.
    #[arg(long, env = "TOOLGATE_REQUIRE_BASELINE")]
    pub require_baseline: bool,
    /// A previous run's output directory (its `results.json` and `trace.jsonl`): report.html
    /// shows its calls beside this run's for every scenario that changed since the baseline.
    /// Without it, when `--baseline` is a results file with a `trace.jsonl` beside it, that
    /// run is used. A missing or unreadable base run is a warning, never a failed gate; the
    /// changes then show the baseline's per-scenario tallies.
    #[arg(long, value_name = "DIR", env = "TOOLGATE_BASE_RUN")]
    pub base_run: Option<PathBuf>,
    /// What a left-out argument whose expected value is its schema default counts as:
    /// `schema` (the default was meant, as the tool reads it) or `strict` (missing, as BFCL
    /// scores it).
    #[arg(long, value_enum, default_value_t = OmittedDefaults::Schema)]
    pub omitted_defaults: OmittedDefaults,
    #[command(flatten)]
    pub judge: JudgeArgs,
    #[command(flatten)]
    pub user: UserArgs,
    /// Largest allowed drop of the overall pass rate, in percentage points [default: 3].
    #[arg(long, value_parser = parse_tolerance, env = "TOOLGATE_TOLERANCE")]
    pub tolerance: Option<f64>,
    /// Lowest overall pass rate that passes, in percent (0..=100), with or without a baseline;
    /// errored runs are left out [default: no floor].
    #[arg(long, value_name = "PERCENT", value_parser = parse_percent, env = "TOOLGATE_MIN_PASS_RATE")]
    pub min_pass_rate: Option<f64>,
    /// A price table (YAML or JSON: model name -> `{prompt, completion}` in US dollars per
    /// million tokens) for costs in the report and cost limits; a model agent's model must be
    /// in it [default: `prices:` in toolgate.yaml, else no costs].
    #[arg(long, value_name = "FILE", env = "TOOLGATE_PRICES")]
    pub prices: Option<PathBuf>,
    /// Fail the gate when the mean tokens (input plus output) per judged model run exceed N.
    #[arg(long, value_name = "N")]
    pub max_tokens_per_run: Option<u64>,
    /// Fail the gate when the mean cost per judged model run exceeds USD (needs `--prices`).
    #[arg(long, value_name = "USD", value_parser = parse_dollars)]
    pub max_cost_per_run: Option<f64>,
    /// Fail the gate when the mean tokens per judged model run grew by more than PERCENT over
    /// the baseline's (a prompt that doubles the tokens is a regression even when every run
    /// passes) [default: reported, never blocks].
    #[arg(long, value_name = "PERCENT", value_parser = parse_growth)]
    pub max_token_growth: Option<f64>,
    /// Run only the scenarios that the change since the baseline can affect, decided before
    /// running from the baseline's pins: every Tier 5 scenario, new or changed scenario files,
    /// changed fixtures, and the scenarios that offer a changed tool. Everything runs, with a
    /// note saying why, without baseline pins or when the model, provider, system prompt, judge
    /// or harness changed (docs/gate.md) [default: `impact:` in toolgate.yaml, else off].
    #[arg(long, conflicts_with = "results")]
    pub impact: bool,
    /// Reuse a run measured the same way from this directory instead of calling the model
    /// again (same pins, settings and scenarios: the cache key), and store a run that was not
    /// reused there. Never for the `command` and `replay` agents, interrupted runs or runs
    /// with errored runs (docs/gate.md).
    #[arg(
        long,
        value_name = "DIR",
        env = "TOOLGATE_CACHE",
        conflicts_with = "results"
    )]
    pub cache: Option<PathBuf>,
    /// Directory for the output set: `results.json`, `trace.jsonl`, `report.md`,
    /// `report.html`, `junit.xml`, `verdict.json` (and `judge.jsonl` with a judge).
    #[arg(long, default_value = "toolgate-out")]
    pub out: PathBuf,
    /// Runs per scenario; results report pass@1 and pass^k (all k runs pass) [default: 1].
    #[arg(long, value_name = "K", env = "TOOLGATE_REPEAT",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: Option<u32>,
    /// Repeat adaptively, `--repeat K` being the most runs a scenario gets: scenarios the
    /// verdict compares with the baseline run once, then in rounds (uncertain ones first)
    /// until the verdict of K runs each is settled with 99% certainty; Tier 5 and scenarios
    /// not compared always get K runs (see docs/gate.md, "Adaptive repeats").
    #[arg(long, env = "TOOLGATE_ADAPTIVE", conflicts_with = "results")]
    pub adaptive: bool,
    /// Scenario runs at the same time [default: 64].
    #[arg(long, env = "TOOLGATE_CONCURRENCY", value_parser = clap::value_parser!(u16).range(1..))]
    pub concurrency: Option<u16>,
    /// Wall-time limit per scenario run (e.g. `90s`, `5m`) [default: 5m].
    #[arg(long, value_parser = humantime::parse_duration, env = "TOOLGATE_TIMEOUT")]
    pub timeout: Option<Duration>,
    /// Timeout of one model request; timed-out requests are retried [default: 2m].
    #[arg(long, value_parser = humantime::parse_duration, env = "TOOLGATE_REQUEST_TIMEOUT")]
    pub request_timeout: Option<Duration>,
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
    #[arg(long, value_name = "i/n", value_parser = crate::results::pins::Shard::parse)]
    pub shard: Option<crate::results::pins::Shard>,
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
    /// Exit code of an inconclusive verdict: `pass` (0), `fail` (1) or `distinct` (6).
    #[arg(long, value_enum, default_value_t = OnInconclusive::Pass, env = "TOOLGATE_ON_INCONCLUSIVE")]
    pub on_inconclusive: OnInconclusive,
    /// Post or update the sticky pull-request comment (needs GITHUB_TOKEN with
    /// `pull-requests: write`); failing to comment is a warning, never a verdict.
    #[arg(long, env = "TOOLGATE_COMMENT")]
    pub comment: bool,
    /// Key of the sticky comment: one comment per key and pull request.
    #[arg(long, default_value = "toolgate", env = "TOOLGATE_COMMENT_KEY")]
    pub comment_key: String,
    /// Login whose sticky comment is updated. Default: the token's own identity (its login
    /// for a personal access token; a bot for the workflow's token or a GitHub App's).
    #[arg(long, value_name = "LOGIN", env = "TOOLGATE_COMMENT_AUTHOR")]
    pub comment_author: Option<String>,
    /// The pull request to comment on. Default: from `$GITHUB_EVENT_PATH`.
    #[arg(long, value_name = "NUMBER", env = "TOOLGATE_PR")]
    pub pr: Option<u64>,
    /// Where `report.html` will be published (a web address the reviewers can open): the
    /// comment, JUnit and annotations then link each scenario to `URL#ANCHOR`. Without it they
    /// name `report.html#ANCHOR` inside the results folder.
    #[arg(long, value_name = "URL", env = "TOOLGATE_REPORT_URL")]
    pub report_url: Option<String>,
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
    /// Exit 6.
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
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "suite",
        conflicts_with = "suite"
    )]
    pub fixture: Option<PathBuf>,
    /// Serve the tools of a suite's own servers (`servers:` in DIR/toolgate.yaml) instead,
    /// started as a run of `--scenario` starts them: its seed, faults and blocked calls.
    #[arg(long, value_name = "DIR", requires = "scenario")]
    pub suite: Option<PathBuf>,
    /// With `--suite`: the scenario whose run to serve.
    #[arg(long, value_name = "ID", requires = "suite")]
    pub scenario: Option<String>,
    /// Write every call here (JSON Lines, one call record per line) as it happens.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct MockArgs {
    #[command(subcommand)]
    pub command: MockCommand,
}

#[derive(Debug, Subcommand)]
pub enum MockCommand {
    /// Serve a mock catalog's tools over MCP: on stdin/stdout, or streamable HTTP with
    /// `--listen`. Calls change the tables as in a run; nothing is reset between calls.
    Serve(MockServeArgs),
    /// Write a mock catalog from a cassette directory: the recorded tools, and one rule per
    /// recorded call (the same answers in the same order).
    FromCassette(MockFromCassetteArgs),
}

#[derive(Debug, Args)]
pub struct MockFromCassetteArgs {
    /// The cassette directory (`gate --record DIR`).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Write the catalog here (YAML) instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CassetteArgs {
    #[command(subcommand)]
    pub command: CassetteCommand,
}

#[derive(Debug, Subcommand)]
pub enum CassetteCommand {
    /// Send every recorded request again to fresh live servers and diff the answers with the
    /// recorded ones: a pull-request gate for the server itself.
    Verify(CassetteVerifyArgs),
}

#[derive(Debug, Args)]
pub struct CassetteVerifyArgs {
    /// The cassette directory.
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Start the servers of this suite (`servers:` of DIR/toolgate.yaml), each cassette with
    /// its scenario's seed, and use its `cassettes.ignore_paths` and `cassettes.masks`.
    #[arg(long, value_name = "ROOT", conflicts_with = "command")]
    pub suite: Option<PathBuf>,
    /// Leave this part of every answer out of the comparison (JSONPath over the stored
    /// answer, e.g. `$.result.created_at`; repeatable).
    #[arg(long = "ignore", value_name = "PATH")]
    pub ignore: Vec<String>,
    /// Replace each match of this regular expression (Rust `regex` syntax) inside the strings
    /// of both answers by `[masked]` before comparing, e.g. a commit hash `\b[0-9a-f]{40}\b`
    /// (repeatable).
    #[arg(long = "mask", value_name = "REGEX")]
    pub mask: Vec<String>,
    /// With `-- COMMAND`: the server name it stands for [default: the cassettes' only server].
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// A stdio MCP server command, after `--`; `{seed_dir}` in it is a fresh directory per
    /// cassette.
    #[arg(last = true, value_name = "COMMAND", required_unless_present = "suite")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// The server's name: the `server` of its calls, and the trace's scenario id unless
    /// `--scenario` is given.
    #[arg(long, value_name = "NAME")]
    pub name: String,
    /// The scenario id the trace lines carry (for `gate --agent replay`) [default: NAME].
    #[arg(long, value_name = "ID")]
    pub scenario: Option<String>,
    /// Append every call to this trace (JSON Lines, as `gate` writes `trace.jsonl`) as it
    /// happens; each session's lines carry its own `run_id`.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Inject the faults of this file (YAML or JSON: `fault_injection:` entries, as in a
    /// scenario).
    #[arg(long, value_name = "FILE")]
    pub faults: Option<PathBuf>,
    /// Record the session as a cassette in this directory (`<scenario>.r0.jsonl`).
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Serve streamable HTTP on this address (e.g. `127.0.0.1:8808`; port 0 picks one and
    /// prints the URL) until interrupted, instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// Let `--listen` take an address other hosts can reach (`0.0.0.0`, `[::]`, an interface
    /// address). Nothing authenticates the callers: anyone who reaches it can call the tools.
    #[arg(long, requires = "listen")]
    pub allow_remote: bool,
    /// The stdio MCP server command, after `--` (e.g. `-- npx -y @modelcontextprotocol/server-memory`).
    #[arg(last = true, value_name = "COMMAND", required = true)]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct MockServeArgs {
    /// The mock catalog (YAML or JSON).
    #[arg(value_name = "CATALOG")]
    pub catalog: PathBuf,
    /// Seed the tables from this fixture (a JSON object of tables, as a scenario's
    /// `seed_state`) instead of the catalog's own rows.
    #[arg(long, value_name = "FILE")]
    pub seed: Option<PathBuf>,
    /// Serve streamable HTTP on this address (e.g. `127.0.0.1:8808`; port 0 picks one and
    /// prints the URL) until interrupted, instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// Let `--listen` take an address other hosts can reach (`0.0.0.0`, `[::]`, an interface
    /// address). Nothing authenticates the callers: anyone who reaches it can call the tools.
    #[arg(long, requires = "listen")]
    pub allow_remote: bool,
    /// Write every call here (JSON Lines, one call record per line). A plain proxy writes each
    /// line within about 10 ms of its answer; through the harness, as the answer is relayed.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("source").required(true).args(["from_lock", "tools_json", "from"]))]
pub struct InitArgs {
    /// Import the tools from a `toolgate snapshot` lock file.
    #[arg(long, value_name = "FILE")]
    pub from_lock: Option<PathBuf>,
    /// Import the tools from a saved tools/list result (or a JSON array of tools).
    #[arg(long, value_name = "FILE")]
    pub tools_json: Option<PathBuf>,
    /// Import the tools from a live MCP server: a streamable HTTP URL (`http://...`), or a
    /// stdio server's command line (split as a shell does, e.g. `"npx -y my-server"`).
    #[arg(long, value_name = "SERVER")]
    pub from: Option<String>,
    /// With `--from`: draft a suite of the real server instead of mocks. `toolgate.yaml`
    /// names it under `servers:` (the command line or URL as given: write a secret as
    /// `${VAR}`, which stays so in the file and is read from the environment), and each tool
    /// gets one draft scenario with values from its input schema. Tools annotated
    /// `readOnlyHint: true` are called once with those values; only a call that succeeded
    /// makes a happy draft (`<tool>-happy`, with `succeeds: true`). A rejected call makes
    /// `<tool>-rejected`, quoting the server's error, and any other tool is never called
    /// (`<tool>-untried`). No baseline is written.
    #[arg(long, requires = "from")]
    pub servers: bool,
    /// The directory to write the suite into (created if missing).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Overwrite files that already exist.
    #[arg(long)]
    pub force: bool,
}

fn parse_fraction(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if (0.0..=1.0).contains(&value) => Ok(value),
        _ => Err(format!("`{text}` is not a number in 0.0..=1.0")),
    }
}

fn parse_alpha(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(alpha) if alpha > 0.0 && alpha < 1.0 => Ok(alpha),
        _ => Err(format!("`{text}` is not a significance level in (0, 1)")),
    }
}

fn parse_percent(text: &str) -> Result<f64, String> {
    match text.trim_end_matches('%').parse::<f64>() {
        Ok(percent) if (0.0..=100.0).contains(&percent) => Ok(percent),
        _ => Err(format!("`{text}` is not a percentage in 0..=100")),
    }
}

fn parse_dollars(text: &str) -> Result<f64, String> {
    match text.trim_start_matches('$').parse::<f64>() {
        Ok(dollars) if dollars.is_finite() && dollars >= 0.0 => Ok(dollars),
        _ => Err(format!(
            "`{text}` is not an amount of US dollars, 0 or more"
        )),
    }
}

fn parse_growth(text: &str) -> Result<f64, String> {
    match text.trim_end_matches('%').parse::<f64>() {
        Ok(percent) if percent.is_finite() && percent >= 0.0 => Ok(percent),
        _ => Err(format!("`{text}` is not a percentage of 0 or more")),
    }
}

fn parse_tolerance(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(points) if (0.0..=100.0).contains(&points) => Ok(points),
        _ => Err(format!("`{text}` is not a number of points in 0..=100")),
    }
}

#[cfg(test)]
mod action_args_tests {
    use super::*;

    fn words(argv: &[std::ffi::OsString]) -> Vec<&str> {
        argv.iter()
            .map(|word| word.to_str().expect("UTF-8"))
            .collect()
    }

    #[test]
    fn the_action_args_split_like_a_shell_with_quotes_kept_together() {
        let argv = with_action_args(
            vec!["toolgate".into(), "gate".into()],
            Some(r#"--agent command --command "python3 my agent.py" --only 'T1-001' a\ b"#),
        )
        .expect("valid words");
        assert_eq!(
            words(&argv),
            [
                "toolgate",
                "gate",
                "--agent",
                "command",
                "--command",
                "python3 my agent.py",
                "--only",
                "T1-001",
                "a b"
            ]
        );
        let unchanged =
            with_action_args(vec!["toolgate".into()], Some("  ")).expect("blank is nothing");
        assert_eq!(words(&unchanged), ["toolgate"]);
    }

    /// The `[default: N]` in `gate --help` for each setting whose default lives in
    /// `defaults.rs`: clap cannot read the constants, so this keeps the text honest.
    #[test]
    fn gate_help_states_the_defaults_the_run_uses() {
        use clap::CommandFactory as _;
        let mut command = Cli::command();
        let gate = command.find_subcommand_mut("gate").expect("gate exists");
        let help = gate.render_long_help().to_string();
        let shown = |flag: &str| -> String {
            let at = help
                .find(&format!("--{flag}"))
                .expect("the flag is documented");
            let rest = &help[at..];
            let start = rest.find("[default: ").expect("a default is shown") + "[default: ".len();
            rest[start..].split(']').next().expect("closed").to_owned()
        };
        assert_eq!(
            shown("concurrency"),
            crate::defaults::CONCURRENCY.to_string()
        );
        assert_eq!(shown("max-turns"), crate::defaults::MAX_TURNS.to_string());
        assert_eq!(
            humantime::parse_duration(&shown("timeout")).expect("a duration"),
            crate::defaults::RUN_TIMEOUT
        );
        assert_eq!(
            humantime::parse_duration(&shown("request-timeout")).expect("a duration"),
            crate::defaults::REQUEST_TIMEOUT
        );
    }

    #[test]
    fn an_unclosed_quote_is_an_error_naming_the_input() {
        let error = with_action_args(vec!["toolgate".into()], Some(r#"--command "python3 x.py"#))
            .expect_err("unclosed");
        assert_eq!(
            error,
            "the action's `args` input (`TOOLGATE_ACTION_ARGS`) does not split into words: missing closing quote"
        );
    }
}

/// The format of a trace file `toolgate score` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceFormat {
    /// toolgate's own `trace.jsonl` (gate, proxy).
    Toolgate,
    /// JSON Lines of OpenAI-style chat conversations (`{"id", "messages"}` per line).
    Openai,
    /// OTLP JSON, one export request per line (OpenTelemetry file exporters).
    Otel,
    /// A Langfuse observations export, one observation per line.
    Langfuse,
}

#[derive(Debug, Args)]
pub struct ViewArgs {
    /// The results folder `gate` wrote (it must hold `report.html`).
    #[arg(default_value = "toolgate-out", value_name = "DIR")]
    pub dir: PathBuf,
    /// The loopback port to listen on; 0 picks a free one. The address is always 127.0.0.1:
    /// the report quotes tool results and answers, which stay on this machine.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// Also open the report in the desktop's browser (`xdg-open`, or `open` on macOS).
    #[arg(long)]
    pub open: bool,
}

#[derive(Debug, Args)]
pub struct ScoreArgs {
    /// The trace file (JSON Lines; read as a stream, never whole).
    #[arg(long, value_name = "FILE")]
    pub traces: PathBuf,
    /// Its format.
    #[arg(long, value_enum, default_value_t = TraceFormat::Toolgate)]
    pub format: TraceFormat,
    /// Score a uniform random sample of this many trajectories (reservoir sampling) instead
    /// of all.
    #[arg(long, value_name = "N")]
    pub sample: Option<usize>,
    /// The sample's seed: the same file, N and seed give the same sample.
    #[arg(long, default_value_t = 0, requires = "sample")]
    pub seed: u64,
    /// Check tool names and arguments against this catalog: a `toolgate snapshot` lock file
    /// or a saved tools/list (without a catalog those checks are inconclusive).
    #[arg(long, value_name = "FILE", conflicts_with = "server")]
    pub catalog: Option<PathBuf>,
    /// ... or against the tools/list of this stdio MCP server, after `--` (started once).
    #[arg(last = true, value_name = "SERVER")]
    pub server: Vec<String>,
    /// Link trace ids in report.md with this URL, `{trace_id}` replaced (e.g.
    /// `https://cloud.langfuse.com/project/P/traces/{trace_id}`).
    #[arg(long, value_name = "URL")]
    pub trace_url: Option<String>,
    /// Where to write `scores.jsonl` (one line per trajectory), `summary.json` and `report.md`.
    #[arg(long, default_value = "toolgate-out/score")]
    pub out: PathBuf,
}
