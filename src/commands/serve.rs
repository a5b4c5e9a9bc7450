//! `serve` and `mock serve`: the built-in world or a declarative mock as an MCP server, with
//! its trace, until the client leaves or Ctrl-C.

use std::io::Write;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};

use crate::catalog::Catalog;
use crate::cli::{MockServeArgs, ServeArgs};
use crate::exit::Exit;
use crate::harness::{self, Harness, ToolSet, WorldBackend};
use crate::mock;
use crate::scenario;

use super::{interrupted, proxy, runtime, suite};

pub(super) fn serve_command(args: &ServeArgs) -> Result<Exit> {
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
    let traced_as = args.scenario.as_deref().unwrap_or("serve");
    let (harness, trace) = streaming_trace(harness, args.trace.as_deref(), traced_as)?;
    let served = rt.block_on(harness::server::serve_stdio(harness.clone()));
    rt.block_on(harness.close());
    served?;
    trace_written(trace)?;
    Ok(Exit::Pass)
}

/// `harness` for a long-lived `serve` or `mock serve` session: it keeps no calls in memory
/// and, with `path`, appends each call to that file as it is recorded, as `trace.jsonl` lines
/// of scenario `traced_as` under one run id for the session (what `score` and
/// `gate --agent replay` read).
///
/// Errors: the file cannot be created.
fn streaming_trace(
    harness: Harness,
    path: Option<&std::path::Path>,
    traced_as: &str,
) -> Result<(Arc<Harness>, Option<Arc<proxy::TraceFile>>)> {
    let trace = path
        .map(proxy::TraceFile::create)
        .transpose()?
        .map(Arc::new);
    let writer = trace.clone();
    // A client may send what it knows of toolgate's environment; its secrets stay out.
    let environment = crate::redact::Redactor::from_env();
    let session = super::new_run_id();
    let traced_as = traced_as.to_owned();
    let harness = harness.streaming(Box::new(move |call| {
        if let Some(file) = &writer {
            let mut line = crate::trace::TraceLine::call(&traced_as, 0, call);
            line.run_id = Some(session.clone());
            let line = serde_json::to_string(&line).expect("a trace line is JSON");
            file.append(&environment.redact(&line));
        }
    }));
    Ok((Arc::new(harness), trace))
}

/// Serves `harness` on `address` for `--listen`, warning on `err` when other hosts can reach it.
pub(super) async fn listen(
    harness: Arc<Harness>,
    address: &str,
    allow_remote: bool,
    err: &mut dyn Write,
) -> Result<harness::http::LoopbackServer> {
    let options = harness::http::Listen {
        allow_remote,
        ..harness::http::Listen::default()
    };
    let server = harness::http::serve_at(harness, address, &options).await?;
    if server.remote() {
        writeln!(
            err,
            "warning: {} is reachable from other hosts, and nothing authenticates its callers: \
             anyone who reaches it can call every tool",
            server.url()
        )?;
    }
    Ok(server)
}

/// The first error writing a streamed trace, as the command's error.
pub(super) fn trace_written(trace: Option<Arc<proxy::TraceFile>>) -> Result<()> {
    match trace.and_then(|file| file.failure()) {
        Some(failure) => bail!(failure),
        None => Ok(()),
    }
}

pub(super) fn mock_serve_command(
    args: &MockServeArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
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
    // The trace's scenario is the catalog's file name (`mocks` for `mocks.yaml`).
    let traced_as = args.catalog.file_stem().map_or_else(
        || "mock".to_owned(),
        |stem| stem.to_string_lossy().into_owned(),
    );
    let (harness, trace) = streaming_trace(
        Harness::new(Box::new(backend), Vec::new()),
        args.trace.as_deref(),
        &traced_as,
    )?;
    match &args.listen {
        None => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("failed to start the async runtime")?
            .block_on(harness::server::serve_stdio(harness.clone()))?,
        Some(address) => runtime()?.block_on(async {
            let server = listen(harness.clone(), address, args.allow_remote, err).await?;
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
