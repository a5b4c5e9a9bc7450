//! The results file: every scenario's outcome and checks plus aggregates. The same file is
//! the baseline artifact the next gate compares against, so it carries a `schema_version`.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context as _, Result, bail};
use serde::{Deserialize, Serialize};

use crate::pins::Pins;
use crate::runner::ScenarioRun;
use crate::scenario::{Scenario, ScenarioKind};
use crate::score::{Check, Outcome};

/// The results format version this build writes and reads.
pub const SCHEMA_VERSION: u32 = 1;

/// A whole run's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunReport {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    pub schema_version: u32,
    /// The toolgate version that produced it.
    pub toolgate_version: String,
    /// The agent kind (`reference`, `openai`).
    pub agent: String,
    /// The model name, for model-backed agents.
    pub model: Option<String>,
    /// What was measured and with which ruler; `None` in files written before pins existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pins: Option<Pins>,
    /// One entry per scenario run, in suite order.
    pub scenarios: Vec<ScenarioResult>,
    /// Aggregates over `scenarios`.
    pub summary: Summary,
}

/// One scenario's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioResult {
    /// Scenario id.
    pub id: String,
    /// 1..=5.
    pub tier: u8,
    /// Scenario type.
    #[serde(rename = "type")]
    pub kind: ScenarioKind,
    /// Pass, fail or errored.
    pub outcome: Outcome,
    /// Why the run errored, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Tool calls made.
    pub calls: usize,
    /// Every deterministic check.
    pub checks: Vec<Check>,
    /// The agent's final answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_answer: Option<String>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
}

/// Pass/fail/errored counts over a set of runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tally {
    /// Runs counted.
    pub total: usize,
    /// Runs that passed.
    pub passed: usize,
    /// Runs that failed a check.
    pub failed: usize,
    /// Runs that could not be judged.
    pub errored: usize,
}

impl Tally {
    /// Passed / (passed + failed) in 0.0..=1.0; errored runs are left out. `None` when no run
    /// was judged.
    pub fn pass_rate(&self) -> Option<f64> {
        let judged = self.passed + self.failed;
        (judged > 0).then(|| self.passed as f64 / judged as f64)
    }

    fn add(&mut self, outcome: Outcome) {
        self.total += 1;
        match outcome {
            Outcome::Pass => self.passed += 1,
            Outcome::Fail => self.failed += 1,
            Outcome::Errored => self.errored += 1,
        }
    }
}

/// Aggregates of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// Over every scenario.
    pub overall: Tally,
    /// Per tier (only tiers that ran).
    pub tiers: BTreeMap<u8, Tally>,
}

impl Summary {
    /// Aggregates `results`.
    pub fn of(results: &[ScenarioResult]) -> Summary {
        let mut summary = Summary::default();
        for result in results {
            summary.overall.add(result.outcome);
            summary
                .tiers
                .entry(result.tier)
                .or_default()
                .add(result.outcome);
        }
        summary
    }
}

impl RunReport {
    /// Builds the report from the scenarios and their runs (same order, same length).
    pub fn new(
        agent: &str,
        model: Option<String>,
        scenarios: &[Scenario],
        runs: &[ScenarioRun],
    ) -> RunReport {
        let results: Vec<ScenarioResult> = scenarios
            .iter()
            .zip(runs)
            .map(|(scenario, run)| ScenarioResult {
                id: scenario.id.clone(),
                tier: scenario.tier,
                kind: scenario.kind,
                outcome: run.outcome,
                error: run.error.clone(),
                calls: run.trace.len(),
                checks: run
                    .score
                    .as_ref()
                    .map(|score| score.checks.clone())
                    .unwrap_or_default(),
                final_answer: run
                    .agent
                    .as_ref()
                    .and_then(|agent| agent.final_answer.clone()),
                duration_ms: u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
            })
            .collect();
        RunReport {
            schema_version: SCHEMA_VERSION,
            toolgate_version: env!("CARGO_PKG_VERSION").to_string(),
            agent: agent.to_string(),
            model,
            pins: None,
            summary: Summary::of(&results),
            scenarios: results,
        }
    }

    /// Reads a results file (e.g. a baseline).
    ///
    /// Errors: unreadable file, invalid JSON or shape (with the field path and line), or a
    /// `schema_version` this build does not read.
    pub fn load(path: &Path) -> Result<RunReport> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("failed to read results `{}`", path.display()))?;
        RunReport::parse(&text, path)
    }

    /// Parses results text read from `path` (named in errors); see [`RunReport::load`].
    pub fn parse(text: &str, path: &Path) -> Result<RunReport> {
        let version: Option<u64> = serde_json::from_str::<serde_json::Value>(text)
            .ok()
            .and_then(|value| value.get("schema_version")?.as_u64());
        if let Some(version) = version
            && version != u64::from(SCHEMA_VERSION)
        {
            bail!(
                "`{}`: schema_version: {version} is not supported (this toolgate reads {SCHEMA_VERSION})",
                path.display()
            );
        }
        let mut deserializer = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
            let field = error.path().to_string();
            anyhow::anyhow!("`{}`: {field}: {}", path.display(), error.into_inner())
        })
    }

    /// The same report limited to the scenarios that `other` also ran, with its summary
    /// recomputed: a baseline is compared only on common ground.
    pub fn restricted_to(&self, other: &RunReport) -> RunReport {
        let scenarios: Vec<ScenarioResult> = self
            .scenarios
            .iter()
            .filter(|result| other.scenario(&result.id).is_some())
            .cloned()
            .collect();
        RunReport {
            summary: Summary::of(&scenarios),
            scenarios,
            ..self.clone()
        }
    }

    /// The result for scenario `id`.
    pub fn scenario(&self, id: &str) -> Option<&ScenarioResult> {
        self.scenarios.iter().find(|result| result.id == id)
    }
}

/// Writes `bytes` to `path` atomically: a temporary file beside it, then a rename, so a
/// killed run leaves the previous file intact.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)
        .with_context(|| format!("failed to create `{}`", dir.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let temporary = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&temporary, bytes)
        .with_context(|| format!("failed to write `{}`", temporary.display()))?;
    std::fs::rename(&temporary, path)
        .with_context(|| format!("failed to write `{}`", path.display()))
}
