//! Agents under test. Each reaches the tools only through a [`ToolExecutor`], which the
//! runner implements over MCP and which records every call in the trace.

pub mod anthropic;
pub mod call;
pub mod command;
pub mod openai;
pub mod reference;
pub mod replay;

use std::future::Future;
use std::time::Duration;

use serde::Serialize;

use crate::provider::ProviderError;
pub use crate::trace::{CallNote, InvalidCallKind};

/// How an agent reaches the tools, and the user of a scripted conversation. The runner
/// implements it over MCP and records every call in the trace.
pub trait ToolExecutor: Send + Sync {
    /// MCP tool definitions in server order: JSON objects with `name`, `description`, `inputSchema`.
    fn tools(&self) -> &[serde_json::Value];
    /// Executes one tool call through MCP.
    fn call(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> impl Future<Output = ToolObservation> + Send;
    /// Records a tool call the model emitted that cannot be executed; it still counts as a call.
    fn record_invalid(&self, name: &str, raw_arguments: &str, kind: InvalidCallKind);
    /// Says that the calls that follow were emitted in model turn `turn` (1-based), so that
    /// parallel calls of one response share a turn in the trace. Agents without model turns
    /// never call it, and each of their calls is its own turn. The default ignores it.
    fn begin_turn(&self, turn: u32) {
        let _ = turn;
    }
    /// Says what the parser noticed about the call that follows (its `call` or
    /// `record_invalid`), so the trace keeps it. The default ignores it.
    fn note_next_call(&self, notes: &[CallNote]) {
        let _ = notes;
    }
    /// The agent replied `reply` (text without tool calls) to the user's last message: the
    /// user's next message, or `None` when the conversation is over and `reply` is the final
    /// answer. Only scenarios with `user_turns` say more; the default says nothing.
    fn next_user_message(&self, reply: Option<&str>) -> Option<String> {
        let _ = reply;
        None
    }
}

/// What the model is shown after a tool call.
#[derive(Debug, Clone)]
pub struct ToolObservation {
    /// Whether the call failed (tool error, protocol error, timeout).
    pub is_error: bool,
    /// The text the model sees: the result as compact JSON, or the error message.
    pub content: String,
}

/// What a run cost at the provider: tokens as the provider reported them, requests and model
/// latency. All zero for agents without a model.
#[derive(Debug, Clone, Default, Serialize, serde::Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Usage {
    /// Input tokens summed over turns.
    pub prompt_tokens: u64,
    /// Output tokens summed over turns.
    pub completion_tokens: u64,
    /// Successful model requests (one per turn); retried attempts are not counted.
    #[serde(default)]
    pub requests: u32,
    /// Wall time of those requests summed, in milliseconds: the model's share of the run.
    #[serde(default)]
    pub latency_ms: u64,
}

impl Usage {
    /// Counts one successful model request that took `latency`.
    pub fn add_request(&mut self, latency: Duration) {
        self.requests += 1;
        self.latency_ms = self
            .latency_ms
            .saturating_add(u64::try_from(latency.as_millis()).unwrap_or(u64::MAX));
    }
}

/// Whether and how the model must call tools; sent as each provider spells it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    serde::Deserialize,
    clap::ValueEnum,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides (OpenAI `auto`, Anthropic `{"type": "auto"}`).
    Auto,
    /// The model must call a tool (OpenAI `required`, Anthropic `{"type": "any"}`).
    Required,
    /// The model must not call tools (OpenAI `none`, Anthropic `{"type": "none"}`).
    None,
}

impl ToolChoice {
    /// The OpenAI spelling, also used in files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolChoice::Auto => "auto",
            ToolChoice::Required => "required",
            ToolChoice::None => "none",
        }
    }
}

/// How the model is offered the tools and how its calls are read.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Serialize,
    serde::Deserialize,
    clap::ValueEnum,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ToolCalling {
    /// The provider's function calling: `tools` in the request, `tool_calls` in the reply.
    #[default]
    Native,
    /// The tools written into the system prompt (Hermes `<tools>` format) and the calls read
    /// from the reply's text (`<tool_call>` blocks, fenced or bare call JSON), for servers
    /// whose chat format loses native calls; see `agent::openai::prompted`.
    Prompted,
}

impl ToolCalling {
    /// The name used on the command line, in files and in results.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolCalling::Native => "native",
            ToolCalling::Prompted => "prompted",
        }
    }
}

/// How an agent's run ended.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AgentOutcome {
    /// The agent's final text answer, if it gave one.
    pub final_answer: Option<String>,
    /// Model turns taken (1 for the reference agent).
    pub turns: u32,
    /// Whether the run stopped at the turn limit.
    pub hit_turn_limit: bool,
    /// Whether the model's last reply stopped at the output limit (`max_tokens`) with no tool
    /// call: its text is cut off, and the run fails with a `truncated` check.
    pub truncated: bool,
    /// Whether the run ran out of time while the model was generating, after the provider had
    /// answered in this run: the run is judged on the calls it made and fails with a
    /// `timed_out` check (a provider that never answered leaves the run `errored`).
    pub timed_out: bool,
    /// Tokens used.
    pub usage: Usage,
    /// The scripted conversation (`user_turns`), exchange by exchange; set by the runner,
    /// `None` for a single request.
    pub conversation: Option<crate::trace::Conversation>,
}

/// An agent failure that is not the model's fault (provider outage, bad config): the run is `errored`, never a pass or a model failure.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The provider failed (HTTP error after all retries, transport, unreadable answer).
    #[error(transparent)]
    Provider(#[from] ProviderError),
    /// The agent is misconfigured.
    #[error("{0}")]
    Config(String),
    /// An external agent program failed (could not start, non-zero exit, killed).
    #[error("agent command {0}")]
    Command(String),
    /// A recorded trajectory is missing or unusable.
    #[error("{0}")]
    Replay(String),
}

/// The agent kinds toolgate can test.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Serialize,
    serde::Deserialize,
    clap::ValueEnum,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum AgentKind {
    /// Plays each scenario's known-good solution; needs no model.
    Reference,
    /// Any OpenAI-compatible chat-completions endpoint (OpenAI, Azure, vLLM, Ollama, llama.cpp).
    Openai,
    /// The Anthropic Messages API.
    Anthropic,
    /// Your own agent program, talking MCP over streamable HTTP to a loopback server.
    Command,
    /// Recorded trajectories (JSON Lines), replayed through the harness without a model.
    Replay,
}

impl AgentKind {
    /// The name used on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentKind::Reference => "reference",
            AgentKind::Openai => "openai",
            AgentKind::Anthropic => "anthropic",
            AgentKind::Command => "command",
            AgentKind::Replay => "replay",
        }
    }

    /// The model API a model-backed agent speaks; `None` for the agents that need no model
    /// (reference, command, replay). The one list of which agents are model-backed.
    pub fn api(self) -> Option<crate::provider::Api> {
        match self {
            AgentKind::Openai => Some(crate::provider::Api::Openai),
            AgentKind::Anthropic => Some(crate::provider::Api::Anthropic),
            AgentKind::Reference | AgentKind::Command | AgentKind::Replay => None,
        }
    }
}

/// A configured agent, ready to run scenarios.
pub enum Agent {
    /// See [`reference`](mod@reference).
    Reference,
    /// See [`openai`].
    OpenAi(Box<openai::OpenAiAgent>),
    /// See [`anthropic`].
    Anthropic(Box<anthropic::AnthropicAgent>),
    /// See [`command`].
    Command(command::CommandAgent),
    /// See [`replay`].
    Replay(replay::Recordings),
}

/// A provider request body (a JSON object) serialized from borrowed parts: the conversation so
/// far and the tool definitions (serialized once per run) go out as they are, without the
/// copy a `serde_json::Value` body would need on every turn. Keys are written in the order
/// they were pushed.
#[derive(Default)]
pub(crate) struct RequestBody<'a> {
    fields: Vec<(&'static str, BodyField<'a>)>,
}

/// One value of a [`RequestBody`].
enum BodyField<'a> {
    Owned(serde_json::Value),
    Messages(&'a [serde_json::Value]),
    Raw(&'a serde_json::value::RawValue),
}

impl<'a> RequestBody<'a> {
    /// Adds `key` with an owned value.
    pub(crate) fn insert(&mut self, key: &'static str, value: impl Into<serde_json::Value>) {
        self.fields.push((key, BodyField::Owned(value.into())));
    }

    /// Adds `key` with the conversation's messages, borrowed.
    pub(crate) fn messages(&mut self, key: &'static str, messages: &'a [serde_json::Value]) {
        self.fields.push((key, BodyField::Messages(messages)));
    }

    /// Adds `key` with JSON serialized beforehand (the tool definitions).
    pub(crate) fn raw(&mut self, key: &'static str, json: &'a serde_json::value::RawValue) {
        self.fields.push((key, BodyField::Raw(json)));
    }
}

impl Serialize for RequestBody<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut map = serializer.serialize_map(Some(self.fields.len()))?;
        for (key, field) in &self.fields {
            match field {
                BodyField::Owned(value) => map.serialize_entry(key, value)?,
                BodyField::Messages(messages) => map.serialize_entry(key, messages)?,
                BodyField::Raw(json) => map.serialize_entry(key, json)?,
            }
        }
        map.end()
    }
}

/// The HTTP client of a model agent, once its config is checked: `model` is not blank,
/// `max_turns` is at least 1 and `endpoint` speaks `api`; `label` (`OpenAI`, `Anthropic`)
/// names the agent in the errors.
///
/// Errors (`AgentError::Config`): one of those, or what [`Endpoint::client`] refuses.
pub(crate) fn checked_client(
    label: &str,
    api: crate::provider::Api,
    endpoint: &crate::provider::Endpoint,
    (model, max_turns): (&str, u32),
    (request_timeout, max_attempts): (std::time::Duration, u32),
) -> Result<crate::provider::http::JsonEndpoint, AgentError> {
    if model.trim().is_empty() {
        return Err(AgentError::Config(format!(
            "the {label} model name is empty"
        )));
    }
    if max_turns == 0 {
        return Err(AgentError::Config(
            "`max_turns` must be at least 1".to_owned(),
        ));
    }
    if endpoint.api != api {
        let wanted = match api {
            crate::provider::Api::Openai => "an OpenAI-compatible endpoint",
            crate::provider::Api::Anthropic => "an Anthropic Messages endpoint",
        };
        return Err(AgentError::Config(format!(
            "the {label} agent needs {wanted}"
        )));
    }
    Ok(endpoint.client(label, request_timeout, max_attempts)?)
}

/// `tools` serialized once, for every request of a run; `None` when there are none (the
/// request then carries no `tools` key).
pub(crate) fn serialized_tools(
    tools: &[serde_json::Value],
) -> Option<Box<serde_json::value::RawValue>> {
    if tools.is_empty() {
        return None;
    }
    serde_json::value::to_raw_value(tools).ok()
}

#[cfg(test)]
mod tests {
    //! Request bodies: fields are written in order, pre-serialized tools spliced in as they are.

    use super::*;
    use serde_json::json;

    #[test]
    fn request_body_writes_its_fields_in_order_with_borrowed_parts_spliced_in() {
        let messages = vec![json!({"role": "user", "content": "hi"})];
        let tools = serialized_tools(&[json!({"type": "function", "function": {"name": "a"}})])
            .expect("tools serialize");
        let mut body = RequestBody::default();
        body.insert("model", "m");
        body.messages("messages", &messages);
        body.raw("tools", &tools);
        body.insert("seed", 7_u64);
        assert_eq!(
            serde_json::to_string(&body).expect("serializes"),
            r#"{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"a"}}],"seed":7}"#
        );
        assert!(serialized_tools(&[]).is_none());
    }
}
