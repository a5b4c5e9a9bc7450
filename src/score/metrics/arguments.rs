//! Argument correctness, after the deterministic function-calling metrics of BFCL's AST
//! checker: function name match, parameter validation against the tool's input schema, call
//! accuracy (name, schema and expected values right) and exact match, with every failure
//! classed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::RunView;
use crate::harness::{CallOutcome, InvalidCallKind};
use crate::score::matching;

/// The class of an argument failure (BFCL's error types, plus the ways a call can be
/// unusable before any schema applies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgumentErrorClass {
    /// The tool does not exist.
    UnknownTool,
    /// A required parameter is absent.
    MissingRequired,
    /// A parameter the schema does not define.
    UnexpectedParam,
    /// A value of the wrong JSON type.
    TypeError,
    /// A value outside the schema's `enum` or `const`.
    EnumError,
    /// A value that violates another schema rule (format, range, pattern) or differs from
    /// the value the scenario expects.
    ValueMismatch,
    /// The arguments were not a JSON object or did not parse.
    Malformed,
    /// The call was cut off by the output-token limit (field case B14).
    Truncated,
}

/// The snake_case name of a class, as in files and reports.
pub fn class_name(class: ArgumentErrorClass) -> &'static str {
    match class {
        ArgumentErrorClass::UnknownTool => "unknown_tool",
        ArgumentErrorClass::MissingRequired => "missing_required",
        ArgumentErrorClass::UnexpectedParam => "unexpected_param",
        ArgumentErrorClass::TypeError => "type_error",
        ArgumentErrorClass::EnumError => "enum_error",
        ArgumentErrorClass::ValueMismatch => "value_mismatch",
        ArgumentErrorClass::Malformed => "malformed",
        ArgumentErrorClass::Truncated => "truncated",
    }
}

/// One classified argument failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArgumentError {
    /// Position of the call in the trace (0-based).
    pub call: usize,
    /// The tool called.
    pub tool: String,
    /// What kind of failure.
    pub class: ArgumentErrorClass,
    /// JSON Pointer into the arguments (`""` for the whole object).
    pub pointer: String,
    /// What is wrong, in one line.
    pub message: String,
}

/// Schema checks for a run's tools.
pub trait SchemaLookup {
    /// Classified violations of `arguments` against `tool`'s input schema (draft 2020-12),
    /// including parameter names the schema does not define; `None` when the tool is unknown.
    fn violations(
        &self,
        tool: &str,
        arguments: &Value,
    ) -> Option<Vec<(ArgumentErrorClass, String, String)>>;

    /// Whether the run's server offers `tool` at all.
    fn offers(&self, tool: &str) -> bool;
}

/// Argument metrics of one run; rates are over `calls`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ArgumentMetrics {
    /// Calls made.
    pub calls: usize,
    /// Calls naming a tool that exists.
    pub name_match: usize,
    /// Calls whose arguments are valid against the tool's schema.
    pub schema_valid: usize,
    /// Calls paired with an expected call whose argument checks all hold, with valid schema.
    pub accurate: usize,
    /// Accurate calls that send no argument beyond those the scenario names.
    pub exact: usize,
    /// Every failure, in call order.
    pub errors: Vec<ArgumentError>,
}

pub(super) fn measure(view: &RunView<'_>) -> ArgumentMetrics {
    let mut metrics = ArgumentMetrics {
        calls: view.trace.len(),
        ..Default::default()
    };
    for call in view.trace {
        let mut push = |class, pointer: String, message: String| {
            metrics.errors.push(ArgumentError {
                call: call.index,
                tool: call.tool.clone(),
                class,
                pointer,
                message,
            });
        };
        if let Some(kind) = call.invalid {
            let class = if kind == InvalidCallKind::Truncated {
                ArgumentErrorClass::Truncated
            } else {
                ArgumentErrorClass::Malformed
            };
            let name_known = view
                .schemas
                .violations(&call.tool, &Value::Object(Default::default()))
                .is_some();
            metrics.name_match += usize::from(name_known);
            push(class, String::new(), format!("{kind:?}"));
            continue;
        }
        let Some(violations) = view.schemas.violations(&call.tool, &call.arguments) else {
            push(
                ArgumentErrorClass::UnknownTool,
                String::new(),
                format!("unknown tool `{}`", call.tool),
            );
            continue;
        };
        metrics.name_match += 1;
        let schema_ok = violations.is_empty();
        metrics.schema_valid += usize::from(schema_ok);
        for (class, pointer, message) in violations {
            push(class, pointer, message);
        }
        let Some(expected_index) = view
            .pairing
            .iter()
            .position(|slot| *slot == Some(call.index))
        else {
            continue;
        };
        let expected = &view.scenario.expected_calls[expected_index];
        let record = if expected.args_from_prior.is_empty() {
            serde_json::Value::Null
        } else {
            matching::record(&view.pairing[..expected_index], view.trace)
        };
        let pair = matching::check_pair(expected, call, &record, view.options);
        for problem in pair.args_match.iter().chain(&pair.args_from_prior) {
            push(
                ArgumentErrorClass::ValueMismatch,
                String::new(),
                problem.clone(),
            );
        }
        if pair.is_full() && schema_ok && call.outcome != CallOutcome::ProtocolError {
            metrics.accurate += 1;
            let named = |key: &String| {
                expected.args_match.contains_key(key)
                    || expected.reference_args.contains_key(key)
                    || expected.args_from_prior.iter().any(|p| &p.argument == key)
            };
            let extra = call
                .arguments
                .as_object()
                .is_some_and(|args| args.keys().any(|key| !named(key)));
            metrics.exact += usize::from(!extra);
        }
    }
    metrics
}
