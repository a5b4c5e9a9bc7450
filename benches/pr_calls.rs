//! Model calls per pull request: what a team pays to gate each change, with the fixed design
//! and with impact scoping (`--impact`), adaptive repeats (`--adaptive`) and the base-run
//! cache (`--cache`), on a simulated history of changes to the built-in catalog; and the
//! decisions each design reaches on the same changes (false blocks, missed regressions).
//!
//! ```sh
//! cargo bench --bench pr_calls                 # 200 pull requests x 10 histories, 7 and 30 nights
//! cargo bench --bench pr_calls -- 200 20       # pull requests, histories
//! ```
//!
//! The history (seeded, so reproducible): each pull request changes one tool's definition
//! (40%), two tools (5%), one scenario file (10%), the system prompt (10%), or nothing the
//! gate pins (35%: code elsewhere, docs). A third of the tool changes break the scenarios that
//! name the tool (their pass probability drops to 0.3); a third of the prompt changes lower
//! every scenario by 10 points. A pull request regresses when some smoke scenario's
//! probability changed; a missed regression is a `pass` on one, a false block a `fail` on any
//! other. Scenario pass probabilities follow the examples' mixed suite
//! (70% at 0.99, 20% at 0.9, 10% at 0.6), Tier 5 at 1.0 (a Tier 5 failure blocks in every
//! design). The gate runs the smoke set with `--repeat 3` against a nightly baseline of N
//! nights. A run costs the model calls of its scenario's reference trajectory (expected calls
//! plus the final answer). The fixed design runs the smoke set on the base and on the head of
//! every pull request; with the cache, the base is run once per state of the main branch
//! (pull requests are opened three at a time on one main), and with impact scoping only the
//! scenarios the change can affect run, on both sides. Everything played is the shipped code:
//! `results::impact::select`, `gate::adaptive` and `gate::decide`.
#![expect(
    clippy::print_stdout,
    reason = "a benchmark reports its figures on stdout"
)]

use std::path::Path;
use std::time::SystemTime;

use toolgate::catalog::Catalog;
use toolgate::gate::adaptive::{self, Projection, Tally};
use toolgate::gate::baseline::BaselineScenario;
use toolgate::gate::simulation::{self, Rng};
use toolgate::gate::{Baseline, Decision, Policy, decide};
use toolgate::results::pins::{Pins, Subject};
use toolgate::results::{AdaptiveMeta, RunMeta, RunReport};
use toolgate::scenario::{Scenario, SmokeSet};
use toolgate::score::Outcome;

const K: u32 = 3;

/// One pull request of the history.
enum Change {
    Nothing,
    Tools(Vec<String>),
    Scenario(usize),
    Prompt,
}

/// The smoke set, its pins and the truth of the world the history plays in.
struct World {
    smoke: Vec<Scenario>,
    pins: Pins,
    tools: Vec<String>,
    root: &'static Path,
}

impl World {
    fn load() -> World {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let catalog = Catalog::builtin();
        let all = toolgate::scenario::load_dir(&root.join("scenarios"), root, catalog)
            .expect("the built-in suite loads");
        let smoke_set = SmokeSet::load(&root.join("smoke-set.yaml"), &all).expect("smoke set");
        let smoke: Vec<Scenario> = all.into_iter().filter(|s| smoke_set.contains(s)).collect();
        let subject = Subject {
            provider: "reference".into(),
            ..Subject::default()
        };
        let pins = Pins::compute(&subject, &smoke, root, catalog).expect("pins");
        let tools = catalog.tools().iter().map(|t| t.name.clone()).collect();
        World {
            smoke,
            pins,
            tools,
            root,
        }
    }

    /// Model calls of one run of scenario `i`: its reference trajectory's calls, plus the
    /// final answer.
    fn calls(&self, i: usize) -> usize {
        self.smoke[i].expected_calls.len() + 1
    }

    fn truth(&self, i: usize) -> f64 {
        if self.smoke[i].tier == 5 {
            return 1.0;
        }
        match i % 10 {
            0 => 0.6,
            1 | 2 => 0.9,
            _ => 0.99,
        }
    }
}

fn change(world: &World, rng: &mut Rng) -> Change {
    let draw = rng.next_f64();
    let tool = |rng: &mut Rng| world.tools[rng.below(world.tools.len())].clone();
    if draw < 0.40 {
        Change::Tools(vec![tool(rng)])
    } else if draw < 0.45 {
        Change::Tools(vec![tool(rng), tool(rng)])
    } else if draw < 0.55 {
        Change::Scenario(rng.below(world.smoke.len()))
    } else if draw < 0.65 {
        Change::Prompt
    } else {
        Change::Nothing
    }
}

/// The baseline's pins as they were before `change`; the head keeps the world's.
fn pins_before(world: &World, change: &Change) -> Pins {
    let mut before = world.pins.clone();
    match change {
        Change::Nothing => {}
        Change::Tools(tools) => {
            for tool in tools {
                before.tools.insert(tool.clone(), "0".repeat(64));
            }
        }
        Change::Scenario(i) => {
            if let Some(pin) = before.scenarios.get_mut(&world.smoke[*i].id) {
                pin.sha256 = "0".repeat(64);
            }
        }
        Change::Prompt => before.system_prompt_sha256 = Some("0".repeat(64)),
    }
    before
}

/// The pass probabilities on the head: a breaking change drops what it touches.
fn head_truth(world: &World, change: &Change, breaks: bool) -> Vec<f64> {
    (0..world.smoke.len())
        .map(|i| {
            let p = world.truth(i);
            match change {
                Change::Tools(tools) if breaks => {
                    let named = world.smoke[i].named_tools();
                    if tools.iter().any(|t| named.contains(t.as_str())) {
                        0.3
                    } else {
                        p
                    }
                }
                Change::Prompt if breaks => (p - 0.1).max(0.0),
                _ => p,
            }
        })
        .collect()
}

fn baseline(world: &World, nights: usize, pins: Pins, rng: &mut Rng) -> Baseline {
    let scenarios = (0..world.smoke.len())
        .map(|i| {
            let passed = rng.passes(world.truth(i), nights);
            BaselineScenario {
                id: world.smoke[i].id.clone(),
                tier: world.smoke[i].tier,
                kind: world.smoke[i].kind,
                passed,
                failed: nights - passed,
                errored: 0,
            }
        })
        .collect();
    simulation::baseline(scenarios, nights, Some(pins))
}

/// The head's runs of the scenarios at `run` (positions in the smoke set): `K` each, or
/// adaptively. Returns the report and its model calls.
fn head_run(
    world: &World,
    run: &[usize],
    truth: &[f64],
    base: &Baseline,
    adaptive_repeats: bool,
    rng: &mut Rng,
) -> (RunReport, usize) {
    let mut outcomes: Vec<Vec<Outcome>> = vec![Vec::new(); run.len()];
    let mut meta = None;
    if adaptive_repeats {
        let ids: Vec<(&str, u8)> = run
            .iter()
            .map(|&i| (world.smoke[i].id.as_str(), world.smoke[i].tier))
            .collect();
        let planned = adaptive::plan(&ids, Some(base), Some(&world.pins));
        let policy = policy();
        let mut round: Vec<(usize, u32)> = adaptive::first_round(&planned, K)
            .into_iter()
            .enumerate()
            .collect();
        while !round.is_empty() {
            for (j, n) in round {
                for _ in 0..n {
                    outcomes[j].push(rng.outcome(truth[run[j]]));
                }
            }
            let tallies: Vec<Tally> = outcomes
                .iter()
                .map(|o| {
                    let mut tally = Tally::default();
                    o.iter().for_each(|&x| tally.add(x));
                    tally
                })
                .collect();
            round = match adaptive::project(
                &planned,
                &tallies,
                &policy,
                K,
                adaptive::DEFAULT_CERTAINTY,
            ) {
                Projection::Unsettled { next } => next,
                _ => Vec::new(),
            };
        }
        meta = Some(AdaptiveMeta {
            max_repeat: K,
            certainty: adaptive::DEFAULT_CERTAINTY,
            runs: outcomes.iter().map(Vec::len).sum(),
            planned: run.len() * K as usize,
        });
    } else {
        for (j, &i) in run.iter().enumerate() {
            outcomes[j] = (0..K).map(|_| rng.outcome(truth[i])).collect();
        }
    }
    let calls = run
        .iter()
        .zip(&outcomes)
        .map(|(&i, o)| world.calls(i) * o.len())
        .sum();
    (report(world, run, &outcomes, meta), calls)
}

fn report(
    world: &World,
    run: &[usize],
    outcomes: &[Vec<Outcome>],
    adaptive: Option<AdaptiveMeta>,
) -> RunReport {
    let mut scenarios = Vec::new();
    for (&i, runs) in run.iter().zip(outcomes) {
        let scenario = &world.smoke[i];
        for (r, &outcome) in runs.iter().enumerate() {
            let repeat = u32::try_from(r).unwrap_or(0);
            scenarios.push(simulation::result(
                &scenario.id,
                scenario.tier,
                scenario.kind,
                outcome,
                repeat,
            ));
        }
    }
    let meta = RunMeta {
        repeat: K,
        adaptive,
        ..RunMeta::default()
    };
    simulation::report(scenarios, Some(world.pins.clone()), Some(meta))
}

fn policy() -> Policy {
    Policy {
        now: SystemTime::UNIX_EPOCH,
        ..Policy::default()
    }
}

/// A design: which of the three savings it uses.
#[derive(Clone, Copy)]
struct Design {
    name: &'static str,
    impact: bool,
    adaptive: bool,
    cache: bool,
}

#[derive(Default)]
struct Totals {
    head: usize,
    base: usize,
    prs: usize,
    unchanged: usize,
    false_blocks: usize,
    regressions: usize,
    missed: usize,
    tier_5_skipped: usize,
}

fn play(world: &World, design: Design, prs: usize, nights: usize, seed: u64) -> Totals {
    // The history (changes, breaks, baselines) comes from its own generator, so every design
    // is played on the same pull requests; the runs' outcomes from another.
    let mut history = Rng::new(seed);
    let mut rng = Rng::new(seed ^ 0x00C0_FFEE);
    let mut totals = Totals::default();
    let all: Vec<usize> = (0..world.smoke.len()).collect();
    let full_base: usize = all.iter().map(|&i| world.calls(i) * K as usize).sum();
    let mut main_changed = true;
    for pr in 0..prs {
        let change = change(world, &mut history);
        let breaking =
            matches!(change, Change::Tools(_) | Change::Prompt) && history.next_f64() < 1.0 / 3.0;
        let before = pins_before(world, &change);
        let base = baseline(world, nights, before.clone(), &mut history);
        let truth = head_truth(world, &change, breaking);
        // A breaking change to a tool no smoke scenario names changes nothing measurable.
        let breaks = (0..world.smoke.len()).any(|i| truth[i] != world.truth(i));
        let run: Vec<usize> = if design.impact {
            let impact = toolgate::results::impact::select(
                &world.smoke,
                world.root,
                Catalog::builtin(),
                &world.pins,
                Some(&before),
            );
            totals.tier_5_skipped += world
                .smoke
                .iter()
                .filter(|s| s.tier == 5 && !impact.is_selected(&s.id))
                .count();
            all.iter()
                .copied()
                .filter(|&i| impact.is_selected(&world.smoke[i].id))
                .collect()
        } else {
            all.clone()
        };
        let (head, calls) = head_run(world, &run, &truth, &base, design.adaptive, &mut rng);
        totals.head += calls;
        // Pull requests open three at a time on one main: the first of each three (or any
        // after main changed) pays for the base run unless the cache holds it.
        let base_cost: usize = run.iter().map(|&i| world.calls(i) * K as usize).sum();
        let cached = design.cache && !main_changed && pr % 3 != 0;
        if !cached {
            totals.base += if design.impact { base_cost } else { full_base };
        }
        if pr % 3 == 2 {
            main_changed = !matches!(change, Change::Nothing);
        } else if pr % 3 == 0 {
            main_changed = false;
        }
        let decision = decide(&head, Some(&base), &policy()).decision;
        totals.prs += 1;
        if breaks {
            totals.regressions += 1;
            totals.missed += usize::from(decision == Decision::Pass);
        } else {
            totals.unchanged += 1;
            totals.false_blocks += usize::from(decision == Decision::Fail);
        }
    }
    totals
}

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let prs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(200);
    let histories: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let world = World::load();
    println!(
        "{} smoke scenarios ({} Tier 5); {prs} pull requests x {histories} histories; --repeat {K}\n",
        world.smoke.len(),
        world.smoke.iter().filter(|s| s.tier == 5).count()
    );
    println!(
        "| baseline nights | design | model calls per PR (head + base) | saved | false blocks | missed regressions | Tier 5 skipped |"
    );
    println!("|--:|---|--:|--:|--:|--:|--:|");
    let designs = [
        Design {
            name: "fixed (base and head, every PR)",
            impact: false,
            adaptive: false,
            cache: false,
        },
        Design {
            name: "+ cache",
            impact: false,
            adaptive: false,
            cache: true,
        },
        Design {
            name: "+ impact",
            impact: true,
            adaptive: false,
            cache: false,
        },
        Design {
            name: "+ adaptive",
            impact: false,
            adaptive: true,
            cache: false,
        },
        Design {
            name: "impact + adaptive + cache",
            impact: true,
            adaptive: true,
            cache: true,
        },
    ];
    for nights in [7, 30] {
        let mut fixed_calls = None;
        for design in designs {
            let mut sum = Totals::default();
            for h in 0..histories {
                let t = play(&world, design, prs, nights, 0x9E57 + h);
                sum.head += t.head;
                sum.base += t.base;
                sum.prs += t.prs;
                sum.unchanged += t.unchanged;
                sum.false_blocks += t.false_blocks;
                sum.regressions += t.regressions;
                sum.missed += t.missed;
                sum.tier_5_skipped += t.tier_5_skipped;
            }
            let per_pr = (sum.head + sum.base) as f64 / sum.prs as f64;
            let fixed = *fixed_calls.get_or_insert(per_pr);
            println!(
                "| {nights} | {} | {:.0} ({:.0} + {:.0}) | {:.0}% | {:.1}% of {} | {:.1}% of {} | {} |",
                design.name,
                per_pr,
                sum.head as f64 / sum.prs as f64,
                sum.base as f64 / sum.prs as f64,
                (1.0 - per_pr / fixed) * 100.0,
                sum.false_blocks as f64 / sum.unchanged.max(1) as f64 * 100.0,
                sum.unchanged,
                sum.missed as f64 / sum.regressions.max(1) as f64 * 100.0,
                sum.regressions,
                sum.tier_5_skipped
            );
        }
    }
}
