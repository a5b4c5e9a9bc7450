//! Loading a suite for the commands that run or check it: the built-in world, or the user's
//! own servers named by `servers:` in the suite's `toolgate.yaml` (discovered live, or read
//! from a lock file for offline validation).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result};

use crate::catalog::Catalog;
use crate::cli::SuiteArgs;
use crate::config::{self, ConfigFile};
use crate::defaults;
use crate::harness::cassette::{RecordingBackends, ReplayBackends, Scrubber};
use crate::harness::servers::DiscoveredServer;
use crate::harness::{BackendFactory, Discovery, ServerBackends, ToolSet, WorldBackends};
use crate::lint::drift::Lock;
use crate::results::pins::ServerPin;
use crate::scenario::{self, Scenario, SmokeSet};
use crate::suite::ServerSpec;

/// A loaded suite: its scenarios, smoke set, catalog and where the tools run.
pub(super) struct Suite {
    /// Every scenario, validated against `catalog`.
    pub scenarios: Vec<Scenario>,
    /// The smoke set.
    pub smoke: SmokeSet,
    /// The built-in catalog, or the servers' merged catalog.
    pub catalog: Catalog,
    /// `catalog` with its validators.
    pub tools: Arc<ToolSet>,
    /// The fresh backend of every run; `None` when the catalog came from a lock file (no
    /// server was started, nothing can run).
    pub backends: Option<Arc<dyn BackendFactory>>,
    /// Each server's pin by name; empty for the built-in world.
    pub servers: BTreeMap<String, ServerPin>,
    /// The mock catalog the suite runs on; `None` for the built-in world or servers.
    pub mocks: Option<PathBuf>,
    /// The cassette directory the suite replays; `None` unless it replays.
    pub replay: Option<PathBuf>,
}

/// The mock catalog a suite runs on: `--mocks`, else `mocks.catalog` of the config `file`
/// (read from `file_path`), relative to that file; `None` for none.
fn mocks_path(args: &SuiteArgs, file: &ConfigFile, file_path: &Path) -> Option<PathBuf> {
    args.mocks.clone().or_else(|| {
        file.mocks.as_ref().map(|mocks| {
            file_path
                .parent()
                .unwrap_or_else(|| Path::new("."))
                .join(&mocks.catalog)
        })
    })
}

/// The `servers:` of the config file at `path` (parsed as `file`); `None` when it has none.
pub(super) fn server_specs(file: &ConfigFile, path: &Path) -> Result<Option<Vec<ServerSpec>>> {
    file.servers
        .as_ref()
        .map(|value| crate::suite::from_value(value, path, &|name| std::env::var(name).ok()))
        .transpose()
}

/// The config file of the suite at `root`: `config` when given, else `toolgate.yaml` under
/// the root when it exists, else the defaults.
pub(super) fn suite_config(root: &Path, config: Option<&Path>) -> Result<(ConfigFile, PathBuf)> {
    match config {
        Some(path) => Ok((ConfigFile::load(path)?, path.to_path_buf())),
        None => {
            let path = root.join(config::FILE_NAME);
            if path.exists() {
                Ok((ConfigFile::load(&path)?, path))
            } else {
                Ok((ConfigFile::default(), path))
            }
        }
    }
}

/// Loads the suite at `args.root` with the config `file` (read from `file_path`). With
/// `servers:`, the servers are started once to list their tools, unless `lock` names a lock
/// file (`toolgate snapshot`) to validate against offline.
///
/// Errors: the scenarios, the smoke set, the `servers:` section, a server that cannot be
/// started or listed, or the lock file; each naming the file and field.
pub(super) fn load(
    args: &SuiteArgs,
    file: &ConfigFile,
    file_path: &Path,
    lock: Option<&Path>,
    call_timeout: std::time::Duration,
) -> Result<Suite> {
    load_recording(args, file, file_path, lock, call_timeout, None)
}

/// As [`load`]; with `record`, every run with the suite's servers also writes its cassette
/// into that directory.
///
/// Errors: as [`load`], and `record` without `servers:` (or with a replay).
pub(super) fn load_recording(
    args: &SuiteArgs,
    file: &ConfigFile,
    file_path: &Path,
    lock: Option<&Path>,
    call_timeout: std::time::Duration,
    record: Option<&Path>,
) -> Result<Suite> {
    let root = &args.root;
    let modes = file.scoring.unwrap_or_default();
    let (numbers, double_encoded) = (
        modes.numbers.unwrap_or_default(),
        modes.double_encoded.unwrap_or_default(),
    );
    let mocks = mocks_path(args, file, file_path);
    let replay = replay_dir(args, file, file_path)?;
    if record.is_some() && (replay.is_some() || file.servers.is_none()) {
        anyhow::bail!(
            "--record records the traffic of the suite's own servers: it needs `servers:` in `{}` and no replay",
            file_path.display()
        );
    }
    // A replay never starts (or even reads) the servers: their `${VAR}`s need not be set.
    let specs = match replay {
        Some(_) => None,
        None => server_specs(file, file_path)?,
    };
    if (specs.is_some() || replay.is_some()) && mocks.is_some() {
        anyhow::bail!(
            "`{}`: the suite runs on `servers:` or on `mocks:`, not both",
            file_path.display()
        );
    }
    if let Some(dir) = &replay {
        let backends = ReplayBackends::load(dir, scrubber(file, &[])?, numbers, double_encoded)
            .with_context(|| format!("failed to load the cassettes in `{}`", dir.display()))?;
        let discovery = backends.discovery().clone();
        let catalog = discovery.catalog()?;
        let tools = Arc::clone(backends.tools());
        let scenarios = scenario::load_dir(&root.join("scenarios"), root, &catalog)?;
        let smoke = SmokeSet::load(&root.join("smoke-set.yaml"), &scenarios)?;
        return Ok(Suite {
            scenarios,
            smoke,
            catalog,
            tools,
            backends: Some(Arc::new(backends)),
            servers: pins_of(&discovery, |server| server.label.clone()),
            mocks: None,
            replay: Some(dir.clone()),
        });
    }
    let (catalog, tools, backends, servers): (Catalog, _, Option<Arc<dyn BackendFactory>>, _) =
        match (specs, mocks.as_deref()) {
            (None, Some(path)) => {
                let mut catalog = crate::mock::load(path)?;
                catalog.tools = Arc::new(
                    ToolSet::from_definitions(catalog.tools.definitions().to_vec())?
                        .with_modes(numbers, double_encoded),
                );
                let catalog = Arc::new(catalog);
                let backends = crate::mock::MockBackends::new(Arc::clone(&catalog));
                let tools = Arc::clone(backends.tools());
                (
                    catalog.catalog(),
                    tools,
                    Some(Arc::new(backends) as Arc<dyn BackendFactory>),
                    BTreeMap::new(),
                )
            }
            (None, None) => {
                let catalog = Catalog::builtin().clone();
                let tools =
                    Arc::new(ToolSet::new(Catalog::builtin())?.with_modes(numbers, double_encoded));
                let backends = Arc::new(WorldBackends::new(Arc::clone(&tools)));
                (
                    catalog,
                    tools,
                    Some(backends as Arc<dyn BackendFactory>),
                    BTreeMap::new(),
                )
            }
            (Some(specs), _) => {
                let (discovery, live) = match lock {
                    Some(lock) => {
                        let lock = Lock::load(lock)?;
                        let listing = lock
                            .tools
                            .into_iter()
                            .map(|tool| (tool.server, tool.definition));
                        (Discovery::from_listing(listing), false)
                    }
                    None => {
                        let root = std::path::absolute(root).with_context(|| {
                            format!("failed to resolve the suite root `{}`", root.display())
                        })?;
                        let discovery = super::runtime()?
                            .block_on(crate::harness::discover(&specs, &root))
                            .with_context(|| {
                                format!(
                                    "failed to list the tools of the servers in `{}`",
                                    file_path.display()
                                )
                            })?;
                        (discovery, true)
                    }
                };
                let catalog = discovery
                    .catalog()
                    .with_context(|| format!("in the servers of `{}`", file_path.display()))?;
                let servers = server_pins(&specs, &discovery);
                let backends = if live {
                    let root = std::path::absolute(root).with_context(|| {
                        format!("failed to resolve the suite root `{}`", root.display())
                    })?;
                    let scrubber = scrubber(file, &specs)?;
                    let backends = ServerBackends::new(specs, &root, &discovery, call_timeout)?
                        .with_modes(numbers, double_encoded)?;
                    Some(match record {
                        Some(dir) => {
                            Arc::new(RecordingBackends::new(backends, &discovery, dir, scrubber)?)
                                as Arc<dyn BackendFactory>
                        }
                        None => Arc::new(backends) as Arc<dyn BackendFactory>,
                    })
                } else {
                    None
                };
                let tools = match &backends {
                    Some(backends) => Arc::clone(backends.tools()),
                    None => Arc::new(ToolSet::from_definitions(catalog.definitions().to_vec())?),
                };
                (catalog, tools, backends, servers)
            }
        };
    let scenarios = scenario::load_dir(&root.join("scenarios"), root, &catalog)?;
    let smoke = SmokeSet::load(&root.join("smoke-set.yaml"), &scenarios)?;
    Ok(Suite {
        scenarios,
        smoke,
        catalog,
        tools,
        backends,
        servers,
        mocks,
        replay: None,
    })
}

/// The pin of each discovered server: its command line or URL, version and tools.
fn server_pins(specs: &[ServerSpec], discovery: &Discovery) -> BTreeMap<String, ServerPin> {
    pins_of(discovery, |server| {
        specs
            .iter()
            .find(|spec| spec.name == server.name)
            .map(ServerSpec::label)
            .unwrap_or_else(|| server.label.clone())
    })
}

/// The pin of each discovered server, its command line given by `command`.
fn pins_of(
    discovery: &Discovery,
    command: impl Fn(&DiscoveredServer) -> String,
) -> BTreeMap<String, ServerPin> {
    discovery
        .servers
        .iter()
        .map(|server| {
            (
                server.name.clone(),
                ServerPin::new(command(server), server.version.clone(), &server.tools),
            )
        })
        .collect()
}

/// The cassette directory the suite replays: `--replay`, else `servers: {replay: DIR}` of
/// the config `file` (relative to it); `None` for a live suite.
fn replay_dir(args: &SuiteArgs, file: &ConfigFile, file_path: &Path) -> Result<Option<PathBuf>> {
    if let Some(dir) = &args.replay {
        return Ok(Some(dir.clone()));
    }
    let Some(serde_json::Value::Object(servers)) = &file.servers else {
        return Ok(None);
    };
    let Some(dir) = servers.get("replay") else {
        return Ok(None);
    };
    match (dir.as_str(), servers.len()) {
        (Some(dir), 1) => Ok(Some(
            file_path
                .parent()
                .unwrap_or_else(|| Path::new("."))
                .join(dir),
        )),
        _ => anyhow::bail!(
            "`{}`: servers.replay: must be the only key, naming a cassette directory (`servers: {{replay: cassettes}}`)",
            file_path.display()
        ),
    }
}

/// What cassettes leave out: the servers' secrets, the `cassettes.redact_env` variables that
/// are set, and the `cassettes.redact_patterns`.
///
/// Errors: a pattern that does not compile.
pub(super) fn scrubber(file: &ConfigFile, specs: &[ServerSpec]) -> Result<Scrubber> {
    let config = file.cassettes.clone().unwrap_or_default();
    let mut secrets = crate::redact::Redactor::default();
    for spec in specs {
        secrets.extend(&spec.secrets());
    }
    for name in &config.redact_env {
        if let Ok(value) = std::env::var(name) {
            secrets.add(&value);
        }
    }
    Scrubber::new(secrets, &config.redact_patterns).context("in `cassettes.redact_patterns`")
}

/// The default call timeout for the servers of a suite.
pub(super) const CALL_TIMEOUT: std::time::Duration = defaults::CALL_TIMEOUT;
