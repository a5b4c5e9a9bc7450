//! The suite assembled: where its tools run, decided once ([`SuiteSource`]), and the suite
//! loaded on it
//! ([`load`]): its catalog, validators, scenarios, smoke set and the factory of each run's
//! fresh backend. Every command that runs or checks a suite goes through this one `match`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};

use crate::catalog::Catalog;
use crate::harness::cassette::{RecordingBackends, ReplayBackends, Scrubber};
use crate::harness::servers::DiscoveredServer;
use crate::harness::{BackendFactory, Discovery, ServerBackends, ToolSet, WorldBackends};
use crate::json::{DoubleEncoded, NumberMode};
use crate::scenario::{self, Scenario, SmokeSet};
use crate::suite::ServerSpec;

/// Where a suite's tools run: exactly one of these per suite.
#[derive(Debug, Clone)]
pub(crate) enum SuiteSource {
    /// The built-in world: the 43-tool catalog on seeded mock state.
    BuiltIn,
    /// The user's own MCP servers (`servers:`), started (or reset) fresh for every run; with
    /// `record`, every run also writes its cassette into that directory.
    Servers {
        /// The servers, in `servers:` order.
        specs: Vec<ServerSpec>,
        /// The cassette directory of `gate --record`.
        record: Option<PathBuf>,
    },
    /// The servers' catalog read from a lock file (`toolgate snapshot`): the suite is
    /// validated offline and nothing can run.
    Locked {
        /// The servers the lock file stands for.
        specs: Vec<ServerSpec>,
        /// The lock file.
        lock: PathBuf,
    },
    /// The user's declarative mock catalog (`--mocks`, `mocks:`).
    Mocks(PathBuf),
    /// Recorded cassettes (`--replay`, `servers: {replay: DIR}`): no server is started.
    Replay(PathBuf),
}

impl SuiteSource {
    /// The servers whose secrets a cassette must not hold; none unless servers run.
    pub(crate) fn specs(&self) -> &[ServerSpec] {
        match self {
            SuiteSource::Servers { specs, .. } | SuiteSource::Locked { specs, .. } => specs,
            SuiteSource::BuiltIn | SuiteSource::Mocks(_) | SuiteSource::Replay(_) => &[],
        }
    }
}

/// How tool arguments are compared with their schemas: the scoring modes that the tools'
/// validators apply.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SchemaModes {
    /// How numbers written as strings are taken.
    pub numbers: NumberMode,
    /// How arguments encoded twice (JSON inside a string) are taken.
    pub double_encoded: DoubleEncoded,
}

/// A loaded suite: its scenarios, smoke set, catalog and where the tools run.
pub(crate) struct Suite {
    /// Every scenario, validated against `catalog`.
    pub scenarios: Vec<Scenario>,
    /// The smoke set.
    pub smoke: SmokeSet,
    /// The built-in catalog, or the servers' (mocks', cassettes') merged catalog.
    pub catalog: Catalog,
    /// `catalog` with its validators.
    pub tools: Arc<ToolSet>,
    /// The fresh backend of every run; `None` for [`SuiteSource::Locked`] (no server was
    /// started, nothing can run).
    pub backends: Option<Arc<dyn BackendFactory>>,
    /// The servers as discovered (live, from the lock file, or from the cassettes), each with
    /// the command line or URL it is pinned by; empty for the built-in world and mocks.
    pub servers: Vec<(DiscoveredServer, String)>,
}

/// Where the suite's files live and how its tools are reached.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoadOptions<'a> {
    /// The suite root: `scenarios/` and `smoke-set.yaml` are under it; servers' relative
    /// paths resolve against it.
    pub root: &'a Path,
    /// The config file the source was read from, named in errors.
    pub config_path: &'a Path,
    /// The time limit of one tool call to a server.
    pub call_timeout: Duration,
    /// The scoring modes the validators apply.
    pub modes: SchemaModes,
    /// The suite's `seed_path` (resolved): the seed of scenarios without one, and the seed
    /// live servers are discovered on; `None` without one.
    pub seed: Option<&'a Path>,
}

/// Loads the suite on `source`: builds the backend factory (one `match`), then reads and
/// validates the scenarios and the smoke set against its catalog. Live servers are started
/// once to list their tools. `scrubber` is what cassettes leave out (used when replaying or
/// recording).
///
/// Errors: a server that cannot be started or listed, a lock file, mock catalog or cassette
/// directory that cannot be read, the scenarios or the smoke set; each naming the file.
pub(crate) fn load(
    source: &SuiteSource,
    options: LoadOptions<'_>,
    scrubber: Scrubber,
) -> Result<Suite> {
    let (catalog, tools, backends, servers) = backends(source, options, scrubber)?;
    let root = options.root;
    let mut scenarios = scenario::load_dir(&root.join("scenarios"), root, &catalog)?;
    // The suite's seed is the seed of every scenario that names none: runs, replays, pins and
    // `--impact` then treat it as that scenario's own.
    if let Some(seed) = options.seed {
        for scenario in scenarios.iter_mut().filter(|s| s.seed_path.is_none()) {
            scenario.seed_path = Some(seed.to_path_buf());
        }
    }
    let smoke = SmokeSet::load(&root.join("smoke-set.yaml"), &scenarios)?;
    Ok(Suite {
        scenarios,
        smoke,
        catalog,
        tools,
        backends,
        servers,
    })
}

/// What [`backends`] builds: the catalog, its validators, the factory (none when nothing can
/// run) and the discovered servers with their pinned command lines.
type Built = (
    Catalog,
    Arc<ToolSet>,
    Option<Arc<dyn BackendFactory>>,
    Vec<(DiscoveredServer, String)>,
);

/// The one decision of where tools run, for every [`SuiteSource`].
fn backends(source: &SuiteSource, options: LoadOptions<'_>, scrubber: Scrubber) -> Result<Built> {
    let SchemaModes {
        numbers,
        double_encoded,
    } = options.modes;
    match source {
        SuiteSource::BuiltIn => {
            let tools =
                Arc::new(ToolSet::new(Catalog::builtin())?.with_modes(numbers, double_encoded));
            let backends = Arc::new(WorldBackends::new(Arc::clone(&tools)));
            Ok((
                Catalog::builtin().clone(),
                tools,
                Some(backends),
                Vec::new(),
            ))
        }
        SuiteSource::Mocks(path) => {
            let mut catalog = crate::mock::load(path)?;
            catalog.tools = Arc::new(
                ToolSet::from_definitions(catalog.tools.definitions().to_vec())?
                    .with_modes(numbers, double_encoded),
            );
            let catalog = Arc::new(catalog);
            let backends = crate::mock::MockBackends::new(Arc::clone(&catalog));
            let tools = Arc::clone(backends.tools());
            Ok((
                catalog.catalog(),
                tools,
                Some(Arc::new(backends)),
                Vec::new(),
            ))
        }
        SuiteSource::Replay(dir) => {
            let backends = ReplayBackends::load(dir, scrubber, numbers, double_encoded)
                .with_context(|| format!("failed to load the cassettes in `{}`", dir.display()))?;
            let discovery = backends.discovery().clone();
            let catalog = discovery.catalog()?;
            let tools = Arc::clone(backends.tools());
            let servers = pinned(&discovery, &[]);
            Ok((catalog, tools, Some(Arc::new(backends)), servers))
        }
        SuiteSource::Locked { specs, lock } => {
            let lock = crate::catalog::lock::Lock::load(lock)?;
            let listing = lock
                .tools
                .into_iter()
                .map(|tool| (tool.server, tool.definition));
            let discovery = Discovery::from_listing(listing);
            let catalog = discovery.catalog().with_context(|| {
                format!("in the servers of `{}`", options.config_path.display())
            })?;
            let tools = Arc::new(ToolSet::from_definitions(catalog.definitions().to_vec())?);
            Ok((catalog, tools, None, pinned(&discovery, specs)))
        }
        SuiteSource::Servers { specs, record } => {
            live_servers(specs, record.as_deref(), options, scrubber)
        }
    }
}

/// Starts the servers once to list their tools and builds the factory that starts (or
/// resets) them for every run, recording into `record` when given.
fn live_servers(
    specs: &[ServerSpec],
    record: Option<&Path>,
    options: LoadOptions<'_>,
    scrubber: Scrubber,
) -> Result<Built> {
    let root = std::path::absolute(options.root).with_context(|| {
        format!(
            "failed to resolve the suite root `{}`",
            options.root.display()
        )
    })?;
    let discovery = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("failed to start the async runtime")?
        .block_on(crate::harness::discover_seeded(specs, &root, options.seed))
        .with_context(|| {
            format!(
                "failed to list the tools of the servers in `{}`",
                options.config_path.display()
            )
        })?;
    let catalog = discovery
        .catalog()
        .with_context(|| format!("in the servers of `{}`", options.config_path.display()))?;
    let servers = pinned(&discovery, specs);
    let backends = ServerBackends::new(specs.to_vec(), &root, &discovery, options.call_timeout)?
        .with_modes(options.modes.numbers, options.modes.double_encoded)?;
    let backends: Arc<dyn BackendFactory> = match record {
        Some(dir) => Arc::new(RecordingBackends::new(backends, &discovery, dir, scrubber)?),
        None => Arc::new(backends),
    };
    let tools = Arc::clone(backends.tools());
    Ok((catalog, tools, Some(backends), servers))
}

/// Each discovered server with the command line or URL it is pinned by: its spec's label
/// when `specs` names it, else what the discovery knows.
fn pinned(discovery: &Discovery, specs: &[ServerSpec]) -> Vec<(DiscoveredServer, String)> {
    discovery
        .servers
        .iter()
        .map(|server| {
            let label = specs
                .iter()
                .find(|spec| spec.name == server.name)
                .map(ServerSpec::label)
                .unwrap_or_else(|| server.label.clone());
            (server.clone(), label)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    //! Assembling the suite: the built-in world loads the repository's 78 scenarios, 43 tools.

    use super::*;

    /// The built-in world loads the repository's own suite with a factory and no servers.
    #[test]
    fn the_built_in_world_loads_the_repository_suite() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let options = LoadOptions {
            root,
            config_path: &root.join("toolgate.yaml"),
            call_timeout: Duration::from_secs(5),
            modes: SchemaModes::default(),
            seed: None,
        };
        let suite = load(&SuiteSource::BuiltIn, options, Scrubber::default()).expect("loads");
        assert_eq!(suite.catalog.definitions().len(), 43);
        assert!(suite.backends.is_some());
        assert!(suite.servers.is_empty());
        assert_eq!(suite.scenarios.len(), 90);
    }
}
