//! Wall time of the smoke run against its critical-path limit, with a fake OpenAI-compatible
//! provider on loopback that answers every request after a fixed delay.
//!
//! Each scenario takes `expected calls + 1` model turns (one tool call per turn, then the final
//! answer), so the critical path is the longest scenario's turns times the delay. The runner
//! should stay within 1.10x of it at its default concurrency with a provider delay of 200 ms or
//! more, and within 1.25x at 50 ms.
//!
//!     cargo bench --bench smoke_wall            # delay 200 ms, 5 rounds
//!     cargo bench --bench smoke_wall -- 500 3   # delay 500 ms, 3 rounds
#![expect(clippy::print_stdout, reason = "a bench reports its figures on stdout")]

// The allocator the `toolgate` binary uses (src/main.rs), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use toolgate::agent::Agent;
use toolgate::agent::openai::{OpenAiAgent, OpenAiConfig};
use toolgate::catalog::Catalog;
use toolgate::harness::{ToolSet, WorldBackends};
use toolgate::runner::{self, RunOptions};
use toolgate::scenario::{self, Scenario, SmokeSet};
use toolgate::score::Outcome;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Plays each scenario's expected tools in order, one per turn, then answers.
struct Provider {
    delay: Duration,
    /// Expected tool names by prompt.
    plans: HashMap<String, Vec<String>>,
}

/// The parts of a chat request the fake provider reads. Borrowed, and the tool definitions
/// skipped unparsed: a real provider's work is not on this machine's cores, so the fake's
/// should take as little of them as it can.
#[derive(serde::Deserialize)]
struct ChatRequest<'a> {
    #[serde(borrow)]
    messages: Vec<ChatMessage<'a>>,
}

#[derive(serde::Deserialize)]
struct ChatMessage<'a> {
    #[serde(borrow)]
    role: std::borrow::Cow<'a, str>,
    #[serde(borrow, default)]
    content: Option<std::borrow::Cow<'a, str>>,
}

impl Respond for Provider {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: ChatRequest<'_> =
            serde_json::from_slice(&request.body).expect("the agent sends JSON");
        let prompt = body
            .messages
            .iter()
            .find(|m| m.role == "user")
            .and_then(|m| m.content.as_deref())
            .unwrap_or("");
        let done = body.messages.iter().filter(|m| m.role == "tool").count();
        let message = match self.plans.get(prompt).and_then(|plan| plan.get(done)) {
            Some(tool) => json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": format!("call_{done}"), "type": "function",
                 "function": {"name": tool, "arguments": "{}"}}]}),
            None => json!({"role": "assistant", "content": "Done."}),
        };
        ResponseTemplate::new(200)
            .set_delay(self.delay)
            .set_body_json(json!({"choices": [{"index": 0, "message": message,
                                               "finish_reason": "stop"}]}))
    }
}

fn smoke_set() -> Vec<Scenario> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let all = scenario::load_dir(&root.join("scenarios"), root, Catalog::builtin())
        .expect("the shipped scenarios load");
    let smoke = SmokeSet::load(&root.join("smoke-set.yaml"), &all).expect("smoke set loads");
    all.into_iter().filter(|s| smoke.contains(s)).collect()
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let delay_ms: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(200);
    let rounds: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let delay = Duration::from_millis(delay_ms);
    let scenarios = smoke_set();
    let plans: HashMap<String, Vec<String>> = scenarios
        .iter()
        .map(|s| {
            let tools = s.expected_calls.iter().map(|c| c.tool.clone()).collect();
            (s.prompt.clone(), tools)
        })
        .collect();
    let longest_turns = scenarios
        .iter()
        .map(|s| s.expected_calls.len() + 1)
        .max()
        .unwrap_or(1);
    let critical_path = delay * u32::try_from(longest_turns).unwrap_or(u32::MAX);

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        // Not recording requests: the bench reads none back.
        let server = MockServer::builder()
            .disable_request_recording()
            .start()
            .await;
        Mock::given(method("POST"))
            .respond_with(Provider { delay, plans })
            .mount(&server)
            .await;
        let config = OpenAiConfig {
            endpoint: toolgate::provider::Endpoint::new(toolgate::provider::Api::Openai, server.uri()),
            ..OpenAiConfig::from_env("bench-model")
        };
        let agent = Agent::OpenAi(Box::new(OpenAiAgent::new(config).expect("valid config")));
        let backends = WorldBackends::new(ToolSet::builtin());
        let plan = runner::RunPlan::new(&scenarios, agent, backends, RunOptions::default());
        let mut walls = Vec::new();
        for _ in 0..rounds {
            let started = Instant::now();
            let suite = runner::run_suite(&plan, std::future::pending::<()>(), &|_| {}).await;
            walls.push(started.elapsed());
            let errored = suite
                .runs
                .iter()
                .filter(|r| r.outcome == Outcome::Errored)
                .count();
            assert_eq!(errored, 0, "no run may error in the benchmark");
        }
        walls.sort();
        let median = walls[walls.len() / 2];
        println!(
            "smoke set: {} scenarios, concurrency {}, provider delay {delay_ms} ms, {rounds} rounds",
            scenarios.len(),
            plan.options.concurrency
        );
        println!(
            "critical path: {longest_turns} turns = {} ms",
            critical_path.as_millis()
        );
        println!(
            "wall time: median {} ms (min {} ms, max {} ms)",
            median.as_millis(),
            walls[0].as_millis(),
            walls[walls.len() - 1].as_millis()
        );
        // The targets: within 1.10x at a 200 ms provider delay and slower, 1.25x at 50 ms.
        let target = if delay_ms >= 200 { 1.10 } else { 1.25 };
        println!(
            "ratio: {:.3}x of the critical path (target <= {target:.2}x)",
            median.as_secs_f64() / critical_path.as_secs_f64()
        );
    });
}
