//! First divergence: where a failed run first left the expected path, for every report.

use super::RunView;
use crate::score::{Check, CheckKind};

/// The first failing step of a run, in trajectory order, as one line:
/// - "call 2: expected `crm_log_activity`, got `comm_send_email`" (wrong tool at that step),
/// - "call 2: expected `crm_log_activity`, got nothing" (the run stopped),
/// - "call 2 `crm_log_activity`: " followed by the first argument problem,
/// - "call 5: over the budget of 4 calls",
/// - "final state: " followed by the assertion and its values.
///
/// `None` when every check holds.
pub fn first_divergence(view: &RunView<'_>, checks: &[Check]) -> Option<String> {
    if checks.iter().all(|check| check.passed) {
        return None;
    }
    let mut candidates: Vec<(usize, String)> = Vec::new();
    let mut after = 0usize;
    for (i, (expected, slot)) in view
        .scenario
        .expected_calls
        .iter()
        .zip(view.pairing)
        .enumerate()
    {
        let subject = format!("expected_calls[{i}]");
        let problem = checks.iter().find(|c| !c.passed && c.subject == subject);
        match (slot, problem) {
            (Some(index), Some(check)) => candidates.push((
                *index,
                format!("call {} `{}`: {}", index + 1, expected.tool, check.detail),
            )),
            (Some(index), None) => after = index + 1,
            (None, _) => {
                let got = view
                    .trace
                    .get(after)
                    .map_or_else(|| "nothing".to_string(), |call| format!("`{}`", call.tool));
                candidates.push((
                    after,
                    format!(
                        "call {}: expected `{}`, got {got}",
                        after + 1,
                        expected.tool
                    ),
                ));
            }
        }
    }
    if let Some(check) = checks
        .iter()
        .find(|c| !c.passed && c.kind == CheckKind::MaxCalls)
    {
        let budget = view.scenario.max_calls.unwrap_or(0) as usize;
        candidates.push((
            budget,
            format!("call {}: over the budget ({})", budget + 1, check.detail),
        ));
    }
    if let Some((_, first)) = candidates.into_iter().min_by_key(|(position, _)| *position) {
        return Some(first);
    }
    checks
        .iter()
        .find(|check| !check.passed)
        .map(|check| match check.kind {
            CheckKind::FinalState => format!("final state: {}: {}", check.subject, check.detail),
            _ => format!("{}: {}", check.subject, check.detail),
        })
}
