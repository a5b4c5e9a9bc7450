//! Verifying the benchmark itself: every scenario passes with the reference agent, and every
//! scenario's checks fail trajectories broken on purpose (mutation analysis).
//!
//! A mutant is the reference run with one deliberate mistake ([`MutantKind`]), replayed on a
//! fresh world ([`replay`]) and scored by the real scorer. A mutant the checks still pass
//! "survives": either the mistake is harmless, or the scenario cannot see it. A scenario that
//! kills no mutant cannot fail, which is a defect in the scenario.

mod analyse;
pub mod lint;
pub mod mutants;
pub mod render;
pub mod replay;
pub mod trajectories;

use serde::Serialize;

use crate::score::CheckKind;

pub use analyse::{
    analyse, analyse_in_process, analyse_suite, analyse_suite_in_process, analyse_suite_on,
};
pub use mutants::{Mutant, MutantKind, derive};
pub use trajectories::{TrajectoryReport, TrajectoryResult};

/// The share of mutants the suite must kill, in 0.0..=1.0.
pub const REQUIRED_KILL_RATE: f64 = 0.95;

/// One mutant's fate.
#[derive(Debug, Clone, Serialize)]
pub struct MutantResult {
    /// The kind of mistake.
    pub kind: MutantKind,
    /// The mistake in words, e.g. "call 2 `crm_log_activity` dropped".
    pub description: String,
    /// Whether at least one check failed it (never when `not_judged`).
    pub killed: bool,
    /// The kinds of the checks that failed, in check order, without repeats (empty when
    /// `not_judged`).
    pub killed_by: Vec<CheckKind>,
    /// Under replay, why the mutant is not judged: it needs calls the recording lacks (or
    /// leaves out a recorded write), and no check that reads only the trajectory failed it,
    /// so only the live servers could tell whether it is killed (the first difference, in
    /// words). `None` for a judged mutant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_judged: Option<String>,
}

/// The mutation analysis of one scenario.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioMutants {
    /// Scenario id.
    pub id: String,
    /// Whether the scenario is a draft (`draft: true`): its kills are counted apart and never
    /// in the headline rate, since a drafted check has not been judged by a person.
    pub draft: bool,
    /// Every mutant derived from its reference run, in derivation order.
    pub mutants: Vec<MutantResult>,
}

impl ScenarioMutants {
    /// Mutants killed.
    pub fn killed(&self) -> usize {
        self.mutants.iter().filter(|m| m.killed).count()
    }

    /// Mutants judged (all but those [`not_judged`](Self::not_judged)).
    pub fn judged(&self) -> usize {
        self.mutants.len() - self.not_judged().count()
    }

    /// The mutants the checks passed.
    pub fn survivors(&self) -> impl Iterator<Item = &MutantResult> {
        self.mutants
            .iter()
            .filter(|m| !m.killed && m.not_judged.is_none())
    }

    /// The mutants a replay cannot judge (see [`MutantResult::not_judged`]).
    pub fn not_judged(&self) -> impl Iterator<Item = &MutantResult> {
        self.mutants.iter().filter(|m| m.not_judged.is_some())
    }
}

/// Mutation results over a suite.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MutationReport {
    /// One entry per scenario, in suite order.
    pub scenarios: Vec<ScenarioMutants>,
}

impl MutationReport {
    /// Mutants derived over the finished (not draft) scenarios.
    pub fn total(&self) -> usize {
        self.finished().map(|s| s.mutants.len()).sum()
    }

    /// Mutants killed over the finished (not draft) scenarios.
    pub fn killed(&self) -> usize {
        self.finished().map(ScenarioMutants::killed).sum()
    }

    /// Mutants judged over the finished (not draft) scenarios: all but those a replay cannot
    /// judge.
    pub fn judged(&self) -> usize {
        self.finished().map(ScenarioMutants::judged).sum()
    }

    /// Killed / judged over the finished scenarios, in 0.0..=1.0; 1.0 when no mutant is
    /// judged (or there are none).
    pub fn kill_rate(&self) -> f64 {
        match self.judged() {
            0 => 1.0,
            judged => self.killed() as f64 / judged as f64,
        }
    }

    /// Mutants (killed, derived) over the draft scenarios, apart from the headline rate.
    pub fn drafts(&self) -> (usize, usize) {
        self.scenarios
            .iter()
            .filter(|s| s.draft)
            .fold((0, 0), |(killed, total), s| {
                (killed + s.killed(), total + s.mutants.len())
            })
    }

    /// The scenarios that are not drafts, in suite order.
    fn finished(&self) -> impl Iterator<Item = &ScenarioMutants> {
        self.scenarios.iter().filter(|s| !s.draft)
    }

    /// Ids of scenarios that kill no mutant, leaving out those whose every mutant (at least
    /// one) a replay cannot judge.
    pub fn toothless(&self) -> Vec<&str> {
        self.scenarios
            .iter()
            .filter(|s| s.killed() == 0 && (s.mutants.is_empty() || s.judged() > 0))
            .map(|s| s.id.as_str())
            .collect()
    }

    /// Whether the suite meets [`REQUIRED_KILL_RATE`] and every scenario kills a mutant.
    pub fn holds(&self) -> bool {
        self.kill_rate() >= REQUIRED_KILL_RATE && self.toothless().is_empty()
    }
}
