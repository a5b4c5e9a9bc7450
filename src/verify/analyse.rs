//! Scoring every mutant of a scenario with the real scorer.

use std::sync::Arc;

use serde_json::Value;

use super::mutants;
use super::replay::replay;
use super::{MutantResult, ScenarioMutants};
use crate::catalog::Catalog;
use crate::harness::ToolSet;
use crate::scenario::Scenario;
use crate::score::{self, CheckKind, Outcome, ScoringOptions};
use crate::trace::CallRecord;

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
    let mutants = mutants::derive(scenario, trace, pairing, answer, catalog)
        .into_iter()
        .map(|mutant| {
            let (trace, final_state) = replay(scenario, &mutant.calls, seeded, tools);
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
            MutantResult {
                kind: mutant.kind,
                description: mutant.description,
                killed: scored.outcome == Outcome::Fail,
                killed_by,
            }
        })
        .collect();
    ScenarioMutants {
        id: scenario.id.clone(),
        mutants,
    }
}

/// The mutation analysis of a suite from its reference runs (`runs[i]` is the run of
/// `scenarios[i]`). A run that errored or was not scored contributes no mutants.
///
/// Errors: a scenario's fixture that can no longer be read.
pub fn analyse_suite(
    scenarios: &[Scenario],
    runs: &[crate::runner::ScenarioRun],
    tools: &Arc<ToolSet>,
    catalog: &Catalog,
) -> anyhow::Result<super::MutationReport> {
    let mut report = super::MutationReport::default();
    for (scenario, run) in scenarios.iter().zip(runs) {
        let Some(scored) = &run.score else {
            continue;
        };
        let seeded = scenario.seeded.as_ref();
        let answer = run
            .agent
            .as_ref()
            .and_then(|agent| agent.final_answer.as_deref());
        report.scenarios.push(analyse(
            scenario,
            &run.trace,
            &scored.pairing,
            answer,
            seeded,
            tools,
            catalog,
        ));
    }
    Ok(report)
}
