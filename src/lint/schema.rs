//! Schema checks: a tool's `inputSchema` and `outputSchema` as JSON Schema (draft 2020-12, the
//! MCP default dialect), and the shapes strict clients and providers reject.
//!
//! Each tool is checked on its own, so one broken schema never hides the others. `$ref`s are
//! resolved locally; nothing is ever fetched (`jsonschema` is built without its HTTP resolver).

use super::checks::CheckId;
use serde_json::Value;

use super::{Finding, FindingSource, Profile, Severity, ToolRef};
use crate::harness::client::ToolReply;
use crate::json::pointer_token;

/// How deep the walk goes into nested schemas before it stops (a guard against pathological
/// input; real schemas are far shallower).
const MAX_DEPTH: usize = 64;

/// `$schema` values accepted without a warning: the JSON Schema dialects.
const KNOWN_DIALECTS: [&str; 5] = [
    "https://json-schema.org/draft/2020-12/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft-07/schema",
    "http://json-schema.org/draft-06/schema",
    "http://json-schema.org/draft-04/schema",
];

/// Checks the input and output schema of one tool, appending findings to `out`.
/// `profiles` decides severities that differ by provider (OpenAI strict mode).
pub fn check_tool(tool: &ToolRef<'_>, profiles: &[Profile], out: &mut Vec<Finding>) {
    let strict = profiles.contains(&Profile::OpenaiStrict);
    match tool.definition.get("inputSchema") {
        None => out.push(Finding::tool(
            CheckId::MissingInputSchema,
            Severity::Error,
            tool,
            "",
            "the tool has no `inputSchema`; clients that require it drop the tool or the whole list",
            r#"add `"inputSchema": {"type": "object", "properties": {}}`"#,
        )),
        Some(schema) => {
            if !is_object_schema(schema) {
                let what = match schema {
                    Value::Object(map) if map.is_empty() => "is empty (`{}`)".to_owned(),
                    Value::Object(_) => "does not say `\"type\": \"object\"`".to_owned(),
                    other => format!("is {}, not a schema object", kind(other)),
                };
                out.push(Finding::tool(
                    CheckId::InputSchemaRootNotObject,
                    Severity::Error,
                    tool,
                    "/inputSchema",
                    format!("the input schema {what}; MCP requires an object schema"),
                    r#"use `{"type": "object", "properties": {...}}` as the root"#,
                ));
            }
            if schema.is_object() {
                let gemini = profiles.contains(&Profile::Gemini);
                SchemaCheck::new(tool, "/inputSchema", schema, strict, out)
                    .with_string_enums(gemini)
                    .run();
                check_parameter_descriptions(tool, schema, out);
                check_nullable_parameters(tool, schema, out);
            }
        }
    }
    if let Some(schema) = tool.definition.get("outputSchema") {
        if !is_object_schema(schema) {
            out.push(Finding::tool(
                CheckId::OutputSchemaRootNotObject,
                Severity::Error,
                tool,
                "/outputSchema",
                "the output schema's root is not `\"type\": \"object\"`; `structuredContent` must be an object",
                r#"wrap the value: `{"type": "object", "properties": {"result": ...}}`"#,
            ));
        }
        if schema.is_object() {
            SchemaCheck::new(tool, "/outputSchema", schema, strict, out).run();
        }
    }
}

/// An info finding when a tool result's text copy, read as JSON, disagrees with its
/// `structuredContent` (field case B21 C); `None` when they agree, when either is missing or
/// when the text is not JSON. Clients that read structured data and models that read text then
/// see different answers.
pub fn structured_text_mismatch(tool: &str, reply: &ToolReply) -> Option<Finding> {
    let structured = reply.structured.as_ref()?;
    let text: Value = serde_json::from_str(&reply.text).ok()?;
    // By meaning: `{"a":1,"b":2.0}` and `{"b":2,"a":1}` are the same value.
    if crate::json::same_value(&text, structured) {
        return None;
    }
    Some(Finding {
        check: CheckId::StructuredTextMismatch,
        severity: Severity::Info,
        server: None,
        tool: Some(tool.to_owned()),
        pointer: "/structuredContent".to_owned(),
        profile: None,
        source: FindingSource::Heuristic,
        message: format!(
            "the text content `{text}` disagrees with `structuredContent` `{structured}`"
        ),
        hint: "serialize the text copy from the same value as `structuredContent`".to_owned(),
    })
}

/// A successful tool result's `structuredContent` checked against the tool's `outputSchema`
/// (draft 2020-12, local `$ref`s only): one `output_schema_violation` error per violating
/// path, the pointer into `/structuredContent` (`/structuredContent/total`), in the
/// validator's order. Nothing for a tool without `outputSchema`, a result without
/// `structuredContent`, an `isError: true` result (its payload is an error, not the declared
/// output) or a schema that does not compile (the schema checks report that).
pub fn output_schema_violations(tool: &str, definition: &Value, reply: &ToolReply) -> Vec<Finding> {
    let (Some(schema), Some(structured), false) = (
        definition.get("outputSchema"),
        reply.structured.as_ref(),
        reply.is_error,
    ) else {
        return Vec::new();
    };
    let Ok(validator) = jsonschema::draft202012::options().build(schema) else {
        return Vec::new();
    };
    validator
        .iter_errors(structured)
        .map(|error| {
            let at = error.instance_path().to_string();
            Finding {
                check: CheckId::OutputSchemaViolation,
                severity: Severity::Error,
                server: None,
                tool: Some(tool.to_owned()),
                pointer: format!("/structuredContent{at}"),
                profile: None,
                source: FindingSource::Heuristic,
                message: format!(
                    "`structuredContent{}` does not match the outputSchema: {error}",
                    if at.is_empty() { "" } else { at.as_str() }
                ),
                hint: "return what the outputSchema declares, or fix the schema".to_owned(),
            }
        })
        .collect()
}

fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The JSON type of a value, for messages.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Optional top-level parameters that are nullable (`anyOf [T, null]`, as Pydantic writes
/// `Optional[T]`): an info finding showing the type as `T | null`, since some providers
/// reject the `anyOf` and some models then send the string `"null"`.
fn check_nullable_parameters(tool: &ToolRef<'_>, schema: &Value, out: &mut Vec<Finding>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (name, property) in properties {
        if required.contains(&name.as_str()) {
            continue;
        }
        let Some(inner) = crate::harness::nullable_type(property) else {
            continue;
        };
        out.push(Finding::tool(
            CheckId::NullableParameter,
            Severity::Info,
            tool,
            format!("/inputSchema/properties/{}", pointer_token(name)),
            format!("optional parameter `{name}` is `{inner} | null`"),
            format!(
                "as it is optional, `\"type\": \"{inner}\"` alone says the same; leaving it out \
                 means none (models may send the string \"null\" otherwise)"
            ),
        ));
    }
}

/// Top-level parameters without a description: the model has only the name to go on.
fn check_parameter_descriptions(tool: &ToolRef<'_>, schema: &Value, out: &mut Vec<Finding>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        let Some(property) = property.as_object() else {
            continue;
        };
        let described = property
            .get("description")
            .and_then(Value::as_str)
            .is_some_and(|text| !text.trim().is_empty());
        let referenced = property.contains_key("$ref");
        if !described && !referenced {
            out.push(Finding::tool(
                CheckId::MissingParameterDescription,
                Severity::Warning,
                tool,
                format!("/inputSchema/properties/{}", pointer_token(name)),
                format!("parameter `{name}` has no description"),
                "say what the value means, its format and an example",
            ));
        }
    }
}

/// One walk over one schema root (`/inputSchema` or `/outputSchema`).
struct SchemaCheck<'a, 'o> {
    tool: &'a ToolRef<'a>,
    /// Pointer of the root inside the tool definition.
    base: &'static str,
    root: &'a Value,
    strict: bool,
    /// Gemini's rule (the `gemini` profile): every `enum` value must be a string.
    string_enums: bool,
    out: &'o mut Vec<Finding>,
    /// Findings of this walk start here in `out`.
    first: usize,
    /// A `$ref` that cannot be resolved here (dangling or remote): compiling would fail on it.
    has_unresolved_ref: bool,
    /// A `pattern` or `patternProperties` is present: only regexes can fail to compile after
    /// the meta-schema passes, so only then is the schema compiled (compiling is the costly part).
    has_pattern: bool,
}

impl<'a, 'o> SchemaCheck<'a, 'o> {
    fn new(
        tool: &'a ToolRef<'a>,
        base: &'static str,
        root: &'a Value,
        strict: bool,
        out: &'o mut Vec<Finding>,
    ) -> Self {
        let first = out.len();
        Self {
            tool,
            base,
            root,
            strict,
            string_enums: false,
            out,
            first,
            has_unresolved_ref: false,
            has_pattern: false,
        }
    }

    /// This walk also flags, under the `gemini` profile only, each `enum` with a value that
    /// is not a string (one warning per `enum`, at its first such value).
    fn with_string_enums(mut self, on: bool) -> Self {
        self.string_enums = on;
        self
    }

    fn run(mut self) {
        self.check_dialect();
        self.visit(self.root, String::new(), 0);
        self.check_meta_schema();
    }

    fn push(
        &mut self,
        check: CheckId,
        severity: Severity,
        pointer: &str,
        message: String,
        hint: &str,
    ) {
        self.out.push(Finding::tool(
            check,
            severity,
            self.tool,
            format!("{}{pointer}", self.base),
            message,
            hint,
        ));
    }

    fn check_dialect(&mut self) {
        let Some(dialect) = self.root.get("$schema") else {
            return;
        };
        let known = dialect
            .as_str()
            .is_some_and(|uri| KNOWN_DIALECTS.contains(&uri.trim_end_matches('#')));
        if !known {
            self.push(
                CheckId::NonstandardSchema,
                Severity::Warning,
                "/$schema",
                format!("`$schema` is {dialect}, not a JSON Schema dialect; some clients try to download it and drop the tool"),
                "leave `$schema` out (MCP defaults to draft 2020-12) or use `https://json-schema.org/draft/2020-12/schema`; toolgate never fetches it",
            );
        }
    }

    /// Visits `schema` at `pointer` (relative to the root) and every subschema below it.
    fn visit(&mut self, schema: &'a Value, pointer: String, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let Some(object) = schema.as_object() else {
            return;
        };
        if let Some(reference) = object.get("$ref") {
            self.check_ref(reference, &pointer);
        }
        if object.contains_key("pattern") || object.contains_key("patternProperties") {
            self.has_pattern = true;
        }
        let types = types(schema);
        if types.contains(&"array")
            && !object.contains_key("items")
            && !object.contains_key("prefixItems")
        {
            self.push(
                CheckId::ArrayMissingItems,
                if self.strict { Severity::Error } else { Severity::Warning },
                &pointer,
                "an array without `items`: the model cannot tell what the elements are, and strict clients drop the tool".to_owned(),
                r#"add `"items": {"type": ...}`"#,
            );
        }
        let composed = [
            "$ref",
            "allOf",
            "anyOf",
            "oneOf",
            "additionalProperties",
            "patternProperties",
        ]
        .iter()
        .any(|key| object.contains_key(*key));
        if types.contains(&"object") && !object.contains_key("properties") && !composed {
            self.push(
                CheckId::ObjectMissingProperties,
                if self.strict { Severity::Error } else { Severity::Warning },
                &pointer,
                "an object without `properties`; OpenAI rejects it (\"object schema missing properties\")".to_owned(),
                r#"add `"properties": {}` (with no arguments) or list the keys"#,
            );
        }
        self.check_required(object, &pointer);
        self.check_enum(object, &types, &pointer);
        self.visit_children(object, &pointer, depth);
    }

    fn visit_children(
        &mut self,
        object: &'a serde_json::Map<String, Value>,
        pointer: &str,
        depth: usize,
    ) {
        const MAPS: [&str; 5] = [
            "properties",
            "patternProperties",
            "$defs",
            "definitions",
            "dependentSchemas",
        ];
        const SINGLES: [&str; 11] = [
            "additionalProperties",
            "items",
            "contains",
            "not",
            "if",
            "then",
            "else",
            "propertyNames",
            "unevaluatedItems",
            "unevaluatedProperties",
            "additionalItems",
        ];
        const LISTS: [&str; 4] = ["prefixItems", "allOf", "anyOf", "oneOf"];
        for key in MAPS {
            let Some(children) = object.get(key).and_then(Value::as_object) else {
                continue;
            };
            for (name, child) in children {
                let child_pointer = format!("{pointer}/{key}/{}", pointer_token(name));
                if key == "properties" && !child.is_object() && !child.is_boolean() {
                    self.push(
                        CheckId::PropertyNotASchema,
                        Severity::Error,
                        &child_pointer,
                        format!(
                            "property `{name}` is {} ({child}), not a schema",
                            kind(child)
                        ),
                        r#"make it a schema, e.g. `{"type": "string", "description": "..."}`"#,
                    );
                }
                self.visit(child, child_pointer, depth + 1);
            }
        }
        for key in SINGLES {
            match object.get(key) {
                Some(child @ Value::Object(_)) => {
                    self.visit(child, format!("{pointer}/{key}"), depth + 1);
                }
                Some(Value::Array(children)) if key == "items" => {
                    for (index, child) in children.iter().enumerate() {
                        self.visit(child, format!("{pointer}/items/{index}"), depth + 1);
                    }
                }
                _ => {}
            }
        }
        for key in LISTS {
            if let Some(children) = object.get(key).and_then(Value::as_array) {
                for (index, child) in children.iter().enumerate() {
                    self.visit(child, format!("{pointer}/{key}/{index}"), depth + 1);
                }
            }
        }
    }

    fn check_ref(&mut self, reference: &Value, pointer: &str) {
        let at = format!("{pointer}/$ref");
        let Some(reference) = reference.as_str() else {
            self.push(
                CheckId::InvalidSchema,
                Severity::Error,
                &at,
                format!("`$ref` is {}, not a string", kind(reference)),
                "make `$ref` a URI reference such as `#/$defs/Name`",
            );
            return;
        };
        let Some(fragment) = reference.strip_prefix('#') else {
            self.has_unresolved_ref = true;
            self.push(
                CheckId::RemoteRef,
                Severity::Warning,
                &at,
                format!("`$ref` `{reference}` points outside the schema; clients will not fetch it (toolgate never does)"),
                "inline the referenced schema under `$defs` and point at `#/$defs/...`",
            );
            return;
        };
        let target = if fragment.is_empty() || fragment.starts_with('/') {
            self.root
                .pointer(&percent_decode(fragment))
                .map(|_| fragment.to_owned())
        } else {
            find_anchor(self.root, fragment, 0)
        };
        let Some(target) = target else {
            self.has_unresolved_ref = true;
            self.push(
                CheckId::UnresolvedRef,
                Severity::Error,
                &at,
                format!("`$ref` `{reference}` points at nothing in this schema"),
                "define the target under `$defs` in the same schema, or fix the reference",
            );
            return;
        };
        if is_within(pointer, &target) {
            self.push(
                CheckId::RecursiveSchema,
                Severity::Info,
                &at,
                format!("`$ref` `{reference}` is recursive; some clients cannot expand it"),
                "fine for JSON Schema; keep the recursion shallow for models",
            );
        }
    }

    fn check_required(&mut self, object: &serde_json::Map<String, Value>, pointer: &str) {
        let Some(required) = object.get("required").and_then(Value::as_array) else {
            return;
        };
        let properties = object.get("properties").and_then(Value::as_object);
        if properties.is_none()
            && ["allOf", "anyOf", "oneOf", "$ref"]
                .iter()
                .any(|key| object.contains_key(*key))
        {
            return;
        }
        for (index, name) in required.iter().enumerate() {
            let Some(name) = name.as_str() else {
                continue;
            };
            if !properties.is_some_and(|properties| properties.contains_key(name)) {
                self.push(
                    CheckId::RequiredNotInProperties,
                    Severity::Error,
                    &format!("{pointer}/required/{index}"),
                    format!("`required` names `{name}`, which is not in `properties`; Gemini rejects the tool and it is usually a typo"),
                    "define the property or remove it from `required`",
                );
            }
        }
    }

    fn check_enum(
        &mut self,
        object: &serde_json::Map<String, Value>,
        types: &[&str],
        pointer: &str,
    ) {
        let Some(values) = object.get("enum").and_then(Value::as_array) else {
            return;
        };
        if self.string_enums
            && let Some(value) = values.iter().find(|value| !value.is_string())
        {
            let mut finding = Finding::tool(
                CheckId::NonStringEnum,
                Severity::Warning,
                self.tool,
                format!("{}{pointer}/enum", self.base),
                format!("enum value {value} is not a string; Gemini accepts string enums only"),
                "write the values as strings (`\"1\"`), or describe the allowed numbers instead",
            );
            finding.profile = Some(Profile::Gemini);
            self.out.push(finding);
        }
        if types.is_empty() {
            return;
        }
        for (index, value) in values.iter().enumerate() {
            if !types.iter().any(|ty| matches_type(value, ty)) {
                self.push(
                    CheckId::EnumTypeMismatch,
                    Severity::Error,
                    &format!("{pointer}/enum/{index}"),
                    format!(
                        "enum value {value} is not of type `{}`",
                        types.join("` or `")
                    ),
                    "make every enum value match the schema's `type`",
                );
            }
        }
    }

    /// Validates the root against the draft 2020-12 meta-schema, then compiles it when it has
    /// regexes. Skips what the walk already reported at the same place.
    fn check_meta_schema(&mut self) {
        // `is_valid` first: it stops at the first failure without building an error, and
        // almost every schema is valid.
        let meta = if jsonschema::draft202012::meta::is_valid(self.root) {
            Ok(())
        } else {
            jsonschema::draft202012::meta::validate(self.root)
        };
        let error = match meta {
            Err(error) => Some((error.instance_path().to_string(), error.to_string())),
            Ok(()) if self.has_unresolved_ref || !self.has_pattern => None,
            Ok(()) => jsonschema::draft202012::options()
                .should_validate_formats(false)
                .build(self.root)
                .err()
                .map(|error| (error.instance_path().to_string(), error.to_string())),
        };
        let Some((pointer, message)) = error else {
            return;
        };
        let full = format!("{}{pointer}", self.base);
        let reported = self.out[self.first..]
            .iter()
            .any(|finding| finding.severity == Severity::Error && finding.pointer == full);
        if !reported {
            self.push(
                CheckId::InvalidSchema,
                Severity::Error,
                &pointer,
                format!("not a valid JSON Schema (draft 2020-12): {message}"),
                "fix the schema so it validates against the draft 2020-12 meta-schema",
            );
        }
    }
}

/// The schema's `type`, as a list (empty when absent).
fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(ty)) => vec![ty.as_str()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether `value` is of JSON Schema type `ty` (`integer` accepts `3.0`; unknown types match).
pub(super) fn matches_type(value: &Value, ty: &str) -> bool {
    match ty {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|n| n.fract() == 0.0)
        }
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    }
}

/// Decodes `%XX` escapes in a URI fragment (a `$ref` JSON Pointer may carry them).
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let hex = bytes
            .get(index + 1..index + 3)
            .and_then(|hex| std::str::from_utf8(hex).ok());
        match (
            bytes[index],
            hex.and_then(|hex| u8::from_str_radix(hex, 16).ok()),
        ) {
            (b'%', Some(byte)) => {
                decoded.push(byte);
                index += 3;
            }
            (byte, _) => {
                decoded.push(byte);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

/// The pointer (relative to the root) of the subschema whose `$anchor` is `name`.
fn find_anchor(schema: &Value, name: &str, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return None;
    }
    match schema {
        Value::Object(object) => {
            if object.get("$anchor").and_then(Value::as_str) == Some(name) {
                return Some(String::new());
            }
            object.iter().find_map(|(key, child)| {
                find_anchor(child, name, depth + 1)
                    .map(|rest| format!("/{}{rest}", pointer_token(key)))
            })
        }
        Value::Array(items) => items.iter().enumerate().find_map(|(index, child)| {
            find_anchor(child, name, depth + 1).map(|rest| format!("/{index}{rest}"))
        }),
        _ => None,
    }
}

/// Whether `pointer` is `target` or lies below it (segment-wise).
fn is_within(pointer: &str, target: &str) -> bool {
    pointer == target
        || target.is_empty()
        || pointer
            .strip_prefix(target)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    //! Schema checks: each shape strict clients reject is found; a well-formed tool gets nothing.

    use serde_json::json;

    use super::*;

    fn findings(definition: &Value, profiles: &[Profile]) -> Vec<Finding> {
        let tool = ToolRef {
            server: "srv",
            name: definition["name"].as_str().unwrap_or("<tool>"),
            definition,
        };
        let mut out = Vec::new();
        check_tool(&tool, profiles, &mut out);
        out
    }

    /// `(check, severity, pointer)` of each finding, in order.
    fn summary(findings: &[Finding]) -> Vec<(&'static str, Severity, String)> {
        findings
            .iter()
            .map(|f| (f.check.as_str(), f.severity, f.pointer.clone()))
            .collect()
    }

    #[test]
    fn finds_nothing_in_a_well_formed_tool() {
        let tool = json!({"name": "add", "inputSchema": {"type": "object",
            "properties": {"a": {"type": "integer", "description": "First addend."}},
            "required": ["a"]}});
        assert_eq!(summary(&findings(&tool, &[])), []);
    }

    /// B23: one dangling `$ref` is an error at its place; valid recursion is at most an info;
    /// a valid local `$ref` in an input schema is fine and still checks arguments.
    #[test]
    fn tells_a_dangling_ref_from_valid_recursion_b23() {
        let tools = json!([
            {"name": "create_project", "inputSchema": {"type": "object", "properties": {}},
             "outputSchema": {"type": "object",
               "properties": {"screens": {"type": "array", "items": {"$ref": "#/$defs/ScreenInstance"}}},
               "$defs": {"ScreenInstance": {"type": "object",
                 "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/ScreenInstance"}}}}}}},
            {"name": "upload_design_md", "inputSchema": {"type": "object", "properties": {}},
             "outputSchema": {"type": "object",
               "properties": {"screen": {"$ref": "#/$defs/ScreenInstance"}}}},
            {"name": "list_schedules",
             "inputSchema": {"type": "object",
               "$defs": {"ScheduleQuery": {"type": "object",
                         "properties": {"limit": {"type": "integer", "default": 20}}}},
               "properties": {"query_model": {"$ref": "#/$defs/ScheduleQuery"}},
               "required": ["query_model"]}}]);
        assert_eq!(
            summary(&findings(&tools[0], &[])),
            [(
                "recursive_schema",
                Severity::Info,
                "/outputSchema/$defs/ScreenInstance/properties/children/items/$ref".to_owned()
            )]
        );
        assert_eq!(
            summary(&findings(&tools[1], &[])),
            [(
                "unresolved_ref",
                Severity::Error,
                "/outputSchema/properties/screen/$ref".to_owned()
            )]
        );
        assert_eq!(summary(&findings(&tools[2], &[])), []);
        let validator = jsonschema::draft202012::new(&tools[2]["inputSchema"])
            .expect("the local $ref resolves");
        assert!(validator.is_valid(&json!({"query_model": {"limit": 5}})));
        assert!(!validator.is_valid(&json!({"query_model": {"limit": "five"}})));
    }

    /// B26: each shape at its JSON Pointer, with the severity the case names.
    #[test]
    fn reports_missing_items_properties_and_undefined_required_b26() {
        let bulk = json!({"name": "bulk_update",
            "inputSchema": {"type": "object",
              "properties": {"ids": {"type": "array", "description": "Ids."},
                             "opts": {"type": "object", "description": "Options."},
                             "type": "object"},
              "required": ["ids", "model"]}});
        assert_eq!(
            summary(&findings(&bulk, &[])),
            [
                (
                    "required_not_in_properties",
                    Severity::Error,
                    "/inputSchema/required/1".to_owned()
                ),
                (
                    "array_missing_items",
                    Severity::Warning,
                    "/inputSchema/properties/ids".to_owned()
                ),
                (
                    "object_missing_properties",
                    Severity::Warning,
                    "/inputSchema/properties/opts".to_owned()
                ),
                (
                    "property_not_a_schema",
                    Severity::Error,
                    "/inputSchema/properties/type".to_owned()
                ),
            ]
        );
        let strict = findings(&bulk, &[Profile::OpenaiStrict]);
        assert_eq!(strict[1].severity, Severity::Error);
        assert_eq!(strict[2].severity, Severity::Error);
        let bare = json!({"name": "ping", "inputSchema": {"type": "object"}});
        let found = findings(&bare, &[]);
        assert_eq!(
            summary(&found),
            [(
                "object_missing_properties",
                Severity::Warning,
                "/inputSchema".to_owned()
            )]
        );
        assert_eq!(
            found[0].hint,
            r#"add `"properties": {}` (with no arguments) or list the keys"#
        );
    }

    /// B27: the schema shapes the Rust SDK generated, each with the id the case names.
    #[test]
    fn reports_generated_schema_shapes_b27() {
        let tools = json!([
            {"name": "test_err", "inputSchema": {}},
            {"name": "say_hello",
             "inputSchema": {"$schema": "https://spec.openapis.org/oas/3.0/schema/2019-04-02#/definitions/Schema",
                             "title": "EmptyObject", "type": "object"}},
            {"name": "sub",
             "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                             "required": ["a", "b"]},
             "outputSchema": {"type": "integer"}},
            {"name": "legacy_tool", "description": "old server", "schema": {}}]);
        let found = findings(&tools[0], &[]);
        assert_eq!(
            summary(&found),
            [(
                "input_schema_root_not_object",
                Severity::Error,
                "/inputSchema".to_owned()
            )]
        );
        assert_eq!(
            found[0].message,
            "the input schema is empty (`{}`); MCP requires an object schema"
        );
        assert_eq!(
            summary(&findings(&tools[1], &[])),
            [
                (
                    "nonstandard_$schema",
                    Severity::Warning,
                    "/inputSchema/$schema".to_owned()
                ),
                (
                    "object_missing_properties",
                    Severity::Warning,
                    "/inputSchema".to_owned()
                ),
            ]
        );
        let sub: Vec<_> = summary(&findings(&tools[2], &[]))
            .into_iter()
            .filter(|(_, severity, _)| *severity == Severity::Error)
            .collect();
        assert_eq!(
            sub,
            [(
                "output_schema_root_not_object",
                Severity::Error,
                "/outputSchema".to_owned()
            )]
        );
        assert_eq!(
            summary(&findings(&tools[3], &[])),
            [("missing_input_schema", Severity::Error, String::new())]
        );
    }

    #[test]
    fn reports_enum_values_of_the_wrong_type_and_invalid_schemas() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object", "properties": {
            "level": {"type": "integer", "description": "Level.", "enum": [1, "2", 3.0]},
            "pattern": {"type": "string", "description": "Pattern.", "minLength": -1}}}});
        let found = findings(&tool, &[]);
        assert_eq!(
            summary(&found),
            [
                (
                    "enum_type_mismatch",
                    Severity::Error,
                    "/inputSchema/properties/level/enum/1".to_owned()
                ),
                (
                    "invalid_schema",
                    Severity::Error,
                    "/inputSchema/properties/pattern/minLength".to_owned()
                ),
            ]
        );
        assert_eq!(
            found[0].message,
            "enum value \"2\" is not of type `integer`"
        );
    }

    #[test]
    fn reports_a_pattern_that_is_not_a_regex() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object", "properties": {
            "code": {"type": "string", "description": "Code.", "pattern": "(unclosed"}}}});
        let found = findings(&tool, &[]);
        assert_eq!(
            summary(&found)
                .into_iter()
                .map(|(check, severity, _)| (check, severity))
                .collect::<Vec<_>>(),
            [("invalid_schema", Severity::Error)]
        );
        assert!(
            found[0]
                .message
                .starts_with("not a valid JSON Schema (draft 2020-12): ")
        );
    }

    #[test]
    fn warns_about_remote_refs_without_fetching_them() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object", "properties": {
            "x": {"$ref": "https://example.invalid/schema.json"}}}});
        assert_eq!(
            summary(&findings(&tool, &[])),
            [(
                "remote_ref",
                Severity::Warning,
                "/inputSchema/properties/x/$ref".to_owned()
            )]
        );
    }

    #[test]
    fn reports_undescribed_parameters() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object", "properties": {
            "q": {"type": "string"}, "n": {"type": "integer", "description": " "}}}});
        let found = findings(&tool, &[]);
        assert_eq!(
            summary(&found),
            [
                (
                    "missing_parameter_description",
                    Severity::Warning,
                    "/inputSchema/properties/q".to_owned()
                ),
                (
                    "missing_parameter_description",
                    Severity::Warning,
                    "/inputSchema/properties/n".to_owned()
                ),
            ]
        );
        assert_eq!(found[0].message, "parameter `q` has no description");
    }

    /// The text copy and `structuredContent` compare by value (`36 == 36.0`) and
    /// regardless of key order; a real difference is still noted.
    #[test]
    fn text_and_structured_copies_compare_by_value_and_key_order() {
        let reply = |text: &str| ToolReply {
            is_error: false,
            structured: Some(json!({"total": 36, "page": {"size": 10, "next": null}})),
            text: text.to_owned(),
        };
        let same = reply(r#"{"page": {"next": null, "size": 10.0}, "total": 36.0}"#);
        assert_eq!(structured_text_mismatch("x", &same), None);
        let differs = reply(r#"{"page": {"next": null, "size": 10}, "total": 35}"#);
        assert_eq!(
            structured_text_mismatch("x", &differs).map(|f| f.check.as_str()),
            Some("structured_text_mismatch")
        );
    }

    /// `structuredContent` (never the envelope, never an `isError` result) is
    /// validated against the outputSchema, one finding per violating path.
    #[test]
    fn structured_content_is_validated_against_the_output_schema_per_path() {
        let definition = json!({"name": "list_accounts", "outputSchema": {
            "type": "object",
            "properties": {
                "accounts": {"type": "array", "items": {
                    "type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}},
                "total": {"type": "integer"}},
            "required": ["accounts", "total"]}});
        let reply = |structured: Value, is_error: bool| ToolReply {
            is_error,
            structured: Some(structured),
            text: String::new(),
        };
        let good = reply(json!({"accounts": [{"id": "a1"}], "total": 36.0}), false);
        assert_eq!(
            output_schema_violations("list_accounts", &definition, &good),
            vec![]
        );
        let bad = reply(json!({"accounts": [{"id": 7}, {}], "total": "36"}), false);
        let found = output_schema_violations("list_accounts", &definition, &bad);
        let mut pointers: Vec<&str> = found.iter().map(|f| f.pointer.as_str()).collect();
        pointers.sort_unstable();
        assert_eq!(
            pointers,
            [
                "/structuredContent/accounts/0/id",
                "/structuredContent/accounts/1",
                "/structuredContent/total"
            ]
        );
        assert!(found.iter().all(|f| f.check == CheckId::OutputSchemaViolation
            && f.severity == Severity::Error));
        let total = found
            .iter()
            .find(|f| f.pointer == "/structuredContent/total")
            .expect("total");
        assert_eq!(
            total.message,
            "`structuredContent/total` does not match the outputSchema: \"36\" is not of type \"integer\""
        );
        // An error result is not the declared output.
        let error = reply(json!({"error": "401 Unauthorized"}), true);
        assert_eq!(
            output_schema_violations("list_accounts", &definition, &error),
            vec![]
        );
    }

    /// An optional `anyOf [T, null]` parameter is shown as `T | null` (info); a
    /// required one is not flagged.
    #[test]
    fn nullable_optional_parameters_are_shown_as_t_or_null() {
        let tool = json!({"name": "search", "inputSchema": {"type": "object",
            "properties": {
                "q": {"type": "string", "description": "Query."},
                "cursor": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "Page."},
                "limit": {"type": ["integer", "null"], "description": "Max."},
                "must": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "x"}},
            "required": ["q", "must"]}});
        let found: Vec<(String, String)> = findings(&tool, &[Profile::Mcp])
            .into_iter()
            .filter(|f| f.check == CheckId::NullableParameter)
            .map(|f| (f.pointer, f.message))
            .collect();
        assert_eq!(
            found,
            [
                (
                    "/inputSchema/properties/cursor".to_owned(),
                    "optional parameter `cursor` is `string | null`".to_owned()
                ),
                (
                    "/inputSchema/properties/limit".to_owned(),
                    "optional parameter `limit` is `integer | null`".to_owned()
                ),
            ]
        );
    }

    /// Numeric enums warn under the Gemini profile only.
    #[test]
    fn numeric_enums_warn_under_gemini_only() {
        let tool = json!({"name": "set_level", "inputSchema": {"type": "object",
            "properties": {
                "level": {"type": "integer", "enum": [1, 2, 3], "description": "Level."},
                "mode": {"type": "string", "enum": ["a", "b"], "description": "Mode."}}}});
        let gemini: Vec<(&'static str, Severity, String, Option<Profile>)> =
            findings(&tool, &[Profile::Gemini])
                .into_iter()
                .filter(|f| f.check == CheckId::NonStringEnum)
                .map(|f| (f.check.as_str(), f.severity, f.pointer, f.profile))
                .collect();
        assert_eq!(
            gemini,
            [(
                "non_string_enum",
                Severity::Warning,
                "/inputSchema/properties/level/enum".to_owned(),
                Some(Profile::Gemini)
            )]
        );
        let others = findings(&tool, &[Profile::Mcp, Profile::Openai, Profile::Anthropic]);
        assert!(others.iter().all(|f| f.check != CheckId::NonStringEnum));
    }
}
