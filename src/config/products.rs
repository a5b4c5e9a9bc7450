//! What the validated [`Settings`] build: the agent's model endpoint, the agent, the judge,
//! the scoring rules, the run options, the run block of the results and the measured subject
//! of the pins. Each product is built here once, so the run, the results and the pins never
//! disagree about what was measured.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;

use super::{ConfigFile, Settings};
use crate::agent::simulator::{Simulator, SimulatorConfig, SimulatorPin};
use crate::agent::{Agent, AgentKind, ToolCalling, anthropic, command, openai, replay};
use crate::cli::{GateArgs, JudgeArgs};
use crate::judge::{Judge, JudgeConfig};
use crate::provider::{Api, Endpoint, EndpointSources};
use crate::results::RunMeta;
use crate::results::pins::Subject;
use crate::runner::RunOptions;
use crate::score::ScoringOptions;

/// How to reach the judge model `model` named by the `--judge-*` flags (the key from
/// `TOOLGATE_JUDGE_API_KEY`, else the API's; the `api-version` and key header from
/// `TOOLGATE_JUDGE_API_VERSION` and `TOOLGATE_JUDGE_API_KEY_HEADER`), its verdicts cached in
/// `cache_dir`; one config for the run judge and the description judge of `lint`.
pub(crate) fn judge_config(args: &JudgeArgs, model: &str, cache_dir: PathBuf) -> JudgeConfig {
    let sources = EndpointSources {
        flag_base_url: args.judge_base_url.as_deref(),
        key_variable: Some("TOOLGATE_JUDGE_API_KEY"),
        key_header_variable: Some("TOOLGATE_JUDGE_API_KEY_HEADER"),
        api_version_variable: Some("TOOLGATE_JUDGE_API_VERSION"),
        ..EndpointSources::default()
    };
    let endpoint = Endpoint::resolve(args.judge_provider, sources, &|name| {
        std::env::var(name).ok()
    });
    JudgeConfig {
        endpoint,
        model: model.to_owned(),
        cache_dir: Some(cache_dir),
        request_timeout: crate::defaults::REQUEST_TIMEOUT,
        max_attempts: crate::defaults::MAX_ATTEMPTS,
    }
}

/// The user simulator's config from `--user-model` / `--user-base-url` over the file's
/// `user_simulator:` block (read from `file_path`) over the defaults (temperature 0, seed 0,
/// 512 output tokens); the key from `TOOLGATE_USER_API_KEY`, else `OPENAI_API_KEY`, and the
/// key header and `api-version` from `TOOLGATE_USER_API_KEY_HEADER` and
/// `TOOLGATE_USER_API_VERSION`. `None` when no model is named.
///
/// Errors: a temperature outside 0..=2, naming the file's key.
pub(crate) fn user_simulator_config(
    args: &GateArgs,
    file: &ConfigFile,
    file_path: &Path,
) -> Result<Option<SimulatorConfig>> {
    let block = file.user_simulator.clone().unwrap_or_default();
    let Some(model) = args.user.user_model.clone().or(block.model) else {
        return Ok(None);
    };
    // The file's URL is meant for the simulator: it wins over `OPENAI_BASE_URL`, which is
    // usually the agent's.
    let base_url = args
        .user
        .user_base_url
        .as_deref()
        .or(block.base_url.as_deref());
    let sources = EndpointSources {
        flag_base_url: base_url,
        key_variable: Some("TOOLGATE_USER_API_KEY"),
        key_header_variable: Some("TOOLGATE_USER_API_KEY_HEADER"),
        api_version_variable: Some("TOOLGATE_USER_API_VERSION"),
        ..EndpointSources::default()
    };
    let endpoint = Endpoint::resolve(Api::Openai, sources, &|name| std::env::var(name).ok());
    let mut config = SimulatorConfig::new(endpoint, &model);
    if let Some(temperature) = block.temperature {
        if !(0.0..=2.0).contains(&temperature) {
            anyhow::bail!(
                "`{}`: user_simulator.temperature: {temperature} is not a sampling temperature \
                 in 0..=2",
                file_path.display()
            );
        }
        config.temperature = temperature;
    }
    if let Some(seed) = block.seed {
        config.seed = Some(seed);
    }
    config.max_tokens = match block.max_tokens {
        None => Some(crate::agent::simulator::DEFAULT_MAX_TOKENS),
        Some(0) => None,
        Some(limit) => Some(limit),
    };
    Ok(Some(config))
}

impl Settings {
    /// The user simulator of a run whose scenarios have simulated users: one that answers
    /// from recordings (`--user-replay DIR`, else the cassette directory `cassettes` of a
    /// replay when it has a `users/` directory and no `--user-record` is asked for), else the
    /// configured model (recording into `user_record`), else `None`.
    ///
    /// Errors: recordings that cannot be read or disagree, or a model config the simulator
    /// refuses (see [`Simulator::new`]).
    pub(crate) fn simulator(&self, cassettes: Option<&Path>) -> Result<Option<Simulator>> {
        if let Some(dir) = self.user_replay_dir(cassettes) {
            return Ok(Some(Simulator::replay(dir)?));
        }
        self.user_simulator
            .clone()
            .map(|config| Simulator::new(config, self.user_record.clone()))
            .transpose()
            .map_err(anyhow::Error::from)
    }

    /// What [`Settings::simulator`] pins, without building it: the recordings' simulator in
    /// a replay, else the configured one.
    ///
    /// Errors: recordings that cannot be read or disagree.
    pub(crate) fn simulator_pin(&self, cassettes: Option<&Path>) -> Result<Option<SimulatorPin>> {
        match self.user_replay_dir(cassettes) {
            Some(dir) => crate::agent::simulator::recording::pin_of(&dir),
            None => Ok(self.user_simulator.as_ref().map(SimulatorConfig::pin)),
        }
    }

    /// The directory the user simulator answers from, if it replays (see
    /// [`Settings::simulator`]).
    fn user_replay_dir(&self, cassettes: Option<&Path>) -> Option<PathBuf> {
        self.user_replay.clone().or_else(|| {
            cassettes
                .filter(|dir| {
                    self.user_record.is_none()
                        && dir
                            .join(crate::agent::simulator::recording::SUBDIRECTORY)
                            .is_dir()
                })
                .map(Path::to_path_buf)
        })
    }

    /// Where the agent's model is reached, for the model-backed agents (`None` for the
    /// others): the one resolution that the agent, `run.provider_host` and the provider pin
    /// all use. `env` reads an environment variable.
    pub(crate) fn endpoint(&self, env: &dyn Fn(&str) -> Option<String>) -> Option<Endpoint> {
        let sources = EndpointSources {
            file_base_url: self.base_url.as_deref(),
            file_key_header: self.api_key_header.as_deref(),
            file_api_version: self.api_version.as_deref(),
            ..EndpointSources::default()
        };
        Some(Endpoint::resolve(self.agent.api()?, sources, env))
    }

    /// The agent under test, its model reached at `endpoint` (from [`Settings::endpoint`]).
    ///
    /// Errors: a model agent's config it rejects (see `OpenAiAgent::new`), a recordings
    /// file that cannot be read, or a model-backed agent without an endpoint of its API.
    pub(crate) fn agent(&self, endpoint: Option<&Endpoint>) -> Result<Agent> {
        let model = || self.model.clone().unwrap_or_default();
        let endpoint = |api: Api| {
            endpoint
                .filter(|endpoint| endpoint.api == api)
                .cloned()
                .ok_or_else(|| anyhow::anyhow!("the `{}` agent needs its endpoint", api.as_str()))
        };
        Ok(match self.agent {
            AgentKind::Reference => Agent::Reference,
            AgentKind::Openai => {
                Agent::OpenAi(Box::new(openai::OpenAiAgent::new(openai::OpenAiConfig {
                    endpoint: endpoint(Api::Openai)?,
                    model: model(),
                    temperature: self.temperature,
                    max_tokens: self.output_limit(),
                    seed: self.seed,
                    tool_choice: self.tool_choice,
                    parallel_tool_calls: self.parallel_tool_calls,
                    max_turns: self.max_turns,
                    request_timeout: self.request_timeout,
                    max_attempts: self.max_attempts,
                    system_prompt: self.system_prompt.clone(),
                    stream: self.stream,
                    tool_calling: self.tool_calling,
                })?))
            }
            AgentKind::Anthropic => Agent::Anthropic(Box::new(anthropic::AnthropicAgent::new(
                anthropic::AnthropicConfig {
                    endpoint: endpoint(Api::Anthropic)?,
                    model: model(),
                    temperature: self.temperature,
                    max_tokens: self.output_limit(),
                    tool_choice: self.tool_choice,
                    parallel_tool_calls: self.parallel_tool_calls,
                    max_turns: self.max_turns,
                    request_timeout: self.request_timeout,
                    max_attempts: self.max_attempts,
                    system_prompt: self.system_prompt.clone(),
                },
            )?)),
            AgentKind::Command => Agent::Command(command::CommandAgent {
                command: self.command.clone().unwrap_or_default(),
                model: self.model.clone(),
                system_prompt: self.system_prompt.clone(),
            }),
            AgentKind::Replay => {
                let path = self.recordings.clone().unwrap_or_default();
                Agent::Replay(replay::Recordings::load(&path)?)
            }
        })
    }

    /// The output limit a model agent sends: `--max-tokens` (or `max_tokens:`), else
    /// [`crate::defaults::MAX_TOKENS`]; 0 sends none (the provider's own default; Anthropic,
    /// which requires one, then gets the default).
    fn output_limit(&self) -> Option<u32> {
        match self.max_tokens {
            None => Some(crate::defaults::MAX_TOKENS),
            Some(0) => None,
            Some(limit) => Some(limit),
        }
    }

    /// The judge, when `--judge-model` names one.
    ///
    /// Errors: a judge base URL that is not http(s), or an HTTP client that cannot be built.
    pub(crate) fn judge(&self) -> Result<Option<Judge>> {
        self.judge.clone().map(Judge::new).transpose()
    }

    /// The scoring rules: the file's number and double-encoding modes and loop rule, and the
    /// omitted-defaults rule of `--omitted-defaults`.
    pub(crate) fn scoring(&self) -> ScoringOptions {
        ScoringOptions {
            omitted_defaults: self.omitted_defaults,
            numbers: self.scoring.numbers.unwrap_or_default(),
            double_encoded: self.scoring.double_encoded.unwrap_or_default(),
            loops: self.scoring.loops.unwrap_or_default(),
        }
    }

    /// The runner's limits and rules, with the `judge` (from [`Settings::judge`]) and, for
    /// `--tool-offer scenario`, the tools each scenario offers by scenario id.
    pub(crate) fn run_options(
        &self,
        judge: Option<Arc<Judge>>,
        offered: Option<HashMap<String, Vec<String>>>,
    ) -> RunOptions {
        RunOptions {
            concurrency: self.concurrency,
            run_timeout: self.timeout,
            repeat: self.repeat,
            scoring: self.scoring(),
            judge,
            offered: offered.map(Arc::new),
            price: self.price,
            ..RunOptions::default()
        }
    }

    /// The run block of `results.json` for run `run_id`, the model reached at `endpoint`;
    /// `catalog_tokens` is left for the caller, who knows the catalog.
    pub(crate) fn run_meta(&self, run_id: String, endpoint: Option<&Endpoint>) -> RunMeta {
        let model_backed = self.agent.api().is_some();
        RunMeta {
            usage_unchecked: Vec::new(),
            price: self.price,
            run_id: Some(run_id),
            agent: self.agent.as_str().to_owned(),
            model: self.model.clone(),
            provider_host: endpoint.and_then(Endpoint::host),
            temperature: self.temperature,
            seed: self.seed,
            max_tokens: match self.agent.api() {
                Some(Api::Openai) => self.output_limit(),
                Some(Api::Anthropic) => {
                    Some(self.output_limit().unwrap_or(anthropic::DEFAULT_MAX_TOKENS))
                }
                None => self.max_tokens,
            },
            max_turns: Some(self.max_turns),
            tool_choice: self.tool_choice.map(|choice| choice.as_str().to_owned()),
            tool_calling: (self.agent == AgentKind::Openai)
                .then(|| self.tool_calling.as_str().to_owned()),
            catalog_tokens: None,
            tool_offer: model_backed.then(|| self.tool_offer.as_str().to_owned()),
            system_prompt_sha256: self.system_prompt.as_deref().map(crate::fs::sha256_hex),
            repeat: self.repeat,
            adaptive: None,
            concurrency: self.concurrency,
            run_timeout_ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
            scoring: self.scoring(),
            interrupted: false,
            not_run: Vec::new(),
            impact: None,
            cached_from: None,
            user_simulator: None,
        }
    }

    /// The measured side of the run, for the pins: the model, the provider (its pin for a
    /// model reached at `endpoint`, else the agent's name), the system prompt, prompted tool
    /// calling, and the judge model.
    pub(crate) fn subject(&self, endpoint: Option<&Endpoint>) -> Subject {
        let provider = match (self.agent.api(), endpoint) {
            (Some(_), Some(endpoint)) => endpoint.pin(),
            (Some(_), None) => "unknown".to_owned(),
            (None, _) => self.agent.as_str().to_owned(),
        };
        Subject {
            model: self.model.clone(),
            provider,
            system_prompt: self.system_prompt.clone(),
            tool_calling: (self.agent == AgentKind::Openai
                && self.tool_calling == ToolCalling::Prompted)
                .then(|| ToolCalling::Prompted.as_str().to_owned()),
            judge_model: self.judge.as_ref().map(|judge| judge.model.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Products: the pin and the run block name the endpoint the agent uses, Azure included.

    use std::path::Path;

    use clap::Parser as _;

    use super::*;
    use crate::cli::{Cli, Command, GateArgs};
    use crate::config::ConfigFile;

    fn gate_args() -> GateArgs {
        match Cli::try_parse_from(["toolgate", "gate"])
            .expect("valid flags")
            .command
        {
            Command::Gate(args) => *args,
            other => panic!("not gate: {other:?}"),
        }
    }

    /// Regression: an Anthropic run was pinned as `openai-compatible api.anthropic.com`, and
    /// the pin ignored `base_url` from toolgate.yaml while `run.provider_host` used it.
    #[test]
    fn the_pin_and_the_run_block_name_the_endpoint_the_agent_uses() {
        let path = Path::new("toolgate.yaml");
        let file = ConfigFile::parse(
            "agent: anthropic\nmodel: claude-test\nbase_url: http://127.0.0.1:9/\n",
            path,
        )
        .expect("valid config");
        let args = gate_args();
        let settings = Settings::resolve(&args, &file, path).expect("valid settings");
        let endpoint = settings.endpoint(&|_| None).expect("a model-backed agent");
        let agent = settings.agent(Some(&endpoint)).expect("the agent builds");
        assert!(matches!(agent, Agent::Anthropic(_)));
        assert_eq!(
            settings.subject(Some(&endpoint)).provider,
            "anthropic 127.0.0.1:9"
        );
        let meta = settings.run_meta("run-1".to_owned(), Some(&endpoint));
        assert_eq!(meta.provider_host.as_deref(), Some("127.0.0.1:9"));
        assert_eq!(meta.max_tokens, Some(crate::defaults::MAX_TOKENS));

        let from_env = settings
            .endpoint(&|name| {
                (name == "ANTHROPIC_BASE_URL").then(|| "https://proxy.example:8443".to_owned())
            })
            .expect("a model-backed agent");
        assert_eq!(from_env.pin(), "anthropic proxy.example:8443");
        let reference = Settings::resolve(&args, &ConfigFile::default(), path).expect("valid");
        assert_eq!(reference.endpoint(&|_| None), None);
        assert_eq!(reference.subject(None).provider, "reference");
    }

    /// The file's `api_version` and `api_key_header` reach the OpenAI endpoint; the
    /// environment's `OPENAI_API_VERSION` wins over the file's, as it always did.
    #[test]
    fn the_files_azure_settings_reach_the_endpoint_and_the_environment_wins() {
        let path = Path::new("toolgate.yaml");
        let file = ConfigFile::parse(
            "agent: openai\nmodel: gpt\napi_version: 2024-01-01\napi_key_header: api-key\n",
            path,
        )
        .expect("valid config");
        let settings = Settings::resolve(&gate_args(), &file, path).expect("valid settings");
        let endpoint = settings.endpoint(&|_| None).expect("a model-backed agent");
        assert_eq!(endpoint.api_version.as_deref(), Some("2024-01-01"));
        assert_eq!(endpoint.key_header.as_deref(), Some("api-key"));
        let from_env = settings
            .endpoint(&|name| (name == "OPENAI_API_VERSION").then(|| "2024-10-21".to_owned()))
            .expect("a model-backed agent");
        assert_eq!(from_env.api_version.as_deref(), Some("2024-10-21"));
    }
}
