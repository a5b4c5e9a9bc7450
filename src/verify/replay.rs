//! Replaying a planned trajectory on a fresh backend (the built-in world or declarative
//! mocks), without an agent or MCP: the same interceptor (argument validation, fault
//! injection, trace) the real runs use.

use std::sync::Arc;

use serde_json::Value;

use crate::harness::{BackendFactory, Harness, ToolSet, WorldBackend};
use crate::scenario::PlannedCall;
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
        // A call without a turn is its own turn, after the one before it.
        let mut last = 0;
        for call in calls {
            let turn = call.turn.unwrap_or(last + 1);
            harness.begin_turn(turn);
            last = turn;
            harness.call(&call.tool, call.arguments.clone()).await;
        }
        (harness.trace(), harness.state().await)
    }))
}

/// Plays `calls` on a fresh backend of `backends` (the user's own servers), with the
/// scenario's faults, blocking and final-state probes before and after; returns the trace
/// and the probe results before and after, or `None` when the backend did not start or broke.
pub async fn play_live(
    scenario: &Scenario,
    calls: &[PlannedCall],
    backends: &dyn BackendFactory,
) -> Option<(
    Vec<CallRecord>,
    Vec<crate::score::probes::ProbeResult>,
    Vec<crate::score::probes::ProbeResult>,
)> {
    let backend = backends.start(scenario, 0).await.ok()?;
    let mut harness = Harness::new(backend, scenario.faults.clone());
    if scenario.block_forbidden {
        harness = harness.blocking(scenario.forbidden_calls.clone());
    }
    let before = crate::runner::probe(scenario, &harness).await;
    let mut last = 0;
    for call in calls {
        let turn = call.turn.unwrap_or(last + 1);
        harness.begin_turn(turn);
        last = turn;
        harness.call(&call.tool, call.arguments.clone()).await;
    }
    let after = crate::runner::probe(scenario, &harness).await;
    let broken = harness.failure().await.is_some();
    harness.close().await;
    if broken {
        return None;
    }
    Some((harness.trace(), before, after))
}
