//! Evaluating an assertion against the state a backend had before and after a run.
//!
//! Evaluation is pure and deterministic. JSON integers become CEL `int` (or `uint` above
//! `i64::MAX`), other numbers `double`; arithmetic that mixes them is done in `double`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use cel::common::ast::IdedExpr;
use cel::extractors::This;
use cel::objects::{Key, Map};
use cel::{Context, ExecutionError, Value};

use super::parse::{call, ident, on_large_stack};
use super::{
    ADD_FN, Assertion, BASELINE, Body, COUNT_FN, Comparison, DIV_FN, INDEX_FN, INLINE_OPERATORS,
    LEFT_VAR, MAX_VALUE_CHARS, MUL_FN, RIGHT_VAR, SUB_FN,
};

/// The outcome of an assertion that evaluated to a bool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evaluation {
    /// Whether the assertion held.
    pub passed: bool,
    /// What was compared: for a top-level comparison, both sides' values (and `baseline` when
    /// used), e.g. ``left `contacts.count` = 3, right `baseline + 1` = 4 (baseline = 3)``;
    /// otherwise `evaluated to true` or `evaluated to false`.
    pub detail: String,
}

impl Assertion {
    /// Evaluates on `final_state`, with `baseline` taken from `seeded_state`.
    ///
    /// Both states are JSON objects whose keys are the top-level names (anything else counts as
    /// an empty state). JSON integers become CEL `int` (or `uint` above `i64::MAX`), other
    /// numbers `double`.
    ///
    /// # Errors
    ///
    /// A message when the assertion cannot be evaluated: a missing key, an index out of range
    /// (``index -1 out of range for `activities` (length 0)``), a type mismatch, or a result
    /// that is not a bool (`assertion evaluated to int 3, expected a bool`). A comparison that
    /// evaluates to `false` is not an error but an [`Evaluation`] with `passed == false`.
    pub fn evaluate(
        &self,
        seeded_state: &serde_json::Value,
        final_state: &serde_json::Value,
    ) -> Result<Evaluation, String> {
        self.evaluate_in(&States::new(seeded_state, final_state))
    }

    /// [`Assertion::evaluate`] on states already converted: a run's assertions share one
    /// conversion (converting the states cost more than evaluating the assertions).
    ///
    /// # Errors
    ///
    /// As [`Assertion::evaluate`].
    pub fn evaluate_in(&self, states: &States) -> Result<Evaluation, String> {
        if self.operators > INLINE_OPERATORS {
            return on_large_stack(|| self.evaluate_inline(states))
                .unwrap_or_else(|reason| Err(format!("the evaluation could not run: {reason}")));
        }
        self.evaluate_inline(states)
    }

    /// [`Assertion::evaluate_in`] on the caller's thread.
    fn evaluate_inline(&self, states: &States) -> Result<Evaluation, String> {
        let final_state = &states.after;
        match &self.body {
            Body::Plain(expr) => {
                let value = evaluate_expr(expr, final_state, None)?;
                let passed = expect_bool(&value)?;
                Ok(Evaluation {
                    passed,
                    detail: format!("evaluated to {passed}"),
                })
            }
            Body::Comparison(comparison) => self.evaluate_comparison(comparison, states),
        }
    }

    fn evaluate_comparison(
        &self,
        comparison: &Comparison,
        states: &States,
    ) -> Result<Evaluation, String> {
        let final_state = &states.after;
        let baseline = if comparison.uses_baseline {
            let value = evaluate_expr(&comparison.left, &states.seeded, None).map_err(|error| {
                format!(
                    "failed to evaluate baseline `{}` on the seeded state: {error}",
                    comparison.left_text
                )
            })?;
            Some(value)
        } else {
            None
        };
        let left = evaluate_expr(&comparison.left, final_state, baseline.as_ref())?;
        let right = evaluate_expr(&comparison.right, final_state, baseline.as_ref())?;

        let compare = IdedExpr {
            id: 0,
            expr: call(comparison.operator, vec![ident(LEFT_VAR), ident(RIGHT_VAR)]),
        };
        let result = ROOT
            .with(|root| {
                let mut context = root.new_inner_scope();
                context.add_variable_from_value(LEFT_VAR, left.clone());
                context.add_variable_from_value(RIGHT_VAR, right.clone());
                context.resolve(&compare)
            })
            .map_err(|error| {
                format!(
                    "failed to compare {} with {}: {}",
                    describe(&left),
                    describe(&right),
                    execution_message(&error)
                )
            })?;
        let passed = expect_bool(&result)?;

        let mut detail = format!(
            "left `{}` = {}, right `{}` = {}",
            comparison.left_text,
            render(&left),
            comparison.right_text,
            render(&right)
        );
        if let Some(baseline) = &baseline {
            let _ = write!(detail, " (baseline = {})", render(baseline));
        }
        Ok(Evaluation { passed, detail })
    }
}

impl super::Expression {
    /// The value of the expression on `state` (a JSON object whose keys are the top-level
    /// names), as JSON: numbers, strings, bools, lists and maps; instants in their canonical
    /// spelling.
    ///
    /// # Errors
    ///
    /// A message when the expression cannot be evaluated (a missing key, an index out of
    /// range, a type mismatch), or yields a value JSON cannot hold.
    pub fn evaluate(&self, state: &serde_json::Value) -> Result<serde_json::Value, String> {
        let roots = roots_of(state);
        let work = || -> Result<serde_json::Value, String> {
            let value = match &self.0.body {
                Body::Plain(expr) => evaluate_expr(expr, &roots, None)?,
                Body::Comparison(_) => {
                    let states = States {
                        seeded: Vec::new(),
                        after: roots.clone(),
                    };
                    Value::Bool(self.0.evaluate_inline(&states)?.passed)
                }
            };
            to_json(&value)
        };
        if self.0.operators > INLINE_OPERATORS {
            return on_large_stack(work)
                .unwrap_or_else(|reason| Err(format!("the evaluation could not run: {reason}")));
        }
        work()
    }
}

/// A CEL value as JSON; `Err` for what JSON cannot hold (bytes, types, functions).
fn to_json(value: &Value) -> Result<serde_json::Value, String> {
    Ok(match value {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Int(i) => serde_json::Value::from(*i),
        Value::UInt(u) => serde_json::Value::from(*u),
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map_or(serde_json::Value::Null, serde_json::Value::Number),
        Value::String(s) => serde_json::Value::String(s.to_string()),
        Value::List(items) => {
            serde_json::Value::Array(items.iter().map(to_json).collect::<Result<_, _>>()?)
        }
        Value::Map(map) => {
            let mut entries: Vec<(String, serde_json::Value)> = map
                .map
                .iter()
                .map(|(key, value)| {
                    let key = match key {
                        Key::String(s) => s.to_string(),
                        other => render_key(other),
                    };
                    Ok((key, to_json(value)?))
                })
                .collect::<Result<_, String>>()?;
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            serde_json::Value::Object(entries.into_iter().collect())
        }
        other => {
            return Err(format!(
                "the expression yields {}, not a JSON value",
                describe(other)
            ));
        }
    })
}

/// A run's seeded and final states as CEL values, each top-level name with its value
/// (converted once; the values share their contents, so binding them costs no copy).
pub struct States {
    seeded: Vec<(String, Value)>,
    after: Vec<(String, Value)>,
}

impl States {
    /// Converts both states; a state that is not a JSON object binds no names.
    pub fn new(seeded: &serde_json::Value, after: &serde_json::Value) -> States {
        States {
            seeded: roots_of(seeded),
            after: roots_of(after),
        }
    }
}

fn roots_of(state: &serde_json::Value) -> Vec<(String, Value)> {
    match state {
        serde_json::Value::Object(roots) => roots
            .iter()
            .map(|(name, value)| (name.clone(), from_json(value)))
            .collect(),
        _ => Vec::new(),
    }
}

/// Evaluates `expr` with the top-level names of a state bound, and `baseline` if given.
fn evaluate_expr(
    expr: &IdedExpr,
    roots: &[(String, Value)],
    baseline: Option<&Value>,
) -> Result<Value, String> {
    let mut idents = Vec::new();
    identifiers(expr, &mut idents);
    ROOT.with(|root| {
        let mut context = root.new_inner_scope();
        // Only the names the expression can reach are bound: binding converts the whole value
        // again, and a state has many names where an assertion reads one or two. A dotted
        // name (`crm.contacts`) is reachable from its first segment, as CEL resolves
        // qualified names.
        for (name, value) in roots {
            let reachable = idents.iter().any(|ident| {
                name.strip_prefix(ident)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
            });
            if reachable {
                context.add_variable_from_value(name.as_str(), value.clone());
            }
        }
        if let Some(baseline) = baseline {
            context.add_variable_from_value(BASELINE, baseline.clone());
        }
        context
            .resolve(expr)
            .map_err(|error| execution_message(&error))
    })
}

/// Every identifier `expr` mentions, at any depth, in no particular order and with repeats
/// (a comprehension's own variables included: they are only ever used to decide which state
/// names to bind, where a name too many changes nothing).
fn identifiers<'a>(expr: &'a IdedExpr, out: &mut Vec<&'a str>) {
    use cel::common::ast::{EntryExpr, Expr, MapExpr, StructExpr};
    match &expr.expr {
        Expr::Ident(name) => out.push(name),
        Expr::Select(select) => identifiers(&select.operand, out),
        Expr::Call(call) => {
            if let Some(target) = &call.target {
                identifiers(target, out);
            }
            for arg in &call.args {
                identifiers(arg, out);
            }
        }
        Expr::List(list) => list.elements.iter().for_each(|e| identifiers(e, out)),
        Expr::Map(MapExpr { entries }) | Expr::Struct(StructExpr { entries, .. }) => {
            for entry in entries {
                match &entry.expr {
                    EntryExpr::MapEntry(entry) => {
                        identifiers(&entry.key, out);
                        identifiers(&entry.value, out);
                    }
                    EntryExpr::StructField(field) => identifiers(&field.value, out),
                }
            }
        }
        Expr::Comprehension(comprehension) => {
            for part in [
                &comprehension.iter_range,
                &comprehension.accu_init,
                &comprehension.loop_cond,
                &comprehension.loop_step,
                &comprehension.result,
            ] {
                identifiers(part, out);
            }
        }
        Expr::Literal(_) | Expr::Unspecified => {}
    }
}

thread_local! {
    /// The standard CEL environment with the `@` functions, built once per thread: building
    /// it (`Context::default`) cost more than evaluating the assertions themselves. Each
    /// evaluation binds its variables in a fresh child scope, so nothing leaks between
    /// evaluations and the result depends only on the expression and the states.
    static ROOT: Context<'static, 'static> = context();
}

/// A CEL function of two values.
type BinaryFn = fn(Value, Value) -> Result<Value, ExecutionError>;

/// A standard CEL context with the `@` functions the rewrite calls.
fn context() -> Context<'static, 'static> {
    // The standard library and the strings extension (`split`, `substring`, `trim`, ...), so
    // a capture can take a line or a field out of a tool's text result.
    let mut env = cel::Env::stdlib();
    env.add_extension(cel::extensions::strings)
        .expect("the strings extension declares no standard overload");
    let mut context = Context::with_env(Arc::new(env));
    let functions: [(&str, BinaryFn); 4] = [
        (ADD_FN, |l, r| mixed(l, r, |l, r| l + r, |l, r| l + r)),
        (SUB_FN, |l, r| mixed(l, r, |l, r| l - r, |l, r| l - r)),
        (MUL_FN, |l, r| mixed(l, r, |l, r| l * r, |l, r| l * r)),
        (DIV_FN, |l, r| mixed(l, r, |l, r| l / r, |l, r| l / r)),
    ];
    for (name, function) in functions {
        context
            .add_function(name, function)
            .expect("`@` names are never standard overloads");
    }
    context
        .add_function(COUNT_FN, count)
        .expect("`@` names are never standard overloads");
    context
        .add_function(INDEX_FN, index)
        .expect("`@` names are never standard overloads");
    context
        .add_function(MENTIONS_FN, mentions)
        .expect("`mentions` is not a standard overload");
    context
        .add_function(SAYS_FN, says)
        .expect("`says` is not a standard overload");
    context
        .add_function(CONSISTENT_FN, consistent)
        .expect("`consistent` is not a standard overload");
    context
}

/// `text.consistent(records, by, fields)`: whether the text states no value of one record's
/// `fields` next to another record (records named by their `by` fields), as
/// `final_answer.attributes` checks an answer ([`crate::prose::misattribution`]). A text that
/// is not a string states nothing: true.
pub(super) const CONSISTENT_FN: &str = "consistent";

fn consistent(
    This(text): This<Value>,
    records: Value,
    by: Value,
    fields: Value,
) -> Result<Value, ExecutionError> {
    let Value::String(text) = text else {
        return Ok(Value::Bool(true));
    };
    let error = |message: &str| ExecutionError::function_error(CONSISTENT_FN, message);
    let records = to_json(&records).map_err(|message| error(&message))?;
    let records: Vec<&serde_json::Map<String, serde_json::Value>> = records
        .as_array()
        .ok_or_else(|| error("`records` must be a list of records"))?
        .iter()
        .filter_map(serde_json::Value::as_object)
        .collect();
    let names = |value: &Value, what: &str| -> Result<Vec<String>, ExecutionError> {
        let json = to_json(value).map_err(|message| error(&message))?;
        json.as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|item| item.as_str().map(str::to_owned))
                    .collect()
            })
            .ok_or_else(|| error(&format!("`{what}` must be a list of field names")))
    };
    let (by, fields) = (names(&by, "by")?, names(&fields, "fields")?);
    let prose = crate::prose::Prose::new(&text);
    Ok(Value::Bool(
        crate::prose::misattribution(&prose, &records, &by, &fields, &Default::default()).is_none(),
    ))
}

/// `text.mentions(value)`: whether the text mentions the value as a person would write it
/// ([`crate::prose`]: numbers by value in digits or words, dates and times in written
/// forms, text case-insensitively at word boundaries); a list needs every item. A text
/// that is not a string mentions nothing.
pub(super) const MENTIONS_FN: &str = "mentions";

/// `text.says(phrase)`: whether the text asserts the phrase, not negated (`has not shipped`
/// does not say `shipped`).
pub(super) const SAYS_FN: &str = "says";

fn mentions(This(text): This<Value>, wanted: Value) -> Result<Value, ExecutionError> {
    let Value::String(text) = text else {
        return Ok(Value::Bool(false));
    };
    let wanted =
        to_json(&wanted).map_err(|message| ExecutionError::function_error(MENTIONS_FN, message))?;
    let prose = crate::prose::Prose::new(&text);
    let items = match &wanted {
        serde_json::Value::Array(items) => items.iter().collect(),
        one => vec![one],
    };
    let all = !items.is_empty()
        && items.iter().all(|item| {
            crate::prose::Wanted::from_json(item)
                .is_some_and(|wanted| !prose.mentions(&wanted).is_empty())
        });
    Ok(Value::Bool(all))
}

fn says(This(text): This<Value>, phrase: Arc<String>) -> Result<Value, ExecutionError> {
    let Value::String(text) = text else {
        return Ok(Value::Bool(false));
    };
    Ok(Value::Bool(
        crate::prose::Prose::new(&text).says(&phrase, &[]),
    ))
}

/// Applies an arithmetic operator, in `double` when one side is an `int` or `uint` and the
/// other a `double`, else with CEL's own rules.
fn mixed(
    left: Value,
    right: Value,
    cel_op: fn(Value, Value) -> Result<Value, ExecutionError>,
    float_op: fn(f64, f64) -> f64,
) -> Result<Value, ExecutionError> {
    match (as_mixed_float(&left, &right), as_mixed_float(&right, &left)) {
        (Some(l), Some(r)) => Ok(Value::Float(float_op(l, r))),
        _ => cel_op(left, right),
    }
}

/// `value` as an `f64` when it and `other` are numbers of which exactly one is a `double`.
fn as_mixed_float(value: &Value, other: &Value) -> Option<f64> {
    let is_float = |v: &Value| matches!(v, Value::Float(_));
    let is_integer = |v: &Value| matches!(v, Value::Int(_) | Value::UInt(_));
    let mixed = (is_float(value) && is_integer(other)) || (is_integer(value) && is_float(other));
    if !mixed {
        return None;
    }
    // Mixing an int with a double is done in double, rounding beyond 2^53 as JSON does.
    match value {
        Value::Int(i) => Some(*i as f64),
        Value::UInt(u) => Some(*u as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// `x.count`: the map's own `count` entry if it has one, else the size of the list or map.
fn count(target: Value, text: Value) -> Result<Value, ExecutionError> {
    let text = string_of(&text);
    match &target {
        Value::Map(map) => Ok(map
            .map
            .get(&Key::String(Arc::new("count".to_owned())))
            .cloned()
            .unwrap_or_else(|| size_value(map.map.len()))),
        Value::List(list) => Ok(size_value(list.len())),
        other => Err(ExecutionError::function_error(
            COUNT_FN,
            format!(
                "`{text}.count` needs a list or map, but `{text}` is {}",
                describe(other)
            ),
        )),
    }
}

fn size_value(len: usize) -> Value {
    Value::Int(i64::try_from(len).unwrap_or(i64::MAX))
}

/// `x[i]`: list indexing where a negative index counts from the end, and map lookup.
fn index(target: Value, key: Value, text: Value) -> Result<Value, ExecutionError> {
    let text = string_of(&text);
    let fail = |message: String| Err(ExecutionError::function_error(INDEX_FN, message));
    match &target {
        Value::List(list) => {
            let Some(position) = integer_of(&key) else {
                return fail(format!(
                    "cannot index list `{text}` with {}",
                    describe(&key)
                ));
            };
            let len = i128::try_from(list.len()).unwrap_or(i128::MAX);
            let resolved = if position < 0 {
                len + position
            } else {
                position
            };
            match usize::try_from(resolved).ok().and_then(|i| list.get(i)) {
                Some(value) => Ok(value.clone()),
                None => fail(format!(
                    "index {position} out of range for `{text}` (length {})",
                    list.len()
                )),
            }
        }
        Value::Map(map) => {
            let map_key = match &key {
                Value::String(s) => Key::String(s.clone()),
                Value::Int(i) => Key::Int(*i),
                Value::UInt(u) => Key::Uint(*u),
                Value::Bool(b) => Key::Bool(*b),
                other => {
                    return fail(format!(
                        "cannot index map `{text}` with {}",
                        describe(other)
                    ));
                }
            };
            match map.map.get(&map_key) {
                Some(value) => Ok(value.clone()),
                None => fail(format!("no key {} in `{text}`", render(&key))),
            }
        }
        other => fail(format!("cannot index {} `{text}`", describe(other))),
    }
}

/// An integral index: an `int`, a `uint`, or a `double` with no fractional part.
fn integer_of(value: &Value) -> Option<i128> {
    match value {
        Value::Int(i) => Some(i128::from(*i)),
        Value::UInt(u) => Some(i128::from(*u)),
        // Whole doubles below 2^53 convert exactly.
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Some(*f as i128),
        _ => None,
    }
}

fn string_of(value: &Value) -> &str {
    match value {
        Value::String(s) => s.as_str(),
        _ => "?",
    }
}

/// Converts a JSON value to CEL: integers to `int` (`uint` above `i64::MAX`), other numbers to
/// `double`, objects to maps with string keys.
fn from_json(value: &serde_json::Value) -> Value {
    match value {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::Int(i)
            } else if let Some(u) = n.as_u64() {
                Value::UInt(u)
            } else {
                Value::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        // Instants compare as instants: `...T09:00:00+00:00` equals `...T09:00:00Z`.
        serde_json::Value::String(s) => Value::String(Arc::new(
            crate::calendar::canonical_instant(s).unwrap_or_else(|| s.clone()),
        )),
        serde_json::Value::Array(items) => {
            Value::List(Arc::new(items.iter().map(from_json).collect()))
        }
        serde_json::Value::Object(fields) => {
            let map: HashMap<Key, Value> = fields
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), from_json(v)))
                .collect();
            Value::Map(Map { map: Arc::new(map) })
        }
    }
}

/// The bool an assertion evaluated to, or the error for any other value.
fn expect_bool(value: &Value) -> Result<bool, String> {
    match value {
        Value::Bool(b) => Ok(*b),
        other => Err(format!(
            "assertion evaluated to {}, expected a bool",
            describe(other)
        )),
    }
}

/// A CEL error as a lowercase message for users.
fn execution_message(error: &ExecutionError) -> String {
    match error {
        ExecutionError::FunctionError { function, message } if function.starts_with('@') => {
            message.clone()
        }
        ExecutionError::NoSuchKey(key) => format!("no such key `{key}`"),
        ExecutionError::UndeclaredReference(name) => {
            format!("unknown name `{name}` (not in the state)")
        }
        ExecutionError::ValuesNotComparable(left, right) => {
            format!("cannot compare {} with {}", describe(left), describe(right))
        }
        ExecutionError::UnsupportedBinaryOperator(op, left, right) => {
            format!("cannot {op} {} and {}", describe(left), describe(right))
        }
        ExecutionError::DivisionByZero(value) => format!("division of {} by zero", render(value)),
        other => {
            let message = other.to_string();
            let mut chars = message.chars();
            match chars.next() {
                Some(first) => first.to_lowercase().chain(chars).collect(),
                None => message,
            }
        }
    }
}

/// A value with its CEL type name: `int 3`, `string "won"`.
fn describe(value: &Value) -> String {
    let type_name = match value {
        Value::Float(_) => "double".to_owned(),
        other => other.type_of().to_string(),
    };
    format!("{type_name} {}", render(value))
}

/// A value in JSON-like notation, map keys sorted, cut at [`MAX_VALUE_CHARS`].
fn render(value: &Value) -> String {
    let mut out = String::new();
    render_into(value, &mut out);
    if out.chars().count() > MAX_VALUE_CHARS {
        let cut: String = out.chars().take(MAX_VALUE_CHARS).collect();
        return format!("{cut}…");
    }
    out
}

fn render_into(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::UInt(u) => {
            let _ = write!(out, "{u}u");
        }
        Value::Float(f) => {
            let _ = write!(out, "{f:?}");
        }
        Value::String(s) => out.push_str(&serde_json::Value::String(s.to_string()).to_string()),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                render_into(item, out);
                if out.len() > MAX_VALUE_CHARS * 4 {
                    break;
                }
            }
            out.push(']');
        }
        Value::Map(map) => {
            let mut entries: Vec<(String, &Value)> = map
                .map
                .iter()
                .map(|(key, value)| (render_key(key), value))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            out.push('{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{key}: ");
                render_into(value, out);
                if out.len() > MAX_VALUE_CHARS * 4 {
                    break;
                }
            }
            out.push('}');
        }
        other => {
            let _ = write!(out, "{other:?}");
        }
    }
}

fn render_key(key: &Key) -> String {
    match key {
        Key::String(s) => serde_json::Value::String(s.to_string()).to_string(),
        Key::Int(i) => i.to_string(),
        Key::Uint(u) => format!("{u}u"),
        Key::Bool(b) => b.to_string(),
    }
}

#[cfg(test)]
mod tests {
    //! Evaluating assertions: baseline, count, negative indices, mixed numbers, clear errors.

    use super::*;
    use serde_json::json;

    fn roots() -> Vec<String> {
        ["contacts", "activities", "deals", "settings"]
            .into_iter()
            .map(String::from)
            .collect()
    }

    fn seeded() -> serde_json::Value {
        json!({
            "contacts": [
                {"id": "C-001", "name": "Grace", "email": "grace@example.com"},
                {"id": "C-002", "name": "Linus", "email": "linus@example.com"},
                {"id": "C-003", "name": "Barbara", "email": "barbara@example.com"}
            ],
            "activities": [],
            "deals": [
                {"id": "D-1", "stage": "won", "amount": 5000.0},
                {"id": "D-2", "stage": "open", "amount": 1200}
            ],
            "settings": {"count": 7, "currency": "EUR"}
        })
    }

    /// The seeded state after an agent added Ada and logged a call with her.
    fn after_good_run() -> serde_json::Value {
        let mut state = seeded();
        state["contacts"]
            .as_array_mut()
            .expect("contacts is a list")
            .push(json!({"id": "C-004", "name": "Ada", "email": "ada@example.com"}));
        state["activities"] = json!([
            {"id": "A-1", "type": "email", "contact_id": "C-001"},
            {"id": "A-2", "type": "call", "contact_id": "C-004"}
        ]);
        state["deals"][1]["stage"] = json!("won");
        state
    }

    fn parse(source: &str) -> Assertion {
        Assertion::parse(source, &roots())
            .unwrap_or_else(|error| panic!("`{source}` should parse: {error}"))
    }

    fn evaluate(source: &str, final_state: &serde_json::Value) -> Result<Evaluation, String> {
        parse(source).evaluate(&seeded(), final_state)
    }

    fn passes(source: &str, final_state: &serde_json::Value) -> bool {
        evaluate(source, final_state)
            .unwrap_or_else(|error| panic!("`{source}` should evaluate: {error}"))
            .passed
    }

    #[test]
    fn assertions_at_the_size_bounds_parse_and_evaluate_on_an_ordinary_thread() {
        let deep = format!("{}contacts.count{} == 3", "(".repeat(32), ")".repeat(32));
        assert!(passes(&deep, &seeded()));
        // 247 `+`, one `==` (two characters): 249 operator characters.
        let long = format!("{} == 248", vec!["1"; 248].join(" + "));
        assert!(passes(&long, &seeded()));
        assert!(!passes(&long.replace("== 248", "== 247"), &seeded()));
        // The largest evaluated on the caller's thread: 46 `+` and `==`.
        let inline = format!("{} == 47", vec!["1"; 47].join(" + "));
        assert_eq!(parse(&inline).operators, INLINE_OPERATORS);
        assert!(passes(&inline, &seeded()));
    }

    // The examples from the scenario format, each passing and failing.

    #[test]
    fn count_plus_one_over_baseline_passes_when_one_contact_was_added() {
        let evaluation = evaluate("contacts.count == baseline + 1", &after_good_run());
        assert_eq!(
            evaluation,
            Ok(Evaluation {
                passed: true,
                detail: "left `contacts.count` = 4, right `baseline + 1` = 4 (baseline = 3)"
                    .to_owned(),
            })
        );
    }

    #[test]
    fn count_plus_one_over_baseline_fails_when_nothing_was_added() {
        let evaluation = evaluate("contacts.count == baseline + 1", &seeded());
        assert_eq!(
            evaluation,
            Ok(Evaluation {
                passed: false,
                detail: "left `contacts.count` = 3, right `baseline + 1` = 4 (baseline = 3)"
                    .to_owned(),
            })
        );
    }

    #[test]
    fn count_equal_to_baseline_passes_when_unchanged_and_fails_after_an_insert() {
        assert!(passes("contacts.count == baseline", &seeded()));
        let evaluation = evaluate("contacts.count == baseline", &after_good_run());
        assert_eq!(
            evaluation,
            Ok(Evaluation {
                passed: false,
                detail: "left `contacts.count` = 4, right `baseline` = 3 (baseline = 3)".to_owned(),
            })
        );
    }

    #[test]
    fn last_activity_links_to_last_contact_passes_and_fails() {
        let source = "activities[-1].contact_id == contacts[-1].id";
        assert_eq!(
            evaluate(source, &after_good_run()),
            Ok(Evaluation {
                passed: true,
                detail: "left `activities[-1].contact_id` = \"C-004\", \
                         right `contacts[-1].id` = \"C-004\""
                    .to_owned(),
            })
        );
        let mut state = after_good_run();
        state["activities"][1]["contact_id"] = json!("C-001");
        assert_eq!(
            evaluate(source, &state),
            Ok(Evaluation {
                passed: false,
                detail: "left `activities[-1].contact_id` = \"C-001\", \
                         right `contacts[-1].id` = \"C-004\""
                    .to_owned(),
            })
        );
    }

    #[test]
    fn filter_and_size_is_ordinary_cel() {
        let source = r#"deals.filter(d, d.stage == "won").size() == 2"#;
        assert!(passes(source, &after_good_run()));
        assert_eq!(
            evaluate(source, &seeded()),
            Ok(Evaluation {
                passed: false,
                detail: "left `deals.filter(d, d.stage == \"won\").size()` = 1, right `2` = 2"
                    .to_owned(),
            })
        );
    }

    #[test]
    fn exists_passes_when_a_contact_has_the_email_and_fails_otherwise() {
        let source = r#"contacts.exists(c, c.email == "ada@example.com")"#;
        assert_eq!(
            evaluate(source, &after_good_run()),
            Ok(Evaluation {
                passed: true,
                detail: "evaluated to true".to_owned(),
            })
        );
        assert_eq!(
            evaluate(source, &seeded()),
            Ok(Evaluation {
                passed: false,
                detail: "evaluated to false".to_owned(),
            })
        );
    }

    #[test]
    fn last_activity_type_passes_for_a_call_and_fails_for_an_email() {
        let source = r#"activities[-1].type == "call""#;
        assert!(passes(source, &after_good_run()));
        let mut state = after_good_run();
        state["activities"][1]["type"] = json!("email");
        assert_eq!(
            evaluate(source, &state),
            Ok(Evaluation {
                passed: false,
                detail: "left `activities[-1].type` = \"email\", right `\"call\"` = \"call\""
                    .to_owned(),
            })
        );
    }

    // `count`

    #[test]
    fn count_is_the_size_of_a_list_and_of_a_map_without_a_count_key() {
        assert!(passes("deals.count == 2", &seeded()));
        assert!(passes("contacts[0].count == 3", &seeded()));
        assert!(passes("activities.count == 0", &seeded()));
    }

    #[test]
    fn count_is_the_field_when_the_map_has_a_count_key() {
        assert!(passes("settings.count == 7", &seeded()));
        assert!(passes("size(settings) == 2", &seeded()));
    }

    #[test]
    fn count_works_inside_comprehensions_and_after_filter() {
        assert!(passes(
            r#"deals.filter(d, d.stage == "won").count == 2"#,
            &after_good_run()
        ));
        assert!(passes(
            "[contacts, deals].all(xs, xs.count >= 2)",
            &seeded()
        ));
    }

    #[test]
    fn has_count_is_a_presence_test_not_a_size() {
        assert!(passes("has(settings.count)", &seeded()));
        assert!(!passes("has(contacts[0].count)", &seeded()));
    }

    #[test]
    fn count_of_a_scalar_is_an_evaluation_error() {
        assert_eq!(
            evaluate("contacts[0].name.count == 5", &seeded()),
            Err(
                "`contacts[0].name.count` needs a list or map, but `contacts[0].name` is \
                 string \"Grace\""
                    .to_owned()
            )
        );
    }

    // Negative indices and range errors.

    #[test]
    fn negative_indices_count_from_the_end() {
        let state = seeded();
        assert!(passes(r#"contacts[-1].name == "Barbara""#, &state));
        assert!(passes(r#"contacts[-2].name == "Linus""#, &state));
        assert!(passes(r#"contacts[-3].name == "Grace""#, &state));
        assert!(passes(r#"contacts[0].name == "Grace""#, &state));
        assert!(passes(r#"contacts[2].name == "Barbara""#, &state));
    }

    #[test]
    fn a_computed_negative_index_counts_from_the_end_too() {
        assert!(passes(
            r#"contacts[0 - contacts.count].name == "Grace""#,
            &seeded()
        ));
    }

    #[test]
    fn negative_index_on_an_empty_list_is_out_of_range() {
        assert_eq!(
            evaluate(r#"activities[-1].type == "call""#, &seeded()),
            Err("index -1 out of range for `activities` (length 0)".to_owned())
        );
    }

    #[test]
    fn index_past_either_end_is_out_of_range() {
        assert_eq!(
            evaluate(r#"contacts[-4].name == "x""#, &seeded()),
            Err("index -4 out of range for `contacts` (length 3)".to_owned())
        );
        assert_eq!(
            evaluate(r#"contacts[3].name == "x""#, &seeded()),
            Err("index 3 out of range for `contacts` (length 3)".to_owned())
        );
    }

    #[test]
    fn out_of_range_names_a_computed_list_as_written() {
        assert_eq!(
            evaluate(
                r#"deals.filter(d, d.stage == "lost")[-1].amount > 0"#,
                &seeded()
            ),
            Err(
                "index -1 out of range for `deals.filter(d, d.stage == \"lost\")` (length 0)"
                    .to_owned()
            )
        );
    }

    #[test]
    fn out_of_range_inside_exists_is_an_error() {
        assert_eq!(
            evaluate(
                "contacts.exists(c, activities[-1].contact_id == c.id)",
                &seeded()
            ),
            Err("index -1 out of range for `activities` (length 0)".to_owned())
        );
    }

    #[test]
    fn out_of_range_quotes_non_ascii_source_exactly() {
        assert_eq!(
            evaluate(
                r#"contacts.filter(c, c.name == "Zoë")[0].id == "x""#,
                &seeded()
            ),
            Err(
                "index 0 out of range for `contacts.filter(c, c.name == \"Zoë\")` (length 0)"
                    .to_owned()
            )
        );
    }

    #[test]
    fn comparison_detail_quotes_non_ascii_sides_exactly() {
        assert_eq!(
            evaluate(r#"contacts[0].name == "Zoë""#, &seeded()),
            Ok(Evaluation {
                passed: false,
                detail: "left `contacts[0].name` = \"Grace\", right `\"Zoë\"` = \"Zoë\"".to_owned(),
            })
        );
    }

    #[test]
    fn multi_line_assertion_evaluates() {
        assert!(passes(
            "contacts.count == 3 &&\n  deals.count == 2",
            &seeded()
        ));
    }

    #[test]
    fn indexing_a_map_by_key_still_works() {
        assert!(passes(r#"settings["currency"] == "EUR""#, &seeded()));
        assert_eq!(
            evaluate(r#"settings["locale"] == "de""#, &seeded()),
            Err("no key \"locale\" in `settings`".to_owned())
        );
    }

    #[test]
    fn missing_field_is_an_evaluation_error() {
        assert_eq!(
            evaluate("contacts[0].phone == \"1\"", &seeded()),
            Err("no such key `phone`".to_owned())
        );
    }

    // `baseline`

    #[test]
    fn baseline_is_the_left_side_on_the_seeded_state_for_every_comparison() {
        let state = after_good_run();
        assert!(passes("contacts.count > baseline", &state));
        assert!(passes("contacts.count >= baseline + 1", &state));
        assert!(passes("contacts.count != baseline", &state));
        assert!(!passes("contacts.count < baseline", &state));
        assert!(passes("contacts.count <= baseline * 2", &state));
        assert!(passes(
            r#"deals.filter(d, d.stage == "won").size() == baseline + 1"#,
            &state
        ));
    }

    #[test]
    fn baseline_can_be_a_string() {
        let mut state = seeded();
        state["contacts"][0]["name"] = json!("Grace Hopper");
        assert!(passes(
            r#"contacts[0].name == baseline + " Hopper""#,
            &state
        ));
    }

    #[test]
    fn baseline_that_cannot_be_evaluated_on_the_seeded_state_is_an_error() {
        assert_eq!(
            evaluate("activities[-1].id == baseline", &after_good_run()),
            Err(
                "failed to evaluate baseline `activities[-1].id` on the seeded state: \
                 index -1 out of range for `activities` (length 0)"
                    .to_owned()
            )
        );
    }

    #[test]
    fn a_comprehension_variable_named_baseline_is_not_the_baseline() {
        assert!(passes(
            r#"contacts.exists(baseline, baseline.name == "Grace")"#,
            &seeded()
        ));
    }

    #[test]
    fn parenthesized_comparison_is_still_top_level() {
        assert_eq!(
            evaluate("(contacts.count == baseline + 1)", &after_good_run()),
            Ok(Evaluation {
                passed: true,
                detail: "left `contacts.count` = 4, right `baseline + 1` = 4 (baseline = 3)"
                    .to_owned(),
            })
        );
    }

    // Names

    #[test]
    fn cel_type_names_are_known() {
        assert!(passes("type(contacts.count) == int", &seeded()));
        assert!(passes("type(deals[0].amount) == double", &seeded()));
    }

    #[test]
    fn a_root_missing_from_the_state_at_evaluation_is_an_error() {
        let assertion = parse("deals.count == 2");
        assert_eq!(
            assertion.evaluate(&json!({}), &json!({"contacts": []})),
            Err("unknown name `deals` (not in the state)".to_owned())
        );
    }

    // Syntax errors

    // Numbers

    #[test]
    fn int_and_double_are_equal_by_value() {
        let state = seeded();
        assert!(passes("1 == 1.0", &state));
        assert!(passes("deals[0].amount == 5000", &state));
        assert!(passes("deals[1].amount == 1200.0", &state));
        assert!(passes("deals[0].amount > 4999", &state));
        assert!(!passes("deals[0].amount == 5000.5", &state));
        assert!(passes("deals.exists(d, d.amount == 1200)", &state));
    }

    #[test]
    fn arithmetic_mixing_int_and_double_is_done_in_double() {
        let state = seeded();
        assert!(passes("deals[0].amount + 1 == 5001", &state));
        assert!(passes("deals[1].amount * 1.5 == 1800", &state));
        assert!(passes("deals[0].amount - deals[1].amount == 3800", &state));
        assert!(passes("deals[1].amount / 2.0 == 600", &state));
        assert!(passes("deals[1].amount / 5 == 240", &state));
        assert!(passes("7 / 2 == 3", &state));
    }

    #[test]
    fn baseline_of_a_double_field_accepts_an_int_step() {
        let mut state = seeded();
        state["deals"][0]["amount"] = json!(5500.0);
        assert_eq!(
            evaluate("deals[0].amount == baseline + 500", &state),
            Ok(Evaluation {
                passed: true,
                detail: "left `deals[0].amount` = 5500.0, right `baseline + 500` = 5500.0 \
                         (baseline = 5000.0)"
                    .to_owned(),
            })
        );
    }

    // Results that are not a bool

    #[test]
    fn non_bool_result_is_an_evaluation_error_naming_type_and_value() {
        assert_eq!(
            evaluate("contacts.count", &seeded()),
            Err("assertion evaluated to int 3, expected a bool".to_owned())
        );
        assert_eq!(
            evaluate("contacts[0].name", &seeded()),
            Err("assertion evaluated to string \"Grace\", expected a bool".to_owned())
        );
        assert_eq!(
            evaluate("deals[0].amount", &seeded()),
            Err("assertion evaluated to double 5000.0, expected a bool".to_owned())
        );
    }

    #[test]
    fn comparison_of_unrelated_types_is_an_evaluation_error() {
        assert_eq!(
            evaluate(r#"contacts.count < "3""#, &seeded()),
            Err(
                "failed to compare int 3 with string \"3\": found no matching overload for \
                 '_<_' applied to '(int, string)'"
                    .to_owned()
            )
        );
    }

    #[test]
    fn maps_render_with_sorted_keys() {
        assert_eq!(
            evaluate(r#"settings == {"a": 1}"#, &seeded()),
            Ok(Evaluation {
                passed: false,
                detail: "left `settings` = {\"count\": 7, \"currency\": \"EUR\"}, \
                         right `{\"a\": 1}` = {\"a\": 1}"
                    .to_owned(),
            })
        );
    }

    #[test]
    fn identifiers_are_found_at_every_depth_of_an_expression() {
        let (expr, _) = cel::parser::Parser::default()
            .parse_with_source_info(
                "contacts.exists(c, c.id == deals[0].contact) && {'k': users.size()}['k'] > [orders][0].size()",
            )
            .expect("valid CEL");
        let mut found = Vec::new();
        identifiers(&expr, &mut found);
        found.sort_unstable();
        found.dedup();
        // `c` is the comprehension's variable; the macro's accumulator is named by the parser.
        let names: Vec<&str> = found
            .into_iter()
            .filter(|name| !name.starts_with('@'))
            .collect();
        assert_eq!(names, ["c", "contacts", "deals", "orders", "users"]);
    }

    #[test]
    fn only_the_names_an_assertion_reads_are_needed_in_the_state() {
        // Each assertion gets the names it reads bound, whichever of the state's names those are.
        let state = json!({"contacts": [{"id": "c1"}], "deals": [1, 2, 3]});
        assert!(passes("contacts.size() == 1", &state));
        assert!(passes(
            "deals.size() == 3 && contacts[0].id == 'c1'",
            &state
        ));
    }

    #[test]
    fn evaluation_is_deterministic() {
        let assertion = parse(r#"contacts[-1] == {"id": "C-9"}"#);
        let first = assertion.evaluate(&seeded(), &after_good_run());
        for _ in 0..20 {
            assert_eq!(assertion.evaluate(&seeded(), &after_good_run()), first);
        }
    }
}
