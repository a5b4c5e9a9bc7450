//! The base-run cache (`gate --cache DIR`): a run's output kept under a key of everything that
//! decides its outcomes, so that a run measured the same way again reuses it instead of calling
//! the model.
//!
//! The key ([`key`]) is SHA-256 over the pins known before running (subject, scenarios and
//! their hashes, catalog and per-tool hashes, fixtures, servers, shard, tool offer, judge,
//! harness version), the run settings that move outcomes (the [`RunMeta`] without its id, its
//! concurrency and what only a finished run knows) and the ids of the scenarios that run. An
//! entry is the directory `DIR/<key>/` with the run's `results.json`, `trace.jsonl` and, with a
//! judge, `judge.jsonl`.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use serde::Serialize;

use crate::fs::{sha256_hex, write_atomic};
use crate::results::pins::Pins;
use crate::results::{RunMeta, RunReport};

/// The version of the key's layout; a new layout gives new keys, so old entries are never
/// read as new ones.
const KEY_VERSION: u32 = 1;

/// The files an entry holds; the first two are required.
const FILES: [&str; 3] = ["results.json", "trace.jsonl", "judge.jsonl"];

/// What the key is computed over, as compact JSON.
#[derive(Serialize)]
struct KeyInput<'a> {
    key_version: u32,
    pins: &'a Pins,
    run: RunMeta,
    scenarios: &'a [String],
}

/// The cache key of a run with `pins` (as known before running) and `meta`, of the scenarios
/// `selected` (ids in suite order): lowercase hex SHA-256, 64 characters. Two runs get the
/// same key exactly when these agree, whatever their run ids and concurrency.
pub fn key(pins: &Pins, meta: &RunMeta, selected: &[String]) -> String {
    let run = RunMeta {
        run_id: None,
        concurrency: 0,
        interrupted: false,
        not_run: Vec::new(),
        impact: None,
        cached_from: None,
        ..meta.clone()
    };
    let input = KeyInput {
        key_version: KEY_VERSION,
        pins,
        run,
        scenarios: selected,
    };
    let json = serde_json::to_string(&input).expect("the key input is JSON");
    sha256_hex(json.as_bytes())
}

/// Why the finished run `report` is not stored, when it is not: an interrupted run, or one
/// with errored runs (an outage must not be replayed into later gates).
pub fn unstorable(report: &RunReport) -> Option<String> {
    let run = report.run.as_ref()?;
    if run.interrupted {
        return Some("the run was interrupted".to_owned());
    }
    let errored = report.summary.overall.errored;
    (errored > 0).then(|| format!("{errored} run(s) errored"))
}

/// The entry of `key` under `dir`, when it holds a whole run: `results.json` and
/// `trace.jsonl`.
pub fn lookup(dir: &Path, key: &str) -> Option<PathBuf> {
    let entry = dir.join(key);
    FILES[..2]
        .iter()
        .all(|name| entry.join(name).is_file())
        .then_some(entry)
}

/// Copies the run in `out` (its `results.json`, `trace.jsonl` and `judge.jsonl` when there is
/// one) into `dir` as the entry of `key`. The entry appears whole or not at all: it is written
/// beside and renamed into place; an entry another job stored first is kept.
///
/// Errors: a file that cannot be copied, or the directory cannot be created, naming it.
pub fn store(dir: &Path, key: &str, out: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("failed to create the cache directory `{}`", dir.display()))?;
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{key}.tmp-"))
        .tempdir_in(dir)
        .with_context(|| format!("failed to write into the cache `{}`", dir.display()))?;
    for name in FILES {
        let from = out.join(name);
        if from.is_file() {
            std::fs::copy(&from, staging.path().join(name))
                .with_context(|| format!("failed to copy `{}` into the cache", from.display()))?;
        }
    }
    let entry = dir.join(key);
    if entry.exists() {
        return Ok(());
    }
    let staged = staging.keep();
    if std::fs::rename(&staged, &entry).is_err() {
        // Another job stored the same key in the meantime: its entry is as good.
        let _ = std::fs::remove_dir_all(&staged);
    }
    Ok(())
}

/// Writes the cached run in `entry` into `out`: `results.json` marked as reused from its run
/// (`run.cached_from`) with `impact` as this run's, `trace.jsonl` and `judge.jsonl` (or none)
/// as they are. Returns the results as written.
///
/// Errors: an entry file that cannot be read or parsed, or an output that cannot be written.
pub fn restore(
    entry: &Path,
    out: &Path,
    impact: Option<crate::results::impact::Impact>,
) -> Result<RunReport> {
    let mut report = RunReport::load(&entry.join("results.json"))?;
    if let Some(run) = report.run.as_mut() {
        run.cached_from = run.run_id.clone().or_else(|| Some("unknown".to_owned()));
        run.impact = impact;
    }
    for name in &FILES[1..] {
        let from = entry.join(name);
        let to = out.join(name);
        if from.is_file() {
            let bytes =
                crate::fs::read_bytes(&from, "cached run", crate::defaults::MAX_RUN_FILE_BYTES)?;
            write_atomic(&to, &bytes)?;
        } else if to.exists() {
            std::fs::remove_file(&to)
                .with_context(|| format!("failed to remove `{}`", to.display()))?;
        }
    }
    write_atomic(
        &out.join("results.json"),
        crate::json::pretty(&report).as_bytes(),
    )?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> RunMeta {
        RunMeta {
            run_id: Some("1-a".into()),
            agent: "openai".into(),
            model: Some("m".into()),
            temperature: Some(0.0),
            repeat: 1,
            concurrency: 8,
            ..RunMeta::default()
        }
    }

    #[test]
    fn the_key_ignores_the_run_id_and_concurrency_but_not_the_settings() {
        let pins = crate::results::pins::tests::pins();
        let ids = vec!["T1-001".to_owned(), "T5-001".to_owned()];
        let first = key(&pins, &meta(), &ids);
        assert_eq!(first.len(), 64);
        let other_run = RunMeta {
            run_id: Some("2-b".into()),
            concurrency: 1,
            ..meta()
        };
        assert_eq!(key(&pins, &other_run, &ids), first);
        let warmer = RunMeta {
            temperature: Some(0.7),
            ..meta()
        };
        assert_ne!(key(&pins, &warmer, &ids), first);
        assert_ne!(key(&pins, &meta(), &ids[..1]), first);
        let mut moved = pins.clone();
        moved.tools.insert("crm_get_contact".into(), "0".repeat(64));
        assert_ne!(key(&moved, &meta(), &ids), first);
    }

    #[test]
    fn an_interrupted_or_errored_run_is_not_stored() {
        let mut report = crate::report::sample::current();
        report.run = Some(meta());
        report.summary.overall.errored = 0;
        assert_eq!(unstorable(&report), None);
        report.summary.overall.errored = 2;
        assert_eq!(unstorable(&report).as_deref(), Some("2 run(s) errored"));
        report.run.as_mut().expect("set").interrupted = true;
        assert_eq!(
            unstorable(&report).as_deref(),
            Some("the run was interrupted")
        );
    }
}
