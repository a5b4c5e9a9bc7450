//! The catalog-readiness commands: `tools` prints the built-in catalog, `lint` checks a
//! catalog's descriptions, schemas and token cost, `snapshot` locks it, and `drift` compares it
//! with the lock.

use std::io::Write;
use std::path::Path;

use anyhow::{Context as _, Result, bail};

use super::{runtime, suite};
use crate::catalog::Catalog;
use crate::catalog::{drift, lock::Lock};
use crate::cli::{
    CatalogArgs, DriftArgs, FailOn, JudgeArgs, LintArgs, LintFormat, SnapshotArgs, ToolsArgs,
    ToolsFormat,
};
use crate::config::judge_config;
use crate::exit::Exit;
use crate::fs::write_atomic;
use crate::harness;
use crate::judge::JudgeConfig;
use crate::lint::{self, LintOptions, Severity, Source};
use crate::report;
use crate::scenario;

pub(super) fn tools_command(args: &ToolsArgs, out: &mut dyn Write) -> Result<Exit> {
    let catalog = Catalog::builtin();
    let text = match args.format {
        ToolsFormat::Table => report::catalog::render_table(catalog),
        ToolsFormat::Json => report::catalog::render_json(catalog),
    };
    out.write_all(text.as_bytes())?;
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
    if let Some(root) = &args.suite {
        let (file, file_path) = suite::suite_config(root, None)?;
        let Some(specs) = suite::server_specs(&file, &file_path)? else {
            bail!("`{}` has no `servers:`", file_path.display());
        };
        let root = std::path::absolute(root)
            .with_context(|| format!("failed to resolve the suite root `{}`", root.display()))?;
        let seed = file
            .seed_path
            .as_ref()
            .map(|seed| file_path.parent().unwrap_or(Path::new(".")).join(seed));
        let discovery =
            runtime()?.block_on(harness::discover_seeded(&specs, &root, seed.as_deref()))?;
        let mut catalog = lint::LoadedCatalog::from_servers(
            discovery
                .servers
                .into_iter()
                .map(|server| (server.name, server.tools))
                .collect(),
        );
        // SARIF results point at each server's entry in the config.
        catalog.origin = Some(file_path);
        return Ok(catalog);
    }
    runtime()?.block_on(lint::sources::load(&catalog_source(args)))
}

pub(super) fn lint_command(
    args: &LintArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
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
    let mut report = lint::lint(&catalog, &options);
    if let Some(config) = description_judge(&args.judge) {
        let names = lint::tool_names(&catalog);
        let tools = lint::tool_refs(&catalog, &names);
        let verdicts = runtime()?.block_on(lint::judge::judge_descriptions(&tools, &config))?;
        lint::add_judged(&mut report, verdicts);
    }
    let text = match args.format {
        LintFormat::Table => lint::render::render_table(&report),
        LintFormat::Json => lint::render::render_json(&report),
        LintFormat::Sarif => {
            let origin = match &report.origin {
                Some(path) => {
                    let text = crate::fs::read_text(
                        path,
                        "lint input",
                        crate::defaults::MAX_DATA_FILE_BYTES,
                    )?;
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
    for warning in &report.judge_warnings {
        writeln!(err, "warning: {warning}")?;
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

/// The description judge of `toolgate lint`, when `--judge-model` names one; the cache is
/// relative to the current directory.
fn description_judge(args: &JudgeArgs) -> Option<JudgeConfig> {
    let model = args.judge_model.as_ref()?;
    Some(judge_config(args, model, args.judge_cache.clone()))
}

pub(super) fn snapshot_command(args: &SnapshotArgs, out: &mut dyn Write) -> Result<Exit> {
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
    let lock = Lock::from_tools(&catalog.tools);
    write_atomic(&args.lock, lock.render().as_bytes())?;
    writeln!(
        out,
        "locked {} tools from {} in `{}`",
        lock.tools.len(),
        match catalog.servers.len() {
            1 => "1 server".to_owned(),
            n => format!("{n} servers"),
        },
        args.lock.display()
    )?;
    Ok(Exit::Pass)
}

pub(super) fn drift_command(args: &DriftArgs, out: &mut dyn Write) -> Result<Exit> {
    if args.format == LintFormat::Sarif {
        bail!("`--format sarif` is for `toolgate lint`; use table or json");
    }
    let lock = Lock::load(&args.lock)?;
    let catalog = load_catalog(&args.catalog)?;
    if let Some(problem) = catalog
        .findings
        .iter()
        .find(|f| f.severity == Severity::Error)
    {
        bail!("cannot compare an incomplete catalog: {}", problem.message);
    }
    let mut report = drift::compare(&lock, &catalog.servers, &catalog.tools);
    if let Some(root) = &args.scenarios {
        // A suite of the user's servers names their tools; the built-in suite the built-in ones.
        let servers = Catalog::from_tools(
            catalog
                .tools
                .iter()
                .map(|tool| {
                    crate::catalog::ToolDef::from_server(&tool.server, tool.definition.clone())
                })
                .collect(),
        );
        let suite_catalog = if args.catalog.suite.is_some() {
            &servers
        } else {
            Catalog::builtin()
        };
        let scenarios = scenario::load_dir(&root.join("scenarios"), root, suite_catalog)?;
        let uses: Vec<(String, Vec<String>)> = scenarios
            .iter()
            .map(|scenario| {
                let tools = scenario
                    .expected_calls
                    .iter()
                    .flat_map(|call| call.tools().map(str::to_owned))
                    .chain(
                        scenario
                            .forbidden_calls
                            .iter()
                            .map(|call| call.tool.clone()),
                    )
                    .collect();
                (scenario.id.clone(), tools)
            })
            .collect();
        report = report.with_scenarios(&uses);
    }
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
