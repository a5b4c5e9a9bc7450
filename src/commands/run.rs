//! `gate`'s running half, as wiring: the suite loaded on its source, the products of the
//! validated settings (agent, judge, run options, pins), the run streamed into the
//! [`Recorder`], and the spans it exports.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Result, bail};

use crate::agent::Agent;
use crate::cli::GateArgs;
use crate::config::{ConfigFile, Settings};
use crate::exit::Exit;
use crate::fs::write_atomic;
use crate::provider::Endpoint;
use crate::redact::Redactor;
use crate::report;
use crate::results::pins::Pins;
use crate::results::{Recorder, RunReport, shard};
use crate::runner;
use crate::scenario::{Scenario, SmokeSet};

use super::{gating, interrupted, new_run_id, runtime, spend, suite};

/// The selected scenarios whose `usage_budget` sets token, model-call or cost limits that this
/// run cannot check, because its agent reports no model usage (they are named in the
/// verdict's notes, never passed in silence); empty for a model agent.
///
/// Errors: a model run whose scenarios limit the cost without the model's price (a limit
/// that could not be checked), naming the first such scenario.
fn check_usage_limits(settings: &Settings, selected: &[Scenario]) -> Result<Vec<String>> {
    if settings.agent.api().is_none() {
        return Ok(selected
            .iter()
            .filter(|scenario| scenario.usage_budget.limits_model_usage())
            .map(|scenario| scenario.id.clone())
            .collect());
    }
    if settings.price.is_some() {
        return Ok(Vec::new());
    }
    if let Some(scenario) = selected
        .iter()
        .find(|scenario| scenario.usage_budget.max_cost_usd.is_some())
    {
        bail!(
            "scenario `{}` limits the cost of a run (usage_budget.max_cost_usd), which needs the model's price: pass `--prices FILE` or set `prices:` in toolgate.yaml",
            scenario.id
        );
    }
    Ok(Vec::new())
}

pub(super) fn gate_command(
    args: &GateArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    let (file, file_path) = suite::suite_config(&args.suite.root, args.config.as_deref())?;
    let settings = Settings::resolve(args, &file, &file_path)?;
    // A mistyped collector costs no run: it is found before the first scenario.
    if let Some(url) = &args.otel_endpoint {
        crate::provider::otlp::check_endpoint(url).map_err(|reason| {
            anyhow::anyhow!("--otel-endpoint: {}", Redactor::from_env().redact(&reason))
        })?;
    }
    // Every input of the verdict is read before the run: a bad one costs no run.
    let inputs = gating::load_inputs(args, out)?;
    let report = match &args.ci.results {
        Some(path) => {
            let report = RunReport::load(path)?;
            gating::clear_outputs(&args.out, true)?;
            report
        }
        None => match run_for_gate(
            args,
            &settings,
            (&file, &file_path),
            inputs.baseline.as_ref(),
            (out, err),
        )? {
            Some(report) => report,
            None => return Ok(Exit::Interrupted),
        },
    };
    if args.ci.collect_only {
        writeln!(out, "results: {}", args.out.join("results.json").display())?;
        return Ok(Exit::Pass);
    }
    gating::decide_and_deliver(args, &settings, &report, inputs, out, err)
}

/// Runs the selected scenarios (or this job's shard of them) and writes `results.json`,
/// `trace.jsonl` and, with a judge, `judge.jsonl`. `None` when the run was interrupted: the
/// finished runs were written, and there is no verdict.
/// `config` is the config file `settings` were resolved from, and the path it was read from;
/// `baseline` is what `--impact` narrows the scenarios with (its pins) and adaptive repeats
/// settle against. With `--cache`, a cached run measured the same way is reused instead (see
/// [`spend`]).
fn run_for_gate(
    args: &GateArgs,
    settings: &Settings,
    (file, file_path): (&ConfigFile, &Path),
    baseline: Option<&crate::gate::Baseline>,
    (out, err): (&mut dyn Write, &mut dyn Write),
) -> Result<Option<RunReport>> {
    let loaded = suite::load_recording(
        &args.suite,
        file,
        file_path,
        None,
        suite::CALL_TIMEOUT,
        args.record.as_deref(),
    )?;
    let candidates = select(args, &loaded.scenarios, &loaded.smoke)?;
    let endpoint = settings.endpoint(&|name| std::env::var(name).ok());
    let (selected, impact) = spend::narrow(
        args,
        settings,
        endpoint.as_ref(),
        (candidates, &loaded),
        baseline.and_then(|b| b.pins.as_ref()),
        err,
    )?;
    loaded.warn_listing(err)?;
    warn_drafts(&selected, &loaded.scenarios, err)?;
    let usage_unchecked = check_usage_limits(settings, &selected)?;
    let pins = pins(args, settings, endpoint.as_ref(), &selected, &loaded)?;
    let judge = settings.judge()?.map(Arc::new);
    let schedule =
        super::adaptive::AdaptiveSchedule::of(args, settings, &selected, baseline, &pins);
    let mut options = settings.run_options(judge.clone(), offered(settings, &selected, &loaded));
    options.user_simulator = user_simulator(settings, &selected, &loaded)?;
    options.schedule = schedule
        .clone()
        .map(|schedule| schedule as Arc<dyn runner::Schedule>);
    let plan = runner::RunPlan {
        scenarios: selected.into(),
        agent: Arc::new(settings.agent(endpoint.as_ref())?),
        backends: loaded
            .backends
            .clone()
            .expect("a suite loaded without a lock file has backends"),
        options: Arc::new(options),
    };
    let mut meta = settings.run_meta(new_run_id(), endpoint.as_ref());
    meta.usage_unchecked = usage_unchecked;
    meta.user_simulator = simulator_pin(&plan.options);
    if settings.agent.api().is_some() {
        meta.catalog_tokens = Some(catalog_tokens(&loaded.catalog));
    }
    let key = spend::cache_key(
        args,
        settings,
        (&pins, &meta, &plan.scenarios),
        &loaded,
        err,
    )?;
    if let Some(key) = &key
        && let Some(report) = spend::reuse(args, key, impact.clone(), err)?
    {
        return Ok(Some(report));
    }
    meta.impact = impact;
    // What an agent was given may come back in its answers and calls: the environment's
    // secrets never reach the results, the trace or the judge's log.
    let environment = Redactor::from_env();
    let mut recorder = Recorder::create(
        &args.out,
        Arc::clone(&plan.scenarios),
        settings.repeat,
        meta.run_id.clone(),
        environment.clone(),
    )?;
    let keep_spans = args.otel.is_some() || args.otel_endpoint.is_some();
    let (interrupted, spans) = run_suite(&plan, &mut recorder, keep_spans)?;
    let finished = recorder.finished();
    meta.adaptive = schedule.map(|schedule| schedule.meta(finished));
    if interrupted {
        meta.interrupted = true;
        meta.not_run = recorder.not_run();
    }
    // The previous run's reports go only now, as this run commits its files: a run killed
    // before this point leaves the previous set whole. The reports and the verdict read the
    // results back from the file: no run's result was held in memory while the suite ran.
    let stale = gating::stale_outputs(&args.out, false);
    let served = loaded.catalog.definitions();
    let report = RunReport::load(&recorder.finish(meta, Some(pins), served, &stale)?)?;
    say_user_recordings(plan.options.user_simulator.as_deref(), out)?;
    say_cassettes(args, &loaded, finished, out)?;
    if keep_spans {
        let agent = plan.agent.as_ref();
        export_spans(
            args,
            agent,
            endpoint.as_ref(),
            &plan.scenarios,
            &spans,
            &report,
            (out, err),
        )?;
    }
    if let Some(judge) = &judge {
        write_judge_log(&args.out, judge, &environment)?;
    }
    if let Some(key) = &key {
        spend::store(args, key, &report, err)?;
    }
    if interrupted {
        let total = plan.scenarios.len() * settings.repeat as usize;
        writeln!(
            out,
            "interrupted: {finished} of {total} runs finished; no verdict"
        )?;
        writeln!(out, "results: {}", args.out.join("results.json").display())?;
        return Ok(None);
    }
    Ok(Some(report))
}

/// Warns on `err` when scenarios about to gate are drafts (`draft: true`), naming the first
/// [`super::DRAFTS_SHOWN`] of them, and says so when every scenario of the suite (`all`) is a
/// draft: a draft's checks were written by `toolgate init`, not judged by a person, so a PASS
/// on them is no evidence. Nothing when `selected` has no draft.
fn warn_drafts(selected: &[Scenario], all: &[Scenario], err: &mut dyn Write) -> Result<()> {
    let drafts = super::draft_ids(selected);
    if drafts.is_empty() {
        return Ok(());
    }
    writeln!(
        err,
        "warning: {} of {} scenarios to gate are drafts still to finish (`draft: true`): {}",
        drafts.len(),
        selected.len(),
        super::first_names(&drafts, super::DRAFTS_SHOWN)
    )?;
    if all.iter().all(|scenario| scenario.draft) {
        writeln!(
            err,
            "warning: every scenario of the suite is a draft: the verdict says the drafts ran, not that the tools were judged"
        )?;
    }
    Ok(())
}

/// For `--tool-offer scenario`, the tools each of `selected` offers, by scenario id.
fn offered(
    settings: &Settings,
    selected: &[Scenario],
    loaded: &suite::Suite,
) -> Option<std::collections::HashMap<String, Vec<String>>> {
    (settings.tool_offer == runner::ToolOffer::Scenario).then(|| {
        selected
            .iter()
            .map(|scenario| (scenario.id.clone(), scenario.offered_tools(&loaded.catalog)))
            .collect()
    })
}

/// The user simulator of the `selected` scenarios' simulated users (replaying the recordings
/// beside a replay's cassettes, see [`Settings::simulator`]); `None` when none has one.
///
/// Errors: as [`Settings::simulator`].
fn user_simulator(
    settings: &Settings,
    selected: &[Scenario],
    loaded: &suite::Suite,
) -> Result<Option<Arc<crate::agent::simulator::Simulator>>> {
    if !has_simulated_users(selected) {
        return Ok(None);
    }
    Ok(settings.simulator(loaded.replay.as_deref())?.map(Arc::new))
}

/// Says where cassettes were recorded to (`--record`) or replayed from.
fn say_cassettes(
    args: &GateArgs,
    loaded: &suite::Suite,
    finished: usize,
    out: &mut dyn Write,
) -> Result<()> {
    if let Some(dir) = &args.record {
        writeln!(
            out,
            "cassettes: recorded {finished} runs into {}",
            dir.display()
        )?;
    }
    if let Some(dir) = &loaded.replay {
        writeln!(
            out,
            "replayed: the servers' answers came from the cassettes in {}",
            dir.display()
        )?;
    }
    Ok(())
}

/// What `options`' user simulator pins, if there is one.
fn simulator_pin(options: &runner::RunOptions) -> Option<crate::agent::simulator::SimulatorPin> {
    options
        .user_simulator
        .as_ref()
        .and_then(|simulator| simulator.pin().cloned())
}

/// Says where the user simulator recorded its messages to, or answered from.
fn say_user_recordings(
    simulator: Option<&crate::agent::simulator::Simulator>,
    out: &mut dyn Write,
) -> Result<()> {
    let Some((dir, replay)) = simulator.and_then(|simulator| {
        simulator.directory().map(|dir| {
            (
                dir.join(crate::agent::simulator::recording::SUBDIRECTORY),
                simulator.is_replay(),
            )
        })
    }) else {
        return Ok(());
    };
    if replay {
        writeln!(
            out,
            "user simulator: replayed from the recordings in {}",
            dir.display()
        )?;
    } else {
        writeln!(out, "user simulator: recorded into {}", dir.display())?;
    }
    Ok(())
}

/// Writes the judge's audit log, redacted, as `judge.jsonl` in `out_dir`.
fn write_judge_log(
    out_dir: &Path,
    judge: &crate::judge::Judge,
    environment: &Redactor,
) -> Result<()> {
    let audit: String = judge
        .audit_log()
        .iter()
        .map(|entry| environment.redact(&entry.to_string()) + "\n")
        .collect();
    write_atomic(&out_dir.join("judge.jsonl"), audit.as_bytes())
}

/// The scenarios this job runs, in suite order: `--all`, the `--only` ids, or the smoke set,
/// then this job's shard of them.
///
/// Errors: an `--only` id that no scenario has.
fn select(args: &GateArgs, scenarios: &[Scenario], smoke: &SmokeSet) -> Result<Vec<Scenario>> {
    for id in &args.only {
        if !scenarios.iter().any(|s| &s.id == id) {
            bail!("--only: no scenario has id `{id}`");
        }
    }
    let selected: Vec<Scenario> = scenarios
        .iter()
        .filter(|s| {
            if args.all {
                true
            } else if !args.only.is_empty() {
                args.only.contains(&s.id)
            } else {
                smoke.contains(s)
            }
        })
        .cloned()
        .collect();
    Ok(shard::select(selected, args.ci.shard))
}

/// Whether any of `selected` has a simulated user (`simulated_user`).
fn has_simulated_users(selected: &[Scenario]) -> bool {
    selected
        .iter()
        .any(|scenario| scenario.simulated_user.is_some())
}

/// The pins of this run: the measured subject, the scenarios, fixtures and catalog, the
/// shard, the tool offer, the servers, the user simulator (when a scenario has a simulated
/// user) and the mock catalog's rules.
///
/// Errors: a fixture, the mock catalog or a user simulator recording cannot be read.
pub(super) fn pins(
    args: &GateArgs,
    settings: &Settings,
    endpoint: Option<&Endpoint>,
    selected: &[Scenario],
    loaded: &suite::Suite,
) -> Result<Pins> {
    let mut pins = Pins::compute(
        &settings.subject(endpoint),
        selected,
        &args.suite.root,
        &loaded.catalog,
    )?;
    pins.shard = args.ci.shard;
    if settings.tool_offer == runner::ToolOffer::Scenario {
        pins.tool_offer = Some(runner::ToolOffer::Scenario.as_str().to_owned());
    }
    pins.servers = loaded.servers.clone();
    if has_simulated_users(selected) {
        pins.user_simulator = settings
            .simulator_pin(loaded.replay.as_deref())?
            .as_ref()
            .map(crate::agent::simulator::SimulatorPin::describe);
    }
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
    Ok(pins)
}

/// Runs the plan with a progress bar on stderr, handing each finished run to `recorder`
/// (and keeping it for the spans when `keep_spans`). Returns whether Ctrl-C or SIGTERM
/// interrupted the suite, and the kept runs in suite order.
fn run_suite(
    plan: &runner::RunPlan,
    recorder: &mut Recorder,
    keep_spans: bool,
) -> Result<(bool, Vec<runner::ScenarioRun>)> {
    let total = plan.scenarios.len() as u64 * u64::from(plan.options.repeat);
    let progress = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    progress.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} runs  {elapsed}  {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut spans = Vec::new();
    let on_done = |run: runner::ScenarioRun| {
        if let Some(scenario) = plan.scenarios.get(run.index) {
            progress.set_message(scenario.id.clone());
        }
        progress.inc(1);
        recorder.record(&run);
        if keep_spans {
            spans.push(run);
        }
    };
    let interrupted = runtime()?.block_on(runner::stream_suite(plan, interrupted(), on_done));
    progress.finish_and_clear();
    spans.sort_by_key(|run: &runner::ScenarioRun| (run.index, run.repeat));
    Ok((interrupted, spans))
}

/// Writes the runs as OTLP JSON to `--otel` and sends them to `--otel-endpoint`; a failed
/// send is a warning on `err` (the verdict does not depend on telemetry).
///
/// Errors: the file cannot be written.
fn export_spans(
    args: &GateArgs,
    agent: &Agent,
    endpoint: Option<&Endpoint>,
    selected: &[Scenario],
    runs: &[runner::ScenarioRun],
    report: &RunReport,
    (out, err): (&mut dyn Write, &mut dyn Write),
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
                err,
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
