//! Checks from `final_state_probes`: the probe's result after the run, against its assertions,
//! with `baseline` read from the same probe on the freshly seeded backend.

use serde_json::{Value, json};

use super::{Check, CheckKind};
use crate::scenario::{PROBE_RESULT, Scenario};

/// A probe's result (see [`crate::scenario::Probe`]), or why the probe call failed.
pub type ProbeResult = Result<Value, String>;

/// One check per assertion of each probe of `scenario`, in file order. `before[i]` and
/// `after[i]` are probe `i`'s results before and after the run; a probe that failed (either
/// time) fails all its assertions, saying why. Missing entries count as failed probes.
pub fn probe_checks(scenario: &Scenario, before: &[ProbeResult], after: &[ProbeResult]) -> Vec<Check> {
    let mut checks = Vec::new();
    let missing: ProbeResult = Err("the probe did not run".to_string());
    for (i, probe) in scenario.final_state_probes.iter().enumerate() {
        let before = before.get(i).unwrap_or(&missing);
        let after = after.get(i).unwrap_or(&missing);
        for (j, assertion) in probe.assertions.iter().enumerate() {
            let subject = format!(
                "final_state_probes[{i}] `{}` assertions[{j}] `{}`",
                probe.tool,
                assertion.source()
            );
            let (passed, detail) = match (before, after) {
                (Err(error), _) => (false, format!("the probe failed before the run: {error}")),
                (_, Err(error)) => (false, format!("the probe failed after the run: {error}")),
                (Ok(before), Ok(after)) => {
                    let seeded = json!({ PROBE_RESULT: before });
                    let state = json!({ PROBE_RESULT: after });
                    match assertion.evaluate(&seeded, &state) {
                        Ok(evaluation) => (evaluation.passed, evaluation.detail),
                        Err(error) => (false, format!("could not evaluate: {error}")),
                    }
                }
            };
            checks.push(Check {
                kind: CheckKind::FinalState,
                subject,
                passed,
                detail,
            });
        }
    }
    checks
}
