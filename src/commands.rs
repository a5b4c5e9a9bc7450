//! The subcommands: wiring between the CLI and the library.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};

use crate::agent::{Agent, AgentKind, openai};
use crate::catalog::Catalog;
use crate::cli::{
    Cli, Command, GateArgs, ServeArgs, SuiteArgs, ToolsArgs, ToolsFormat, VerifyArgs,
};
use crate::exit::Exit;
use crate::gate::{self, Decision, Policy};
use crate::harness::{self, Harness, ToolSet};
use crate::report;
use crate::results::{RunReport, write_atomic};
use crate::runner::{self, RunOptions};
use crate::scenario::{self, Scenario, SmokeSet};
use crate::score::ScoringOptions;
use crate::world::{self, World};

/// Runs one command; the report goes to `out`. Returns the exit status; `Err` means exit 2.
pub fn run_cli(cli: Cli, out: &mut dyn Write) -> Result<Exit> {
    match cli.command {
        Command::Gate(args) => gate_command(&args, out),
        Command::Validate(args) => validate_command(&args, out),
        Command::Serve(args) => serve_command(&args),
        Command::Tools(args) => tools_command(&args, out),
        Command::Verify(args) => verify_command(&args, out),
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
    let baseline_path = args
        .baseline
        .clone()
        .unwrap_or_else(|| args.suite.root.join("baseline.json"));
    let baseline = load_baseline(&baseline_path)?;
    let agent = build_agent(args)?;
    let tools = Arc::new(ToolSet::new(Catalog::builtin())?);
    let scoring = ScoringOptions {
        omitted_defaults: args.omitted_defaults,
    };
    let options = RunOptions {
        concurrency: usize::from(args.concurrency),
        run_timeout: args.timeout,
        scoring,
        ..RunOptions::default()
    };

    let runs = runtime()?.block_on(runner::run_suite(&selected, &agent, &tools, &options));

    let report = RunReport::new(
        args.agent.as_str(),
        args.model.clone(),
        scoring,
        &selected,
        &runs,
    );
    // Compare only scenarios both runs have, so a smoke run can be held against a full one.
    let baseline = baseline.map(|baseline| baseline.restricted_to(&report));
    let verdict = gate::decide(
        &report,
        baseline.as_ref(),
        Policy {
            tolerance_points: args.tolerance,
        },
    );
    write_atomic(
        &args.out.join("results.json"),
        report::json::render_results(&report).as_bytes(),
    )?;
    write_atomic(
        &args.out.join("trace.jsonl"),
        report::json::render_trace(&selected, &runs).as_bytes(),
    )?;

    if baseline.is_none() {
        writeln!(out, "no baseline at `{}`", baseline_path.display())?;
    }
    write!(
        out,
        "{}",
        report::table::render(&report, baseline.as_ref(), &verdict)
    )?;
    writeln!(out, "results: {}", args.out.join("results.json").display())?;
    Ok(match verdict.decision {
        Decision::Pass => Exit::Pass,
        Decision::Fail => Exit::GateFailed,
        Decision::NoVerdict => Exit::CouldNotEvaluate,
    })
}

fn load_baseline(path: &Path) -> Result<Option<RunReport>> {
    if !path.exists() {
        return Ok(None);
    }
    RunReport::load(path).map(Some)
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

fn tools_command(args: &ToolsArgs, out: &mut dyn Write) -> Result<Exit> {
    let catalog = Catalog::builtin();
    let text = match args.format {
        ToolsFormat::Table => report::catalog::render_table(catalog),
        ToolsFormat::Json => report::catalog::render_json(catalog),
    };
    out.write_all(text.as_bytes())?;
    Ok(Exit::Pass)
}

/// Runs the whole suite with the reference agent; with `--mutants`, also the mutation check.
/// Exit 0 when everything holds, 1 otherwise.
fn verify_command(args: &VerifyArgs, out: &mut dyn Write) -> Result<Exit> {
    let (scenarios, _smoke) = load_suite(&args.suite)?;
    let catalog = Catalog::builtin();
    let tools = Arc::new(ToolSet::new(catalog)?);
    let runs = runtime()?.block_on(runner::run_suite(
        &scenarios,
        &Agent::Reference,
        &tools,
        &RunOptions::default(),
    ));
    let failing: Vec<(&Scenario, &runner::ScenarioRun)> = scenarios
        .iter()
        .zip(&runs)
        .filter(|(_, run)| run.outcome != crate::score::Outcome::Pass)
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
    let mut holds = failing.is_empty();
    if args.mutants {
        let report = crate::verify::analyse_suite(&scenarios, &runs, &tools, catalog)?;
        write!(
            out,
            "{}",
            crate::verify::render::render_mutants(&report, args.verbose)
        )?;
        holds &= report.holds();
    }
    Ok(if holds { Exit::Pass } else { Exit::GateFailed })
}
