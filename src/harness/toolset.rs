//! The tool definitions a harness serves, with their compiled argument validators.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use anyhow::{Context as _, Result};
use serde_json::{Map, Value};

use crate::catalog::Catalog;
use crate::json::{DoubleEncoded, NumberMode};
use crate::trace::{ArgumentErrorClass, CallRecord, OutputViolation, Violation};

/// Tool definitions plus one JSON Schema (draft 2020-12, formats checked) validator per tool.
/// Built once per process and shared by every run.
pub struct ToolSet {
    definitions: Vec<Value>,
    validators: HashMap<String, jsonschema::Validator>,
    /// Validators of the tools whose `outputSchema` compiles (one that does not is the lint's
    /// to report, and its results go unchecked).
    output_validators: HashMap<String, jsonschema::Validator>,
    numbers: NumberMode,
    double_encoded: DoubleEncoded,
    /// The definitions parsed as rmcp tools, once for every server that serves this set
    /// (see [`ToolSet::mcp_tools`]).
    mcp_tools: OnceLock<std::result::Result<Arc<[rmcp::model::Tool]>, String>>,
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
        let mut output_validators = HashMap::new();
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
            if let Some(schema) = definition.get("outputSchema")
                && let Ok(validator) = jsonschema::options()
                    .with_draft(jsonschema::Draft::Draft202012)
                    .build(schema)
            {
                output_validators.insert(name.to_owned(), validator);
            }
        }
        Ok(ToolSet {
            definitions,
            validators,
            output_validators,
            numbers: NumberMode::default(),
            double_encoded: DoubleEncoded::default(),
            mcp_tools: OnceLock::new(),
        })
    }

    /// This tool set reading arguments in the given modes (both default to JSON Schema
    /// semantics and strict decoding): `numbers` decides whether `3.0` is an integer
    /// ([`ToolSet::check`]), `double_encoded` whether a JSON string is decoded where an object
    /// or array is wanted ([`ToolSet::decode_double_encoded`]).
    pub fn with_modes(mut self, numbers: NumberMode, double_encoded: DoubleEncoded) -> ToolSet {
        self.numbers = numbers;
        self.double_encoded = double_encoded;
        self
    }

    /// In `DoubleEncoded::Lenient` mode, decodes once every argument of `tool`, at any depth
    /// through `properties`, whose schema takes an `object` or `array` (as its `type`, in a
    /// `type` list such as `["object", "null"]`, or in an `anyOf`/`oneOf` branch) but not a
    /// string, and whose value is a string holding JSON of that type; whether any was decoded.
    /// Nothing changes in strict mode, for other types, or for a string that does not parse
    /// to a wanted type.
    pub fn decode_double_encoded(&self, tool: &str, arguments: &mut Map<String, Value>) -> bool {
        if self.double_encoded == DoubleEncoded::Strict {
            return false;
        }
        let Some(schema) = self.definition(tool).map(|d| &d["inputSchema"]) else {
            return false;
        };
        decode_properties(schema, arguments)
    }

    /// Where a successful result breaks `tool`'s `outputSchema`: the result as the server
    /// sends it in `structuredContent` (an object as is, anything else as `{"result": ...}`),
    /// one violation per path, in the validator's order; empty without an `outputSchema`.
    pub fn check_output(&self, tool: &str, result: &Value) -> Vec<OutputViolation> {
        let Some(validator) = self.output_validators.get(tool) else {
            return Vec::new();
        };
        let structured = super::server::structured_content(result.clone());
        validator
            .iter_errors(&structured)
            .map(|error| OutputViolation {
                pointer: error.instance_path().to_string(),
                message: error.to_string(),
            })
            .collect()
    }

    fn definition(&self, tool: &str) -> Option<&Value> {
        self.definitions.iter().find(|d| d["name"] == tool)
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

    /// The definitions as MCP tools (rmcp's type), in catalog order: parsed on the first call
    /// and shared by every later one, so a server per run does not parse the catalog again.
    ///
    /// Errors: a definition is not a valid MCP tool object, lacks a string `name` (named by
    /// its position), or repeats the name of an earlier tool.
    pub(crate) fn mcp_tools(&self) -> Result<Arc<[rmcp::model::Tool]>> {
        self.mcp_tools
            .get_or_init(|| {
                parse_mcp_tools(&self.definitions).map_err(|error| format!("{error:#}"))
            })
            .clone()
            .map_err(anyhow::Error::msg)
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
        let mut check = check_arguments(validator, schema, tool, &instance);
        if has_null_string(schema, arguments) {
            check.notes.push(crate::trace::CallNote::NullString);
        }
        if self.numbers == NumberMode::Bfcl {
            let mut found = Vec::new();
            float_integers(schema, &instance, "", &mut found);
            if !found.is_empty() {
                let listed: Vec<String> = found
                    .iter()
                    .map(|v| format!("`{}`: {}", v.pointer, v.message))
                    .collect();
                check.refusal = Some(match check.refusal.take() {
                    Some(refusal) => format!("{refusal}; {}", listed.join("; ")),
                    None => format!("invalid arguments for `{tool}`: {}", listed.join("; ")),
                });
                check.violations.extend(found);
            }
        }
        Some(check)
    }

    /// Fills `record.unknown_tool` and `record.violations` from this catalog, as the harness
    /// does when the call arrives, and marks the record `checked`. Invalid calls (unusable
    /// arguments) get no violations.
    pub fn annotate(&self, record: &mut CallRecord) {
        record.checked = true;
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

/// Whether the string `"null"` was sent for a nullable top-level parameter (`anyOf [T, null]`
/// or `"type": [T, "null"]`): the model meant no value but wrote a string. The schema may
/// accept it when `T` is `string`, and the tool may read it as absent, so it is a note for the
/// report, not a failed run.
fn has_null_string(schema: &Value, arguments: &Map<String, Value>) -> bool {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return false;
    };
    arguments.iter().any(|(name, value)| {
        value.as_str() == Some("null") && properties.get(name).and_then(nullable_type).is_some()
    })
}

/// `T` when `schema` is a nullable `T`: `anyOf`/`oneOf` of exactly `T` and `{"type":
/// "null"}`, or `"type": [T, "null"]`; `T` is the other branch's type (`schema` when it has
/// none). The harness flags the string `"null"` sent for such a parameter; the lint's
/// `nullable_parameter` shows it as `T | null`.
pub fn nullable_type(schema: &Value) -> Option<String> {
    let is_null = |branch: &Value| branch.get("type").and_then(Value::as_str) == Some("null");
    let branches = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array);
    if let Some([a, b]) = branches.map(Vec::as_slice) {
        let other = match (is_null(a), is_null(b)) {
            (true, false) => b,
            (false, true) => a,
            _ => return None,
        };
        return Some(match other.get("type") {
            Some(Value::String(kind)) => kind.clone(),
            Some(other) => other.to_string(),
            None => "schema".to_owned(),
        });
    }
    match schema
        .get("type")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
    {
        Some([Value::String(a), Value::String(b)]) if b == "null" && a != "null" => Some(a.clone()),
        Some([Value::String(a), Value::String(b)]) if a == "null" && b != "null" => Some(b.clone()),
        _ => None,
    }
}

/// Decodes double-encoded values among `arguments` as the properties of `schema` (and of its
/// `anyOf`/`oneOf` branches) describe them; whether any was decoded.
fn decode_properties(schema: &Value, arguments: &mut Map<String, Value>) -> bool {
    let schemas = alternatives(schema);
    let mut decoded = false;
    for (name, value) in arguments.iter_mut() {
        let Some(inner) = schemas.iter().find_map(|schema| {
            schema
                .get("properties")
                .and_then(Value::as_object)
                .and_then(|properties| properties.get(name))
        }) else {
            continue;
        };
        let kinds: Vec<String> = alternatives(inner)
            .iter()
            .flat_map(|s| types_of(s))
            .collect();
        let wants = |kind: &str| kinds.iter().any(|k| k == kind);
        if let Value::String(text) = value
            && !wants("string")
        {
            match serde_json::from_str::<Value>(text) {
                Ok(parsed @ Value::Object(_)) if wants("object") => *value = parsed,
                Ok(parsed @ Value::Array(_)) if wants("array") => *value = parsed,
                _ => continue,
            }
            decoded = true;
        }
        if let Value::Object(map) = value {
            decoded |= decode_properties(inner, map);
        }
    }
    decoded
}

/// The types `schema` names in `type` (a string or a list).
fn types_of(schema: &Value) -> Vec<String> {
    match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.clone()],
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(|kind| kind.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

/// BFCL-strict numbers: every value that `schema` types as `integer` (not also `number`) but
/// that is written as a float (`3.0`, `3e0`), at any depth through `properties` and `items`,
/// as a type error. A schema with `anyOf`/`oneOf` branches is integer-only when some branch
/// takes an integer and none takes a number (`anyOf [integer, null]`); objects and arrays are
/// followed into every branch that describes them.
fn float_integers(schema: &Value, value: &Value, pointer: &str, out: &mut Vec<Violation>) {
    let schemas = alternatives(schema);
    match value {
        Value::Number(number)
            if integer_only(&schemas) && number.as_i64().is_none() && number.as_u64().is_none() =>
        {
            out.push(Violation {
                class: ArgumentErrorClass::TypeError,
                pointer: pointer.to_owned(),
                message: format!("{number} is a float, not an integer literal (numbers: bfcl)"),
            });
        }
        Value::Object(map) => {
            for (key, inner) in map {
                let inner_schema = schemas.iter().find_map(|schema| {
                    schema
                        .get("properties")
                        .and_then(Value::as_object)
                        .and_then(|properties| properties.get(key))
                });
                if let Some(inner_schema) = inner_schema {
                    let at = format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
                    float_integers(inner_schema, inner, &at, out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schemas.iter().find_map(|schema| schema.get("items")) {
                for (index, item) in items.iter().enumerate() {
                    float_integers(item_schema, item, &format!("{pointer}/{index}"), out);
                }
            }
        }
        _ => {}
    }
}

/// `schema` and, recursively, every branch of its `anyOf`/`oneOf`.
fn alternatives(schema: &Value) -> Vec<&Value> {
    let mut out = vec![schema];
    for key in ["anyOf", "oneOf"] {
        for branch in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.extend(alternatives(branch));
        }
    }
    out
}

/// Whether the `schemas` (a schema and its branches) take integers but no other number.
fn integer_only(schemas: &[&Value]) -> bool {
    let all: Vec<String> = schemas.iter().flat_map(|schema| types_of(schema)).collect();
    all.iter().any(|kind| kind == "integer") && !all.iter().any(|kind| kind == "number")
}

/// The result of checking one call's arguments against its tool's input schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaCheck {
    /// Every violation, classed after BFCL (see [`check_arguments`]).
    pub violations: Vec<Violation>,
    /// What is odd but not wrong about the arguments (the string `"null"` for a nullable
    /// parameter), for the trace.
    pub notes: Vec<crate::trace::CallNote>,
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
        notes: Vec::new(),
        refusal,
    }
}

/// `definitions` parsed as rmcp tools; see [`ToolSet::mcp_tools`].
fn parse_mcp_tools(definitions: &[Value]) -> Result<Arc<[rmcp::model::Tool]>> {
    let mut tools: Vec<rmcp::model::Tool> = Vec::with_capacity(definitions.len());
    for (index, definition) in definitions.iter().enumerate() {
        let Some(name) = definition.get("name").and_then(Value::as_str) else {
            anyhow::bail!("tool definition #{} has no string `name`", index + 1);
        };
        let tool: rmcp::model::Tool = serde_json::from_value(definition.clone())
            .with_context(|| format!("invalid definition of tool `{name}`"))?;
        if tools.iter().any(|earlier| earlier.name == tool.name) {
            anyhow::bail!("tool `{name}` is defined twice");
        }
        tools.push(tool);
    }
    Ok(tools.into())
}

#[cfg(test)]
mod tests {
    //! Argument validation: errors name argument and rule; number and lenient modes act as set.

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

    /// `3.0` for an integer is an integer under JSON Schema semantics and a type
    /// error under BFCL-strict numbers; a `number` parameter takes `3` in both.
    #[test]
    fn number_mode_decides_whether_a_float_is_an_integer() {
        let args = json!({"query": "Jo", "limit": 3.0});
        let args = args.as_object().expect("object");
        let schema_mode = ToolSet::new(Catalog::builtin()).expect("compiles");
        let check = schema_mode
            .check("crm_search_contacts", args)
            .expect("a tool");
        assert_eq!((check.violations.clone(), check.refusal), (vec![], None));
        let bfcl = ToolSet::new(Catalog::builtin())
            .expect("compiles")
            .with_modes(NumberMode::Bfcl, DoubleEncoded::Strict);
        let check = bfcl.check("crm_search_contacts", args).expect("a tool");
        assert_eq!(
            check.violations,
            vec![Violation {
                class: ArgumentErrorClass::TypeError,
                pointer: "/limit".into(),
                message: "3.0 is a float, not an integer literal (numbers: bfcl)".into(),
            }]
        );
        assert_eq!(
            check.refusal.as_deref(),
            Some(
                "invalid arguments for `crm_search_contacts`: `/limit`: 3.0 is a float, not an integer literal (numbers: bfcl)"
            )
        );
        let whole = json!({"query": "Jo", "limit": 3});
        let check = bfcl.check("crm_search_contacts", whole.as_object().expect("object"));
        assert_eq!(check.map(|c| c.refusal), Some(None));
    }

    /// Inside `anyOf`/`oneOf`, BFCL numbers still see an integer: a nullable integer, an
    /// object branch with an integer field; a branch that takes any number lets a float by.
    #[test]
    fn bfcl_numbers_look_inside_any_of_and_one_of() {
        let definitions = vec![
            json!({"name": "t", "inputSchema": {"type": "object", "properties": {
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "page": {"oneOf": [{"type": "null"}, {"type": "object", "properties": {"size": {"type": "integer"}}}]},
            "ratio": {"anyOf": [{"type": "integer"}, {"type": "number"}]}}}}),
        ];
        let bfcl = ToolSet::from_definitions(definitions)
            .expect("compiles")
            .with_modes(NumberMode::Bfcl, DoubleEncoded::Strict);
        let args = json!({"limit": 5.0, "page": {"size": 10.0}, "ratio": 2.0});
        let check = bfcl
            .check("t", args.as_object().expect("object"))
            .expect("a tool");
        let pointers: Vec<&str> = check
            .violations
            .iter()
            .map(|v| v.pointer.as_str())
            .collect();
        assert_eq!(pointers, ["/limit", "/page/size"]);
        let whole = json!({"limit": 5, "page": {"size": 10}, "ratio": 2.5});
        let check = bfcl.check("t", whole.as_object().expect("object"));
        assert_eq!(check.map(|c| c.violations), Some(vec![]));
    }

    /// A JSON string where the schema wants an object is decoded once in lenient
    /// mode only, and only for object/array parameters.
    #[test]
    fn lenient_mode_decodes_double_encoded_objects_once() {
        let definitions = vec![json!({"name": "update", "inputSchema": {"type": "object",
            "properties": {"changes": {"type": "object"}, "ids": {"type": "array"},
                           "note": {"type": "string"}}}})];
        let sent = json!({"changes": "{\"title\": \"x\"}", "ids": "[1, 2]", "note": "{\"a\": 1}"});
        let strict = ToolSet::from_definitions(definitions.clone()).expect("compiles");
        let mut arguments = sent.as_object().cloned().expect("object");
        assert!(!strict.decode_double_encoded("update", &mut arguments));
        assert_eq!(Value::Object(arguments.clone()), sent);
        assert!(
            strict
                .check("update", &arguments)
                .and_then(|c| c.refusal)
                .is_some()
        );
        let lenient = ToolSet::from_definitions(definitions)
            .expect("compiles")
            .with_modes(NumberMode::JsonSchema, DoubleEncoded::Lenient);
        assert!(lenient.decode_double_encoded("update", &mut arguments));
        assert_eq!(
            Value::Object(arguments.clone()),
            json!({"changes": {"title": "x"}, "ids": [1, 2], "note": "{\"a\": 1}"})
        );
        assert_eq!(
            lenient.check("update", &arguments).map(|c| c.refusal),
            Some(None)
        );
    }

    /// Lenient decoding follows the schema where it is less plain: a `type` list, an `anyOf`
    /// with null, a property nested in an object; a parameter that also takes a string keeps
    /// its text.
    #[test]
    fn lenient_mode_decodes_nullable_and_nested_objects() {
        let definitions = vec![json!({"name": "update", "inputSchema": {"type": "object",
            "properties": {
                "changes": {"type": ["object", "null"]},
                "ids": {"anyOf": [{"type": "array"}, {"type": "null"}]},
                "options": {"type": "object", "properties": {"filter": {"type": "object"}}},
                "either": {"anyOf": [{"type": "object"}, {"type": "string"}]}}}})];
        let lenient = ToolSet::from_definitions(definitions)
            .expect("compiles")
            .with_modes(NumberMode::JsonSchema, DoubleEncoded::Lenient);
        let mut arguments = json!({"changes": "{\"title\": \"x\"}", "ids": "[1]",
            "options": {"filter": "{\"status\": \"open\"}"}, "either": "{\"a\": 1}"})
        .as_object()
        .cloned()
        .expect("object");
        assert!(lenient.decode_double_encoded("update", &mut arguments));
        assert_eq!(
            Value::Object(arguments),
            json!({"changes": {"title": "x"}, "ids": [1],
                "options": {"filter": {"status": "open"}}, "either": "{\"a\": 1}"})
        );
    }

    /// The string "null" for a nullable optional parameter is noted (not a violation: the run
    /// does not fail on it); a real `null` and the string for a plain string parameter are not.
    #[test]
    fn the_string_null_for_a_nullable_parameter_is_a_note() {
        let tools = ToolSet::from_definitions(vec![json!({"name": "search", "inputSchema": {
            "type": "object", "properties": {
                "cursor": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "name": {"type": "string"}}}})])
        .expect("compiles");
        let check = |value: Value| {
            tools
                .check("search", value.as_object().expect("object"))
                .expect("a tool")
        };
        let sent = check(json!({"cursor": "null", "name": "null"}));
        assert_eq!(sent.violations, vec![]);
        assert_eq!(sent.notes, vec![crate::trace::CallNote::NullString]);
        assert_eq!(sent.refusal, None);
        assert_eq!(check(json!({"name": "null"})).notes, vec![]);
        assert_eq!(check(json!({"cursor": null})).notes, vec![]);
    }
}
