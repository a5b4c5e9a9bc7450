//! Scoring every mutant of a scenario with the real scorer.

use std::sync::Arc;

use serde_json::Value;

use super::mutants;
use super::replay::{replay, replay_on};
use super::{MutantResult, ScenarioMutants};
use crate::catalog::Catalog;
use crate::harness::{BackendFactory, ToolSet};
use crate::scenario::Scenario;
use crate::score::{self, CheckKind, Outcome, ScoringOptions};
use crate::trace::CallRecord;

/// The scenario a mutant is replayed on: `scenario` itself, or a copy with the mutant's
/// injected fault added. Scoring always reads `scenario`.
fn played_on<'a>(
    scenario: &'a Scenario,
    mutant: &mutants::Mutant,
) -> std::borrow::Cow<'a, Scenario> {
    match &mutant.fault {
        None => std::borrow::Cow::Borrowed(scenario),
        Some(fault) => {
            let mut faulted = scenario.clone();
            faulted.faults.push(fault.clone());
            std::borrow::Cow::Owned(faulted)
        }
    }
}

/// Derives the mutants of `scenario`'s reference run (`trace`, its scorer `pairing`, its
/// final `answer`), replays each on `seeded` and scores it.
pub fn analyse(
    scenario: &Scenario,
    trace: &[CallRecord],
    pairing: &[Option<usize>],
    answer: Option<&str>,
    seeded: &Value,
    tools: &Arc<ToolSet>,
    catalog: &Catalog,
) -> ScenarioMutants {
    score_mutants(
        scenario,
        trace,
        pairing,
        answer,
        seeded,
        catalog,
        |played, calls| Ok(replay(played, calls, seeded, tools)),
    )
    .expect("the built-in world always starts")
}

/// As [`analyse`], replaying each mutant on a fresh backend of `backends`, which must answer
/// without waiting (the suite's declarative mocks). Errors: a backend that could not be made.
pub fn analyse_in_process(
    scenario: &Scenario,
    trace: &[CallRecord],
    pairing: &[Option<usize>],
    answer: Option<&str>,
    backends: &dyn BackendFactory,
    catalog: &Catalog,
) -> Result<ScenarioMutants, String> {
    let seeded = scenario.seeded.as_ref();
    score_mutants(
        scenario,
        trace,
        pairing,
        answer,
        seeded,
        catalog,
        |played, calls| replay_on(played, calls, backends),
    )
}

type Replayed = (Vec<CallRecord>, Option<Value>);

fn score_mutants(
    scenario: &Scenario,
    trace: &[CallRecord],
    pairing: &[Option<usize>],
    answer: Option<&str>,
    seeded: &Value,
    catalog: &Catalog,
    replay: impl Fn(&Scenario, &[crate::scenario::PlannedCall]) -> Result<Replayed, String>,
) -> Result<ScenarioMutants, String> {
    let mutants = mutants::derive(scenario, trace, pairing, answer, catalog)
        .into_iter()
        .map(|mutant| {
            let (trace, final_state) = replay(&played_on(scenario, &mutant), &mutant.calls)?;
            let scored = score::score(
                scenario,
                &trace,
                seeded,
                final_state.as_ref(),
                mutant.answer.as_deref(),
                ScoringOptions::default(),
            );
            let mut killed_by: Vec<CheckKind> = Vec::new();
            for check in scored.failures() {
                if !killed_by.contains(&check.kind) {
                    killed_by.push(check.kind);
                }
            }
            Ok(MutantResult {
                kind: mutant.kind,
                description: mutant.description,
                killed: scored.outcome == Outcome::Fail,
                killed_by,
                not_judged: None,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(ScenarioMutants {
        id: scenario.id.clone(),
        draft: scenario.draft,
        mutants,
    })
}

/// The mutation analysis of a suite from its reference runs (`runs[i]` is the run of
/// `scenarios[i]`) on the built-in world. A run that errored or was not scored contributes no
/// mutants.
///
/// Errors: a scenario's fixture that can no longer be read.
pub fn analyse_suite(
    scenarios: &[Scenario],
    runs: &[crate::runner::ScenarioRun],
    tools: &Arc<ToolSet>,
    catalog: &Catalog,
) -> anyhow::Result<super::MutationReport> {
    analyse_suite_with(scenarios, runs, |scenario, trace, pairing, answer| {
        Ok(analyse(
            scenario,
            trace,
            pairing,
            answer,
            scenario.seeded.as_ref(),
            tools,
            catalog,
        ))
    })
}

/// As [`analyse_suite`], replaying the mutants on fresh backends of `backends`, which must
/// answer without waiting (the suite's declarative mocks; real servers go through
/// [`analyse_suite_on`]). Errors: a backend that could not be made.
pub fn analyse_suite_in_process(
    scenarios: &[Scenario],
    runs: &[crate::runner::ScenarioRun],
    backends: &dyn BackendFactory,
    catalog: &Catalog,
) -> anyhow::Result<super::MutationReport> {
    analyse_suite_with(scenarios, runs, |scenario, trace, pairing, answer| {
        analyse_in_process(scenario, trace, pairing, answer, backends, catalog)
            .map_err(|error| anyhow::anyhow!("scenario `{}`: {error}", scenario.id))
    })
}

fn analyse_suite_with(
    scenarios: &[Scenario],
    runs: &[crate::runner::ScenarioRun],
    analyse_one: impl Fn(
        &Scenario,
        &[CallRecord],
        &[Option<usize>],
        Option<&str>,
    ) -> anyhow::Result<ScenarioMutants>,
) -> anyhow::Result<super::MutationReport> {
    let mut report = super::MutationReport::default();
    for (scenario, run, pairing, answer) in scored_runs(scenarios, runs) {
        report
            .scenarios
            .push(analyse_one(scenario, &run.trace, pairing, answer)?);
    }
    Ok(report)
}

/// The reference runs mutants are derived from: each scored run (`runs[i]` is the run of
/// `scenarios[i]`) with its scenario, its scorer pairing and its final answer. A run that
/// errored or was not scored yields nothing.
fn scored_runs<'a>(
    scenarios: &'a [Scenario],
    runs: &'a [crate::runner::ScenarioRun],
) -> impl Iterator<
    Item = (
        &'a Scenario,
        &'a crate::runner::ScenarioRun,
        &'a [Option<usize>],
        Option<&'a str>,
    ),
> {
    scenarios.iter().zip(runs).filter_map(|(scenario, run)| {
        let scored = run.score.as_ref()?;
        let answer = run
            .agent
            .as_ref()
            .and_then(|agent| agent.final_answer.as_deref());
        Some((scenario, run, scored.pairing.as_slice(), answer))
    })
}

/// The mutation analysis of a suite whose tools run on `backends` (the user's own servers):
/// as [`analyse_suite`], but each mutant replays on a fresh backend of its own, with the
/// scenario's final-state probes before and after. A mutant whose backend cannot start is
/// counted as surviving (a broken server kills nothing).
pub async fn analyse_suite_on(
    scenarios: &[Scenario],
    runs: &[crate::runner::ScenarioRun],
    catalog: &Catalog,
    backends: &dyn crate::harness::BackendFactory,
) -> super::MutationReport {
    let mut report = super::MutationReport::default();
    for (scenario, run, pairing, answer) in scored_runs(scenarios, runs) {
        let mut results = Vec::new();
        for mutant in mutants::derive(scenario, &run.trace, pairing, answer, catalog) {
            let fate = replay_live(scenario, &mutant, backends).await;
            let (killed_by, not_judged) = match fate {
                Some(Fate::Judged(kinds)) => (kinds, None),
                Some(Fate::NotJudged(why)) => (Vec::new(), Some(why)),
                None => (Vec::new(), None),
            };
            results.push(MutantResult {
                kind: mutant.kind,
                description: mutant.description,
                killed: !killed_by.is_empty(),
                killed_by,
                not_judged,
            });
        }
        report.scenarios.push(ScenarioMutants {
            id: scenario.id.clone(),
            draft: scenario.draft,
            mutants: results,
        });
    }
    report
}

/// What the play of a mutant on the user's servers (or their cassettes) tells.
enum Fate {
    /// The kinds of the failing checks; empty when it passes.
    Judged(Vec<CheckKind>),
    /// Under replay, the mutant left the recording and only checks that need the live servers
    /// failed it (`not_recorded`, probes that are no evidence): why, in words.
    NotJudged(String),
}

/// Replays `mutant` on a fresh backend and scores it, or `None` when the backend did not start
/// or broke.
///
/// Under replay, a check that reads the trajectory alone (expected calls, arguments,
/// forbidden calls, call budgets, the answer's text) decides as it would live, so a mutant it
/// fails is killed. A mutant that only checks needing the live servers fail
/// ([`needs_live_servers`](super::replay::needs_live_servers)) cannot be judged: live, its
/// call might have been answered and its probes might have passed.
async fn replay_live(
    scenario: &Scenario,
    mutant: &mutants::Mutant,
    backends: &dyn crate::harness::BackendFactory,
) -> Option<Fate> {
    let (played, before, after) = super::replay::play_live(
        &played_on(scenario, mutant),
        &[(&mutant.calls, None)],
        backends,
    )
    .await?;
    let mut scored = score::score(
        scenario,
        &played.trace,
        scenario.seeded.as_ref(),
        None,
        mutant.answer.as_deref(),
        ScoringOptions::default(),
    );
    scored.add_checks(score::probes::probe_checks(scenario, &before, &after));
    let missed = played.trace.iter().any(|call| call.not_recorded);
    let needs_live = |check: &score::Check| super::replay::needs_live_servers(check, missed);
    let mut killed_by: Vec<CheckKind> = Vec::new();
    let mut unjudged: Option<&score::Check> = None;
    for check in scored.failures() {
        if needs_live(check) {
            unjudged.get_or_insert(check);
        } else if !killed_by.contains(&check.kind) {
            killed_by.push(check.kind);
        }
    }
    Some(match unjudged {
        Some(check) if killed_by.is_empty() => Fate::NotJudged(check.detail.clone()),
        _ => Fate::Judged(killed_by),
    })
}
