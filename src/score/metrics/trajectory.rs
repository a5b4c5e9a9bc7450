//! Expected-vs-actual calls as precision, recall and F1.
//!
//! Calls count as matched only through the pairing (by position, never by value: field case
//! B07, deepeval#3141), so no score can exceed 1.0. Empty cases follow field case B09
//! (deepeval#2024, #2242): nothing expected and nothing called is a correct abstention (1.0);
//! calls where none were expected score 0.0.

use serde::{Deserialize, Serialize};

use super::RunView;

/// Precision, recall and F1 of a trajectory, each in 0.0..=1.0.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TrajectoryMatch {
    /// Paired calls / calls made (1.0 when nothing was made and nothing expected).
    pub precision: f64,
    /// Paired calls / calls expected (1.0 when nothing was expected).
    pub recall: f64,
    /// Harmonic mean of precision and recall (0.0 when both are 0).
    pub f1: f64,
}

impl TrajectoryMatch {
    /// From counts: `paired` expected calls matched out of `expected`, with `made` calls.
    pub fn from_counts(paired: usize, expected: usize, made: usize) -> TrajectoryMatch {
        let ratio = |part: usize, whole: usize, empty: f64| {
            if whole == 0 {
                empty
            } else {
                part as f64 / whole as f64
            }
        };
        let (precision, recall) = match (expected, made) {
            (0, 0) => (1.0, 1.0),
            (0, _) => (0.0, 0.0),
            _ => (ratio(paired, made, 0.0), ratio(paired, expected, 1.0)),
        };
        let f1 = if precision + recall == 0.0 {
            0.0
        } else {
            2.0 * precision * recall / (precision + recall)
        };
        TrajectoryMatch {
            precision,
            recall,
            f1,
        }
    }
}

pub(super) fn measure(view: &RunView<'_>) -> TrajectoryMatch {
    let paired = view.pairing.iter().flatten().count();
    TrajectoryMatch::from_counts(paired, view.scenario.expected_calls.len(), view.trace.len())
}

#[cfg(test)]
mod tests {
    //! Trajectory F1: repeated calls score by position, and empty trajectories score as defined.

    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    /// Field case B07: two identical expected calls against 2, 1 and 3 identical actual calls.
    #[test]
    fn b07_repeated_calls_score_by_position() {
        let two = TrajectoryMatch::from_counts(2, 2, 2);
        assert_eq!((two.recall, two.precision), (1.0, 1.0));
        let one = TrajectoryMatch::from_counts(1, 2, 1);
        assert_eq!((one.recall, one.precision), (0.5, 1.0));
        let three = TrajectoryMatch::from_counts(2, 2, 3);
        assert_eq!(three.recall, 1.0);
        assert!(close(three.precision, 2.0 / 3.0));
        assert!(close(three.f1, 0.8));
    }

    /// Field case B09: empty trajectories and unexpected calls.
    #[test]
    fn b09_empty_trajectories() {
        assert_eq!(TrajectoryMatch::from_counts(0, 0, 0).f1, 1.0);
        assert_eq!(TrajectoryMatch::from_counts(0, 0, 1).f1, 0.0);
        assert_eq!(TrajectoryMatch::from_counts(1, 1, 1).f1, 1.0);
        assert_eq!(TrajectoryMatch::from_counts(0, 1, 0).f1, 0.0);
    }
}
