//! Matching a trajectory against a reference trajectory as a whole, in the four modes of
//! trajectory-match evaluators (LangChain agentevals' `trajectory_match_mode`: strict,
//! unordered, superset, subset), with exact ([`exact_call`]) or partial ([`partial_call`])
//! argument comparison.
//!
//! Every mode is one optimal assignment ([`matching::pair`], the pairing the deterministic
//! checks use) plus a call budget: the reference's calls are the expected calls, each with
//! the reference's arguments, exactly or as a subset of the call's. Only tool calls count: neither the
//! messages that carried them nor the tool results are compared, and a trajectory is a flat
//! list of calls, so two calls sent in one parallel step keep the order they were recorded in.

use serde_json::{Map, Value};

use super::ScoringOptions;
use super::matching;
use crate::scenario::ExpectedCall;
use crate::trace::CallRecord;

/// How a trajectory must relate to the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchMode {
    /// The same calls in the same order: ordering `strict` and a call budget of the
    /// reference's length.
    Strict,
    /// The same calls in any order, each as often as in the reference: ordering `any` and a
    /// call budget of the reference's length.
    Unordered,
    /// Every reference call made (as often as the reference makes it), in any order; other
    /// calls allowed: ordering `any`, no budget.
    Superset,
    /// Every call made is a reference call, each reference call serving at most one: the
    /// pairing covers the whole trajectory; reference calls may be missing.
    Subset,
}

impl MatchMode {
    /// Every mode, in the order reports list them.
    pub const ALL: [MatchMode; 4] = [
        MatchMode::Strict,
        MatchMode::Unordered,
        MatchMode::Superset,
        MatchMode::Subset,
    ];

    /// The name agentevals gives the mode.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchMode::Strict => "strict",
            MatchMode::Unordered => "unordered",
            MatchMode::Superset => "superset",
            MatchMode::Subset => "subset",
        }
    }
}

/// A reference call as an expected call: `tool` with exactly `arguments` (no argument left
/// out or added, no extra key in a nested object; numbers by value, `5` equals `5.0`).
pub fn exact_call(tool: &str, arguments: Map<String, Value>) -> ExpectedCall {
    ExpectedCall {
        args_match: arguments,
        closed: true,
        ..ExpectedCall::of(tool)
    }
}

/// A reference call whose arguments are a subset of the call's: every reference argument
/// must be present and match (numbers by value, nested objects partially too), and the call
/// may send more (agentevals' superset `tool_args_match_mode`). "Fully matches" is then no
/// longer an equivalence, so [`matches_reference`] decides by a maximum matching.
pub fn partial_call(tool: &str, arguments: Map<String, Value>) -> ExpectedCall {
    // Arrays keep their order, as agentevals compares them.
    let args_compare = arguments
        .keys()
        .map(|name| (name.clone(), crate::scenario::Comparator::Ordered))
        .collect();
    ExpectedCall {
        closed: false,
        args_compare,
        ..exact_call(tool, arguments)
    }
}

/// A recorded call at position `index` of a trajectory: `tool` called with `arguments`, a
/// success without a result.
pub fn recorded_call(index: usize, tool: &str, arguments: Value) -> CallRecord {
    CallRecord::recorded(index, tool, arguments)
}

/// Whether `trace` matches the reference calls `expected` under `mode`. Both lists are in
/// call order; either may be empty (an empty reference matches an empty trace in every mode,
/// and any trace as a superset).
///
/// Decided without the pairing search. With exact arguments only, "this call fully matches
/// that reference call" is an equivalence (same tool, equal arguments), so a greedy first-fit
/// pairing is as large as the best one. With any partial reference call it is not (a
/// reference `{a: 1}` fits both `{a: 1}` and `{a: 1, b: 2}`; first-fit can take the call a
/// later reference needs), so the unordered modes use a maximum bipartite matching
/// (`max_matching`, Kuhn's augmenting paths) instead. `pairing_verdict`, test-only, is the
/// search-based definition, kept for the tests that check both agree with it.
pub fn matches_reference(mode: MatchMode, expected: &[ExpectedCall], trace: &[CallRecord]) -> bool {
    let budget = matches!(mode, MatchMode::Strict | MatchMode::Unordered);
    if budget && trace.len() != expected.len() {
        return false;
    }
    let full = |expected: &ExpectedCall, call: &CallRecord| {
        call.tool == expected.tool
            && if is_plain_exact(expected) {
                equal_arguments(&expected.args_match, &call.arguments)
            } else {
                matching::check_pair(expected, call, &Value::Null, ScoringOptions::default())
                    .is_full()
            }
    };
    match mode {
        MatchMode::Strict => expected
            .iter()
            .zip(trace)
            .all(|(want, call)| full(want, call)),
        _ if expected.iter().any(|want| !want.closed) => {
            let covered = max_matching(expected.len(), trace.len(), |i, j| {
                full(&expected[i], &trace[j])
            });
            match mode {
                MatchMode::Subset => covered == trace.len(),
                _ => covered == expected.len(),
            }
        }
        MatchMode::Unordered | MatchMode::Superset => {
            let mut used = vec![false; trace.len()];
            expected
                .iter()
                .all(|want| take_first(&mut used, |j| full(want, &trace[j])))
        }
        MatchMode::Subset => {
            let mut used = vec![false; expected.len()];
            trace
                .iter()
                .all(|call| take_first(&mut used, |i| full(&expected[i], call)))
        }
    }
}

/// Whether `expected` is an [`exact_call`]: exact arguments and no other condition, so
/// "fully matches" is [`equal_arguments`].
fn is_plain_exact(expected: &ExpectedCall) -> bool {
    expected.closed
        && expected.args_forbid.is_empty()
        && expected.args_from_prior.is_empty()
        && expected.args_accept.is_empty()
        && expected.args_optional.is_empty()
        && expected.args_compare.is_empty()
        && expected.schema_defaults.is_empty()
}

/// Whether `arguments` is an object with exactly the keys of `wanted`, each value equal to
/// the wanted one: what [`matching::check_pair`] decides for an [`exact_call`], without
/// building its messages.
fn equal_arguments(wanted: &Map<String, Value>, arguments: &Value) -> bool {
    arguments
        .as_object()
        .is_some_and(|arguments| crate::json::maps_equal_exactly(wanted, arguments))
}

/// The size of a maximum matching between `left` and `right` items, where `fits(i, j)` says
/// whether left item `i` may pair with right item `j` (Kuhn's algorithm: one augmenting-path
/// search per left item, O(left * left * right) calls of `fits` at most, each pair checked
/// once).
fn max_matching(left: usize, right: usize, fits: impl Fn(usize, usize) -> bool) -> usize {
    let edges: Vec<Vec<usize>> = (0..left)
        .map(|i| (0..right).filter(|&j| fits(i, j)).collect())
        .collect();
    let mut owner: Vec<Option<usize>> = vec![None; right];
    let mut size = 0;
    for i in 0..left {
        let mut seen = vec![false; right];
        if augment(i, &edges, &mut owner, &mut seen) {
            size += 1;
        }
    }
    size
}

/// Finds an augmenting path from left item `i`; on success the matching in `owner` (right
/// item -> its left item) grows by one.
fn augment(i: usize, edges: &[Vec<usize>], owner: &mut [Option<usize>], seen: &mut [bool]) -> bool {
    for &j in &edges[i] {
        if seen[j] {
            continue;
        }
        seen[j] = true;
        if owner[j].is_none_or(|other| augment(other, edges, owner, seen)) {
            owner[j] = Some(i);
            return true;
        }
    }
    false
}

/// Marks the first unused index that `fits` as used; whether there was one.
fn take_first(used: &mut [bool], fits: impl Fn(usize) -> bool) -> bool {
    match (0..used.len()).find(|&index| !used[index] && fits(index)) {
        Some(index) => {
            used[index] = true;
            true
        }
        None => false,
    }
}

/// [`matches_reference`] by the definition: the best pairing ([`matching::pair`], with order
/// in strict mode) covers the reference (or, in subset mode, the trajectory).
#[cfg(test)]
fn pairing_verdict(mode: MatchMode, expected: &[ExpectedCall], trace: &[CallRecord]) -> bool {
    let budget = matches!(mode, MatchMode::Strict | MatchMode::Unordered);
    if budget && trace.len() != expected.len() {
        return false;
    }
    let strict = mode == MatchMode::Strict;
    let full = matching::pair(expected, trace, strict, ScoringOptions::default()).full;
    match mode {
        MatchMode::Strict | MatchMode::Unordered | MatchMode::Superset => full == expected.len(),
        MatchMode::Subset => full == trace.len(),
    }
}

#[cfg(test)]
mod tests {
    //! Reference matching: each mode fails exactly what it should; greedy equals full search.

    use super::*;
    use serde_json::json;

    /// A reference of three calls, one of them repeated, and its calls as a trace.
    fn reference() -> Vec<(&'static str, Value)> {
        vec![
            ("crm_search_contacts", json!({"query": "Ada", "limit": 5})),
            ("crm_get_contact", json!({"contact_id": "C-001"})),
            ("crm_search_contacts", json!({"query": "Ada", "limit": 5})),
            (
                "crm_create_contact",
                json!({"name": "Ada", "address": {"city": "Berlin"}}),
            ),
        ]
    }

    fn expected(calls: &[(&str, Value)]) -> Vec<ExpectedCall> {
        calls
            .iter()
            .map(|(tool, arguments)| {
                exact_call(tool, arguments.as_object().cloned().expect("an object"))
            })
            .collect()
    }

    fn trace(calls: &[(&str, Value)]) -> Vec<CallRecord> {
        calls
            .iter()
            .enumerate()
            .map(|(index, (tool, arguments))| recorded_call(index, tool, arguments.clone()))
            .collect()
    }

    /// The verdict of each mode, in [`MatchMode::ALL`] order.
    fn verdicts(actual: &[(&str, Value)]) -> [bool; 4] {
        let expected = expected(&reference());
        let trace = trace(actual);
        MatchMode::ALL.map(|mode| matches_reference(mode, &expected, &trace))
    }

    #[test]
    fn the_reference_itself_matches_in_every_mode() {
        assert_eq!(verdicts(&reference()), [true, true, true, true]);
    }

    #[test]
    fn reordered_calls_fail_only_strict() {
        let mut calls = reference();
        calls.swap(0, 1);
        assert_eq!(verdicts(&calls), [false, true, true, true]);
    }

    #[test]
    fn an_extra_call_fails_strict_unordered_and_subset() {
        let mut calls = reference();
        calls.insert(
            2,
            (
                "crm_log_activity",
                json!({"contact_id": "C-001", "type": "call"}),
            ),
        );
        assert_eq!(verdicts(&calls), [false, false, true, false]);
    }

    #[test]
    fn a_third_repeat_of_a_call_is_an_extra_call() {
        let mut calls = reference();
        calls.push(calls[0].clone());
        assert_eq!(verdicts(&calls), [false, false, true, false]);
    }

    #[test]
    fn a_missing_call_fails_strict_unordered_and_superset() {
        let mut calls = reference();
        calls.remove(1);
        assert_eq!(verdicts(&calls), [false, false, false, true]);
    }

    #[test]
    fn a_missing_repeat_fails_superset_but_not_subset() {
        let mut calls = reference();
        calls.remove(2);
        assert_eq!(verdicts(&calls), [false, false, false, true]);
    }

    #[test]
    fn a_wrong_tool_fails_every_mode() {
        let mut calls = reference();
        calls[1].0 = "crm_update_contact";
        assert_eq!(verdicts(&calls), [false, false, false, false]);
    }

    #[test]
    fn a_changed_argument_fails_every_mode() {
        let mut calls = reference();
        calls[1].1 = json!({"contact_id": "C-002"});
        assert_eq!(verdicts(&calls), [false, false, false, false]);
    }

    #[test]
    fn an_added_argument_fails_every_mode() {
        let mut calls = reference();
        calls[1].1 = json!({"contact_id": "C-001", "include_activities": true});
        assert_eq!(verdicts(&calls), [false, false, false, false]);
    }

    #[test]
    fn an_extra_key_in_a_nested_object_fails_every_mode() {
        let mut calls = reference();
        calls[3].1 = json!({"name": "Ada", "address": {"city": "Berlin", "country": "DE"}});
        assert_eq!(verdicts(&calls), [false, false, false, false]);
    }

    #[test]
    fn numbers_compare_by_value_but_a_boolean_is_not_a_number() {
        let mut calls = reference();
        calls[0].1 = json!({"query": "Ada", "limit": 5.0});
        calls[2].1 = json!({"query": "Ada", "limit": 5.0});
        assert_eq!(verdicts(&calls), [true, true, true, true]);
        let expected = expected(&[(
            "crm_get_contact",
            json!({"contact_id": "C-001", "include_activities": true}),
        )]);
        let trace = trace(&[(
            "crm_get_contact",
            json!({"contact_id": "C-001", "include_activities": 1}),
        )]);
        assert!(!matches_reference(MatchMode::Unordered, &expected, &trace));
    }

    /// Every trajectory of up to four calls drawn from five (two of them equal by value, one a
    /// different tool, one with other arguments), against every reference of up to three: the
    /// greedy verdict equals the pairing search's in every mode.
    #[test]
    fn the_greedy_verdict_equals_the_pairing_searchs_everywhere() {
        let calls = [
            ("crm_get", json!({"id": 5})),
            ("crm_get", json!({"id": 5.0})),
            ("crm_get", json!({"id": 6})),
            ("erp_get", json!({"id": 5})),
            ("crm_get", json!({"id": true})),
        ];
        let sequences = |max: usize| {
            let mut all: Vec<Vec<usize>> = vec![vec![]];
            let mut frontier = all.clone();
            for _ in 0..max {
                frontier = frontier
                    .iter()
                    .flat_map(|seq| {
                        (0..calls.len()).map(move |next| {
                            let mut longer = seq.clone();
                            longer.push(next);
                            longer
                        })
                    })
                    .collect();
                all.extend(frontier.iter().cloned());
            }
            all
        };
        let pick = |seq: &[usize]| seq.iter().map(|&i| calls[i].clone()).collect::<Vec<_>>();
        let mut compared = 0;
        for reference in sequences(3) {
            let want = expected(&pick(&reference));
            for actual in sequences(4) {
                let got = trace(&pick(&actual));
                for mode in MatchMode::ALL {
                    assert_eq!(
                        matches_reference(mode, &want, &got),
                        pairing_verdict(mode, &want, &got),
                        "{mode:?}: reference {reference:?}, trajectory {actual:?}"
                    );
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, 156 * 781 * 4);
    }

    #[test]
    fn empty_trajectories() {
        let none: Vec<(&str, Value)> = Vec::new();
        assert_eq!(verdicts(&none), [false, false, false, true]);
        let expected = expected(&none);
        let trace = trace(&reference());
        let modes = MatchMode::ALL.map(|mode| matches_reference(mode, &expected, &trace));
        assert_eq!(modes, [false, false, true, false]);
        assert!(
            MatchMode::ALL
                .iter()
                .all(|mode| matches_reference(*mode, &[], &[]))
        );
    }

    fn partial(calls: &[(&str, Value)]) -> Vec<ExpectedCall> {
        calls
            .iter()
            .map(|(tool, arguments)| {
                partial_call(tool, arguments.as_object().cloned().expect("an object"))
            })
            .collect()
    }

    #[test]
    fn partial_reference_calls_accept_extra_arguments_but_not_changed_ones() {
        let want = partial(&[("crm_get_contact", json!({"contact_id": "C-001"}))]);
        let extra = trace(&[(
            "crm_get_contact",
            json!({"contact_id": "C-001", "include_activities": true}),
        )]);
        assert!(
            MatchMode::ALL
                .iter()
                .all(|&mode| matches_reference(mode, &want, &extra))
        );
        let changed = trace(&[("crm_get_contact", json!({"contact_id": "C-002"}))]);
        assert!(
            !MatchMode::ALL
                .iter()
                .any(|&mode| matches_reference(mode, &want, &changed))
        );
        let missing = trace(&[("crm_get_contact", json!({}))]);
        assert!(!matches_reference(MatchMode::Unordered, &want, &missing));
    }

    /// First-fit is only sound for exact equality: the loose reference `{q: "x"}` takes the
    /// first call, `{q: "x", limit: 5}`, which the strict reference needed; the best pairing
    /// gives each reference a call, in both list orders.
    #[test]
    fn partial_matching_pairs_by_maximum_matching_not_first_fit() {
        let want = partial(&[
            ("search", json!({"q": "x"})),
            ("search", json!({"q": "x", "limit": 5})),
        ]);
        let mut calls = vec![
            ("search", json!({"q": "x", "limit": 5.0})),
            ("search", json!({"q": "x", "limit": 1})),
        ];
        for _ in 0..2 {
            let got = trace(&calls);
            assert_eq!(
                MatchMode::ALL.map(|mode| matches_reference(mode, &want, &got)),
                [calls[0].1["limit"] == 1, true, true, true],
                "{calls:?}"
            );
            calls.reverse();
        }
        let mut reversed = want.clone();
        reversed.reverse();
        let got = trace(&calls);
        assert!(matches_reference(MatchMode::Unordered, &reversed, &got));
    }

    /// As the exact-argument property test, with partial reference calls: the matching
    /// verdict equals the pairing search's in every mode.
    #[test]
    fn the_partial_verdict_equals_the_pairing_searchs_everywhere() {
        let calls = [
            ("crm_get", json!({"id": 5})),
            ("crm_get", json!({"id": 5.0, "x": 1})),
            ("crm_get", json!({})),
            ("erp_get", json!({"id": 5})),
        ];
        let mut sequences: Vec<Vec<usize>> = vec![vec![]];
        let mut frontier = sequences.clone();
        for _ in 0..3 {
            frontier = frontier
                .iter()
                .flat_map(|seq| {
                    (0..calls.len()).map(move |next| [seq.clone(), vec![next]].concat())
                })
                .collect();
            sequences.extend(frontier.iter().cloned());
        }
        let pick = |seq: &[usize]| seq.iter().map(|&i| calls[i].clone()).collect::<Vec<_>>();
        for reference in &sequences {
            let want = partial(&pick(reference));
            for actual in &sequences {
                let got = trace(&pick(actual));
                for mode in MatchMode::ALL {
                    assert_eq!(
                        matches_reference(mode, &want, &got),
                        pairing_verdict(mode, &want, &got),
                        "{mode:?}: reference {reference:?}, trajectory {actual:?}"
                    );
                }
            }
        }
    }
}
