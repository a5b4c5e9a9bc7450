//! Adaptive repeats against the fixed design: how often each blocks an unchanged agent, how
//! often each misses a regression, and how many runs (model calls) each spends. A Monte Carlo
//! simulation of the shipped code: the schedule's projection (`toolgate::gate::adaptive`) and
//! the verdict (`toolgate::gate::decide`). The table in `docs/gate.md` ("Adaptive repeats")
//! comes from here:
//!
//! ```sh
//! cargo run --release --example adaptive_repeats          # 2,000 trials per row
//! cargo run --release --example adaptive_repeats -- 5000  # more trials
//! ```
//!
//! Model: each scenario has a true pass probability; the baseline is a window of 7 (or 30)
//! nightly runs (each scenario once per night), as in examples/false_block.rs. The pull request runs
//! every scenario 3 times (fixed) or adaptively with at most 3 runs. "Unchanged" draws the pull
//! request from the baseline's probabilities; "-10 points" lowers every scenario by 10 points;
//! "3 broken" drops three scenarios to 0.3 (a changed tool that breaks the scenarios using it).
//! A missed regression is a `pass` verdict on a regressed agent.
#![expect(
    clippy::print_stdout,
    reason = "an example reports its figures on stdout"
)]

use std::time::SystemTime;

use toolgate::gate::adaptive::{self, Projection, Tally};
use toolgate::gate::simulation::{self, Rng, id};
use toolgate::gate::{Baseline, Decision, Policy, decide};
use toolgate::results::{AdaptiveMeta, RunMeta, RunReport};
use toolgate::scenario::ScenarioKind;
use toolgate::score::Outcome;

/// The most runs per scenario, as `--repeat 3`.
const K: u32 = 3;

/// A run report of `outcomes` (per scenario, its runs in order).
fn report(outcomes: &[Vec<Outcome>], adaptive: Option<AdaptiveMeta>) -> RunReport {
    let scenarios = outcomes
        .iter()
        .enumerate()
        .flat_map(|(i, runs)| {
            runs.iter().enumerate().map(move |(r, &o)| {
                let repeat = u32::try_from(r).unwrap_or(0);
                simulation::result(&id(i), 1, ScenarioKind::SingleCall, o, repeat)
            })
        })
        .collect();
    let run = RunMeta {
        repeat: K,
        adaptive,
        ..RunMeta::default()
    };
    simulation::report(scenarios, None, Some(run))
}

/// The adaptive design played to its end, as the runner plays the schedule.
fn adaptive_run(now: &[f64], base: &Baseline, policy: &Policy, rng: &mut Rng) -> RunReport {
    let ids: Vec<String> = (0..now.len()).map(id).collect();
    let pairs: Vec<(&str, u8)> = ids.iter().map(|i| (i.as_str(), 1)).collect();
    let planned = adaptive::plan(&pairs, Some(base), None);
    let mut outcomes: Vec<Vec<Outcome>> = vec![Vec::new(); now.len()];
    let mut round: Vec<(usize, u32)> = adaptive::first_round(&planned, K)
        .into_iter()
        .enumerate()
        .collect();
    while !round.is_empty() {
        for (i, runs) in round {
            for _ in 0..runs {
                outcomes[i].push(rng.outcome(now[i]));
            }
        }
        let tallies: Vec<Tally> = outcomes
            .iter()
            .map(|runs| {
                let mut tally = Tally::default();
                runs.iter().for_each(|&o| tally.add(o));
                tally
            })
            .collect();
        round = match adaptive::project(&planned, &tallies, policy, K, adaptive::DEFAULT_CERTAINTY)
        {
            Projection::Unsettled { next } => next,
            Projection::Complete | Projection::Settled { .. } => Vec::new(),
        };
    }
    let runs = outcomes.iter().map(Vec::len).sum();
    let meta = AdaptiveMeta {
        max_repeat: K,
        certainty: adaptive::DEFAULT_CERTAINTY,
        runs,
        planned: now.len() * K as usize,
    };
    report(&outcomes, Some(meta))
}

/// Shares of trials (fail, inconclusive, pass) and mean runs per trial.
struct Row {
    fail: f64,
    inconclusive: f64,
    pass: f64,
    runs: f64,
}

fn simulate(
    (truth, nights): (&[f64], usize),
    now: &[f64],
    adaptive: bool,
    trials: usize,
    rng: &mut Rng,
) -> Row {
    let policy = Policy {
        now: SystemTime::UNIX_EPOCH,
        ..Policy::default()
    };
    let (mut fail, mut inconclusive, mut pass, mut runs) = (0, 0, 0, 0);
    for _ in 0..trials {
        let base = simulation::sampled_baseline(truth, nights, rng);
        let current = if adaptive {
            adaptive_run(now, &base, &policy, rng)
        } else {
            let outcomes: Vec<Vec<Outcome>> = now
                .iter()
                .map(|&p| (0..K).map(|_| rng.outcome(p)).collect())
                .collect();
            report(&outcomes, None)
        };
        runs += current.scenarios.len();
        match decide(&current, Some(&base), &policy).decision {
            Decision::Fail => fail += 1,
            Decision::Inconclusive => inconclusive += 1,
            _ => pass += 1,
        }
    }
    let share = |count: usize| count as f64 / trials as f64 * 100.0;
    Row {
        fail: share(fail),
        inconclusive: share(inconclusive),
        pass: share(pass),
        runs: runs as f64 / trials as f64,
    }
}

/// 70% stable (0.99), 20% mostly passing (0.9), 10% flaky (0.6), as in false_block.rs.
fn mixed(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| match i % 10 {
            0 => 0.6,
            1 | 2 => 0.9,
            _ => 0.99,
        })
        .collect()
}

/// 90% near-deterministic (0.995), 10% mostly passing (0.9).
fn stable(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| if i % 10 == 0 { 0.9 } else { 0.995 })
        .collect()
}

fn main() {
    let trials: usize = std::env::args()
        .nth(1)
        .and_then(|t| t.parse().ok())
        .unwrap_or(2_000);
    let mut rng = Rng::new(0xADA9);
    println!("{trials} trials per row; at most {K} runs per scenario; band 3 points; alpha 0.05\n");
    println!(
        "| suite | baseline nights | n | change | design | fails | inconclusive | passes | runs | saved |"
    );
    println!("|---|--:|--:|---|---|--:|--:|--:|--:|--:|");
    for (suite, nights, make) in [
        ("mixed", 7, mixed as fn(usize) -> Vec<f64>),
        ("stable", 7, stable as fn(usize) -> Vec<f64>),
        ("stable", 30, stable as fn(usize) -> Vec<f64>),
    ] {
        for n in [20, 36, 50] {
            let truth = make(n);
            let lowered: Vec<f64> = truth.iter().map(|p| (p - 0.10).max(0.0)).collect();
            let broken: Vec<f64> = truth
                .iter()
                .enumerate()
                .map(|(i, &p)| if (3..6).contains(&i) { 0.3 } else { p })
                .collect();
            for (change, now) in [
                ("unchanged", &truth),
                ("-10 points", &lowered),
                ("3 broken", &broken),
            ] {
                let fixed = simulate((&truth, nights), now, false, trials, &mut rng);
                let adaptive = simulate((&truth, nights), now, true, trials, &mut rng);
                for (design, row) in [("fixed", &fixed), ("adaptive", &adaptive)] {
                    println!(
                        "| {suite} | {nights} | {n} | {change} | {design} | {:.1}% | {:.1}% | {:.1}% | {:.1} | {:.0}% |",
                        row.fail,
                        row.inconclusive,
                        row.pass,
                        row.runs,
                        (1.0 - row.runs / fixed.runs) * 100.0
                    );
                }
            }
        }
    }
}
