//! How often does the gate block an unchanged agent, and how often does it catch a real
//! regression? A Monte Carlo simulation of the shipped verdict (`toolgate::gate::decide`)
//! against the bare "drop > 3 points" rule. The numbers in `docs/gate.md` come from here:
//!
//! ```sh
//! cargo run --example false_block            # 4,000 trials per row
//! cargo run --example false_block -- 20000   # more trials
//! ```
//!
//! Model: each scenario has a true pass probability. The baseline is a window of 7 nightly
//! runs (each scenario once per night); the pull request is one run. "Unchanged" draws the
//! pull request from the same probabilities; "regressed" lowers every scenario's probability
//! by 10 points (floored at 0). Tier 5 plays no part (all scenarios are tier 1).
#![expect(
    clippy::print_stdout,
    reason = "an example reports its figures on stdout"
)]

use std::time::SystemTime;

use toolgate::gate::baseline::{BASELINE_SCHEMA_VERSION, BaselineKind, BaselineScenario};
use toolgate::gate::metrics::Metrics;
use toolgate::gate::{Baseline, Decision, Policy, decide};
use toolgate::results::{RunReport, ScenarioResult, Summary};
use toolgate::scenario::ScenarioKind;
use toolgate::score::Outcome;

/// splitmix64: a small, good-enough generator with a fixed seed, so runs are reproducible.
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    fn passes(&mut self, p: f64) -> bool {
        self.next_f64() < p
    }
}

fn id(i: usize) -> String {
    format!("S-{i:04}")
}

fn baseline(probabilities: &[f64], runs: usize, rng: &mut Rng) -> Baseline {
    let scenarios = probabilities
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let passed = (0..runs).filter(|_| rng.passes(p)).count();
            BaselineScenario {
                id: id(i),
                tier: 1,
                kind: ScenarioKind::SingleCall,
                passed,
                failed: runs - passed,
                errored: 0,
            }
        })
        .collect();
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

fn run(probabilities: &[f64], rng: &mut Rng) -> RunReport {
    let scenarios: Vec<ScenarioResult> = probabilities
        .iter()
        .enumerate()
        .map(|(i, &p)| ScenarioResult {
            state_diff: Vec::new(),
            lines: Default::default(),
            id: id(i),
            tier: 1,
            kind: ScenarioKind::SingleCall,
            outcome: if rng.passes(p) {
                Outcome::Pass
            } else {
                Outcome::Fail
            },
            error: None,
            calls: 1,
            checks: Vec::new(),
            final_answer: None,
            duration_ms: 0,
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
        })
        .collect();
    RunReport {
        schema_version: 1,
        toolgate_version: "sim".into(),
        agent: "sim".into(),
        model: None,
        pins: None,
        run: None,
        metrics: Default::default(),
        confused_pairs: Vec::new(),
        summary: Summary::of(&scenarios),
        scenarios,
    }
}

/// Shares of trials: (bare band blocks, gate fails, gate inconclusive).
fn simulate(truth: &[f64], now: &[f64], trials: usize, rng: &mut Rng) -> (f64, f64, f64) {
    let policy = Policy {
        now: SystemTime::UNIX_EPOCH,
        ..Policy::default()
    };
    let (mut bare, mut fail, mut inconclusive) = (0, 0, 0);
    for _ in 0..trials {
        let base = baseline(truth, 7, rng);
        let current = run(now, rng);
        let verdict = decide(&current, Some(&base), &policy);
        if verdict
            .delta_points
            .is_some_and(|d| d < -policy.tolerance_points)
        {
            bare += 1;
        }
        match verdict.decision {
            Decision::Fail => fail += 1,
            Decision::Inconclusive => inconclusive += 1,
            _ => {}
        }
    }
    let share = |count: usize| count as f64 / trials as f64;
    (share(bare), share(fail), share(inconclusive))
}

/// A realistic suite: 70% stable (0.99), 20% mostly passing (0.9), 10% flaky (0.6).
fn mixed(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| match i % 10 {
            0 => 0.6,
            1 | 2 => 0.9,
            _ => 0.99,
        })
        .collect()
}

fn main() {
    let trials: usize = std::env::args()
        .nth(1)
        .and_then(|t| t.parse().ok())
        .unwrap_or(4_000);
    let mut rng = Rng(0x5EED);
    println!("{trials} trials per row; baseline = 7 runs; band 3 points; alpha 0.05\n");
    println!("| suite | n | change | bare band blocks | gate fails | gate inconclusive |");
    println!("|---|--:|---|--:|--:|--:|");
    for (suite, make) in [
        ("all p = 0.9", (|n| vec![0.9; n]) as fn(usize) -> Vec<f64>),
        ("mixed", mixed as fn(usize) -> Vec<f64>),
    ] {
        for n in [20, 50, 100] {
            let truth = make(n);
            let regressed: Vec<f64> = truth.iter().map(|p| (p - 0.10).max(0.0)).collect();
            for (change, now) in [("unchanged", &truth), ("-10 points", &regressed)] {
                let (bare, fail, inconclusive) = simulate(&truth, now, trials, &mut rng);
                println!(
                    "| {suite} | {n} | {change} | {:.1}% | {:.1}% | {:.1}% |",
                    bare * 100.0,
                    fail * 100.0,
                    inconclusive * 100.0
                );
            }
        }
    }
}
