//! Tests of the Anthropic agent against a scripted fake Messages API on loopback (wiremock).

use crate::provider::ProviderError;
use std::collections::VecDeque;
use std::sync::Mutex;

use serde_json::{Map, Value, json};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::*;
use crate::agent::{InvalidCallKind, ToolObservation};

const KEY: &str = "sk-ant-test-secret-77c1";

/// Replays `steps` in order; answers 500 when they run out.
struct Script(Mutex<VecDeque<ResponseTemplate>>);

impl Respond for Script {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        self.0
            .lock()
            .expect("script lock")
            .pop_front()
            .unwrap_or_else(|| ResponseTemplate::new(500).set_body_string("script exhausted"))
    }
}

async fn provider(steps: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", KEY))
        .and(header(
            "anthropic-version",
            crate::provider::ANTHROPIC_VERSION,
        ))
        .respond_with(Script(Mutex::new(steps.into())))
        .mount(&server)
        .await;
    server
}

fn agent(server: &MockServer, adjust: impl FnOnce(&mut AnthropicConfig)) -> AnthropicAgent {
    let mut config = AnthropicConfig {
        endpoint: Endpoint::new(Api::Anthropic, server.uri()).with_key(KEY),
        temperature: Some(0.2),
        max_turns: 5,
        request_timeout: Duration::from_secs(5),
        max_attempts: 3,
        system_prompt: Some("Be careful.".to_owned()),
        ..AnthropicConfig::from_lookup("claude-test", |_| None)
    };
    adjust(&mut config);
    let mut agent = AnthropicAgent::new(config).expect("valid config");
    agent.http.backoff = crate::provider::http::Backoff {
        base: Duration::from_millis(1),
        max: Duration::from_millis(4),
    };
    agent
}

async fn bodies(server: &MockServer) -> Vec<Value> {
    server
        .received_requests()
        .await
        .expect("requests recorded")
        .iter()
        .map(|request| request.body_json().expect("JSON body"))
        .collect()
}

#[derive(Default)]
struct FakeTools {
    tools: Vec<Value>,
    calls: Mutex<Vec<(String, Value)>>,
    invalid: Mutex<Vec<(String, InvalidCallKind)>>,
}

impl FakeTools {
    fn new() -> Self {
        Self {
            tools: vec![
                json!({"name": "get_weather", "description": "Weather for a city.",
                       "inputSchema": {"type": "object",
                                       "properties": {"city": {"type": "string"}}}}),
                json!({"name": "get_time"}),
            ],
            ..Self::default()
        }
    }
}

impl ToolExecutor for FakeTools {
    fn tools(&self) -> &[Value] {
        &self.tools
    }

    async fn call(&self, name: &str, arguments: Map<String, Value>) -> ToolObservation {
        self.calls
            .lock()
            .expect("calls lock")
            .push((name.to_owned(), Value::Object(arguments)));
        ToolObservation {
            is_error: name == "get_time",
            content: format!("{name} answered"),
        }
    }

    fn record_invalid(&self, name: &str, _raw: &str, kind: InvalidCallKind) {
        self.invalid
            .lock()
            .expect("invalid lock")
            .push((name.to_owned(), kind));
    }
}

fn message(content: Value, stop_reason: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": content, "stop_reason": stop_reason,
        "usage": {"input_tokens": 10, "output_tokens": 4}
    }))
}

fn answer(text: &str) -> ResponseTemplate {
    message(json!([{"type": "text", "text": text}]), "end_turn")
}

#[tokio::test]
async fn runs_tool_use_blocks_after_thinking_and_answers_with_tool_results() {
    let server = provider(vec![
        message(
            json!([{"type": "thinking", "thinking": "two calls", "signature": "s1"},
                   {"type": "text", "text": "Checking."},
                   {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                    "input": {"city": "Paris"}},
                   {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {}}]),
            "tool_use",
        ),
        answer("Sunny in Paris."),
    ])
    .await;
    let tools = FakeTools::new();
    let agent = agent(&server, |config| {
        config.tool_choice = Some(ToolChoice::Required);
        config.parallel_tool_calls = Some(false);
        config.max_tokens = Some(512);
    });

    let outcome = agent.run("Weather?", &tools).await.expect("run succeeds");

    assert_eq!(outcome.final_answer.as_deref(), Some("Sunny in Paris."));
    assert_eq!(outcome.turns, 2);
    assert_eq!(outcome.usage.prompt_tokens, 20);
    assert_eq!(outcome.usage.requests, 2);
    assert_eq!(
        *tools.calls.lock().expect("calls lock"),
        vec![
            ("get_weather".to_owned(), json!({"city": "Paris"})),
            ("get_time".to_owned(), json!({})),
        ]
    );
    let sent = bodies(&server).await;
    assert_eq!(sent[0]["system"], json!("Be careful."));
    assert_eq!(sent[0]["max_tokens"], json!(512));
    assert_eq!(sent[0]["temperature"], json!(0.2));
    assert_eq!(
        sent[0]["tool_choice"],
        json!({"type": "any", "disable_parallel_tool_use": true})
    );
    assert_eq!(
        sent[0]["tools"][0],
        json!({"name": "get_weather", "description": "Weather for a city.",
               "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}})
    );
    let messages = sent[1]["messages"].as_array().cloned().unwrap_or_default();
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[1]["content"][0]["type"], json!("thinking"));
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "get_weather answered"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "get_time answered",
             "is_error": true}]})
    );
}

#[tokio::test]
async fn truncated_tool_use_is_recorded_invalid_and_answered_as_an_error() {
    let server = provider(vec![
        message(
            json!([{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}]),
            "max_tokens",
        ),
        answer("Sorry."),
    ])
    .await;
    let tools = FakeTools::new();

    let outcome = agent(&server, |_| {})
        .run("Weather?", &tools)
        .await
        .expect("run succeeds");

    assert_eq!(outcome.final_answer.as_deref(), Some("Sorry."));
    assert!(tools.calls.lock().expect("calls lock").is_empty());
    assert_eq!(
        *tools.invalid.lock().expect("invalid lock"),
        vec![("get_weather".to_owned(), InvalidCallKind::Truncated)]
    );
    let sent = bodies(&server).await;
    assert_eq!(
        sent[1]["messages"][2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_1",
               "content": "Error: the arguments of `get_weather` were cut off by the output token limit; the call was not executed.",
               "is_error": true})
    );
}

#[tokio::test]
async fn retries_429_with_retry_after_and_529_then_succeeds() {
    let server = provider(vec![
        ResponseTemplate::new(429)
            .insert_header("retry-after", "0")
            .set_body_json(json!({"type": "error",
                                  "error": {"type": "rate_limit_error", "message": "slow down"}})),
        ResponseTemplate::new(529).set_body_json(json!({"type": "error",
            "error": {"type": "overloaded_error", "message": "Overloaded"}})),
        answer("Done."),
    ])
    .await;

    let outcome = agent(&server, |_| {})
        .run("Hi", &FakeTools::new())
        .await
        .expect("run succeeds");

    assert_eq!(outcome.final_answer.as_deref(), Some("Done."));
    assert_eq!(bodies(&server).await.len(), 3);
}

#[tokio::test]
async fn a_hung_response_hits_the_request_timeout_and_errors_after_retries() {
    let server = provider(vec![
        answer("late").set_delay(Duration::from_secs(5)),
        answer("late").set_delay(Duration::from_secs(5)),
    ])
    .await;
    let agent = agent(&server, |config| {
        config.request_timeout = Duration::from_millis(200);
        config.max_attempts = 2;
    });

    let error = agent
        .run("Hi", &FakeTools::new())
        .await
        .expect_err("both attempts time out");

    assert_eq!(
        error.to_string(),
        format!(
            "provider request failed: failed to POST `{}/v1/messages`: timed out after 200ms",
            server.uri()
        )
    );
}

#[tokio::test]
async fn a_malformed_json_body_is_a_bad_response_without_retry() {
    let server = provider(vec![
        ResponseTemplate::new(200).set_body_raw("{\"content\": [", "application/json"),
        answer("never sent"),
    ])
    .await;

    let error = agent(&server, |_| {})
        .run("Hi", &FakeTools::new())
        .await
        .expect_err("malformed");

    assert!(
        matches!(error, AgentError::Provider(ProviderError::BadResponse(_))),
        "{error}"
    );
    assert_eq!(bodies(&server).await.len(), 1);
}

#[tokio::test]
async fn a_401_names_no_key() {
    let server = provider(vec![
        ResponseTemplate::new(401).set_body_json(json!({
        "type": "error",
        "error": {"type": "authentication_error", "message": format!("invalid x-api-key {KEY}")}})),
    ])
    .await;

    let error = agent(&server, |_| {})
        .run("Hi", &FakeTools::new())
        .await
        .expect_err("unauthorised");

    assert_eq!(
        error.to_string(),
        "provider returned HTTP 401: invalid x-api-key [redacted]"
    );
}

#[test]
fn from_env_reads_key_and_base_url_and_debug_hides_the_key() {
    let config = AnthropicConfig::from_lookup("claude", |name| match name {
        "ANTHROPIC_API_KEY" => Some(KEY.to_owned()),
        "ANTHROPIC_BASE_URL" => Some("http://127.0.0.1:9/".to_owned()),
        _ => None,
    });
    assert_eq!(config.endpoint.base_url, "http://127.0.0.1:9/");
    assert_eq!(config.endpoint.api_key.as_deref(), Some(KEY));
    assert!(!format!("{config:?}").contains(KEY));
    let default = AnthropicConfig::from_lookup("claude", |_| None);
    assert_eq!(default.max_turns, 12);
    assert_eq!(default.endpoint.base_url, "https://api.anthropic.com");
    assert_eq!(default.endpoint.api_key, None);
}
