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
use crate::harness::cassette::Scrubber;
use crate::harness::{BackendFactory, ToolSet};
use crate::plan::{self, LoadOptions, SchemaModes, SuiteSource};
use crate::results::pins::ServerPin;
use crate::scenario::{Scenario, SmokeSet};
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
    /// What went wrong while the servers listed their tools, as `server `NAME`: ...`
    /// sentences in server order; the commands print them as warnings.
    pub listing_warnings: Vec<String>,
}

impl Suite {
    /// Writes each of [`Suite::listing_warnings`] to `err` as a `warning:` line.
    pub(super) fn warn_listing(&self, err: &mut dyn std::io::Write) -> Result<()> {
        for warning in &self.listing_warnings {
            writeln!(err, "warning: {warning}")?;
        }
        Ok(())
    }
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
    let source = source(args, file, file_path, lock, record)?;
    let seed = suite_seed(file, file_path, &source)?;
    let modes = file.scoring.unwrap_or_default();
    let options = LoadOptions {
        seed: seed.as_deref(),
        root: &args.root,
        config_path: file_path,
        call_timeout,
        modes: SchemaModes {
            numbers: modes.numbers.unwrap_or_default(),
            double_encoded: modes.double_encoded.unwrap_or_default(),
        },
    };
    let loaded = plan::load(&source, options, scrubber(file, source.specs())?)?;
    let listing_warnings = loaded
        .servers
        .iter()
        .flat_map(|(server, _)| {
            server
                .warnings
                .iter()
                .map(move |warning| format!("server `{}`: {warning}", server.name))
        })
        .collect();
    let servers = loaded
        .servers
        .iter()
        .map(|(server, command)| {
            (
                server.name.clone(),
                ServerPin::new(command.clone(), server.version.clone(), &server.tools),
            )
        })
        .collect();
    let (mocks, replay) = match source {
        SuiteSource::Mocks(path) => (Some(path), None),
        SuiteSource::Replay(dir) => (None, Some(dir)),
        SuiteSource::BuiltIn | SuiteSource::Servers { .. } | SuiteSource::Locked { .. } => {
            (None, None)
        }
    };
    Ok(Suite {
        scenarios: loaded.scenarios,
        smoke: loaded.smoke,
        catalog: loaded.catalog,
        tools: loaded.tools,
        backends: loaded.backends,
        servers,
        mocks,
        replay,
        listing_warnings,
    })
}

/// Where the suite's tools run, from the flags and the config `file` (read from
/// `file_path`): a replay (`--replay` or `servers: {replay:}`), else `servers:` (locked by
/// `lock`, or live and recorded into `record`), else mocks, else the built-in world.
///
/// Errors: `servers:` together with mocks, `record` without live servers, or a bad
/// `servers:` section.
fn source(
    args: &SuiteArgs,
    file: &ConfigFile,
    file_path: &Path,
    lock: Option<&Path>,
    record: Option<&Path>,
) -> Result<SuiteSource> {
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
    Ok(match (replay, specs, mocks) {
        (Some(dir), _, _) => SuiteSource::Replay(dir),
        (None, Some(specs), _) => match lock {
            Some(lock) => SuiteSource::Locked {
                specs,
                lock: lock.to_path_buf(),
            },
            None => SuiteSource::Servers {
                specs,
                record: record.map(Path::to_path_buf),
            },
        },
        (None, None, Some(path)) => SuiteSource::Mocks(path),
        (None, None, None) => SuiteSource::BuiltIn,
    })
}

/// The suite's `seed_path` of the config `file` (read from `file_path`), resolved against
/// the file's folder; `None` when it has none.
///
/// Errors: the path does not exist, or the suite does not run on its own servers (or their
/// cassettes), which is the only place a seed is used.
fn suite_seed(
    file: &ConfigFile,
    file_path: &Path,
    source: &SuiteSource,
) -> Result<Option<PathBuf>> {
    let Some(seed) = &file.seed_path else {
        return Ok(None);
    };
    if matches!(source, SuiteSource::BuiltIn | SuiteSource::Mocks(_)) {
        anyhow::bail!(
            "`{}`: seed_path: seeds the suite's own servers (`servers:`); this suite has none",
            file_path.display()
        );
    }
    let path = file_path
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join(seed);
    if !path.exists() {
        anyhow::bail!(
            "`{}`: seed_path: `{}` does not exist (it is relative to this file)",
            file_path.display(),
            path.display()
        );
    }
    Ok(Some(path))
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
