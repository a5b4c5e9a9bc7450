//! Pairing expected calls with the calls the agent made.
//!
//! The pairing is an optimal assignment found by exhaustive search with pruning, never a
//! greedy pass: greedy pairing makes an unordered verdict depend on list order (field case
//! B06, deepeval#3338). Each expected call takes at most one actual call and each actual call
//! serves at most one expected call (B07: calls are matched by position, never by value).
//! The objective, compared in order: most fully satisfied required (not `optional`) expected
//! calls, then most fully satisfied expected calls, then most successful calls among the
//! pairs, then the largest total argument credit.

use serde_json::{Map, Value};

use super::compare::compare;
use super::{OmittedDefaults, ScoringOptions};
use crate::json::{equal_value, short};
use crate::scenario::ExpectedCall;
use crate::scenario::capture::as_number;
use crate::scenario::{Comparator, Unread};
use crate::trace::CallRecord;
use crate::values::{contains, occurs_in};

/// Above this many search nodes the search stops and keeps the best pairing found so far.
const NODE_LIMIT: usize = 200_000;

/// The result of checking one actual call against one expected call.
#[derive(Debug, Clone, PartialEq)]
pub struct PairCheck {
    /// Problems with `args_match` and `args_accept`, empty when they hold.
    pub args_match: Vec<String>,
    /// How lenient rules decided (optional arguments, schema defaults, comparators).
    pub notes: Vec<String>,
    /// Problems with `args_forbid`.
    pub args_forbid: Vec<String>,
    /// Problems with `args_from_prior`.
    pub args_from_prior: Vec<String>,
    /// Problems with `result_contains`.
    pub result_contains: Vec<String>,
    /// Share of the expected call's argument conditions that hold, in 0.0..=1.0 (1.0 when it
    /// has none).
    pub credit: f64,
}

impl PairCheck {
    /// Whether every condition holds.
    pub fn is_full(&self) -> bool {
        self.args_match.is_empty()
            && self.args_forbid.is_empty()
            && self.args_from_prior.is_empty()
            && self.result_contains.is_empty()
    }
}

/// The chosen pairing.
#[derive(Debug, Clone, PartialEq)]
pub struct Pairing {
    /// For each expected call, the index of the actual call it took.
    pub assigned: Vec<Option<usize>>,
    /// Number of expected calls fully satisfied by their call.
    pub full: usize,
    /// Total argument credit over the pairs.
    pub credit: f64,
}

/// Why the arguments of `call`, which are not an object, cannot be checked: they did not parse
/// (the text as sent is quoted), or parsed to something other than an object.
pub fn invalid_arguments(call: &CallRecord) -> String {
    use crate::trace::InvalidCallKind;
    match call.invalid {
        Some(InvalidCallKind::UnparseableArguments | InvalidCallKind::Truncated) => {
            format!("arguments are not valid JSON ({})", short(&call.arguments))
        }
        Some(InvalidCallKind::MissingFunction) => "the call has no function".to_string(),
        Some(InvalidCallKind::ArgumentsNotObject) | None => format!(
            "arguments are not a JSON object ({})",
            short(&call.arguments)
        ),
    }
}

/// Checks `call` against `expected`; `record` is the run record for the pairing so far (read
/// only for `args_from_prior`, so it may be `null` when `expected` has none).
pub fn check_pair(
    expected: &ExpectedCall,
    call: &CallRecord,
    record: &Value,
    options: ScoringOptions,
) -> PairCheck {
    let mut check = PairCheck {
        args_match: Vec::new(),
        notes: Vec::new(),
        args_forbid: Vec::new(),
        args_from_prior: Vec::new(),
        result_contains: Vec::new(),
        credit: 1.0,
    };
    let Some(arguments) = call.arguments.as_object() else {
        let reason = invalid_arguments(call);
        if !expected.args_match.is_empty()
            || !expected.args_accept.is_empty()
            || !expected.args_contains.is_empty()
        {
            check.args_match.push(reason.clone());
        }
        if !expected.args_from_prior.is_empty() {
            check.args_from_prior.push(reason);
        }
        check.credit = 0.0;
        return check;
    };
    let pair = Pair {
        expected,
        call,
        arguments,
    };
    let held = pair.accepted_held(options, &mut check)
        + pair.contains_held(&mut check)
        + pair.result_held(&mut check);
    if expected.closed {
        pair.check_unexpected(&mut check);
    }
    let held = held + pair.forbid_held(&mut check) + pair.prior_held(record, &mut check);
    let total = condition_count(expected);
    if total > 0 {
        check.credit = held as f64 / total as f64;
    }
    check
}

/// How many argument and result conditions `expected` sets: the denominator of the credit.
fn condition_count(expected: &ExpectedCall) -> usize {
    expected.args_match.len()
        + expected.args_accept.len()
        + expected.args_contains.len()
        + expected.args_forbid.len()
        + expected.args_from_prior.len()
        + expected.result_contains.len()
}

/// How the accepted values of one argument read in a problem: the one value, or `one of [..]`.
fn wanted(values: &[Value]) -> String {
    match values {
        [one] => short(one),
        many => format!("one of {}", short(&Value::Array(many.to_vec()))),
    }
}

/// One expected call against one actual call whose arguments are an object. Each `*_held`
/// method checks one section, records its problems and notes in a [`PairCheck`] and returns
/// how many of its conditions held.
struct Pair<'a> {
    expected: &'a ExpectedCall,
    call: &'a CallRecord,
    arguments: &'a Map<String, Value>,
}

impl Pair<'_> {
    /// `args_match` and `args_accept`: each argument equals (or compares as) one accepted value.
    fn accepted_held(&self, options: ScoringOptions, check: &mut PairCheck) -> usize {
        let expected = self.expected;
        let accepted =
            expected
                .args_match
                .iter()
                .map(|(name, value)| (name, std::slice::from_ref(value)))
                .chain(expected.args_accept.iter().map(|(name, values)| {
                    (name, values.as_array().map_or(&[][..], Vec::as_slice))
                }));
        let mut held = 0;
        for (name, values) in accepted {
            let holds = if !expected.applies(&self.call.tool, name) {
                true
            } else {
                match self.arguments.get(name) {
                    Some(actual) => self.sent_holds(name, values, actual, check),
                    None => self.omitted_holds(name, values, options, check),
                }
            };
            held += usize::from(holds);
        }
        held
    }

    /// Whether sent argument `name` matches one of `values` under its comparator.
    fn sent_holds(
        &self,
        name: &str,
        values: &[Value],
        actual: &Value,
        check: &mut PairCheck,
    ) -> bool {
        let expected = self.expected;
        let comparator = expected.args_compare.get(name).copied().unwrap_or_default();
        let at = format!("/{name}");
        let results: Vec<Result<(), String>> = values
            .iter()
            .map(|v| match comparator {
                Comparator::Exact if expected.closed => equal_value(v, actual, &at),
                _ => compare(comparator, v, actual, &at),
            })
            .collect();
        if results.iter().any(Result::is_ok) {
            if comparator != Comparator::Exact {
                check
                    .notes
                    .push(format!("`{name}` compared as {}", comparator.as_str()));
            }
            return true;
        }
        if let [Err(problem)] = results.as_slice() {
            check.args_match.push(problem.clone());
        } else {
            check.args_match.push(format!(
                "`{at}`: expected {}, got {}",
                wanted(values),
                short(actual)
            ));
        }
        false
    }

    /// Whether leaving out argument `name` is allowed: it is optional, a read-only call may read
    /// more broadly, or (with omitted defaults `schema`) its schema default is accepted.
    fn omitted_holds(
        &self,
        name: &str,
        values: &[Value],
        options: ScoringOptions,
        check: &mut PairCheck,
    ) -> bool {
        let expected = self.expected;
        let comparator = expected.args_compare.get(name).copied().unwrap_or_default();
        let default = expected.schema_defaults.get(name);
        let default_accepted =
            default.is_some_and(|d| values.iter().any(|v| compare(comparator, v, d, "").is_ok()));
        if expected
            .args_optional
            .iter()
            .any(|optional| optional == name)
        {
            check.notes.push(format!("`{name}` omitted (optional)"));
            true
        } else if expected.read_only && !expected.args_exact.iter().any(|exact| exact == name) {
            check
                .notes
                .push(format!("`{name}` left out: a broader read"));
            true
        } else if default_accepted && options.omitted_defaults == OmittedDefaults::Schema {
            check.notes.push(format!(
                "`{name}` omitted: its schema default {} is accepted",
                short(default.unwrap_or(&Value::Null))
            ));
            true
        } else if default_accepted {
            check.args_match.push(format!(
                "`{name}` missing, expected {} (its schema default counts only with omitted defaults `schema`)",
                wanted(values)
            ));
            false
        } else {
            check
                .args_match
                .push(format!("`{name}` missing, expected {}", wanted(values)));
            false
        }
    }

    /// `args_contains`: each named list argument contains the listed items.
    fn contains_held(&self, check: &mut PairCheck) -> usize {
        let mut held = 0;
        for (name, items) in &self.expected.args_contains {
            if !self.expected.applies(&self.call.tool, name) {
                held += 1;
                continue;
            }
            let items = items.as_array().map_or(&[][..], Vec::as_slice);
            match self.arguments.get(name) {
                Some(actual) => match contains(items, actual, &format!("/{name}")) {
                    Ok(()) => held += 1,
                    Err(problem) => check.args_match.push(problem),
                },
                None => check.args_match.push(format!(
                    "`{name}` missing, expected a list containing {}",
                    short(&Value::Array(items.to_vec()))
                )),
            }
        }
        held
    }

    /// `result_contains`: each value occurs in the call's result.
    fn result_held(&self, check: &mut PairCheck) -> usize {
        let mut held = 0;
        for wanted in &self.expected.result_contains {
            match &self.call.result {
                Some(result) if occurs_in(wanted, result) => held += 1,
                Some(_) => check
                    .result_contains
                    .push(format!("the result does not contain {}", short(wanted))),
                None => check.result_contains.push(format!(
                    "no result to look for {} in (the call failed)",
                    short(wanted)
                )),
            }
        }
        held
    }

    /// A closed expected call: every argument sent is one it names.
    fn check_unexpected(&self, check: &mut PairCheck) {
        let expected = self.expected;
        for (name, value) in self.arguments {
            let named = expected.args_match.contains_key(name)
                || expected.args_accept.contains_key(name)
                || expected.args_from_prior.iter().any(|p| p.argument == *name);
            if !named {
                check.args_match.push(format!(
                    "`{name}` was sent but is not expected ({})",
                    short(value)
                ));
            }
        }
    }

    /// `args_forbid`: none of the named arguments is sent.
    fn forbid_held(&self, check: &mut PairCheck) -> usize {
        let mut held = 0;
        for name in &self.expected.args_forbid {
            if self.arguments.contains_key(name) && self.expected.applies(&self.call.tool, name) {
                check.args_forbid.push(format!(
                    "`{name}` is forbidden but was sent ({})",
                    short(&self.arguments[name])
                ));
            } else {
                held += 1;
            }
        }
        held
    }

    /// `args_from_prior`: each named argument equals the value its path finds in `record`.
    fn prior_held(&self, record: &Value, check: &mut PairCheck) -> usize {
        let mut held = 0;
        for prior in &self.expected.args_from_prior {
            if !self.expected.applies(&self.call.tool, &prior.argument) {
                held += 1;
                continue;
            }
            let found = prior.from.read(record);
            let source = &prior.from.source;
            let actual = self.arguments.get(&prior.argument);
            match (found, actual) {
                (Err(Unread::NoValue), _) => {
                    let paired = record["calls"][prior.from.call_index].is_null();
                    let why = if paired {
                        format!("calls[{}] has no paired call", prior.from.call_index)
                    } else {
                        "no single value there".to_string()
                    };
                    check.args_from_prior.push(format!(
                        "`{}` must come from `{source}`, but {why}",
                        prior.argument
                    ));
                }
                (Err(Unread::NotCaptured(why)), _) => check.args_from_prior.push(format!(
                    "`{}` must come from `{source}`, but {why}",
                    prior.argument
                )),
                (Ok(_), None) => check.args_from_prior.push(format!(
                    "`{}` missing, must come from `{source}`",
                    prior.argument
                )),
                (Ok(wanted), Some(actual)) => match crate::values::matches(
                    &captured_as(wanted.clone(), prior.from.capture.is_some(), actual),
                    actual,
                    &format!("/{}", prior.argument),
                    false,
                ) {
                    Ok(()) => held += 1,
                    Err(_) => check.args_from_prior.push(format!(
                        "`{}` is {}, but `{source}` is {}: not taken from the earlier result",
                        prior.argument,
                        short(actual),
                        short(&wanted)
                    )),
                },
            }
        }
        held
    }
}

/// A captured value as it is compared with `actual`: a number-looking capture (always a
/// string) as its number when the argument is a number, so `"12"` from a text result matches
/// `12`.
fn captured_as(wanted: Value, captured: bool, actual: &Value) -> Value {
    if captured && actual.is_number() {
        as_number(&wanted).unwrap_or(wanted)
    } else {
        wanted
    }
}

#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
struct Score {
    /// Fully satisfied expected calls that are not optional: first, so an optional call never
    /// takes the call a required one needs.
    required: usize,
    full: usize,
    success: usize,
    credit: f64,
}

impl Score {
    fn add(self, other: Score) -> Score {
        Score {
            required: self.required + other.required,
            full: self.full + other.full,
            success: self.success + other.success,
            credit: self.credit + other.credit,
        }
    }
    fn better_than(self, other: Score) -> bool {
        (self.required, self.full, self.success)
            .cmp(&(other.required, other.full, other.success))
            .then(
                self.credit
                    .partial_cmp(&other.credit)
                    .unwrap_or(std::cmp::Ordering::Equal),
            )
            == std::cmp::Ordering::Greater
    }
}

struct Search<'a> {
    options: ScoringOptions,
    expected: &'a [ExpectedCall],
    trace: &'a [CallRecord],
    strict: bool,
    assigned: Vec<Option<usize>>,
    used: Vec<bool>,
    best: Option<(Score, Vec<Option<usize>>)>,
    nodes: usize,
    /// `(full, credit)` of expected call `i` against trace call `j`, at `i * trace.len() + j`,
    /// once computed. Kept only for expected calls without `args_from_prior`, whose check does
    /// not depend on the rest of the pairing; the search meets each pair many times.
    memo: Vec<Option<(bool, f64)>>,
}

impl Search<'_> {
    fn run(&mut self, i: usize, score: Score, last: Option<usize>) {
        self.nodes += 1;
        if i == self.expected.len() {
            if self
                .best
                .as_ref()
                .is_none_or(|(best, _)| score.better_than(*best))
            {
                self.best = Some((score, self.assigned.clone()));
            }
            return;
        }
        if let Some((best, _)) = &self.best {
            let remaining = self.expected.len() - i;
            let bound = score.add(Score {
                required: remaining,
                full: remaining,
                success: remaining,
                credit: remaining as f64,
            });
            if !bound.better_than(*best) || self.nodes > NODE_LIMIT {
                return;
            }
        }
        let expected = &self.expected[i];
        // The record only feeds `args_from_prior`, and the pairing before `i` is the same for
        // every candidate `j`: build it once per node, and only when it is read.
        let record = if expected.args_from_prior.is_empty() {
            Value::Null
        } else {
            crate::trace::run_record(&self.assigned, self.trace)
        };
        for j in 0..self.trace.len() {
            let call = &self.trace[j];
            let in_order = !self.strict || last.is_none_or(|last| j > last);
            if self.used[j] || !expected.accepts(&call.tool) || !in_order {
                continue;
            }
            let slot = i * self.trace.len() + j;
            let (full, credit) = match self.memo[slot] {
                Some(known) => known,
                None => {
                    let pair = check_pair(expected, call, &record, self.options);
                    let known = (pair.is_full(), pair.credit);
                    if expected.args_from_prior.is_empty() {
                        self.memo[slot] = Some(known);
                    }
                    known
                }
            };
            // An optional call never fails on its arguments: a call that does not meet its
            // checks is taken as not made, and other checks judge it.
            if expected.optional && !full {
                continue;
            }
            let gain = Score {
                required: usize::from(full && !expected.optional),
                full: usize::from(full),
                success: usize::from(call.is_success()),
                credit,
            };
            self.used[j] = true;
            self.assigned[i] = Some(j);
            self.run(i + 1, score.add(gain), Some(j).or(last));
            self.assigned[i] = None;
            self.used[j] = false;
        }
        self.run(i + 1, score, last);
    }
}

/// The best pairing of `expected` with `trace`; with `strict`, paired calls must appear in
/// the expected order.
pub fn pair(
    expected: &[ExpectedCall],
    trace: &[CallRecord],
    strict: bool,
    options: ScoringOptions,
) -> Pairing {
    let mut search = Search {
        options,
        expected,
        trace,
        strict,
        assigned: vec![None; expected.len()],
        used: vec![false; trace.len()],
        best: None,
        nodes: 0,
        memo: vec![None; expected.len() * trace.len()],
    };
    search.run(0, Score::default(), None);
    let (score, assigned) = search.best.unwrap_or_default();
    Pairing {
        assigned,
        full: score.full,
        credit: score.credit,
    }
}

/// Arguments as an object for convenience in tests and the reference agent.
pub fn object(value: &Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}
