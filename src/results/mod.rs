//! The results file: every scenario's outcome and checks plus aggregates. The same file is
//! the baseline artifact the next gate compares against, so it carries a `schema_version`.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use crate::agent::Usage;
use crate::catalog::Catalog;
use crate::judge::JudgeVerdict;
use crate::results::pins::Pins;
use crate::runner::ScenarioRun;
use crate::scenario::Scenario;
pub use crate::scenario::ScenarioKind;
use crate::score::metrics::{Grouped, MetricsReport, RunMetrics};
use crate::score::{Check, Outcome, ScoringOptions};
use crate::trace::TraceLine;

pub mod cache;
pub mod impact;
pub mod look_alikes;
pub mod pins;
pub mod recorder;
pub mod shard;
pub mod stream;

pub use recorder::Recorder;

pub use look_alikes::{ConfusedPair, LintPointer};

/// The results format version this build writes. Version 2 added repetitions (`repeat` on each
/// result, pass^k and per-scenario tallies in the summary) and the `run` block.
pub const SCHEMA_VERSION: u32 = 2;

/// The oldest results format version this build still reads (as a baseline).
pub const OLDEST_SCHEMA_VERSION: u32 = 1;

/// A whole run's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunReport {
    /// Always [`SCHEMA_VERSION`] when written by this build.
    pub schema_version: u32,
    /// The toolgate version that produced it.
    pub toolgate_version: String,
    /// The agent kind (`reference`, `openai`).
    pub agent: String,
    /// The model name, for model-backed agents.
    pub model: Option<String>,
    /// What was measured and with which ruler; `None` in files written before pins existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pins: Option<Pins>,
    /// How the run was configured; absent in version 1 files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunMeta>,
    /// One entry per scenario run, in suite order, repetitions of a scenario together.
    pub scenarios: Vec<ScenarioResult>,
    /// Aggregates over `scenarios`.
    pub summary: Summary,
    /// Trajectory metrics aggregated overall, per tier, category and type.
    #[serde(default)]
    pub metrics: MetricsReport,
    /// Each pair of tools the agent confused (from the overall confusion matrix), with what
    /// the look-alike lint says about it; empty when nothing was confused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub confused_pairs: Vec<ConfusedPair>,
}

/// How a run was configured, so two results can be told apart. Holds no secrets: the
/// provider appears as a host name only, the system prompt as a hash.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunMeta {
    /// This run's id (`<unix milliseconds>-<process id>`, both hex), also written into
    /// `verdict.json`, `report.md` and `junit.xml`, so files of one output set can be matched;
    /// absent in files written before run ids existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// The agent kind (`reference`, `openai`, `anthropic`, `command`, `replay`).
    pub agent: String,
    /// The model name, when one is configured.
    pub model: Option<String>,
    /// Host (and port) of the provider's base URL, for model-backed agents.
    pub provider_host: Option<String>,
    /// Sampling temperature passed to the model.
    pub temperature: Option<f64>,
    /// Sampling seed passed to the model.
    pub seed: Option<u64>,
    /// Output-token limit per model turn, as sent (the default included); `None` when none was
    /// sent or the agent has no model.
    pub max_tokens: Option<u32>,
    /// Model turns allowed per run.
    pub max_turns: Option<u32>,
    /// `tool_choice` passed to the model (`auto`, `required`, `none`).
    pub tool_choice: Option<String>,
    /// How the `openai` agent offered the tools: `native` function calling or `prompted` (in
    /// the system prompt, calls read from the text); absent for other agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calling: Option<String>,
    /// Tokens (o200k) of the whole catalog's tool definitions as OpenAI function tools: what
    /// every request costs before any message when every tool is offered; absent for agents
    /// without a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog_tokens: Option<u64>,
    /// Which tools a model agent was offered in each scenario: `all`, or `scenario` (the
    /// groups the scenario names and their look-alikes); absent for agents without a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_offer: Option<String>,
    /// Lowercase hex SHA-256 of the system prompt's UTF-8 bytes; `None` when there is none.
    pub system_prompt_sha256: Option<String>,
    /// The model's price from the user's table (`--prices`), which costs in the report are
    /// computed with; absent without a table or for agents without a model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<crate::score::usage::Price>,
    /// Scenarios whose `usage_budget` limits tokens, model calls or cost, which this run could
    /// not check: its agent reports no model usage (the verdict notes them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub usage_unchecked: Vec<String>,
    /// Runs per scenario (k of pass^k), at least 1; with `adaptive`, the most a scenario got.
    pub repeat: u32,
    /// Set when the run repeated adaptively (`--adaptive`): it stopped once the verdict of
    /// `repeat` runs per scenario was settled; absent for the fixed design.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<AdaptiveMeta>,
    /// Scenario runs at the same time.
    pub concurrency: usize,
    /// Wall-time limit of one run, in milliseconds.
    pub run_timeout_ms: u64,
    /// The scoring rules in force.
    #[serde(default)]
    pub scoring: ScoringOptions,
    /// True when the run was stopped early (Ctrl-C or SIGTERM): `not_run` lists what never finished.
    #[serde(default)]
    pub interrupted: bool,
    /// Scenario runs that never finished because the run was interrupted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_run: Vec<NotRun>,
    /// What `--impact` decided before the run: the changes since the baseline, the scenarios
    /// that ran and those skipped, each with why; absent without `--impact`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub impact: Option<impact::Impact>,
    /// The id of the run whose results these are, reused from the `--cache` directory because
    /// it had the same cache key (no model was called); absent for a run that ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_from: Option<String>,
    /// The user simulator that played the scenarios' simulated users (`simulated_user`): its
    /// model, base URL (never a key), prompt version and hash and sampling, as configured or
    /// as recorded when it replayed; absent when no scenario run had a simulated user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_simulator: Option<crate::agent::simulator::SimulatorPin>,
}

/// How an adaptive run (`--adaptive`) was configured and what it spent.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdaptiveMeta {
    /// The declared maximum of runs per scenario (`--repeat`), at least 2.
    pub max_repeat: u32,
    /// The probability, in 0.5..1.0, at which a projected verdict stopped the run (0.99).
    pub certainty: f64,
    /// Runs made.
    pub runs: usize,
    /// Runs the fixed design would have made: scenarios x `max_repeat`.
    pub planned: usize,
}

/// A scenario run that never finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotRun {
    /// Scenario id.
    pub id: String,
    /// 0-based repetition.
    pub repeat: u32,
}

/// One scenario's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioResult {
    /// Scenario id.
    pub id: String,
    /// 1..=5.
    pub tier: u8,
    /// Scenario type.
    #[serde(rename = "type")]
    pub kind: ScenarioKind,
    /// 0-based repetition of the scenario (`--repeat k`); 0 in version 1 files.
    #[serde(default)]
    pub repeat: u32,
    /// Pass, degraded, fail, errored or inconclusive.
    pub outcome: Outcome,
    /// Why the run errored, or the user simulator's mistake that made it inconclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Tool calls made.
    pub calls: usize,
    /// Every deterministic check.
    pub checks: Vec<Check>,
    /// The agent's final answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_answer: Option<String>,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Trajectory metrics (absent for errored runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<RunMetrics>,
    /// The tool category of the scenario's first expected call (`none` when it expects no
    /// call); groups the metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// The judge's verdict, when a judge ran on this (deterministically passing) run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeVerdict>,
    /// Why the judge could not give a verdict (the outcome was left as it was).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_error: Option<String>,
    /// Model turns taken, when the agent finished.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<u32>,
    /// True when the agent stopped at the turn limit.
    #[serde(default, skip_serializing_if = "is_false")]
    pub hit_turn_limit: bool,
    /// True when the model's last reply stopped at the output limit with no tool call (the
    /// run fails with a `truncated` check).
    #[serde(default, skip_serializing_if = "is_false")]
    pub truncated: bool,
    /// True when the run ran out of time while the model was generating (the run is judged on
    /// the calls it made and fails with a `timed_out` check).
    #[serde(default, skip_serializing_if = "is_false")]
    pub timed_out: bool,
    /// True when the final answer is a tool call written as text (`functions.NAME:`, a
    /// `<tool_call>` block, call JSON): the serving stack's chat format turned a call into
    /// text, a serving problem rather than the model's choice.
    #[serde(default, skip_serializing_if = "is_false")]
    pub call_as_text: bool,
    /// Tokens, requests and model latency, for model-backed agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// What the run changed in the world's state, one line per change (at most 50, then a
    /// count): `contacts C-005: email "a" -> "b"`, `activities + A-006 {...}`; empty when
    /// nothing changed or the backend keeps no state.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub state_diff: Vec<String>,
    /// The 1-based line in the scenario file of each failing check's subject, by subject;
    /// empty for a passing run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub lines: BTreeMap<String, usize>,
    /// A scripted conversation (`user_turns`) exchange by exchange: each user message, how
    /// many calls the agent made before its reply, the reply; and how it ended. Absent for a
    /// single request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<crate::score::conversation::Conversation>,
}

impl ScenarioResult {
    /// The result of `run`, a run of `scenario`: everything the results file keeps of it (the
    /// trace goes to `trace.jsonl`, not here).
    pub fn of(scenario: &Scenario, run: &ScenarioRun) -> ScenarioResult {
        ScenarioResult {
            id: scenario.id.clone(),
            repeat: run.repeat,
            tier: scenario.tier,
            kind: scenario.kind,
            outcome: run.outcome,
            error: run.error.clone(),
            calls: run.trace.len(),
            state_diff: run.state_diff.clone(),
            checks: run
                .score
                .as_ref()
                .map(|score| score.checks.clone())
                .unwrap_or_default(),
            lines: run
                .score
                .iter()
                .flat_map(|score| score.failures())
                .map(|check| {
                    (
                        check.subject.clone(),
                        scenario.lines.line_of(&check.subject),
                    )
                })
                .collect(),
            final_answer: run
                .agent
                .as_ref()
                .and_then(|agent| agent.final_answer.clone()),
            duration_ms: u64::try_from(run.duration.as_millis()).unwrap_or(u64::MAX),
            metrics: run.metrics.clone(),
            category: Some(category_of(scenario)),
            judge: run.judge.clone(),
            judge_error: run.judge_error.clone(),
            turns: run.agent.as_ref().map(|agent| agent.turns),
            hit_turn_limit: run.agent.as_ref().is_some_and(|agent| agent.hit_turn_limit),
            truncated: run.agent.as_ref().is_some_and(|agent| agent.truncated),
            timed_out: run.agent.as_ref().is_some_and(|agent| agent.timed_out),
            call_as_text: run
                .agent
                .as_ref()
                .and_then(|agent| agent.final_answer.as_deref())
                .is_some_and(crate::agent::openai::prompted::looks_like_a_call),
            usage: run
                .agent
                .as_ref()
                .map(|agent| agent.usage.clone())
                .filter(|usage| *usage != Usage::default()),
            conversation: run.conversation.clone(),
        }
    }
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// Pass/fail/errored counts over a set of runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Tally {
    /// Runs counted.
    pub total: usize,
    /// Runs that passed every deterministic check (degraded ones included).
    pub passed: usize,
    /// Of `passed`, runs the judge flagged as degraded.
    #[serde(default)]
    pub degraded: usize,
    /// Runs that failed a check.
    pub failed: usize,
    /// Runs that could not be judged: errored, or inconclusive (the user simulator made a
    /// mistake).
    pub errored: usize,
    /// Of `errored`, the inconclusive runs: the user simulator made a mistake.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub inconclusive: usize,
}

fn is_zero(value: &usize) -> bool {
    *value == 0
}

impl Tally {
    /// Passed / (passed + failed) in 0.0..=1.0; errored and inconclusive runs are left out.
    /// `None` when no run was judged.
    pub fn pass_rate(&self) -> Option<f64> {
        let judged = self.passed + self.failed;
        (judged > 0).then(|| self.passed as f64 / judged as f64)
    }

    fn add(&mut self, outcome: Outcome) {
        self.total += 1;
        match outcome {
            Outcome::Pass => self.passed += 1,
            Outcome::Degraded => {
                self.passed += 1;
                self.degraded += 1;
            }
            Outcome::Fail => self.failed += 1,
            Outcome::Errored => self.errored += 1,
            Outcome::Inconclusive => {
                self.errored += 1;
                self.inconclusive += 1;
            }
        }
    }
}

/// Aggregates of a run. With repetitions, every run counts in `overall` and `tiers`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// Over every scenario run.
    pub overall: Tally,
    /// Per tier (only tiers that ran).
    pub tiers: BTreeMap<u8, Tally>,
    /// Per scenario id: its k runs.
    #[serde(default)]
    pub per_scenario: BTreeMap<String, Tally>,
    /// The most runs any scenario had (k); 1 without repetitions.
    #[serde(default = "one")]
    pub repeat: u32,
    /// pass@1: the chance that one run passes, estimated as passed / judged runs, in
    /// 0.0..=1.0; `None` when no run was judged. Equals `overall`'s pass rate.
    #[serde(default)]
    pub pass_at_1: Option<f64>,
    /// pass^k (all k runs pass; tau-bench, Yao et al. 2024): the share of scenarios whose runs
    /// all passed, in 0.0..=1.0, over scenarios with k runs and no errored run (an adaptive
    /// run's scenarios settled with fewer runs say nothing of k); `None` when there is none.
    #[serde(default)]
    pub pass_hat_k: Option<f64>,
}

fn one() -> u32 {
    1
}

impl Summary {
    /// Aggregates `results`.
    pub fn of(results: &[ScenarioResult]) -> Summary {
        let mut summary = Summary::default();
        for result in results {
            summary.add(result);
        }
        summary.finish();
        summary
    }

    /// Counts `result` (any order; call [`Summary::finish`] after the last).
    pub fn add(&mut self, result: &ScenarioResult) {
        self.overall.add(result.outcome);
        self.tiers
            .entry(result.tier)
            .or_default()
            .add(result.outcome);
        if let Some(tally) = self.per_scenario.get_mut(&result.id) {
            tally.add(result.outcome);
        } else {
            let mut tally = Tally::default();
            tally.add(result.outcome);
            self.per_scenario.insert(result.id.clone(), tally);
        }
    }

    /// Derives `repeat`, pass@1 and pass^k from the counts.
    pub fn finish(&mut self) {
        self.repeat = self
            .per_scenario
            .values()
            .map(|tally| u32::try_from(tally.total).unwrap_or(u32::MAX))
            .max()
            .unwrap_or(1);
        self.pass_at_1 = self.overall.pass_rate();
        let judged: Vec<&Tally> = self
            .per_scenario
            .values()
            .filter(|tally| tally.errored == 0 && tally.total == self.repeat as usize)
            .collect();
        self.pass_hat_k = (!judged.is_empty()).then(|| {
            let all_passed = judged.iter().filter(|t| t.passed == t.total).count();
            all_passed as f64 / judged.len() as f64
        });
    }
}

/// The group of `scenario`'s first expected call (its category, or its server for the
/// user's own tools), `none` when it expects no call.
fn category_of(scenario: &Scenario) -> String {
    scenario.group.clone()
}

/// Trajectory metrics of `results` aggregated overall, per tier, category and type; runs
/// without metrics (errored) are left out.
pub fn metrics_of(results: &[ScenarioResult]) -> MetricsReport {
    let grouped: Vec<Grouped<'_>> = results.iter().filter_map(grouped).collect();
    MetricsReport::of(&grouped)
}

/// `result`'s metrics with its grouping keys; `None` for a run without metrics (errored).
fn grouped(result: &ScenarioResult) -> Option<Grouped<'_>> {
    Some(Grouped {
        tier: result.tier,
        category: result
            .category
            .clone()
            .unwrap_or_else(|| "none".to_string()),
        kind: result.kind.as_str().to_string(),
        metrics: result.metrics.as_ref()?,
    })
}

/// The confused pairs of `metrics`' overall confusion matrix, pointed at the look-alike lint of
/// `catalog` (MCP tool definitions): the tools the run was served, which for a suite of own
/// servers or a mock catalog are not the built-in ones.
pub fn confused_pairs_of(
    metrics: &MetricsReport,
    catalog: &[serde_json::Value],
) -> Vec<ConfusedPair> {
    look_alikes::of(&metrics.overall.confusion, catalog)
}

impl RunReport {
    /// Builds the report from the scenarios and their finished runs (each run names its
    /// scenario by position in `scenarios`; runs naming no scenario are skipped).
    pub fn new(meta: RunMeta, scenarios: &[Scenario], runs: &[ScenarioRun]) -> RunReport {
        let results = runs
            .iter()
            .filter_map(|run| Some(ScenarioResult::of(scenarios.get(run.index)?, run)))
            .collect();
        RunReport::from_results(meta, results)
    }

    /// Builds the report from per-run results already in suite order (repetitions of a
    /// scenario together), computing the summary, metrics and confused pairs.
    pub fn from_results(meta: RunMeta, results: Vec<ScenarioResult>) -> RunReport {
        let (summary, metrics) = (Summary::of(&results), metrics_of(&results));
        RunReport::assemble(meta, results, summary, metrics)
    }

    /// The report of `meta` with `results` and the aggregates already made of them (the
    /// confused pairs are derived from `metrics`); no pins.
    fn assemble(
        meta: RunMeta,
        results: Vec<ScenarioResult>,
        summary: Summary,
        metrics: MetricsReport,
    ) -> RunReport {
        RunReport {
            confused_pairs: confused_pairs_of(&metrics, Catalog::builtin().definitions()),
            schema_version: SCHEMA_VERSION,
            toolgate_version: env!("CARGO_PKG_VERSION").to_string(),
            agent: meta.agent.clone(),
            model: meta.model.clone(),
            run: Some(meta),
            pins: None,
            summary,
            scenarios: results,
            metrics,
        }
    }

    /// Reads a results file (e.g. a baseline).
    ///
    /// Version 1 files (before repetitions) load as runs with one repetition each; their
    /// summary is recomputed so pass^k and the per-scenario tallies are filled in.
    ///
    /// Errors: unreadable file, invalid JSON or shape (with the field path and line), or a
    /// `schema_version` this build does not read.
    pub fn load(path: &Path) -> Result<RunReport> {
        let text = crate::fs::read_text(path, "results", crate::defaults::MAX_RUN_FILE_BYTES)?;
        RunReport::parse(&text, path)
    }

    /// Parses results text read from `path` (named in errors); see [`RunReport::load`].
    pub fn parse(text: &str, path: &Path) -> Result<RunReport> {
        /// Only the version, read without building the rest of the document.
        #[derive(Deserialize)]
        struct Version {
            schema_version: Option<u64>,
        }
        let version = serde_json::from_str::<Version>(text)
            .ok()
            .and_then(|found| found.schema_version);
        if let Some(version) = version
            && !(u64::from(OLDEST_SCHEMA_VERSION)..=u64::from(SCHEMA_VERSION)).contains(&version)
        {
            bail!(
                "`{}`: schema_version: {version} is not supported (this toolgate reads {OLDEST_SCHEMA_VERSION} to {SCHEMA_VERSION})",
                path.display()
            );
        }
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let mut report: RunReport =
            serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
                let field = error.path().to_string();
                anyhow::anyhow!("`{}`: {field}: {}", path.display(), error.into_inner())
            })?;
        if report.schema_version < SCHEMA_VERSION {
            report.summary = Summary::of(&report.scenarios);
        }
        Ok(report)
    }

    /// The same report limited to the scenarios that `other` also ran, with its summary
    /// recomputed: a baseline is compared only on common ground.
    pub fn restricted_to(&self, other: &RunReport) -> RunReport {
        let scenarios: Vec<ScenarioResult> = self
            .scenarios
            .iter()
            .filter(|result| other.scenario(&result.id).is_some())
            .cloned()
            .collect();
        RunReport {
            summary: Summary::of(&scenarios),
            scenarios,
            ..self.clone()
        }
    }

    /// The first result for scenario `id` (its first repetition).
    pub fn scenario(&self, id: &str) -> Option<&ScenarioResult> {
        self.scenarios.iter().find(|result| result.id == id)
    }
}

/// The `trace.jsonl` lines of one run of `scenario`: its calls in arrival order, in a
/// conversation each later user message (with the reply before it) between the calls before
/// and after it, then its final answer when it gave one.
pub fn run_trace_lines(scenario: &Scenario, run: &ScenarioRun) -> Vec<TraceLine> {
    let mut lines: Vec<TraceLine> = Vec::with_capacity(run.trace.len() + 1);
    let mut calls = run.trace.iter();
    let exchanges = run
        .conversation
        .as_ref()
        .map_or(&[][..], |conversation| conversation.exchanges.as_slice());
    for (exchange, next) in exchanges.iter().zip(exchanges.iter().skip(1)) {
        for call in calls.by_ref().take(exchange.calls) {
            lines.push(TraceLine::call(&scenario.id, run.repeat, call));
        }
        lines.push(TraceLine::user_turn(
            &scenario.id,
            run.repeat,
            exchange.reply.as_deref(),
            &next.user,
        ));
    }
    lines.extend(calls.map(|call| TraceLine::call(&scenario.id, run.repeat, call)));
    if let Some(answer) = run.agent.as_ref().and_then(|a| a.final_answer.as_ref()) {
        lines.push(TraceLine::answer(&scenario.id, run.repeat, answer));
    }
    lines
}

#[cfg(test)]
mod tests {
    //! The results file: pass^k leaves errored runs out, version 1 loads, newer ones are refused.

    use super::*;

    fn result(id: &str, repeat: u32, outcome: Outcome) -> ScenarioResult {
        ScenarioResult {
            state_diff: Vec::new(),
            lines: Default::default(),
            id: id.to_owned(),
            tier: 1,
            kind: ScenarioKind::SingleCall,
            repeat,
            outcome,
            error: None,
            calls: 1,
            checks: Vec::new(),
            final_answer: None,
            duration_ms: 1,
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

    #[test]
    fn pass_hat_k_counts_scenarios_whose_every_run_passed_leaving_errored_ones_out() {
        let results = [
            result("a", 0, Outcome::Pass),
            result("a", 1, Outcome::Pass),
            result("b", 0, Outcome::Pass),
            result("b", 1, Outcome::Fail),
            result("c", 0, Outcome::Pass),
            result("c", 1, Outcome::Errored),
        ];
        let summary = Summary::of(&results);
        assert_eq!(summary.repeat, 2);
        assert_eq!(summary.pass_at_1, Some(0.8));
        assert_eq!(summary.pass_hat_k, Some(0.5));
        assert_eq!(summary.per_scenario["b"].failed, 1);
        assert_eq!(summary.overall.errored, 1);
        assert_eq!(summary.overall.inconclusive, 0);
    }

    #[test]
    fn inconclusive_runs_count_with_the_errored_ones_and_apart() {
        let results = [
            result("a", 0, Outcome::Pass),
            result("a", 1, Outcome::Inconclusive),
            result("b", 0, Outcome::Fail),
            result("b", 1, Outcome::Errored),
        ];
        let summary = Summary::of(&results);
        let overall = summary.overall;
        assert_eq!(
            (
                overall.total,
                overall.passed,
                overall.failed,
                overall.errored,
                overall.inconclusive
            ),
            (4, 1, 1, 2, 1)
        );
        assert_eq!(summary.pass_at_1, Some(0.5));
        // Neither scenario has all its runs judged: pass^k says nothing.
        assert_eq!(summary.pass_hat_k, None);
        let json = serde_json::to_value(summary.per_scenario["a"]).expect("serializes");
        assert_eq!(json["inconclusive"], 1);
        let json = serde_json::to_value(summary.per_scenario["b"]).expect("serializes");
        assert_eq!(json.get("inconclusive"), None, "zero is left out");
    }

    #[test]
    fn a_version_1_baseline_still_loads_with_its_summary_recomputed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("baseline.json");
        let version_1 = r#"{"schema_version": 1, "toolgate_version": "0.1.0", "agent": "reference", "model": null,
            "scenarios": [
              {"id": "T1-001", "tier": 1, "type": "single_call", "outcome": "pass", "calls": 1, "checks": [], "duration_ms": 3},
              {"id": "T5-001", "tier": 5, "type": "single_call", "outcome": "fail", "calls": 0, "checks": [], "duration_ms": 1}],
            "summary": {"overall": {"total": 2, "passed": 1, "failed": 1, "errored": 0},
                        "tiers": {"1": {"total": 1, "passed": 1, "failed": 0, "errored": 0},
                                  "5": {"total": 1, "passed": 0, "failed": 1, "errored": 0}}}}"#;
        std::fs::write(&path, version_1).expect("written");
        let report = RunReport::load(&path).expect("a version 1 results file loads");
        assert_eq!(report.schema_version, 1);
        assert_eq!(report.summary.pass_at_1, Some(0.5));
        assert_eq!(report.summary.repeat, 1);
        assert_eq!(report.summary.pass_hat_k, report.summary.pass_at_1);
        assert_eq!(report.summary.per_scenario.len(), report.scenarios.len());
    }

    #[test]
    fn the_run_report_points_the_confusion_matrix_at_the_look_alike_lint() {
        let mut metrics = MetricsReport::default();
        metrics.overall.confusion = vec![
            crate::score::metrics::ConfusionCell {
                expected: "erp_create_order".to_owned(),
                called: Some("erp_create_purchase_order".to_owned()),
                count: 1,
            },
            crate::score::metrics::ConfusionCell {
                expected: "erp_create_order".to_owned(),
                called: Some("erp_create_order".to_owned()),
                count: 5,
            },
        ];
        let pairs = confused_pairs_of(&metrics, Catalog::builtin().definitions());
        assert_eq!(pairs.len(), 1);
        assert_eq!(
            (pairs[0].expected.as_str(), pairs[0].called.as_str()),
            ("erp_create_order", "erp_create_purchase_order")
        );
        assert!(
            matches!(pairs[0].lint, LintPointer::NotFlagged { similarity, .. } if similarity < 0.5),
            "{:?}",
            pairs[0].lint
        );
    }

    #[test]
    fn a_newer_schema_version_is_refused_clearly() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("results.json");
        std::fs::write(&path, r#"{"schema_version": 9}"#).expect("written");
        let error = RunReport::load(&path).expect_err("too new");
        assert_eq!(
            error.to_string(),
            format!(
                "`{}`: schema_version: 9 is not supported (this toolgate reads 1 to 2)",
                path.display()
            )
        );
    }
}
