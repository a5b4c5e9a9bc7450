//! The agent under test for any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM,
//! Ollama, llama.cpp server): the conversation loop, the HTTP requests and their retries.
//! Reading a response lives in `parse`.

pub mod parse;
pub mod prompted;
pub mod stream;
#[cfg(test)]
mod tests;

use std::fmt;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::RequestBody;
use crate::agent::call::execute;
use crate::agent::{AgentError, AgentOutcome, ToolCalling, ToolChoice, ToolExecutor, Usage};
use crate::defaults;
use crate::provider::http::JsonEndpoint;
use crate::provider::{Api, Endpoint, EndpointSources};

pub use parse::{ParsedTurn, parse_response, parse_tool_call};

/// How to reach an OpenAI-compatible chat-completions endpoint and how to sample from it.
#[derive(Clone)]
pub struct OpenAiConfig {
    /// Where the model is reached: base URL (`/chat/completions` is appended), key, key
    /// header and `api-version` ([`Endpoint`]). Its key is never shown in `Debug` output,
    /// error messages or results.
    pub endpoint: Endpoint,
    /// The `model` field of each request.
    pub model: String,
    /// Sampling temperature; `None` leaves the provider's default.
    pub temperature: Option<f64>,
    /// Output tokens per response; `None` leaves the provider's default. Sent as
    /// `max_completion_tokens` to OpenAI's own API and Azure OpenAI (which deprecated
    /// `max_tokens`, and whose reasoning models reject it), as `max_tokens` elsewhere (vLLM,
    /// Ollama, llama.cpp). Unparseable tool-call arguments of a response that reaches it are
    /// `truncated`; a reply without tool calls that reaches it makes the run `truncated`.
    pub max_tokens: Option<u32>,
    /// `seed` for providers that support reproducible sampling.
    pub seed: Option<u64>,
    /// `tool_choice`, sent with every request that offers tools; `None` sends `auto` (the
    /// OpenAI default, sent explicitly because llama-cpp-python's `chatml-function-calling`
    /// format drops the tools of a request without one).
    pub tool_choice: Option<ToolChoice>,
    /// `parallel_tool_calls`; `None` leaves the provider's default (allowed).
    pub parallel_tool_calls: Option<bool>,
    /// The most model responses per run, at least 1.
    pub max_turns: u32,
    /// Timeout of one HTTP request, from sending to the end of the body.
    pub request_timeout: Duration,
    /// HTTP attempts per model response, at least 1; 429, 5xx and transport errors are retried.
    pub max_attempts: u32,
    /// Sent as the first message (`role: system`) when set.
    pub system_prompt: Option<String>,
    /// Ask for a streamed response (`"stream": true`, with usage in the last chunk) and join
    /// its chunks ([`stream::join_chunks`]) before reading it; default false.
    pub stream: bool,
    /// Native function calling (default), or the tools in the system prompt and the calls read
    /// from the reply's text ([`prompted`]).
    pub tool_calling: ToolCalling,
}

impl OpenAiConfig {
    /// From `OPENAI_API_KEY`, `OPENAI_BASE_URL` (default `https://api.openai.com/v1`),
    /// `OPENAI_API_VERSION` (Azure-style, optional), and the model name. Empty variables count
    /// as unset. Other fields take their defaults: no temperature, seed or tool choice, and the
    /// output limit, turn limit, request timeout and attempts of `crate::defaults`; no system
    /// prompt.
    pub fn from_env(model: &str) -> Self {
        Self::from_lookup(model, |name| std::env::var(name).ok())
    }

    fn from_lookup(model: &str, lookup: impl Fn(&str) -> Option<String>) -> Self {
        Self {
            endpoint: Endpoint::resolve(Api::Openai, EndpointSources::default(), &lookup),
            model: model.to_owned(),
            temperature: None,
            max_tokens: Some(defaults::MAX_TOKENS),
            seed: None,
            tool_choice: None,
            parallel_tool_calls: None,
            max_turns: defaults::MAX_TURNS,
            request_timeout: defaults::REQUEST_TIMEOUT,
            max_attempts: defaults::MAX_ATTEMPTS,
            system_prompt: None,
            stream: false,
            tool_calling: ToolCalling::Native,
        }
    }
}

impl fmt::Debug for OpenAiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiConfig")
            .field("endpoint", &self.endpoint)
            .field("model", &self.model)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("seed", &self.seed)
            .field("tool_choice", &self.tool_choice)
            .field("parallel_tool_calls", &self.parallel_tool_calls)
            .field("max_turns", &self.max_turns)
            .field("request_timeout", &self.request_timeout)
            .field("max_attempts", &self.max_attempts)
            .field("system_prompt", &self.system_prompt)
            .field("stream", &self.stream)
            .field("tool_calling", &self.tool_calling)
            .finish()
    }
}

/// An agent that talks to an OpenAI-compatible chat-completions endpoint.
#[derive(Debug)]
pub struct OpenAiAgent {
    config: OpenAiConfig,
    http: JsonEndpoint,
}

impl OpenAiAgent {
    /// Checks the config and builds the HTTP client once.
    ///
    /// Errors (`AgentError::Config`) when `model` is empty, `max_turns` or `max_attempts` is 0,
    /// `base_url` is not an http(s) URL, `api_key_header` is not a header name, or the HTTP
    /// client cannot be built (e.g. no CA certificates; set `SSL_CERT_FILE`).
    pub fn new(config: OpenAiConfig) -> Result<Self, AgentError> {
        let http = super::checked_client(
            "OpenAI",
            Api::Openai,
            &config.endpoint,
            (&config.model, config.max_turns),
            (config.request_timeout, config.max_attempts),
        )?;
        Ok(Self { config, http })
    }

    /// Runs one scenario prompt to completion.
    ///
    /// Each turn sends the whole conversation (a scripted user's next message, from
    /// [`ToolExecutor::next_user_message`], follows each reply without tool calls), executes the model's tool calls (several per
    /// response when the model emits parallel calls) one after another in the order given,
    /// and answers each with a `tool` message. Invalid calls are recorded with
    /// `record_invalid`, never executed, and answered with an error message. The run ends
    /// when the model answers without tool calls (its text is the final answer; one cut at the
    /// output limit is `truncated`) or after
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
        let prompted = self.config.tool_calling == ToolCalling::Prompted;
        let tool_definitions: Vec<Value> = if prompted {
            Vec::new()
        } else {
            tools.tools().iter().map(openai_tool).collect()
        };
        let tool_definitions = super::serialized_tools(&tool_definitions);
        let mut messages = Vec::new();
        let system_prompt = if prompted {
            Some(prompted::system_prompt(
                tools.tools(),
                self.config.system_prompt.as_deref(),
            ))
        } else {
            self.config.system_prompt.clone()
        };
        if let Some(system_prompt) = system_prompt {
            messages.push(json!({"role": "system", "content": system_prompt}));
        }
        messages.push(json!({"role": "user", "content": prompt}));

        let mut usage = Usage::default();
        let mut last_text = None;
        for turn in 1..=self.config.max_turns {
            let body = self.request_body(&messages, tool_definitions.as_deref());
            let reply = self.http.post(&body).await?;
            usage.add_request(reply.latency);
            // A streamed reply arrives as its event payloads; a provider that ignores
            // `stream` still answers with one body, read as is.
            let whole = match (&reply.body, reply.streamed) {
                (Value::Array(chunks), true) => stream::join_chunks(chunks)?,
                _ => reply.body,
            };
            let mut parsed = parse_response(&whole, self.config.max_tokens)?;
            // In prompted mode the calls are in the text (unless the server read them out).
            let from_text = prompted && parsed.calls.is_empty();
            if from_text {
                let reply = prompted::parse_reply(
                    parsed.content.as_deref().unwrap_or_default(),
                    parsed.cut_off,
                );
                if !reply.calls.is_empty() {
                    parsed.calls = reply.calls;
                    parsed.content = reply.text;
                }
            }
            if let Some(turn_usage) = &parsed.usage {
                usage.prompt_tokens += turn_usage.prompt_tokens;
                usage.completion_tokens += turn_usage.completion_tokens;
            }
            if parsed.calls.is_empty() {
                if let Some(next) = tools.next_user_message(parsed.content.as_deref()).await {
                    last_text = parsed.content.filter(|text| !text.trim().is_empty());
                    messages.push(json!({"role": "assistant",
                                         "content": last_text.clone().unwrap_or_default()}));
                    messages.push(json!({"role": "user", "content": next}));
                    continue;
                }
                return Ok(AgentOutcome {
                    final_answer: parsed.content,
                    turns: turn,
                    truncated: parsed.cut_off,
                    usage,
                    ..AgentOutcome::default()
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
            tools.begin_turn(turn);
            let mut responses = Vec::new();
            for call in &parsed.calls {
                let (_, content) = execute(call, tools).await;
                if from_text {
                    responses.push(content);
                } else if parsed.is_legacy_function_call {
                    messages
                        .push(json!({"role": "function", "name": call.name, "content": content}));
                } else {
                    messages.push(json!({"role": "tool",
                                         "tool_call_id": call.id.as_deref().unwrap_or(""),
                                         "content": content}));
                }
            }
            if from_text {
                messages.push(prompted::tool_responses(&responses));
            }
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
        body.messages("messages", messages);
        if let Some(tools) = tools {
            body.raw("tools", tools);
            // Sent even when it is the default: llama-cpp-python's function-calling chat
            // format ignores the tools of a request without `tool_choice`.
            let choice = self.config.tool_choice.unwrap_or(ToolChoice::Auto);
            body.insert("tool_choice", choice.as_str());
            if let Some(parallel) = self.config.parallel_tool_calls {
                body.insert("parallel_tool_calls", parallel);
            }
        }
        if let Some(temperature) = self.config.temperature {
            body.insert("temperature", temperature);
        }
        if let Some(max_tokens) = self.config.max_tokens {
            body.insert(
                output_limit_field(&self.config.endpoint.base_url),
                max_tokens,
            );
        }
        if let Some(seed) = self.config.seed {
            body.insert("seed", seed);
        }
        if self.config.stream {
            body.insert("stream", true);
            body.insert("stream_options", json!({"include_usage": true}));
        }
        body
    }
}

/// The request field of the output limit for the API at `base_url`: `max_completion_tokens` for
/// OpenAI's own API and Azure OpenAI, which deprecated `max_tokens` (September 2024) and whose
/// reasoning models answer HTTP 400 to it; `max_tokens` for every other server (vLLM, Ollama,
/// llama.cpp and most gateways read only that one).
pub(crate) fn output_limit_field(base_url: &str) -> &'static str {
    let host = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest)
        .split(['/', ':', '?'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if host == "api.openai.com" || host.ends_with(".openai.azure.com") {
        "max_completion_tokens"
    } else {
        "max_tokens"
    }
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
