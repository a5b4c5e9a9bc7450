//! The agent under test for the Anthropic Messages API: the conversation loop and its requests.
//! Retries and backoff are shared with the OpenAI agent (`http`); reading a response lives in
//! `parse`.

pub mod parse;
#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::RequestBody;
use crate::agent::call::execute;
use crate::agent::{AgentError, AgentOutcome, ToolChoice, ToolExecutor, Usage};
use crate::defaults;
use crate::provider::http::JsonEndpoint;
use crate::provider::{Api, Endpoint, EndpointSources};

pub use parse::{
    AnthropicTurn, Block, JoinedStream, ServerToolCall, join_stream, parse_message, parse_stream,
};

/// `max_tokens` is required by the Messages API; this is sent when none is configured
/// (`crate::defaults::MAX_TOKENS`).
pub const DEFAULT_MAX_TOKENS: u32 = crate::defaults::MAX_TOKENS;

/// How to reach the Messages API and how to sample from it.
#[derive(Clone)]
pub struct AnthropicConfig {
    /// Where the model is reached: the API root (e.g. `https://api.anthropic.com`;
    /// `/v1/messages` is appended) and the key, sent as `x-api-key` ([`Endpoint`]). The key
    /// is never shown in `Debug` output, error messages or results.
    pub endpoint: Endpoint,
    /// The `model` field of each request.
    pub model: String,
    /// Sampling temperature in 0.0..=1.0; `None` leaves the provider's default.
    pub temperature: Option<f64>,
    /// `max_tokens` per response (required by the API); `None` sends [`DEFAULT_MAX_TOKENS`].
    pub max_tokens: Option<u32>,
    /// `tool_choice`; `None` leaves the provider's default (`auto`).
    pub tool_choice: Option<ToolChoice>,
    /// `false` sends `disable_parallel_tool_use: true`; `None` leaves the default (allowed).
    pub parallel_tool_calls: Option<bool>,
    /// The most model responses per run, at least 1.
    pub max_turns: u32,
    /// Timeout of one HTTP request, from sending to the end of the body.
    pub request_timeout: Duration,
    /// HTTP attempts per model response, at least 1; 429, 5xx (including 529 overloaded) and
    /// transport errors are retried.
    pub max_attempts: u32,
    /// Sent as the top-level `system` field when set.
    pub system_prompt: Option<String>,
}

impl AnthropicConfig {
    /// From `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL` (default `https://api.anthropic.com`) and
    /// the model name. Empty variables count as unset. Other fields as for the OpenAI agent:
    /// the turn limit, request timeout and attempts of `crate::defaults`.
    pub fn from_env(model: &str) -> Self {
        Self::from_lookup(model, |name| std::env::var(name).ok())
    }

    fn from_lookup(model: &str, lookup: impl Fn(&str) -> Option<String>) -> Self {
        Self {
            endpoint: Endpoint::resolve(Api::Anthropic, EndpointSources::default(), &lookup),
            model: model.to_owned(),
            temperature: None,
            max_tokens: None,
            tool_choice: None,
            parallel_tool_calls: None,
            max_turns: defaults::MAX_TURNS,
            request_timeout: defaults::REQUEST_TIMEOUT,
            max_attempts: defaults::MAX_ATTEMPTS,
            system_prompt: None,
        }
    }
}

impl fmt::Debug for AnthropicConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnthropicConfig")
            .field("endpoint", &self.endpoint)
            .field("model", &self.model)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("tool_choice", &self.tool_choice)
            .field("parallel_tool_calls", &self.parallel_tool_calls)
            .field("max_turns", &self.max_turns)
            .field("request_timeout", &self.request_timeout)
            .field("max_attempts", &self.max_attempts)
            .field("system_prompt", &self.system_prompt)
            .finish()
    }
}

/// An agent that talks to the Anthropic Messages API.
#[derive(Debug)]
pub struct AnthropicAgent {
    config: AnthropicConfig,
    http: JsonEndpoint,
}

impl AnthropicAgent {
    /// Checks the config and builds the HTTP client once.
    ///
    /// Errors (`AgentError::Config`) when `model` is empty, `max_turns` or `max_attempts` is 0,
    /// or `base_url` is not an http(s) URL.
    pub fn new(config: AnthropicConfig) -> Result<Self, AgentError> {
        let http = super::checked_client(
            "Anthropic",
            Api::Anthropic,
            &config.endpoint,
            (&config.model, config.max_turns),
            (config.request_timeout, config.max_attempts),
        )?;
        Ok(Self { config, http })
    }

    /// Runs one scenario prompt to completion.
    ///
    /// Each turn sends the whole conversation (a scripted user's next message, from
    /// [`ToolExecutor::next_user_message`], follows each reply without tool calls) and
    /// executes every client `tool_use` of the
    /// response in content order (several per turn), answering them together in one user
    /// message of `tool_result` blocks (`is_error` for failed or invalid calls). Server tool
    /// calls are the provider's own and are not executed. The run ends when a response has no
    /// client tool call (its text is the final answer; one that stopped at `max_tokens` is
    /// `truncated`), or after `max_turns` responses (`hit_turn_limit`).
    ///
    /// Errors only for what is not the model's fault: HTTP errors after retries, transport
    /// errors, bodies that are not a Messages response.
    pub async fn run<E: ToolExecutor>(
        &self,
        prompt: &str,
        tools: &E,
    ) -> Result<AgentOutcome, AgentError> {
        let tool_definitions: Vec<Value> = tools.tools().iter().map(anthropic_tool).collect();
        let tool_definitions = super::serialized_tools(&tool_definitions);
        let mut messages = vec![json!({"role": "user", "content": prompt})];
        let mut usage = Usage::default();
        let mut last_text = None;
        for turn in 1..=self.config.max_turns {
            let body = self.request_body(&messages, tool_definitions.as_deref());
            let reply = self.http.post(&body).await?;
            usage.add_request(reply.latency);
            let parsed = parse_message(&reply.body)?;
            if let Some(turn_usage) = &parsed.usage {
                usage.prompt_tokens += turn_usage.prompt_tokens;
                usage.completion_tokens += turn_usage.completion_tokens;
            }
            if parsed.calls.is_empty() {
                if let Some(next) = tools.next_user_message(parsed.text.as_deref()).await {
                    last_text = parsed.text.filter(|text| !text.trim().is_empty());
                    // An assistant message may not be empty: a reply without text says so.
                    let said = last_text.clone().unwrap_or_else(|| "(no reply)".to_owned());
                    messages.push(json!({"role": "assistant", "content": said}));
                    messages.push(json!({"role": "user", "content": next}));
                    continue;
                }
                return Ok(AgentOutcome {
                    final_answer: parsed.text,
                    turns: turn,
                    truncated: parsed.stop_reason.as_deref() == Some("max_tokens"),
                    usage,
                    ..AgentOutcome::default()
                });
            }
            if let Some(text) = parsed.text.as_ref().filter(|text| !text.trim().is_empty()) {
                last_text = Some(text.clone());
            }
            messages.push(json!({"role": "assistant", "content": parsed.assistant_content}));
            let mut results = Vec::with_capacity(parsed.calls.len());
            tools.begin_turn(turn);
            for call in &parsed.calls {
                let (is_error, content) = execute(call, tools).await;
                let mut result = json!({"type": "tool_result",
                                        "tool_use_id": call.id.as_deref().unwrap_or(""),
                                        "content": content});
                if is_error {
                    result["is_error"] = Value::Bool(true);
                }
                results.push(result);
            }
            messages.push(json!({"role": "user", "content": results}));
        }
        Ok(AgentOutcome {
            final_answer: last_text,
            turns: self.config.max_turns,
            hit_turn_limit: true,
            usage,
            ..AgentOutcome::default()
        })
    }

    fn request_body<'a>(
        &'a self,
        messages: &'a [Value],
        tools: Option<&'a serde_json::value::RawValue>,
    ) -> RequestBody<'a> {
        let mut body = RequestBody::default();
        body.insert("model", self.config.model.as_str());
        body.insert(
            "max_tokens",
            self.config.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        );
        if let Some(system_prompt) = &self.config.system_prompt {
            body.insert("system", system_prompt.as_str());
        }
        body.messages("messages", messages);
        if let Some(tools) = tools {
            body.raw("tools", tools);
            let kind = self.config.tool_choice.map(|choice| match choice {
                ToolChoice::Auto => "auto",
                ToolChoice::Required => "any",
                ToolChoice::None => "none",
            });
            let no_parallel = self.config.parallel_tool_calls == Some(false);
            if kind.is_some() || no_parallel {
                let mut choice = json!({"type": kind.unwrap_or("auto")});
                if no_parallel {
                    choice["disable_parallel_tool_use"] = Value::Bool(true);
                }
                body.insert("tool_choice", choice);
            }
        }
        if let Some(temperature) = self.config.temperature {
            body.insert("temperature", temperature);
        }
        body
    }
}

/// An MCP tool definition as an Anthropic `tools` entry.
fn anthropic_tool(tool: &Value) -> Value {
    let mut entry = Map::new();
    entry.insert(
        "name".to_owned(),
        tool.get("name").cloned().unwrap_or(Value::from("")),
    );
    if let Some(description) = tool.get("description").filter(|d| d.is_string()) {
        entry.insert("description".to_owned(), description.clone());
    }
    entry.insert(
        "input_schema".to_owned(),
        tool.get("inputSchema")
            .filter(|schema| schema.is_object())
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
    );
    Value::Object(entry)
}
