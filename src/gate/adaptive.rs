//! Adaptive repeats: a run that stops repeating once the verdict is settled.
//!
//! The fixed design runs every scenario `k` times (`--repeat k`). The adaptive design
//! (`--adaptive`, with `k` its maximum) runs in rounds. The first round runs every scenario
//! the verdict compares with the baseline once, and every other scenario (Tier 5, which has
//! zero tolerance; one new, changed or never judged in the baseline) all `k` times. After each
//! round it projects the verdict the fixed design would reach once every scenario had its `k`
//! runs, and stops as soon as one verdict (pass, or a significant drop beyond the band) has at
//! least the declared certainty (default 0.99). This is stochastic curtailment (Lan, Simon and
//! Halperin 1982, "Stochastically curtailed tests in long-term clinical trials"): the fixed
//! design's verdict is predicted, never replaced by another rule, so its false-block and
//! missed-regression rates carry over up to the 1% left to chance; examples/adaptive_repeats.rs
//! measures both against the fixed design (docs/gate.md, "Adaptive repeats").
//!
//! The runs a scenario has left are predicted from its baseline counts and its runs so far
//! (Beta-binomial with a Jeffreys prior). The next round runs the scenarios whose outcome is
//! uncertain first: a predicted pass probability between 0.05 and 0.95, or an outcome in this
//! run against the baseline's majority (a flip); once nothing is uncertain, every scenario with
//! runs left runs once more.

use std::collections::BTreeSet;

use super::stats::{self, Compared, ScenarioCounts};
use super::{Baseline, Decision, Policy};
use crate::results::RunReport;
use crate::results::pins::Pins;
use crate::score::Outcome;

/// The certainty at which a projected verdict stops the run, unless the user sets another.
pub const DEFAULT_CERTAINTY: f64 = 0.99;

/// A predicted pass probability inside `UNCERTAIN..1 - UNCERTAIN` makes a scenario uncertain.
const UNCERTAIN: f64 = 0.05;

/// What the adaptive design knows of one scenario before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Planned {
    /// Its baseline counts when the verdict compares it (in the baseline, judged there at
    /// least once, its file unchanged); `None` otherwise.
    pub compared: Option<ScenarioCounts>,
    /// Tier 5: always all its runs, compared or not.
    pub tier_5: bool,
}

impl Planned {
    /// Whether its runs may stop short of the maximum.
    fn adaptable(&self) -> bool {
        self.compared.is_some() && !self.tier_5
    }
}

/// One scenario's runs so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Runs that passed (a `degraded` run counts as a failure, as in every pass rate).
    pub passed: usize,
    /// Runs that failed.
    pub failed: usize,
    /// Runs that errored or were inconclusive: made, but judged neither way.
    pub errored: usize,
}

impl Tally {
    /// Counts `outcome`.
    pub fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Pass => self.passed += 1,
            Outcome::Errored | Outcome::Inconclusive => self.errored += 1,
            Outcome::Fail | Outcome::Degraded => self.failed += 1,
        }
    }

    /// Runs made.
    pub fn runs(&self) -> usize {
        self.passed + self.failed + self.errored
    }
}

/// Where an adaptive run stands after a round.
#[derive(Debug, Clone, PartialEq)]
pub enum Projection {
    /// Every scenario has all its runs: the verdict is the fixed design's, as measured.
    Complete,
    /// The fixed design's verdict on the pass rate is `decision` (`Pass` or `Fail`) with at
    /// least the declared certainty.
    Settled {
        /// `Pass` (no significant drop beyond the band) or `Fail`.
        decision: Decision,
        /// Its probability given the runs so far, in 0.0..=1.0.
        probability: f64,
    },
    /// Not settled: the runs to make next.
    Unsettled {
        /// (position of a scenario, runs to add to it), in run order.
        next: Vec<(usize, u32)>,
    },
}

/// The scenarios of a run as the adaptive design sees them: `scenarios` are `(id, tier)` in
/// run order; `pins` are this run's, compared with the baseline's to leave out scenarios
/// whose file changed, as the verdict does.
pub fn plan(
    scenarios: &[(&str, u8)],
    baseline: Option<&Baseline>,
    pins: Option<&Pins>,
) -> Vec<Planned> {
    let changed = match (pins, baseline.and_then(|b| b.pins.as_ref())) {
        (Some(now), Some(before)) => changed_scenarios(now, before),
        _ => BTreeSet::new(),
    };
    scenarios
        .iter()
        .map(|&(id, tier)| Planned {
            compared: baseline
                .and_then(|b| b.scenario(id))
                .filter(|b| b.judged() > 0 && !changed.contains(id))
                .map(|b| ScenarioCounts {
                    passed: b.passed,
                    judged: b.judged(),
                }),
            tier_5: tier == 5,
        })
        .collect()
}

/// The scenarios whose file hash differs between `now` and `before` (both have them).
pub(super) fn changed_scenarios(now: &Pins, before: &Pins) -> BTreeSet<String> {
    now.scenarios
        .iter()
        .filter(|(id, pin)| {
            before
                .scenarios
                .get(*id)
                .is_some_and(|b| b.sha256 != pin.sha256)
        })
        .map(|(id, _)| id.clone())
        .collect()
}

/// Runs per scenario in the first round: one for a scenario whose runs may stop short,
/// `max_repeat` for the rest.
pub fn first_round(planned: &[Planned], max_repeat: u32) -> Vec<u32> {
    planned
        .iter()
        .map(|p| if p.adaptable() { 1 } else { max_repeat })
        .collect()
}

/// Where the run stands after the runs in `tallies` (one per scenario of `planned`), with
/// `max_repeat` runs per scenario planned, against `policy`'s band and alpha.
pub fn project(
    planned: &[Planned],
    tallies: &[Tally],
    policy: &Policy,
    max_repeat: u32,
    certainty: f64,
) -> Projection {
    let max = max_repeat as usize;
    let left = |i: usize| max.saturating_sub(tallies[i].runs());
    if (0..planned.len()).all(|i| left(i) == 0) {
        return Projection::Complete;
    }
    let mut outcome = FinalOutcome::default();
    let (mut mean, mut variance) = (0.0, 0.0);
    for (i, (plan, tally)) in planned.iter().zip(tallies).enumerate() {
        let Some(counts) = plan.compared else {
            continue;
        };
        let judged = max.saturating_sub(tally.errored);
        if judged == 0 {
            continue;
        }
        outcome.add(counts, judged, tally.passed);
        let (p, weight) = predicted(counts, tally);
        let m = left(i) as f64;
        mean += m * p;
        variance += m * p * (1.0 - p) * (1.0 + (m - 1.0) / (weight + 1.0));
    }
    let (pass_from, fail_to) = outcome.thresholds(policy);
    let sd = variance.sqrt();
    let now = outcome.passed as f64;
    // With nothing left that moves the rate, the normal approximation degenerates to the
    // verdict as it stands.
    let tail = |z: f64| {
        if sd > 0.0 {
            stats::normal_cdf(z / sd)
        } else if z >= 0.0 {
            1.0
        } else {
            0.0
        }
    };
    let pass = pass_from.map_or(0.0, |a| 1.0 - tail(a as f64 - 0.5 - now - mean));
    let fail = fail_to.map_or(0.0, |f| tail(f as f64 + 0.5 - now - mean));
    let fixed_done = (0..planned.len()).all(|i| planned[i].adaptable() || left(i) == 0);
    if fixed_done {
        for (decision, probability) in [(Decision::Pass, pass), (Decision::Fail, fail)] {
            if probability >= certainty {
                return Projection::Settled {
                    decision,
                    probability,
                };
            }
        }
    }
    Projection::Unsettled {
        next: next_round(planned, tallies, max),
    }
}

/// The predicted pass probability of a scenario's next runs, and the weight (pseudo-runs) of
/// that prediction: Beta(passes + 1/2, failures + 1/2) over its baseline and this run.
fn predicted(counts: ScenarioCounts, tally: &Tally) -> (f64, f64) {
    let passes = (counts.passed + tally.passed) as f64 + 0.5;
    let failures = (counts.judged - counts.passed + tally.failed) as f64 + 0.5;
    (passes / (passes + failures), passes + failures)
}

/// The runs that come next: all that are left of a scenario whose runs may not stop short
/// (Tier 5, not compared), and one more of each uncertain adaptable scenario; one more of
/// every adaptable scenario with runs left when none is uncertain.
fn next_round(planned: &[Planned], tallies: &[Tally], max: usize) -> Vec<(usize, u32)> {
    let left = |i: usize| u32::try_from(max.saturating_sub(tallies[i].runs())).unwrap_or(u32::MAX);
    let open = (0..planned.len()).filter(|&i| left(i) > 0);
    let fixed: Vec<(usize, u32)> = open
        .clone()
        .filter(|&i| !planned[i].adaptable())
        .map(|i| (i, left(i)))
        .collect();
    let adaptable: Vec<usize> = open.filter(|&i| planned[i].adaptable()).collect();
    let uncertain: Vec<usize> = adaptable
        .iter()
        .copied()
        .filter(|&i| is_uncertain(planned[i], &tallies[i]))
        .collect();
    let once = if uncertain.is_empty() {
        adaptable
    } else {
        uncertain
    };
    fixed
        .into_iter()
        .chain(once.into_iter().map(|i| (i, 1)))
        .collect()
}

/// A compared scenario whose next outcome is in doubt: predicted to pass with a probability
/// between 0.05 and 0.95, or flipped in this run against its baseline's majority.
fn is_uncertain(plan: Planned, tally: &Tally) -> bool {
    let Some(counts) = plan.compared else {
        return true;
    };
    let (p, _) = predicted(counts, tally);
    let flipped = if 2 * counts.passed >= counts.judged {
        tally.failed > 0
    } else {
        tally.passed > 0
    };
    flipped || (UNCERTAIN..=1.0 - UNCERTAIN).contains(&p)
}

/// The compared runs as they will be once every scenario has all its runs: what the fixed
/// design's verdict is a function of.
#[derive(Debug, Default)]
struct FinalOutcome {
    /// Passes so far.
    passed: usize,
    /// Runs judged in the end.
    runs: usize,
    /// Baseline passes and judged runs over the compared scenarios (the pooled rate).
    baseline_passed: usize,
    baseline_judged: usize,
    /// Per scenario, its baseline counts and its judged runs in the end.
    compared: Vec<Compared>,
}

impl FinalOutcome {
    fn add(&mut self, counts: ScenarioCounts, judged: usize, passed: usize) {
        self.passed += passed;
        self.runs += judged;
        self.baseline_passed += counts.passed;
        self.baseline_judged += counts.judged;
        self.compared.push(Compared {
            baseline: counts,
            runs: judged,
        });
    }

    /// The fixed design's verdict on the rate, as a function of the final passes X, is
    /// monotone: `Fail` up to some X, then `Inconclusive`, then `Pass` from some X on.
    /// Returns (the least X that passes, the greatest X that fails), each `None` when no X
    /// does.
    fn thresholds(&self, policy: &Policy) -> (Option<usize>, Option<usize>) {
        if self.runs == 0 || self.baseline_judged == 0 {
            return (Some(0), None);
        }
        let pooled = self.baseline_passed as f64 / self.baseline_judged as f64;
        let within_band =
            |x: usize| (x as f64 / self.runs as f64 - pooled) * 100.0 >= -policy.tolerance_points;
        let pass_from = (0..=self.runs).find(|&x| within_band(x));
        let fail_to = (0..=self.runs).rev().find(|&x| {
            !within_band(x) && stats::regression_p_value(x, &self.compared) < policy.alpha
        });
        (pass_from, fail_to)
    }
}

/// The projection of a finished adaptive run `report` against `baseline`, recomputed from
/// its results exactly as the run computed it while running.
pub fn projection_of(
    report: &RunReport,
    baseline: &Baseline,
    policy: &Policy,
    max_repeat: u32,
    certainty: f64,
) -> Projection {
    let mut ids: Vec<(&str, u8)> = Vec::new();
    let mut tallies: Vec<Tally> = Vec::new();
    for result in &report.scenarios {
        if ids.last().is_none_or(|(id, _)| *id != result.id) {
            ids.push((&result.id, result.tier));
            tallies.push(Tally::default());
        }
        if let Some(tally) = tallies.last_mut() {
            tally.add(result.outcome);
        }
    }
    let planned = plan(&ids, Some(baseline), report.pins.as_ref());
    project(&planned, &tallies, policy, max_repeat, certainty)
}

#[cfg(test)]
mod tests {
    //! The projection settles what the fixed design would decide, and spends runs on doubt.

    use super::*;

    fn compared(passed: usize, judged: usize) -> Planned {
        Planned {
            compared: Some(ScenarioCounts { passed, judged }),
            tier_5: false,
        }
    }

    fn tally(passed: usize, failed: usize) -> Tally {
        Tally {
            passed,
            failed,
            errored: 0,
        }
    }

    fn policy() -> Policy {
        Policy {
            now: std::time::SystemTime::UNIX_EPOCH,
            ..Policy::default()
        }
    }

    #[test]
    fn tier_5_and_scenarios_not_compared_get_every_run_in_the_first_round() {
        let planned = [
            compared(7, 7),
            Planned {
                compared: Some(ScenarioCounts {
                    passed: 7,
                    judged: 7,
                }),
                tier_5: true,
            },
            Planned {
                compared: None,
                tier_5: false,
            },
        ];
        assert_eq!(first_round(&planned, 5), vec![1, 5, 5]);
    }

    #[test]
    fn a_broad_drop_after_one_round_settles_as_a_failure() {
        // 30 scenarios that passed 40 of 40 nights; 12 fail their first run. Even if every
        // remaining run passed, 12 failures of 90 runs are a 13-point drop beyond the band,
        // and significant.
        let planned = vec![compared(40, 40); 30];
        let tallies: Vec<Tally> = (0..30)
            .map(|i| if i < 12 { tally(0, 1) } else { tally(1, 0) })
            .collect();
        match project(&planned, &tallies, &policy(), 3, DEFAULT_CERTAINTY) {
            Projection::Settled {
                decision,
                probability,
            } => {
                assert_eq!(decision, Decision::Fail);
                assert!(probability >= 0.99, "{probability}");
            }
            other => panic!("settled expected, got {other:?}"),
        }
    }

    #[test]
    fn a_flip_against_a_long_baseline_runs_first_and_alone() {
        // 20 scenarios, 40 of 40 nights each; one failed its first run. The others are
        // predicted to pass at 41.5/42 (certain); the flip is what the next round is for.
        let planned = vec![compared(40, 40); 20];
        let mut tallies = vec![tally(1, 0); 20];
        tallies[7] = tally(0, 1);
        match project(&planned, &tallies, &policy(), 3, DEFAULT_CERTAINTY) {
            Projection::Unsettled { next } => assert_eq!(next, vec![(7, 1)]),
            other => panic!("unsettled expected, got {other:?}"),
        }
        // A flip runs until it has all its runs, whatever its second run shows.
        tallies[7] = tally(1, 1);
        match project(&planned, &tallies, &policy(), 3, DEFAULT_CERTAINTY) {
            Projection::Unsettled { next } => assert_eq!(next, vec![(7, 1)]),
            other => panic!("unsettled expected, got {other:?}"),
        }
        // Two passes of three: a flake. The band allows one failure in 60 runs (58.2 passes
        // needed), which is spent: all 38 runs left must pass, 0.988^38 = 0.63, not settled.
        // Nothing is uncertain any more, so every scenario with runs left runs once more.
        tallies[7] = tally(2, 1);
        match project(&planned, &tallies, &policy(), 3, DEFAULT_CERTAINTY) {
            Projection::Unsettled { next } => {
                assert_eq!(next.len(), 19);
                assert!(next.iter().all(|&(i, runs)| i != 7 && runs == 1));
            }
            other => panic!("unsettled expected, got {other:?}"),
        }
    }

    #[test]
    fn a_short_baseline_settles_nothing_early() {
        // One baseline run says little: each scenario is predicted to pass at 2.5 / 3 after
        // a pass, and with 36 scenarios the 3-point band allows 3 failures in 108 runs.
        let planned = vec![compared(1, 1); 36];
        let tallies = vec![tally(1, 0); 36];
        match project(&planned, &tallies, &policy(), 3, DEFAULT_CERTAINTY) {
            Projection::Unsettled { next } => assert_eq!(next.len(), 36),
            other => panic!("unsettled expected, got {other:?}"),
        }
    }

    #[test]
    fn every_planned_run_made_is_complete() {
        let planned = vec![compared(3, 7); 4];
        let tallies = vec![tally(1, 2); 4];
        assert_eq!(
            project(&planned, &tallies, &policy(), 3, DEFAULT_CERTAINTY),
            Projection::Complete
        );
    }
}
