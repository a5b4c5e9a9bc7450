//! Replaying a planned trajectory on a fresh world, without an agent or MCP: the same
//! interceptor (argument validation, fault injection, trace) the real runs use.

use std::sync::Arc;

use serde_json::Value;

use super::mutants::PlannedCall;
use crate::harness::{Harness, ToolSet, WorldBackend};
use crate::scenario::Scenario;
use crate::trace::CallRecord;

/// Runs `calls` in order against `seeded` with `scenario`'s faults; returns the trace and the
/// final state. Tool errors are recorded like any agent's, never returned.
///
/// The world backend answers without waiting, so the harness's futures complete on their
/// first poll and a plain executor drives them on the caller's thread. They run outside
/// tokio's cooperative budget: on a thread inside a runtime an exhausted budget would make the
/// harness's lock yield forever to a scheduler that this executor never runs.
pub fn replay(
    scenario: &Scenario,
    calls: &[PlannedCall],
    seeded: &Value,
    tools: &Arc<ToolSet>,
) -> (Vec<CallRecord>, Option<Value>) {
    let backend = WorldBackend::new(Arc::clone(tools), seeded);
    let harness = Harness::new(Box::new(backend), scenario.faults.clone());
    futures::executor::block_on(tokio::task::unconstrained(async {
        for call in calls {
            harness.call(&call.tool, call.arguments.clone()).await;
        }
        (harness.trace(), harness.state().await)
    }))
}
