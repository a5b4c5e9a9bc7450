//! A sample run, baseline and verdict for the renderers' snapshot tests: every section shows
//! (Tier 5 failure, quarantine, flip, errored run, moved ruler, trend) and model text that
//! tries to ping, inject HTML and break tables.

use crate::gate::baseline::{BASELINE_SCHEMA_VERSION, BaselineKind, BaselineScenario, TrendPoint};
use crate::gate::metrics::Metrics;
use crate::gate::{Baseline, Policy, Verdict, decide, quarantine};
use crate::results::ScenarioKind;
use crate::results::pins::{Pins, ScenarioPin};
use crate::results::{ConfusedPair, RunReport, ScenarioResult, Summary, look_alikes};
use crate::score::metrics::ConfusionCell;
use crate::score::{Check, CheckKind, Outcome};

fn check(kind: CheckKind, subject: &str, passed: bool, detail: &str) -> Check {
    Check {
        kind,
        subject: subject.into(),
        passed,
        detail: detail.into(),
    }
}

fn result(
    id: &str,
    tier: u8,
    kind: ScenarioKind,
    outcome: Outcome,
    checks: Vec<Check>,
) -> ScenarioResult {
    ScenarioResult {
        state_diff: Vec::new(),
        lines: Default::default(),
        id: id.into(),
        tier,
        kind,
        outcome,
        error: (outcome == Outcome::Errored)
            .then(|| "provider returned HTTP 503: <b>overloaded</b>".into()),
        calls: checks.len(),
        checks,
        final_answer: (outcome == Outcome::Fail)
            .then(|| "Done! cc @octocat | see <script>alert(1)</script>".into()),
        duration_ms: 1200,
        repeat: 0,
        turns: None,
        hit_turn_limit: false,
        truncated: false,
        timed_out: false,
        call_as_text: false,
        usage: None,
        metrics: None,
        judge: None,
        category: None,
        judge_error: None,
        conversation: None,
    }
}

pub(crate) fn pins(harness: &str, t2_hash: char) -> Pins {
    let files = [
        ("T1-001", "scenarios/tier1/T1-001.json", 'a'),
        ("T2-007", "scenarios/tier2/T2-007.json", 'b'),
        ("T2-008", "scenarios/tier2/T2-008.json", t2_hash),
        ("T3-001", "scenarios/tier3/T3-001.json", 'd'),
        ("T5-001", "scenarios/tier5/T5-001.json", 'e'),
        ("T5-002", "scenarios/tier5/T5-002.json", 'f'),
    ];
    let mut pins = Pins {
        model: Some("qwen3:8b".into()),
        provider: "openai-compatible localhost:11434".into(),
        system_prompt_sha256: Some("5".repeat(64)),
        tool_calling: None,
        tool_offer: None,
        judge_model: None,
        user_simulator: None,
        harness_version: harness.into(),
        scenario_set_sha256: String::new(),
        catalog_sha256: "c".repeat(64),
        tools: std::collections::BTreeMap::new(),
        fixture_sha256: String::new(),
        servers: std::collections::BTreeMap::new(),
        scenarios: files
            .iter()
            .map(|(id, path, hash)| {
                (
                    (*id).to_string(),
                    ScenarioPin {
                        path: (*path).into(),
                        sha256: hash.to_string().repeat(64),
                    },
                )
            })
            .collect(),
        fixtures: [("fixtures/crm_baseline.json".to_string(), "9".repeat(64))].into(),
        shard: None,
    };
    pins.rehash();
    pins
}

pub(crate) fn current() -> RunReport {
    use CheckKind::*;
    let ok = |kind, subject| check(kind, subject, true, "holds");
    let scenarios = vec![
        result(
            "T1-001",
            1,
            ScenarioKind::SingleCall,
            Outcome::Pass,
            vec![
                ok(ToolSelection, "expected_calls[0]"),
                ok(ArgsMatch, "expected_calls[0]"),
            ],
        ),
        result(
            "T2-007",
            2,
            ScenarioKind::MultiStep,
            Outcome::Fail,
            vec![
                ok(ToolSelection, "expected_calls[0]"),
                check(
                    ArgsFromPrior,
                    "expected_calls[1]",
                    false,
                    "`contact_id` is \"C-1 | @admin\", but `$.calls[0].result.id` is \"C-013\": not taken from the earlier result",
                ),
            ],
        ),
        result(
            "T2-008",
            2,
            ScenarioKind::ErrorRecovery,
            Outcome::Errored,
            vec![],
        ),
        result(
            "T3-001",
            3,
            ScenarioKind::MultiStep,
            Outcome::Pass,
            vec![
                ok(ToolSelection, "expected_calls[0]"),
                ok(ArgsMatch, "expected_calls[0]"),
            ],
        ),
        result(
            "T5-001",
            5,
            ScenarioKind::AmbiguousInput,
            Outcome::Fail,
            vec![check(
                ToolSelection,
                "expected_calls[0]",
                false,
                "no usable call to `crm_search_contacts` (calls made: none)",
            )],
        ),
        result(
            "T5-002",
            5,
            ScenarioKind::AmbiguousInput,
            Outcome::Fail,
            vec![check(
                FinalState,
                "final_state_assertions[0] `contacts.count == baseline`",
                false,
                "false: 5 != 4",
            )],
        ),
    ];
    RunReport {
        schema_version: 1,
        toolgate_version: "0.1.0".into(),
        agent: "openai".into(),
        model: Some("qwen3:8b".into()),
        pins: Some(pins("0.1.0", 'c')),
        run: None,
        summary: Summary::of(&scenarios),
        scenarios,
        metrics: Default::default(),
        confused_pairs: confused_pairs(),
    }
}

/// Confused pairs as the run report computes them: one the look-alike lint flags (in a small
/// catalog of two near-identical tools), a deliberate look-alike of the built-in catalog that it
/// does not flag, and a model-invented tool name that tries to inject HTML and ping.
pub(crate) fn confused_pairs() -> Vec<ConfusedPair> {
    let cell = |expected: &str, called: &str, count| ConfusionCell {
        expected: expected.into(),
        called: Some(called.into()),
        count,
    };
    let small = [
        serde_json::json!({"name": "purge_record", "description": "Delete the record for good."}),
        serde_json::json!({"name": "drop_record", "description": "Delete the record for good."}),
    ];
    let flagged = look_alikes::of(&[cell("drop_record", "purge_record", 3)], &small);
    let builtin = look_alikes::of(
        &[
            cell("crm_search_contacts", "admin_search_users", 2),
            cell("comm_send_email", "send_mail | <b>@admin</b>", 1),
        ],
        crate::catalog::Catalog::builtin().definitions(),
    );
    flagged.into_iter().chain(builtin).collect()
}

pub(crate) fn baseline() -> Baseline {
    let counts = [
        ("T1-001", 1, ScenarioKind::SingleCall, 7),
        ("T2-007", 2, ScenarioKind::MultiStep, 7),
        ("T2-008", 2, ScenarioKind::ErrorRecovery, 6),
        ("T3-001", 3, ScenarioKind::MultiStep, 2),
        ("T5-001", 5, ScenarioKind::AmbiguousInput, 7),
        ("T5-002", 5, ScenarioKind::AmbiguousInput, 5),
    ];
    let trend = [
        "2026-11-24",
        "2026-11-25",
        "2026-11-26",
        "2026-11-27",
        "2026-11-28",
        "2026-11-29",
        "2026-11-30",
    ]
    .iter()
    .zip([5, 6, 5, 6, 5, 6, 5])
    .map(|(day, passed)| TrendPoint {
        recorded_at: format!("{day}T02:00:00Z"),
        commit: None,
        passed,
        judged: 6,
    })
    .collect();
    Baseline {
        schema_version: BASELINE_SCHEMA_VERSION,
        kind: BaselineKind::Baseline,
        branch: Some("main".into()),
        window: None,
        runs: 7,
        excluded_runs: 0,
        pins: Some(pins("0.1.0", '8')),
        metrics: Metrics {
            selection: Some(0.95),
            arguments: Some(0.9),
            calls_per_run: Some(1.8),
            degraded: Some(0.85),
            ..Metrics::default()
        },
        scenarios: counts
            .iter()
            .map(|(id, tier, kind, passed)| BaselineScenario {
                id: (*id).into(),
                tier: *tier,
                kind: *kind,
                passed: *passed,
                failed: 7 - passed,
                errored: 0,
            })
            .collect(),
        trend,
    }
}

pub(crate) fn verdict() -> Verdict {
    let now = humantime::parse_rfc3339("2026-11-30T12:00:00Z").expect("valid time");
    let quarantine = quarantine::parse(
        "schema_version: 1\nquarantine:\n  - scenario: T5-002\n    reason: upstream wording changed, see <issue> @team\n    expires: 2026-12-07\n",
        now,
    )
    .expect("valid list");
    decide(
        &current(),
        Some(&baseline()),
        &Policy {
            quarantine,
            now,
            ..Policy::default()
        },
    )
}

/// Metrics of a run whose first divergence is `first_divergence`.
pub(crate) fn run_metrics(first_divergence: Option<&str>) -> crate::score::metrics::RunMetrics {
    use crate::score::metrics::{Percentiles, RunMetrics, TrajectoryMatch};
    RunMetrics {
        selection: Default::default(),
        arguments: Default::default(),
        trajectory: TrajectoryMatch::from_counts(1, 2, 2),
        chain_efficiency: Some(1.0),
        inefficient: false,
        loops: Vec::new(),
        provenance: Vec::new(),
        recovery: Vec::new(),
        first_divergence: first_divergence.map(str::to_owned),
        call_latency_us: Percentiles::default(),
        calls_executed: 2,
        calls_refused: 0,
        conversation: None,
        parser_notes: Vec::new(),
        output_violations: Vec::new(),
    }
}

/// [`current`] with ids that had no source: in the passing T1-001, one invented value (with
/// Markdown and a ping in it) sent by two runs and one drifted value; in the passing T3-001,
/// `extra` more invented values.
pub(crate) fn with_id_findings(extra: usize) -> RunReport {
    use crate::score::metrics::{ProvenanceFinding, ProvenanceKind};
    let finding = |call: usize, value: &str, near: Option<&str>| ProvenanceFinding {
        call,
        tool: "crm_get_contact".into(),
        pointer: "/contact_id".into(),
        value: value.into(),
        kind: if near.is_some() {
            ProvenanceKind::Drift
        } else {
            ProvenanceKind::Invented
        },
        near: near.map(str::to_string),
    };
    let mut report = current();
    let mut first = report.scenarios[0].clone();
    assert_eq!(first.id, "T1-001");
    let mut metrics = run_metrics(None);
    metrics.provenance = vec![
        finding(0, "C-9 | @admin <b>", None),
        finding(1, "C-0014", Some("C-0013")),
    ];
    first.metrics = Some(metrics.clone());
    report.scenarios[0].metrics = Some(metrics);
    // A second run of T1-001 (`--repeat 2`) with the same findings: listed once.
    report.scenarios.insert(1, first);
    let third = report
        .scenarios
        .iter_mut()
        .find(|r| r.id == "T3-001")
        .expect("the sample has T3-001");
    let mut metrics = run_metrics(None);
    metrics.provenance = (0..extra)
        .map(|i| finding(i, &format!("C-{}", 100 + i), None))
        .collect();
    third.metrics = Some(metrics);
    report
}
