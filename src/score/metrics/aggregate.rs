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
    /// Runs that were scripted conversations.
    #[serde(default)]
    pub conversations: usize,
    /// Mean user messages (the prompt included) over the conversations that reached their
    /// end: turns to completion.
    #[serde(default)]
    pub turns_to_completion: Option<f64>,
    /// Questions the script had no answer for, over all conversations.
    #[serde(default)]
    pub unneeded_questions: usize,
}

fn rate(part: usize, whole: usize) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

impl MetricsSummary {
    /// Aggregates `runs`, in order (the order of the chain-efficiency sum).
    pub fn of<'a>(runs: impl IntoIterator<Item = &'a RunMetrics>) -> MetricsSummary {
        let mut tally = MetricsTally::default();
        for (position, run) in runs.into_iter().enumerate() {
            tally.add(position, run);
        }
        tally.finish()
    }
}

/// A [`MetricsSummary`] built up one run at a time, in any order: counts, plus the two
/// per-run numbers a mean and a median need (a chain efficiency with the run's position, and
/// a median latency), never the runs themselves.
#[derive(Debug, Clone, Default)]
pub struct MetricsTally {
    /// The counts that need no finishing.
    summary: MetricsSummary,
    expected: usize,
    correct: usize,
    calls: usize,
    valid: usize,
    accurate: usize,
    cells: BTreeMap<(String, Option<String>), usize>,
    /// Chain efficiency by run position: summed in position order, so the mean does not
    /// depend on the order runs finished in.
    efficiencies: Vec<(usize, f64)>,
    medians: Vec<u64>,
    completed: usize,
    completed_messages: usize,
}

impl MetricsTally {
    /// Counts `run`, the run at `position` of the suite (its place in the results file).
    pub fn add(&mut self, position: usize, run: &RunMetrics) {
        let summary = &mut self.summary;
        summary.runs += 1;
        self.expected += run.selection.expected;
        self.correct += run.selection.correct;
        for tool in &run.selection.hits {
            *self
                .cells
                .entry((tool.clone(), Some(tool.clone())))
                .or_default() += 1;
        }
        for confusion in &run.selection.confusions {
            *self
                .cells
                .entry((confusion.expected.clone(), confusion.called.clone()))
                .or_default() += 1;
        }
        self.calls += run.arguments.calls;
        self.valid += run.arguments.schema_valid;
        self.accurate += run.arguments.accurate;
        for error in &run.arguments.errors {
            *summary.argument_errors.entry(error.class).or_default() += 1;
        }
        if let Some(efficiency) = run.chain_efficiency {
            self.efficiencies.push((position, efficiency));
        }
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
        if let Some(conversation) = &run.conversation {
            summary.conversations += 1;
            summary.unneeded_questions += conversation.unneeded_questions;
            if conversation.completed {
                self.completed += 1;
                self.completed_messages += conversation.messages;
            }
        }
        if run.arguments.calls > 0 {
            self.medians.push(run.call_latency_us.p50);
            summary.call_latency_us.p95 = summary.call_latency_us.p95.max(run.call_latency_us.p95);
        }
    }

    /// The summary of every run added.
    pub fn finish(mut self) -> MetricsSummary {
        let mut summary = self.summary;
        summary.selection_accuracy = rate(self.correct, self.expected);
        summary.schema_valid_rate = rate(self.valid, self.calls);
        summary.call_accuracy = rate(self.accurate, self.calls);
        self.efficiencies.sort_by_key(|(position, _)| *position);
        summary.chain_efficiency = (!self.efficiencies.is_empty()).then(|| {
            self.efficiencies.iter().map(|(_, e)| e).sum::<f64>() / self.efficiencies.len() as f64
        });
        summary.call_latency_us.p50 = Percentiles::of(&self.medians).p50;
        summary.turns_to_completion = rate(self.completed_messages, self.completed);
        summary.confusion = self
            .cells
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
    /// Aggregates `runs` overall and per group, in order.
    pub fn of(runs: &[Grouped<'_>]) -> MetricsReport {
        let mut tally = MetricsReportTally::default();
        for (position, run) in runs.iter().enumerate() {
            tally.add(position, run);
        }
        tally.finish()
    }
}

/// A [`MetricsReport`] built up one run at a time, in any order: a [`MetricsTally`] overall
/// and one per tier, category and type.
#[derive(Debug, Clone, Default)]
pub struct MetricsReportTally {
    overall: MetricsTally,
    by_tier: BTreeMap<u8, MetricsTally>,
    by_category: BTreeMap<String, MetricsTally>,
    by_type: BTreeMap<String, MetricsTally>,
}

impl MetricsReportTally {
    /// Counts `run`, the run at `position` of the suite.
    pub fn add(&mut self, position: usize, run: &Grouped<'_>) {
        self.overall.add(position, run.metrics);
        self.by_tier
            .entry(run.tier)
            .or_default()
            .add(position, run.metrics);
        self.by_category
            .entry(run.category.clone())
            .or_default()
            .add(position, run.metrics);
        self.by_type
            .entry(run.kind.clone())
            .or_default()
            .add(position, run.metrics);
    }

    /// The report of every run added.
    pub fn finish(self) -> MetricsReport {
        fn each<K: Ord>(groups: BTreeMap<K, MetricsTally>) -> BTreeMap<K, MetricsSummary> {
            groups
                .into_iter()
                .map(|(key, tally)| (key, tally.finish()))
                .collect()
        }
        MetricsReport {
            overall: self.overall.finish(),
            by_tier: each(self.by_tier),
            by_category: each(self.by_category),
            by_type: each(self.by_type),
        }
    }
}
