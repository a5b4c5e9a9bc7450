//! `init` and `verify`: drafting a suite from a catalog, and checking a suite with the
//! reference agent (and, with `--mutants`, that its checks can fail).

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};

use crate::agent::Agent;
use crate::cli::{Cli, Command, InitArgs, VerifyArgs};
use crate::exit::Exit;
use crate::lint::{self, Severity, Source};
use crate::mock;
use crate::results::RunReport;
use crate::runner::{self, RunOptions};
use crate::scenario::Scenario;

use super::{DRAFTS_SHOWN, draft_ids, first_names, runtime, suite};

pub(super) fn init_command(
    args: &InitArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    if let (true, Some(server)) = (args.servers, &args.from) {
        return init_servers(args, server, out, err);
    }
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

/// `init --servers`: lists the tools of the real server `server` (a URL or a command line),
/// calls each read-only one with its schema's example values, and writes a suite of that
/// server with one draft per tool (see [`mock::init_servers`]). Nothing is run afterwards:
/// a run would call the server's write tools.
fn init_servers(
    args: &InitArgs,
    server: &str,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    use mock::init_servers::{Probe, ServerEntry};
    let entry = if server.starts_with("http://") || server.starts_with("https://") {
        ServerEntry::Http {
            url: server.to_owned(),
        }
    } else {
        let mut words = shell_words::split(server)
            .map_err(|error| anyhow::anyhow!("--from: `{server}`: {error}"))?
            .into_iter();
        let Some(program) = words.next() else {
            bail!("--from: give a URL or a server command line");
        };
        ServerEntry::Command {
            program,
            args: words.collect(),
            cwd: mock::init_servers::relative_path(&args.dir, std::path::Path::new("."))?,
        }
    };
    let (name, tools, warnings) = runtime()?.block_on(probe_server(&entry))?;
    for warning in &warnings {
        writeln!(err, "warning: `{server}`: {warning}")?;
    }
    let source = format!("`{server}`");
    let written = mock::init_servers::write_server_suite(
        &name, &entry, &tools, &source, &args.dir, args.force,
    )?;
    for path in &written.files {
        writeln!(out, "wrote {}", path.display())?;
    }
    let count = |wanted: fn(&Probe) -> bool| tools.iter().filter(|t| wanted(&t.probe)).count();
    writeln!(
        out,
        "{} draft scenarios for server `{name}`: {} happy (the server accepted the probe call), {} rejected (fill in values it accepts), {} untried (may write: never called while drafting)",
        written.drafts,
        count(|p| *p == Probe::Accepted),
        count(|p| matches!(p, Probe::Rejected(_))),
        count(|p| *p == Probe::NotTried),
    )?;
    writeln!(
        out,
        "no baseline: edit the drafts, drop `draft: true`, then run `toolgate verify --root {dir} --mutants` and `toolgate gate --root {dir} --all` and keep its results.json as baseline.json; both run every draft against the server, the untried write tools too (point the server at scratch data first)",
        dir = args.dir.display()
    )?;
    Ok(Exit::Pass)
}

/// Connects to the server of `entry` (`${VAR}` read from the environment), lists its tools
/// and probes them: its name for `servers:`, the probed tools and the listing's warnings.
async fn probe_server(
    entry: &mock::init_servers::ServerEntry,
) -> Result<(String, Vec<mock::init_servers::ProbedTool>, Vec<String>)> {
    use crate::harness::client::McpClient;
    use mock::init_servers::ServerEntry;
    let env = |name: &str| std::env::var(name).ok();
    let expand = |text: &str| {
        crate::suite::expand_vars(text, &env).map_err(|error| anyhow::anyhow!("--from: {error}"))
    };
    let client = match entry {
        ServerEntry::Http { url } => McpClient::connect_http(&expand(url)?).await?,
        ServerEntry::Command { program, args, .. } => {
            let args = args
                .iter()
                .map(|arg| expand(arg))
                .collect::<Result<Vec<_>>>()?;
            McpClient::connect_command(&expand(program)?, &args).await?
        }
    };
    let listing = client.list_tool_pages().await?;
    let name = mock::init_servers::server_name(client.server_version().as_deref());
    let tools = mock::init_servers::probe_tools(&client, listing.tools).await;
    client.close().await?;
    Ok((name, tools, listing.warnings))
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
    super::run::gate_command(&gate, &mut std::io::sink(), &mut std::io::sink())?;
    let report = RunReport::load(&scratch.path().join("results.json"))?;
    Ok((report, scratch))
}

/// Runs the whole suite with the reference agent; with `--mutants`, also the mutation check.
/// Exit 0 when everything holds, 1 otherwise.
pub(super) fn verify_command(
    args: &VerifyArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    let (file, file_path) = suite::suite_config(&args.suite.root, None)?;
    let mut loaded = suite::load(&args.suite, &file, &file_path, None, suite::CALL_TIMEOUT)?;
    loaded.warn_listing(err)?;
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
    write_guessed_ids(scenarios, &runs, err)?;
    for warning in crate::verify::lint::lint_suite(scenarios) {
        let line = warning
            .line
            .map_or_else(String::new, |line| format!(" line {line}"));
        writeln!(
            err,
            "warning: {}{line} `{}`: {}",
            warning.scenario, warning.field, warning.message
        )?;
    }
    let drafts = draft_ids(scenarios);
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
    let trajectories = if loaded.mocks.is_some() {
        crate::verify::trajectories::play_suite(scenarios, |scenario, trajectory| {
            crate::verify::replay::replay_trajectory(scenario, trajectory, backends)
        })?
    } else if loaded.servers.is_empty() {
        crate::verify::trajectories::play_suite(scenarios, |scenario, trajectory| {
            Ok(crate::verify::replay::replay_trajectory_in_world(
                scenario,
                trajectory,
                scenario.seeded.as_ref(),
                tools,
            ))
        })?
    } else {
        rt.block_on(crate::verify::trajectories::play_suite_on(
            scenarios, backends,
        ))
    };
    write!(
        out,
        "{}",
        crate::verify::render::render_trajectories(&trajectories, args.alternatives, args.verbose)
    )?;
    holds &= trajectories.holds();
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
