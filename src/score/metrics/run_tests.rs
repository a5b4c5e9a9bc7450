//! Metrics on real trajectories of T2-007 and on the argument field cases (B04, B14).

use serde_json::{Value, json};

use super::*;
use crate::catalog::Catalog;
use crate::harness::{ToolSet, check_arguments};
use crate::scenario::{self, FaultKind, Scenario};
use crate::score;
use crate::trace::{ArgumentErrorClass, CallOutcome, CallRecord, InvalidCallKind};

fn t2_007() -> Scenario {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    scenario::load_file(
        &root.join("src/score/testdata/T2-007.json"),
        root,
        Catalog::builtin(),
    )
    .expect("T2-007 loads")
}

fn ok(index: usize, tool: &str, arguments: Value, result: Value) -> CallRecord {
    CallRecord {
        index,
        tool: tool.into(),
        arguments,
        outcome: CallOutcome::Success,
        result: Some(result),
        error: None,
        fault: None,
        invalid: None,
        duration_us: 100 * (index as u64 + 1),
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
    }
}

fn annotated(trace: &[CallRecord]) -> Vec<CallRecord> {
    let tools = ToolSet::builtin();
    let mut trace = trace.to_vec();
    for call in &mut trace {
        tools.annotate(call);
    }
    trace
}

fn failed(index: usize, tool: &str, arguments: Value, fault: Option<FaultKind>) -> CallRecord {
    CallRecord {
        outcome: CallOutcome::ToolError,
        result: None,
        error: Some("upstream returned HTTP 500".into()),
        fault,
        ..ok(index, tool, arguments, Value::Null)
    }
}

fn create() -> CallRecord {
    ok(
        0,
        "crm_create_contact",
        json!({"name": "John Smith", "company": "Acme"}),
        json!({"id": "C-013", "name": "John Smith"}),
    )
}

/// Scores and measures a hand-built `trace`, after the harness's schema findings are added to
/// its records as the harness would have.
fn measured(scenario: &Scenario, trace: &[CallRecord], answer: &str) -> RunMetrics {
    measured_with(scenario, trace, Some(answer))
}

fn measured_with(scenario: &Scenario, trace: &[CallRecord], answer: Option<&str>) -> RunMetrics {
    let trace = &annotated(trace);
    let state = json!({"contacts": [], "activities": []});
    let options = score::ScoringOptions::default();
    let score = score::score(scenario, trace, &state, Some(&state), answer, options);
    let view = RunView {
        scenario,
        trace,
        pairing: &score.pairing,
        final_answer: answer,
        options,
    };
    measure(&view, &score.checks)
}

#[test]
fn invented_and_drifted_ids_are_told_apart() {
    let scenario = t2_007();
    let invented = [
        create(),
        ok(
            1,
            "crm_log_activity",
            json!({"contact_id": "C-001", "type": "call"}),
            json!({}),
        ),
    ];
    let metrics = measured(&scenario, &invented, "Done.");
    assert_eq!(
        metrics.provenance,
        vec![ProvenanceFinding {
            call: 1,
            tool: "crm_log_activity".into(),
            pointer: "/contact_id".into(),
            value: "C-001".into(),
            kind: ProvenanceKind::Invented,
            near: None
        }]
    );
    let drifted = [
        create(),
        ok(
            1,
            "crm_log_activity",
            json!({"contact_id": "C-014", "type": "call"}),
            json!({}),
        ),
    ];
    let finding = &measured(&scenario, &drifted, "Done.").provenance[0];
    assert_eq!(
        (finding.kind, finding.near.as_deref()),
        (ProvenanceKind::Drift, Some("C-013"))
    );
    let carried = [
        create(),
        ok(
            1,
            "crm_log_activity",
            json!({"contact_id": "C-013", "type": "call"}),
            json!({}),
        ),
    ];
    assert!(measured(&scenario, &carried, "Done.").provenance.is_empty());
}

#[test]
fn recovery_is_classified_from_what_follows_the_failure() {
    let scenario = t2_007();
    let log = json!({"contact_id": "C-013", "type": "call"});
    let retried = [
        create(),
        failed(
            1,
            "crm_log_activity",
            log.clone(),
            Some(FaultKind::ServerError),
        ),
        ok(2, "crm_log_activity", log.clone(), json!({})),
    ];
    let metrics = measured(&scenario, &retried, "Done.");
    assert_eq!(
        metrics.recovery,
        vec![Recovery {
            call: 1,
            tool: "crm_log_activity".into(),
            fault: Some(FaultKind::ServerError),
            class: RecoveryClass::Retried
        }]
    );
    assert!(
        metrics.loops.is_empty(),
        "a retry after an injected fault is not a loop"
    );

    let corrected = [
        create(),
        failed(
            1,
            "crm_log_activity",
            json!({"contact_id": "C-13", "type": "call"}),
            None,
        ),
        ok(2, "crm_log_activity", log.clone(), json!({})),
    ];
    assert_eq!(
        measured(&scenario, &corrected, "Done.").recovery[0].class,
        RecoveryClass::RetriedWithCorrection
    );

    let abandoned = [create(), failed(1, "crm_log_activity", log.clone(), None)];
    assert_eq!(
        measured(&scenario, &abandoned, "Logged the call.").recovery[0].class,
        RecoveryClass::ClaimedSuccess
    );
    assert_eq!(
        measured(&scenario, &abandoned, "Logging the call failed.").recovery[0].class,
        RecoveryClass::GaveUpHonestly
    );
    // A run that gave no final answer claimed nothing.
    assert_eq!(
        measured_with(&scenario, &abandoned, None).recovery[0].class,
        RecoveryClass::NoFinalAnswer
    );
    assert_eq!(
        measured_with(&scenario, &abandoned, Some("  \n")).recovery[0].class,
        RecoveryClass::NoFinalAnswer
    );

    let looping: Vec<CallRecord> = std::iter::once(create())
        .chain((1..4).map(|i| failed(i, "crm_log_activity", log.clone(), None)))
        .collect();
    let metrics = measured(&scenario, &looping, "It failed.");
    assert_eq!(metrics.recovery[0].class, RecoveryClass::RetryLoop);
    assert_eq!(
        metrics.loops,
        vec![LoopFinding {
            tool: "crm_log_activity".into(),
            arguments: r#"{"contact_id":"C-013","type":"call"}"#.into(),
            calls: vec![1, 2, 3]
        }]
    );
}

/// Loop keys compare numbers by value and objects regardless of key order, so
/// `{"type": "call", "n": 1}` and `{"n": 1.0, "type": "call"}` are the same call twice.
#[test]
fn loops_compare_arguments_by_value_and_key_order() {
    let scenario = t2_007();
    let trace = [
        create(),
        ok(
            1,
            "crm_search_contacts",
            json!({"query": "Jo", "limit": 1}),
            json!({}),
        ),
        ok(
            2,
            "crm_search_contacts",
            json!({"limit": 1.0, "query": "Jo"}),
            json!({}),
        ),
    ];
    assert_eq!(
        measured(&scenario, &trace, "Done.").loops,
        vec![LoopFinding {
            tool: "crm_search_contacts".into(),
            arguments: r#"{"limit":1,"query":"Jo"}"#.into(),
            calls: vec![1, 2]
        }]
    );
}

/// In `result_aware` mode polling a status that changes is not a loop; the same
/// answer twice still is. `args_only` counts both.
#[test]
fn result_aware_loops_excuse_polling_with_changing_results() {
    let scenario = t2_007();
    let poll = json!({"query": "status"});
    let trace = |second: Value| {
        annotated(&[
            create(),
            ok(1, "crm_search_contacts", poll.clone(), json!({"total": 0})),
            ok(2, "crm_search_contacts", poll.clone(), second),
        ])
    };
    let find = |trace: &[CallRecord], mode| loops::find(trace, mode);
    let changing = trace(json!({"total": 1}));
    assert_eq!(find(&changing, score::LoopMode::ResultAware), vec![]);
    assert_eq!(find(&changing, score::LoopMode::ArgsOnly).len(), 1);
    let same = trace(json!({"total": 0.0}));
    assert_eq!(
        find(&same, score::LoopMode::ResultAware),
        vec![LoopFinding {
            tool: "crm_search_contacts".into(),
            arguments: r#"{"query":"status"}"#.into(),
            calls: vec![1, 2]
        }]
    );
    let _ = scenario;
}

#[test]
fn wrong_tool_shows_as_a_confusion_and_as_the_first_divergence() {
    let scenario = t2_007();
    let trace = [
        create(),
        ok(
            1,
            "crm_update_contact",
            json!({"contact_id": "C-013", "changes": {"title": "x"}}),
            json!({}),
        ),
    ];
    let metrics = measured(&scenario, &trace, "Done.");
    assert_eq!(metrics.selection.correct, 1);
    assert_eq!(
        metrics.selection.confusions,
        vec![Confusion {
            expected: "crm_log_activity".into(),
            called: Some("crm_update_contact".into())
        }]
    );
    assert_eq!(
        metrics.first_divergence.as_deref(),
        Some("call 2: expected `crm_log_activity`, got `crm_update_contact`")
    );
    let summary = MetricsSummary::of([&metrics, &metrics]);
    assert_eq!(summary.selection_accuracy, Some(0.5));
    assert_eq!(
        summary.confusion,
        vec![
            ConfusionCell {
                expected: "crm_create_contact".into(),
                called: Some("crm_create_contact".into()),
                count: 2
            },
            ConfusionCell {
                expected: "crm_log_activity".into(),
                called: Some("crm_update_contact".into()),
                count: 2
            },
        ]
    );
}

#[test]
fn a_tally_gives_the_same_summary_whatever_order_runs_finish_in() {
    let scenario = t2_007();
    let base = measured(&scenario, &[create()], "Done.");
    let runs: Vec<RunMetrics> = [0.1, 0.2, 0.3]
        .into_iter()
        .map(|efficiency| RunMetrics {
            chain_efficiency: Some(efficiency),
            ..base.clone()
        })
        .collect();
    let in_order = MetricsSummary::of(&runs);
    let mut tally = MetricsTally::default();
    for position in [1, 2, 0] {
        tally.add(position, &runs[position]);
    }
    let out_of_order = tally.finish();
    assert_eq!(out_of_order, in_order);
    // Summed in suite order: (0.1 + 0.2) + 0.3, which differs in its last bit from the
    // finishing order's (0.2 + 0.3) + 0.1.
    assert_eq!(in_order.chain_efficiency, Some((0.1 + 0.2 + 0.3) / 3.0));
    assert_ne!((0.1 + 0.2 + 0.3) / 3.0, (0.2 + 0.3 + 0.1) / 3.0);
}

#[test]
fn argument_failures_are_classed_as_bfcl_does() {
    let scenario = t2_007();
    let trace = [
        create(),
        ok(
            1,
            "crm_log_activity",
            json!({"contact_id": 13, "type": "phone", "mood": "good"}),
            json!({}),
        ),
        ok(2, "crm_log_activity", json!({"type": "call"}), json!({})),
    ];
    let metrics = measured(&scenario, &trace, "Done.");
    let classes: Vec<(usize, ArgumentErrorClass, &str)> = metrics
        .arguments
        .errors
        .iter()
        .map(|e| (e.call, e.class, e.pointer.as_str()))
        .collect();
    assert!(
        classes.contains(&(1, ArgumentErrorClass::TypeError, "/contact_id")),
        "{classes:?}"
    );
    assert!(
        classes.contains(&(1, ArgumentErrorClass::EnumError, "/type")),
        "{classes:?}"
    );
    assert!(
        classes.contains(&(1, ArgumentErrorClass::UnexpectedParam, "/mood")),
        "{classes:?}"
    );
    assert!(
        classes.contains(&(2, ArgumentErrorClass::MissingRequired, "/contact_id")),
        "{classes:?}"
    );
    assert_eq!(
        (
            metrics.arguments.calls,
            metrics.arguments.name_match,
            metrics.arguments.schema_valid
        ),
        (3, 3, 1)
    );
    assert_eq!(metrics.chain_efficiency, Some(2.0 / 3.0));
    assert!(metrics.inefficient);
}

#[test]
fn exact_match_means_no_arguments_beyond_the_scenarios() {
    let scenario = t2_007();
    let plain = [
        create(),
        ok(
            1,
            "crm_log_activity",
            json!({"contact_id": "C-013", "type": "call"}),
            json!({}),
        ),
    ];
    let metrics = measured(&scenario, &plain, "Done.");
    assert_eq!(
        (metrics.arguments.accurate, metrics.arguments.exact),
        (2, 2)
    );
    let extra = [
        create(),
        ok(
            1,
            "crm_log_activity",
            json!({"contact_id": "C-013", "type": "call", "subject": "Renewal"}),
            json!({}),
        ),
    ];
    let metrics = measured(&scenario, &extra, "Done.");
    assert_eq!(
        (metrics.arguments.accurate, metrics.arguments.exact),
        (2, 1)
    );
}

/// Field case B14: a truncated call is a failed call with reason `truncated`, never
/// `missing_required`.
#[test]
fn b14_truncated_call_is_classed_truncated() {
    let scenario = t2_007();
    let mut cut = ok(
        1,
        "crm_log_activity",
        json!("{\"contact_id\": \"C-0"),
        json!({}),
    );
    cut.outcome = CallOutcome::InvalidCall;
    cut.result = None;
    cut.invalid = Some(InvalidCallKind::Truncated);
    let metrics = measured(&scenario, &[create(), cut], "Done.");
    let classes: Vec<ArgumentErrorClass> =
        metrics.arguments.errors.iter().map(|e| e.class).collect();
    assert_eq!(classes, vec![ArgumentErrorClass::Truncated]);
}

/// Field case B04 (AU-Harness#31): scalar values are compared, and a missing required
/// parameter is named.
#[test]
fn b04_scalar_values_and_required_parameters_are_checked() {
    let schema = json!({"type": "object",
        "properties": {"number": {"type": "integer"}, "base": {"type": "integer"}},
        "required": ["number", "base"]});
    let validator = jsonschema::draft202012::new(&schema).expect("valid schema");
    let expected = json!({"number": 10, "base": 10});
    let check = |actual: Value| -> (Vec<String>, Vec<ArgumentErrorClass>) {
        let mismatches = expected
            .as_object()
            .map(|e| {
                e.iter()
                    .filter_map(|(k, v)| {
                        actual
                            .get(k)
                            .and_then(|a| crate::json::match_value(v, a, &format!("/{k}")).err())
                    })
                    .collect()
            })
            .unwrap_or_default();
        let classes = check_arguments(&validator, &schema, "convert_base", &actual)
            .violations
            .into_iter()
            .map(|v| v.class)
            .collect();
        (mismatches, classes)
    };
    assert_eq!(
        check(json!({"number": 10, "base": 999})),
        (vec!["`/base`: expected 10, got 999".to_string()], vec![])
    );
    assert_eq!(check(json!({"number": 10, "base": 10})), (vec![], vec![]));
    assert_eq!(
        check(json!({"number": 10})),
        (vec![], vec![ArgumentErrorClass::MissingRequired])
    );
}

#[test]
fn scoring_is_pure_the_same_trace_gives_the_same_bytes() {
    let scenario = t2_007();
    let trace = [
        create(),
        failed(
            1,
            "crm_log_activity",
            json!({"type": "call", "contact_id": "C-9"}),
            None,
        ),
    ];
    let first =
        serde_json::to_string(&measured(&scenario, &trace, "It failed.")).expect("serializes");
    let second =
        serde_json::to_string(&measured(&scenario, &trace, "It failed.")).expect("serializes");
    assert_eq!(first, second);
    assert!(first.contains("\"class\":\"gave_up_honestly\""), "{first}");
}

/// Output-schema violations recorded by the harness reach the run's metrics as one
/// line per path.
#[test]
fn output_schema_violations_reach_the_metrics() {
    let scenario = t2_007();
    let mut call = ok(
        0,
        "crm_create_contact",
        json!({"name": "Jo"}),
        json!({"id": 7}),
    );
    call.output_violations = vec![crate::trace::OutputViolation {
        pointer: "/id".into(),
        message: "7 is not of type \"string\"".into(),
    }];
    let metrics = measured(&scenario, &[call], "Done.");
    assert_eq!(
        metrics.output_violations,
        ["call 1 `crm_create_contact`: `/id`: 7 is not of type \"string\""]
    );
}
