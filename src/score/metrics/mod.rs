//! Trajectory metrics: what went wrong in a run, beyond pass/fail, so a team can fix it.
//!
//! Every metric is a pure function of the scenario, the trace, the pairing chosen by the
//! checks and the final answer; the same inputs always give the same values. Definitions and
//! sources are on each type.

mod aggregate;
mod arguments;
mod divergence;
pub mod loops;
pub mod provenance;
pub mod recovery;
mod selection;
mod trajectory;

use serde::{Deserialize, Serialize};

use crate::scenario::Scenario;
use crate::trace::CallRecord;

pub use aggregate::{
    ConfusionCell, Grouped, MetricsReport, MetricsReportTally, MetricsSummary, MetricsTally,
};
pub use arguments::{ArgumentError, ArgumentMetrics};
pub use divergence::first_divergence;
pub use loops::LoopFinding;
pub use provenance::{ProvenanceFinding, ProvenanceKind};
pub use recovery::{LOOP_ATTEMPTS, Recovery, RecoveryClass};
pub use selection::{Confusion, SelectionMetrics};
pub use trajectory::TrajectoryMatch;

/// Chain efficiency below this is flagged (calls made are more than 1/0.7 of the minimum).
pub const EFFICIENCY_FLOOR: f64 = 0.7;

/// Everything measured about one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunMetrics {
    /// Tool selection against the expected calls.
    pub selection: SelectionMetrics,
    /// Argument correctness of every call.
    pub arguments: ArgumentMetrics,
    /// Expected-vs-actual call matching as precision, recall and F1.
    pub trajectory: TrajectoryMatch,
    /// Minimum calls the scenario needs / calls made, in 0.0..=1.0; `None` when no call was
    /// needed and none was made.
    pub chain_efficiency: Option<f64>,
    /// Whether `chain_efficiency` is below [`EFFICIENCY_FLOOR`].
    pub inefficient: bool,
    /// Identical calls repeated without an injected fault to excuse them.
    pub loops: Vec<LoopFinding>,
    /// Id-like argument values the run never saw (invented), or nearly saw (drift).
    pub provenance: Vec<ProvenanceFinding>,
    /// What the agent did after each failed call.
    pub recovery: Vec<Recovery>,
    /// The first step where a failed run left the expected path, e.g.
    /// "call 2: expected `crm_log_activity`, got `comm_send_email`".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_divergence: Option<String>,
    /// Wall time of each tool call in the harness, p50 and p95, in microseconds.
    pub call_latency_us: Percentiles,
    /// Emitted calls that reached the tool (succeeded, failed, or hit an injected fault).
    #[serde(default)]
    pub calls_executed: usize,
    /// Emitted calls the harness refused before they reached the tool (unusable arguments,
    /// unknown tool, arguments invalid against the schema); executed + refused = emitted.
    #[serde(default)]
    pub calls_refused: usize,
    /// The calls the agent's parser noted something about (a duplicate id, possible
    /// truncation, `function_call` disagreeing with `tool_calls`, a repair), in trace order;
    /// absent in results written before these notes reached the report.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parser_notes: Vec<NotedCall>,
    /// Results whose `structuredContent` broke the tool's `outputSchema`, one line per
    /// violating path as "call 2 `tool`: `/total`: message", in trace order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_violations: Vec<String>,
    /// A scripted conversation's measures; absent for a single request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<crate::score::conversation::ConversationMetrics>,
}

/// One call with the parser's notes about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NotedCall {
    /// Position of the call in the trace (0-based).
    pub call: usize,
    /// The tool name as the agent sent it.
    pub tool: String,
    /// The notes, in the order the parser made them; never empty.
    pub notes: Vec<crate::trace::CallNote>,
}

impl NotedCall {
    /// The notes of every noted call of `trace`, in trace order.
    pub fn of(trace: &[CallRecord]) -> Vec<NotedCall> {
        trace
            .iter()
            .filter(|call| !call.notes.is_empty())
            .map(|call| NotedCall {
                call: call.index,
                tool: call.tool.clone(),
                notes: call.notes.clone(),
            })
            .collect()
    }

    /// One line for reports: "call 2 `crm_log_activity`: duplicate_id (duplicate call id:
    /// result paired by order (ambiguous))", call numbers 1-based.
    pub fn render(&self) -> String {
        let notes: Vec<String> = self
            .notes
            .iter()
            .map(|note| format!("{} ({})", note.as_str(), note.meaning()))
            .collect();
        format!(
            "call {} `{}`: {}",
            self.call + 1,
            self.tool,
            notes.join(", ")
        )
    }
}

/// Two percentiles of a sample (nearest-rank method); zero for an empty sample.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Percentiles {
    /// Median.
    pub p50: u64,
    /// 95th percentile.
    pub p95: u64,
}

impl Percentiles {
    /// Nearest-rank percentiles of `values`.
    pub fn of(values: &[u64]) -> Percentiles {
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        let rank = |p: f64| -> u64 {
            if sorted.is_empty() {
                return 0;
            }
            let index = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1;
            sorted[index]
        };
        Percentiles {
            p50: rank(0.50),
            p95: rank(0.95),
        }
    }
}

/// Inputs of the metrics, besides the scenario and the trace.
pub struct RunView<'a> {
    /// The scenario.
    pub scenario: &'a Scenario,
    /// Every call, in arrival order.
    pub trace: &'a [CallRecord],
    /// For each expected call, the actual call paired with it by the checks.
    pub pairing: &'a [Option<usize>],
    /// The agent's final answer.
    pub final_answer: Option<&'a str>,
    /// The scoring rules the checks used.
    pub options: crate::score::ScoringOptions,
}

/// Measures one run; `checks` are the run's deterministic checks (for the first divergence).
pub fn measure(view: &RunView<'_>, checks: &[crate::score::Check]) -> RunMetrics {
    let needed = view.scenario.expected_calls.len();
    let made = view.trace.len();
    let chain_efficiency = match (needed, made) {
        (0, 0) => None,
        (_, 0) => Some(0.0),
        (needed, made) => Some((needed as f64 / made as f64).min(1.0)),
    };
    let durations: Vec<u64> = view.trace.iter().map(|call| call.duration_us).collect();
    let counts = crate::score::budget::CallCounts::of(view.trace);
    RunMetrics {
        calls_executed: counts.executed,
        calls_refused: counts.refused,
        conversation: None,
        selection: selection::measure(view),
        arguments: arguments::measure(view),
        trajectory: trajectory::measure(view),
        chain_efficiency,
        inefficient: chain_efficiency.is_some_and(|e| e < EFFICIENCY_FLOOR),
        loops: loops::find(view.trace, view.options.loops),
        provenance: provenance::find(view),
        recovery: recovery::classify(view),
        first_divergence: first_divergence(view, checks),
        call_latency_us: Percentiles::of(&durations),
        parser_notes: NotedCall::of(view.trace),
        output_violations: view
            .trace
            .iter()
            .flat_map(|call| {
                call.output_violations.iter().map(move |violation| {
                    let at = if violation.pointer.is_empty() {
                        "/"
                    } else {
                        &violation.pointer
                    };
                    format!(
                        "call {} `{}`: `{at}`: {}",
                        call.index + 1,
                        call.tool,
                        violation.message
                    )
                })
            })
            .collect(),
    }
}

pub use crate::json::canonical;

#[cfg(test)]
mod tests {
    //! Metric helpers: canonical JSON ignores key order and number spelling; nearest-rank p50/p95.

    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_ignores_key_order_and_number_spelling() {
        assert_eq!(
            canonical(&json!({"b": 1.0, "a": {"d": 2, "c": 3}})),
            r#"{"a":{"c":3,"d":2},"b":1}"#
        );
    }

    #[test]
    fn percentiles_use_nearest_rank() {
        let p = Percentiles::of(&[5, 1, 3, 2, 4, 100, 6, 7, 8, 9]);
        assert_eq!(p, Percentiles { p50: 5, p95: 100 });
        assert_eq!(Percentiles::of(&[]), Percentiles { p50: 0, p95: 0 });
    }
}

#[cfg(test)]
mod run_tests;
