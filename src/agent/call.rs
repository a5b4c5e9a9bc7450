//! Tool calls as the model-backed agents parse them from a provider's answer (OpenAI chat
//! completions and Anthropic Messages alike), and how each is executed or recorded as invalid.

use serde_json::{Map, Value};

pub use crate::trace::CallNote;

use super::{InvalidCallKind, ToolExecutor, ToolObservation};

/// One tool call the model emitted.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedCall {
    /// The call id that the tool result must carry as `tool_call_id`; `None` for a legacy
    /// `function_call` or when the provider sent no id.
    pub id: Option<String>,
    /// The tool name; empty when the provider sent none (a `missing_function` call).
    pub name: String,
    /// The decoded arguments, or why the call cannot be executed.
    pub arguments: CallArguments,
    /// Repairs and oddities seen while parsing, for the trace; empty for a clean call.
    pub notes: Vec<CallNote>,
}

/// The arguments of a tool call after parsing.
#[derive(Debug, Clone, PartialEq)]
pub enum CallArguments {
    /// A JSON object: the call can be executed with it.
    Valid(Map<String, Value>),
    /// The call must not be executed; `raw` is the arguments text as sent, kept for the report.
    Invalid { kind: InvalidCallKind, raw: String },
}

/// Executes one parsed call, or records it as invalid; returns whether it failed and what the
/// model is shown.
pub async fn execute<E: ToolExecutor>(call: &ParsedCall, tools: &E) -> (bool, String) {
    if !call.notes.is_empty() {
        tools.note_next_call(&call.notes);
    }
    match &call.arguments {
        CallArguments::Valid(arguments) => {
            let ToolObservation { is_error, content } =
                tools.call(&call.name, arguments.clone()).await;
            (is_error, content)
        }
        CallArguments::Invalid { kind, raw } => {
            tools.record_invalid(&call.name, raw, *kind);
            (true, invalid_call_message(&call.name, *kind, &call.notes))
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
