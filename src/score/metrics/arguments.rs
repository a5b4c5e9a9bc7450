//! Argument correctness, after the deterministic function-calling metrics of BFCL's AST
//! checker: function name match, parameter validation against the tool's input schema, call
//! accuracy (name, schema and expected values right) and exact match, with every failure
//! classed.

use serde::{Deserialize, Serialize};

use super::RunView;
use crate::score::matching;
use crate::trace::{ArgumentErrorClass, CallOutcome, InvalidCallKind};

/// One classified argument failure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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

/// Argument metrics of one run; rates are over `calls`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
            metrics.name_match += usize::from(!call.unknown_tool);
            push(class, String::new(), kind.as_str().to_owned());
            continue;
        }
        if call.unknown_tool {
            push(
                ArgumentErrorClass::UnknownTool,
                String::new(),
                format!("unknown tool `{}`", call.tool),
            );
            continue;
        }
        metrics.name_match += 1;
        let schema_ok = call.violations.is_empty();
        metrics.schema_valid += usize::from(schema_ok);
        for violation in &call.violations {
            push(
                violation.class,
                violation.pointer.clone(),
                violation.message.clone(),
            );
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
            crate::trace::run_record(&view.pairing[..expected_index], view.trace)
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
