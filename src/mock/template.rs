//! Response templates: JSON values whose strings may name values of the call with `{{path}}`.
//!
//! A string that is exactly one `{{path}}` becomes the value found there, keeping its JSON
//! type (`"{{rows}}"` is an array). A string with text around its `{{...}}` parts becomes a
//! string, each part rendered as text (strings as they are, other values as JSON). A path
//! that leads nowhere is `null` (as a whole value) or `""` (inside text).
//!
//! A path is a root and `.`-separated steps; a step that is a number indexes an array:
//!
//! | root | value |
//! |---|---|
//! | `args` | the call's arguments (`args.customer.email`) |
//! | `row` | the first row the rule's `select`, `insert`, `update` or `delete` touched |
//! | `rows` | every such row, in table order |
//! | `count` | how many rows that is |
//! | `state` | the tables, by name (`state.tickets.0.id`) |
//! | `call` | the 1-based number of this call among the tool's calls in the run |
//! | `seq` | the 1-based number of this call among all calls a rule answered in the run |
//!
//! Paths are checked when the catalog loads: an unknown root, an empty step or an unclosed
//! `{{` is an error, and `row`, `rows` and `count` need a rule that touches rows.

use serde_json::{Map, Value};

/// The roots a template path may start with.
pub const ROOTS: [&str; 7] = ["args", "row", "rows", "count", "state", "call", "seq"];

/// The roots that exist only in a rule that selects or changes rows.
const ROW_ROOTS: [&str; 3] = ["row", "rows", "count"];

/// A parsed template.
#[derive(Debug, Clone, PartialEq)]
pub enum Template {
    /// A value without any `{{...}}`, copied as it is.
    Literal(Value),
    /// A string that is exactly one `{{path}}`.
    Whole(Path),
    /// A string mixing text and `{{path}}` parts.
    Text(Vec<Piece>),
    /// An object with templated values, in file order.
    Object(Vec<(String, Template)>),
    /// An array with templated items.
    Array(Vec<Template>),
}

/// Part of a [`Template::Text`].
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// Literal text.
    Text(String),
    /// A value rendered as text.
    Path(Path),
}

/// A parsed `{{root.step.step}}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Path {
    /// One of [`ROOTS`].
    pub root: String,
    /// The steps below it.
    pub steps: Vec<String>,
}

/// What a template path can read during one call.
pub struct Context<'a> {
    /// The call's arguments.
    pub args: &'a Map<String, Value>,
    /// The rows the rule touched.
    pub rows: &'a [Value],
    /// The tables, as the state snapshot shows them; built only when a template reads it.
    pub state: &'a dyn Fn() -> Value,
    /// The tool's 1-based call number.
    pub call: u32,
    /// The run's 1-based answered-call number.
    pub seq: u64,
}

impl Template {
    /// Parses `value`. `has_rows` says whether the rule touches rows (so `row`, `rows` and
    /// `count` exist). Errors name the problem and the text.
    pub fn parse(value: &Value, has_rows: bool) -> Result<Template, String> {
        Ok(match value {
            Value::String(text) => parse_text(text, has_rows)?,
            Value::Object(object) => {
                let mut fields = Vec::with_capacity(object.len());
                let mut templated = false;
                for (key, value) in object {
                    let field = Template::parse(value, has_rows)?;
                    templated |= !matches!(field, Template::Literal(_));
                    fields.push((key.clone(), field));
                }
                if templated {
                    Template::Object(fields)
                } else {
                    Template::Literal(value.clone())
                }
            }
            Value::Array(items) => {
                let items = items
                    .iter()
                    .map(|item| Template::parse(item, has_rows))
                    .collect::<Result<Vec<_>, _>>()?;
                if items
                    .iter()
                    .all(|item| matches!(item, Template::Literal(_)))
                {
                    Template::Literal(value.clone())
                } else {
                    Template::Array(items)
                }
            }
            other => Template::Literal(other.clone()),
        })
    }

    /// The value for one call.
    pub fn render(&self, context: &Context<'_>) -> Value {
        match self {
            Template::Literal(value) => value.clone(),
            Template::Whole(path) => path.resolve(context),
            Template::Text(pieces) => {
                let mut text = String::new();
                for piece in pieces {
                    match piece {
                        Piece::Text(literal) => text.push_str(literal),
                        Piece::Path(path) => match path.resolve(context) {
                            Value::Null => {}
                            Value::String(value) => text.push_str(&value),
                            other => text.push_str(&other.to_string()),
                        },
                    }
                }
                Value::String(text)
            }
            Template::Object(fields) => Value::Object(
                fields
                    .iter()
                    .map(|(key, field)| (key.clone(), field.render(context)))
                    .collect(),
            ),
            Template::Array(items) => {
                Value::Array(items.iter().map(|item| item.render(context)).collect())
            }
        }
    }
}

fn parse_text(text: &str, has_rows: bool) -> Result<Template, String> {
    if !text.contains("{{") {
        return Ok(Template::Literal(Value::String(text.to_owned())));
    }
    let mut pieces = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        if start > 0 {
            pieces.push(Piece::Text(rest[..start].to_owned()));
        }
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            return Err(format!("`{text}`: `{{{{` is never closed by `}}}}`"));
        };
        pieces.push(Piece::Path(Path::parse(after[..end].trim(), has_rows)?));
        rest = &after[end + 2..];
    }
    if !rest.is_empty() {
        pieces.push(Piece::Text(rest.to_owned()));
    }
    Ok(match pieces.as_slice() {
        [Piece::Path(path)] => Template::Whole(path.clone()),
        _ => Template::Text(pieces),
    })
}

impl Path {
    /// Parses `root.step...`; see the module docs for the roots.
    pub fn parse(source: &str, has_rows: bool) -> Result<Path, String> {
        let mut parts = source.split('.');
        let root = parts.next().unwrap_or_default();
        if !ROOTS.contains(&root) {
            return Err(format!(
                "`{{{{{source}}}}}`: unknown root `{root}` (expected one of {})",
                ROOTS.join(", ")
            ));
        }
        if !has_rows && ROW_ROOTS.contains(&root) {
            return Err(format!(
                "`{{{{{source}}}}}`: `{root}` needs a rule with `select`, `insert`, `update` or `delete`"
            ));
        }
        let steps: Vec<String> = parts.map(str::to_owned).collect();
        if steps.iter().any(|step| step.trim().is_empty()) {
            return Err(format!("`{{{{{source}}}}}`: empty step in the path"));
        }
        Ok(Path {
            root: root.to_owned(),
            steps,
        })
    }

    fn resolve(&self, context: &Context<'_>) -> Value {
        let start = match self.root.as_str() {
            "args" => return walk_map(context.args, &self.steps),
            "rows" => Value::Array(context.rows.to_vec()),
            "row" => context.rows.first().cloned().unwrap_or(Value::Null),
            "count" => Value::from(context.rows.len()),
            "call" => Value::from(context.call),
            "seq" => Value::from(context.seq),
            _ => (context.state)(),
        };
        walk(&start, &self.steps).cloned().unwrap_or(Value::Null)
    }
}

fn walk_map(map: &Map<String, Value>, steps: &[String]) -> Value {
    match steps.split_first() {
        None => Value::Object(map.clone()),
        Some((first, rest)) => map
            .get(first)
            .and_then(|value| walk(value, rest))
            .cloned()
            .unwrap_or(Value::Null),
    }
}

fn walk<'v>(value: &'v Value, steps: &[String]) -> Option<&'v Value> {
    let mut current = value;
    for step in steps {
        current = match current {
            Value::Object(object) => object.get(step)?,
            Value::Array(items) => items.get(step.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(current)
}

#[cfg(test)]
mod tests {
    //! Templates: a whole `{{path}}` keeps its JSON type, text interpolates, bad paths say why.

    use serde_json::json;

    use super::*;

    fn render(template: Value, args: Value, rows: &[Value]) -> Value {
        let parsed = Template::parse(&template, true).expect("a valid template");
        let args = args.as_object().cloned().expect("an object");
        let state = || json!({"tickets": [{"id": "T-1"}]});
        parsed.render(&Context {
            args: &args,
            rows,
            state: &state,
            call: 2,
            seq: 7,
        })
    }

    #[test]
    fn a_whole_path_keeps_the_json_type_and_text_interpolates() {
        let rows = [json!({"id": "T-9", "n": 3})];
        assert_eq!(
            render(
                json!({"n": "{{row.n}}", "all": "{{rows}}", "msg": "ticket {{row.id}} #{{seq}}",
                       "who": "{{ args.user.name }}", "first": "{{state.tickets.0.id}}",
                       "missing": "{{args.nope}}", "text_missing": "x{{args.nope}}y",
                       "call": "{{call}}", "count": "{{count}}", "plain": [1, "a"]}),
                json!({"user": {"name": "Ann"}}),
                &rows
            ),
            json!({"n": 3, "all": [{"id": "T-9", "n": 3}], "msg": "ticket T-9 #7",
                   "who": "Ann", "first": "T-1", "missing": null, "text_missing": "xy",
                   "call": 2, "count": 1, "plain": [1, "a"]})
        );
    }

    #[test]
    fn bad_paths_are_refused_with_the_reason() {
        assert_eq!(
            Template::parse(&json!("{{arg.x}}"), true).expect_err("bad root"),
            "`{{arg.x}}`: unknown root `arg` (expected one of args, row, rows, count, state, call, seq)"
        );
        assert_eq!(
            Template::parse(&json!("id {{row.id"), true).expect_err("unclosed"),
            "`id {{row.id`: `{{` is never closed by `}}`"
        );
        assert_eq!(
            Template::parse(&json!({"a": ["{{rows}}"]}), false).expect_err("no rows"),
            "`{{rows}}`: `rows` needs a rule with `select`, `insert`, `update` or `delete`"
        );
        assert_eq!(
            Template::parse(&json!("{{args..x}}"), true).expect_err("empty step"),
            "`{{args..x}}`: empty step in the path"
        );
    }
}
