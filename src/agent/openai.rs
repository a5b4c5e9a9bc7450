//! The agent under test for any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM,
//! Ollama, llama.cpp server): the conversation loop, the HTTP requests and their retries.
//! Reading a response lives in `parse`.

mod parse;
#[cfg(test)]
mod tests;

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::agent::{
    AgentError, AgentOutcome, InvalidCallKind, ToolExecutor, ToolObservation, Usage,
};

pub use parse::{CallArguments, CallNote, ParsedCall, ParsedTurn, parse_response, parse_tool_call};

/// The base URL used when `OPENAI_BASE_URL` is not set.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// The longest wait a `Retry-After` header can impose before a retry.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// The most characters of a provider's error body kept in an error message.
const MAX_ERROR_CHARS: usize = 500;

/// How to reach an OpenAI-compatible chat-completions endpoint and how to sample from it.
#[derive(Clone)]
pub struct OpenAiConfig {
    /// The API root, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`;
    /// `/chat/completions` is appended.
    pub base_url: String,
    /// Sent only as `Authorization: Bearer ..`; `None` sends no Authorization header (local
    /// servers). Never shown in `Debug` output or error messages.
    pub api_key: Option<String>,
    /// The `model` field of each request.
    pub model: String,
    /// Sampling temperature; `None` leaves the provider's default.
    pub temperature: Option<f64>,
    /// `max_tokens` per response; `None` leaves the provider's default. Responses that reach it
    /// mark unparseable tool-call arguments as `truncated`.
    pub max_tokens: Option<u32>,
    /// `seed` for providers that support reproducible sampling.
    pub seed: Option<u64>,
    /// The most model responses per run, at least 1.
    pub max_turns: u32,
    /// Timeout of one HTTP request, from sending to the end of the body.
    pub request_timeout: Duration,
    /// HTTP attempts per model response, at least 1; 429, 5xx and transport errors are retried.
    pub max_attempts: u32,
    /// Sent as the first message (`role: system`) when set.
    pub system_prompt: Option<String>,
}

impl OpenAiConfig {
    /// From `OPENAI_API_KEY`, `OPENAI_BASE_URL` (default `https://api.openai.com/v1`), and the
    /// model name. Empty variables count as unset. Other fields take their defaults: no
    /// temperature, max tokens or seed, 20 turns, a 120 s request timeout, 4 attempts, no system
    /// prompt.
    pub fn from_env(model: &str) -> Self {
        Self::from_lookup(model, |name| std::env::var(name).ok())
    }

    fn from_lookup(model: &str, lookup: impl Fn(&str) -> Option<String>) -> Self {
        let non_empty = |name| lookup(name).filter(|value| !value.trim().is_empty());
        Self {
            base_url: non_empty("OPENAI_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.to_owned()),
            api_key: non_empty("OPENAI_API_KEY"),
            model: model.to_owned(),
            temperature: None,
            max_tokens: None,
            seed: None,
            max_turns: 20,
            request_timeout: Duration::from_secs(120),
            max_attempts: 4,
            system_prompt: None,
        }
    }
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("model", &self.model)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("seed", &self.seed)
            .field("max_turns", &self.max_turns)
            .field("request_timeout", &self.request_timeout)
            .field("max_attempts", &self.max_attempts)
            .field("system_prompt", &self.system_prompt)
            .finish()
    }
}

/// Exponential backoff between attempts: `base * 2^(attempt - 1)`, at most `max`, plus up to
/// half of that again as jitter.
#[derive(Debug, Clone, Copy)]
struct Backoff {
    base: Duration,
    max: Duration,
}

impl Backoff {
    const DEFAULT: Self = Self {
        base: Duration::from_millis(500),
        max: Duration::from_secs(8),
    };

    /// The wait after failed attempt number `attempt` (1-based).
    fn delay(self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        let delay = self.base.saturating_mul(factor).min(self.max);
        let jitter_ms = u64::try_from(delay.as_millis() / 2).unwrap_or(u64::MAX);
        delay + Duration::from_millis(random_below(jitter_ms.saturating_add(1)))
    }
}

/// A number in `0..bound` from the standard library's randomly keyed hasher; enough for jitter.
fn random_below(bound: u64) -> u64 {
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    random % bound.max(1)
}

/// An agent that talks to an OpenAI-compatible chat-completions endpoint.
#[derive(Debug)]
pub struct OpenAiAgent {
    config: OpenAiConfig,
    endpoint: String,
    client: reqwest::Client,
    backoff: Backoff,
}

/// One failed HTTP attempt.
struct Failure {
    error: AgentError,
    /// Whether another attempt may succeed (429, 5xx, transport errors).
    is_retryable: bool,
    /// The provider's `Retry-After`, already capped.
    retry_after: Option<Duration>,
}

impl OpenAiAgent {
    /// Checks the config and builds the HTTP client once.
    ///
    /// Errors (`AgentError::Config`) when `model` is empty, `max_turns` or `max_attempts` is 0,
    /// `base_url` is not an http(s) URL, or the HTTP client cannot be built (e.g. no CA
    /// certificates; set `SSL_CERT_FILE`).
    pub fn new(config: OpenAiConfig) -> Result<Self, AgentError> {
        if config.model.trim().is_empty() {
            return Err(AgentError::Config(
                "the OpenAI model name is empty".to_owned(),
            ));
        }
        if config.max_turns == 0 {
            return Err(AgentError::Config(
                "`max_turns` must be at least 1".to_owned(),
            ));
        }
        if config.max_attempts == 0 {
            return Err(AgentError::Config(
                "`max_attempts` must be at least 1".to_owned(),
            ));
        }
        let endpoint = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
        match reqwest::Url::parse(&endpoint) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => {}
            Ok(_) => {
                return Err(AgentError::Config(format!(
                    "invalid OpenAI base URL `{}`: expected http or https",
                    config.base_url
                )));
            }
            Err(error) => {
                return Err(AgentError::Config(format!(
                    "invalid OpenAI base URL `{}`: {error}",
                    config.base_url
                )));
            }
        }
        let client = reqwest::Client::builder()
            .timeout(config.request_timeout)
            .build()
            .map_err(|error| {
                AgentError::Config(format!(
                    "failed to build the HTTP client: {}",
                    chain(&error)
                ))
            })?;
        Ok(Self {
            config,
            endpoint,
            client,
            backoff: Backoff::DEFAULT,
        })
    }

    /// Runs one scenario prompt to completion.
    ///
    /// Each turn sends the whole conversation, executes the model's tool calls one after another
    /// in the order given, and answers each with a `tool` message. Invalid calls are recorded
    /// with `record_invalid`, never executed, and answered with an error message. The run ends
    /// when the model answers without tool calls (its text is the final answer) or after
    /// `max_turns` responses (`hit_turn_limit`; the tool calls of the last response are still
    /// executed; the final answer is the last non-empty text, if any).
    ///
    /// Errors only for what is not the model's fault: HTTP errors after retries, transport
    /// errors, bodies that are not a chat completion.
    pub async fn run<E: ToolExecutor>(
        &self,
        prompt: &str,
        tools: &E,
    ) -> Result<AgentOutcome, AgentError> {
        let tool_definitions: Vec<Value> = tools.tools().iter().map(openai_tool).collect();
        let mut messages = Vec::new();
        if let Some(system_prompt) = &self.config.system_prompt {
            messages.push(json!({"role": "system", "content": system_prompt}));
        }
        messages.push(json!({"role": "user", "content": prompt}));

        let mut usage = Usage::default();
        let mut last_text = None;
        for turn in 1..=self.config.max_turns {
            let body = self.request_body(&messages, &tool_definitions);
            let response = self.post(&body).await?;
            let parsed = parse_response(&response, self.config.max_tokens)?;
            if let Some(turn_usage) = &parsed.usage {
                usage.prompt_tokens += turn_usage.prompt_tokens;
                usage.completion_tokens += turn_usage.completion_tokens;
            }
            if parsed.calls.is_empty() {
                return Ok(AgentOutcome {
                    final_answer: parsed.content,
                    turns: turn,
                    hit_turn_limit: false,
                    usage,
                });
            }
            if let Some(text) = parsed
                .content
                .as_ref()
                .filter(|text| !text.trim().is_empty())
            {
                last_text = Some(text.clone());
            }
            messages.push(parsed.assistant_message.clone());
            for call in &parsed.calls {
                let content = execute(call, tools).await;
                messages.push(if parsed.is_legacy_function_call {
                    json!({"role": "function", "name": call.name, "content": content})
                } else {
                    json!({"role": "tool", "tool_call_id": call.id.as_deref().unwrap_or(""),
                           "content": content})
                });
            }
        }
        Ok(AgentOutcome {
            final_answer: last_text,
            turns: self.config.max_turns,
            hit_turn_limit: true,
            usage,
        })
    }

    fn request_body(&self, messages: &[Value], tools: &[Value]) -> Value {
        let mut body = Map::new();
        body.insert("model".to_owned(), Value::from(self.config.model.as_str()));
        body.insert("messages".to_owned(), Value::from(messages.to_vec()));
        if !tools.is_empty() {
            body.insert("tools".to_owned(), Value::from(tools.to_vec()));
        }
        if let Some(temperature) = self.config.temperature {
            body.insert("temperature".to_owned(), Value::from(temperature));
        }
        if let Some(max_tokens) = self.config.max_tokens {
            body.insert("max_tokens".to_owned(), Value::from(max_tokens));
        }
        if let Some(seed) = self.config.seed {
            body.insert("seed".to_owned(), Value::from(seed));
        }
        Value::Object(body)
    }

    /// POSTs one request, retrying 429, 5xx and transport errors up to `max_attempts` attempts.
    async fn post(&self, body: &Value) -> Result<Value, AgentError> {
        let mut attempt = 1;
        loop {
            match self.post_once(body).await {
                Ok(response) => return Ok(response),
                Err(failure) if failure.is_retryable && attempt < self.config.max_attempts => {
                    let delay = failure
                        .retry_after
                        .unwrap_or_else(|| self.backoff.delay(attempt));
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                Err(failure) => return Err(failure.error),
            }
        }
    }

    async fn post_once(&self, body: &Value) -> Result<Value, Failure> {
        let mut request = self.client.post(&self.endpoint).json(body);
        if let Some(api_key) = &self.config.api_key {
            request = request.bearer_auth(api_key);
        }
        let response = request
            .send()
            .await
            .map_err(|error| self.transport(error))?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(parse_retry_after);
        let bytes = response
            .bytes()
            .await
            .map_err(|error| self.transport(error))?;
        if !status.is_success() {
            let message = self.redact(&error_text(&bytes, status));
            return Err(Failure {
                error: AgentError::Http {
                    status: status.as_u16(),
                    message,
                },
                is_retryable: status == reqwest::StatusCode::TOO_MANY_REQUESTS
                    || status.is_server_error(),
                retry_after,
            });
        }
        serde_json::from_slice(&bytes).map_err(|error| Failure {
            error: AgentError::BadResponse(self.redact(&format!(
                "body is not JSON ({error}): `{}`",
                snippet(&String::from_utf8_lossy(&bytes))
            ))),
            is_retryable: false,
            retry_after: None,
        })
    }

    fn transport(&self, error: reqwest::Error) -> Failure {
        let what = if error.is_timeout() {
            format!("timed out after {:?}", self.config.request_timeout)
        } else {
            chain(&error.without_url())
        };
        Failure {
            error: AgentError::Transport(
                self.redact(&format!("failed to POST `{}`: {what}", self.endpoint)),
            ),
            is_retryable: true,
            retry_after: None,
        }
    }

    /// Removes the API key from text bound for an error message.
    fn redact(&self, text: &str) -> String {
        match &self.config.api_key {
            Some(key) if !key.is_empty() => text.replace(key.as_str(), "[redacted]"),
            _ => text.to_owned(),
        }
    }
}

/// Executes one parsed call, or records it as invalid; returns what the model is shown.
async fn execute<E: ToolExecutor>(call: &ParsedCall, tools: &E) -> String {
    match &call.arguments {
        CallArguments::Valid(arguments) => {
            let ToolObservation { content, .. } = tools.call(&call.name, arguments.clone()).await;
            content
        }
        CallArguments::Invalid { kind, raw } => {
            tools.record_invalid(&call.name, raw, *kind);
            invalid_call_message(&call.name, *kind, &call.notes)
        }
    }
}

/// The tool message answering a call that was not executed.
fn invalid_call_message(name: &str, kind: InvalidCallKind, notes: &[CallNote]) -> String {
    let problem = match kind {
        InvalidCallKind::ArgumentsNotObject => {
            format!("the arguments of `{name}` are not a JSON object")
        }
        InvalidCallKind::UnparseableArguments if notes.contains(&CallNote::PossiblyTruncated) => {
            format!("the arguments of `{name}` are not valid JSON (possibly truncated)")
        }
        InvalidCallKind::UnparseableArguments => {
            format!("the arguments of `{name}` are not valid JSON")
        }
        InvalidCallKind::Truncated => {
            format!("the arguments of `{name}` were cut off by the output token limit")
        }
        InvalidCallKind::MissingFunction => {
            "the tool call has no `function` with a `name`".to_owned()
        }
    };
    format!("Error: {problem}; the call was not executed.")
}

/// An MCP tool definition as an OpenAI `tools` entry.
fn openai_tool(tool: &Value) -> Value {
    let mut function = Map::new();
    function.insert(
        "name".to_owned(),
        tool.get("name").cloned().unwrap_or(Value::from("")),
    );
    if let Some(description) = tool.get("description").filter(|d| d.is_string()) {
        function.insert("description".to_owned(), description.clone());
    }
    function.insert(
        "parameters".to_owned(),
        tool.get("inputSchema")
            .filter(|schema| schema.is_object())
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
    );
    json!({"type": "function", "function": function})
}

/// A `Retry-After` in seconds (fractions allowed), capped at `MAX_RETRY_AFTER`; HTTP dates are
/// ignored (the backoff applies).
fn parse_retry_after(value: &str) -> Option<Duration> {
    let seconds: f64 = value.trim().parse().ok()?;
    if !seconds.is_finite() || seconds < 0.0 {
        return None;
    }
    Some(Duration::from_secs_f64(
        seconds.min(MAX_RETRY_AFTER.as_secs_f64()),
    ))
}

/// The provider's `error.message` from an error body, else the body itself, else the status.
fn error_text(bytes: &[u8], status: reqwest::StatusCode) -> String {
    let from_json = serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|body| match body.get("error")? {
            Value::String(message) => Some(message.clone()),
            error => error.get("message")?.as_str().map(str::to_owned),
        });
    let text = from_json.unwrap_or_else(|| String::from_utf8_lossy(bytes).trim().to_owned());
    if text.is_empty() {
        status.canonical_reason().unwrap_or("no body").to_owned()
    } else {
        snippet(&text)
    }
}

/// `text` cut to `MAX_ERROR_CHARS` characters.
fn snippet(text: &str) -> String {
    match text.char_indices().nth(MAX_ERROR_CHARS) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text.to_owned(),
    }
}

/// An error and its sources, joined by `: `.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
