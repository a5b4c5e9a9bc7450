//! The tool definitions a harness serves, with their compiled argument validators.

use std::collections::HashMap;

use anyhow::{Context as _, Result};
use serde_json::{Map, Value};

use crate::catalog::Catalog;
use crate::score::metrics::{ArgumentErrorClass, SchemaLookup};

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
        let mut validators = HashMap::new();
        for tool in catalog.tools() {
            let validator = jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .should_validate_formats(true)
                .build(tool.input_schema())
                .map_err(|error| anyhow::anyhow!("{error}"))
                .with_context(|| format!("invalid inputSchema for tool `{}`", tool.name))?;
            validators.insert(tool.name.clone(), validator);
        }
        Ok(ToolSet {
            definitions: catalog.definitions().to_vec(),
            validators,
        })
    }

    /// The MCP definitions in catalog order.
    pub fn definitions(&self) -> &[Value] {
        &self.definitions
    }

    /// Checks `arguments` against the tool's schema. `Err` lists every violation as
    /// "`/path`: message", in a form an agent can act on.
    pub fn validate(&self, tool: &str, arguments: &Map<String, Value>) -> Result<(), String> {
        let Some(validator) = self.validators.get(tool) else {
            return Ok(());
        };
        let instance = Value::Object(arguments.clone());
        let problems: Vec<String> = validator
            .iter_errors(&instance)
            .map(|error| {
                let path = error.instance_path().to_string();
                let path = if path.is_empty() {
                    "/".to_string()
                } else {
                    path
                };
                match error.kind() {
                    // The library shortens long option lists; an agent needs all of them.
                    jsonschema::error::ValidationErrorKind::Enum { options } => {
                        format!("`{path}`: {} is not one of {options}", error.instance())
                    }
                    _ => format!("`{path}`: {error}"),
                }
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "invalid arguments for `{tool}`: {}",
                problems.join("; ")
            ))
        }
    }
}

impl SchemaLookup for ToolSet {
    fn violations(
        &self,
        tool: &str,
        arguments: &Value,
    ) -> Option<Vec<(ArgumentErrorClass, String, String)>> {
        let validator = self.validators.get(tool)?;
        let schema = self
            .definitions
            .iter()
            .find(|d| d["name"] == tool)
            .map_or(&Value::Null, |d| &d["inputSchema"]);
        Some(classify_violations(validator, schema, tool, arguments))
    }

    fn offers(&self, tool: &str) -> bool {
        self.validators.contains_key(tool)
    }
}

/// Every violation of `arguments` against `schema` (compiled as `validator`), classed after
/// BFCL: `(class, JSON Pointer, message)`. Parameter names the schema does not define are
/// `unexpected_param` even where the schema allows additional properties.
pub fn classify_violations(
    validator: &jsonschema::Validator,
    schema: &Value,
    tool: &str,
    arguments: &Value,
) -> Vec<(ArgumentErrorClass, String, String)> {
    use jsonschema::error::ValidationErrorKind as Kind;
    let mut found = Vec::new();
    let unexpected = |name: &str, pointer: String| {
        (
            ArgumentErrorClass::UnexpectedParam,
            pointer,
            format!("`{name}` is not a parameter of `{tool}`"),
        )
    };
    for error in validator.iter_errors(arguments) {
        let pointer = error.instance_path().to_string();
        match error.kind() {
            Kind::Required { property } => {
                let name = property
                    .as_str()
                    .map_or_else(|| property.to_string(), str::to_string);
                found.push((
                    ArgumentErrorClass::MissingRequired,
                    format!("{pointer}/{name}"),
                    format!("`{name}` is required"),
                ));
            }
            Kind::AdditionalProperties { unexpected: names }
            | Kind::UnevaluatedProperties { unexpected: names } => {
                for name in names {
                    found.push(unexpected(name, format!("{pointer}/{name}")));
                }
            }
            Kind::Type { .. } => {
                found.push((ArgumentErrorClass::TypeError, pointer, error.to_string()))
            }
            Kind::Enum { .. } | Kind::Constant { .. } => {
                found.push((ArgumentErrorClass::EnumError, pointer, error.to_string()))
            }
            _ => found.push((
                ArgumentErrorClass::ValueMismatch,
                pointer,
                error.to_string(),
            )),
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
            if !found.iter().any(|(_, p, _)| *p == pointer) {
                found.push(unexpected(name, pointer));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn validation_names_the_argument_and_the_rule() {
        let tools = ToolSet::new(Catalog::builtin()).expect("builtin schemas compile");
        let args = json!({"contact_id": "C-001", "type": "phone"});
        let error = tools
            .validate("crm_log_activity", args.as_object().expect("object"))
            .expect_err("bad enum");
        assert_eq!(
            error,
            r#"invalid arguments for `crm_log_activity`: `/type`: "phone" is not one of ["call","email","meeting","note"]"#
        );
        let args = json!({"name": "Jo", "email": "not-an-email"});
        let error = tools
            .validate("crm_create_contact", args.as_object().expect("object"))
            .expect_err("bad email");
        assert!(error.contains("`/email`"), "{error}");
        let args = json!({"contact_id": "C-001", "type": "call"});
        assert_eq!(
            tools.validate("crm_log_activity", args.as_object().expect("object")),
            Ok(())
        );
    }
}
