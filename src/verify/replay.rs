//! Replaying a planned trajectory on a fresh world, without an agent or MCP: the same
//! interceptor (argument validation, fault injection, trace) the real runs use.

use std::sync::Arc;

use serde_json::Value;

use super::mutants::PlannedCall;
use crate::harness::{Backend as _, CallRecord, Harness, ToolSet};
use crate::scenario::Scenario;
use crate::world::World;

/// Runs `calls` in order against `seeded` with `scenario`'s faults; returns the trace and the
/// final state. Tool errors are recorded like any agent's, never returned.
pub fn replay(
    scenario: &Scenario,
    calls: &[PlannedCall],
    seeded: &Value,
    tools: &Arc<ToolSet>,
) -> (Vec<CallRecord>, Value) {
    let harness = Harness::new(
        Arc::clone(tools),
        World::new(seeded),
        scenario.faults.clone(),
    );
    for call in calls {
        let _ = harness.call(&call.tool, call.arguments.clone());
    }
    (harness.trace(), harness.state())
}
