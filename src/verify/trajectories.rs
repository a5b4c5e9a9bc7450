//! Playing the trajectories a scenario carries: every `alternatives` entry (a valid way to
//! do the task) must pass and every `counterexamples` entry (an invalid one) must fail. Each
//! plays like the reference run: on a fresh backend, through the same harness, with the
//! scenario's fault injection, and is scored by the real scorer. A counterexample that ends
//! with `crash: true` is judged as an errored run is, for the harm it did.

use std::collections::BTreeMap;

use serde::Serialize;

use super::replay::Played;
use crate::scenario::{Scenario, Tier, Trajectory};
use crate::score::{self, Check, Outcome, ScoringOptions};

/// What playing one written trajectory gave.
#[derive(Debug, Clone, Serialize)]
pub struct TrajectoryResult {
    /// The scenario's id.
    pub scenario: String,
    /// The scenario's tier.
    pub tier: Tier,
    /// The trajectory's name.
    pub name: String,
    /// Whether it is an alternative (must pass) rather than a counterexample (must fail).
    pub alternative: bool,
    /// How the scorer judged it; `errored` for a crash that did no harm.
    pub outcome: Outcome,
    /// The checks that failed, in check order.
    pub failed: Vec<Check>,
    /// Under replay, why it is not judged: it needs calls the recording lacks (or leaves out a
    /// recorded write) and only checks that need the live servers failed it
    /// ([`needs_live_servers`](super::replay::needs_live_servers)); the first such check's
    /// detail. `None` for a judged trajectory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_judged: Option<String>,
}

impl TrajectoryResult {
    /// Whether the scorer judged it as it must be judged: an alternative passes, a
    /// counterexample fails (a crash that did no harm is not a failure: the gate would
    /// leave it out).
    pub fn holds(&self) -> bool {
        if self.not_judged.is_some() {
            return true;
        }
        if self.alternative {
            self.outcome.is_pass()
        } else {
            self.outcome == Outcome::Fail
        }
    }
}

/// The written trajectories of a suite, played.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TrajectoryReport {
    /// Every trajectory, by scenario in suite order, alternatives first.
    pub results: Vec<TrajectoryResult>,
    /// Catalog findings seen while playing on the user's own servers: `scenario: what`, e.g.
    /// a tool that declares `readOnlyHint: true` but changed what a probe reads
    /// ([`score::probes::read_only_changes`]). Each text once.
    pub findings: Vec<String>,
}

/// Counts for one tier: alternatives and how many were rejected, counterexamples and how
/// many were accepted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TierCounts {
    /// Alternatives played.
    pub alternatives: usize,
    /// Alternatives that did not pass.
    pub valid_rejected: usize,
    /// Counterexamples played.
    pub counterexamples: usize,
    /// Counterexamples that did not fail.
    pub invalid_accepted: usize,
    /// Trajectories of either kind a replay could not judge (see
    /// [`TrajectoryResult::not_judged`]); they count in neither of the above.
    pub not_judged: usize,
}

impl TrajectoryReport {
    /// The counts per tier, in tier order.
    pub fn per_tier(&self) -> BTreeMap<Tier, TierCounts> {
        let mut tiers: BTreeMap<Tier, TierCounts> = BTreeMap::new();
        for result in &self.results {
            let counts = tiers.entry(result.tier).or_default();
            counts.not_judged += usize::from(result.not_judged.is_some());
            if result.alternative {
                counts.alternatives += 1;
                counts.valid_rejected += usize::from(!result.holds());
            } else {
                counts.counterexamples += 1;
                counts.invalid_accepted += usize::from(!result.holds());
            }
        }
        tiers
    }

    /// The counts over the whole suite.
    pub fn total(&self) -> TierCounts {
        self.per_tier()
            .values()
            .fold(TierCounts::default(), |sum, tier| TierCounts {
                alternatives: sum.alternatives + tier.alternatives,
                valid_rejected: sum.valid_rejected + tier.valid_rejected,
                counterexamples: sum.counterexamples + tier.counterexamples,
                invalid_accepted: sum.invalid_accepted + tier.invalid_accepted,
                not_judged: sum.not_judged + tier.not_judged,
            })
    }

    /// The trajectories judged wrongly, in report order.
    pub fn wrong(&self) -> impl Iterator<Item = &TrajectoryResult> {
        self.results.iter().filter(|result| !result.holds())
    }

    /// Whether every trajectory was judged as it must be.
    pub fn holds(&self) -> bool {
        self.wrong().next().is_none()
    }
}

/// Plays every trajectory of `scenario` with `replay` (a trajectory in, its play out) and
/// judges each. Errors: a backend that could not be made.
pub fn play(
    scenario: &Scenario,
    replay: impl Fn(&Trajectory) -> Result<Played, String>,
) -> Result<Vec<TrajectoryResult>, String> {
    let written = scenario
        .alternatives
        .iter()
        .map(|trajectory| (trajectory, true))
        .chain(
            scenario
                .counterexamples
                .iter()
                .map(|trajectory| (trajectory, false)),
        );
    written
        .map(|(trajectory, alternative)| {
            let played = replay(trajectory)?;
            Ok(judge(scenario, trajectory, alternative, &played))
        })
        .collect()
}

/// Scores a played trajectory: as any run (with its conversation's checks), or, for a
/// crash, for its harm only.
pub fn judge(
    scenario: &Scenario,
    trajectory: &Trajectory,
    alternative: bool,
    played: &Played,
) -> TrajectoryResult {
    let (trace, final_state) = (played.trace.as_slice(), played.state.as_ref());
    let seeded = scenario.seeded.as_ref();
    let scored = if trajectory.crash {
        score::harm(
            scenario,
            trace,
            seeded,
            final_state,
            "the agent crashed (a written counterexample)",
        )
    } else {
        let mut scored = score::score(
            scenario,
            trace,
            seeded,
            final_state,
            played.answer.as_deref(),
            ScoringOptions::default(),
        );
        if let Some(conversation) = &played.conversation {
            scored.add_checks(score::conversation_checks(
                scenario,
                conversation,
                trace,
                seeded,
                final_state,
            ));
        }
        Some(scored)
    };
    let (outcome, failed) = match scored {
        Some(scored) => (
            scored.outcome,
            scored.failures().cloned().collect::<Vec<_>>(),
        ),
        None => (Outcome::Errored, Vec::new()),
    };
    TrajectoryResult {
        scenario: scenario.id.clone(),
        tier: scenario.tier,
        name: trajectory.name.clone(),
        alternative,
        outcome,
        failed,
        not_judged: None,
    }
}

/// Plays the trajectories of every scenario in `scenarios` with `replay` (a fresh in-process
/// backend per trajectory: the built-in world or declarative mocks), in suite order.
///
/// Errors: a backend that could not be made, naming the scenario.
pub fn play_suite(
    scenarios: &[Scenario],
    replay: impl Fn(&Scenario, &Trajectory) -> Result<Played, String>,
) -> anyhow::Result<TrajectoryReport> {
    let mut report = TrajectoryReport::default();
    for scenario in scenarios {
        let results = play(scenario, |trajectory| replay(scenario, trajectory))
            .map_err(|error| anyhow::anyhow!("scenario `{}`: {error}", scenario.id))?;
        report.results.extend(results);
    }
    Ok(report)
}

/// As [`play_suite`] for the user's own servers: each trajectory plays on a fresh backend of
/// `backends`, with the scenario's final-state probes before and after. A trajectory whose
/// servers fail to start or break is recorded as errored (an alternative then does not
/// hold; nor does a counterexample).
pub async fn play_suite_on(
    scenarios: &[Scenario],
    backends: &dyn crate::harness::BackendFactory,
) -> TrajectoryReport {
    let mut report = TrajectoryReport::default();
    for scenario in scenarios {
        let written = scenario
            .alternatives
            .iter()
            .map(|t| (t, true))
            .chain(scenario.counterexamples.iter().map(|t| (t, false)));
        for (trajectory, alternative) in written {
            let played =
                super::replay::play_live(scenario, &trajectory.exchanges(), backends).await;
            let result = match played {
                Some((played, before, after)) => {
                    let finding =
                        score::probes::read_only_changes(scenario, &played.trace, &before, &after)
                            .map(|finding| format!("{}: {finding}", scenario.id));
                    if let Some(finding) = finding
                        && !report.findings.contains(&finding)
                    {
                        report.findings.push(finding);
                    }
                    let mut result = judge(scenario, trajectory, alternative, &played);
                    let probes = score::probes::probe_checks(scenario, &before, &after);
                    if !trajectory.crash && probes.iter().any(|check| !check.passed) {
                        result.outcome = Outcome::Fail;
                        result
                            .failed
                            .extend(probes.into_iter().filter(|check| !check.passed));
                    }
                    let missed = played.trace.iter().any(|call| call.not_recorded);
                    let live = |check: &Check| super::replay::needs_live_servers(check, missed);
                    if result.failed.iter().all(live) {
                        result.not_judged = result.failed.first().map(|c| c.detail.clone());
                    }
                    result
                }
                None => TrajectoryResult {
                    scenario: scenario.id.clone(),
                    tier: scenario.tier,
                    name: trajectory.name.clone(),
                    alternative,
                    outcome: Outcome::Errored,
                    failed: Vec::new(),
                    not_judged: None,
                },
            };
            report.results.push(result);
        }
    }
    report
}
