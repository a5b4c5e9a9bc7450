//! The MCP harness: serves the catalog over MCP, intercepts every call into a trace, injects
//! faults, and backs the tools with a seeded [`World`](crate::world::World).
//!
//! rmcp lives here ([`server`], [`client`]); the rest of the crate sees plain data:
//! [`CallRecord`]s and the final state.

mod child;
pub mod client;
pub mod http;
mod interceptor;
mod line_transport;
pub mod server;
mod toolset;
mod wire_tap;

use serde::Serialize;
use serde_json::Value;

use crate::scenario::FaultKind;

pub use interceptor::Harness;
pub use toolset::{ToolSet, classify_violations};

/// The tool catalog and behaviour behind an MCP server.
pub trait Backend: Send + Sync + 'static {
    /// Tool definitions in catalog order, each a standard MCP tool JSON object
    /// (`name`, `title`?, `description`, `inputSchema`, `outputSchema`?, `annotations`?).
    fn tool_definitions(&self) -> &[Value];
    /// Handle one `tools/call` for a tool named in `tool_definitions`.
    /// `Ok(value)`: success, `value` is the structured result (any JSON value).
    /// `Err(message)`: a tool-level failure, sent as a result with `isError: true`.
    fn call(&self, tool: &str, arguments: serde_json::Map<String, Value>) -> Result<Value, String>;
    /// Told about a `tools/call` the server refused before any tool ran (a tool name not in
    /// `tool_definitions`), with the message sent back as the JSON-RPC error. The default
    /// forgets it; the run's harness records it in the trace, whichever client sent it.
    fn rejected(&self, _tool: &str, _arguments: serde_json::Map<String, Value>, _message: &str) {}
}

/// Why a tool call the model emitted could not be executed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InvalidCallKind {
    /// The arguments are valid JSON but not an object (a string, array, number, `null`).
    ArgumentsNotObject,
    /// The arguments text is not valid JSON.
    UnparseableArguments,
    /// The provider cut the call off at its output-token limit.
    Truncated,
    /// The tool-call entry has no function (name and arguments).
    MissingFunction,
}

/// How one tool call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallOutcome {
    /// The tool ran and returned a result.
    Success,
    /// The tool answered with `isError: true` (bad id, invalid arguments, injected fault).
    ToolError,
    /// The server answered with a JSON-RPC error (e.g. unknown tool).
    ProtocolError,
    /// The call never reached the server: its arguments were unusable.
    InvalidCall,
}

/// One intercepted tool call, in arrival order.
#[derive(Debug, Clone, Serialize)]
pub struct CallRecord {
    /// 0-based position in the run's trajectory.
    pub index: usize,
    /// The tool name as the agent sent it.
    pub tool: String,
    /// The arguments: an object, or for an invalid call the raw text as a string.
    pub arguments: Value,
    /// How the call ended.
    pub outcome: CallOutcome,
    /// The structured result, for a success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error text, for anything but a success.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The injected fault that produced the error, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<FaultKind>,
    /// For an invalid call, what was wrong with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid: Option<InvalidCallKind>,
    /// Time spent in the harness, in microseconds.
    pub duration_us: u64,
    /// The model turn (1-based) that emitted the call: calls emitted in one response share a
    /// turn. Agents without model turns (reference, command) give each call its own turn.
    pub turn: u32,
    /// Whether the harness refused the call before it reached the tool: unusable arguments
    /// ([`CallOutcome::InvalidCall`]), a protocol-level rejection such as an unknown tool
    /// ([`CallOutcome::ProtocolError`]), or arguments invalid against the input schema. An
    /// injected fault is not a refusal: the tool was reached and its upstream failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub refused: bool,
}

impl CallRecord {
    /// Whether the tool ran and succeeded.
    pub fn is_success(&self) -> bool {
        self.outcome == CallOutcome::Success
    }
}
