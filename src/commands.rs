//! The subcommands: wiring between the CLI and the library.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};

use crate::agent::{Agent, AgentKind, openai};
use crate::catalog::Catalog;
use crate::cli::{
    CatalogArgs, Cli, Command, DriftArgs, FailOn, GateArgs, LintArgs, LintFormat, ServeArgs,
    SnapshotArgs, SuiteArgs,
};
use crate::exit::Exit;
use crate::gate::{self, Decision, Policy};
use crate::harness::{self, Harness, ToolSet};
use crate::lint::{self, LintOptions, Severity, Source, drift};
use crate::report;
use crate::results::{RunReport, write_atomic};
use crate::runner::{self, RunOptions};
use crate::scenario::{self, Scenario, SmokeSet};
use crate::world::{self, World};

/// Runs one command; the report goes to `out`. Returns the exit status; `Err` means exit 2.
pub fn run_cli(cli: Cli, out: &mut dyn Write) -> Result<Exit> {
    match cli.command {
        Command::Gate(args) => gate_command(&args, out),
        Command::Validate(args) => validate_command(&args, out),
        Command::Serve(args) => serve_command(&args),
        Command::Lint(args) => lint_command(&args, out),
        Command::Snapshot(args) => snapshot_command(&args, out),
        Command::Drift(args) => drift_command(&args, out),
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
    let options = RunOptions {
        concurrency: usize::from(args.concurrency),
        run_timeout: args.timeout,
        ..RunOptions::default()
    };

    let runs = runtime()?.block_on(runner::run_suite(&selected, &agent, &tools, &options));

    let report = RunReport::new(args.agent.as_str(), args.model.clone(), &selected, &runs);
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

fn catalog_source(args: &CatalogArgs) -> Source {
    if let Some(url) = &args.url {
        Source::Http { url: url.clone() }
    } else if let Some(path) = &args.config {
        Source::Config {
            path: path.clone(),
            only: args.servers.clone(),
        }
    } else if let Some(path) = &args.tools_json {
        Source::File { path: path.clone() }
    } else if let Some((program, rest)) = args.command.split_first() {
        Source::Command {
            program: program.clone(),
            args: rest.to_vec(),
        }
    } else {
        Source::Builtin
    }
}

fn load_catalog(args: &CatalogArgs) -> Result<lint::LoadedCatalog> {
    runtime()?.block_on(lint::sources::load(&catalog_source(args)))
}

fn lint_command(args: &LintArgs, out: &mut dyn Write) -> Result<Exit> {
    let catalog = load_catalog(&args.catalog)?;
    let mut profiles = args.profiles.clone();
    profiles.sort();
    profiles.dedup();
    let options = LintOptions {
        profiles,
        token_budget: args.token_budget,
        tool_token_budget: args.tool_token_budget,
        similarity_threshold: args.similarity,
    };
    let report = lint::lint(&catalog, &options);
    let text = match args.format {
        LintFormat::Table => lint::render::render_table(&report),
        LintFormat::Json => lint::render::render_json(&report),
        LintFormat::Sarif => {
            let origin = match &report.origin {
                Some(path) => {
                    let text = std::fs::read_to_string(path)
                        .with_context(|| format!("failed to read `{}`", path.display()))?;
                    Some((path.as_path(), text))
                }
                None => None,
            };
            lint::sarif::render(&report, origin.as_ref().map(|(p, t)| (*p, t.as_str())))
        }
    };
    match &args.output {
        Some(path) => write_atomic(path, text.as_bytes())?,
        None => out.write_all(text.as_bytes())?,
    }
    let threshold = match args.fail_on {
        FailOn::Error => Some(Severity::Error),
        FailOn::Warning => Some(Severity::Warning),
        FailOn::Info => Some(Severity::Info),
        FailOn::Never => None,
    };
    let failed =
        matches!((report.worst(), threshold), (Some(worst), Some(threshold)) if worst >= threshold);
    Ok(if failed { Exit::GateFailed } else { Exit::Pass })
}

fn snapshot_command(args: &SnapshotArgs, out: &mut dyn Write) -> Result<Exit> {
    let catalog = load_catalog(&args.catalog)?;
    if let Some(problem) = catalog
        .findings
        .iter()
        .find(|f| f.severity == Severity::Error)
    {
        bail!(
            "refusing to write a lock of an incomplete catalog: {}",
            problem.message
        );
    }
    let lock = drift::Lock::from_catalog(&catalog);
    write_atomic(&args.lock, lock.render().as_bytes())?;
    writeln!(
        out,
        "locked {} tools from {} servers in `{}`",
        lock.tools.len(),
        catalog.servers.len(),
        args.lock.display()
    )?;
    Ok(Exit::Pass)
}

fn drift_command(args: &DriftArgs, out: &mut dyn Write) -> Result<Exit> {
    if args.format == LintFormat::Sarif {
        bail!("`--format sarif` is for `toolgate lint`; use table or json");
    }
    let lock = drift::Lock::load(&args.lock)?;
    let catalog = load_catalog(&args.catalog)?;
    if let Some(problem) = catalog
        .findings
        .iter()
        .find(|f| f.severity == Severity::Error)
    {
        bail!("cannot compare an incomplete catalog: {}", problem.message);
    }
    let report = drift::compare(&lock, &catalog);
    let text = match args.format {
        LintFormat::Json => lint::render::render_drift_json(&report),
        LintFormat::Table | LintFormat::Sarif => lint::render::render_drift_table(&report),
    };
    out.write_all(text.as_bytes())?;
    Ok(match report.worst() {
        None => Exit::Pass,
        Some(drift::ChangeClass::Breaking) => Exit::GateFailed,
        Some(drift::ChangeClass::DescriptionChanged) => Exit::DriftDescription,
        Some(drift::ChangeClass::NonBreaking) => Exit::DriftNonBreaking,
    })
}
