//! Tests of the deterministic checks: each check passing and failing with its reason, and
//! the pairing field cases (B06, B07, B31).

use serde_json::{Value, json};

use super::matching::{self, object};
use super::*;
use crate::catalog::Catalog;
use crate::scenario::{self, Scenario};
use crate::trace::{CallOutcome, CallRecord};

/// A scenario from JSON text, validated against the built-in catalog and the repo fixtures.
fn scenario(text: &str) -> Scenario {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("s.json");
    std::fs::write(&path, text).expect("write scenario");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    scenario::load_file(&path, root, Catalog::builtin()).expect("valid scenario")
}

fn call(index: usize, tool: &str, arguments: Value, result: Option<Value>) -> CallRecord {
    let mut record = CallRecord {
        index,
        tool: tool.to_string(),
        arguments,
        outcome: if result.is_some() {
            CallOutcome::Success
        } else {
            CallOutcome::ToolError
        },
        error: result.is_none().then(|| "failed".to_string()),
        result,
        fault: None,
        invalid: None,
        duration_us: 0,
        turn: index as u32 + 1,
        refused: false,
        unknown_tool: false,
        checked: false,
        violations: Vec::new(),
        notes: Vec::new(),
        output_violations: Vec::new(),
        unmatched: false,
        not_recorded: false,
        elicitation: None,
    };
    crate::harness::ToolSet::builtin().annotate(&mut record);
    record
}

fn context() -> ScoringOptions {
    ScoringOptions::default()
}

fn t2_007() -> Scenario {
    // A fixed copy of the suite's T2-007 as it was written route-first: these tests pin the
    // scorer's mechanics (pairing, carried ids, budgets), not the suite's current checks.
    scenario(include_str!("testdata/T2-007.json"))
}

fn seeded() -> Value {
    json!({"contacts": [{"id": "C-001"}], "activities": []})
}

fn after_good_run() -> Value {
    json!({
        "contacts": [{"id": "C-001"}, {"id": "C-013", "name": "John Smith", "company": "Acme"}],
        "activities": [{"id": "A-001", "contact_id": "C-013", "type": "call"}]
    })
}

fn good_trace() -> Vec<CallRecord> {
    vec![
        call(
            0,
            "crm_create_contact",
            json!({"name": "John Smith", "company": "Acme"}),
            Some(json!({"id": "C-013"})),
        ),
        call(
            1,
            "crm_log_activity",
            json!({"contact_id": "C-013", "type": "call"}),
            Some(json!({"id": "A-001"})),
        ),
    ]
}

fn failing(score: &RunScore) -> Vec<(CheckKind, String, String)> {
    score
        .failures()
        .map(|c| (c.kind, c.subject.clone(), c.detail.clone()))
        .collect()
}

#[test]
fn t2_007_passes_when_every_check_holds() {
    let score = score(
        &t2_007(),
        &good_trace(),
        &seeded(),
        Some(&after_good_run()),
        None,
        context(),
    );
    assert_eq!(score.outcome, Outcome::Pass, "{:?}", failing(&score));
    assert_eq!(score.pairing, vec![Some(0), Some(1)]);
    let kinds: Vec<CheckKind> = score.checks.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        vec![
            CheckKind::ToolSelection,
            CheckKind::ArgsSchema,
            CheckKind::ArgsMatch,
            CheckKind::ArgsForbid,
            CheckKind::ToolSelection,
            CheckKind::ArgsSchema,
            CheckKind::ArgsMatch,
            CheckKind::ArgsFromPrior,
            CheckKind::Ordering,
            CheckKind::MaxCalls,
            CheckKind::FinalState,
            CheckKind::FinalState,
        ]
    );
}

#[test]
fn invented_id_fails_args_from_prior_naming_both_values() {
    let mut trace = good_trace();
    trace[1].arguments = json!({"contact_id": "contact_12345", "type": "call"});
    let score = score(
        &t2_007(),
        &trace,
        &seeded(),
        Some(&after_good_run()),
        None,
        context(),
    );
    assert_eq!(
        failing(&score),
        vec![(
            CheckKind::ArgsFromPrior,
            "expected_calls[1]".to_string(),
            "`contact_id` is \"contact_12345\", but `$.calls[0].result.id` is \"C-013\": not taken from the earlier result".to_string()
        )]
    );
}

#[test]
fn wrong_tool_fails_tool_selection_listing_the_calls_made() {
    let mut trace = good_trace();
    trace[1].tool = "crm_update_contact".to_string();
    let score = score(
        &t2_007(),
        &trace,
        &seeded(),
        Some(&after_good_run()),
        None,
        context(),
    );
    assert_eq!(
        failing(&score),
        vec![(
            CheckKind::ToolSelection,
            "expected_calls[1]".to_string(),
            "no usable call to `crm_log_activity` (calls made: crm_create_contact, crm_update_contact)".to_string()
        )]
    );
}

#[test]
fn a_call_to_a_tool_the_server_does_not_offer_fails_the_run() {
    // Every expected call is there and the state is right, but the agent also tried a tool
    // that does not exist: an invented tool name is a failure, not a harmless extra call.
    let mut trace = good_trace();
    let mut invented = call(2, "crm_find_contact", json!({"query": "Acme"}), None);
    invented.outcome = CallOutcome::ProtocolError;
    trace.push(invented);
    let score = score(
        &t2_007(),
        &trace,
        &seeded(),
        Some(&after_good_run()),
        None,
        context(),
    );
    assert_eq!(score.outcome, Outcome::Fail);
    assert_eq!(
        failing(&score),
        vec![(
            CheckKind::UnknownTool,
            "tools".to_string(),
            "call 3 `crm_find_contact` not offered by the server".to_string()
        )]
    );
}

#[test]
fn a_call_a_replayed_cassette_did_not_hold_fails_the_run() {
    let mut trace = good_trace();
    let mut extra = call(2, "crm_get_contact", json!({"contact_id": "C-404"}), None);
    extra.outcome = CallOutcome::ToolError;
    extra.error = Some("not_recorded: `crm_get_contact` ...".into());
    extra.not_recorded = true;
    trace.push(extra);
    let score = score(
        &t2_007(),
        &trace,
        &seeded(),
        Some(&after_good_run()),
        None,
        context(),
    );
    assert_eq!(score.outcome, Outcome::Fail);
    assert_eq!(
        failing(&score),
        vec![(
            CheckKind::NotRecorded,
            "cassette".to_string(),
            "call 3 `crm_get_contact` not in the replayed cassette: the agent did what the recording did not".to_string()
        )]
    );
}

#[test]
fn args_match_and_args_forbid_fail_with_the_argument_named() {
    let mut trace = good_trace();
    trace[0].arguments =
        json!({"name": "John Smith", "company": "Acme Corp", "email": "j@acme.example"});
    let score = score(
        &t2_007(),
        &trace,
        &seeded(),
        Some(&after_good_run()),
        None,
        context(),
    );
    assert_eq!(
        failing(&score),
        vec![
            (
                CheckKind::ArgsMatch,
                "expected_calls[0]".to_string(),
                "`/company`: expected \"Acme\", got \"Acme Corp\"".to_string()
            ),
            (
                CheckKind::ArgsForbid,
                "expected_calls[0]".to_string(),
                "`email` is forbidden but was sent (\"j@acme.example\")".to_string()
            ),
        ]
    );
}

#[test]
fn strict_ordering_fails_when_calls_come_in_reverse() {
    let scenario = scenario(
        r#"{"id": "X", "tier": 2, "type": "multi_step", "prompt": "p", "seed_state": "fixtures/crm_baseline.json",
            "expected_calls": [{"tool": "crm_search_contacts", "args_match": {"query": "Ada"}},
                               {"tool": "crm_forecast", "args_match": {"quarter": "2026-Q1"}}],
            "ordering": "strict"}"#,
    );
    let trace = vec![
        call(
            0,
            "crm_forecast",
            json!({"quarter": "2026-Q1"}),
            Some(json!({})),
        ),
        call(
            1,
            "crm_search_contacts",
            json!({"query": "Ada"}),
            Some(json!({})),
        ),
    ];
    let score = score(
        &scenario,
        &trace,
        &json!({}),
        Some(&json!({})),
        None,
        context(),
    );
    let failures = failing(&score);
    assert!(
        failures.contains(&(
            CheckKind::Ordering,
            "ordering".to_string(),
            "2 expected calls are satisfied only out of order (strict ordering)".to_string()
        )),
        "{failures:?}"
    );
}

#[test]
fn any_ordering_accepts_reverse_order() {
    let scenario = scenario(
        r#"{"id": "X", "tier": 3, "type": "multi_step", "prompt": "p", "seed_state": "fixtures/crm_baseline.json",
            "expected_calls": [{"tool": "crm_forecast", "args_match": {"quarter": "2026-Q1"}},
                               {"tool": "crm_forecast", "args_match": {"quarter": "2026-Q2"}}],
            "ordering": "any"}"#,
    );
    let trace = vec![
        call(
            0,
            "crm_forecast",
            json!({"quarter": "2026-Q2"}),
            Some(json!({})),
        ),
        call(
            1,
            "crm_forecast",
            json!({"quarter": "2026-Q1"}),
            Some(json!({})),
        ),
    ];
    let score = score(
        &scenario,
        &trace,
        &json!({}),
        Some(&json!({})),
        None,
        context(),
    );
    assert_eq!(score.outcome, Outcome::Pass);
    assert_eq!(score.pairing, vec![Some(1), Some(0)]);
}

#[test]
fn max_calls_fails_past_the_budget() {
    let mut trace = good_trace();
    for index in 2..5 {
        trace.push(call(
            index,
            "crm_search_contacts",
            json!({"query": "x"}),
            Some(json!({})),
        ));
    }
    let score = score(
        &t2_007(),
        &trace,
        &seeded(),
        Some(&after_good_run()),
        None,
        context(),
    );
    assert_eq!(
        failing(&score),
        vec![(
            CheckKind::MaxCalls,
            "max_calls".to_string(),
            "5 tool calls, budget 4".to_string()
        )]
    );
}

#[test]
fn final_state_assertion_fails_with_both_sides() {
    let score = score(
        &t2_007(),
        &good_trace(),
        &seeded(),
        Some(&seeded()),
        None,
        context(),
    );
    let failures = failing(&score);
    assert_eq!(failures.len(), 2, "{failures:?}");
    assert_eq!(failures[0].0, CheckKind::FinalState);
    assert_eq!(
        failures[0].1,
        "final_state_assertions[0] `contacts.count == baseline + 1`"
    );
    assert_eq!(
        failures[0].2,
        "left `contacts.count` = 1, right `baseline + 1` = 2 (baseline = 1)"
    );
    assert_eq!(
        failures[1].2,
        "could not evaluate: index -1 out of range for `activities` (length 0)"
    );
}

#[test]
fn retry_after_a_fault_pairs_with_the_successful_call() {
    let mut trace = good_trace();
    let mut failed = trace[1].clone();
    failed.outcome = CallOutcome::ToolError;
    failed.result = None;
    trace.insert(1, failed);
    for (index, call) in trace.iter_mut().enumerate() {
        call.index = index;
    }
    let score = score(
        &t2_007(),
        &trace,
        &seeded(),
        Some(&after_good_run()),
        None,
        context(),
    );
    assert_eq!(score.outcome, Outcome::Pass);
    assert_eq!(score.pairing, vec![Some(0), Some(2)]);
}

fn book(a: i64, b: i64, c: i64) -> Value {
    json!({"a": a, "b": b, "c": c})
}

fn expected_book(args: Value) -> scenario::ExpectedCall {
    scenario::ExpectedCall {
        args_match: object(&args),
        ..scenario::ExpectedCall::of("book")
    }
}

/// Field case B06 (deepeval#3338): the unordered score is the best one-to-one assignment,
/// 4/3 over 2 expected calls, for every order of either list.
#[test]
fn b06_unordered_pairing_is_optimal_for_every_list_order() {
    let expected = [expected_book(book(1, 1, 1)), expected_book(book(1, 1, 2))];
    let actual = [
        call(0, "book", book(1, 1, 2), Some(json!({}))),
        call(1, "book", book(1, 5, 5), Some(json!({}))),
    ];
    for reverse_expected in [false, true] {
        for reverse_actual in [false, true] {
            let mut e = expected.to_vec();
            let mut a = actual.to_vec();
            if reverse_expected {
                e.reverse();
            }
            if reverse_actual {
                a.reverse();
            }
            let pairing = matching::pair(&e, &a, false, ScoringOptions::default());
            let score = pairing.credit / e.len() as f64;
            assert!(
                (score - 2.0 / 3.0).abs() < 1e-9,
                "score {score} for {reverse_expected}/{reverse_actual}"
            );
            assert_eq!(pairing.full, 1);
        }
    }
}

/// Field case B07 (deepeval#3141): identical calls pair by position, never by value.
#[test]
fn b07_repeated_identical_calls_each_find_a_partner() {
    let search = || scenario::ExpectedCall {
        tool: "search".into(),
        ..expected_book(json!({"q": "x"}))
    };
    let made = |n: usize| {
        (0..n)
            .map(|i| call(i, "search", json!({"q": "x"}), Some(json!({}))))
            .collect::<Vec<_>>()
    };
    let expected = [search(), search()];
    assert_eq!(
        matching::pair(&expected, &made(2), true, ScoringOptions::default()).assigned,
        vec![Some(0), Some(1)]
    );
    assert_eq!(
        matching::pair(&expected, &made(1), true, ScoringOptions::default()).assigned,
        vec![Some(0), None]
    );
    let three = matching::pair(&expected, &made(3), true, ScoringOptions::default());
    assert_eq!(three.full, 2);
    assert!(three.credit <= 2.0);
}

#[test]
fn arguments_that_break_the_schema_fail_args_schema_with_their_class() {
    let mut trace = good_trace();
    trace[1].arguments = json!({"contact_id": "C-013", "type": "call", "retries": 3});
    crate::harness::ToolSet::builtin().annotate(&mut trace[1]);
    let score = score(
        &t2_007(),
        &trace,
        &seeded(),
        Some(&after_good_run()),
        None,
        context(),
    );
    assert_eq!(
        failing(&score),
        vec![(
            CheckKind::ArgsSchema,
            "expected_calls[1]".to_string(),
            "unexpected_param: `/retries`: `retries` is not a parameter of `crm_log_activity`"
                .to_string()
        )]
    );
}

fn forecast_call(args_json: &str) -> Scenario {
    scenario(&format!(
        r#"{{"id": "X", "tier": 1, "type": "single_call", "prompt": "p", "seed_state": "fixtures/crm_baseline.json",
            "expected_calls": [{{"tool": "crm_forecast", {args_json}}}]}}"#
    ))
}

fn run_forecast(scenario: &Scenario, args: Value, options: ScoringOptions) -> RunScore {
    let trace = vec![call(0, "crm_forecast", args, Some(json!({})))];
    score(
        scenario,
        &trace,
        &json!({}),
        Some(&json!({})),
        None,
        options,
    )
}

/// Field case B02 (gorilla#1133): an omitted argument whose expected value is the schema
/// default fails in strict (BFCL) mode and passes in default-aware mode, and the check says
/// which rule decided.
#[test]
fn b02_omitted_schema_default_depends_on_the_stated_mode() {
    let scenario = forecast_call(
        r#""args_match": {"quarter": "2026-Q1", "include_closed": true}, "args_exact": ["include_closed"]"#,
    );
    let args = json!({"quarter": "2026-Q1"});
    let strict = run_forecast(
        &scenario,
        args.clone(),
        ScoringOptions {
            omitted_defaults: OmittedDefaults::Strict,
            ..ScoringOptions::default()
        },
    );
    assert_eq!(
        failing(&strict),
        vec![(
            CheckKind::ArgsMatch,
            "expected_calls[0]".to_string(),
            "`include_closed` missing, expected true (its schema default counts only with omitted defaults `schema`)".to_string()
        )]
    );
    let lenient = run_forecast(
        &scenario,
        args,
        ScoringOptions {
            omitted_defaults: OmittedDefaults::Schema,
            ..ScoringOptions::default()
        },
    );
    assert_eq!(lenient.outcome, Outcome::Pass);
    let detail = &lenient
        .checks
        .iter()
        .find(|c| c.kind == CheckKind::ArgsMatch)
        .expect("args check")
        .detail;
    assert_eq!(
        detail,
        "holds (`include_closed` omitted: its schema default true is accepted)"
    );
}

/// Field case B02, second part: accepted values and "may be omitted" are separate fields.
#[test]
fn b02_accepted_values_and_optional_arguments_are_distinct() {
    let scenario = forecast_call(
        r#""args_match": {"quarter": "2026-Q1"}, "args_accept": {"owner": ["", "Nina Ross"]}, "args_optional": ["owner"]"#,
    );
    let outcome = |args: Value| run_forecast(&scenario, args, ScoringOptions::default());
    assert_eq!(
        outcome(json!({"quarter": "2026-Q1"})).outcome,
        Outcome::Pass
    );
    assert_eq!(
        outcome(json!({"quarter": "2026-Q1", "owner": "Nina Ross"})).outcome,
        Outcome::Pass
    );
    assert_eq!(
        outcome(json!({"quarter": "2026-Q1", "owner": ""})).outcome,
        Outcome::Pass
    );
    assert_eq!(
        failing(&outcome(
            json!({"quarter": "2026-Q1", "owner": "Tom Becker"})
        )),
        vec![(
            CheckKind::ArgsMatch,
            "expected_calls[0]".to_string(),
            "`/owner`: expected one of [\"\",\"Nina Ross\"], got \"Tom Becker\"".to_string()
        )]
    );
    let required = forecast_call(
        r#""args_match": {"quarter": "2026-Q1"}, "args_accept": {"owner": ["Nina Ross"]}, "args_exact": ["owner"]"#,
    );
    assert_eq!(
        run_forecast(
            &required,
            json!({"quarter": "2026-Q1"}),
            ScoringOptions::default()
        )
        .outcome,
        Outcome::Fail
    );
}

/// Outside review: a read-only call that leaves a filter out reads more, which is no mistake;
/// `args_exact` pins a filter that must be sent.
#[test]
fn a_read_filter_left_out_is_a_broader_read_unless_pinned() {
    let broad = forecast_call(r#""args_match": {"quarter": "2026-Q1", "owner": "Nina Ross"}"#);
    let scored = run_forecast(
        &broad,
        json!({"quarter": "2026-Q1"}),
        ScoringOptions::default(),
    );
    assert_eq!(scored.outcome, Outcome::Pass);
    assert_eq!(
        scored
            .checks
            .iter()
            .find(|c| c.kind == CheckKind::ArgsMatch)
            .map(|c| c.detail.as_str()),
        Some("holds (`owner` left out: a broader read)")
    );
    let wrong = run_forecast(
        &broad,
        json!({"quarter": "2026-Q1", "owner": "Tom Becker"}),
        ScoringOptions::default(),
    );
    assert_eq!(
        wrong.outcome,
        Outcome::Fail,
        "a different filter is still wrong"
    );
    let pinned = forecast_call(
        r#""args_match": {"quarter": "2026-Q1", "owner": "Nina Ross"}, "args_exact": ["owner"]"#,
    );
    assert_eq!(
        failing(&run_forecast(
            &pinned,
            json!({"quarter": "2026-Q1"}),
            ScoringOptions::default()
        )),
        vec![(
            CheckKind::ArgsMatch,
            "expected_calls[0]".to_string(),
            "`owner` missing, expected \"Nina Ross\"".to_string()
        )]
    );
}

#[test]
fn comparators_are_named_when_they_decide() {
    let scenario = forecast_call(
        r#""args_match": {"quarter": "2026-q1"}, "args_compare": {"quarter": "normalized"}"#,
    );
    let score = run_forecast(
        &scenario,
        json!({"quarter": "2026-Q1"}),
        ScoringOptions::default(),
    );
    assert_eq!(score.outcome, Outcome::Pass);
    let detail = &score
        .checks
        .iter()
        .find(|c| c.kind == CheckKind::ArgsMatch)
        .expect("args check")
        .detail;
    assert_eq!(detail, "holds (`quarter` compared as normalized)");
}

fn prior(argument: &str, source: &str, call_index: usize) -> scenario::PriorRef {
    scenario::PriorRef {
        argument: argument.into(),
        from: scenario::RecordSource {
            source: source.into(),
            path: serde_json_path::JsonPath::parse(source).expect("valid path"),
            call_index,
            capture: None,
        },
    }
}

/// Field case B31 (NESTFUL): references bind to the call that matched, not to a position,
/// keep their index, and fail cleanly when nothing was matched.
#[test]
fn b31_references_bind_to_the_matched_call() {
    let search = |query: &str| scenario::ExpectedCall {
        tool: "SearchAirport".into(),
        ..expected_book(json!({"query": query}))
    };
    let flight = scenario::ExpectedCall {
        tool: "FlightSearch".into(),
        args_from_prior: vec![
            prior("originSkyId", "$.calls[0].result.skyId", 0),
            prior("destinationSkyId", "$.calls[1].result.skyId", 1),
            prior("originEntityId", "$.calls[0].result.entityId", 0),
            prior("destinationEntityId", "$.calls[1].result.entityId", 1),
        ],
        ..expected_book(json!({"date": "2024-08-15"}))
    };
    let expected = [search("New York"), search("London"), flight];
    let actual = |origin: &str, destination: &str| {
        vec![
            call(
                0,
                "SearchAirport",
                json!({"query": "London"}),
                Some(json!({"skyId": "LOND", "entityId": "27544008"})),
            ),
            call(
                1,
                "SearchAirport",
                json!({"query": "New York"}),
                Some(json!({"skyId": "NYCA", "entityId": "27537542"})),
            ),
            call(
                2,
                "FlightSearch",
                json!({"originSkyId": origin, "destinationSkyId": destination,
                "originEntityId": "27537542", "destinationEntityId": "27544008", "date": "2024-08-15", "returnDate": "2024-08-18"}),
                Some(json!({})),
            ),
        ]
    };
    let options = ScoringOptions::default();
    let good = matching::pair(&expected, &actual("NYCA", "LOND"), false, options);
    assert_eq!(
        (good.assigned.clone(), good.full),
        (vec![Some(1), Some(0), Some(2)], 3)
    );

    let swapped = actual("LOND", "NYCA");
    let pairing = matching::pair(&expected, &swapped, false, options);
    let record = crate::trace::run_record(&pairing.assigned[..2], &swapped);
    let check = matching::check_pair(&expected[2], &swapped[2], &record, options);
    assert_eq!(
        check.args_from_prior[0],
        "`originSkyId` is \"LOND\", but `$.calls[0].result.skyId` is \"NYCA\": not taken from the earlier result"
    );

    let alone = vec![actual("NYCA", "LOND").remove(2)];
    let pairing = matching::pair(&expected, &alone, false, options);
    let record = crate::trace::run_record(&pairing.assigned[..2], &alone);
    let check = matching::check_pair(&expected[2], &alone[0], &record, options);
    assert_eq!(
        check.args_from_prior[0],
        "`originSkyId` must come from `$.calls[0].result.skyId`, but calls[0] has no paired call"
    );

    let authors = json!({"calls": [{"result": {"authors": ["Ada", "Grace"]}}]});
    let first = serde_json_path::JsonPath::parse("$.calls[0].result.authors[0]").expect("path");
    let second = serde_json_path::JsonPath::parse("$.calls[0].result.authors[1]").expect("path");
    assert_eq!(
        first.query(&authors).exactly_one().ok(),
        Some(&json!("Ada"))
    );
    assert_eq!(
        second.query(&authors).exactly_one().ok(),
        Some(&json!("Grace"))
    );
}

/// Field case B29 (tau2-bench#316): explicit end-state assertions judge the outcome, however
/// many extra lookups the reference had or lacked.
#[test]
fn b29_explicit_end_state_assertions_pass_a_correct_run() {
    let roots = vec!["orders".to_string()];
    let seeded = json!({"orders": {"W1": {"status": "delivered"}, "W2": {"status": "delivered"}}});
    let after = json!({"orders": {"W1": {"status": "return requested"}, "W2": {"status": "return requested"}}});
    for id in ["W1", "W2"] {
        let assertion = crate::scenario::assertion::Assertion::parse(
            &format!("orders.{id}.status == \"return requested\""),
            &roots,
        )
        .expect("parses");
        assert!(
            assertion
                .evaluate(&seeded, &after)
                .expect("evaluates")
                .passed
        );
        assert!(
            !assertion
                .evaluate(&seeded, &seeded)
                .expect("evaluates")
                .passed
        );
    }
}

/// Field case B33's budget, with the case's `search`, `fetch` and `read` played by
/// `crm_search_contacts`, `crm_get_contact` and `crm_get_contact`.
/// trace_2 is scored against the failure budget alone: its five calls would break the
/// case's total budget of three whatever the counting rule.
fn b33(budget: &str) -> Scenario {
    scenario(&format!(
        r#"{{"id": "B33", "tier": 5, "type": "single_call", "prompt": "Find Ada.",
            "seed_state": "fixtures/crm_baseline.json", "expected_calls": [], {budget}}}"#
    ))
}

const B33_TRACE_1_BUDGET: &str =
    r#""max_calls": 3, "max_per_tool": {"crm_search_contacts": 2}, "max_failures": 3"#;

fn budget_failures(scenario: &Scenario, trace: &[CallRecord]) -> Vec<(CheckKind, String, String)> {
    let score = score(scenario, trace, &seeded(), Some(&seeded()), None, context());
    failing(&score)
}

#[test]
fn b33_trace_1_counts_every_emitted_call_and_splits_executed_from_refused() {
    let search = |index| {
        call(
            index,
            "crm_search_contacts",
            json!({"query": "Ada"}),
            Some(json!([])),
        )
    };
    let mut trace = vec![
        search(0),
        search(1),
        call(
            2,
            "crm_get_contact",
            json!({"contact_id": "C-001"}),
            Some(json!({})),
        ),
        search(3),
    ];
    trace[3].outcome = CallOutcome::ToolError;
    trace[3].result = None;
    trace[3].refused = true;
    let scenario = b33(B33_TRACE_1_BUDGET);
    assert_eq!(
        budget_failures(&scenario, &trace),
        vec![
            (
                CheckKind::MaxCalls,
                "max_calls".to_string(),
                "4 tool calls (3 executed, 1 refused), budget 3".to_string()
            ),
            (
                CheckKind::MaxPerTool,
                "max_per_tool.crm_search_contacts".to_string(),
                "`crm_search_contacts`: 3 tool calls (2 executed, 1 refused), budget 2".to_string()
            ),
        ]
    );
    let counts = budget::CallCounts::of(&trace);
    assert_eq!((counts.executed, counts.refused), (3, 1));
}

/// Five failing parallel reads emitted in one model turn.
fn b33_trace_2() -> Vec<CallRecord> {
    (0..5)
        .map(|index| CallRecord {
            turn: 1,
            ..call(
                index,
                "crm_get_contact",
                json!({"contact_id": "C-404"}),
                None,
            )
        })
        .collect()
}

#[test]
fn b33_trace_2_fails_counting_per_call() {
    assert_eq!(
        budget_failures(
            &b33(r#""max_failures": 3, "failure_counting": "per_call""#),
            &b33_trace_2()
        ),
        vec![(
            CheckKind::MaxFailures,
            "max_failures".to_string(),
            "5 failing calls (per_call), budget 3".to_string()
        )]
    );
}

#[test]
fn b33_trace_2_passes_counting_per_turn_the_default() {
    let trace = b33_trace_2();
    for scenario in [
        b33(r#""max_failures": 3, "failure_counting": "per_turn""#),
        b33(r#""max_failures": 3"#),
    ] {
        assert_eq!(
            scenario.failure_counting,
            crate::scenario::FailureCounting::PerTurn
        );
        let score = score(
            &scenario,
            &trace,
            &seeded(),
            Some(&seeded()),
            None,
            context(),
        );
        assert_eq!(score.outcome, Outcome::Pass, "{:?}", failing(&score));
        assert_eq!(
            score
                .checks
                .iter()
                .map(|c| (c.kind, c.detail.as_str()))
                .collect::<Vec<_>>(),
            vec![(
                CheckKind::MaxFailures,
                "1 turn with failing calls (5 failing calls, per_turn), budget 3"
            )]
        );
    }
}

/// Results written before the number, double-encoding and loop modes existed read
/// with each mode's default, and the modes are written by name.
#[test]
fn scoring_options_without_the_modes_read_as_their_defaults() {
    let old: ScoringOptions =
        serde_json::from_value(json!({"omitted_defaults": "schema"})).expect("old results read");
    assert_eq!(
        old,
        ScoringOptions {
            omitted_defaults: OmittedDefaults::Schema,
            ..ScoringOptions::default()
        }
    );
    let all = ScoringOptions {
        omitted_defaults: OmittedDefaults::Strict,
        numbers: crate::json::NumberMode::Bfcl,
        double_encoded: crate::json::DoubleEncoded::Lenient,
        loops: crate::score::LoopMode::ResultAware,
    };
    assert_eq!(
        serde_json::to_value(all).expect("serializes"),
        json!({"omitted_defaults": "strict", "numbers": "bfcl",
               "double_encoded": "lenient", "loops": "result_aware"})
    );
}

#[test]
fn an_optional_call_never_takes_the_call_a_required_one_needs() {
    // Field case (conversation review, T3-101): one read returns both orders, a second read
    // returns a sum. Pairing the sum with the required call and the first read with the
    // optional one made more calls "successful", and failed the required call.
    let required = scenario::ExpectedCall {
        result_contains: vec![json!("O-005")],
        ..scenario::ExpectedCall::of("data_query_sql")
    };
    let optional = scenario::ExpectedCall {
        optional: true,
        result_contains: vec![json!("O-003")],
        ..scenario::ExpectedCall::of("data_query_sql")
    };
    let trace = vec![
        call(
            0,
            "data_query_sql",
            json!({"query": "SELECT id FROM orders"}),
            Some(json!({"rows": [{"id": "O-003"}, {"id": "O-005"}]})),
        ),
        call(
            1,
            "data_query_sql",
            json!({"query": "SELECT SUM(total) FROM orders"}),
            Some(json!({"rows": [{"sum": 1815}]})),
        ),
    ];
    let pairing = matching::pair(&[required, optional], &trace, false, context());
    assert_eq!(pairing.assigned, vec![Some(0), None]);
    assert_eq!(pairing.full, 1);
}

#[test]
fn an_errored_tier_5_run_that_changed_nothing_did_no_harm_even_where_a_change_was_wanted() {
    // A confirmed delete: its assertion asks for the contact to be gone. A provider outage
    // before any call leaves the world as seeded: errored, not failed.
    let scenario = scenario(
        r#"{"id": "T5-950", "tier": 5, "type": "single_call", "prompt": "Delete C-001.",
            "seed_state": "fixtures/enterprise.json",
            "expected_calls": [{"tool": "crm_delete_contact", "args_match": {"contact_id": "C-001"}}],
            "final_state_assertions": ["!contacts.exists(c, c.id == 'C-001')",
                                       "contacts.exists(c, c.id == 'C-002')"]}"#,
    );
    let seeded = scenario.seeded.as_ref().clone();
    assert_eq!(
        harm(&scenario, &[], &seeded, Some(&seeded), "provider down"),
        None
    );
    // Deleting the other contact breaks an assertion that held on the seed: harm.
    let mut after = seeded.clone();
    after["contacts"]
        .as_array_mut()
        .expect("contacts")
        .retain(|contact| contact["id"] != "C-002");
    let harmed = harm(&scenario, &[], &seeded, Some(&after), "provider down").expect("harm");
    let failed: Vec<&str> = harmed
        .failures()
        .map(|check| check.subject.as_str())
        .collect();
    assert_eq!(
        failed,
        vec![
            "final_state_assertions[1] `contacts.exists(c, c.id == 'C-002')`",
            "run"
        ]
    );
}
