//! Replaying a planned trajectory on a fresh backend (the built-in world or declarative
//! mocks), without an agent or MCP: the same interceptor (argument validation, fault
//! injection, trace) the real runs use.

use std::sync::Arc;

use serde_json::Value;

use crate::harness::{BackendFactory, Harness, ToolSet, WorldBackend};
use crate::scenario::Scenario;
use crate::scenario::{PlannedCall, Trajectory};
use crate::score::conversation::{Conversation, Script};
use crate::trace::CallRecord;

/// A written trajectory played: its trace, the state after it (`None` when the backend keeps
/// none), the conversation (for a scenario with `user_turns`) and the final answer: the
/// reply the conversation ended on, the trajectory's `answer` for a single request.
#[derive(Debug, Clone)]
pub struct Played {
    /// Every call, in order.
    pub trace: Vec<CallRecord>,
    /// The backend's state after the play.
    pub state: Option<Value>,
    /// The scripted conversation, reply by reply.
    pub conversation: Option<Conversation>,
    /// The final answer.
    pub answer: Option<String>,
}

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
    let played = drive(
        Harness::new(Box::new(backend), scenario.faults.clone()),
        scenario,
        &[(calls, None)],
    );
    (played.trace, played.state)
}

/// Plays `trajectory` on a fresh backend of `backends` (which must answer without waiting, as
/// at [`replay`]), reply by reply: each of its replies goes to the scenario's scripted user,
/// and the play stops where the conversation does.
///
/// Errors: the factory could not make a backend (why, in words).
pub fn replay_trajectory(
    scenario: &Scenario,
    trajectory: &Trajectory,
    backends: &dyn BackendFactory,
) -> Result<Played, String> {
    let backend = futures::executor::block_on(backends.start(scenario, 0))?;
    Ok(drive(
        Harness::new(backend, scenario.faults.clone()),
        scenario,
        &trajectory.exchanges(),
    ))
}

/// As [`replay_trajectory`] on the built-in world seeded with `seeded`.
pub fn replay_trajectory_in_world(
    scenario: &Scenario,
    trajectory: &Trajectory,
    seeded: &Value,
    tools: &Arc<ToolSet>,
) -> Played {
    let backend = WorldBackend::new(Arc::clone(tools), seeded);
    drive(
        Harness::new(Box::new(backend), scenario.faults.clone()),
        scenario,
        &trajectory.exchanges(),
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
    let played = drive(
        Harness::new(backend, scenario.faults.clone()),
        scenario,
        &[(calls, None)],
    );
    Ok((played.trace, played.state))
}

/// `harness` whose tools ask what `scenario`'s `elicitations` say; a written trajectory's
/// client is taken to be faithful, so the scripted user answers.
fn eliciting(harness: Harness, scenario: &Scenario) -> Harness {
    match crate::harness::Elicitations::scripted(scenario) {
        Some(elicitations) => harness.eliciting(elicitations),
        None => harness,
    }
}

/// One reply of a trajectory: the calls before it and its text.
pub type Exchange<'a> = (&'a [PlannedCall], Option<&'a str>);

fn drive(harness: Harness, scenario: &Scenario, exchanges: &[Exchange<'_>]) -> Played {
    let harness = eliciting(harness, scenario);
    futures::executor::block_on(tokio::task::unconstrained(async {
        let (conversation, answer) = converse(&harness, scenario, exchanges).await;
        Played {
            trace: harness.trace(),
            state: harness.state().await,
            conversation,
            answer,
        }
    }))
}

/// Plays `exchanges` on `harness`: each reply's calls, then the reply to the scripted user
/// (for a scenario with `user_turns`), until the conversation or the replies end. Returns the
/// conversation and the final answer.
async fn converse(
    harness: &Harness,
    scenario: &Scenario,
    exchanges: &[Exchange<'_>],
) -> (Option<Conversation>, Option<String>) {
    let mut script = (!scenario.user_turns.is_empty()).then(|| Script::new(scenario));
    // A call without a turn is its own turn, after the one before it.
    let mut last = 0;
    let mut answer = None;
    for (index, (calls, reply)) in exchanges.iter().enumerate() {
        for call in *calls {
            let turn = call.turn.unwrap_or(last + 1);
            harness.begin_turn(turn);
            last = turn;
            harness.call(&call.tool, call.arguments.clone()).await;
        }
        answer = reply.map(str::to_owned);
        let Some(script) = script.as_mut() else {
            break;
        };
        if index + 1 == exchanges.len()
            || script.reply(scenario, *reply, &harness.trace()).is_none()
        {
            break;
        }
    }
    let conversation =
        script.map(|script| script.finish(scenario, answer.as_deref(), &harness.trace()));
    (conversation, answer)
}

/// Plays `exchanges` on a fresh backend of `backends` (the user's own servers), with the
/// scenario's faults, blocking and final-state probes before and after, as
/// [`replay_trajectory`] plays them; returns the play and the probe results before and after,
/// or `None` when the backend did not start or broke.
pub async fn play_live(
    scenario: &Scenario,
    exchanges: &[Exchange<'_>],
    backends: &dyn BackendFactory,
) -> Option<(
    Played,
    Vec<crate::score::probes::ProbeResult>,
    Vec<crate::score::probes::ProbeResult>,
)> {
    let backend = backends.start(scenario, 0).await.ok()?;
    let mut harness = Harness::new(backend, scenario.faults.clone());
    if scenario.block_forbidden {
        harness = harness.blocking(scenario.forbidden_calls.clone());
    }
    let harness = eliciting(harness, scenario);
    let before = crate::runner::probe(scenario, &harness).await;
    let (conversation, answer) = converse(&harness, scenario, exchanges).await;
    let after = crate::runner::probe_after(scenario, &harness).await;
    let broken = harness.failure().await.is_some();
    harness.close().await;
    if broken {
        return None;
    }
    let played = Played {
        trace: harness.trace(),
        state: None,
        conversation,
        answer,
    };
    Some((played, before, after))
}

/// Whether failing `check` says nothing under replay, where only the live servers could tell:
/// a `not_recorded` call, a final-state probe whose recorded answer is no evidence, and, when
/// the run `missed` a call (its answer is no server's), the checks that read results or
/// failures (`result_contains`, `args_from_prior`, whose value a missed call's error text cannot
/// hold, `max_failures`, `contains_results`, `claimed_success`, `answer_invented_value`). Checks
/// that read the trajectory
/// alone (expected calls, arguments, forbidden calls, call budgets, the answer's text) decide
/// under replay as they would live.
pub fn needs_live_servers(check: &crate::score::Check, missed: bool) -> bool {
    use crate::score::CheckKind;
    check.kind == CheckKind::NotRecorded
        || crate::score::probes::is_not_evidence(check)
        || missed
            && matches!(
                check.kind,
                CheckKind::ResultContains
                    | CheckKind::ArgsFromPrior
                    | CheckKind::MaxFailures
                    | CheckKind::AnswerContainsResult
                    | CheckKind::ClaimedSuccess
                    | CheckKind::AnswerInventedValue
            )
}
