//! Checking `elicitations`: each names a catalog tool once, says something, asks with a flat
//! form as MCP elicitation requires, and a scripted `accept` fills that form validly.

use serde_json::{Map, Value, json};

use super::Problems;
use crate::catalog::Catalog;
use crate::scenario::file::ElicitationFile;
use crate::scenario::{Elicitation, ElicitationAction, ElicitationReply};

/// Keys an elicitation schema may have at its top level.
const TOP_KEYS: [&str; 6] = [
    "type",
    "properties",
    "required",
    "title",
    "description",
    "$schema",
];

/// Property types MCP elicitation allows (2025-06-18 and later: primitives only).
const PRIMITIVES: [&str; 4] = ["string", "number", "integer", "boolean"];

/// String formats MCP elicitation allows.
const FORMATS: [&str; 4] = ["email", "uri", "date", "date-time"];

/// Checks every entry of `elicitations`; returns those that are usable (problems recorded).
pub(super) fn validate_elicitations(
    raw: Vec<ElicitationFile>,
    catalog: &Catalog,
    problems: &mut Problems<'_>,
) -> Vec<Elicitation> {
    let mut valid = Vec::new();
    let mut tools: Vec<String> = Vec::new();
    for (index, entry) in raw.into_iter().enumerate() {
        let field = format!("elicitations[{index}]");
        let mut ok = true;
        if catalog.tool(&entry.tool).is_none() {
            problems.add(
                &format!("{field}.tool"),
                Some(&entry.tool),
                catalog.unknown_tool_message(&entry.tool),
            );
            ok = false;
        } else if let Some(earlier) = tools.iter().position(|tool| *tool == entry.tool) {
            // No line: the tool's first mention is the earlier entry's.
            problems.add(
                &format!("{field}.tool"),
                None,
                format_args!(
                    "`{}` already asks in `elicitations[{earlier}]`: one entry per tool",
                    entry.tool
                ),
            );
            ok = false;
        }
        tools.push(entry.tool.clone());
        if entry.message.trim().is_empty() {
            problems.add(&format!("{field}.message"), None, "must not be empty");
            ok = false;
        }
        let schema = entry
            .schema
            .unwrap_or_else(|| Map::from_iter([("type".to_owned(), json!("object"))]));
        let schema_problems = schema_problems(&schema);
        for (at, message) in &schema_problems {
            problems.add(&format!("{field}.schema{at}"), None, message);
        }
        let schema = with_properties(schema);
        let reply = reply(
            &field,
            entry.reply,
            &schema,
            schema_problems.is_empty(),
            problems,
        );
        match reply {
            Some(reply) if ok && schema_problems.is_empty() => valid.push(Elicitation {
                tool: entry.tool,
                message: entry.message,
                schema,
                reply,
            }),
            _ => {}
        }
    }
    valid
}

/// `schema` with an empty `properties` where it has none (MCP requires the key).
fn with_properties(mut schema: Map<String, Value>) -> Value {
    schema
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    Value::Object(schema)
}

/// The scripted reply, checked against `schema` when that is usable: `accept` content valid
/// against it, no content with `decline` or `cancel`. `None` when it is not usable.
fn reply(
    field: &str,
    raw: crate::scenario::file::ElicitationReplyFile,
    schema: &Value,
    check_content: bool,
    problems: &mut Problems<'_>,
) -> Option<ElicitationReply> {
    let at = format!("{field}.reply.content");
    if raw.action != ElicitationAction::Accept {
        if raw.content.is_some() {
            problems.add(
                &at,
                None,
                format_args!(
                    "is only sent with `action: accept`, not with `{}`",
                    raw.action.as_str()
                ),
            );
            return None;
        }
        return Some(ElicitationReply {
            action: raw.action,
            content: None,
        });
    }
    let content = Value::Object(raw.content.unwrap_or_default());
    if check_content {
        let mut valid = true;
        match jsonschema::draft202012::new(schema) {
            Ok(validator) => {
                for error in validator.iter_errors(&content) {
                    let pointer = error.instance_path().to_string();
                    let pointer = if pointer.is_empty() { "/" } else { &pointer };
                    problems.add(&at, None, format_args!("`{pointer}`: {error}"));
                    valid = false;
                }
            }
            Err(error) => {
                problems.add(
                    &format!("{field}.schema"),
                    None,
                    format_args!("is not a valid JSON Schema: {error}"),
                );
                valid = false;
            }
        }
        if !valid {
            return None;
        }
    }
    Some(ElicitationReply {
        action: ElicitationAction::Accept,
        content: Some(content),
    })
}

/// What makes `schema` unusable as an MCP elicitation form, as (field path after `schema`,
/// message) pairs; empty when it is a flat object of primitive properties.
pub(super) fn schema_problems(schema: &Map<String, Value>) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for key in schema.keys() {
        if !TOP_KEYS.contains(&key.as_str()) {
            found.push((
                format!(".{key}"),
                format!(
                    "is not allowed in an elicitation form (allowed: {})",
                    TOP_KEYS.join(", ")
                ),
            ));
        }
    }
    if schema.get("type") != Some(&json!("object")) {
        found.push((
            ".type".to_owned(),
            "must be `object`: an elicitation asks for a form of named fields".to_owned(),
        ));
    }
    let empty = Map::new();
    let properties = match schema.get("properties") {
        None => &empty,
        Some(Value::Object(properties)) => properties,
        Some(_) => {
            found.push((
                ".properties".to_owned(),
                "must be an object of field schemas".to_owned(),
            ));
            &empty
        }
    };
    for (name, property) in properties {
        found.extend(
            property_problem(property)
                .map(|(at, message)| (format!(".properties.{name}{at}"), message)),
        );
    }
    match schema.get("required") {
        None => {}
        Some(Value::Array(names)) => {
            for (index, name) in names.iter().enumerate() {
                if !name
                    .as_str()
                    .is_some_and(|name| properties.contains_key(name))
                {
                    found.push((
                        format!(".required[{index}]"),
                        format!("{name} is not one of `properties`"),
                    ));
                }
            }
        }
        Some(_) => found.push((
            ".required".to_owned(),
            "must be a list of property names".to_owned(),
        )),
    }
    found
}

/// What makes one property unusable in an elicitation form, as (field path after the
/// property, message); `None` when it is a primitive MCP allows.
fn property_problem(property: &Value) -> Option<(String, String)> {
    let Some(property) = property.as_object() else {
        return Some((
            String::new(),
            "must be an object (a field schema)".to_owned(),
        ));
    };
    let kind = property.get("type").and_then(Value::as_str).unwrap_or("");
    if !PRIMITIVES.contains(&kind) {
        let shown = property
            .get("type")
            .map_or_else(|| "none".to_owned(), Value::to_string);
        return Some((
            ".type".to_owned(),
            format!(
                "is {shown}: an elicitation field is a `string`, `number`, `integer` or \
                 `boolean` (MCP elicitation allows no nested objects or arrays)"
            ),
        ));
    }
    let allowed: &[&str] = match kind {
        "string" => &[
            "minLength",
            "maxLength",
            "format",
            "enum",
            "enumNames",
            "oneOf",
        ],
        "number" | "integer" => &["minimum", "maximum"],
        _ => &[],
    };
    for key in property.keys() {
        let common = ["type", "title", "description", "default"].contains(&key.as_str());
        if !common && !allowed.contains(&key.as_str()) {
            return Some((
                format!(".{key}"),
                format!("is not allowed in an elicitation field of type `{kind}`"),
            ));
        }
    }
    if let Some(format) = property.get("format")
        && !format
            .as_str()
            .is_some_and(|format| FORMATS.contains(&format))
    {
        return Some((
            ".format".to_owned(),
            format!("is {format}; MCP elicitation allows {}", FORMATS.join(", ")),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    //! Elicitation forms: flat primitives pass, nesting and unknown keys are named by path.

    use serde_json::json;

    use super::*;

    fn problems(schema: Value) -> Vec<(String, String)> {
        schema_problems(schema.as_object().expect("an object"))
    }

    #[test]
    fn a_flat_form_of_every_primitive_has_no_problem() {
        let schema = json!({"type": "object", "title": "Refund", "properties": {
            "amount": {"type": "number", "minimum": 0, "maximum": 500, "description": "USD"},
            "count": {"type": "integer", "default": 1},
            "reason": {"type": "string", "maxLength": 200, "format": "email"},
            "speed": {"type": "string", "enum": ["fast", "slow"]},
            "notify": {"type": "boolean", "default": false}},
            "required": ["amount"]});
        assert_eq!(problems(schema), vec![]);
        assert_eq!(problems(json!({"type": "object"})), vec![]);
    }

    #[test]
    fn nesting_unknown_keys_and_bad_required_names_are_named_by_path() {
        let schema = json!({"type": "object", "additionalProperties": false, "properties": {
            "address": {"type": "object", "properties": {}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "when": {"type": "string", "format": "time"},
            "n": {"type": "integer", "pattern": "x"}},
            "required": ["amount"]});
        let found: Vec<String> = problems(schema)
            .into_iter()
            .map(|(at, message)| format!("{at}: {message}"))
            .collect();
        assert_eq!(
            found,
            [
                ".additionalProperties: is not allowed in an elicitation form (allowed: type, \
                 properties, required, title, description, $schema)",
                ".properties.address.type: is \"object\": an elicitation field is a `string`, \
                 `number`, `integer` or `boolean` (MCP elicitation allows no nested objects or \
                 arrays)",
                ".properties.tags.type: is \"array\": an elicitation field is a `string`, \
                 `number`, `integer` or `boolean` (MCP elicitation allows no nested objects or \
                 arrays)",
                ".properties.when.format: is \"time\"; MCP elicitation allows email, uri, date, \
                 date-time",
                ".properties.n.pattern: is not allowed in an elicitation field of type `integer`",
                ".required[0]: \"amount\" is not one of `properties`",
            ]
        );
        assert_eq!(
            problems(json!({"type": "string"})),
            vec![(
                ".type".to_owned(),
                "must be `object`: an elicitation asks for a form of named fields".to_owned()
            )]
        );
    }
}
