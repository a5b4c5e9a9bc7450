//! The subcommands: wiring between the CLI and the library.

mod cassette;
mod catalog;
mod gating;
mod proxy;
mod schema;
mod score;
mod suite;

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};

use crate::agent::{Agent, AgentKind, anthropic, command, openai, replay};
use crate::catalog::Catalog;
use crate::cli::{
    CassetteCommand, Cli, Command, GateArgs, InitArgs, JudgeArgs, MockCommand, MockServeArgs,
    ServeArgs, ValidateArgs, VerifyArgs,
};
use crate::config::{ConfigFile, Settings};
use crate::exit::Exit;
use crate::fs::write_atomic;
use crate::harness::{self, Harness, ToolSet, WorldBackend};
use crate::judge::{Judge, JudgeConfig};
use crate::lint::{self, Severity, Source};
use crate::mock;
use crate::provider::{Api, Endpoint, EndpointSources};
use crate::report;
use crate::results::pins::{Pins, Subject};
use crate::results::shard;
use crate::results::{NotRun, RunMeta, RunReport};
use crate::runner::{self, RunOptions};
use crate::scenario::{self, Scenario};
use crate::score::ScoringOptions;

/// Runs one command; the report goes to `out`. Returns the exit status; `Err` means exit 2.
pub fn run_cli(cli: Cli, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit> {
    match cli.command {
        Command::Gate(args) => gate_command(&args, out, err),
        Command::Validate(args) => validate_command(&args, out),
        Command::Serve(args) => serve_command(&args),
        Command::Tools(args) => catalog::tools_command(&args, out),
        Command::Verify(args) => verify_command(&args, out),
        Command::Lint(args) => catalog::lint_command(&args, out, err),
        Command::Snapshot(args) => catalog::snapshot_command(&args, out),
        Command::Drift(args) => catalog::drift_command(&args, out),
        Command::Baseline(args) => gating::baseline_command(&args, out),
        Command::Record(args) => gating::record_command(&args, out),
        Command::Merge(args) => gating::merge_command(&args, out),
        Command::Mock(args) => match &args.command {
            MockCommand::Serve(args) => mock_serve_command(args, out),
            MockCommand::FromCassette(args) => cassette::from_cassette_command(args, out, err),
        },
        Command::Cassette(args) => match &args.command {
            CassetteCommand::Verify(args) => cassette::verify_command(args, out),
        },
        Command::Proxy(args) => proxy::proxy_command(&args, out),
        Command::Score(args) => score::score_command(&args, out),
        Command::Init(args) => init_command(&args, out),
        Command::Schema(args) => schema_command(&args, out),
    }
}

/// How many draft ids a summary line names before it says how many more there are (a suite
/// `init` wrote for a large catalog has hundreds).
const DRAFTS_SHOWN: usize = 10;

/// The first `shown` of `names`, comma-separated, and how many are left out:
/// `a, b, ... and 3 more`.
fn first_names(names: &[&str], shown: usize) -> String {
    if names.len() <= shown {
        return names.join(", ");
    }
    format!(
        "{}, ... and {} more",
        names[..shown].join(", "),
        names.len() - shown
    )
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")
}

fn validate_command(args: &ValidateArgs, out: &mut dyn Write) -> Result<Exit> {
    let (file, file_path) = suite::suite_config(&args.suite.root, None)?;
    let loaded = suite::load(
        &args.suite,
        &file,
        &file_path,
        args.lock.as_deref(),
        suite::CALL_TIMEOUT,
    )?;
    let selected = loaded
        .scenarios
        .iter()
        .filter(|s| loaded.smoke.contains(s))
        .count();
    write!(
        out,
        "{} scenarios valid; the smoke set selects {selected}",
        loaded.scenarios.len()
    )?;
    match &loaded.mocks {
        Some(path) => writeln!(out, " (mock catalog `{}`)", path.display())?,
        None => writeln!(out)?,
    }
    let drafts: Vec<&str> = loaded
        .scenarios
        .iter()
        .filter(|s| s.draft)
        .map(|s| s.id.as_str())
        .collect();
    if !drafts.is_empty() {
        writeln!(
            out,
            "{} drafts still to finish (`draft: true`): {}",
            drafts.len(),
            first_names(&drafts, DRAFTS_SHOWN)
        )?;
    }
    if !loaded.servers.is_empty() {
        let source = match (&args.lock, &loaded.replay) {
            (Some(_), _) => "the lock file".to_owned(),
            (None, Some(dir)) => format!("as recorded in `{}`", dir.display()),
            (None, None) => "their live tools/list".to_owned(),
        };
        writeln!(
            out,
            "checked against {} tools of {} servers ({source})",
            loaded.catalog.tools().len(),
            loaded.servers.len()
        )?;
    }
    Ok(Exit::Pass)
}

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
        ..EndpointSources::default()
    };
    Some(Endpoint::resolve(api, sources, env))
}

fn build_agent(settings: &Settings, endpoint: Option<&Endpoint>) -> Result<Agent> {
    let model = || settings.model.clone().unwrap_or_default();
    let env_set = |name: &str| std::env::var(name).is_ok_and(|value| !value.trim().is_empty());
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
            let endpoint = endpoint(Api::Openai);
            config.base_url = endpoint.base_url;
            config.api_key = endpoint.api_key;
            if settings.api_version.is_some() && !env_set("OPENAI_API_VERSION") {
                config.api_version = settings.api_version.clone();
            }
            config.api_key_header = settings.api_key_header.clone();
            config.max_turns = settings.max_turns;
            config.temperature = settings.temperature;
            config.seed = settings.seed;
            config.max_tokens = settings.max_tokens;
            config.tool_choice = settings.tool_choice;
            config.parallel_tool_calls = settings.parallel_tool_calls;
            config.stream = settings.stream;
            config.request_timeout = settings.request_timeout;
            config.max_attempts = settings.max_attempts;
            config.system_prompt = settings.system_prompt.clone();
            Agent::OpenAi(Box::new(openai::OpenAiAgent::new(config)?))
        }
        AgentKind::Anthropic => {
            let mut config = anthropic::AnthropicConfig::from_env(&model());
            let endpoint = endpoint(Api::Anthropic);
            config.base_url = endpoint.base_url;
            config.api_key = endpoint.api_key;
            config.max_turns = settings.max_turns;
            config.temperature = settings.temperature;
            config.max_tokens = settings.max_tokens;
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

/// The `run` block of the results: how this run was configured, without secrets.
/// A run id unique on this machine: milliseconds since the Unix epoch and the process id,
/// both in hex (`19ae2f3c0b1-3f2a`).
pub(super) fn new_run_id() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis());
    format!("{millis:x}-{:x}", std::process::id())
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
        max_tokens: settings.max_tokens,
        max_turns: Some(settings.max_turns),
        tool_choice: settings
            .tool_choice
            .map(|choice| choice.as_str().to_owned()),
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

fn gate_command(args: &GateArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<Exit> {
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
    pins.servers = loaded.servers;
    if let Some(path) = &loaded.mocks {
        // The rules are behaviour the scenarios are measured on: pinned like a fixture, so a
        // changed rule moves the ruler as a changed fixture does.
        let bytes = std::fs::read(path)
            .with_context(|| format!("failed to read mock catalog `{}`", path.display()))?;
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
    let options = RunOptions {
        concurrency: settings.concurrency,
        run_timeout: settings.timeout,
        repeat: settings.repeat,
        scoring,
        judge: judge.clone(),
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
    let mut results = crate::results::stream::ResultsStream::create(&args.out)?;
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
            text.push_str(&line.render());
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
            audit.push_str(&entry.to_string());
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
    let text = report::otel::export_request(&spans);
    if let Some(path) = &args.otel {
        write_atomic(path, text.as_bytes())?;
    }
    if let Some(url) = &args.otel_endpoint {
        let headers = std::env::var("OTEL_EXPORTER_OTLP_HEADERS")
            .map(|text| crate::provider::otlp::parse_headers(&text))
            .unwrap_or_default();
        let request: serde_json::Value =
            serde_json::from_str(&text).expect("the export request is JSON");
        let sent = runtime()?.block_on(crate::provider::otlp::export(url, headers, &request));
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
                crate::redact::Redactor::default().redact(url)
            )?,
        }
    }
    Ok(())
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
        judge_model: args.judge.judge_model.clone(),
    }
}

fn serve_command(args: &ServeArgs) -> Result<Exit> {
    // One thread: a stdio server answers one client, and a message handed between worker
    // threads waits for a wake-up on every hop.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")?;
    let harness = match (&args.fixture, &args.suite, &args.scenario) {
        (_, Some(root), Some(id)) => {
            let suite_args = crate::cli::SuiteArgs {
                root: root.clone(),
                mocks: None,
                replay: None,
            };
            let (file, file_path) = suite::suite_config(root, None)?;
            let loaded = suite::load(&suite_args, &file, &file_path, None, suite::CALL_TIMEOUT)?;
            if loaded.servers.is_empty() {
                bail!("`{}` has no `servers:`", file_path.display());
            }
            let Some(scenario) = loaded.scenarios.iter().find(|s| &s.id == id) else {
                bail!("--scenario: no scenario has id `{id}`");
            };
            let backends = loaded
                .backends
                .as_deref()
                .expect("a suite loaded without a lock file has backends");
            let backend = rt
                .block_on(backends.start(scenario, 0))
                .map_err(anyhow::Error::msg)?;
            let mut harness = Harness::new(backend, scenario.faults.clone());
            if scenario.block_forbidden {
                harness = harness.blocking(scenario.forbidden_calls.clone());
            }
            harness
        }
        (Some(fixture), _, _) => {
            let seeded = scenario::load_fixture(fixture)?;
            let tools = Arc::new(ToolSet::new(Catalog::builtin())?);
            let backend = WorldBackend::new(tools, &seeded);
            Harness::new(Box::new(backend), Vec::new())
        }
        _ => bail!("give `--fixture`, or `--suite` with `--scenario`"),
    };
    let (harness, trace) = streaming_trace(harness, args.trace.as_deref())?;
    let served = rt.block_on(harness::server::serve_stdio(harness.clone()));
    rt.block_on(harness.close());
    served?;
    trace_written(trace)?;
    Ok(Exit::Pass)
}

/// Resolves on Ctrl-C; never, when the handler cannot be installed (the process then stops
/// only when killed).
async fn interrupted() {
    if tokio::signal::ctrl_c().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// `harness` for a long-lived `serve` or `mock serve` session: it keeps no calls in memory
/// and, with `path`, appends each call to that file as it is recorded (JSON Lines, one call
/// record per line).
///
/// Errors: the file cannot be created.
fn streaming_trace(
    harness: Harness,
    path: Option<&std::path::Path>,
) -> Result<(Arc<Harness>, Option<Arc<proxy::TraceFile>>)> {
    let trace = path
        .map(proxy::TraceFile::create)
        .transpose()?
        .map(Arc::new);
    let writer = trace.clone();
    let harness = harness.streaming(Box::new(move |call| {
        if let Some(file) = &writer {
            file.append(&serde_json::to_string(call).expect("a call record is JSON"));
        }
    }));
    Ok((Arc::new(harness), trace))
}

/// The first error writing a streamed trace, as the command's error.
fn trace_written(trace: Option<Arc<proxy::TraceFile>>) -> Result<()> {
    match trace.and_then(|file| file.failure()) {
        Some(failure) => bail!(failure),
        None => Ok(()),
    }
}

fn mock_serve_command(args: &MockServeArgs, out: &mut dyn Write) -> Result<Exit> {
    let catalog = Arc::new(mock::load(&args.catalog)?);
    let seeded = match &args.seed {
        Some(path) => scenario::load_fixture(path)?,
        None => serde_json::json!({}),
    };
    let backend = mock::MockBackend::new(catalog, &seeded).map_err(|error| {
        let from = args.seed.as_ref().map_or_else(
            || "the catalog".to_owned(),
            |p| format!("`{}`", p.display()),
        );
        anyhow::anyhow!("failed to seed the mocks from {from}: {error}")
    })?;
    let (harness, trace) = streaming_trace(
        Harness::new(Box::new(backend), Vec::new()),
        args.trace.as_deref(),
    )?;
    match &args.listen {
        None => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("failed to start the async runtime")?
            .block_on(harness::server::serve_stdio(harness.clone()))?,
        Some(address) => runtime()?.block_on(async {
            let server = harness::http::serve_at(harness.clone(), address).await?;
            writeln!(
                out,
                "serving `{}` at {}",
                args.catalog.display(),
                server.url()
            )?;
            out.flush()?;
            interrupted().await;
            anyhow::Ok(())
        })?,
    }
    trace_written(trace)?;
    Ok(Exit::Pass)
}

fn init_command(args: &InitArgs, out: &mut dyn Write) -> Result<Exit> {
    let (definitions, source) = match (&args.from_lock, &args.tools_json, &args.from) {
        (Some(path), _, _) | (None, Some(path), _) => (
            mock::load::import_tools(path)?,
            format!("`{}`", path.display()),
        ),
        (None, None, Some(server)) => {
            let source = if server.starts_with("http://") || server.starts_with("https://") {
                Source::Http {
                    url: server.clone(),
                }
            } else {
                let words = shell_words::split(server)
                    .map_err(|error| anyhow::anyhow!("--from: `{server}`: {error}"))?;
                let mut words = words.into_iter();
                let Some(program) = words.next() else {
                    bail!("--from: give a URL or a server command line");
                };
                Source::Command {
                    program,
                    args: words.collect(),
                }
            };
            let catalog = runtime()?.block_on(lint::sources::load(&source))?;
            if let Some(problem) = catalog
                .findings
                .iter()
                .find(|f| f.severity == Severity::Error)
            {
                bail!("cannot import an incomplete catalog: {}", problem.message);
            }
            let definitions = catalog
                .tools
                .into_iter()
                .map(|tool| tool.definition)
                .collect();
            (definitions, format!("`{server}`"))
        }
        (None, None, None) => unreachable!("clap requires one source"),
    };
    let written = mock::init::write_suite(definitions, &source, &args.dir, args.force)?;
    for path in &written.files {
        writeln!(out, "wrote {}", path.display())?;
    }
    match init_baseline(&args.dir)? {
        Ok(path) => writeln!(
            out,
            "wrote {} (the reference agent passed every scenario)",
            path.display()
        )?,
        Err(failing) => writeln!(
            out,
            "no baseline: the reference agent does not pass {}; fix them, then run `toolgate gate --root {} --all` and keep its results.json as baseline.json",
            failing.join(", "),
            args.dir.display()
        )?,
    }
    writeln!(
        out,
        "{} draft scenarios for {} tools; edit them, drop `draft: true`, then run `toolgate verify --root {} --mutants`",
        written.drafts,
        written.tools,
        args.dir.display()
    )?;
    writeln!(
        out,
        "drafts run and count like finished scenarios; `toolgate gate --root {dir}` runs the smoke set (smoke-set.yaml: tier 1), `--all` every scenario",
        dir = args.dir.display()
    )?;
    Ok(Exit::Pass)
}

/// Verifies the new suite at `dir` with the reference agent and, when every scenario passes,
/// writes its results as `dir/baseline.json` (so the suite gates from its first pull
/// request); `Err` lists the scenarios that did not pass, and no baseline is written.
fn init_baseline(dir: &std::path::Path) -> Result<std::result::Result<PathBuf, Vec<String>>> {
    // Every draft must pass with the reference agent; the baseline itself is a run of the
    // smoke set, the scenarios `gate` runs by default, so its metrics compare like with like.
    let (all, _scratch_all) = reference_run(dir, true)?;
    let failing: Vec<String> = all
        .scenarios
        .iter()
        .filter(|s| s.outcome != crate::score::Outcome::Pass)
        .map(|s| s.id.clone())
        .collect();
    if !failing.is_empty() {
        return Ok(Err(failing));
    }
    let (_, scratch) = reference_run(dir, false)?;
    let baseline = dir.join("baseline.json");
    std::fs::copy(scratch.path().join("results.json"), &baseline)
        .with_context(|| format!("failed to write `{}`", baseline.display()))?;
    Ok(Ok(baseline))
}

/// A `gate --collect-only` run of the suite at `dir` with the reference agent, once each:
/// every scenario (`all`) or the smoke set. Returns its results and the scratch directory
/// holding them.
fn reference_run(dir: &std::path::Path, all: bool) -> Result<(RunReport, tempfile::TempDir)> {
    let scratch = tempfile::tempdir().context("failed to make a scratch directory")?;
    use clap::Parser as _;
    let mut argv: Vec<std::ffi::OsString> = vec![
        "toolgate".into(),
        "gate".into(),
        "--root".into(),
        dir.as_os_str().to_owned(),
        "--collect-only".into(),
        // The reference agent whatever TOOLGATE_AGENT says: this checks the suite, not a model.
        "--agent".into(),
        "reference".into(),
        "--repeat".into(),
        "1".into(),
        "--out".into(),
        scratch.path().as_os_str().to_owned(),
    ];
    if all {
        argv.push("--all".into());
    }
    let Command::Gate(gate) = Cli::try_parse_from(argv)?.command else {
        bail!("`gate` did not parse as the gate command");
    };
    gate_command(&gate, &mut std::io::sink(), &mut std::io::sink())?;
    let report = RunReport::load(&scratch.path().join("results.json"))?;
    Ok((report, scratch))
}

fn schema_command(args: &crate::cli::SchemaArgs, out: &mut dyn Write) -> Result<Exit> {
    if let Some(dir) = &args.write {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
        for (name, _) in schema::NAMES {
            let path = dir.join(format!("{name}.schema.json"));
            let value = schema::schema(name).expect("every listed name has a schema");
            write_atomic(&path, crate::json::pretty(&value).as_bytes())?;
            writeln!(out, "wrote {}", path.display())?;
        }
        return Ok(Exit::Pass);
    }
    let Some(name) = &args.name else {
        for (name, what) in schema::NAMES {
            writeln!(out, "{name:<14} {what}")?;
        }
        return Ok(Exit::Pass);
    };
    let Some(value) = schema::schema(name) else {
        let names: Vec<&str> = schema::NAMES.iter().map(|(name, _)| *name).collect();
        bail!(
            "no schema called `{name}`; the schemas are {}",
            names.join(", ")
        );
    };
    out.write_all(crate::json::pretty(&value).as_bytes())?;
    Ok(Exit::Pass)
}

/// Runs the whole suite with the reference agent; with `--mutants`, also the mutation check.
/// Exit 0 when everything holds, 1 otherwise.
fn verify_command(args: &VerifyArgs, out: &mut dyn Write) -> Result<Exit> {
    let (file, file_path) = suite::suite_config(&args.suite.root, None)?;
    let mut loaded = suite::load(&args.suite, &file, &file_path, None, suite::CALL_TIMEOUT)?;
    let plan = runner::RunPlan {
        scenarios: std::mem::take(&mut loaded.scenarios).into(),
        agent: Arc::new(Agent::Reference),
        backends: loaded
            .backends
            .clone()
            .expect("a suite loaded without a lock file has backends"),
        options: Arc::new(RunOptions::default()),
    };
    let (scenarios, backends) = (&*plan.scenarios, plan.backends.as_ref());
    let catalog = &loaded.catalog;
    let tools = &loaded.tools;
    let rt = runtime()?;
    let runs = rt
        .block_on(runner::run_suite(&plan, std::future::pending(), &|_| {}))
        .runs;
    let failing: Vec<(&Scenario, &runner::ScenarioRun)> = scenarios
        .iter()
        .zip(&runs)
        .filter(|(_, run)| !run.outcome.is_pass())
        .collect();
    writeln!(
        out,
        "{} of {} scenarios pass with the reference agent",
        scenarios.len() - failing.len(),
        scenarios.len()
    )?;
    for (scenario, run) in &failing {
        writeln!(out, "  FAILED {}", scenario.id)?;
        if let Some(error) = &run.error {
            writeln!(out, "    {error}")?;
        }
        for check in run.score.iter().flat_map(|score| score.failures()) {
            writeln!(out, "    {}: {}", check.subject, check.detail)?;
        }
    }
    write_guessed_ids(scenarios, &runs, out)?;
    let drafts: Vec<&str> = scenarios
        .iter()
        .filter(|s| s.draft)
        .map(|s| s.id.as_str())
        .collect();
    if !drafts.is_empty() {
        writeln!(
            out,
            "{} of {} scenarios are drafts still to finish (`draft: true`): {}",
            drafts.len(),
            scenarios.len(),
            if args.verbose {
                drafts.join(", ")
            } else {
                first_names(&drafts, DRAFTS_SHOWN)
            }
        )?;
    }
    let mut holds = failing.is_empty();
    if args.mutants {
        let report = if loaded.mocks.is_some() {
            crate::verify::analyse_suite_in_process(scenarios, &runs, backends, catalog)?
        } else if loaded.servers.is_empty() {
            crate::verify::analyse_suite(scenarios, &runs, tools, catalog)?
        } else {
            rt.block_on(crate::verify::analyse_suite_on(
                scenarios, &runs, catalog, backends,
            ))
        };
        write!(
            out,
            "{}",
            crate::verify::render::render_mutants(&report, args.verbose)
        )?;
        holds &= report.holds();
    }
    Ok(if holds { Exit::Pass } else { Exit::GateFailed })
}

/// Warns about the id-like values the reference agent sends that neither the prompt nor an
/// earlier tool result shows (the invented-id metric on the known-good run): an agent under
/// test could only guess them, so the scenario contradicts itself, typically an `args_match`
/// edited without its prompt. A warning, not a failure: the id may come from a system prompt
/// the suite runs with.
fn write_guessed_ids(
    scenarios: &[Scenario],
    runs: &[runner::ScenarioRun],
    out: &mut dyn Write,
) -> Result<()> {
    let guessed: Vec<String> = scenarios
        .iter()
        .zip(runs)
        .flat_map(|(scenario, run)| {
            run.metrics
                .iter()
                .flat_map(|metrics| &metrics.provenance)
                .filter(|finding| finding.kind == crate::score::metrics::ProvenanceKind::Invented)
                .map(move |finding| {
                    format!(
                        "  {}: call {} `{}` sends `{}` as `{}`",
                        scenario.id,
                        finding.call + 1,
                        finding.tool,
                        finding.value,
                        finding.pointer
                    )
                })
        })
        .collect();
    if !guessed.is_empty() {
        writeln!(
            out,
            "warning: {} the reference agent sends {} in neither the prompt nor an earlier tool result, so an agent could only guess {} (put each in the prompt, or take it from a result with args_from_prior):",
            match guessed.len() {
                1 => "1 id value".to_owned(),
                n => format!("{n} id values"),
            },
            if guessed.len() == 1 {
                "appears"
            } else {
                "appear"
            },
            if guessed.len() == 1 { "it" } else { "them" }
        )?;
        for line in guessed {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// How to reach the judge model `model` named by the `--judge-*` flags; one config for the
/// run judge and the description judge.
fn judge_config(args: &JudgeArgs, model: &str, cache_dir: PathBuf) -> JudgeConfig {
    let sources = EndpointSources {
        flag_base_url: args.judge_base_url.as_deref(),
        key_variable: Some("TOOLGATE_JUDGE_API_KEY"),
        ..EndpointSources::default()
    };
    let endpoint = Endpoint::resolve(args.judge_provider, sources, &|name| {
        std::env::var(name).ok()
    });
    JudgeConfig {
        provider: endpoint.api,
        base_url: endpoint.base_url,
        api_key: endpoint.api_key,
        model: model.to_owned(),
        cache_dir: Some(cache_dir),
        request_timeout: crate::defaults::REQUEST_TIMEOUT,
        max_attempts: crate::defaults::MAX_ATTEMPTS,
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
