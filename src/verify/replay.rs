//! Replaying a planned trajectory on a fresh backend (the built-in world or declarative
//! mocks), without an agent or MCP: the same interceptor (argument validation, fault
//! injection, trace) the real runs use.

use std::sync::Arc;

use serde_json::Value;

use super::mutants::PlannedCall;
use crate::harness::{BackendFactory, Harness, ToolSet, WorldBackend};
use crate::scenario::Scenario;
use crate::trace::CallRecord;

/// Runs `calls` in order against `seeded` with `scenario`'s faults; returns the trace and the
/// final state. Tool errors are recorded like any agent's, never returned.
///
/// Like [`replay_on`] with the built-in world. The world backend answers without waiting, so the harness's futures complete on their
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
    drive(
        Harness::new(Box::new(backend), scenario.faults.clone()),
        calls,
    )
}

/// Runs `calls` in order on a fresh backend of `backends` for `scenario`, with its faults;
/// returns the trace and the final state. The backend must answer without waiting (the
/// world and the mocks do), for the reason given at [`replay`].
///
/// Errors: the factory could not make a backend (why, in words).
pub fn replay_on(
    scenario: &Scenario,
    calls: &[PlannedCall],
    backends: &dyn BackendFactory,
) -> Result<(Vec<CallRecord>, Option<Value>), String> {
    let backend = futures::executor::block_on(backends.start(scenario, 0))?;
    Ok(drive(Harness::new(backend, scenario.faults.clone()), calls))
}

fn drive(harness: Harness, calls: &[PlannedCall]) -> (Vec<CallRecord>, Option<Value>) {
    futures::executor::block_on(tokio::task::unconstrained(async {
        for call in calls {
            harness.call(&call.tool, call.arguments.clone()).await;
        }
        (harness.trace(), harness.state().await)
    }))
}
