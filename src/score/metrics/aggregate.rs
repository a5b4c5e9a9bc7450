//! Metrics aggregated over runs: overall, per tier, per category and per scenario type.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Percentiles, ProvenanceKind, RecoveryClass, RunMetrics};
use crate::trace::ArgumentErrorClass;

/// One cell of the confusion matrix: how often `expected` was answered by a call to `called`
/// (`None`: no call at that step). Cells with `expected == called` are correct selections.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConfusionCell {
    /// The expected tool.
    pub expected: String,
    /// The tool called in its place.
    pub called: Option<String>,
    /// How many times, at least 1.
    pub count: usize,
}

/// Aggregates of [`RunMetrics`] over a set of runs. Rates are `None` when their denominator
/// is zero.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MetricsSummary {
    /// Runs with metrics (errored runs have none).
    pub runs: usize,
    /// Correct expected calls / expected calls, in 0.0..=1.0.
    pub selection_accuracy: Option<f64>,
    /// Expected tool against tool called, sorted, zero cells left out.
    pub confusion: Vec<ConfusionCell>,
    /// Calls valid against their tool's schema / calls made.
    pub schema_valid_rate: Option<f64>,
    /// Accurate calls (name, schema and expected values right) / calls made.
    pub call_accuracy: Option<f64>,
    /// Argument failures by class.
    pub argument_errors: BTreeMap<ArgumentErrorClass, usize>,
    /// Mean chain efficiency over runs that have one, in 0.0..=1.0.
    pub chain_efficiency: Option<f64>,
    /// Runs below the efficiency floor.
    pub inefficient_runs: usize,
    /// Runs with at least one loop.
    pub runs_with_loops: usize,
    /// Invented identifiers over all runs.
    pub invented_ids: usize,
    /// Near-miss identifiers (parameter drift) over all runs.
    pub drifted_ids: usize,
    /// Failure episodes by what the agent did next.
    pub recovery: BTreeMap<RecoveryClass, usize>,
    /// Median over runs of each run's median tool-call latency, and the largest per-run p95,
    /// in microseconds.
    pub call_latency_us: Percentiles,
}

fn rate(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

impl MetricsSummary {
    /// Aggregates `runs`.
    pub fn of<'a>(runs: impl IntoIterator<Item = &'a RunMetrics>) -> MetricsSummary {
        let mut summary = MetricsSummary::default();
        let (mut expected, mut correct, mut calls, mut valid, mut accurate) = (0, 0, 0, 0, 0);
        let mut cells: BTreeMap<(String, Option<String>), usize> = BTreeMap::new();
        let mut efficiencies = Vec::new();
        let mut medians = Vec::new();
        for run in runs {
            summary.runs += 1;
            expected += run.selection.expected;
            correct += run.selection.correct;
            for tool in &run.selection.hits {
                *cells.entry((tool.clone(), Some(tool.clone()))).or_default() += 1;
            }
            for confusion in &run.selection.confusions {
                *cells
                    .entry((confusion.expected.clone(), confusion.called.clone()))
                    .or_default() += 1;
            }
            calls += run.arguments.calls;
            valid += run.arguments.schema_valid;
            accurate += run.arguments.accurate;
            for error in &run.arguments.errors {
                *summary.argument_errors.entry(error.class).or_default() += 1;
            }
            efficiencies.extend(run.chain_efficiency);
            summary.inefficient_runs += usize::from(run.inefficient);
            summary.runs_with_loops += usize::from(!run.loops.is_empty());
            for finding in &run.provenance {
                match finding.kind {
                    ProvenanceKind::Invented => summary.invented_ids += 1,
                    ProvenanceKind::Drift => summary.drifted_ids += 1,
                }
            }
            for episode in &run.recovery {
                *summary.recovery.entry(episode.class).or_default() += 1;
            }
            if run.arguments.calls > 0 {
                medians.push(run.call_latency_us.p50);
                summary.call_latency_us.p95 =
                    summary.call_latency_us.p95.max(run.call_latency_us.p95);
            }
        }
        summary.selection_accuracy = rate(correct, expected);
        summary.schema_valid_rate = rate(valid, calls);
        summary.call_accuracy = rate(accurate, calls);
        summary.chain_efficiency = (!efficiencies.is_empty())
            .then(|| efficiencies.iter().sum::<f64>() / efficiencies.len() as f64);
        summary.call_latency_us.p50 = Percentiles::of(&medians).p50;
        summary.confusion = cells
            .into_iter()
            .map(|((expected, called), count)| ConfusionCell {
                expected,
                called,
                count,
            })
            .collect();
        summary
    }
}

/// Metrics aggregated overall and by group.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MetricsReport {
    /// Over every run with metrics.
    pub overall: MetricsSummary,
    /// By tier.
    pub by_tier: BTreeMap<u8, MetricsSummary>,
    /// By tool category of the scenario's first expected call (`none` when it expects none).
    pub by_category: BTreeMap<String, MetricsSummary>,
    /// By scenario type.
    pub by_type: BTreeMap<String, MetricsSummary>,
}

/// One run's grouping keys and metrics.
pub struct Grouped<'a> {
    /// 1..=5.
    pub tier: u8,
    /// Category name.
    pub category: String,
    /// Scenario type name.
    pub kind: String,
    /// The run's metrics.
    pub metrics: &'a RunMetrics,
}

impl MetricsReport {
    /// Aggregates `runs` overall and per group.
    pub fn of(runs: &[Grouped<'_>]) -> MetricsReport {
        fn group<K: Ord + Clone>(
            runs: &[Grouped<'_>],
            key: impl Fn(&Grouped<'_>) -> K,
        ) -> BTreeMap<K, MetricsSummary> {
            let mut keys: Vec<K> = runs.iter().map(&key).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .map(|k| {
                    let summary =
                        MetricsSummary::of(runs.iter().filter(|r| key(r) == k).map(|r| r.metrics));
                    (k, summary)
                })
                .collect()
        }
        MetricsReport {
            overall: MetricsSummary::of(runs.iter().map(|r| r.metrics)),
            by_tier: group(runs, |r| r.tier),
            by_category: group(runs, |r| r.category.clone()),
            by_type: group(runs, |r| r.kind.clone()),
        }
    }
}
