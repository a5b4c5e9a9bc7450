//! The tool definitions a harness serves, with their compiled argument validators.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use anyhow::{Context as _, Result};
use serde_json::{Map, Value};

use crate::catalog::Catalog;
use crate::trace::{ArgumentErrorClass, CallRecord, Violation};

/// Tool definitions plus one JSON Schema (draft 2020-12, formats checked) validator per tool.
/// Built once per process and shared by every run.
pub struct ToolSet {
    definitions: Vec<Value>,
    validators: HashMap<String, jsonschema::Validator>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSet")
            .field("tools", &self.definitions.len())
            .finish()
    }
}

impl ToolSet {
    /// Compiles the validators for `catalog`.
    ///
    /// Errors: a tool whose `inputSchema` is not a valid draft 2020-12 schema.
    pub fn new(catalog: &Catalog) -> Result<ToolSet> {
        ToolSet::from_definitions(catalog.definitions().to_vec())
    }

    /// Compiles the validators for MCP tool definitions (`name`, `inputSchema`, ...), kept in
    /// the order given.
    ///
    /// Errors: a definition without a string `name`, or whose `inputSchema` is not a valid
    /// draft 2020-12 schema.
    pub fn from_definitions(definitions: Vec<Value>) -> Result<ToolSet> {
        let mut validators = HashMap::new();
        for (index, definition) in definitions.iter().enumerate() {
            let Some(name) = definition["name"].as_str() else {
                anyhow::bail!("tool definition #{} has no string `name`", index + 1);
            };
            let validator = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .should_validate_formats(true)
                .build(&definition["inputSchema"])
                .map_err(|error| anyhow::anyhow!("{error}"))
                .with_context(|| format!("invalid inputSchema for tool `{name}`"))?;
            validators.insert(name.to_owned(), validator);
        }
        Ok(ToolSet {
            definitions,
            validators,
        })
    }

    /// The built-in catalog's tool set, compiled once per process.
    pub fn builtin() -> Arc<ToolSet> {
        static BUILTIN: OnceLock<Arc<ToolSet>> = OnceLock::new();
        Arc::clone(BUILTIN.get_or_init(|| {
            Arc::new(ToolSet::new(Catalog::builtin()).expect("the built-in schemas compile"))
        }))
    }

    /// The MCP definitions in catalog order.
    pub fn definitions(&self) -> &[Value] {
        &self.definitions
    }

    /// Whether the catalog has a tool named `tool`.
    pub fn offers(&self, tool: &str) -> bool {
        self.validators.contains_key(tool)
    }

    /// Checks `arguments` against `tool`'s input schema, in one pass over the validator's
    /// errors: the classified violations for the trace, and the refusal message the agent
    /// gets when the schema rejects the arguments (every violation as "`/path`: message").
    /// `None` when the catalog has no such tool.
    pub fn check(&self, tool: &str, arguments: &Map<String, Value>) -> Option<SchemaCheck> {
        let validator = self.validators.get(tool)?;
        let schema = self
            .definitions
            .iter()
            .find(|d| d["name"] == tool)
            .map_or(&Value::Null, |d| &d["inputSchema"]);
        let instance = Value::Object(arguments.clone());
        Some(check_arguments(validator, schema, tool, &instance))
    }

    /// Fills `record.unknown_tool` and `record.violations` from this catalog, as the harness
    /// does when the call arrives. Invalid calls (unusable arguments) get no violations.
    pub fn annotate(&self, record: &mut CallRecord) {
        record.unknown_tool = !self.offers(&record.tool);
        record.violations = match (&record.arguments, record.invalid) {
            (Value::Object(arguments), None) => self
                .check(&record.tool, arguments)
                .map(|check| check.violations)
                .unwrap_or_default(),
            _ => Vec::new(),
        };
    }
}

/// The result of checking one call's arguments against its tool's input schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaCheck {
    /// Every violation, classed after BFCL (see [`check_arguments`]).
    pub violations: Vec<Violation>,
    /// The message sent back when the schema rejects the arguments; `None` when it accepts
    /// them (parameters it does not define but allows are violations, not a refusal).
    pub refusal: Option<String>,
}

/// Checks `arguments` against `schema` (compiled as `validator`) for `tool`.
///
/// Violations are `(class, JSON Pointer, message)` after BFCL; parameter names the schema does
/// not define are `unexpected_param` even where the schema allows additional properties.
pub fn check_arguments(
    validator: &jsonschema::Validator,
    schema: &Value,
    tool: &str,
    arguments: &Value,
) -> SchemaCheck {
    use jsonschema::error::ValidationErrorKind as Kind;
    let mut violations = Vec::new();
    let mut refusals = Vec::new();
    let unexpected = |name: &str, pointer: String| Violation {
        class: ArgumentErrorClass::UnexpectedParam,
        pointer,
        message: format!("`{name}` is not a parameter of `{tool}`"),
    };
    for error in validator.iter_errors(arguments) {
        let pointer = error.instance_path().to_string();
        let shown = if pointer.is_empty() { "/" } else { &pointer };
        refusals.push(match error.kind() {
            // The library shortens long option lists; an agent needs all of them.
            Kind::Enum { options } => {
                format!("`{shown}`: {} is not one of {options}", error.instance())
            }
            _ => format!("`{shown}`: {error}"),
        });
        let violation = |class| Violation {
            class,
            pointer: pointer.clone(),
            message: error.to_string(),
        };
        match error.kind() {
            Kind::Required { property } => {
                let name = property
                    .as_str()
                    .map_or_else(|| property.to_string(), str::to_string);
                violations.push(Violation {
                    class: ArgumentErrorClass::MissingRequired,
                    pointer: format!("{pointer}/{name}"),
                    message: format!("`{name}` is required"),
                });
            }
            Kind::AdditionalProperties { unexpected: names }
            | Kind::UnevaluatedProperties { unexpected: names } => {
                for name in names {
                    violations.push(unexpected(name, format!("{pointer}/{name}")));
                }
            }
            Kind::Type { .. } => violations.push(violation(ArgumentErrorClass::TypeError)),
            Kind::Enum { .. } | Kind::Constant { .. } => {
                violations.push(violation(ArgumentErrorClass::EnumError))
            }
            _ => violations.push(violation(ArgumentErrorClass::ValueMismatch)),
        }
    }
    if let (Some(properties), Some(arguments)) =
        (schema["properties"].as_object(), arguments.as_object())
    {
        for name in arguments
            .keys()
            .filter(|name| !properties.contains_key(*name))
        {
            let pointer = format!("/{name}");
            if !violations.iter().any(|v| v.pointer == pointer) {
                violations.push(unexpected(name, pointer));
            }
        }
    }
    let refusal = (!refusals.is_empty())
        .then(|| format!("invalid arguments for `{tool}`: {}", refusals.join("; ")));
    SchemaCheck {
        violations,
        refusal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn validation_names_the_argument_and_the_rule() {
        let tools = ToolSet::new(Catalog::builtin()).expect("builtin schemas compile");
        let args = json!({"contact_id": "C-001", "type": "phone"});
        let refusal = |tool: &str, args: &Value| {
            tools
                .check(tool, args.as_object().expect("object"))
                .expect("a built-in tool")
                .refusal
        };
        let error = refusal("crm_log_activity", &args).expect("bad enum");
        assert_eq!(
            error,
            r#"invalid arguments for `crm_log_activity`: `/type`: "phone" is not one of ["call","email","meeting","note"]"#
        );
        let args = json!({"name": "Jo", "email": "not-an-email"});
        let error = refusal("crm_create_contact", &args).expect("bad email");
        assert!(error.contains("`/email`"), "{error}");
        let args = json!({"contact_id": "C-001", "type": "call"});
        assert_eq!(refusal("crm_log_activity", &args), None);
    }
}
