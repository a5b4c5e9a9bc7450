//! `toolgate cassette verify` and `toolgate mock from-cassette`: the commands that read a
//! cassette directory outside a run.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::{Context as _, Result, bail};

use crate::cli::{CassetteVerifyArgs, MockFromCassetteArgs, SuiteArgs};
use crate::exit::Exit;
use crate::harness::cassette::verify::{self, CassetteCheck, Ignore};
use crate::harness::cassette::{self, Cassette, ServerEntry};
use crate::harness::{self, ServerBackends};
use crate::suite::{ServerSpec, ToolFilter, Transport};

/// Replays every cassette of `args.dir` against fresh live servers; exit 1 when an answer or
/// a server's tools changed.
///
/// Live answers and servers' errors are printed with the servers' secrets redacted (see
/// [`ServerSpec::secrets`]): a server that echoes its token shows `[redacted]`.
pub(super) fn verify_command(args: &CassetteVerifyArgs, out: &mut dyn Write) -> Result<Exit> {
    let cassettes = cassette::load_dir(&args.dir)?;
    let rt = super::runtime()?;
    let mut secrets = crate::redact::Redactor::from_env();
    let checks = match &args.suite {
        Some(root) => verify_suite(root, &cassettes, args, &rt, &mut secrets),
        None => verify_command_line(args, &cassettes, &rt, &mut secrets),
    }
    .map_err(|error| anyhow::anyhow!(secrets.redact(&format!("{error:#}"))))?;
    let changed = checks
        .iter()
        .filter(|check| !check.changes.is_empty())
        .count();
    for check in &checks {
        let name = check.path.file_name().map_or_else(
            || check.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        if check.changes.is_empty() {
            let plural = if check.calls == 1 { "" } else { "s" };
            writeln!(out, "ok       {name} ({} call{plural})", check.calls)?;
        } else {
            writeln!(out, "changed  {name}")?;
            for change in &check.changes {
                writeln!(out, "    {}", secrets.redact(&change.to_string()))?;
            }
        }
    }
    let calls: usize = checks.iter().map(|check| check.calls).sum();
    if changed == 0 {
        writeln!(
            out,
            "all {} cassettes answer as recorded ({calls} calls)",
            checks.len()
        )?;
        Ok(Exit::Pass)
    } else {
        writeln!(out, "{changed} of {} cassettes changed", checks.len())?;
        Ok(Exit::GateFailed)
    }
}

/// Each cassette against the servers of the suite at `root`, seeded as its scenario.
fn verify_suite(
    root: &std::path::Path,
    cassettes: &[Cassette],
    args: &CassetteVerifyArgs,
    rt: &tokio::runtime::Runtime,
    secrets: &mut crate::redact::Redactor,
) -> Result<Vec<CassetteCheck>> {
    let (file, file_path) = super::suite::suite_config(root, None)?;
    // Errors in the servers' config are reported below, where the suite is loaded.
    if let Ok(Some(specs)) = super::suite::server_specs(&file, &file_path) {
        for spec in specs {
            secrets.extend(&spec.secrets());
        }
    }
    if file.servers.is_none() {
        bail!(
            "`{}` has no `servers:` to verify against",
            file_path.display()
        );
    }
    let config = file.cassettes.clone().unwrap_or_default();
    let at = |field: &str| format!("in `cassettes.{field}` of `{}`", file_path.display());
    Ignore::new(&config.ignore_paths, &[]).with_context(|| at("ignore_paths"))?;
    Ignore::new(&[], &config.masks).with_context(|| at("masks"))?;
    let paths = [args.ignore.clone(), config.ignore_paths].concat();
    let masks = [args.mask.clone(), config.masks].concat();
    let ignore = Ignore::new(&paths, &masks)?;
    let suite_args = SuiteArgs {
        root: root.to_path_buf(),
        mocks: None,
        replay: None,
    };
    if file
        .servers
        .as_ref()
        .and_then(|servers| servers.get("replay"))
        .is_some()
    {
        bail!(
            "`{}` replays cassettes (`servers: {{replay: ...}}`), so there is nothing live to verify against; give --suite a toolgate.yaml that names the live servers",
            file_path.display()
        );
    }
    let loaded = super::suite::load(
        &suite_args,
        &file,
        &file_path,
        None,
        super::suite::CALL_TIMEOUT,
    )?;
    let backends = loaded
        .backends
        .expect("a suite loaded without a lock file has backends");
    let live: BTreeMap<String, String> = loaded
        .servers
        .iter()
        .map(|(name, pin)| (name.clone(), pin.tools_sha256.clone()))
        .collect();
    let mut checks = Vec::new();
    for cassette in cassettes {
        let Some(scenario) = loaded
            .scenarios
            .iter()
            .find(|scenario| scenario.id == cassette.header.scenario)
        else {
            bail!(
                "`{}`: scenario `{}` is not in the suite at `{}`",
                cassette.path.display(),
                cassette.header.scenario,
                root.display()
            );
        };
        let backend = rt
            .block_on(backends.start(scenario, cassette.header.repeat))
            .map_err(anyhow::Error::msg)?;
        checks.push(rt.block_on(verify::verify(cassette, backend, &live, &ignore)));
    }
    Ok(checks)
}

/// Each cassette against a fresh process of the server command after `--`.
fn verify_command_line(
    args: &CassetteVerifyArgs,
    cassettes: &[Cassette],
    rt: &tokio::runtime::Runtime,
    secrets: &mut crate::redact::Redactor,
) -> Result<Vec<CassetteCheck>> {
    let ignore = Ignore::new(&args.ignore, &args.mask)?;
    let (program, rest) = args
        .command
        .split_first()
        .context("give the server command after `--`, or `--suite ROOT`")?;
    let recorded = &cassettes[0].header.servers;
    let name = match (&args.name, recorded.as_slice()) {
        (Some(name), _) => name.clone(),
        (None, [only]) => only.name.clone(),
        (None, servers) => bail!(
            "the cassettes record {} servers ({}); name the one after `--` with `--name`, or verify the whole suite with `--suite ROOT`",
            servers.len(),
            servers
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let Some(entry) = recorded.iter().find(|server| server.name == name) else {
        bail!("the cassettes record no server `{name}`");
    };
    let spec = ServerSpec {
        name: name.clone(),
        transport: Transport::Stdio {
            command: program.clone(),
            args: rest.to_vec(),
            env: Vec::new(),
            cwd: None,
        },
        filter: recorded_tools(entry),
        reset: None,
        setup: None,
    };
    secrets.extend(&spec.secrets());
    let cwd = std::env::current_dir().context("failed to read the working directory")?;
    let discovery = rt.block_on(harness::discover(std::slice::from_ref(&spec), &cwd))?;
    let live: BTreeMap<String, String> = discovery
        .servers
        .iter()
        .map(|server| {
            let entry = ServerEntry::new(&server.name, None, None, server.tools.clone());
            (server.name.clone(), entry.tools_sha256)
        })
        .collect();
    let backends = ServerBackends::new(vec![spec], &cwd, &discovery, super::suite::CALL_TIMEOUT)?;
    let mut checks = Vec::new();
    for cassette in cassettes {
        let backend = rt
            .block_on(backends.start_seeded(None))
            .map_err(anyhow::Error::msg)?;
        checks.push(rt.block_on(verify::verify(cassette, backend, &live, &ignore)));
    }
    Ok(checks)
}

/// A filter admitting exactly the tools the recording used, so that a tool the server added
/// since does not count as a change of the recorded catalog (one it removed still does).
fn recorded_tools(entry: &ServerEntry) -> ToolFilter {
    let names: Vec<&str> = entry
        .tools
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    ToolFilter::only(&names)
}

/// Writes the mock catalog of a cassette directory.
pub(super) fn from_cassette_command(
    args: &MockFromCassetteArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<Exit> {
    let cassettes = cassette::load_dir(&args.dir)?;
    let (text, notes) = crate::mock::from_cassette::from_cassettes(&cassettes)?;
    for note in &notes {
        writeln!(err, "note: {note}")?;
    }
    match &args.out {
        Some(path) => {
            crate::fs::write_atomic(path, text.as_bytes())?;
            writeln!(out, "wrote {}", path.display())?;
        }
        None => out.write_all(text.as_bytes())?,
    }
    Ok(Exit::Pass)
}
