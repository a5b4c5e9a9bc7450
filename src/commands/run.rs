//! `gate`'s running half: the agent under test and its model endpoint, the judge, the run
//! itself, the trace written in suite order, and the spans it exports.

use std::io::Write;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};

use crate::agent::{Agent, AgentKind, ToolCalling, anthropic, command, openai, replay};
use crate::cli::GateArgs;
use crate::config::{ConfigFile, Settings};
use crate::exit::Exit;
use crate::fs::write_atomic;
use crate::judge::Judge;
use crate::provider::{Api, Endpoint, EndpointSources};
use crate::report;
use crate::results::pins::{Pins, Subject};
use crate::results::shard;
use crate::results::{NotRun, RunMeta, RunReport};
use crate::runner::{self, RunOptions};
use crate::scenario::Scenario;
use crate::score::ScoringOptions;

use super::{gating, interrupted, judge_config, new_run_id, runtime, suite};

/// Where the agent's model is reached, for the model-backed agents: the one resolution that
/// the agent, `run.provider_host` and the provider pin all use.
/// `env` reads an environment variable.
fn model_endpoint(settings: &Settings, env: &dyn Fn(&str) -> Option<String>) -> Option<Endpoint> {
    let api = match settings.agent {
        AgentKind::Openai => Api::Openai,
        AgentKind::Anthropic => Api::Anthropic,
        AgentKind::Reference | AgentKind::Command | AgentKind::Replay => return None,
    };
    let sources = EndpointSources {
        file_base_url: settings.base_url.as_deref(),
        file_key_header: settings.api_key_header.as_deref(),
        file_api_version: settings.api_version.as_deref(),
        ..EndpointSources::default()
    };
    Some(Endpoint::resolve(api, sources, env))
}

fn build_agent(settings: &Settings, endpoint: Option<&Endpoint>) -> Result<Agent> {
    let model = || settings.model.clone().unwrap_or_default();
    let endpoint = |api| {
        endpoint
            .filter(|endpoint| endpoint.api == api)
            .cloned()
            .expect("model_endpoint resolves an endpoint for every model-backed agent")
    };
    Ok(match settings.agent {
        AgentKind::Reference => Agent::Reference,
        AgentKind::Openai => {
            let mut config = openai::OpenAiConfig::from_env(&model());
            config.endpoint = endpoint(Api::Openai);
            config.max_turns = settings.max_turns;
            config.temperature = settings.temperature;
            config.seed = settings.seed;
            config.max_tokens = output_limit(settings);
            config.tool_choice = settings.tool_choice;
            config.parallel_tool_calls = settings.parallel_tool_calls;
            config.stream = settings.stream;
            config.tool_calling = settings.tool_calling;
            config.request_timeout = settings.request_timeout;
            config.max_attempts = settings.max_attempts;
            config.system_prompt = settings.system_prompt.clone();
            Agent::OpenAi(Box::new(openai::OpenAiAgent::new(config)?))
        }
        AgentKind::Anthropic => {
            let mut config = anthropic::AnthropicConfig::from_env(&model());
            config.endpoint = endpoint(Api::Anthropic);
            config.max_turns = settings.max_turns;
            config.temperature = settings.temperature;
            config.max_tokens = output_limit(settings);
            config.tool_choice = settings.tool_choice;
            config.parallel_tool_calls = settings.parallel_tool_calls;
            config.request_timeout = settings.request_timeout;
            config.max_attempts = settings.max_attempts;
            config.system_prompt = settings.system_prompt.clone();
            Agent::Anthropic(Box::new(anthropic::AnthropicAgent::new(config)?))
        }
        AgentKind::Command => Agent::Command(command::CommandAgent {
            command: settings.command.clone().unwrap_or_default(),
            model: settings.model.clone(),
            system_prompt: settings.system_prompt.clone(),
        }),
        AgentKind::Replay => {
            let path = settings.recordings.clone().unwrap_or_default();
            Agent::Replay(replay::Recordings::load(&path)?)
        }
    })
}

/// The output limit a model agent sends: `--max-tokens` (or `max_tokens:`), else
/// [`defaults::MAX_TOKENS`]; 0 sends none (the provider's own default; Anthropic, which
/// requires one, then gets the default).
fn output_limit(settings: &Settings) -> Option<u32> {
    match settings.max_tokens {
        None => Some(crate::defaults::MAX_TOKENS),
        Some(0) => None,
        Some(limit) => Some(limit),
    }
}

fn run_meta(settings: &Settings, endpoint: Option<&Endpoint>) -> RunMeta {
    let provider_host = endpoint.and_then(Endpoint::host);
    RunMeta {
        run_id: Some(new_run_id()),
        agent: settings.agent.as_str().to_owned(),
        model: settings.model.clone(),
        provider_host,
        temperature: settings.temperature,
        seed: settings.seed,
        max_tokens: match settings.agent {
            AgentKind::Openai => output_limit(settings),
            AgentKind::Anthropic => {
                Some(output_limit(settings).unwrap_or(anthropic::DEFAULT_MAX_TOKENS))
            }
            AgentKind::Reference | AgentKind::Command | AgentKind::Replay => settings.max_tokens,
        },
        max_turns: Some(settings.max_turns),
        tool_choice: settings
            .tool_choice
            .map(|choice| choice.as_str().to_owned()),
        tool_calling: (settings.agent == AgentKind::Openai)
            .then(|| settings.tool_calling.as_str().to_owned()),
        catalog_tokens: None,
        tool_offer: matches!(settings.agent, AgentKind::Openai | AgentKind::Anthropic)
            .then(|| settings.tool_offer.as_str().to_owned()),
        system_prompt_sha256: settings.system_prompt.as_deref().map(crate::fs::sha256_hex),
        repeat: settings.repeat,
        concurrency: settings.concurrency,
        run_timeout_ms: u64::try_from(settings.timeout.as_millis()).unwrap_or(u64::MAX),
        scoring: ScoringOptions::default(),
        interrupted: false,
        not_run: Vec::new(),
    }
}

/// The judge, when `--judge-model` names one.
fn build_judge(args: &GateArgs) -> Result<Option<Judge>> {
    let Some(model) = &args.judge.judge_model else {
        return Ok(None);
    };
    let config = judge_config(
        &args.judge,
        model,
        args.suite.root.join(&args.judge.judge_cache),
    );
    Ok(Some(Judge::new(config)?))
}

pub(super) fn gate_command(
    args: &GateArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    let (file, file_path) = suite::suite_config(&args.suite.root, args.config.as_deref())?;
    let settings = Settings::resolve(args, &file, &file_path)?;
    // Every input of the verdict is read before the run: a bad one costs no run.
    let inputs = gating::load_inputs(args, out)?;
    let report = match &args.ci.results {
        Some(path) => {
            let report = RunReport::load(path)?;
            gating::clear_outputs(&args.out, true)?;
            report
        }
        None => match run_for_gate(args, &settings, (&file, &file_path), out)? {
            Some(report) => report,
            None => return Ok(Exit::Interrupted),
        },
    };
    if args.ci.collect_only {
        writeln!(out, "results: {}", args.out.join("results.json").display())?;
        return Ok(Exit::Pass);
    }
    gating::judge(
        args,
        settings.tolerance,
        settings.min_pass_rate,
        &report,
        inputs,
        out,
        err,
    )
}

/// Runs the selected scenarios (or this job's shard of them) and writes `results.json`,
/// `trace.jsonl` and, with a judge, `judge.jsonl`. `None` when the run was interrupted: the
/// finished runs were written, and there is no verdict.
/// `config` is the config file `settings` were resolved from, and the path it was read from.
fn run_for_gate(
    args: &GateArgs,
    settings: &Settings,
    (file, file_path): (&ConfigFile, &std::path::Path),
    out: &mut dyn Write,
) -> Result<Option<RunReport>> {
    let loaded = suite::load_recording(
        &args.suite,
        file,
        file_path,
        None,
        suite::CALL_TIMEOUT,
        args.record.as_deref(),
    )?;
    let (scenarios, smoke, loaded_replay) = (loaded.scenarios, loaded.smoke, loaded.replay);
    let backends = loaded
        .backends
        .expect("a suite loaded without a lock file has backends");
    for id in &args.only {
        if !scenarios.iter().any(|s| &s.id == id) {
            bail!("--only: no scenario has id `{id}`");
        }
    }
    let selected: Vec<Scenario> = scenarios
        .into_iter()
        .filter(|s| {
            if args.all {
                true
            } else if !args.only.is_empty() {
                args.only.contains(&s.id)
            } else {
                smoke.contains(s)
            }
        })
        .collect();
    let selected = shard::select(selected, args.ci.shard);
    let endpoint = model_endpoint(settings, &|name| std::env::var(name).ok());
    let agent = build_agent(settings, endpoint.as_ref())?;
    let mut pins = Pins::compute(
        &subject(args, settings, &agent, endpoint.as_ref()),
        &selected,
        &args.suite.root,
        &loaded.catalog,
    )?;
    pins.shard = args.ci.shard;
    if settings.tool_offer == runner::ToolOffer::Scenario {
        pins.tool_offer = Some(runner::ToolOffer::Scenario.as_str().to_owned());
    }
    pins.servers = loaded.servers;
    if let Some(path) = &loaded.mocks {
        // The rules are behaviour the scenarios are measured on: pinned like a fixture, so a
        // changed rule moves the ruler as a changed fixture does.
        let bytes =
            crate::fs::read_bytes(path, "mock catalog", crate::defaults::MAX_DATA_FILE_BYTES)?;
        let name = path.strip_prefix(&args.suite.root).unwrap_or(path);
        pins.fixtures.insert(
            format!("mocks:{}", name.display()),
            crate::fs::sha256_hex(&bytes),
        );
        pins.rehash();
    }
    let scoring = ScoringOptions {
        omitted_defaults: args.omitted_defaults,
        numbers: settings.scoring.numbers.unwrap_or_default(),
        double_encoded: settings.scoring.double_encoded.unwrap_or_default(),
        loops: settings.scoring.loops.unwrap_or_default(),
    };
    let judge = build_judge(args)?.map(Arc::new);
    let offered = (settings.tool_offer == runner::ToolOffer::Scenario).then(|| {
        Arc::new(
            selected
                .iter()
                .map(|scenario| (scenario.id.clone(), scenario.offered_tools(&loaded.catalog)))
                .collect(),
        )
    });
    let options = RunOptions {
        concurrency: settings.concurrency,
        run_timeout: settings.timeout,
        repeat: settings.repeat,
        scoring,
        judge: judge.clone(),
        offered,
        ..RunOptions::default()
    };
    let plan = runner::RunPlan {
        scenarios: selected.into(),
        agent: Arc::new(agent),
        backends,
        options: Arc::new(options),
    };
    let (selected, agent) = (&plan.scenarios, plan.agent.as_ref());

    let total = selected.len() as u64 * u64::from(settings.repeat);
    let progress = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    progress.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} runs  {elapsed}  {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut meta = run_meta(settings, endpoint.as_ref());
    meta.scoring = scoring;
    if matches!(settings.agent, AgentKind::Openai | AgentKind::Anthropic) {
        meta.catalog_tokens = Some(catalog_tokens(&loaded.catalog));
    }
    let run_id = meta.run_id.clone();
    // Each run is reduced to its result as it finishes, and its trace goes to disk at once:
    // memory holds one result per run, never the runs' traces. The trace is written beside
    // the outputs under a temporary name and takes its place only once the run is over.
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("failed to create `{}`", args.out.display()))?;
    let mut trace = OrderedTrace {
        file: crate::fs::StreamedFile::create(&args.out.join("trace.jsonl"))?,
        next: 0,
        waiting: std::collections::BTreeMap::new(),
    };
    let repeat = settings.repeat.max(1) as usize;
    // Each result goes to a spool at once; memory keeps counts and where each result is.
    // What an agent was given may come back in its answers and calls: the environment's
    // secrets never reach the results or the trace.
    let environment = crate::redact::Redactor::from_env();
    let mut results =
        crate::results::stream::ResultsStream::create(&args.out)?.redacting(environment.clone());
    let mut results_error = None;
    let mut spans: Vec<runner::ScenarioRun> = Vec::new();
    let keep_spans = args.otel.is_some() || args.otel_endpoint.is_some();
    let mut trace_error = None;
    let on_done = |run: runner::ScenarioRun| {
        let Some(scenario) = selected.get(run.index) else {
            return;
        };
        progress.set_message(scenario.id.clone());
        progress.inc(1);
        let mut text = String::new();
        for mut line in crate::results::run_trace_lines(scenario, &run) {
            line.run_id.clone_from(&run_id);
            text.push_str(&environment.redact(&line.render()));
            text.push('\n');
        }
        let position = run.index * repeat + run.repeat as usize;
        if let Err(error) = trace.push(position, text)
            && trace_error.is_none()
        {
            trace_error = Some(error);
        }
        if let Err(error) = results.push(
            position,
            &crate::results::ScenarioResult::of(scenario, &run),
        ) && results_error.is_none()
        {
            results_error = Some(error);
        }
        if keep_spans {
            spans.push(run);
        }
    };
    let stop = interrupted();
    let interrupted = runtime()?.block_on(runner::stream_suite(&plan, stop, on_done));
    progress.finish_and_clear();
    if let Some(error) = trace_error.or(results_error) {
        return Err(error);
    }
    let finished = results.len();

    if interrupted {
        meta.interrupted = true;
        let done: std::collections::HashSet<usize> = results.positions().collect();
        for (index, scenario) in selected.iter().enumerate() {
            for run in 0..settings.repeat {
                if !done.contains(&(index * repeat + run as usize)) {
                    meta.not_run.push(NotRun {
                        id: scenario.id.clone(),
                        repeat: run,
                    });
                }
            }
        }
    }
    // The previous run's reports go only now, as this run writes its files: a run killed
    // before this point leaves the previous set whole. The trace and then the results replace
    // theirs atomically (results last: they are the run's commit point), and every file names
    // its run id, so a reader can always tell which files belong together.
    gating::clear_outputs(&args.out, false)?;
    trace.finish()?.commit()?;
    let results_path = args.out.join("results.json");
    let mut results_file = crate::fs::StreamedFile::create(&results_path)?;
    results.finish(meta, Some(pins), &mut results_file)?;
    results_file.commit()?;
    // The reports and the verdict read the results back from the file: no run's result was
    // held in memory while the suite ran.
    let report = RunReport::load(&results_path)?;
    if let Some(dir) = &args.record {
        writeln!(
            out,
            "cassettes: recorded {finished} runs into {}",
            dir.display()
        )?;
    }
    if let Some(dir) = &loaded_replay {
        writeln!(
            out,
            "replayed: the servers' answers came from the cassettes in {}",
            dir.display()
        )?;
    }
    if keep_spans {
        spans.sort_by_key(|run| (run.index, run.repeat));
        export_spans(
            args,
            agent,
            endpoint.as_ref(),
            selected,
            &spans,
            &report,
            out,
        )?;
    }
    if let Some(judge) = &judge {
        let mut audit = String::new();
        for entry in judge.audit_log() {
            audit.push_str(&environment.redact(&entry.to_string()));
            audit.push('\n');
        }
        write_atomic(&args.out.join("judge.jsonl"), audit.as_bytes())?;
    }
    if interrupted {
        writeln!(
            out,
            "interrupted: {finished} of {total} runs finished; no verdict"
        )?;
        writeln!(out, "results: {}", args.out.join("results.json").display())?;
        return Ok(None);
    }
    Ok(Some(report))
}

/// `trace.jsonl` written as runs finish, in suite order: the lines of a run that finishes
/// before an earlier one wait here, rendered, until every earlier run's lines are written.
struct OrderedTrace {
    file: crate::fs::StreamedFile,
    /// The position (scenario index x repeat + repetition) whose lines go next.
    next: usize,
    /// Rendered lines of finished runs past `next`, by position.
    waiting: std::collections::BTreeMap<usize, String>,
}

impl OrderedTrace {
    /// Takes the rendered lines of the run at `position` and writes every run now in order.
    fn push(&mut self, position: usize, text: String) -> Result<()> {
        self.waiting.insert(position, text);
        while let Some(text) = self.waiting.remove(&self.next) {
            self.file.write(&text)?;
            self.next += 1;
        }
        Ok(())
    }

    /// Writes what still waits (runs behind one that never finished), in order.
    fn finish(mut self) -> Result<crate::fs::StreamedFile> {
        for text in std::mem::take(&mut self.waiting).into_values() {
            self.file.write(&text)?;
        }
        Ok(self.file)
    }
}

/// Writes the runs as OTLP JSON to `--otel` and sends them to `--otel-endpoint`; a failed
/// send is a warning on `out` (the verdict does not depend on telemetry).
///
/// Errors: the file cannot be written.
fn export_spans(
    args: &GateArgs,
    agent: &Agent,
    endpoint: Option<&Endpoint>,
    selected: &[Scenario],
    runs: &[runner::ScenarioRun],
    report: &RunReport,
    out: &mut dyn Write,
) -> Result<()> {
    let run_id = report.run.as_ref().and_then(|run| run.run_id.as_deref());
    let agent_name = report.agent.as_str();
    let model_turns = matches!(agent, Agent::OpenAi(_) | Agent::Anthropic(_));
    let outcomes: Vec<String> = runs
        .iter()
        .map(|run| {
            serde_json::to_value(run.outcome)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        })
        .collect();
    let spans: Vec<report::otel::RunSpans<'_>> = runs
        .iter()
        .zip(&outcomes)
        .filter_map(|(run, outcome)| {
            let scenario = selected.get(run.index)?;
            Some(report::otel::RunSpans {
                scenario: &scenario.id,
                tier: scenario.tier,
                repeat: run.repeat,
                run_id,
                agent: agent_name,
                model: report.model.as_deref(),
                provider: endpoint.filter(|_| model_turns).map(|e| e.api.as_str()),
                outcome,
                error: run.error.as_deref(),
                prompt: &scenario.prompt,
                final_answer: run.agent.as_ref().and_then(|a| a.final_answer.as_deref()),
                usage: run
                    .agent
                    .as_ref()
                    .filter(|a| a.usage.requests > 0)
                    .map(|a| (a.usage.prompt_tokens, a.usage.completion_tokens)),
                model_turns,
                started: run.started_at,
                duration: run.duration,
                calls: &run.trace,
                call_times: &run.call_times,
            })
        })
        .collect();
    let text = crate::redact::Redactor::from_env().redact(&report::otel::export_request(&spans));
    if let Some(path) = &args.otel {
        write_atomic(path, text.as_bytes())?;
    }
    if let Some(url) = &args.otel_endpoint {
        let headers = std::env::var("OTEL_EXPORTER_OTLP_HEADERS")
            .map(|text| crate::provider::otlp::parse_headers(&text))
            .unwrap_or_default();
        let request: serde_json::Value =
            serde_json::from_str(&text).expect("the export request is JSON");
        let timeout = crate::provider::otlp::timeout_from(
            std::env::var("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
                .ok()
                .as_deref(),
            std::env::var("OTEL_EXPORTER_OTLP_TIMEOUT").ok().as_deref(),
        );
        let environment = crate::redact::Redactor::from_env();
        let sent = runtime()?.block_on(crate::provider::otlp::export(
            url,
            headers,
            &request,
            timeout,
            &environment,
        ));
        match sent {
            Ok(()) => writeln!(
                out,
                "spans: sent {} runs to {}",
                spans.len(),
                crate::provider::otlp::traces_url(url)
            )?,
            Err(error) => writeln!(
                out,
                "warning: failed to send spans to `{}`: {error}",
                environment.redact(url)
            )?,
        }
    }
    Ok(())
}

/// Tokens (o200k) of the catalog's tool definitions as a model is sent them.
fn catalog_tokens(catalog: &crate::catalog::Catalog) -> u64 {
    let tools: Vec<crate::lint::ToolRef<'_>> = catalog
        .definitions()
        .iter()
        .map(|definition| crate::lint::ToolRef {
            server: "",
            name: definition["name"].as_str().unwrap_or_default(),
            definition,
        })
        .collect();
    crate::lint::tokens::count(&tools).total as u64
}

/// The measured side of the run, for pins.
fn subject(
    args: &GateArgs,
    settings: &Settings,
    agent: &Agent,
    endpoint: Option<&Endpoint>,
) -> Subject {
    let provider = match (agent, endpoint) {
        (Agent::OpenAi(_) | Agent::Anthropic(_), Some(endpoint)) => endpoint.pin(),
        (Agent::Reference, _) => "reference".to_string(),
        (Agent::Command(_), _) => "command".to_string(),
        (Agent::Replay(_), _) => "replay".to_string(),
        (Agent::OpenAi(_) | Agent::Anthropic(_), None) => "unknown".to_string(),
    };
    Subject {
        model: settings.model.clone(),
        provider,
        system_prompt: settings.system_prompt.clone(),
        tool_calling: (settings.agent == AgentKind::Openai
            && settings.tool_calling == ToolCalling::Prompted)
            .then(|| ToolCalling::Prompted.as_str().to_owned()),
        judge_model: args.judge.judge_model.clone(),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser as _;

    use super::*;
    use crate::cli::{Cli, Command};

    #[test]
    fn the_trace_is_written_in_suite_order_whatever_order_runs_finish_in() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("trace.jsonl");
        let mut trace = OrderedTrace {
            file: crate::fs::StreamedFile::create(&path).expect("create"),
            next: 0,
            waiting: std::collections::BTreeMap::new(),
        };
        trace.push(2, "c\n".to_owned()).expect("push");
        trace.push(0, "a\n".to_owned()).expect("push");
        assert_eq!(trace.next, 1, "run 0 is written, run 2 waits for run 1");
        assert_eq!(trace.waiting.len(), 1);
        trace.push(4, "e\n".to_owned()).expect("push");
        // Run 1 and 3 never finish (the suite was interrupted): what waits follows in order.
        trace.finish().expect("finish").commit().expect("commit");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "a\nc\ne\n");
    }

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
        let path = std::path::Path::new("toolgate.yaml");
        let file = ConfigFile::parse(
            "agent: anthropic\nmodel: claude-test\nbase_url: http://127.0.0.1:9/\n",
            path,
        )
        .expect("valid config");
        let args = gate_args();
        let settings = Settings::resolve(&args, &file, path).expect("valid settings");
        let endpoint = model_endpoint(&settings, &|_| None).expect("a model-backed agent");
        let agent = build_agent(&settings, Some(&endpoint)).expect("the agent builds");
        let pinned = subject(&args, &settings, &agent, Some(&endpoint));
        assert_eq!(pinned.provider, "anthropic 127.0.0.1:9");
        let meta = run_meta(&settings, Some(&endpoint));
        assert_eq!(meta.provider_host.as_deref(), Some("127.0.0.1:9"));

        let from_env = model_endpoint(&settings, &|name| {
            (name == "ANTHROPIC_BASE_URL").then(|| "https://proxy.example:8443".to_owned())
        })
        .expect("a model-backed agent");
        assert_eq!(from_env.pin(), "anthropic proxy.example:8443");
        assert_eq!(
            model_endpoint(
                &Settings::resolve(&args, &ConfigFile::default(), path).expect("valid"),
                &|_| None
            ),
            None
        );
    }
}
