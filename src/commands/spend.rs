//! Fewer model calls per gate, as wiring: `--impact` narrows the scenarios before the run,
//! `--cache DIR` reuses a run measured the same way and stores one that ran.

use std::io::Write;

use anyhow::Result;

use crate::agent::AgentKind;
use crate::cli::GateArgs;
use crate::config::Settings;
use crate::provider::Endpoint;
use crate::results::impact::{self, Impact};
use crate::results::pins::Pins;
use crate::results::{RunMeta, RunReport, cache};
use crate::scenario::Scenario;

use super::suite;

/// The scenarios of `candidates` this run runs and, with `--impact`, what the impact decided
/// (said on `err`); all of them and `None` without it.
///
/// Errors: a scenario or fixture file that cannot be read for the pins.
pub(super) fn narrow(
    args: &GateArgs,
    settings: &Settings,
    endpoint: Option<&Endpoint>,
    (candidates, loaded): (Vec<Scenario>, &suite::Suite),
    baseline: Option<&Pins>,
    err: &mut dyn Write,
) -> Result<(Vec<Scenario>, Option<Impact>)> {
    if !settings.impact {
        return Ok((candidates, None));
    }
    let current = super::run::pins(args, settings, endpoint, &candidates, loaded)?;
    let impact = impact::select(
        &candidates,
        &args.suite.root,
        &loaded.catalog,
        &current,
        baseline,
    );
    match &impact.all_because {
        Some(reason) => writeln!(err, "impact: every scenario runs: {reason}")?,
        None => writeln!(
            err,
            "impact: {} of {} scenarios run, those the change since the baseline can affect; {} skipped",
            impact.selected.len(),
            candidates.len(),
            impact.skipped.len()
        )?,
    }
    let selected = candidates
        .into_iter()
        .filter(|scenario| impact.is_selected(&scenario.id))
        .collect();
    Ok((selected, Some(impact)))
}

/// The cache key of this run, when `--cache` is given and the run may use the cache; says on
/// `err` why it may not.
pub(super) fn cache_key(
    args: &GateArgs,
    settings: &Settings,
    (pins, meta, selected): (&Pins, &RunMeta, &[Scenario]),
    loaded: &suite::Suite,
    err: &mut dyn Write,
) -> Result<Option<String>> {
    if args.cache.is_none() {
        return Ok(None);
    }
    let refusal = match settings.agent {
        AgentKind::Command => Some("the `command` agent's program is not pinned"),
        AgentKind::Replay => Some("the `replay` agent's recordings are not pinned"),
        _ if args.record.is_some() => Some("--record needs the servers' live answers"),
        _ if loaded.replay.is_some() => Some("replayed cassettes are not pinned"),
        _ if args.otel.is_some() || args.otel_endpoint.is_some() => {
            Some("spans (--otel, --otel-endpoint) are made from the runs themselves")
        }
        _ if settings.adaptive => Some(
            "an adaptive run's repeats depend on the baseline it settled against (cache the base run without --adaptive)",
        ),
        _ => None,
    };
    if let Some(why) = refusal {
        writeln!(err, "cache: not used: {why}")?;
        return Ok(None);
    }
    let ids: Vec<String> = selected.iter().map(|s| s.id.clone()).collect();
    Ok(Some(cache::key(pins, meta, &ids)))
}

/// The cached run of `key` written into `--out` as this run's results (said on `err`), when
/// the cache holds one; `None` when it does not, or it could not be read (a warning: the
/// suite then runs).
pub(super) fn reuse(
    args: &GateArgs,
    key: &str,
    impact: Option<Impact>,
    err: &mut dyn Write,
) -> Result<Option<RunReport>> {
    let Some(dir) = &args.cache else {
        return Ok(None);
    };
    let Some(entry) = cache::lookup(dir, key) else {
        writeln!(
            err,
            "cache: no run with key {} in {}",
            short(key),
            dir.display()
        )?;
        return Ok(None);
    };
    crate::fs::remove_stale(&super::gating::stale_outputs(&args.out, false))?;
    match cache::restore(&entry, &args.out, impact) {
        Ok(report) => {
            let from = report
                .run
                .as_ref()
                .and_then(|run| run.cached_from.as_deref())
                .unwrap_or("unknown");
            writeln!(
                err,
                "cache: reused the results of run `{from}` (key {}) from {}: no model was called",
                short(key),
                dir.display()
            )?;
            Ok(Some(report))
        }
        Err(error) => {
            writeln!(
                err,
                "warning: cache: failed to reuse `{}`: {error:#}; running the suite",
                entry.display()
            )?;
            Ok(None)
        }
    }
}

/// Stores the finished run in `out` under `key` in `--cache`, or says on `err` why not. A
/// cache that cannot be written is a warning: the run itself is whole.
pub(super) fn store(
    args: &GateArgs,
    key: &str,
    report: &RunReport,
    err: &mut dyn Write,
) -> Result<()> {
    let Some(dir) = &args.cache else {
        return Ok(());
    };
    if let Some(why) = cache::unstorable(report) {
        writeln!(err, "cache: not stored: {why}")?;
        return Ok(());
    }
    match cache::store(dir, key, &args.out) {
        Ok(()) => writeln!(
            err,
            "cache: stored this run under key {} in {}",
            short(key),
            dir.display()
        )?,
        Err(error) => writeln!(err, "warning: cache: not stored: {error:#}")?,
    }
    Ok(())
}

/// The first 12 characters of a key, as people read it.
fn short(key: &str) -> &str {
    key.get(..12).unwrap_or(key)
}
