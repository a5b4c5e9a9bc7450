//! Tests of the OpenAI agent against a scripted fake provider on loopback (wiremock).

use crate::agent::{InvalidCallKind, ToolObservation};
use crate::provider::ProviderError;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

use super::*;

const KEY: &str = "sk-test-secret-4f9a";

/// A fake provider: replays `steps` in order and keeps every request it received.
struct Script {
    steps: Mutex<VecDeque<ResponseTemplate>>,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Respond for Script {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        self.requests
            .lock()
            .expect("requests lock")
            .push(request.clone());
        self.steps
            .lock()
            .expect("steps lock")
            .pop_front()
            .unwrap_or_else(|| ResponseTemplate::new(500).set_body_string("script exhausted"))
    }
}

struct Provider {
    server: MockServer,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl Provider {
    async fn start(steps: Vec<ResponseTemplate>) -> Self {
        let server = MockServer::start().await;
        let requests = Arc::new(Mutex::new(Vec::new()));
        Mock::given(method("POST"))
            .and(path("/v1/chat/completions"))
            .respond_with(Script {
                steps: Mutex::new(steps.into()),
                requests: Arc::clone(&requests),
            })
            .mount(&server)
            .await;
        Self { server, requests }
    }

    fn config(&self) -> OpenAiConfig {
        OpenAiConfig {
            endpoint: Endpoint::new(Api::Openai, format!("{}/v1", self.server.uri())).with_key(KEY),
            model: "test-model".to_owned(),
            temperature: Some(0.0),
            max_tokens: None,
            seed: Some(7),
            tool_choice: None,
            parallel_tool_calls: None,
            max_turns: 5,
            request_timeout: Duration::from_secs(5),
            max_attempts: 3,
            system_prompt: Some("You are a helpful agent.".to_owned()),
            stream: false,
            tool_calling: ToolCalling::Native,
        }
    }

    fn agent(&self, config: OpenAiConfig) -> OpenAiAgent {
        let mut agent = OpenAiAgent::new(config).expect("valid config");
        agent.http.backoff = crate::provider::http::Backoff {
            base: Duration::from_millis(1),
            max: Duration::from_millis(4),
        };
        agent
    }

    fn request_count(&self) -> usize {
        self.requests.lock().expect("requests lock").len()
    }

    fn body(&self, index: usize) -> Value {
        let requests = self.requests.lock().expect("requests lock");
        requests[index].body_json().expect("request body is JSON")
    }

    fn header(&self, index: usize, name: &str) -> Option<String> {
        let requests = self.requests.lock().expect("requests lock");
        requests[index]
            .headers
            .get(name)
            .map(|value| value.to_str().expect("ascii header").to_owned())
    }
}

/// A fake tool executor that records every call and answers with a fixed text.
#[derive(Default)]
struct FakeTools {
    tools: Vec<Value>,
    calls: Mutex<Vec<(String, Value)>>,
    invalid: Mutex<Vec<(String, String, InvalidCallKind)>>,
}

impl FakeTools {
    fn weather() -> Self {
        Self {
            tools: vec![
                json!({"name": "get_weather", "description": "Weather for a city.",
                       "inputSchema": {"type": "object",
                                       "properties": {"city": {"type": "string"}},
                                       "required": ["city"]}}),
                json!({"name": "get_time", "inputSchema": {"type": "object"}}),
            ],
            ..Self::default()
        }
    }

    fn calls(&self) -> Vec<(String, Value)> {
        self.calls.lock().expect("calls lock").clone()
    }

    fn invalid(&self) -> Vec<(String, String, InvalidCallKind)> {
        self.invalid.lock().expect("invalid lock").clone()
    }
}

impl ToolExecutor for FakeTools {
    fn tools(&self) -> &[Value] {
        &self.tools
    }

    async fn call(&self, name: &str, arguments: Map<String, Value>) -> ToolObservation {
        let arguments = Value::Object(arguments);
        let content = format!("{name} ok {arguments}");
        self.calls
            .lock()
            .expect("calls lock")
            .push((name.to_owned(), arguments));
        ToolObservation {
            is_error: false,
            content,
        }
    }

    fn record_invalid(&self, name: &str, raw_arguments: &str, kind: InvalidCallKind) {
        self.invalid.lock().expect("invalid lock").push((
            name.to_owned(),
            raw_arguments.to_owned(),
            kind,
        ));
    }
}

fn completion(
    message: Value,
    finish_reason: &str,
    prompt: u64,
    completion: u64,
) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "chatcmpl-x",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion}
    }))
}

fn answer(text: &str) -> ResponseTemplate {
    completion(json!({"role": "assistant", "content": text}), "stop", 20, 4)
}

fn tool_call(id: &str, name: &str, arguments: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
}

fn calling(content: Value, calls: Vec<Value>) -> ResponseTemplate {
    completion(
        json!({"role": "assistant", "content": content, "tool_calls": calls}),
        "tool_calls",
        10,
        3,
    )
}

#[tokio::test]
async fn runs_a_three_turn_conversation_and_sends_tool_results_by_call_id() {
    let turn_1_calls = vec![
        tool_call("call_a", "get_weather", r#"{"city": "Paris"}"#),
        tool_call("call_b", "get_time", ""),
    ];
    let turn_2_calls = vec![tool_call("call_c", "get_weather", r#"{"city":"Oslo"}"#)];
    let provider = Provider::start(vec![
        calling(Value::Null, turn_1_calls.clone()),
        calling(json!("One more."), turn_2_calls.clone()),
        answer("Paris is sunny, Oslo is cold."),
    ])
    .await;
    let tools = FakeTools::weather();
    let agent = provider.agent(provider.config());

    let outcome = agent
        .run("What is the weather?", &tools)
        .await
        .expect("run succeeds");

    assert_eq!(
        outcome.final_answer.as_deref(),
        Some("Paris is sunny, Oslo is cold.")
    );
    assert_eq!(outcome.turns, 3);
    assert!(!outcome.hit_turn_limit);
    assert_eq!(outcome.usage.prompt_tokens, 40);
    assert_eq!(outcome.usage.completion_tokens, 10);
    assert_eq!(
        tools.calls(),
        vec![
            ("get_weather".to_owned(), json!({"city": "Paris"})),
            ("get_time".to_owned(), json!({})),
            ("get_weather".to_owned(), json!({"city": "Oslo"})),
        ]
    );
    assert!(tools.invalid().is_empty());
    assert_eq!(provider.request_count(), 3);
    assert_eq!(
        provider.header(0, "authorization").as_deref(),
        Some("Bearer sk-test-secret-4f9a")
    );

    let system = json!({"role": "system", "content": "You are a helpful agent."});
    let user = json!({"role": "user", "content": "What is the weather?"});
    assert_eq!(
        provider.body(0),
        json!({
            "model": "test-model",
            "messages": [system, user],
            "tools": [
                {"type": "function", "function": {
                    "name": "get_weather", "description": "Weather for a city.",
                    "parameters": {"type": "object",
                                   "properties": {"city": {"type": "string"}},
                                   "required": ["city"]}}},
                {"type": "function", "function": {
                    "name": "get_time", "parameters": {"type": "object"}}}
            ],
            "tool_choice": "auto",
            "temperature": 0.0,
            "seed": 7
        })
    );
    let turn_1_reply = [
        json!({"role": "assistant", "content": "", "tool_calls": turn_1_calls}),
        json!({"role": "tool", "tool_call_id": "call_a",
               "content": r#"get_weather ok {"city":"Paris"}"#}),
        json!({"role": "tool", "tool_call_id": "call_b", "content": "get_time ok {}"}),
    ];
    let mut expected: Vec<Value> = vec![system.clone(), user.clone()];
    expected.extend(turn_1_reply.iter().cloned());
    assert_eq!(provider.body(1)["messages"], Value::from(expected.clone()));

    expected.push(json!({"role": "assistant", "content": "One more.", "tool_calls": turn_2_calls}));
    expected.push(json!({"role": "tool", "tool_call_id": "call_c",
                         "content": r#"get_weather ok {"city":"Oslo"}"#}));
    assert_eq!(provider.body(2)["messages"], Value::from(expected));
}

#[tokio::test]
async fn records_malformed_arguments_as_invalid_and_continues() {
    let provider = Provider::start(vec![
        calling(
            Value::Null,
            vec![
                tool_call("call_1", "get_weather", r#"{"city": "Par"#),
                tool_call("call_2", "get_weather", r#""Paris""#),
                tool_call("call_3", "get_weather", r#"{"city": "Rome"}"#),
            ],
        ),
        answer("Rome is warm."),
    ])
    .await;
    let tools = FakeTools::weather();
    let agent = provider.agent(provider.config());

    let outcome = agent.run("Weather?", &tools).await.expect("run succeeds");

    assert_eq!(outcome.final_answer.as_deref(), Some("Rome is warm."));
    assert_eq!(outcome.turns, 2);
    assert_eq!(
        tools.invalid(),
        vec![
            (
                "get_weather".to_owned(),
                r#"{"city": "Par"#.to_owned(),
                InvalidCallKind::UnparseableArguments
            ),
            (
                "get_weather".to_owned(),
                r#""Paris""#.to_owned(),
                InvalidCallKind::ArgumentsNotObject
            ),
        ]
    );
    assert_eq!(
        tools.calls(),
        vec![("get_weather".to_owned(), json!({"city": "Rome"}))]
    );
    let messages = provider.body(1)["messages"].clone();
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_1",
               "content": "Error: the arguments of `get_weather` are not valid JSON (possibly truncated); the call was not executed."})
    );
    assert_eq!(
        messages[4],
        json!({"role": "tool", "tool_call_id": "call_2",
               "content": "Error: the arguments of `get_weather` are not a JSON object; the call was not executed."})
    );
    assert_eq!(messages[5]["tool_call_id"], "call_3");
}

#[tokio::test]
async fn truncated_call_is_not_executed_when_max_tokens_is_reached() {
    let provider = Provider::start(vec![
        completion(
            json!({"role": "assistant", "content": null,
                   "tool_calls": [tool_call("call_1", "write_file", r#"{"path": "notes/x.txt", "content": "Lorem ips"#)]}),
            "tool_calls",
            10,
            300,
        ),
        answer("Gave up."),
    ])
    .await;
    let tools = FakeTools::weather();
    let mut config = provider.config();
    config.max_tokens = Some(300);
    let agent = provider.agent(config);

    agent.run("Write.", &tools).await.expect("run succeeds");

    assert_eq!(provider.body(0)["max_tokens"], 300);
    assert!(tools.calls().is_empty());
    assert_eq!(tools.invalid()[0].2, InvalidCallKind::Truncated);
    assert_eq!(
        provider.body(1)["messages"][3]["content"],
        "Error: the arguments of `write_file` were cut off by the output token limit; the call was not executed."
    );
}

#[tokio::test]
async fn answers_a_legacy_function_call_with_a_function_message() {
    let provider = Provider::start(vec![
        completion(
            json!({"role": "assistant", "content": null,
                   "function_call": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}),
            "function_call",
            10,
            3,
        ),
        answer("Cold."),
    ])
    .await;
    let tools = FakeTools::weather();
    let agent = provider.agent(provider.config());

    agent.run("Weather?", &tools).await.expect("run succeeds");

    let messages = provider.body(1)["messages"].clone();
    assert_eq!(
        messages[3],
        json!({"role": "function", "name": "get_weather",
               "content": r#"get_weather ok {"city":"Oslo"}"#})
    );
}

#[tokio::test]
async fn retries_429_after_retry_after_then_succeeds() {
    let provider = Provider::start(vec![
        ResponseTemplate::new(429)
            .insert_header("Retry-After", "0")
            .set_body_json(json!({"error": {"message": "Rate limit reached"}})),
        answer("Done."),
    ])
    .await;
    let agent = provider.agent(provider.config());

    let outcome = agent
        .run("Hi", &FakeTools::weather())
        .await
        .expect("run succeeds");

    assert_eq!(outcome.final_answer.as_deref(), Some("Done."));
    assert_eq!(outcome.turns, 1);
    assert_eq!(provider.request_count(), 2);
    assert_eq!(provider.body(0), provider.body(1));
}

#[tokio::test]
async fn rate_limits_are_waited_out_beyond_max_attempts_not_errored() {
    let limited = || {
        ResponseTemplate::new(429)
            .insert_header("Retry-After", "0.01")
            .set_body_json(json!({"error": {"message": "Rate limit reached"}}))
    };
    let mut replies: Vec<ResponseTemplate> = (0..6).map(|_| limited()).collect();
    replies.push(answer("Done."));
    let provider = Provider::start(replies).await;
    let config = provider.config();
    assert!(
        config.max_attempts < 7,
        "the test needs more 429s than attempts"
    );
    let agent = provider.agent(config);

    let outcome = agent
        .run("Hi", &FakeTools::weather())
        .await
        .expect("a rate limit slows the run, it does not error it");

    assert_eq!(outcome.final_answer.as_deref(), Some("Done."));
    assert_eq!(provider.request_count(), 7);
}

#[tokio::test]
async fn retries_500_then_succeeds() {
    let provider = Provider::start(vec![
        ResponseTemplate::new(500).set_body_string("upstream exploded"),
        answer("Done."),
    ])
    .await;
    let agent = provider.agent(provider.config());

    let outcome = agent
        .run("Hi", &FakeTools::weather())
        .await
        .expect("run succeeds");

    assert_eq!(outcome.final_answer.as_deref(), Some("Done."));
    assert_eq!(provider.request_count(), 2);
}

#[tokio::test]
async fn gives_up_after_max_attempts_of_server_errors() {
    let provider = Provider::start(vec![
        ResponseTemplate::new(503).set_body_string("overloaded"),
        ResponseTemplate::new(502).set_body_string(""),
        ResponseTemplate::new(500).set_body_json(json!({"error": {"message": "boom"}})),
        answer("never sent"),
    ])
    .await;
    let agent = provider.agent(provider.config());

    let error = agent
        .run("Hi", &FakeTools::weather())
        .await
        .expect_err("run fails");

    assert_eq!(error.to_string(), "provider returned HTTP 500: boom");
    assert!(matches!(
        error,
        AgentError::Provider(ProviderError::Http { status: 500, .. })
    ));
    assert_eq!(provider.request_count(), 3);
}

#[tokio::test]
async fn a_context_overflow_is_named_and_not_retried() {
    let traceback = format!(
        "Traceback (most recent call last):\n{}ValueError: Requested tokens (8705) exceed context window of 8192",
        "  File \"/srv/app.py\", line 9, in create_chat_completion\n".repeat(30)
    );
    let provider = Provider::start(vec![
        ResponseTemplate::new(500).set_body_json(json!({"error": {"message": traceback}})),
        answer("never sent"),
    ])
    .await;
    let agent = provider.agent(provider.config());

    let error = agent
        .run("Hi", &FakeTools::weather())
        .await
        .expect_err("run fails");

    assert_eq!(
        error.to_string(),
        "the conversation does not fit the model's context window (HTTP 500): \
         ValueError: Requested tokens (8705) exceed context window of 8192"
    );
    assert_eq!(provider.request_count(), 1);
}

#[tokio::test]
async fn fails_on_401_without_retry_and_without_the_key() {
    let provider = Provider::start(vec![
        ResponseTemplate::new(401).set_body_json(json!({"error": {
            "message": format!("Incorrect API key provided: {KEY}."),
            "type": "invalid_request_error", "code": "invalid_api_key"}})),
        answer("never sent"),
    ])
    .await;
    let agent = provider.agent(provider.config());

    let error = agent
        .run("Hi", &FakeTools::weather())
        .await
        .expect_err("run fails");

    assert_eq!(
        error.to_string(),
        "provider returned HTTP 401: Incorrect API key provided: [redacted]."
    );
    assert!(!format!("{error:?}").contains(KEY));
    assert_eq!(provider.request_count(), 1);
}

#[tokio::test]
async fn fails_on_a_malformed_json_body_without_retry() {
    let provider = Provider::start(vec![
        ResponseTemplate::new(200).set_body_raw("{\"choices\": [", "application/json"),
        answer("never sent"),
    ])
    .await;
    let agent = provider.agent(provider.config());

    let error = agent
        .run("Hi", &FakeTools::weather())
        .await
        .expect_err("run fails");

    assert_eq!(
        error.to_string(),
        "provider response is not valid: body is not JSON (EOF while parsing a list at line 1 column 13): `{\"choices\": [`"
    );
    assert!(matches!(
        error,
        AgentError::Provider(ProviderError::BadResponse(_))
    ));
    assert_eq!(provider.request_count(), 1);
}

#[tokio::test]
async fn stops_at_the_turn_limit_with_the_last_text() {
    let provider = Provider::start(vec![
        calling(
            json!("Checking Paris."),
            vec![tool_call("c1", "get_weather", r#"{"city":"Paris"}"#)],
        ),
        calling(
            Value::Null,
            vec![tool_call("c2", "get_weather", r#"{"city":"Rome"}"#)],
        ),
        answer("never sent"),
    ])
    .await;
    let tools = FakeTools::weather();
    let mut config = provider.config();
    config.max_turns = 2;
    let agent = provider.agent(config);

    let outcome = agent.run("Weather?", &tools).await.expect("run succeeds");

    assert!(outcome.hit_turn_limit);
    assert_eq!(outcome.turns, 2);
    assert_eq!(outcome.final_answer.as_deref(), Some("Checking Paris."));
    assert_eq!(outcome.usage.prompt_tokens, 20);
    assert_eq!(tools.calls().len(), 2);
    assert_eq!(provider.request_count(), 2);
}

#[tokio::test]
async fn retries_a_timed_out_request() {
    let provider = Provider::start(vec![
        answer("too late").set_delay(Duration::from_secs(3)),
        answer("Done."),
    ])
    .await;
    let mut config = provider.config();
    config.request_timeout = Duration::from_millis(300);
    let agent = provider.agent(config);

    let outcome = agent
        .run("Hi", &FakeTools::weather())
        .await
        .expect("run succeeds");

    assert_eq!(outcome.final_answer.as_deref(), Some("Done."));
    assert_eq!(provider.request_count(), 2);
}

#[tokio::test]
async fn reports_a_transport_error_after_retries_without_the_key() {
    // Bind and drop a listener to find a loopback port where nothing listens.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("free port")
        .port();
    let config = OpenAiConfig {
        endpoint: Endpoint::new(Api::Openai, format!("http://127.0.0.1:{port}/v1/")).with_key(KEY),
        max_attempts: 2,
        ..OpenAiConfig::from_lookup("m", |_| None)
    };
    let mut agent = OpenAiAgent::new(config).expect("valid config");
    agent.http.backoff = crate::provider::http::Backoff {
        base: Duration::from_millis(1),
        max: Duration::from_millis(1),
    };

    let error = agent
        .run("Hi", &FakeTools::weather())
        .await
        .expect_err("nothing listens");

    let message = error.to_string();
    let expected_start = format!(
        "provider request failed: failed to POST `http://127.0.0.1:{port}/v1/chat/completions`: "
    );
    assert!(message.starts_with(&expected_start), "{message}");
    assert!(!message.contains(KEY));
    assert!(matches!(
        error,
        AgentError::Provider(ProviderError::Transport(_))
    ));
}

#[test]
fn debug_output_redacts_the_api_key() {
    let config = OpenAiConfig::from_lookup("gpt-test", |name| match name {
        "OPENAI_API_KEY" => Some(KEY.to_owned()),
        _ => None,
    });
    let config_debug = format!("{config:?}");
    assert!(
        config_debug.contains(r#"api_key: Some("[redacted]")"#),
        "{config_debug}"
    );
    assert!(!config_debug.contains(KEY));
    let agent = OpenAiAgent::new(config).expect("valid config");
    assert!(!format!("{agent:?}").contains(KEY));
}

#[test]
fn from_env_reads_key_and_base_url_with_defaults() {
    let config = OpenAiConfig::from_lookup("llama3", |name| match name {
        "OPENAI_BASE_URL" => Some("http://localhost:11434/v1".to_owned()),
        "OPENAI_API_KEY" => Some(String::new()),
        _ => None,
    });
    assert_eq!(config.endpoint.base_url, "http://localhost:11434/v1");
    assert_eq!(config.endpoint.api_key, None);
    assert_eq!(config.endpoint.api_version, None);
    assert_eq!(config.model, "llama3");
    // Regression: the agent configs defaulted to 20 turns while the CLI and docs said 12.
    assert_eq!(config.max_turns, 12);
    assert_eq!(config.max_attempts, 4);

    let default = OpenAiConfig::from_lookup("gpt", |_| None);
    assert_eq!(default.endpoint.base_url, "https://api.openai.com/v1");
    let azure = OpenAiConfig::from_lookup("gpt", |name| {
        (name == "OPENAI_API_VERSION").then(|| "2024-10-21".to_owned())
    });
    assert_eq!(azure.endpoint.api_version.as_deref(), Some("2024-10-21"));
}

#[test]
fn new_rejects_unusable_configs() {
    let base = OpenAiConfig::from_lookup("m", |_| None);
    let cases = [
        (
            OpenAiConfig {
                max_turns: 0,
                ..base.clone()
            },
            "`max_turns` must be at least 1",
        ),
        (
            OpenAiConfig {
                max_attempts: 0,
                ..base.clone()
            },
            "`max_attempts` must be at least 1",
        ),
        (
            OpenAiConfig {
                model: " ".to_owned(),
                ..base.clone()
            },
            "the OpenAI model name is empty",
        ),
        (
            OpenAiConfig {
                endpoint: Endpoint::new(Api::Openai, "ftp://example.com"),
                ..base.clone()
            },
            "invalid OpenAI base URL `ftp://example.com`: expected http or https",
        ),
        (
            OpenAiConfig {
                endpoint: Endpoint::new(Api::Openai, "localhost:8080"),
                ..base.clone()
            },
            "invalid OpenAI base URL `localhost:8080`: expected http or https",
        ),
        (
            OpenAiConfig {
                endpoint: Endpoint::new(Api::Openai, "not a url"),
                ..base
            },
            "invalid OpenAI base URL `not a url`: relative URL without a base",
        ),
        (
            OpenAiConfig {
                endpoint: Endpoint::new(Api::Anthropic, "https://api.anthropic.com"),
                ..OpenAiConfig::from_lookup("m", |_| None)
            },
            "the OpenAI agent needs an OpenAI-compatible endpoint",
        ),
    ];
    for (config, expected) in cases {
        let error = OpenAiAgent::new(config).expect_err("must be rejected");
        assert_eq!(error.to_string(), expected);
    }
}

#[test]
fn mcp_tool_without_schema_gets_an_empty_object_schema() {
    assert_eq!(
        openai_tool(&json!({"name": "ping", "description": null})),
        json!({"type": "function",
               "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}}})
    );
}

#[tokio::test]
async fn sends_tool_choice_and_parallel_tool_calls_when_configured() {
    let provider = Provider::start(vec![answer("Done.")]).await;
    let mut config = provider.config();
    config.tool_choice = Some(ToolChoice::Required);
    config.parallel_tool_calls = Some(false);
    config.max_tokens = Some(256);
    let agent = provider.agent(config);

    agent
        .run("Hi", &FakeTools::weather())
        .await
        .expect("run succeeds");

    let body = provider.body(0);
    assert_eq!(body["tool_choice"], json!("required"));
    assert_eq!(body["parallel_tool_calls"], json!(false));
    assert_eq!(body["temperature"], json!(0.0));
    assert_eq!(body["seed"], json!(7));
    assert_eq!(body["max_tokens"], json!(256));
}

/// llama-cpp-python's `chatml-function-calling` format renders a request without
/// `tool_choice` with no tools, so its model can never call one (issue #19).
#[tokio::test]
async fn sends_tool_choice_auto_with_the_tools_when_none_is_configured() {
    let provider = Provider::start(vec![answer("Done."), answer("Done.")]).await;
    let agent = provider.agent(provider.config());

    agent
        .run("Hi", &FakeTools::weather())
        .await
        .expect("run succeeds");
    agent
        .run("Hi", &FakeTools::default())
        .await
        .expect("run succeeds");

    let with_tools = provider.body(0);
    assert_eq!(with_tools["tool_choice"], json!("auto"));
    assert_eq!(with_tools["tools"].as_array().map(Vec::len), Some(2));
    let without_tools = provider.body(1);
    assert_eq!(without_tools.get("tools"), None);
    assert_eq!(without_tools.get("tool_choice"), None);
}

#[tokio::test]
async fn azure_style_endpoint_gets_api_version_and_api_key_header() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/openai/deployments/gpt/chat/completions"))
        .and(wiremock::matchers::query_param("api-version", "2024-10-21"))
        .and(wiremock::matchers::header("api-key", KEY))
        .respond_with(answer("Azure says hi."))
        .expect(1)
        .mount(&server)
        .await;
    let config = OpenAiConfig {
        endpoint: Endpoint {
            key_header: Some("api-key".to_owned()),
            api_version: Some("2024-10-21".to_owned()),
            ..Endpoint::new(
                Api::Openai,
                format!("{}/openai/deployments/gpt", server.uri()),
            )
            .with_key(KEY)
        },
        ..OpenAiConfig::from_lookup("gpt", |_| None)
    };
    let agent = OpenAiAgent::new(config).expect("valid config");

    let outcome = agent
        .run("Hi", &FakeTools::weather())
        .await
        .expect("run succeeds");

    assert_eq!(outcome.final_answer.as_deref(), Some("Azure says hi."));
    let requests = server.received_requests().await.expect("recorded");
    assert!(requests[0].headers.get("authorization").is_none());
}

#[tokio::test]
async fn records_requests_and_model_latency_per_run() {
    let provider = Provider::start(vec![
        calling(
            Value::Null,
            vec![tool_call("c1", "get_weather", r#"{"city":"Paris"}"#)],
        ),
        answer("Done.").set_delay(Duration::from_millis(120)),
    ])
    .await;
    let agent = provider.agent(provider.config());

    let outcome = agent
        .run("Hi", &FakeTools::weather())
        .await
        .expect("run succeeds");

    assert_eq!(outcome.usage.requests, 2);
    assert!(outcome.usage.latency_ms >= 120, "{:?}", outcome.usage);
    assert_eq!(outcome.usage.prompt_tokens, 30);
    assert_eq!(outcome.usage.completion_tokens, 7);
}

/// `stream: true` asks for a streamed response, whose chunks are joined; two calls
/// a server sends on one index (a new id on an occupied index) are two calls.
#[tokio::test]
async fn streamed_responses_are_joined_and_an_index_collision_is_two_calls() {
    let events = [
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [
            {"index": 0, "id": "call_a", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": "}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": "\"Paris\"}"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "call_b", "type": "function",
             "function": {"name": "get_time", "arguments": "{}"}}]},
            "finish_reason": "tool_calls"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 10, "completion_tokens": 3}}),
    ];
    let mut sse: String = events
        .iter()
        .map(|event| format!("data: {event}\n\n"))
        .collect();
    sse.push_str("data: [DONE]\n\n");
    let provider = Provider::start(vec![
        ResponseTemplate::new(200).set_body_raw(sse.into_bytes(), "text/event-stream"),
        answer("Sunny, and it is noon."),
    ])
    .await;
    let config = OpenAiConfig {
        stream: true,
        ..provider.config()
    };
    let tools = FakeTools::weather();
    let outcome = provider
        .agent(config)
        .run("Weather and time in Paris?", &tools)
        .await
        .expect("runs");
    assert_eq!(
        tools.calls(),
        vec![
            ("get_weather".to_owned(), json!({"city": "Paris"})),
            ("get_time".to_owned(), json!({})),
        ]
    );
    assert_eq!(
        outcome.final_answer.as_deref(),
        Some("Sunny, and it is noon.")
    );
    assert_eq!(outcome.usage.prompt_tokens, 10 + 20);
    let first = provider.body(0);
    assert_eq!(first["stream"], json!(true));
    assert_eq!(first["stream_options"], json!({"include_usage": true}));
    let sent: Vec<Value> = provider.body(1)["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].clone())
        .collect();
    assert_eq!(sent, vec![json!("call_a"), json!("call_b")]);
}

#[test]
fn the_output_limit_is_max_completion_tokens_only_for_openai_and_azure() {
    assert_eq!(
        output_limit_field("https://api.openai.com/v1"),
        "max_completion_tokens"
    );
    assert_eq!(
        output_limit_field("https://NAME.OpenAI.Azure.com/openai/deployments/d"),
        "max_completion_tokens"
    );
    for base_url in [
        "http://localhost:11434/v1",
        "http://127.0.0.1:8000/v1",
        "https://api.openai.com.example.net/v1",
        "https://openrouter.ai/api/v1",
        "not a url",
    ] {
        assert_eq!(output_limit_field(base_url), "max_tokens", "{base_url}");
    }
}

#[tokio::test]
async fn prompted_mode_offers_the_tools_in_text_and_reads_the_calls_back_from_it() {
    let provider = Provider::start(vec![
        // Qwen2.5-Coder-0.5B's habit: bare call JSON, no tags.
        answer(r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#),
        answer(
            "Checking both.\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": Oslo}}\n</tool_call>",
        ),
        answer("Paris is sunny."),
    ])
    .await;
    let tools = FakeTools::weather();
    let mut config = provider.config();
    config.tool_calling = ToolCalling::Prompted;
    let agent = provider.agent(config);

    let outcome = agent
        .run("What is the weather?", &tools)
        .await
        .expect("run succeeds");

    assert_eq!(outcome.final_answer.as_deref(), Some("Paris is sunny."));
    assert_eq!(outcome.turns, 3);
    assert_eq!(
        tools.calls(),
        vec![
            ("get_weather".to_owned(), json!({"city": "Paris"})),
            ("get_time".to_owned(), json!({})),
        ]
    );
    // The call whose JSON cannot be read is recorded as invalid under its name, not run.
    assert_eq!(
        tools.invalid(),
        vec![(
            "get_weather".to_owned(),
            "{\"name\": \"get_weather\", \"arguments\": {\"city\": Oslo}}".to_owned(),
            InvalidCallKind::UnparseableArguments
        )]
    );

    let first = provider.body(0);
    assert_eq!(first.get("tools"), None, "{first}");
    assert_eq!(first.get("tool_choice"), None, "{first}");
    let system = first["messages"][0]["content"]
        .as_str()
        .expect("a system prompt");
    assert!(
        system.starts_with("You are a helpful agent.\n\n# Tools\n"),
        "{system}"
    );
    assert!(system.contains(r#"{"type":"function","function":{"name":"get_weather","description":"Weather for a city.""#), "{system}");

    // Turn 2 echoes the reply as written and answers in a user turn of tool responses.
    let second = provider.body(1);
    let messages = second["messages"].as_array().expect("messages");
    assert_eq!(
        messages[2],
        json!({"role": "assistant", "content": r#"{"name": "get_weather", "arguments": {"city": "Paris"}}"#})
    );
    assert_eq!(
        messages[3],
        json!({"role": "user", "content": "<tool_response>\nget_weather ok {\"city\":\"Paris\"}\n</tool_response>"})
    );
    let third = provider.body(2);
    let last = third["messages"].as_array().and_then(|m| m.last()).cloned();
    let last = last.expect("a message");
    assert_eq!(last["role"], "user");
    let text = last["content"].as_str().unwrap_or_default();
    assert_eq!(text.matches("<tool_response>").count(), 2, "{text}");
    assert!(
        text.contains("Error: the arguments of `get_weather` are not valid JSON"),
        "{text}"
    );
}
