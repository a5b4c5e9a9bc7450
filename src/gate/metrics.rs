//! Metrics beside the pass rate, compared with the baseline in reports: tool selection,
//! arguments, efficiency and behaviour under injected faults.

use serde::{Deserialize, Serialize};

use crate::results::RunReport;
use crate::results::ScenarioKind;
use crate::score::{CheckKind, Outcome};

/// Aggregate metrics of one run (or the mean over a baseline window). Each is `None` when the
/// run had nothing to measure it on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metrics {
    /// Share of `tool_selection` checks that held, in 0.0..=1.0.
    pub selection: Option<f64>,
    /// Share of argument checks (`args_schema`, `args_match`, `args_forbid`,
    /// `args_from_prior`) that held, in 0.0..=1.0.
    pub arguments: Option<f64>,
    /// Mean tool calls per judged scenario run (lower is more efficient).
    pub calls_per_run: Option<f64>,
    /// Pass rate of `error_recovery` scenarios: behaviour with degraded tools.
    pub degraded: Option<f64>,
    /// Mean input plus output tokens per judged run of a model agent; `None` without usage
    /// (agents without a model, results written before usage was kept).
    #[serde(default)]
    pub tokens_per_run: Option<f64>,
    /// Mean model requests per judged run of a model agent.
    #[serde(default)]
    pub model_calls_per_run: Option<f64>,
    /// Mean time spent waiting for the model per judged run, in milliseconds.
    #[serde(default)]
    pub model_ms_per_run: Option<f64>,
    /// Mean cost per judged run in US dollars, when the results pin a price (`--prices`).
    #[serde(default)]
    pub cost_per_run: Option<f64>,
}

/// The usage means of `judged` (runs of `report` that were judged) over the runs that report
/// usage; every usage metric `None` when none does.
fn usage_means(report: &RunReport, judged: &[&crate::results::ScenarioResult]) -> Metrics {
    let usages: Vec<_> = judged.iter().filter_map(|r| r.usage.as_ref()).collect();
    if usages.is_empty() {
        return Metrics::default();
    }
    let price = report.run.as_ref().and_then(|run| run.price);
    Metrics {
        tokens_per_run: mean_of(&usages, |u| (u.prompt_tokens + u.completion_tokens) as f64),
        model_calls_per_run: mean_of(&usages, |u| f64::from(u.requests)),
        model_ms_per_run: mean_of(&usages, |u| u.latency_ms as f64),
        cost_per_run: price.and_then(|price| {
            mean_of(&usages, |u| {
                price.cost(u.prompt_tokens, u.completion_tokens)
            })
        }),
        ..Metrics::default()
    }
}

/// The mean of `pick` over `items`; `None` when there are none.
fn mean_of<T>(items: &[&T], pick: impl Fn(&T) -> f64) -> Option<f64> {
    (!items.is_empty())
        .then(|| items.iter().map(|item| pick(item)).sum::<f64>() / items.len() as f64)
}

fn share(held: usize, total: usize) -> Option<f64> {
    (total > 0).then(|| held as f64 / total as f64)
}

impl Metrics {
    /// Measures `report`; errored and inconclusive runs are left out.
    pub fn of(report: &RunReport) -> Metrics {
        let judged: Vec<_> = report
            .scenarios
            .iter()
            .filter(|r| !r.outcome.is_unjudged())
            .collect();
        let checks = |kinds: &[CheckKind]| {
            let relevant: Vec<_> = judged
                .iter()
                .flat_map(|r| &r.checks)
                .filter(|c| kinds.contains(&c.kind))
                .collect();
            share(relevant.iter().filter(|c| c.passed).count(), relevant.len())
        };
        let degraded: Vec<_> = judged
            .iter()
            .filter(|r| r.kind == ScenarioKind::ErrorRecovery)
            .collect();
        Metrics {
            selection: checks(&[CheckKind::ToolSelection, CheckKind::UnknownTool]),
            arguments: checks(&[
                CheckKind::ArgsSchema,
                CheckKind::ArgsMatch,
                CheckKind::ArgsForbid,
                CheckKind::ArgsFromPrior,
            ]),
            calls_per_run: (!judged.is_empty()).then(|| {
                judged.iter().map(|r| r.calls).sum::<usize>() as f64 / judged.len() as f64
            }),
            degraded: share(
                degraded
                    .iter()
                    .filter(|r| r.outcome == Outcome::Pass)
                    .count(),
                degraded.len(),
            ),
            ..usage_means(report, &judged)
        }
    }

    /// The mean of each metric over `runs`, over the runs that have it.
    pub fn mean(runs: &[Metrics]) -> Metrics {
        let mean = |pick: fn(&Metrics) -> Option<f64>| {
            let values: Vec<f64> = runs.iter().filter_map(pick).collect();
            (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
        };
        Metrics {
            selection: mean(|m| m.selection),
            arguments: mean(|m| m.arguments),
            calls_per_run: mean(|m| m.calls_per_run),
            tokens_per_run: mean(|m| m.tokens_per_run),
            model_calls_per_run: mean(|m| m.model_calls_per_run),
            model_ms_per_run: mean(|m| m.model_ms_per_run),
            cost_per_run: mean(|m| m.cost_per_run),
            degraded: mean(|m| m.degraded),
        }
    }
}

#[cfg(test)]
mod tests {
    //! Metrics: the argument rate counts schema validity alongside the expected values.

    use super::*;
    use crate::score::Check;

    /// A check of `kind` that held or not.
    fn check(kind: CheckKind, passed: bool) -> Check {
        Check {
            kind,
            subject: "expected_calls[0]".into(),
            passed,
            detail: String::new(),
        }
    }

    #[test]
    fn argument_checks_count_schema_validity_with_the_expected_values() {
        let mut report = super::super::verdict::tests::report(&[
            ("T1-001", 1, Outcome::Pass),
            ("T1-002", 1, Outcome::Fail),
        ]);
        report.scenarios[0].checks = vec![
            check(CheckKind::ToolSelection, true),
            check(CheckKind::ArgsSchema, true),
            check(CheckKind::ArgsMatch, true),
        ];
        // The value the scenario expects was sent, but the schema rejects its type.
        report.scenarios[1].checks = vec![
            check(CheckKind::ToolSelection, true),
            check(CheckKind::ArgsSchema, false),
            check(CheckKind::ArgsMatch, true),
            check(CheckKind::ArgsForbid, true),
        ];
        let metrics = Metrics::of(&report);
        assert_eq!(metrics.selection, Some(1.0));
        assert_eq!(metrics.arguments, Some(4.0 / 5.0));
    }
}
