//! Loops: the same tool with the same arguments more than once in a run; in
//! [`LoopMode::ResultAware`] also with the same outcome, so polling is not a loop.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::canonical;
use crate::score::LoopMode;
use crate::trace::CallRecord;

/// A call repeated with identical arguments (compared as canonical JSON, so key order does
/// not matter).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoopFinding {
    /// The tool.
    pub tool: String,
    /// The arguments as canonical JSON.
    pub arguments: String,
    /// Positions of the calls in the trace (0-based), at least two.
    pub calls: Vec<usize>,
}

/// Repeats beyond what injected faults excuse: each call that failed by an injected fault
/// allows one identical retry. In `result_aware` mode calls group by their outcome too (the
/// result or error, compared as canonical JSON), so identical requests that saw different
/// answers (a status poll) are not a loop.
pub fn find(trace: &[CallRecord], mode: LoopMode) -> Vec<LoopFinding> {
    let mut by_request: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    for call in trace {
        by_request
            .entry((call.tool.clone(), canonical(&call.arguments)))
            .or_default()
            .push(call.index);
    }
    // The outcome splits only requests made more than once: a call alone in its group is
    // never a loop, so its result (often the largest part of a call) is not rendered.
    let mut groups: BTreeMap<(String, String, String), Vec<usize>> = BTreeMap::new();
    for ((tool, arguments), calls) in by_request {
        if calls.len() < 2 || mode == LoopMode::ArgsOnly {
            groups.insert((tool, arguments, String::new()), calls);
            continue;
        }
        for index in calls {
            let outcome = trace.get(index).map_or_else(String::new, |call| {
                canonical(&serde_json::json!({
                    "outcome": call.outcome,
                    "result": call.result,
                    "error": call.error,
                }))
            });
            groups
                .entry((tool.clone(), arguments.clone(), outcome))
                .or_default()
                .push(index);
        }
    }
    groups
        .into_iter()
        .filter_map(|((tool, arguments, _), calls)| {
            let faulted = calls
                .iter()
                .filter(|&&i| trace.get(i).is_some_and(|c| c.fault.is_some()))
                .count();
            (calls.len() > 1 + faulted).then_some(LoopFinding {
                tool,
                arguments,
                calls,
            })
        })
        .collect()
}
