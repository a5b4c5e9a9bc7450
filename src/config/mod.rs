//! The config file, `toolgate.yaml`: the agent, model, sampling, repeats, concurrency,
//! timeouts and tolerance of `toolgate gate`, and how flags and environment variables override
//! it. Precedence: command-line flags, then environment variables, then the file, then defaults.
//!
//! Two layers: [`ConfigFile`] mirrors the file exactly (unknown keys are errors); [`Settings`]
//! is the validated result the rest of the code uses.

mod prices;
mod products;
mod settings;

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::Deserialize;

use crate::agent::{AgentKind, ToolCalling, ToolChoice};
use crate::runner::ToolOffer;

pub(crate) use products::judge_config;
pub(crate) use settings::Settings;

/// The config file's name under the suite root, read when `--config` is not given.
pub(crate) const FILE_NAME: &str = "toolgate.yaml";

/// `toolgate.yaml` as written. Every key is optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ConfigFile {
    /// `reference`, `openai`, `anthropic`, `command` or `replay`.
    pub agent: Option<AgentKind>,
    /// Model name for `openai` and `anthropic` (passed to `command` as `TOOLGATE_MODEL`).
    pub model: Option<String>,
    /// Provider base URL; `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` win when set.
    pub base_url: Option<String>,
    /// OpenAI-compatible: send the key in this header instead of `Authorization: Bearer`
    /// (Azure: `api-key`).
    pub api_key_header: Option<String>,
    /// OpenAI-compatible: Azure-style `api-version` query parameter.
    pub api_version: Option<String>,
    /// `auto`, `required` or `none`.
    pub tool_choice: Option<ToolChoice>,
    /// Whether the model may emit several tool calls per turn.
    pub parallel_tool_calls: Option<bool>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Sampling seed.
    pub seed: Option<u64>,
    /// Output-token limit per model turn (default 4096; 0 sends none).
    pub max_tokens: Option<u32>,
    /// Model turns per run.
    pub max_turns: Option<u32>,
    /// The system prompt, inline.
    pub system_prompt: Option<String>,
    /// The system prompt, from a file (relative to the config file).
    pub system_prompt_file: Option<PathBuf>,
    /// `command` agent: the shell command line to start.
    pub command: Option<String>,
    /// `replay` agent: the JSON Lines file of recorded trajectories (relative to the config
    /// file).
    pub recordings: Option<PathBuf>,
    /// Largest allowed drop of the pass rate, in percentage points (0..=100).
    pub tolerance: Option<f64>,
    /// Lowest overall pass rate that passes, in percent (0..=100).
    pub min_pass_rate: Option<f64>,
    /// The price table (`--prices`), relative to this file.
    pub prices: Option<PathBuf>,
    /// Runs per scenario (k of pass^k).
    pub repeat: Option<u32>,
    /// Repeat adaptively, `repeat` being the most runs a scenario gets (`--adaptive`).
    pub adaptive: Option<bool>,
    /// Scenario runs at the same time.
    pub concurrency: Option<usize>,
    /// Wall-time limit of one run, e.g. `5m`.
    pub timeout: Option<String>,
    /// Timeout of one model request, e.g. `2m`.
    pub request_timeout: Option<String>,
    /// Attempts per model request (429, 5xx and transport errors are retried).
    pub max_attempts: Option<u32>,
    /// The scoring modes; each is shown in the results and the reports.
    pub scoring: Option<ScoringFile>,
    /// The user's own MCP servers the suite runs against, checked by
    /// [`crate::suite::from_value`]; absent for the built-in world.
    #[schemars(with = "Option<crate::suite::ServersSchema>")]
    pub servers: Option<serde_json::Value>,
    /// The user's own servers: the seed (a file, a directory, or a `.tar`/`.tar.gz`/`.tgz`
    /// archive, relative to this file) of the scenarios that have no `seed_path`, and the
    /// seed the servers' tools are discovered on.
    pub seed_path: Option<PathBuf>,
    /// `openai` agent: ask for streamed responses (default false).
    pub stream: Option<bool>,
    /// `openai` agent: `native` function calling (default) or `prompted` (the tools in the
    /// system prompt, the calls read from the reply's text).
    pub tool_calling: Option<ToolCalling>,
    /// Model agents: offer `all` tools (default) or only the `scenario`'s groups and
    /// look-alikes in each scenario.
    pub tool_offer: Option<ToolOffer>,
    /// `gate`: run only the scenarios the change since the baseline can affect (`--impact`).
    pub impact: Option<bool>,
    /// Run the suite on the user's declarative mock tools instead of the built-in world.
    pub mocks: Option<MocksConfig>,
    /// What recorded cassettes leave out, and what `toolgate cassette verify` ignores.
    pub cassettes: Option<CassettesConfig>,
    /// The user simulator of the scenarios with a `simulated_user` (flags override it).
    pub user_simulator: Option<UserSimulatorConfig>,
}

/// The `user_simulator:` block of `toolgate.yaml`: the model that plays the simulated users.
/// Every key is optional; unknown keys are errors.
///
/// ```yaml
/// user_simulator:
///   model: gpt-4o-mini          # or --user-model
///   base_url: http://localhost:11434/v1   # OpenAI-compatible; or --user-base-url
///   temperature: 0              # the default
///   seed: 0                     # the default
///   max_tokens: 512             # the default; 0 sends none
/// ```
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UserSimulatorConfig {
    /// The pinned model name.
    pub model: Option<String>,
    /// An OpenAI-compatible base URL; `TOOLGATE_USER_BASE_URL` / `--user-base-url` win, and
    /// without any, `OPENAI_BASE_URL`.
    pub base_url: Option<String>,
    /// Sampling temperature, in 0..=2 (default 0).
    pub temperature: Option<f64>,
    /// Sampling seed (default 0).
    pub seed: Option<u64>,
    /// Output-token limit per message (default 512; 0 sends none).
    pub max_tokens: Option<u32>,
}

/// The `scoring:` section of `toolgate.yaml`. Every key is optional; unknown keys are errors.
///
/// ```yaml
/// scoring:
///   numbers: json_schema      # or bfcl: an integer parameter must be an integer literal
///   double_encoded: strict    # or lenient: decode a JSON string once where an object/array is wanted
///   loops: args_only          # or result_aware: identical calls with changing results are polling
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScoringFile {
    /// `json_schema` (default) or `bfcl`.
    pub numbers: Option<crate::json::NumberMode>,
    /// `strict` (default) or `lenient`.
    pub double_encoded: Option<crate::json::DoubleEncoded>,
    /// `args_only` (default) or `result_aware`.
    pub loops: Option<crate::score::LoopMode>,
}

/// The `mocks:` block of `toolgate.yaml`: the suite's tools are the mock catalog's.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MocksConfig {
    /// The mock catalog file (YAML or JSON), relative to the config file; see `docs/mocks.md`.
    pub catalog: PathBuf,
}

/// The `cassettes:` block of `toolgate.yaml` (docs/cassettes.md). Every key is optional.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CassettesConfig {
    /// Environment variables whose values are replaced by `[redacted]` in cassettes (the
    /// servers' own `env` and header values always are).
    #[serde(default)]
    pub redact_env: Vec<String>,
    /// Regular expressions (Rust `regex` syntax) whose matches in arguments and answers are
    /// replaced by `[redacted]`.
    #[serde(default)]
    pub redact_patterns: Vec<String>,
    /// JSONPath expressions (RFC 9535) of answer parts `toolgate cassette verify` does not
    /// compare (timestamps, generated ids), e.g. `$.result.created_at`.
    #[serde(default)]
    pub ignore_paths: Vec<String>,
    /// Regular expressions (Rust `regex` syntax) whose matches inside the strings of both
    /// answers `toolgate cassette verify` replaces by `[masked]` before comparing (a commit
    /// hash or a timestamp inside a text), e.g. `\b[0-9a-f]{40}\b`.
    #[serde(default)]
    pub masks: Vec<String>,
}

impl ConfigFile {
    /// Reads and parses a config file; errors name the file, the key and the line.
    pub(crate) fn load(path: &Path) -> Result<ConfigFile> {
        let text = crate::fs::read_text(path, "config", crate::defaults::MAX_SMALL_FILE_BYTES)?;
        Self::parse(&text, path)
    }

    /// Parses config text; `path` names it in errors.
    pub(crate) fn parse(text: &str, path: &Path) -> Result<ConfigFile> {
        if text.trim().is_empty() {
            return Ok(ConfigFile::default());
        }
        serde_saphyr::from_str(text)
            .map_err(|error| anyhow::anyhow!("`{}`: {error}", path.display()))
    }
}
