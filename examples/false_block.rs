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

use toolgate::gate::simulation::{self, Rng, id};
use toolgate::gate::{Decision, Policy, decide};
use toolgate::results::RunReport;
use toolgate::scenario::ScenarioKind;

fn run(probabilities: &[f64], rng: &mut Rng) -> RunReport {
    let scenarios = probabilities
        .iter()
        .enumerate()
        .map(|(i, &p)| simulation::result(&id(i), 1, ScenarioKind::SingleCall, rng.outcome(p), 0))
        .collect();
    simulation::report(scenarios, None, None)
}

/// Shares of trials: (bare band blocks, gate fails, gate inconclusive).
fn simulate(truth: &[f64], now: &[f64], trials: usize, rng: &mut Rng) -> (f64, f64, f64) {
    let policy = Policy {
        now: SystemTime::UNIX_EPOCH,
        ..Policy::default()
    };
    let (mut bare, mut fail, mut inconclusive) = (0, 0, 0);
    for _ in 0..trials {
        let base = simulation::sampled_baseline(truth, 7, rng);
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
    let mut rng = Rng::new(0x5EED);
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
