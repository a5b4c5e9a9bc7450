//! Deriving broken trajectories from a scenario's reference run.

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::catalog::Catalog;
use crate::scenario::{ExpectedCall, Fault, FaultKind, PlannedCall, Scenario};
use crate::trace::CallRecord;

/// The kind of deliberate mistake a mutant makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MutantKind {
    /// One call of the reference run is left out.
    DropCall,
    /// One call goes to the tool's look-alike (see `catalog::LOOK_ALIKES`) instead.
    LookAlikeTool,
    /// One checked argument of a call gets another value.
    ChangedArgument,
    /// An id carried from an earlier result is replaced by an invented one.
    InventedId,
    /// Harmless read-only calls are appended until the call budget is exceeded.
    ExceededBudget,
    /// A call listed in `forbidden_calls` is appended.
    ForbiddenCall,
    /// The final answer ignores the results: it is replaced by "Done.".
    IgnoredResult,
    /// A call an expected call says `succeeds` fails: a server error is injected into it.
    FailedCall,
}

/// A broken trajectory: the calls to replay and the final answer to score.
#[derive(Debug, Clone)]
pub struct Mutant {
    /// The kind of mistake.
    pub kind: MutantKind,
    /// The mistake in words, naming the call (1-based) and argument.
    pub description: String,
    /// The calls, in order.
    pub calls: Vec<PlannedCall>,
    /// The final answer.
    pub answer: Option<String>,
    /// A fault the replay injects besides the scenario's own (the failed-call mutant's).
    pub fault: Option<Fault>,
}

/// A tool that reads nothing from the state: padding for the budget mutant.
const PADDING_TOOL: &str = "util_current_time";

/// Every mutant of one reference run: `trace` is its trajectory, `pairing` maps each expected
/// call to its trace index (as the scorer paired them), `answer` its final answer.
///
/// Order: dropped calls, look-alikes, changed arguments, invented ids (per call), then the
/// budget, forbidden-call and ignored-result mutants. A kind that does not apply (no budget,
/// no forbidden calls, no answer checks) yields nothing.
///
/// Reads the scenario leaves free are not mutated: a call to a read-only tool that no
/// required expected call pins, and the arguments of an optional expected call. A mistake
/// in such a read shows in the answer, which a mutant keeps as the reference gave it, so the
/// mutant would only restate that the route is free (an equivalent mutant).
pub fn derive(
    scenario: &Scenario,
    trace: &[CallRecord],
    pairing: &[Option<usize>],
    answer: Option<&str>,
    catalog: &Catalog,
) -> Vec<Mutant> {
    let calls: Vec<PlannedCall> = trace
        .iter()
        .map(|call| PlannedCall {
            tool: call.tool.clone(),
            arguments: call.arguments.as_object().cloned().unwrap_or_default(),
            turn: None,
        })
        .collect();
    let reference = Reference {
        scenario,
        pairing,
        catalog,
        calls,
        answer: answer.map(str::to_string),
    };
    let mut mutants = Vec::new();
    reference.call_mutants(&mut mutants);
    for (i, expected) in scenario.expected_calls.iter().enumerate() {
        let Some(j) = pairing.get(i).copied().flatten() else {
            continue;
        };
        if !expected.optional {
            reference.argument_mutants(expected, j, &mut mutants);
        }
        if expected.succeeds {
            mutants.push(reference.failed_call(j));
        }
    }
    mutants.extend(reference.budget_mutant());
    reference.forbidden_mutants(&mut mutants);
    // An answer that says nothing is a broken one only where the answer must say something.
    if scenario.final_answer.demands_content() {
        mutants.push(Mutant {
            kind: MutantKind::IgnoredResult,
            description: "final answer replaced by \"Done.\"".to_string(),
            calls: reference.calls,
            answer: Some("Done.".to_string()),
            fault: None,
        });
    }
    mutants
}

/// A scenario's reference run, which each mutant copies with one mistake.
struct Reference<'a> {
    scenario: &'a Scenario,
    /// For each expected call, the index of the call it was paired with.
    pairing: &'a [Option<usize>],
    catalog: &'a Catalog,
    /// The reference run's calls, in order.
    calls: Vec<PlannedCall>,
    answer: Option<String>,
}

impl Reference<'_> {
    /// A mutant with `calls` and the reference's own answer.
    fn mutant(&self, kind: MutantKind, description: String, calls: Vec<PlannedCall>) -> Mutant {
        Mutant {
            kind,
            description,
            calls,
            answer: self.answer.clone(),
            fault: None,
        }
    }

    /// The reference run with call `j` failing: a server error injected into it (counted
    /// among the calls of its tool), the calls and the answer unchanged.
    fn failed_call(&self, j: usize) -> Mutant {
        let tool = &self.calls[j].tool;
        let nth = self.calls[..=j].iter().filter(|c| c.tool == *tool).count();
        Mutant {
            kind: MutantKind::FailedCall,
            description: format!("call {} `{tool}` fails (server error)", j + 1),
            calls: self.calls.clone(),
            answer: self.answer.clone(),
            fault: Some(Fault {
                tool: tool.clone(),
                on_call: u32::try_from(nth).unwrap_or(u32::MAX),
                times: 1,
                error: FaultKind::ServerError,
            }),
        }
    }

    /// Whether call `j` is a read the scenario leaves free: a read-only tool that no required
    /// expected call is paired with.
    fn is_free_read(&self, j: usize) -> bool {
        let pinned = self
            .scenario
            .expected_calls
            .iter()
            .zip(self.pairing)
            .any(|(expected, paired)| *paired == Some(j) && !expected.optional);
        self.scenario.is_read_only(&self.calls[j].tool) && !pinned
    }

    /// Per call that is not a free read: the run without it, and the run with it sent to
    /// its tool's look-alike (when the tool has one).
    fn call_mutants(&self, mutants: &mut Vec<Mutant>) {
        let calls = &self.calls;
        for (j, call) in calls.iter().enumerate() {
            if self.is_free_read(j) {
                continue;
            }
            let mut dropped = calls.clone();
            dropped.remove(j);
            let description = format!("call {} `{}` dropped", j + 1, call.tool);
            mutants.push(self.mutant(MutantKind::DropCall, description, dropped));
            if let Some(other) = self.catalog.look_alike(&call.tool) {
                let mut swapped = calls.clone();
                swapped[j].tool = other.name.clone();
                let description =
                    format!("call {} `{}` sent to `{}`", j + 1, call.tool, other.name);
                mutants.push(self.mutant(MutantKind::LookAlikeTool, description, swapped));
            }
        }
    }

    /// For required expected call `expected`, paired with call `j`: each checked argument
    /// changed (the first argument of an unchecked write), then each carried id invented.
    fn argument_mutants(&self, expected: &ExpectedCall, j: usize, mutants: &mut Vec<Mutant>) {
        let call = &self.calls[j];
        let carried: Vec<&str> = expected
            .args_from_prior
            .iter()
            .map(|p| p.argument.as_str())
            .collect();
        let mut checked: Vec<&str> = expected.args_match.keys().map(String::as_str).collect();
        if checked.is_empty() && carried.is_empty() && !self.is_free_read(j) && !expected.read_only
        {
            checked.extend(call.arguments.keys().map(String::as_str).take(1));
        }
        for name in checked {
            let Some(value) = call.arguments.get(name) else {
                continue;
            };
            let schema = self
                .catalog
                .tool(&call.tool)
                .map(|tool| tool.input_schema()["properties"][name].clone())
                .unwrap_or(Value::Null);
            let altered = alter(value, &schema);
            let description = format!(
                "call {} `{}`: `{name}` changed to {altered}",
                j + 1,
                call.tool
            );
            let mut changed = self.calls.clone();
            changed[j].arguments.insert(name.to_string(), altered);
            mutants.push(self.mutant(MutantKind::ChangedArgument, description, changed));
        }
        for name in carried {
            let Some(value) = call.arguments.get(name) else {
                continue;
            };
            let invented = invent(value);
            let description = format!(
                "call {} `{}`: carried `{name}` replaced by invented {invented}",
                j + 1,
                call.tool
            );
            let mut changed = self.calls.clone();
            changed[j].arguments.insert(name.to_string(), invented);
            mutants.push(self.mutant(MutantKind::InventedId, description, changed));
        }
    }

    /// The run padded with harmless reads one past the tightest budget that reads can break
    /// (all calls, or reads alone); `None` without such a budget.
    fn budget_mutant(&self) -> Option<Mutant> {
        let scenario = self.scenario;
        let calls = &self.calls;
        let reads = calls
            .iter()
            .filter(|call| scenario.is_read_only(&call.tool))
            .count();
        let (budget, used, what) = [
            scenario.max_calls.map(|b| (b, calls.len(), "calls")),
            scenario.max_reads.map(|b| (b, reads, "reads")),
        ]
        .into_iter()
        .flatten()
        .min_by_key(|(budget, used, _)| (*budget as usize).saturating_sub(*used))?;
        let mut padded = calls.clone();
        let padding = (budget as usize + 1).saturating_sub(used);
        padded.extend((0..padding).map(|_| PlannedCall {
            tool: PADDING_TOOL.to_string(),
            arguments: Map::new(),
            turn: None,
        }));
        let description = format!("{} {what} against a budget of {budget}", used + padding);
        Some(self.mutant(MutantKind::ExceededBudget, description, padded))
    }

    /// Per forbidden call: the run with that call appended. An `args_regex` argument gets a
    /// string its pattern matches (an array of it when the tool takes an array); a forbidden
    /// call whose pattern yields no such string gets no mutant.
    fn forbidden_mutants(&self, mutants: &mut Vec<Mutant>) {
        'forbidden: for forbidden in &self.scenario.forbidden_calls {
            let mut extended = self.calls.clone();
            let mut arguments = forbidden.args_match.clone();
            for (name, items) in &forbidden.args_contains {
                arguments.insert(name.clone(), items.clone());
            }
            for (name, pattern) in &forbidden.args_regex {
                let Some(text) = sample_match(pattern) else {
                    continue 'forbidden;
                };
                let is_array = self
                    .catalog
                    .tool(&forbidden.tool)
                    .is_some_and(|tool| tool.input_schema()["properties"][name]["type"] == "array");
                let value = if is_array { json!([text]) } else { json!(text) };
                arguments.insert(name.clone(), value);
            }
            extended.push(PlannedCall {
                tool: forbidden.tool.clone(),
                arguments,
                turn: None,
            });
            let description = format!("forbidden `{}` called", forbidden.tool);
            mutants.push(self.mutant(MutantKind::ForbiddenCall, description, extended));
        }
    }
}

/// A string `pattern` matches, built from its syntax: literals as written, a class's first
/// character, the first branch of an alternation, a repetition at its minimum (at least
/// once). `None` when the built string does not match (look-arounds, word boundaries).
fn sample_match(pattern: &regex::Regex) -> Option<String> {
    use regex_syntax::hir::{Class, HirKind};
    fn build(hir: &regex_syntax::hir::Hir, out: &mut String) {
        match hir.kind() {
            HirKind::Literal(literal) => out.push_str(&String::from_utf8_lossy(&literal.0)),
            HirKind::Class(Class::Unicode(class)) => {
                out.extend(class.ranges().first().map(|range| range.start()));
            }
            HirKind::Class(Class::Bytes(class)) => {
                out.extend(
                    class
                        .ranges()
                        .first()
                        .map(|range| char::from(range.start())),
                );
            }
            HirKind::Repetition(repetition) => {
                for _ in 0..repetition.min.max(1) {
                    build(&repetition.sub, out);
                }
            }
            HirKind::Capture(capture) => build(&capture.sub, out),
            HirKind::Concat(parts) => parts.iter().for_each(|part| build(part, out)),
            HirKind::Alternation(branches) => build(&branches[0], out),
            HirKind::Empty | HirKind::Look(_) => {}
        }
    }
    let hir = regex_syntax::parse(pattern.as_str()).ok()?;
    let mut text = String::new();
    build(&hir, &mut text);
    pattern.is_match(&text).then_some(text)
}

/// A different value of the same shape: the next enum value, a number plus one, the other
/// boolean, an id with its number bumped, a string with a suffix; arrays lose their last item
/// (or alter their only one), objects alter their first field.
pub fn alter(value: &Value, schema: &Value) -> Value {
    if let Some(options) = schema["enum"].as_array()
        && let Some(position) = options.iter().position(|o| o == value)
    {
        return options[(position + 1) % options.len()].clone();
    }
    match value {
        Value::Bool(flag) => Value::Bool(!flag),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Value::from(i + 1),
            None => Value::from(n.as_f64().unwrap_or(0.0) + 1.0),
        },
        Value::String(text) => Value::String(bump(text).unwrap_or_else(|| format!("{text} Ltd"))),
        Value::Array(items) if items.len() > 1 => Value::Array(items[..items.len() - 1].to_vec()),
        Value::Array(items) => match items.first() {
            Some(only) => Value::Array(vec![alter(only, &schema["items"])]),
            None => Value::Array(vec![Value::Null]),
        },
        Value::Object(fields) => {
            let mut fields = fields.clone();
            if let Some((key, inner)) = fields.iter().next().map(|(k, v)| (k.clone(), v.clone())) {
                let altered = alter(&inner, &schema["properties"][&key]);
                fields.insert(key, altered);
            }
            Value::Object(fields)
        }
        Value::Null => Value::from("x"),
    }
}

/// `text` with its trailing number plus one (`C-005` -> `C-006`, `2026-Q1` -> `2026-Q2`),
/// keeping the width; `None` when it does not end in digits.
fn bump(text: &str) -> Option<String> {
    let digits = text.chars().rev().take_while(char::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let (head, tail) = text.split_at(text.len() - digits);
    let next = tail.parse::<u64>().ok()? + 1;
    Some(format!("{head}{next:0digits$}"))
}

/// An id that looks real but exists nowhere: every digit becomes 9 (`C-013` -> `C-999`), or a
/// `-999` suffix when there are no digits; numbers become 999999.
pub fn invent(value: &Value) -> Value {
    match value {
        Value::String(text) => {
            let nines: String = text
                .chars()
                .map(|c| if c.is_ascii_digit() { '9' } else { c })
                .collect();
            if nines == *text || !text.chars().any(|c| c.is_ascii_digit()) {
                Value::String(format!("{text}-999"))
            } else {
                Value::String(nines)
            }
        }
        Value::Number(_) => Value::from(999_999),
        other => alter(other, &Value::Null),
    }
}

#[cfg(test)]
mod tests {
    //! Mutants: an altered value keeps its shape but differs; invented ids look real but are new.

    use super::*;
    use serde_json::json;

    #[test]
    fn a_sample_string_matches_its_pattern_or_there_is_none() {
        let sample = |pattern: &str| sample_match(&regex::Regex::new(pattern).expect("valid"));
        assert_eq!(sample(r"(^|/)\.env$").as_deref(), Some(".env"));
        assert_eq!(sample(r"DROP\s+TABLE").as_deref(), Some("DROP\tTABLE"));
        assert_eq!(sample(r"(?i)reset --hard").as_deref(), Some("RESET --HARD"));
        assert_eq!(sample(r"[0-9]{3}-x").as_deref(), Some("000-x"));
        assert_eq!(sample(r"\bx\b"), Some("x".to_string()));
        assert_eq!(sample(r"a$b"), None, "no string matches");
    }

    #[test]
    fn alter_keeps_the_shape_but_changes_the_value() {
        let schema = json!({"enum": ["call", "email", "meeting", "note"]});
        assert_eq!(alter(&json!("note"), &schema), json!("call"));
        assert_eq!(alter(&json!("C-005"), &Value::Null), json!("C-006"));
        assert_eq!(alter(&json!("2026-Q1"), &Value::Null), json!("2026-Q2"));
        assert_eq!(alter(&json!("Acme"), &Value::Null), json!("Acme Ltd"));
        assert_eq!(alter(&json!(30), &Value::Null), json!(31));
        assert_eq!(alter(&json!(true), &Value::Null), json!(false));
        assert_eq!(
            alter(&json!({"title": "CTO"}), &Value::Null),
            json!({"title": "CTO Ltd"})
        );
        assert_eq!(alter(&json!(["a", "b"]), &Value::Null), json!(["a"]));
    }

    #[test]
    fn invented_ids_look_real_but_differ() {
        assert_eq!(invent(&json!("C-013")), json!("C-999"));
        assert_eq!(invent(&json!("C-999")), json!("C-999-999"));
        assert_eq!(invent(&json!("acme")), json!("acme-999"));
    }
}
