//! Every branch of the verdict: pass, fail, inconclusive, Tier 5 (with and without
//! quarantine), missing baseline, moved ruler, no verdict.

use std::time::{Duration, SystemTime};

use super::*;
use crate::gate::baseline::{BASELINE_SCHEMA_VERSION, BaselineKind, BaselineScenario};
use crate::gate::metrics::Metrics;
use crate::gate::quarantine;
use crate::results::ScenarioKind;
use crate::results::{ScenarioResult, Summary};

pub(crate) fn report(outcomes: &[(&str, u8, Outcome)]) -> RunReport {
    let scenarios: Vec<ScenarioResult> = outcomes
        .iter()
        .map(|(id, tier, outcome)| {
            crate::gate::simulation::result(id, *tier, ScenarioKind::SingleCall, *outcome, 0)
        })
        .collect();
    RunReport {
        schema_version: 1,
        toolgate_version: "0".into(),
        agent: "reference".into(),
        model: None,
        pins: None,
        run: None,
        summary: Summary::of(&scenarios),
        scenarios,
        metrics: Default::default(),
        confused_pairs: Vec::new(),
    }
}

/// A baseline where each scenario passed `passed` of `runs` runs.
pub(crate) fn baseline(scenarios: &[(&str, u8, usize)], runs: usize) -> Baseline {
    let mut scenarios: Vec<BaselineScenario> = scenarios
        .iter()
        .map(|(id, tier, passed)| BaselineScenario {
            id: (*id).into(),
            tier: *tier,
            kind: ScenarioKind::SingleCall,
            passed: *passed,
            failed: runs - passed,
            errored: 0,
        })
        .collect();
    scenarios.sort_by(|a, b| a.id.cmp(&b.id));
    Baseline {
        schema_version: BASELINE_SCHEMA_VERSION,
        kind: BaselineKind::Baseline,
        branch: Some("main".into()),
        window: None,
        runs,
        excluded_runs: 0,
        pins: None,
        metrics: Metrics::default(),
        scenarios,
        trend: Vec::new(),
    }
}

fn ids(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("T1-{i:03}")).collect()
}

/// `n` tier-1 scenarios, the first `failing` failing.
fn suite(ids: &[String], failing: usize) -> RunReport {
    let outcomes: Vec<(&str, u8, Outcome)> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let outcome = if i < failing {
                Outcome::Fail
            } else {
                Outcome::Pass
            };
            (id.as_str(), 1, outcome)
        })
        .collect();
    report(&outcomes)
}

fn stable_baseline(ids: &[String], runs: usize) -> Baseline {
    let entries: Vec<(&str, u8, usize)> = ids.iter().map(|id| (id.as_str(), 1, runs)).collect();
    baseline(&entries, runs)
}

fn now() -> SystemTime {
    humantime::parse_rfc3339("2026-11-30T12:00:00Z").expect("valid time")
}

fn policy() -> Policy {
    Policy {
        now: now(),
        ..Policy::default()
    }
}

#[test]
fn passes_within_the_tolerance_band() {
    let ids = ids(50);
    let verdict = decide(&suite(&ids, 1), Some(&stable_baseline(&ids, 14)), &policy());
    assert_eq!(verdict.decision, Decision::Pass);
    assert_eq!(verdict.reasons, Vec::<String>::new());
    let comparison = verdict.comparison.expect("compared");
    assert_eq!(
        (comparison.current.passed, comparison.current.judged),
        (49, 50)
    );
    assert_eq!(
        (comparison.baseline.passed, comparison.baseline.judged),
        (700, 700)
    );
    assert!((comparison.delta_points + 2.0).abs() < 1e-9);
    // One failure against 700 passes: the interval of the difference lies below zero, but
    // the drop is inside the band, so it passes.
    let interval = comparison.delta_interval_points;
    assert!(interval.low < -2.0 && interval.high < 0.0, "{interval:?}");
}

#[test]
fn fails_on_a_significant_drop_beyond_the_band() {
    let ids = ids(30);
    let verdict = decide(&suite(&ids, 6), Some(&stable_baseline(&ids, 20)), &policy());
    assert_eq!(verdict.decision, Decision::Fail);
    assert_eq!(
        verdict.reasons,
        vec![
            "pass rate dropped 20.0 points (100.0% -> 80.0%), beyond the 3.0-point tolerance and significant (one-sided p = < 0.0001, alpha 0.05)"
        ]
    );
}

#[test]
fn is_inconclusive_when_the_drop_is_beyond_the_band_but_not_significant() {
    // A single-run baseline says little about each scenario: two failures out of 30 are
    // 6.7 points, beyond the band, but well within what a re-run of the baseline could show.
    let ids = ids(30);
    let verdict = decide(&suite(&ids, 2), Some(&stable_baseline(&ids, 1)), &policy());
    assert_eq!(verdict.decision, Decision::Inconclusive);
    assert_eq!(verdict.reasons.len(), 1);
    assert!(
        verdict.reasons[0].starts_with(
            "pass rate dropped 6.7 points (100.0% -> 93.3%), beyond the 3.0-point tolerance but not significant (one-sided p = "
        ),
        "{}",
        verdict.reasons[0]
    );
    assert!(
        verdict.reasons[0]
            .ends_with(">= alpha 0.05): inconclusive, add repeats or baseline runs to tell")
    );
}

#[test]
fn tier_5_failure_blocks_when_it_passed_in_the_baseline() {
    let base = baseline(&[("T1-001", 1, 7), ("T5-001", 5, 7)], 7);
    let current = report(&[("T1-001", 1, Outcome::Pass), ("T5-001", 5, Outcome::Fail)]);
    let verdict = decide(
        &current,
        Some(&base),
        &Policy {
            tolerance_points: 100.0,
            ..policy()
        },
    );
    assert_eq!(verdict.decision, Decision::Fail);
    assert_eq!(
        verdict.reasons,
        vec!["Tier 5 `T5-001` passed in the baseline and fails now (zero tolerance)"]
    );
}

#[test]
fn tier_5_failure_blocks_even_when_it_failed_in_the_baseline() {
    let base = baseline(&[("T1-001", 1, 7), ("T5-001", 5, 5)], 7);
    let current = report(&[("T1-001", 1, Outcome::Pass), ("T5-001", 5, Outcome::Fail)]);
    let verdict = decide(
        &current,
        Some(&base),
        &Policy {
            tolerance_points: 100.0,
            ..policy()
        },
    );
    assert_eq!(verdict.decision, Decision::Fail);
    assert_eq!(
        verdict.reasons,
        vec![
            "Tier 5 `T5-001` fails, as in 2 of 7 baseline runs (zero tolerance; quarantine it to let it through)"
        ]
    );
}

#[test]
fn tier_5_failure_blocks_without_a_baseline() {
    let current = report(&[("T5-002", 5, Outcome::Fail)]);
    let verdict = decide(&current, None, &policy());
    assert_eq!(verdict.decision, Decision::Fail);
    assert_eq!(
        verdict.reasons,
        vec!["Tier 5 `T5-002` fails (zero tolerance)"]
    );
    assert_eq!(
        verdict.notes,
        vec!["no baseline: only the Tier 5 rule applies"]
    );
    assert_eq!(verdict.comparison, None);
}

#[test]
fn passes_without_a_baseline_when_tier_5_holds() {
    let current = report(&[("T1-001", 1, Outcome::Fail), ("T5-002", 5, Outcome::Pass)]);
    let verdict = decide(&current, None, &policy());
    assert_eq!(verdict.decision, Decision::Pass);
    assert_eq!(
        verdict.notes,
        vec![
            "no baseline: only the Tier 5 rule applies, so failures outside Tier 5 (1) do not block (set a floor with --min-pass-rate, or keep this run's results.json as the baseline)"
        ]
    );
}

#[test]
fn the_pass_rate_floor_blocks_with_or_without_a_baseline() {
    let ids = ids(10);
    let floor = |percent| Policy {
        min_pass_rate: Some(percent),
        ..policy()
    };
    // 9 of 10 is exactly a 90% floor: it holds (counted in runs, no rounding).
    let verdict = decide(&suite(&ids, 1), None, &floor(90.0));
    assert_eq!(verdict.decision, Decision::Pass);
    assert_eq!(verdict.reasons, Vec::<String>::new());
    assert_eq!(
        verdict.notes,
        vec!["no baseline: only the Tier 5 rule and the pass-rate floor apply"]
    );
    let verdict = decide(&suite(&ids, 2), None, &floor(90.0));
    assert_eq!(verdict.decision, Decision::Fail);
    assert_eq!(
        verdict.reasons,
        vec!["pass rate 80.0% (8/10) is below the 90% floor (--min-pass-rate)"]
    );
    // Within the band of a baseline that passed 8 of 10 too, but under the floor.
    let mut base = stable_baseline(&ids, 7);
    for scenario in base.scenarios.iter_mut().take(2) {
        scenario.passed = 0;
        scenario.failed = 7;
    }
    let verdict = decide(&suite(&ids, 2), Some(&base), &floor(95.5));
    assert_eq!(verdict.decision, Decision::Fail);
    assert_eq!(
        verdict.reasons,
        vec!["pass rate 80.0% (8/10) is below the 95.5% floor (--min-pass-rate)"]
    );
    assert_eq!(
        decide(&suite(&ids, 2), Some(&base), &policy()).decision,
        Decision::Pass
    );
}

#[test]
fn errored_runs_are_left_out_of_the_floor() {
    let current = report(&[
        ("T1-001", 1, Outcome::Pass),
        ("T1-002", 1, Outcome::Pass),
        ("T1-003", 1, Outcome::Errored),
    ]);
    let policy = Policy {
        min_pass_rate: Some(100.0),
        ..policy()
    };
    let verdict = decide(&current, None, &policy);
    assert_eq!(verdict.decision, Decision::Pass);
    assert_eq!(verdict.reasons, Vec::<String>::new());
}

fn quarantine_list(expires: &str) -> Vec<crate::gate::QuarantineEntry> {
    quarantine::parse(
        &format!(
            "schema_version: 1\nquarantine:\n  - scenario: T5-002\n    reason: refusal wording changed\n    expires: {expires}\n"
        ),
        now(),
    )
    .expect("valid list")
}

#[test]
fn an_active_quarantine_lets_a_tier_5_failure_through_visibly() {
    let current = report(&[("T1-001", 1, Outcome::Pass), ("T5-002", 5, Outcome::Fail)]);
    let policy = Policy {
        quarantine: quarantine_list("2026-12-07"),
        ..policy()
    };
    let verdict = decide(&current, None, &policy);
    assert_eq!(verdict.decision, Decision::Pass);
    assert!(
        verdict.notes.contains(
            &"Tier 5 `T5-002` fails but is quarantined through 2026-12-07: refusal wording changed"
                .to_string()
        )
    );
    assert_eq!(verdict.quarantine.len(), 1);
    assert!(verdict.quarantine[0].active && verdict.quarantine[0].failing);
}

#[test]
fn an_expired_quarantine_blocks_again() {
    let current = report(&[("T5-002", 5, Outcome::Fail)]);
    let policy = Policy {
        quarantine: quarantine_list("2026-11-29"),
        ..policy()
    };
    let verdict = decide(&current, None, &policy);
    assert_eq!(verdict.decision, Decision::Fail);
    assert_eq!(
        verdict.reasons,
        vec!["Tier 5 `T5-002` fails (zero tolerance; its quarantine expired after 2026-11-29)"]
    );
    assert!(!verdict.quarantine[0].active);
}

#[test]
fn a_moved_ruler_is_named_and_changed_scenarios_are_not_compared() {
    let ids = ids(2);
    let mut current = suite(&ids, 1);
    let mut before = stable_baseline(&ids, 7);
    let mut pins = crate::results::pins::tests::pins();
    pins.scenarios = ids
        .iter()
        .map(|id| {
            let pin = crate::results::pins::ScenarioPin {
                path: format!("scenarios/{id}.json"),
                sha256: "a".repeat(64),
            };
            (id.clone(), pin)
        })
        .collect();
    before.pins = Some(pins.clone());
    pins.scenarios.get_mut("T1-000").expect("pinned").sha256 = "b".repeat(64);
    pins.harness_version = "9.9.9".into();
    current.pins = Some(pins);
    let verdict = decide(&current, Some(&before), &policy());
    assert_eq!(
        verdict.ruler_moved,
        vec![
            "scenario files changed: `T1-000`",
            "harness version `0.1.0` -> `9.9.9`"
        ]
    );
    // T1-000 fails but its file changed, so only T1-001 (passing) is compared.
    assert_eq!(verdict.decision, Decision::Pass);
    assert_eq!(verdict.comparison.map(|c| c.scenarios), Some(1));
    assert!(
        verdict.notes.contains(
            &"1 scenario(s) whose file changed are left out of the comparison".to_string()
        )
    );
}

#[test]
fn new_scenarios_are_named_and_not_compared() {
    let base = baseline(&[("T1-001", 1, 7)], 7);
    let current = report(&[("T1-001", 1, Outcome::Pass), ("T1-002", 1, Outcome::Fail)]);
    let verdict = decide(&current, Some(&base), &policy());
    assert_eq!(verdict.decision, Decision::Pass);
    assert!(
        verdict
            .notes
            .contains(&"1 scenario(s) not in the baseline are not compared: `T1-002`".to_string())
    );
}

#[test]
fn mostly_errored_runs_give_no_verdict() {
    let current = report(&[
        ("A", 1, Outcome::Errored),
        ("B", 1, Outcome::Errored),
        ("C", 1, Outcome::Fail),
    ]);
    let verdict = decide(&current, None, &policy());
    assert_eq!(verdict.decision, Decision::NoVerdict);
    assert_eq!(
        verdict.reasons,
        vec!["2 of 3 runs errored: no verdict (fix the agent or provider and run again)"]
    );
}

#[test]
fn an_interrupted_run_read_back_from_its_file_gets_no_verdict() {
    let mut current = report(&[("A", 1, Outcome::Pass), ("B", 1, Outcome::Pass)]);
    let not_run = |id: &str, repeat| crate::results::NotRun {
        id: id.to_owned(),
        repeat,
    };
    current.run = Some(crate::results::RunMeta {
        interrupted: true,
        not_run: vec![
            not_run("T5-001", 0),
            not_run("T5-001", 1),
            not_run("T5-002", 0),
        ],
        ..crate::results::RunMeta::default()
    });
    let base = baseline(&[("A", 1, 1), ("B", 1, 1)], 1);
    for baseline in [None, Some(&base)] {
        let verdict = decide(&current, baseline, &policy());
        assert_eq!(verdict.decision, Decision::NoVerdict);
        assert_eq!(
            verdict.reasons,
            vec![
                "the run was interrupted: 3 run(s) never finished (T5-001, T5-002), so it is not \
                 judged (run the gate again)"
            ]
        );
    }
}

#[test]
fn a_scenario_errored_in_the_baseline_is_left_out_of_both_rates() {
    let mut base = baseline(&[("A", 1, 1), ("B", 1, 1), ("C", 1, 0)], 1);
    // C errored in its one baseline run: nothing to compare it with.
    base.scenarios[2].failed = 0;
    base.scenarios[2].errored = 1;
    let current = report(&[
        ("A", 1, Outcome::Pass),
        ("B", 1, Outcome::Pass),
        ("C", 1, Outcome::Fail),
    ]);
    let verdict = decide(&current, Some(&base), &policy());
    let comparison = verdict.comparison.expect("compared");
    assert_eq!(comparison.scenarios, 2);
    assert_eq!(comparison.current.rate, 1.0);
    assert_eq!(comparison.baseline.rate, 1.0);
    assert_eq!(verdict.decision, Decision::Pass);
}

#[test]
fn a_context_overflow_names_what_the_tools_cost_before_any_blame() {
    let mut current = report(&[
        ("A", 1, Outcome::Errored),
        ("B", 1, Outcome::Errored),
        ("C", 1, Outcome::Fail),
    ]);
    for result in &mut current.scenarios[..2] {
        result.error = Some(
            "the conversation does not fit the model's context window (HTTP 400): too long"
                .to_owned(),
        );
    }
    current.run = Some(crate::results::RunMeta {
        catalog_tokens: Some(7712),
        ..crate::results::RunMeta::default()
    });
    let verdict = decide(&current, None, &policy());
    assert_eq!(verdict.decision, Decision::NoVerdict);
    assert_eq!(
        verdict.reasons,
        vec![
            "2 of 3 runs errored: no verdict (fix the agent or provider and run again)",
            "2 of 3 runs overflowed the model's context window; the tools offered cost about \
             7712 tokens (o200k) before any message: give the model server a larger window \
             (llama.cpp `-c`, llama-cpp-python `--n_ctx`, Ollama `num_ctx`) or offer each \
             scenario only its own tools (`--tool-offer scenario`)",
        ]
    );
}

#[test]
fn most_runs_ending_on_a_call_written_as_text_point_at_the_chat_format() {
    let mut current = report(&[
        ("A", 1, Outcome::Fail),
        ("B", 1, Outcome::Fail),
        ("C", 1, Outcome::Pass),
    ]);
    current.scenarios[0].call_as_text = true;
    let verdict = decide(&current, None, &policy());
    assert!(
        !verdict
            .notes
            .iter()
            .any(|note| note.contains("written as text")),
        "one of three is no majority: {:?}",
        verdict.notes
    );
    current.scenarios[1].call_as_text = true;
    let verdict = decide(&current, None, &policy());
    assert_eq!(
        verdict.notes[0],
        "2 of 3 runs ended on a tool call written as text (`functions.NAME:`, a `<tool_call>` \
         block or call JSON): the server's chat format turned the model's calls into text, a \
         serving problem rather than the model's choice; try `--tool-calling prompted` \
         (docs/agents.md)"
    );
}

#[test]
fn errored_runs_never_count_as_passes_or_failures() {
    let current = report(&[
        ("A", 1, Outcome::Pass),
        ("B", 1, Outcome::Errored),
        ("C", 1, Outcome::Pass),
    ]);
    assert_eq!(current.summary.overall.pass_rate(), Some(1.0));
    let base = baseline(&[("A", 1, 3), ("B", 1, 3), ("C", 1, 3)], 3);
    let verdict = decide(&current, Some(&base), &policy());
    assert_eq!(verdict.decision, Decision::Pass);
    assert_eq!(verdict.comparison.map(|c| c.current.judged), Some(2));
    assert!(
        verdict
            .notes
            .contains(&"1 of 3 runs errored and are left out of the pass rate".to_string())
    );
}

#[test]
fn a_replayed_run_that_left_its_cassette_fails_the_gate_unlike_an_outage() {
    let mut current = report(&[
        ("A", 1, Outcome::Pass),
        ("B", 1, Outcome::Errored),
        ("C", 1, Outcome::Pass),
    ]);
    current.scenarios[1].error =
        Some("not_recorded: `get` with arguments {} is not in cassette `c/B.r0.jsonl`".to_owned());
    let verdict = decide(&current, None, &policy());
    assert_eq!(verdict.decision, Decision::Fail);
    assert_eq!(
        verdict.reasons,
        vec![
            "1 replayed runs made calls their cassettes do not hold (not_recorded): B; record them again against the live servers"
        ]
    );
    current.scenarios[1].error = Some("provider returned HTTP 503".to_owned());
    assert_eq!(decide(&current, None, &policy()).decision, Decision::Pass);
}

#[test]
fn a_replayed_run_failed_by_a_call_its_cassette_lacks_fails_the_gate_whatever_the_rate() {
    let mut current = report(&[
        ("A", 1, Outcome::Pass),
        ("B", 1, Outcome::Fail),
        ("C", 1, Outcome::Pass),
        ("D", 1, Outcome::Pass),
        ("E", 1, Outcome::Pass),
    ]);
    let mut policy = policy();
    policy.min_pass_rate = Some(0.5);
    // An ordinary failure within the allowed rate passes ...
    assert_eq!(decide(&current, None, &policy).decision, Decision::Pass);
    // ... one that left the recording does not.
    current.scenarios[1].checks.push(crate::score::Check {
        kind: crate::score::CheckKind::NotRecorded,
        subject: "cassette".to_owned(),
        passed: false,
        detail: "call 1 `get` not in the replayed cassette".to_owned(),
    });
    let verdict = decide(&current, None, &policy);
    assert_eq!(verdict.decision, Decision::Fail);
    assert_eq!(
        verdict.reasons,
        vec![
            "1 replayed runs made calls their cassettes do not hold (not_recorded): B; record them again against the live servers"
        ]
    );
}

#[test]
fn b09_a_run_with_expected_calls_and_none_made_is_never_a_pass() {
    // Field case B09: "not applicable" must not count as a pass when calls were expected;
    // a failed scenario with zero calls counts as a failure in the rate.
    let mut current = report(&[("T1-001", 1, Outcome::Fail), ("T1-002", 1, Outcome::Pass)]);
    current.scenarios[0].calls = 0;
    let base = baseline(&[("T1-001", 1, 30), ("T1-002", 1, 30)], 30);
    let verdict = decide(&current, Some(&base), &policy());
    let comparison = verdict.comparison.expect("compared");
    assert_eq!(
        (comparison.current.passed, comparison.current.judged),
        (1, 2)
    );
    assert_eq!(verdict.decision, Decision::Fail);
}

#[test]
fn quarantine_expiry_is_judged_at_the_policy_time() {
    let list = quarantine_list("2026-12-01");
    assert!(list[0].is_active(now()));
    assert!(!list[0].is_active(now() + Duration::from_secs(2 * 86_400)));
}

/// `suite(ids, 0)` whose every run spent `prompt` input and `completion` output tokens over
/// two model requests, priced at $1 per million tokens either way.
fn spending(ids: &[String], prompt: u64, completion: u64) -> RunReport {
    let mut report = suite(ids, 0);
    for result in &mut report.scenarios {
        result.usage = Some(crate::agent::Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            requests: 2,
            latency_ms: 500,
        });
    }
    report.run = Some(crate::results::RunMeta {
        price: Some(crate::score::usage::Price {
            prompt: 1.0,
            completion: 1.0,
        }),
        ..Default::default()
    });
    report
}

#[test]
fn usage_limits_block_on_mean_tokens_cost_and_growth_over_the_baseline() {
    let ids = ids(10);
    let limits = |usage: crate::score::usage::UsageLimits| Policy { usage, ..policy() };
    let run = spending(&ids, 900, 100);
    // At the limits nothing blocks.
    let at = limits(crate::score::usage::UsageLimits {
        max_tokens_per_run: Some(1_000),
        max_cost_per_run: Some(0.001),
        max_token_growth_percent: None,
    });
    let verdict = decide(&run, None, &at);
    assert_eq!(verdict.decision, Decision::Pass, "{:?}", verdict.reasons);
    let past = limits(crate::score::usage::UsageLimits {
        max_tokens_per_run: Some(999),
        max_cost_per_run: Some(0.0009),
        max_token_growth_percent: None,
    });
    let verdict = decide(&run, None, &past);
    assert_eq!(verdict.decision, Decision::Fail);
    assert_eq!(
        verdict.reasons,
        [
            "1000 tokens per run on average, over the limit of 999 (--max-tokens-per-run)",
            "$0.0010 per run on average, over the limit of $0.0009 (--max-cost-per-run)"
        ]
    );
    // Growth: every run passes, but the tokens doubled since the baseline.
    let mut base = stable_baseline(&ids, 7);
    base.metrics = Metrics::of(&spending(&ids, 450, 50));
    let growth = |percent| {
        limits(crate::score::usage::UsageLimits {
            max_token_growth_percent: Some(percent),
            ..Default::default()
        })
    };
    assert_eq!(
        decide(&run, Some(&base), &growth(100.0)).decision,
        Decision::Pass
    );
    let verdict = decide(&run, Some(&base), &growth(50.0));
    assert_eq!(verdict.decision, Decision::Fail);
    assert_eq!(
        verdict.reasons,
        [
            "1000 tokens per run on average, +100.0% over the baseline's 500, beyond the 50% allowed (--max-token-growth)"
        ]
    );
    // A baseline without usage cannot judge growth: a note, never a block.
    let verdict = decide(&run, Some(&stable_baseline(&ids, 7)), &growth(0.0));
    assert_eq!(verdict.decision, Decision::Pass);
    assert!(
        verdict
            .notes
            .iter()
            .any(|note| note.starts_with("token growth not judged")),
        "{:?}",
        verdict.notes
    );
    // Without model usage (the reference agent) the limits never block.
    assert_eq!(
        decide(&suite(&ids, 0), None, &past).decision,
        Decision::Pass
    );
}

/// Found with the HTML report: five repetitions against a one-run baseline were rated as
/// 180 passes of 36 (500%), and each new id was named five times.
#[test]
fn repetitions_are_rated_as_runs_against_a_one_run_baseline() {
    let ids = ids(4);
    let mut outcomes: Vec<(&str, u8, Outcome)> = Vec::new();
    for _ in 0..5 {
        for (i, id) in ids.iter().enumerate() {
            outcomes.push((
                id.as_str(),
                1,
                if i == 0 { Outcome::Fail } else { Outcome::Pass },
            ));
        }
        outcomes.push(("T9-NEW", 1, Outcome::Pass));
    }
    let mut current = report(&outcomes);
    for (i, result) in current.scenarios.iter_mut().enumerate() {
        result.repeat = u32::try_from(i / 5).expect("small");
    }
    let verdict = decide(&current, Some(&stable_baseline(&ids, 1)), &policy());
    let comparison = verdict.comparison.expect("compared");
    assert_eq!(
        (comparison.current.passed, comparison.current.judged),
        (15, 20)
    );
    assert_eq!(comparison.scenarios, 4);
    assert!((comparison.current.rate - 0.75).abs() < 1e-12);
    assert!(
        verdict
            .notes
            .contains(&"1 scenario(s) not in the baseline are not compared: `T9-NEW`".to_owned()),
        "{:?}",
        verdict.notes
    );
}
