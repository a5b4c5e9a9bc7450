//! [`Settings`]: flags, environment and `toolgate.yaml` merged over the defaults and checked.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, Result, bail};

use super::{ConfigFile, FILE_NAME, ScoringFile};
use crate::agent::simulator::SimulatorConfig;
use crate::agent::{AgentKind, ToolCalling, ToolChoice};
use crate::cli::GateArgs;
use crate::defaults;
use crate::judge::JudgeConfig;
use crate::runner::ToolOffer;
use crate::score::OmittedDefaults;
use crate::score::usage::{Price, UsageLimits};

/// The settings of one `gate` run after flags, environment and file are merged and checked.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// The agent under test.
    pub agent: AgentKind,
    /// Model name.
    pub model: Option<String>,
    /// Provider base URL from the file (environment variables still win).
    pub base_url: Option<String>,
    /// See [`ConfigFile::api_key_header`].
    pub api_key_header: Option<String>,
    /// See [`ConfigFile::api_version`].
    pub api_version: Option<String>,
    /// See [`ConfigFile::tool_choice`].
    pub tool_choice: Option<ToolChoice>,
    /// See [`ConfigFile::parallel_tool_calls`].
    pub parallel_tool_calls: Option<bool>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Sampling seed.
    pub seed: Option<u64>,
    /// Output-token limit per turn as given; `None` means the default (4096), 0 none.
    pub max_tokens: Option<u32>,
    /// Model turns per run, at least 1 (default 12).
    pub max_turns: u32,
    /// The system prompt's text.
    pub system_prompt: Option<String>,
    /// `command` agent's command line.
    pub command: Option<String>,
    /// `replay` agent's recordings file.
    pub recordings: Option<PathBuf>,
    /// Tolerance band in percentage points (default 3).
    pub tolerance: f64,
    /// The pass-rate floor in percent (0..=100); `None`: no floor (the default).
    pub min_pass_rate: Option<f64>,
    /// Runs per scenario, at least 1 (default 1); with `adaptive`, the most a scenario gets.
    pub repeat: u32,
    /// Repeat adaptively: stop once the verdict of `repeat` runs per scenario is settled
    /// (default false).
    pub adaptive: bool,
    /// Scenario runs at the same time, at least 1 (default [`defaults::CONCURRENCY`]).
    pub concurrency: usize,
    /// Wall-time limit of one run (default 5 minutes).
    pub timeout: Duration,
    /// Timeout of one model request (default 2 minutes).
    pub request_timeout: Duration,
    /// Attempts per model request, at least 1 (default 4).
    pub max_attempts: u32,
    /// The scoring modes from the file (each its default when absent); the omitted-defaults
    /// rule comes from `--omitted-defaults`.
    pub scoring: ScoringFile,
    /// `openai` agent: streamed responses (`--stream` or `stream: true`).
    pub stream: bool,
    /// `openai` agent: how the model is offered the tools (`--tool-calling`, `tool_calling:`).
    pub tool_calling: ToolCalling,
    /// Model agents: which tools each scenario offers (`--tool-offer`, `tool_offer:`).
    pub tool_offer: ToolOffer,
    /// Run only the scenarios the change since the baseline can affect (`--impact`,
    /// `impact: true`); off by default.
    pub impact: bool,
    /// What an omitted argument with a schema default counts as (`--omitted-defaults`).
    pub omitted_defaults: OmittedDefaults,
    /// The judge, when `--judge-model` names one: where it is reached and where its verdicts
    /// are cached (under the suite root).
    pub judge: Option<JudgeConfig>,
    /// The user simulator's model, endpoint and sampling, when a model is named
    /// (`--user-model`, `user_simulator.model`).
    pub user_simulator: Option<SimulatorConfig>,
    /// Where the user simulator records its messages: `--user-record`, else the `--record`
    /// directory when a user model is named.
    pub user_record: Option<PathBuf>,
    /// Where the user simulator answers from, with no model (`--user-replay`).
    pub user_replay: Option<PathBuf>,
    /// The model's price from the price table (`--prices`, `prices:`), for a model agent
    /// with a table; `None` otherwise.
    pub price: Option<Price>,
    /// The gate's limits on model usage (`--max-tokens-per-run`, `--max-cost-per-run`,
    /// `--max-token-growth`).
    pub usage_limits: UsageLimits,
}

/// The price of a model agent's model from the table at `prices`; `None` without a table or
/// for agents without a model.
///
/// Errors: the table cannot be read or lacks the model (see [`super::prices::price_of`]), or
/// `--max-cost-per-run` is set for a model agent without a table.
fn model_price(
    args: &GateArgs,
    agent: AgentKind,
    model: Option<&str>,
    prices: Option<&Path>,
) -> Result<Option<Price>> {
    let price = match (prices, agent.api(), model) {
        (Some(path), Some(_), Some(model)) => Some(super::prices::price_of(path, model)?),
        (Some(path), _, _) => {
            // Checked all the same: a broken table must not pass the jobs without a model.
            super::prices::load(path)?;
            None
        }
        (None, _, _) => None,
    };
    if args.max_cost_per_run.is_some() && agent.api().is_some() && price.is_none() {
        bail!(
            "`--max-cost-per-run` needs the model's price: pass `--prices FILE` (model name -> {{prompt, completion}} in US dollars per million tokens)"
        );
    }
    Ok(price)
}

impl Settings {
    /// Merges `args` (flags and environment variables, already merged by clap) over `file`
    /// (read from `file_path`) over the defaults, and checks the result.
    ///
    /// Errors name the file and key for a bad file value, or the setting for a bad final
    /// value; a missing model, command or recordings file for agents that need one.
    pub(crate) fn resolve(
        args: &GateArgs,
        file: &ConfigFile,
        file_path: &Path,
    ) -> Result<Settings> {
        let in_file = |key: &str| format!("`{}`: {key}", file_path.display());
        let relative = |path: &PathBuf| match file_path.parent() {
            Some(dir) if path.is_relative() => dir.join(path),
            _ => path.clone(),
        };
        let duration = |value: &Option<String>, key: &str| -> Result<Option<Duration>> {
            value
                .as_deref()
                .map(|text| {
                    humantime::parse_duration(text)
                        .with_context(|| format!("{}: `{text}` is not a duration", in_file(key)))
                })
                .transpose()
        };
        let system_prompt = system_prompt(args, file, file_path)?;
        let tolerance = args.tolerance.or(file.tolerance).unwrap_or(3.0);
        if !(0.0..=100.0).contains(&tolerance) {
            bail!(
                "{}: {tolerance} is not a number of points in 0..=100",
                in_file("tolerance")
            );
        }
        let min_pass_rate = args.min_pass_rate.or(file.min_pass_rate);
        if let Some(percent) = min_pass_rate
            && !(0.0..=100.0).contains(&percent)
        {
            bail!(
                "{}: {percent} is not a percentage in 0..=100",
                in_file("min_pass_rate")
            );
        }
        let agent = args.agent.or(file.agent).unwrap_or(AgentKind::Reference);
        let model = args.model.clone().or_else(|| file.model.clone());
        let prices = args
            .prices
            .clone()
            .or_else(|| file.prices.as_ref().map(relative));
        let price = model_price(args, agent, model.as_deref(), prices.as_deref())?;
        let user_simulator = super::products::user_simulator_config(args, file, file_path)?;
        let settings = Settings {
            price,
            usage_limits: UsageLimits {
                max_tokens_per_run: args.max_tokens_per_run,
                max_cost_per_run: args.max_cost_per_run,
                max_token_growth_percent: args.max_token_growth,
            },
            agent,
            model,
            base_url: file.base_url.clone(),
            api_key_header: file.api_key_header.clone(),
            api_version: file.api_version.clone(),
            tool_choice: args.tool_choice.or(file.tool_choice),
            parallel_tool_calls: file.parallel_tool_calls,
            temperature: args.temperature.or(file.temperature),
            seed: args.seed.or(file.seed),
            max_tokens: args.max_tokens.or(file.max_tokens),
            max_turns: args
                .max_turns
                .or(file.max_turns)
                .unwrap_or(defaults::MAX_TURNS),
            system_prompt,
            command: args.command.clone().or_else(|| file.command.clone()),
            recordings: args
                .recordings
                .clone()
                .or_else(|| file.recordings.as_ref().map(relative)),
            tolerance,
            min_pass_rate,
            repeat: args.repeat.or(file.repeat).unwrap_or(1),
            adaptive: args.adaptive || file.adaptive.unwrap_or(false),
            concurrency: args
                .concurrency
                .map(usize::from)
                .or(file.concurrency)
                .unwrap_or(defaults::CONCURRENCY),
            timeout: match args.timeout {
                Some(timeout) => timeout,
                None => duration(&file.timeout, "timeout")?.unwrap_or(defaults::RUN_TIMEOUT),
            },
            request_timeout: match args.request_timeout {
                Some(timeout) => timeout,
                None => duration(&file.request_timeout, "request_timeout")?
                    .unwrap_or(defaults::REQUEST_TIMEOUT),
            },
            max_attempts: file.max_attempts.unwrap_or(defaults::MAX_ATTEMPTS),
            scoring: file.scoring.unwrap_or_default(),
            stream: args.stream || file.stream.unwrap_or(false),
            tool_calling: args.tool_calling.or(file.tool_calling).unwrap_or_default(),
            tool_offer: args.tool_offer.or(file.tool_offer).unwrap_or_default(),
            impact: args.impact || file.impact.unwrap_or(false),
            omitted_defaults: args.omitted_defaults,
            judge: args.judge.judge_model.as_ref().map(|model| {
                super::products::judge_config(
                    &args.judge,
                    model,
                    args.suite.root.join(&args.judge.judge_cache),
                )
            }),
            user_record: args
                .user
                .user_record
                .clone()
                .or_else(|| user_simulator.as_ref().and(args.record.clone())),
            user_simulator,
            user_replay: args.user.user_replay.clone(),
        };

        settings.check(args, file_path)?;
        Ok(settings)
    }

    /// Checks the merged settings; `args` tells whether a value came from a flag or from the
    /// file at `file_path`, so the error names where to fix it.
    fn check(&self, args: &GateArgs, file_path: &Path) -> Result<()> {
        let settings = self;
        let in_file = |key: &str| format!("`{}`: {key}", file_path.display());
        // A bad value names where it came from: the file's key unless a flag overrode it.
        let origin = |key: &str, from_file: bool| {
            if from_file {
                in_file(key)
            } else {
                format!("`--{}`", key.replace('_', "-"))
            }
        };
        if settings.tool_offer == ToolOffer::Scenario && settings.agent.api().is_none() {
            bail!(
                "{}: offering each scenario its own tools is for the model agents (`openai`, \
                 `anthropic`), not `{}`",
                origin("tool_offer", args.tool_offer.is_none()),
                settings.agent.as_str()
            );
        }
        if settings.tool_calling == ToolCalling::Prompted && settings.agent != AgentKind::Openai {
            bail!(
                "{}: prompted tool calling is for the `openai` agent, not `{}`",
                origin("tool_calling", args.tool_calling.is_none()),
                settings.agent.as_str()
            );
        }
        if let (Some(dir), None) = (&args.user.user_record, &settings.user_simulator) {
            bail!(
                "`--user-record {}` records the user simulator's messages, which needs a user \
                 model: `--user-model MODEL`, TOOLGATE_USER_MODEL or `user_simulator.model` in \
                 {FILE_NAME}",
                dir.display()
            );
        }
        if settings.adaptive && settings.repeat < 2 {
            bail!(
                "{}: adaptive repeats need a maximum of at least 2 runs per scenario (`--repeat K`, `repeat:`)",
                origin("adaptive", !args.adaptive)
            );
        }
        for (is_zero, key, from_file) in [
            (
                settings.max_turns == 0,
                "max_turns",
                args.max_turns.is_none(),
            ),
            (settings.repeat == 0, "repeat", args.repeat.is_none()),
            (settings.max_attempts == 0, "max_attempts", true),
            (
                settings.concurrency == 0,
                "concurrency",
                args.concurrency.is_none(),
            ),
        ] {
            if is_zero {
                bail!("{}: must be at least 1", origin(key, from_file));
            }
        }
        for (is_zero, key, from_file) in [
            (
                settings.timeout.is_zero(),
                "timeout",
                args.timeout.is_none(),
            ),
            (
                settings.request_timeout.is_zero(),
                "request_timeout",
                args.request_timeout.is_none(),
            ),
        ] {
            if is_zero {
                bail!("{}: must be longer than 0s", origin(key, from_file));
            }
        }
        if let Some(temperature) = settings.temperature
            && !(0.0..=2.0).contains(&temperature)
        {
            bail!(
                "{}: {temperature} is not a sampling temperature in 0..=2 (the OpenAI range; \
                 Anthropic accepts 0..=1)",
                origin("temperature", args.temperature.is_none())
            );
        }
        match settings.agent {
            _ if settings.agent.api().is_some() && settings.model.is_none() => bail!(
                "`--agent {}` needs a model: `--model NAME`, TOOLGATE_MODEL or `model:` in {FILE_NAME}",
                settings.agent.as_str()
            ),
            AgentKind::Command if settings.command.is_none() => bail!(
                "`--agent command` needs a command line: `--command CMD`, TOOLGATE_COMMAND or `command:` in {FILE_NAME}"
            ),
            AgentKind::Replay if settings.recordings.is_none() => bail!(
                "`--agent replay` needs recorded trajectories: `--recordings FILE`, TOOLGATE_RECORDINGS or `recordings:` in {FILE_NAME}"
            ),
            _ => {}
        }
        Ok(())
    }
}

/// The system prompt: `--system-prompt FILE`, else `--system-prompt-text`, else the file's
/// `system_prompt` or `system_prompt_file` (relative to `file_path`); `None` without one.
///
/// Errors: a prompt file that cannot be read, or both keys in the file.
fn system_prompt(args: &GateArgs, file: &ConfigFile, file_path: &Path) -> Result<Option<String>> {
    Ok(match (&args.system_prompt, &args.system_prompt_text) {
        (Some(path), _) => Some(read_prompt(path)?),
        (None, Some(text)) => Some(text.clone()),
        (None, None) => match (&file.system_prompt, &file.system_prompt_file) {
            (Some(_), Some(_)) => bail!(
                "`{}`: system_prompt: give `system_prompt` or `system_prompt_file`, not both",
                file_path.display()
            ),
            (Some(text), None) => Some(text.clone()),
            (None, Some(path)) => Some(read_prompt(&match file_path.parent() {
                Some(dir) if path.is_relative() => dir.join(path),
                _ => path.clone(),
            })?),
            (None, None) => None,
        },
    })
}

fn read_prompt(path: &Path) -> Result<String> {
    crate::fs::read_text(path, "system prompt", crate::defaults::MAX_SMALL_FILE_BYTES)
}

#[cfg(test)]
mod tests {
    //! Settings: flags beat the file, which beats defaults; bad keys are named with their origin.

    use clap::Parser as _;

    use super::*;
    use crate::cli::{Cli, Command};

    fn args(flags: &[&str]) -> GateArgs {
        let mut argv = vec!["toolgate", "gate"];
        argv.extend_from_slice(flags);
        match Cli::try_parse_from(argv).expect("valid flags").command {
            Command::Gate(args) => *args,
            other => panic!("not gate: {other:?}"),
        }
    }

    const PATH: &str = "ci/toolgate.yaml";

    fn file(text: &str) -> ConfigFile {
        ConfigFile::parse(text, Path::new(PATH)).expect("valid config")
    }

    #[test]
    fn flags_win_over_the_file_which_wins_over_defaults() {
        let file = file(
            "agent: openai\nmodel: gpt-file\nrepeat: 3\nconcurrency: 2\ntimeout: 90s\n\
             temperature: 0.5\nseed: 9\nsystem_prompt: Be brief.\ntolerance: 5\n\
             min_pass_rate: 90\n",
        );
        let settings = Settings::resolve(
            &args(&["--model", "gpt-flag", "--repeat", "5"]),
            &file,
            Path::new(PATH),
        )
        .expect("valid");
        assert_eq!(settings.agent, AgentKind::Openai);
        assert_eq!(settings.model.as_deref(), Some("gpt-flag"));
        assert_eq!(settings.repeat, 5);
        assert_eq!(settings.concurrency, 2);
        assert_eq!(settings.timeout, Duration::from_secs(90));
        assert_eq!(settings.temperature, Some(0.5));
        assert_eq!(settings.seed, Some(9));
        assert_eq!(settings.system_prompt.as_deref(), Some("Be brief."));
        assert_eq!(settings.tolerance, 5.0);
        assert_eq!(settings.min_pass_rate, Some(90.0));
        assert_eq!(settings.max_turns, 12);
        let floor = Settings::resolve(&args(&["--min-pass-rate", "97.5%"]), &file, Path::new(PATH))
            .expect("valid");
        assert_eq!(floor.min_pass_rate, Some(97.5));

        let defaults =
            Settings::resolve(&args(&[]), &ConfigFile::default(), Path::new(PATH)).expect("valid");
        assert_eq!(defaults.agent, AgentKind::Reference);
        assert_eq!(defaults.repeat, 1);
        assert_eq!(defaults.concurrency, crate::defaults::CONCURRENCY);
        assert_eq!(defaults.timeout, Duration::from_secs(300));
        assert_eq!(defaults.min_pass_rate, None);
    }

    #[test]
    fn a_temperature_that_is_not_a_number_in_range_is_refused_naming_its_origin() {
        for (text, shown) in [
            (".nan", "NaN"),
            (".inf", "inf"),
            ("-0.5", "-0.5"),
            ("2.5", "2.5"),
        ] {
            let file = file(&format!("temperature: {text}\n"));
            let error =
                Settings::resolve(&args(&[]), &file, Path::new(PATH)).expect_err("out of range");
            assert_eq!(
                error.to_string(),
                format!(
                    "`{PATH}`: temperature: {shown} is not a sampling temperature in 0..=2 \
                     (the OpenAI range; Anthropic accepts 0..=1)"
                )
            );
        }
        let error = Settings::resolve(
            &args(&["--temperature", "NaN"]),
            &ConfigFile::default(),
            Path::new(PATH),
        )
        .expect_err("NaN flag");
        assert!(
            error.to_string().starts_with("`--temperature`: NaN is not"),
            "{error}"
        );
        let file = file("temperature: 2\n");
        let settings =
            Settings::resolve(&args(&[]), &file, Path::new(PATH)).expect("2 is in range");
        assert_eq!(settings.temperature, Some(2.0));
    }

    #[test]
    fn unknown_keys_are_errors_naming_the_file_and_line() {
        let error = ConfigFile::parse("model: m\nrepeats: 3\n", Path::new(PATH))
            .expect_err("misspelled key");
        let message = error.to_string();
        assert!(message.starts_with("`ci/toolgate.yaml`: "), "{message}");
        assert!(message.contains("unknown field `repeats`"), "{message}");
        assert!(message.contains("line 2"), "{message}");
    }

    /// The scoring modes are explicit settings; a misspelled mode or key fails the
    /// load naming the file and line.
    #[test]
    fn scoring_modes_come_from_the_file() {
        let settings = Settings::resolve(
            &args(&[]),
            &file("scoring:\n  numbers: bfcl\n  double_encoded: lenient\n  loops: result_aware\n"),
            Path::new(PATH),
        )
        .expect("valid");
        assert_eq!(
            settings.scoring,
            ScoringFile {
                numbers: Some(crate::json::NumberMode::Bfcl),
                double_encoded: Some(crate::json::DoubleEncoded::Lenient),
                loops: Some(crate::score::LoopMode::ResultAware),
            }
        );
        let defaults =
            Settings::resolve(&args(&[]), &ConfigFile::default(), Path::new(PATH)).expect("valid");
        assert_eq!(defaults.scoring, ScoringFile::default());
        assert!(!defaults.stream);
        let streamed =
            Settings::resolve(&args(&[]), &file("stream: true\n"), Path::new(PATH)).expect("valid");
        assert!(streamed.stream);
        let flag = Settings::resolve(
            &args(&["--stream"]),
            &ConfigFile::default(),
            Path::new(PATH),
        )
        .expect("valid");
        assert!(flag.stream);
        for (text, wanted) in [
            ("scoring:\n  numbers: python\n", "unknown variant `python`"),
            ("scoring:\n  loop: args_only\n", "unknown field `loop`"),
        ] {
            let message = ConfigFile::parse(text, Path::new(PATH))
                .expect_err("a bad scoring section")
                .to_string();
            assert!(message.starts_with("`ci/toolgate.yaml`: "), "{message}");
            assert!(message.contains(wanted), "{message}");
            assert!(message.contains("line 2"), "{message}");
        }
    }

    #[test]
    fn prompted_tool_calling_is_for_the_openai_agent_only() {
        let file_set = Settings::resolve(
            &args(&[]),
            &file("agent: openai\nmodel: m\ntool_calling: prompted\n"),
            Path::new(PATH),
        )
        .expect("valid");
        assert_eq!(file_set.tool_calling, ToolCalling::Prompted);
        let default =
            Settings::resolve(&args(&[]), &ConfigFile::default(), Path::new(PATH)).expect("valid");
        assert_eq!(default.tool_calling, ToolCalling::Native);
        let error = Settings::resolve(
            &args(&["--agent", "anthropic", "--tool-calling", "prompted"]),
            &ConfigFile::default(),
            Path::new(PATH),
        )
        .expect_err("anthropic has no prompted mode");
        assert_eq!(
            error.to_string(),
            "`--tool-calling`: prompted tool calling is for the `openai` agent, not `anthropic`"
        );
        let error = Settings::resolve(
            &args(&["--tool-offer", "scenario"]),
            &file("agent: command\ncommand: ./agent\n"),
            Path::new(PATH),
        )
        .expect_err("a command agent lists its tools itself");
        assert_eq!(
            error.to_string(),
            "`--tool-offer`: offering each scenario its own tools is for the model agents \
             (`openai`, `anthropic`), not `command`"
        );
        let error = Settings::resolve(
            &args(&[]),
            &file("tool_calling: prompted\n"),
            Path::new(PATH),
        )
        .expect_err("the reference agent has no model");
        assert_eq!(
            error.to_string(),
            "`ci/toolgate.yaml`: tool_calling: prompted tool calling is for the `openai` agent, not `reference`"
        );
    }

    #[test]
    fn bad_values_name_the_key() {
        let error = Settings::resolve(&args(&[]), &file("timeout: soon\n"), Path::new(PATH))
            .expect_err("bad duration");
        assert_eq!(
            error.to_string(),
            "`ci/toolgate.yaml`: timeout: `soon` is not a duration"
        );
        let error = Settings::resolve(&args(&[]), &file("agent: anthropic\n"), Path::new(PATH))
            .expect_err("no model");
        assert_eq!(
            error.to_string(),
            "`--agent anthropic` needs a model: `--model NAME`, TOOLGATE_MODEL or `model:` in toolgate.yaml"
        );
        let error = Settings::resolve(&args(&[]), &file("repeat: 0\n"), Path::new(PATH))
            .expect_err("zero repeat");
        assert_eq!(
            error.to_string(),
            "`ci/toolgate.yaml`: repeat: must be at least 1"
        );
        let error = Settings::resolve(&args(&[]), &file("timeout: 0s\n"), Path::new(PATH))
            .expect_err("zero timeout");
        assert_eq!(
            error.to_string(),
            "`ci/toolgate.yaml`: timeout: must be longer than 0s"
        );
        let error = Settings::resolve(&args(&["--max-turns", "0"]), &file(""), Path::new(PATH))
            .expect_err("zero turns");
        assert_eq!(error.to_string(), "`--max-turns`: must be at least 1");
    }

    #[test]
    fn file_paths_are_relative_to_the_config_file() {
        let settings = Settings::resolve(
            &args(&[]),
            &file("agent: replay\nrecordings: runs/trace.jsonl\n"),
            Path::new(PATH),
        )
        .expect("valid");
        assert_eq!(
            settings.recordings,
            Some(PathBuf::from("ci/runs/trace.jsonl"))
        );
    }

    #[test]
    fn the_price_table_is_found_beside_the_file_and_prices_only_model_agents() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(
            dir.path().join("prices.yaml"),
            "gpt-file: {prompt: 2.5, completion: 10}\n",
        )
        .expect("write");
        let file_path = dir.path().join("toolgate.yaml");
        let config = file("agent: openai\nmodel: gpt-file\nprices: prices.yaml\n");
        let settings = Settings::resolve(&args(&[]), &config, &file_path).expect("valid");
        assert_eq!(
            settings.price,
            Some(Price {
                prompt: 2.5,
                completion: 10.0
            })
        );
        let reference = Settings::resolve(&args(&["--agent", "reference"]), &config, &file_path)
            .expect("valid");
        assert_eq!(reference.price, None);
        let broken = Settings::resolve(
            &args(&["--agent", "reference", "--prices", "missing.yaml"]),
            &config,
            &file_path,
        )
        .expect_err("a missing table fails every agent")
        .to_string();
        assert!(broken.contains("missing.yaml"), "{broken}");
        let error = Settings::resolve(&args(&["--model", "other"]), &config, &file_path)
            .expect_err("not priced")
            .to_string();
        assert!(
            error.contains("has no entry for the model `other` (it prices: gpt-file)"),
            "{error}"
        );
        let error = Settings::resolve(
            &args(&["--max-cost-per-run", "0.01"]),
            &file("agent: openai\nmodel: m\n"),
            &file_path,
        )
        .expect_err("no price")
        .to_string();
        assert!(
            error.starts_with("`--max-cost-per-run` needs the model's price"),
            "{error}"
        );
    }

    #[test]
    fn the_user_simulator_comes_from_flags_over_the_file_and_needs_a_model_to_record() {
        let block = file(
            "user_simulator:\n  model: sim-file\n  base_url: http://sim.file:1/v1\n  \
             temperature: 0.3\n  seed: 7\n  max_tokens: 0\n",
        );
        let settings =
            Settings::resolve(&args(&["--record", "rec"]), &block, Path::new(PATH)).expect("valid");
        let config = settings.user_simulator.as_ref().expect("a user model");
        assert_eq!(config.model, "sim-file");
        assert_eq!(config.endpoint.base_url, "http://sim.file:1/v1");
        assert_eq!(
            (config.temperature, config.seed, config.max_tokens),
            (0.3, Some(7), None)
        );
        // With a user model, `--record` records the simulator too.
        assert_eq!(settings.user_record.as_deref(), Some(Path::new("rec")));

        let flagged = Settings::resolve(
            &args(&[
                "--user-model",
                "sim-flag",
                "--user-base-url",
                "http://sim.flag:2/v1",
            ]),
            &block,
            Path::new(PATH),
        )
        .expect("valid");
        let config = flagged.user_simulator.expect("a user model");
        assert_eq!(config.model, "sim-flag");
        assert_eq!(config.endpoint.base_url, "http://sim.flag:2/v1");
        assert_eq!(flagged.user_record, None);

        let none = Settings::resolve(
            &args(&["--record", "rec"]),
            &ConfigFile::default(),
            Path::new(PATH),
        )
        .expect("valid");
        assert!(none.user_simulator.is_none() && none.user_record.is_none());
        let error = Settings::resolve(
            &args(&["--user-record", "users"]),
            &ConfigFile::default(),
            Path::new(PATH),
        )
        .expect_err("nothing to record");
        assert_eq!(
            error.to_string(),
            "`--user-record users` records the user simulator's messages, which needs a user \
             model: `--user-model MODEL`, TOOLGATE_USER_MODEL or `user_simulator.model` in \
             toolgate.yaml"
        );
        let error = Settings::resolve(
            &args(&[]),
            &file("user_simulator:\n  model: m\n  temperature: 3\n"),
            Path::new(PATH),
        )
        .expect_err("too hot");
        assert_eq!(
            error.to_string(),
            format!(
                "`{PATH}`: user_simulator.temperature: 3 is not a sampling temperature in 0..=2"
            )
        );
        let error = ConfigFile::parse("user_simulator:\n  modle: m\n", Path::new(PATH))
            .expect_err("misspelled");
        assert!(
            error.to_string().contains("unknown field `modle`"),
            "{error}"
        );
    }
}
