//! Checks from `final_state_probes`: the probe's result after the run, against its assertions,
//! with `baseline` read from the same probe on the freshly seeded backend.

use serde_json::{Value, json};

use super::{Check, CheckKind};
use crate::scenario::{PROBE_RESULT, Scenario};

/// A probe's result (see [`crate::scenario::Probe`]), or why the probe call failed.
pub type ProbeResult = Result<Value, String>;

/// How the error of a probe after the run starts when its answer is no evidence of the run: a
/// replay whose calls differ from the recording answers the probe as recorded, whatever the
/// agent did. Its assertions fail with that error as their detail.
pub const NOT_EVIDENCE: &str = "not evidence under replay:";

/// Whether `check` failed only because its probe's answer was not evidence ([`NOT_EVIDENCE`]).
pub fn is_not_evidence(check: &Check) -> bool {
    check.kind == CheckKind::FinalState && !check.passed && check.detail.starts_with(NOT_EVIDENCE)
}

/// One check per assertion of each probe of `scenario`, in file order. `before[i]` and
/// `after[i]` are probe `i`'s results before and after the run; a probe that failed (either
/// time) fails all its assertions, saying why; an `after` error starting [`NOT_EVIDENCE`] is
/// the detail as it is. Missing entries count as failed probes.
pub fn probe_checks(
    scenario: &Scenario,
    before: &[ProbeResult],
    after: &[ProbeResult],
) -> Vec<Check> {
    let mut checks = Vec::new();
    let missing: ProbeResult = Err("the probe did not run".to_string());
    for (i, probe) in scenario.final_state_probes.iter().enumerate() {
        let before = before.get(i).unwrap_or(&missing);
        let after = after.get(i).unwrap_or(&missing);
        for (j, assertion) in probe.assertions.iter().enumerate() {
            let subject = format!(
                "final_state_probes[{i}] `{}` assertions[{j}] `{}`",
                probe.tool,
                assertion.source()
            );
            let (passed, detail) = match (before, after) {
                (Err(error), _) => (false, format!("the probe failed before the run: {error}")),
                (_, Err(error)) if error.starts_with(NOT_EVIDENCE) => (false, error.clone()),
                (_, Err(error)) => (false, format!("the probe failed after the run: {error}")),
                (Ok(before), Ok(after)) => {
                    let seeded = json!({ PROBE_RESULT: before });
                    let state = json!({ PROBE_RESULT: after });
                    match assertion.evaluate(&seeded, &state) {
                        Ok(evaluation) => (evaluation.passed, evaluation.detail),
                        Err(error) => (false, format!("could not evaluate: {error}")),
                    }
                }
            };
            checks.push(Check {
                kind: CheckKind::FinalState,
                subject,
                passed,
                detail,
            });
        }
    }
    checks
}

/// A catalog finding from the probes: the run called only tools that declare
/// `readOnlyHint: true` (and each call succeeded), yet a probe's result changed between before
/// and after the run. Says which tools were called and which probe changed; `None` when some
/// call was to another tool or failed, when there were no calls, or when no probe changed.
/// A declared read-only tool that changes state misleads every client that trusts the hint
/// (MCP `ToolAnnotations`): the finding is about the server, not the agent.
pub fn read_only_changes(
    scenario: &Scenario,
    trace: &[crate::trace::CallRecord],
    before: &[ProbeResult],
    after: &[ProbeResult],
) -> Option<String> {
    let all_reads = !trace.is_empty()
        && trace
            .iter()
            .all(|call| call.is_success() && scenario.is_read_only(&call.tool));
    if !all_reads {
        return None;
    }
    let changed = scenario
        .final_state_probes
        .iter()
        .zip(before.iter().zip(after))
        .find(|(_, (before, after))| matches!((before, after), (Ok(a), Ok(b)) if a != b))?;
    let mut tools: Vec<&str> = trace.iter().map(|call| call.tool.as_str()).collect();
    tools.sort_unstable();
    tools.dedup();
    Some(format!(
        "{} declare{} `readOnlyHint: true`, yet probe `{}` {} changed after calling only {}",
        tools
            .iter()
            .map(|tool| format!("`{tool}`"))
            .collect::<Vec<_>>()
            .join(", "),
        if tools.len() == 1 { "s" } else { "" },
        changed.0.tool,
        Value::Object(changed.0.arguments.clone()),
        if tools.len() == 1 { "it" } else { "them" },
    ))
}

#[cfg(test)]
mod tests {
    //! Probe checks: the result after the run against the seeded baseline; failed probes say why.

    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::catalog::{Catalog, ToolDef};

    fn scenario() -> Scenario {
        let tool = ToolDef::from_server(
            "memory",
            json!({"name": "read_graph", "inputSchema": {"type": "object"}}),
        );
        let text = "id: P-1\ntier: 1\ntype: single_call\nprompt: Add Ada.\nexpected_calls: []\nfinal_state_probes:\n  - tool: read_graph\n    assertions:\n      - \"result.entities.count == baseline + 1\"\n      - \"result.entities.exists(e, e.name == 'Ada')\"\n";
        crate::scenario::load::parse(
            text,
            Path::new("p.yaml"),
            Path::new("."),
            &Catalog::from_tools(vec![tool]),
        )
        .expect("valid")
    }

    #[test]
    fn probe_assertions_compare_the_result_after_the_run_with_the_baseline() {
        let scenario = scenario();
        let before = [Ok(json!({"entities": [{"name": "Bo"}]}))];
        let after = [Ok(json!({"entities": [{"name": "Bo"}, {"name": "Ada"}]}))];
        let checks = probe_checks(&scenario, &before, &after);
        assert_eq!(checks.len(), 2);
        assert!(checks.iter().all(|check| check.passed), "{checks:?}");
        assert_eq!(
            checks[0].subject,
            "final_state_probes[0] `read_graph` assertions[0] `result.entities.count == baseline + 1`"
        );
        let unchanged = probe_checks(&scenario, &before, &before);
        assert_eq!(
            unchanged[0].detail,
            "left `result.entities.count` = 1, right `baseline + 1` = 2 (baseline = 1)"
        );
        assert!(!unchanged[1].passed);
    }

    #[test]
    fn a_failed_probe_fails_its_assertions_and_says_why() {
        let scenario = scenario();
        let checks = probe_checks(
            &scenario,
            &[Err("server gone".into())],
            &[Ok(json!({"entities": []}))],
        );
        assert_eq!(
            checks[0].detail,
            "the probe failed before the run: server gone"
        );
        assert!(!checks[1].passed);
        let missing = probe_checks(&scenario, &[], &[]);
        assert_eq!(
            missing[0].detail,
            "the probe failed before the run: the probe did not run"
        );
    }

    #[test]
    fn a_read_only_tool_that_changed_a_probe_is_a_catalog_finding() {
        let tool = ToolDef::from_server(
            "memory",
            json!({"name": "read_graph",
                   "inputSchema": {"type": "object", "properties": {"depth": {"type": "integer"}}},
                   "annotations": {"readOnlyHint": true}}),
        );
        let write = ToolDef::from_server(
            "memory",
            json!({"name": "add", "inputSchema": {"type": "object"}}),
        );
        let text = "id: P-2\ntier: 1\ntype: single_call\nprompt: Show the graph.\nexpected_calls: []\nfinal_state_probes:\n  - tool: read_graph\n    arguments: {depth: 1}\n    assertions: [\"result == baseline\"]\n";
        let scenario = crate::scenario::load::parse(
            text,
            Path::new("p.yaml"),
            Path::new("."),
            &Catalog::from_tools(vec![tool, write]),
        );
        let scenario = scenario.expect("valid");
        let call = |tool: &str| crate::trace::CallRecord::recorded(0, tool, json!({}));
        let before = [Ok(json!({"entities": []}))];
        let after = [Ok(json!({"entities": [{"name": "Ada"}]}))];
        assert_eq!(
            read_only_changes(&scenario, &[call("read_graph")], &before, &after).as_deref(),
            Some(
                "`read_graph` declares `readOnlyHint: true`, yet probe `read_graph` {\"depth\":1} changed after calling only it"
            )
        );
        assert_eq!(
            read_only_changes(&scenario, &[call("read_graph")], &before, &before),
            None
        );
        assert_eq!(
            read_only_changes(
                &scenario,
                &[call("read_graph"), call("add")],
                &before,
                &after
            ),
            None,
            "a write may change the state"
        );
        assert_eq!(read_only_changes(&scenario, &[], &before, &after), None);
    }
}
