//! Tool selection: was the expected tool called, and if not, which tool was called instead.

use serde::{Deserialize, Serialize};

use super::RunView;

/// One expected tool and the tool called in its place.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Confusion {
    /// The tool the scenario expected.
    pub expected: String,
    /// The tool the agent called at that step, or `None` when it called nothing there.
    pub called: Option<String>,
}

/// Tool selection of one run. Aggregated over runs, `confusions` form a confusion matrix of
/// expected tool against tool called (the diagonal is `correct`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SelectionMetrics {
    /// Expected calls.
    pub expected: usize,
    /// Expected calls answered by a call to the right tool.
    pub correct: usize,
    /// The expected tools that were called, one entry per correct expected call (the
    /// diagonal of the confusion matrix).
    pub hits: Vec<String>,
    /// For each expected call without a call to its tool: what was called instead.
    pub confusions: Vec<Confusion>,
}

impl SelectionMetrics {
    /// `correct / expected` in 0.0..=1.0; `None` when nothing was expected.
    pub fn accuracy(&self) -> Option<f64> {
        (self.expected > 0).then(|| self.correct as f64 / self.expected as f64)
    }
}

/// The tool called "instead" of an unpaired expected call is the first unpaired actual call
/// after the actual call paired with the previous expected call (the step where the expected
/// call belonged).
pub(super) fn measure(view: &RunView<'_>) -> SelectionMetrics {
    let paired: Vec<usize> = view.pairing.iter().flatten().copied().collect();
    let mut taken = vec![false; view.trace.len()];
    for &index in &paired {
        taken[index] = true;
    }
    let mut metrics = SelectionMetrics {
        expected: view.scenario.expected_calls.len(),
        ..Default::default()
    };
    let mut after = 0usize;
    for (expected, slot) in view.scenario.expected_calls.iter().zip(view.pairing) {
        match slot {
            Some(index) => {
                metrics.correct += 1;
                metrics.hits.push(expected.tool.clone());
                after = index + 1;
            }
            None => {
                let instead = (after..view.trace.len()).find(|&i| !taken[i]);
                if let Some(i) = instead {
                    taken[i] = true;
                    after = i + 1;
                }
                metrics.confusions.push(Confusion {
                    expected: expected.tool.clone(),
                    called: instead.map(|i| view.trace[i].tool.clone()),
                });
            }
        }
    }
    metrics
}
