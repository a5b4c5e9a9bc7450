//! The subcommands: wiring between the CLI and the library.

mod gating;

use std::io::Write;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};

use crate::agent::{Agent, AgentKind, openai};
use crate::catalog::Catalog;
use crate::cli::{Cli, Command, GateArgs, ServeArgs, SuiteArgs};
use crate::exit::Exit;
use crate::harness::{self, Harness, ToolSet};
use crate::pins::{Pins, Subject, provider_of_endpoint};
use crate::report;
use crate::results::{RunReport, write_atomic};
use crate::runner::{self, RunOptions};
use crate::scenario::{self, Scenario, SmokeSet};
use crate::shard;
use crate::world::{self, World};

/// Runs one command; the report goes to `out`. Returns the exit status; `Err` means exit 2.
pub fn run_cli(cli: Cli, out: &mut dyn Write) -> Result<Exit> {
    match cli.command {
        Command::Gate(args) => gate_command(&args, out),
        Command::Validate(args) => validate_command(&args, out),
        Command::Serve(args) => serve_command(&args),
        Command::Baseline(args) => gating::baseline_command(&args, out),
        Command::Record(args) => gating::record_command(&args, out),
        Command::Merge(args) => gating::merge_command(&args, out),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")
}

fn load_suite(args: &SuiteArgs) -> Result<(Vec<Scenario>, SmokeSet)> {
    let catalog = Catalog::builtin();
    let scenarios = scenario::load_dir(&args.root.join("scenarios"), &args.root, catalog)?;
    let smoke = SmokeSet::load(&args.root.join("smoke-set.yaml"), &scenarios)?;
    Ok((scenarios, smoke))
}

fn validate_command(args: &SuiteArgs, out: &mut dyn Write) -> Result<Exit> {
    let (scenarios, smoke) = load_suite(args)?;
    let selected = scenarios.iter().filter(|s| smoke.contains(s)).count();
    writeln!(
        out,
        "{} scenarios valid; the smoke set selects {selected}",
        scenarios.len()
    )?;
    Ok(Exit::Pass)
}

fn build_agent(args: &GateArgs) -> Result<Agent> {
    match args.agent {
        AgentKind::Reference => Ok(Agent::Reference),
        AgentKind::Openai => {
            let Some(model) = &args.model else {
                bail!("`--agent openai` needs `--model NAME` (or TOOLGATE_MODEL)");
            };
            let mut config = openai::OpenAiConfig::from_env(model);
            config.max_turns = args.max_turns;
            config.temperature = args.temperature;
            config.seed = args.seed;
            config.max_tokens = args.max_tokens;
            if let Some(path) = &args.system_prompt {
                let text = std::fs::read_to_string(path).with_context(|| {
                    format!("failed to read system prompt `{}`", path.display())
                })?;
                config.system_prompt = Some(text);
            }
            Ok(Agent::OpenAi(Box::new(openai::OpenAiAgent::new(config)?)))
        }
    }
}

fn gate_command(args: &GateArgs, out: &mut dyn Write) -> Result<Exit> {
    let report = match &args.ci.results {
        Some(path) => RunReport::load(path)?,
        None => run_for_gate(args)?,
    };
    if args.ci.collect_only {
        writeln!(out, "results: {}", args.out.join("results.json").display())?;
        return Ok(Exit::Pass);
    }
    gating::judge(args, &report, out)
}

/// Runs the selected scenarios (or this job's shard of them) and writes `results.json` and
/// `trace.jsonl`.
fn run_for_gate(args: &GateArgs) -> Result<RunReport> {
    let (scenarios, smoke) = load_suite(&args.suite)?;
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
    let agent = build_agent(args)?;
    let mut pins = Pins::compute(
        &subject(args)?,
        &selected,
        &args.suite.root,
        Catalog::builtin(),
    )?;
    pins.shard = args.ci.shard;
    let tools = Arc::new(ToolSet::new(Catalog::builtin())?);
    let options = RunOptions {
        concurrency: usize::from(args.concurrency),
        run_timeout: args.timeout,
        ..RunOptions::default()
    };

    let runs = runtime()?.block_on(runner::run_suite(&selected, &agent, &tools, &options));

    let mut report = RunReport::new(args.agent.as_str(), args.model.clone(), &selected, &runs);
    report.pins = Some(pins);
    write_atomic(
        &args.out.join("results.json"),
        report::json::render_results(&report).as_bytes(),
    )?;
    write_atomic(
        &args.out.join("trace.jsonl"),
        report::json::render_trace(&selected, &runs).as_bytes(),
    )?;
    Ok(report)
}

/// The measured side of the run, for pins.
fn subject(args: &GateArgs) -> Result<Subject> {
    let system_prompt = match &args.system_prompt {
        Some(path) => Some(
            std::fs::read_to_string(path)
                .with_context(|| format!("failed to read system prompt `{}`", path.display()))?,
        ),
        None => None,
    };
    let provider = match args.agent {
        AgentKind::Reference => "reference".to_string(),
        AgentKind::Openai => provider_of_endpoint(&openai::OpenAiConfig::from_env("").base_url),
    };
    Ok(Subject {
        model: args.model.clone(),
        provider,
        system_prompt,
        judge_model: None,
    })
}

fn serve_command(args: &ServeArgs) -> Result<Exit> {
    let seeded = world::load_fixture(&args.fixture)?;
    let tools = Arc::new(ToolSet::new(Catalog::builtin())?);
    let harness = Arc::new(Harness::new(tools, World::new(&seeded), Vec::new()));
    runtime()?.block_on(harness::server::serve_stdio(harness.clone()))?;
    if let Some(path) = &args.trace {
        let mut text = String::new();
        for call in harness.trace() {
            text.push_str(&serde_json::to_string(&call)?);
            text.push('\n');
        }
        write_atomic(path, text.as_bytes())?;
    }
    Ok(Exit::Pass)
}
