//! Building blocks of the gate's Monte Carlo simulations (examples/false_block.rs,
//! examples/adaptive_repeats.rs, benches/pr_calls.rs): a seeded generator, and bare results
//! and baselines that hold only what the verdict reads.

use super::Baseline;
use super::baseline::{BASELINE_SCHEMA_VERSION, BaselineKind, BaselineScenario};
use super::metrics::Metrics;
use crate::results::pins::Pins;
use crate::results::{RunMeta, RunReport, ScenarioResult, Summary};
use crate::scenario::ScenarioKind;
use crate::score::Outcome;

/// splitmix64 (Steele, Lea and Flood 2014): small, fast, good enough for simulations, and
/// seeded, so every simulation reproduces exactly.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A uniform draw in 0.0..1.0.
    pub fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform draw in 0..n (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_f64() * n as f64) as usize).min(n.saturating_sub(1))
    }

    /// `Pass` with probability `p`, else `Fail`.
    pub fn outcome(&mut self, p: f64) -> Outcome {
        if self.next_f64() < p {
            Outcome::Pass
        } else {
            Outcome::Fail
        }
    }

    /// Passes of `runs` draws at probability `p`.
    pub fn passes(&mut self, p: f64, runs: usize) -> usize {
        (0..runs).filter(|_| self.next_f64() < p).count()
    }
}

/// A run of scenario `id` with only its outcome: no calls, checks or answer.
pub fn result(
    id: &str,
    tier: u8,
    kind: ScenarioKind,
    outcome: Outcome,
    repeat: u32,
) -> ScenarioResult {
    ScenarioResult {
        state_diff: Vec::new(),
        lines: Default::default(),
        id: id.to_owned(),
        tier,
        kind,
        outcome,
        error: None,
        calls: 1,
        checks: Vec::new(),
        final_answer: None,
        duration_ms: 0,
        repeat,
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

/// A results file of `scenarios` (in suite order) with `pins` and the run block `run`.
pub fn report(
    scenarios: Vec<ScenarioResult>,
    pins: Option<Pins>,
    run: Option<RunMeta>,
) -> RunReport {
    RunReport {
        schema_version: 1,
        toolgate_version: "simulation".into(),
        agent: "simulation".into(),
        model: None,
        pins,
        run,
        metrics: Default::default(),
        confused_pairs: Vec::new(),
        summary: Summary::of(&scenarios),
        scenarios,
    }
}

/// A baseline of `runs` nightly runs with these per-scenario counts (any order) and `pins`.
pub fn baseline(mut scenarios: Vec<BaselineScenario>, runs: usize, pins: Option<Pins>) -> Baseline {
    scenarios.sort_by(|a, b| a.id.cmp(&b.id));
    Baseline {
        schema_version: BASELINE_SCHEMA_VERSION,
        kind: BaselineKind::Baseline,
        branch: Some("main".into()),
        window: None,
        runs,
        excluded_runs: 0,
        pins,
        metrics: Metrics::default(),
        scenarios,
        trend: Vec::new(),
    }
}

/// The id of scenario `i` of a simulated suite: `S-0000`, `S-0001`, ...
pub fn id(i: usize) -> String {
    format!("S-{i:04}")
}

/// A baseline of `nights` runs of a simulated suite of single-call Tier 1 scenarios, scenario
/// `i` passing each night with probability `truth[i]`.
pub fn sampled_baseline(truth: &[f64], nights: usize, rng: &mut Rng) -> Baseline {
    let scenarios = truth
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let passed = rng.passes(p, nights);
            BaselineScenario {
                id: id(i),
                tier: 1,
                kind: ScenarioKind::SingleCall,
                passed,
                failed: nights - passed,
                errored: 0,
            }
        })
        .collect();
    baseline(scenarios, nights, None)
}
