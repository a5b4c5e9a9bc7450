//! The runner: runs each selected scenario with an agent through a fresh harness, then
//! scores it. One broken run (agent error, timeout) becomes an `errored` result; the suite
//! goes on.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use serde_json::{Map, Value};

use crate::agent::{
    Agent, AgentOutcome, InvalidCallKind, ToolExecutor, ToolObservation, reference,
};
use crate::harness::client::{CallFailure, McpClient};
use crate::harness::{CallRecord, Harness, ToolSet};
use crate::scenario::Scenario;
use crate::score::metrics::{self, RunMetrics, RunView};
use crate::score::{self, Outcome, RunScore, ScoreContext, ScoringOptions};
use crate::world::{self, World};

/// Limits for a suite run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Scenarios run at the same time, at least 1.
    pub concurrency: usize,
    /// Wall-time limit for one scenario run; past it the run is `errored`.
    pub run_timeout: Duration,
    /// Wall-time limit for one tool call.
    pub call_timeout: Duration,
    /// Run-wide scoring rules.
    pub scoring: ScoringOptions,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            concurrency: 4,
            run_timeout: Duration::from_secs(300),
            call_timeout: Duration::from_secs(30),
            scoring: ScoringOptions::default(),
        }
    }
}

/// One scenario's run: what happened and how it scored.
#[derive(Debug, Clone)]
pub struct ScenarioRun {
    /// Pass, fail or errored.
    pub outcome: Outcome,
    /// The deterministic checks; `None` when the run errored before it could be scored.
    pub score: Option<RunScore>,
    /// Why the run errored.
    pub error: Option<String>,
    /// Every tool call, in arrival order.
    pub trace: Vec<CallRecord>,
    /// What the agent said and used.
    pub agent: Option<AgentOutcome>,
    /// Trajectory metrics; `None` when the run errored before it could be scored.
    pub metrics: Option<RunMetrics>,
    /// Wall time of the run.
    pub duration: Duration,
}

/// Runs `scenarios` with `agent`, at most `options.concurrency` at a time; results come back
/// in the order of `scenarios`.
pub async fn run_suite(
    scenarios: &[Scenario],
    agent: &Agent,
    tools: &Arc<ToolSet>,
    options: &RunOptions,
) -> Vec<ScenarioRun> {
    futures::stream::iter(scenarios)
        .map(|scenario| run_one(scenario, agent, tools, options))
        .buffered(options.concurrency.max(1))
        .collect()
        .await
}

/// Runs one scenario in a fresh harness and scores it.
pub async fn run_one(
    scenario: &Scenario,
    agent: &Agent,
    tools: &Arc<ToolSet>,
    options: &RunOptions,
) -> ScenarioRun {
    let started = Instant::now();
    let errored = |error: String, trace: Vec<CallRecord>| ScenarioRun {
        outcome: Outcome::Errored,
        score: None,
        error: Some(error),
        trace,
        agent: None,
        metrics: None,
        duration: started.elapsed(),
    };
    let seeded = match world::load_fixture(&scenario.seed_state) {
        Ok(state) => state,
        Err(error) => return errored(format!("{error:#}"), Vec::new()),
    };
    let harness = Arc::new(Harness::new(
        Arc::clone(tools),
        World::new(&seeded),
        scenario.faults.clone(),
    ));
    let client = match McpClient::connect_in_process(harness.clone()).await {
        Ok(client) => client,
        Err(error) => {
            return errored(
                format!("failed to connect to the harness: {error:#}"),
                Vec::new(),
            );
        }
    };
    let definitions = match client.list_tools().await {
        Ok(definitions) => definitions,
        Err(error) => return errored(format!("failed to list tools: {error:#}"), Vec::new()),
    };
    let executor = McpExecutor {
        client: &client,
        harness: &harness,
        definitions,
        call_timeout: options.call_timeout,
    };
    let played = tokio::time::timeout(options.run_timeout, async {
        match agent {
            Agent::Reference => Ok(reference::run(scenario, &executor).await),
            Agent::OpenAi(model) => model.run(&scenario.prompt, &executor).await,
        }
    })
    .await;
    let _ = client.close().await;
    let trace = harness.trace();
    let outcome = match played {
        Err(_) => {
            return errored(
                format!(
                    "run timed out after {}",
                    humantime::format_duration(options.run_timeout)
                ),
                trace,
            );
        }
        Ok(Err(error)) => return errored(error.to_string(), trace),
        Ok(Ok(outcome)) => outcome,
    };
    let final_state = harness.state();
    let context = ScoreContext {
        options: options.scoring,
        schemas: tools.as_ref(),
    };
    let score = score::score(
        scenario,
        &trace,
        &seeded,
        &final_state,
        outcome.final_answer.as_deref(),
        &context,
    );
    let view = RunView {
        scenario,
        trace: &trace,
        pairing: &score.pairing,
        final_answer: outcome.final_answer.as_deref(),
        schemas: tools.as_ref(),
        options: options.scoring,
    };
    let metrics = metrics::measure(&view, &score.checks);
    ScenarioRun {
        metrics: Some(metrics),
        outcome: score.outcome,
        score: Some(score),
        error: None,
        trace,
        agent: Some(outcome),
        duration: started.elapsed(),
    }
}

/// Tool access for agents: MCP calls through the client, with calls that never reach the
/// server recorded directly in the harness trace.
struct McpExecutor<'a> {
    client: &'a McpClient,
    harness: &'a Harness,
    definitions: Vec<Value>,
    call_timeout: Duration,
}

impl ToolExecutor for McpExecutor<'_> {
    fn tools(&self) -> &[Value] {
        &self.definitions
    }

    async fn call(&self, name: &str, arguments: Map<String, Value>) -> ToolObservation {
        match self
            .client
            .call_tool(name, arguments.clone(), self.call_timeout)
            .await
        {
            Ok(reply) => {
                let content = match (&reply.structured, reply.text.is_empty()) {
                    (Some(structured), true) => structured.to_string(),
                    _ => reply.text,
                };
                ToolObservation {
                    is_error: reply.is_error,
                    content,
                }
            }
            Err(failure) => {
                let message = failure.to_string();
                if !matches!(failure, CallFailure::Timeout) {
                    self.harness
                        .record_protocol_error(name, arguments, message.clone());
                }
                ToolObservation {
                    is_error: true,
                    content: message,
                }
            }
        }
    }

    fn record_invalid(&self, name: &str, raw_arguments: &str, kind: InvalidCallKind) {
        self.harness.record_invalid(name, raw_arguments, kind);
    }
}
