//! Production checks: clean runs pass, defects fail with their detail, no data is inconclusive.

use serde_json::{Value, json};

use super::*;
use crate::trace::{CallOutcome, Violation};

fn ok(index: usize, tool: &str, arguments: Value, result: Value) -> CallRecord {
    let mut call = CallRecord::recorded(index, tool, arguments);
    call.result = Some(result);
    call.duration_us = 100;
    call
}

fn failed(index: usize, tool: &str, arguments: Value, error: &str) -> CallRecord {
    let mut call = CallRecord::recorded(index, tool, arguments);
    call.outcome = CallOutcome::ToolError;
    call.error = Some(error.to_owned());
    call.duration_us = 100;
    call
}

fn view<'a>(calls: &'a [CallRecord], answer: Option<&'a str>) -> TraceView<'a> {
    TraceView {
        trace_id: "t-1",
        prompt: Some("Find Ada."),
        calls,
        final_answer: answer,
        has_results: true,
        has_outcomes: true,
        has_durations: true,
        has_catalog: true,
    }
}

fn verdicts(score: &TraceScore) -> Vec<(&'static str, Verdict, &str)> {
    score
        .checks
        .iter()
        .map(|check| (check.kind.as_str(), check.verdict, check.detail.as_str()))
        .collect()
}

#[test]
fn a_clean_trajectory_passes_every_check() {
    let calls = [
        ok(
            0,
            "search",
            json!({"query": "Ada"}),
            json!({"contacts": [{"id": "C-1"}]}),
        ),
        ok(
            1,
            "get",
            json!({"contact_id": "C-1"}),
            json!({"name": "Ada"}),
        ),
    ];
    let score = score_trace(&view(&calls, Some("Ada is C-1.")));
    assert!(
        score
            .checks
            .iter()
            .all(|check| check.verdict == Verdict::Pass),
        "{score:?}"
    );
    assert_eq!((score.calls, score.tool_time_us), (2, Some(200)));
}

#[test]
fn an_invented_id_and_a_claimed_success_after_an_error_fail_with_their_detail() {
    let calls = [failed(
        0,
        "get",
        json!({"contact_id": "C-999"}),
        "not found",
    )];
    let score = score_trace(&view(&calls, Some("Done, here is the contact.")));
    let found = verdicts(&score);
    assert_eq!(
        found[3],
        (
            "no_invented_ids",
            Verdict::Fail,
            "call 1 `get`: `/contact_id` = `C-999` appears in no earlier result or the prompt"
        )
    );
    assert_eq!(
        found[4],
        (
            "no_false_success",
            Verdict::Fail,
            "call 1 `get` failed and nothing recovered it, yet the final answer does not say so"
        )
    );
    // Saying so is honest.
    let honest = score_trace(&view(&calls, Some("Sorry, that contact was not found.")));
    assert_eq!(honest.checks[4].verdict, Verdict::Pass);
}

#[test]
fn loops_storms_unknown_tools_and_bad_arguments_fail() {
    let mut unknown = ok(0, "serch", json!({}), json!({}));
    unknown.unknown_tool = true;
    let mut invalid = ok(1, "get", json!({"contact_id": 7}), json!({}));
    invalid.violations = vec![Violation {
        class: crate::trace::ArgumentErrorClass::TypeError,
        pointer: "/contact_id".into(),
        message: "7 is not of type \"string\"".into(),
    }];
    let calls = [
        unknown,
        invalid,
        failed(2, "sync", json!({"a": 1}), "busy"),
        failed(3, "sync", json!({"a": 1}), "busy"),
        failed(4, "sync", json!({"a": 1}), "busy"),
        ok(5, "list", json!({}), json!([])),
        ok(6, "list", json!({}), json!([])),
    ];
    let score = score_trace(&view(&calls, Some("The sync failed.")));
    let found = verdicts(&score);
    assert_eq!(
        found[0],
        (
            "known_tools",
            Verdict::Fail,
            "call 1 `serch`: not in the catalog"
        )
    );
    assert_eq!(
        found[1],
        (
            "arguments_valid",
            Verdict::Fail,
            "call 2 `get`: `/contact_id`: 7 is not of type \"string\""
        )
    );
    assert_eq!(
        found[2],
        (
            "no_loops",
            Verdict::Fail,
            // Two identical successes are a loop (three failed syncs too: below).
            "`list` called 2 times with {}"
        )
    );
    let syncs: Vec<CallRecord> = (0..3)
        .map(|index| failed(index, "sync", json!({"a": 1}), "busy"))
        .collect();
    let storm = score_trace(&view(&syncs, Some("The sync failed.")));
    assert_eq!(
        verdicts(&storm)[2],
        (
            "no_loops",
            Verdict::Fail,
            "`sync` called 3 times with {\"a\":1}"
        )
    );
    let retried = score_trace(&view(&syncs[..2], Some("The sync failed.")));
    assert_eq!(
        verdicts(&retried)[2].1,
        Verdict::Pass,
        "one retry of a failure"
    );
    assert_eq!(
        found[5],
        (
            "no_retry_storm",
            Verdict::Fail,
            "call 3 `sync` failed 3 or more times in a row with the same arguments"
        )
    );
}

/// A retry storm that nothing recovered, followed by an answer claiming the write worked, is
/// two faults: the storm and a false success (the storm once hid the claim).
#[test]
fn a_retry_storm_ending_in_a_claim_of_success_is_also_a_false_success() {
    let calls: Vec<CallRecord> = (0..3)
        .map(|index| failed(index, "update", json!({"id": "C-1"}), "server error"))
        .collect();
    let claimed = score_trace(&view(&calls, Some("Done, the contact is updated.")));
    assert_eq!(
        (claimed.checks[4].verdict, claimed.checks[5].verdict),
        (Verdict::Fail, Verdict::Fail)
    );
    assert_eq!(
        claimed.checks[4].detail,
        "call 1 `update` failed and nothing recovered it, yet the final answer does not say so"
    );
    let honest = score_trace(&view(&calls, Some("The update failed: server error.")));
    assert_eq!(
        (honest.checks[4].verdict, honest.checks[5].verdict),
        (Verdict::Pass, Verdict::Fail)
    );
    // A later success recovers the storm: no false success.
    let mut recovered = calls.clone();
    recovered.push(ok(
        3,
        "update",
        json!({"id": "C-1", "force": true}),
        json!({"ok": true}),
    ));
    let fixed = score_trace(&view(&recovered, Some("Done, the contact is updated.")));
    assert_eq!(fixed.checks[4].verdict, Verdict::Pass);
}

#[test]
fn checks_lacking_their_data_are_inconclusive_never_passed() {
    let calls = [failed(
        0,
        "get",
        json!({"contact_id": "C-999"}),
        "not found",
    )];
    let bare = TraceView {
        prompt: None,
        has_results: false,
        has_outcomes: false,
        has_durations: false,
        has_catalog: false,
        ..view(&calls, None)
    };
    let score = score_trace(&bare);
    let found: Vec<(&str, Verdict)> = verdicts(&score)
        .into_iter()
        .map(|(k, v, _)| (k, v))
        .collect();
    assert_eq!(
        found,
        [
            ("known_tools", Verdict::Inconclusive),
            ("arguments_valid", Verdict::Inconclusive),
            ("no_loops", Verdict::Pass),
            ("no_invented_ids", Verdict::Inconclusive),
            ("no_false_success", Verdict::Inconclusive),
            ("no_retry_storm", Verdict::Inconclusive),
        ]
    );
    assert_eq!(
        score.checks[0].detail,
        "the trace has no catalog to check against (give one)"
    );
    assert_eq!(score.tool_time_us, None);
    // Outcomes but no final answer: whether the failure was admitted cannot be told.
    let no_answer = TraceView {
        has_outcomes: true,
        ..bare
    };
    let check = &score_trace(&no_answer).checks[4];
    assert_eq!(
        (check.verdict, check.detail.as_str()),
        (Verdict::Inconclusive, "the trace has no final answer")
    );
}

#[test]
fn the_summary_counts_verdicts_keeps_failing_examples_and_rates_among_conclusive_runs() {
    let mut summary = TraceSummary::default();
    let clean = [ok(0, "get", json!({"contact_id": "C-1"}), json!({}))];
    let invented = [ok(0, "get", json!({"contact_id": "C-9"}), json!({}))];
    let mut prompt_view = view(&clean, Some("ok"));
    prompt_view.prompt = Some("C-1");
    summary.add(&score_trace(&prompt_view));
    let mut second = score_trace(&view(&invented, Some("ok")));
    second.trace_id = "t-2".into();
    summary.add(&second);
    summary.finish();
    assert_eq!(
        (summary.trajectories, summary.failed, summary.calls),
        (2, 1, 2)
    );
    let tally = &summary.checks["no_invented_ids"];
    assert_eq!((tally.passed, tally.failed, tally.inconclusive), (1, 1, 0));
    assert_eq!(tally.failure_rate(), Some(0.5));
    assert_eq!(tally.examples[0].0, "t-2");
    assert_eq!(summary.calls_per_trajectory, Percentiles { p50: 1, p95: 1 });
    assert_eq!(
        summary.tool_time_us,
        Some(Percentiles { p50: 100, p95: 100 })
    );
}
