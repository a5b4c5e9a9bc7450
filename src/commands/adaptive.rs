//! The schedule of `gate --adaptive`: the runner asks it for each round's runs, and it
//! answers from the gate's projection ([`gate::adaptive`]).

use crate::gate::adaptive::{self, Planned, Projection, Tally};
use crate::gate::{Baseline, Policy};
use crate::results::AdaptiveMeta;
use crate::results::pins::Pins;
use crate::runner::Schedule;
use crate::scenario::Scenario;
use crate::score::Outcome;

/// Adaptive repeats over one run's scenarios against one baseline.
pub(super) struct AdaptiveSchedule {
    planned: Vec<Planned>,
    /// Only the band and alpha are read.
    policy: Policy,
    max_repeat: u32,
    certainty: f64,
}

impl AdaptiveSchedule {
    /// The schedule of a `gate` run, when `--adaptive` asks for one.
    pub(super) fn of(
        args: &crate::cli::GateArgs,
        settings: &crate::config::Settings,
        scenarios: &[Scenario],
        baseline: Option<&Baseline>,
        pins: &Pins,
    ) -> Option<std::sync::Arc<AdaptiveSchedule>> {
        settings.adaptive.then(|| {
            std::sync::Arc::new(AdaptiveSchedule::new(
                scenarios,
                baseline,
                pins,
                (settings.tolerance, args.ci.alpha),
                settings.repeat,
            ))
        })
    }

    /// The schedule of `scenarios` (in run order) with at most `max_repeat` runs each, against
    /// `baseline` (none: every scenario gets all its runs), this run's `pins`, and the gate's
    /// tolerance band (points) and alpha.
    pub(super) fn new(
        scenarios: &[Scenario],
        baseline: Option<&Baseline>,
        pins: &Pins,
        (tolerance_points, alpha): (f64, f64),
        max_repeat: u32,
    ) -> AdaptiveSchedule {
        let ids: Vec<(&str, u8)> = scenarios.iter().map(|s| (s.id.as_str(), s.tier)).collect();
        AdaptiveSchedule {
            planned: adaptive::plan(&ids, baseline, Some(pins)),
            policy: Policy {
                tolerance_points,
                alpha,
                ..Policy::default()
            },
            max_repeat,
            certainty: adaptive::DEFAULT_CERTAINTY,
        }
    }

    /// What results.json records of the schedule after `runs` runs.
    pub(super) fn meta(&self, runs: usize) -> AdaptiveMeta {
        AdaptiveMeta {
            max_repeat: self.max_repeat,
            certainty: self.certainty,
            runs,
            planned: self.planned.len() * self.max_repeat as usize,
        }
    }
}

impl Schedule for AdaptiveSchedule {
    fn next(&self, finished: &[(usize, Outcome)]) -> Vec<(usize, u32)> {
        if finished.is_empty() {
            return adaptive::first_round(&self.planned, self.max_repeat)
                .into_iter()
                .enumerate()
                .collect();
        }
        let mut tallies = vec![Tally::default(); self.planned.len()];
        for &(index, outcome) in finished {
            if let Some(tally) = tallies.get_mut(index) {
                tally.add(outcome);
            }
        }
        match adaptive::project(
            &self.planned,
            &tallies,
            &self.policy,
            self.max_repeat,
            self.certainty,
        ) {
            Projection::Complete | Projection::Settled { .. } => Vec::new(),
            Projection::Unsettled { next } => next,
        }
    }
}
