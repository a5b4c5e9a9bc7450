//! The decision itself: a pure function from a run, a baseline and the policy to a verdict.

use std::collections::{BTreeMap, BTreeSet};

use super::adaptive::{self, Projection};
use super::stats::{self, Interval};
use super::{Baseline, Comparison, Decision, Policy, QuarantineUse, Rate, Verdict};
use crate::results::{AdaptiveMeta, RunReport, ScenarioResult, Tally};
use crate::score::{CheckKind, Outcome};

/// What the error prefix of a run that overflowed the model's context window starts with
/// (`ProviderError::ContextOverflow`).
const CONTEXT_OVERFLOW: &str = "the conversation does not fit the model's context window";

/// Serving problems that make a model look worse than it is, one line each, said before any
/// blame: runs that overflowed the context window (with what the tools alone cost), and a
/// majority of runs that ended on a tool call written as text (a chat-format problem).
fn diagnoses(current: &RunReport) -> Vec<String> {
    let mut lines = Vec::new();
    let total = current.scenarios.len();
    let overflowed = current
        .scenarios
        .iter()
        .filter(|result| {
            result
                .error
                .as_deref()
                .is_some_and(|error| error.starts_with(CONTEXT_OVERFLOW))
        })
        .count();
    if overflowed > 0 {
        let cost = current
            .run
            .as_ref()
            .and_then(|run| run.catalog_tokens)
            .map(|tokens| {
                format!("; the tools offered cost about {tokens} tokens (o200k) before any message")
            })
            .unwrap_or_default();
        lines.push(format!(
            "{overflowed} of {total} runs overflowed the model's context window{cost}: give the \
             model server a larger window (llama.cpp `-c`, llama-cpp-python `--n_ctx`, Ollama \
             `num_ctx`) or offer each scenario only its own tools (`--tool-offer scenario`)"
        ));
    }
    let as_text = current
        .scenarios
        .iter()
        .filter(|result| result.call_as_text)
        .count();
    if as_text * 2 > total {
        lines.push(format!(
            "{as_text} of {total} runs ended on a tool call written as text (`functions.NAME:`, \
             a `<tool_call>` block or call JSON): the server's chat format turned the model's \
             calls into text, a serving problem rather than the model's choice; try \
             `--tool-calling prompted` (docs/agents.md)"
        ));
    }
    lines
}

/// Decides on `current` against `baseline` (`None`: no baseline).
pub fn decide(current: &RunReport, baseline: Option<&Baseline>, policy: &Policy) -> Verdict {
    let mut verdict = Verdict {
        decision: Decision::Pass,
        reasons: Vec::new(),
        notes: Vec::new(),
        delta_points: None,
        comparison: None,
        ruler_moved: Vec::new(),
        subject_changed: Vec::new(),
        quarantine: quarantine_uses(current, policy),
    };
    if let Some(run) = current.run.as_ref().filter(|run| run.interrupted) {
        // Stopped early: the scenarios that never ran (Tier 5 among them, perhaps) would be
        // judged by their absence.
        let mut never_ran: Vec<&str> = run.not_run.iter().map(|not| not.id.as_str()).collect();
        never_ran.dedup();
        verdict.decision = Decision::NoVerdict;
        verdict.reasons.push(format!(
            "the run was interrupted: {} run(s) never finished{}, so it is not judged (run the \
             gate again)",
            run.not_run.len(),
            if never_ran.is_empty() {
                String::new()
            } else {
                format!(" ({})", never_ran.join(", "))
            }
        ));
        return verdict;
    }
    let overall = current.summary.overall;
    let diagnoses = diagnoses(current);
    verdict.notes.extend(super::scope::notes(current));
    if super::scope::nothing_affected(current) {
        // A change no scenario can see: nothing ran, and nothing is wrong.
        return verdict;
    }
    if overall.total == 0 || overall.errored * 2 > overall.total {
        verdict.decision = Decision::NoVerdict;
        verdict.reasons.push(too_many_unjudged(&overall));
        verdict.reasons.extend(diagnoses);
        return verdict;
    }
    verdict.notes.extend(diagnoses);
    if let Some(run) = current
        .run
        .as_ref()
        .filter(|run| !run.usage_unchecked.is_empty())
    {
        verdict.notes.push(format!(
            "the token, model-call and cost limits of {} scenario(s) were not checked: the `{}` \
             agent reports no model usage (only `max_wall_ms` is): {}",
            run.usage_unchecked.len(),
            run.agent,
            run.usage_unchecked
                .iter()
                .map(|id| format!("`{id}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    verdict.notes.extend(unjudged_notes(&overall));

    let rates = match baseline {
        None => {
            let failed_below_tier_5 = current
                .scenarios
                .iter()
                .filter(|r| r.tier != 5 && r.outcome == Outcome::Fail)
                .count();
            verdict.notes.push(match policy.min_pass_rate {
                Some(_) => {
                    "no baseline: only the Tier 5 rule and the pass-rate floor apply".to_string()
                }
                None if failed_below_tier_5 > 0 => format!(
                    "no baseline: only the Tier 5 rule applies, so failures outside Tier 5 \
                     ({failed_below_tier_5}) do not block (set a floor with --min-pass-rate, or \
                     keep this run's results.json as the baseline)"
                ),
                None => "no baseline: only the Tier 5 rule applies".to_string(),
            });
            RateFinding::WithinBand
        }
        Some(baseline) => compare(current, baseline, policy, &mut verdict),
    };
    let tier_5_blocks = tier_5(current, baseline, policy, &mut verdict);
    let unrecorded = not_recorded(current, &mut verdict);
    let below_floor = below_floor(current, policy, &mut verdict);
    let over_budget = over_budget(current, baseline, policy, &mut verdict);

    verdict.decision = match rates {
        _ if tier_5_blocks || unrecorded || below_floor || over_budget => Decision::Fail,
        RateFinding::Regression => Decision::Fail,
        RateFinding::Inconclusive => Decision::Inconclusive,
        RateFinding::WithinBand => Decision::Pass,
    };
    verdict
}

/// Whether the overall pass rate is under `policy.min_pass_rate` (an absolute floor, as
/// promptfoo's pass-rate threshold); pushes the reason when it is.
fn below_floor(current: &RunReport, policy: &Policy, verdict: &mut Verdict) -> bool {
    let (Some(floor), Some(rate)) = (policy.min_pass_rate, current.summary.overall.pass_rate())
    else {
        return false;
    };
    let overall = current.summary.overall;
    let judged = overall.passed + overall.failed;
    // Compared in runs, not in rounded percent (passed * 100 against floor * judged, exact for
    // whole floors): 9 of 10 against a 90% floor passes.
    if overall.passed as f64 * 100.0 >= floor * judged as f64 {
        return false;
    }
    verdict.reasons.push(format!(
        "pass rate {:.1}% ({}/{judged}) is below the {floor}% floor (--min-pass-rate)",
        rate * 100.0,
        overall.passed,
    ));
    true
}

/// Whether the judged model runs spent more than `policy.usage` allows: mean tokens or cost
/// per run over the limit, or mean tokens per run grown past the allowed share over the
/// baseline's; pushes a reason for each. A run without usage is never over budget; growth is
/// judged only against a baseline that measured usage over the same scenarios (else a note).
fn over_budget(
    current: &RunReport,
    baseline: Option<&Baseline>,
    policy: &Policy,
    verdict: &mut Verdict,
) -> bool {
    let limits = policy.usage;
    let now = super::metrics::Metrics::of(current);
    let mut over = false;
    if let (Some(limit), Some(tokens)) = (limits.max_tokens_per_run, now.tokens_per_run)
        && tokens > limit as f64
    {
        verdict.reasons.push(format!(
            "{tokens:.0} tokens per run on average, over the limit of {limit} (--max-tokens-per-run)"
        ));
        over = true;
    }
    if let (Some(limit), Some(cost)) = (limits.max_cost_per_run, now.cost_per_run)
        && !crate::score::usage::cost_within(cost, limit)
    {
        verdict.reasons.push(format!(
            "${cost:.4} per run on average, over the limit of ${limit} (--max-cost-per-run)"
        ));
        over = true;
    }
    let (Some(percent), Some(tokens), Some(baseline)) = (
        limits.max_token_growth_percent,
        now.tokens_per_run,
        baseline,
    ) else {
        return over;
    };
    let covered = baseline
        .scenarios
        .iter()
        .filter(|scenario| current.scenario(&scenario.id).is_some())
        .count();
    match baseline.metrics.tokens_per_run {
        Some(before) if covered == baseline.scenarios.len() && before > 0.0 => {
            let growth = (tokens / before - 1.0) * 100.0;
            if growth > percent {
                verdict.reasons.push(format!(
                    "{tokens:.0} tokens per run on average, {growth:+.1}% over the baseline's {before:.0}, beyond the {percent}% allowed (--max-token-growth)"
                ));
                over = true;
            }
        }
        _ => verdict.notes.push(
            "token growth not judged: the baseline has no token usage over the same scenarios (--max-token-growth)"
                .to_owned(),
        ),
    }
    over
}

/// The prefix of the error of a replayed run whose agent made a call its cassette does not
/// hold (see `harness::cassette`).
const NOT_RECORDED: &str = "not_recorded:";

/// Why there is no verdict when most runs errored (`overall.errored` counts the inconclusive
/// ones too).
fn too_many_unjudged(overall: &Tally) -> String {
    if overall.inconclusive == 0 {
        return format!(
            "{} of {} runs errored: no verdict (fix the agent or provider and run again)",
            overall.errored, overall.total
        );
    }
    format!(
        "{} of {} runs errored, {} of them inconclusive (the user simulator made a mistake): no \
         verdict (fix the agent, the provider or the simulated users and run again)",
        overall.errored, overall.total, overall.inconclusive
    )
}

/// The notes on the runs left out of the pass rate: those that errored, and apart, those that
/// were inconclusive.
fn unjudged_notes(overall: &Tally) -> Vec<String> {
    let mut notes = Vec::new();
    if overall.errored > overall.inconclusive {
        notes.push(format!(
            "{} of {} runs errored and are left out of the pass rate",
            overall.errored - overall.inconclusive,
            overall.total
        ));
    }
    if overall.inconclusive > 0 {
        notes.push(format!(
            "{} of {} runs are inconclusive (the user simulator made a mistake) and are left out \
             of the pass rate",
            overall.inconclusive, overall.total
        ));
    }
    notes
}

/// The prefix of the error of a run whose agent said what the user simulator's recording does
/// not hold (see `agent::simulator`): a `not_recorded` run of its own kind.
const NOT_RECORDED_USER: &str = "not_recorded: user simulator:";

/// Whether a replayed run did something its cassette (or its user simulator's recording) does
/// not hold: a call the cassette lacks fails the run (a failing `not_recorded` check), a
/// message the user recording lacks errors it (or a run has no cassette at all). Either way
/// the agent (or the suite) no longer does what was recorded, which a replayed gate exists to
/// catch, so it fails the gate whatever the pass rate, naming the runs.
fn not_recorded(current: &RunReport, verdict: &mut Verdict) -> bool {
    let (users, calls): (Vec<&ScenarioResult>, Vec<&ScenarioResult>) = current
        .scenarios
        .iter()
        .filter(|r| {
            r.error
                .as_deref()
                .is_some_and(|e| e.starts_with(NOT_RECORDED))
                || r.checks
                    .iter()
                    .any(|check| check.kind == CheckKind::NotRecorded && !check.passed)
        })
        .partition(|r| {
            r.error
                .as_deref()
                .is_some_and(|e| e.starts_with(NOT_RECORDED_USER))
        });
    let ids = |runs: &[&ScenarioResult]| {
        runs.iter()
            .map(|r| r.id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !calls.is_empty() {
        verdict.reasons.push(format!(
            "{} replayed runs made calls their cassettes do not hold (not_recorded): {}; record them again against the live servers",
            calls.len(),
            ids(&calls)
        ));
    }
    if !users.is_empty() {
        verdict.reasons.push(format!(
            "{} replayed runs said what their user simulator recordings do not hold (not_recorded): {}; record them again with a user model (`--user-record DIR`)",
            users.len(),
            ids(&users)
        ));
    }
    !(calls.is_empty() && users.is_empty())
}

fn quarantine_uses(current: &RunReport, policy: &Policy) -> Vec<QuarantineUse> {
    policy
        .quarantine
        .iter()
        .map(|entry| QuarantineUse {
            entry: entry.clone(),
            active: entry.is_active(policy.now),
            failing: current
                .scenario(&entry.scenario)
                .is_some_and(|r| r.outcome == Outcome::Fail),
        })
        .collect()
}

/// What the pass-rate comparison found.
enum RateFinding {
    /// No drop beyond the band (or nothing to compare).
    WithinBand,
    /// A drop beyond the band that is not significant.
    Inconclusive,
    /// A significant drop beyond the band.
    Regression,
}

/// Compares pass rates over common, unchanged scenarios; pushes a reason beyond the band.
fn compare(
    current: &RunReport,
    baseline: &Baseline,
    policy: &Policy,
    verdict: &mut Verdict,
) -> RateFinding {
    let changed_files = changed_files(current, baseline, verdict);
    note_new_scenarios(current, baseline, verdict);
    let judged = JudgedOnBoth::of(current, baseline, &changed_files);
    let pooled = baseline.restricted(|id| judged.ids.contains(id)).overall();
    let (Some(now), Some(before)) = (
        // Runs, not scenarios: with repetitions each scenario has k runs on this side.
        Rate::new(judged.passed, judged.runs),
        Rate::new(pooled.passed, pooled.passed + pooled.failed),
    ) else {
        verdict
            .notes
            .push("no scenario was judged in both runs: pass rates not compared".to_string());
        return RateFinding::WithinBand;
    };
    let delta_points = (now.rate - before.rate) * 100.0;
    let difference = stats::difference(now.rate, now.interval, before.rate, before.interval);
    let compared: Vec<stats::Compared> = judged.counts.values().copied().collect();
    let p_value = stats::regression_p_value(judged.passed, &compared);
    let comparison = Comparison {
        scenarios: judged.ids.len(),
        current: now,
        baseline: before,
        delta_points,
        delta_interval_points: Interval {
            low: difference.low * 100.0,
            high: difference.high * 100.0,
        },
        p_value,
        beyond_band: delta_points < -policy.tolerance_points,
        significant: p_value < policy.alpha,
    };
    verdict.delta_points = Some(delta_points);
    verdict.comparison = Some(comparison);
    if let Some(meta) = current.run.as_ref().and_then(|run| run.adaptive)
        && let Some(finding) = adaptive_finding(current, baseline, policy, meta, verdict)
    {
        return finding;
    }
    rate_finding(&comparison, policy, verdict)
}

/// The finding of an adaptive run that stopped short of every planned run: the fixed
/// design's verdict as projected, with the runs spent ([`adaptive`]). `None` when every
/// planned run was made, so the runs are judged as measured.
fn adaptive_finding(
    current: &RunReport,
    baseline: &Baseline,
    policy: &Policy,
    meta: AdaptiveMeta,
    verdict: &mut Verdict,
) -> Option<RateFinding> {
    let spent = format!(
        "after {} of {} runs ({} per scenario at most)",
        meta.runs, meta.planned, meta.max_repeat
    );
    let projection =
        adaptive::projection_of(current, baseline, policy, meta.max_repeat, meta.certainty);
    match projection {
        Projection::Complete => {
            verdict.notes.push(format!(
                "adaptive repeats made every planned run ({} of {}): nothing could be settled sooner against this baseline (a longer baseline window settles sooner)",
                meta.runs, meta.planned
            ));
            None
        }
        Projection::Settled {
            decision: Decision::Fail,
            probability,
        } => {
            verdict.reasons.push(format!(
                "adaptive repeats settled {spent}: all {} runs per scenario would show a significant drop beyond the {:.1}-point tolerance (probability {})",
                meta.max_repeat,
                policy.tolerance_points,
                probability_text(probability)
            ));
            Some(RateFinding::Regression)
        }
        Projection::Settled { probability, .. } => {
            verdict.notes.push(format!(
                "adaptive repeats settled {spent}: all {} runs per scenario would pass the rate check (probability {})",
                meta.max_repeat,
                probability_text(probability)
            ));
            Some(RateFinding::WithinBand)
        }
        Projection::Unsettled { .. } => {
            verdict.reasons.push(format!(
                "adaptive repeats stopped {spent}, and against this baseline, tolerance and alpha the verdict of {} runs per scenario is not settled: inconclusive; gate the run against the baseline and policy it ran with, or run again",
                meta.max_repeat
            ));
            Some(RateFinding::Inconclusive)
        }
    }
}

/// The scenarios whose file changed since the baseline, which are left out of the comparison
/// (noted); also records what moved the ruler or changed the subject, from the pins.
fn changed_files(
    current: &RunReport,
    baseline: &Baseline,
    verdict: &mut Verdict,
) -> BTreeSet<String> {
    let mut changed_files = BTreeSet::new();
    match (&current.pins, &baseline.pins) {
        (Some(now), Some(before)) => {
            verdict.ruler_moved = now.ruler_changes(before);
            verdict.subject_changed = now.subject_changes(before);
            changed_files = super::adaptive::changed_scenarios(now, before);
        }
        _ => verdict.notes.push(
            "the run or the baseline has no pinned metadata: cannot tell whether the ruler moved"
                .to_string(),
        ),
    }
    if !changed_files.is_empty() {
        verdict.notes.push(format!(
            "{} scenario(s) whose file changed are left out of the comparison",
            changed_files.len()
        ));
    }
    changed_files
}

/// Notes the scenarios of the run that the baseline does not have, which are not compared.
fn note_new_scenarios(current: &RunReport, baseline: &Baseline, verdict: &mut Verdict) {
    // Each id once, however many repetitions it had.
    let mut new: Vec<&str> = Vec::new();
    for result in &current.scenarios {
        if baseline.scenario(&result.id).is_none() && !new.contains(&result.id.as_str()) {
            new.push(result.id.as_str());
        }
    }
    if !new.is_empty() {
        verdict.notes.push(format!(
            "{} scenario(s) not in the baseline are not compared: {}",
            new.len(),
            new.iter()
                .map(|id| format!("`{id}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
}

/// The runs compared: scenarios judged on both sides, with an unchanged file. One errored on
/// either side says nothing about a change, and counting it on one side only would skew the
/// rates.
struct JudgedOnBoth<'a> {
    /// The compared scenarios' ids.
    ids: BTreeSet<&'a str>,
    /// How many of the current runs of those scenarios passed.
    passed: usize,
    /// Per compared scenario, its baseline counts and its runs here.
    counts: BTreeMap<&'a str, stats::Compared>,
    /// The current runs compared.
    runs: usize,
}

impl<'a> JudgedOnBoth<'a> {
    /// The runs of `current` comparable with `baseline`, leaving out `changed_files`.
    fn of(
        current: &'a RunReport,
        baseline: &Baseline,
        changed_files: &BTreeSet<String>,
    ) -> JudgedOnBoth<'a> {
        let mut judged = JudgedOnBoth {
            ids: BTreeSet::new(),
            passed: 0,
            counts: BTreeMap::new(),
            runs: 0,
        };
        for result in &current.scenarios {
            let Some(before) = baseline.scenario(&result.id) else {
                continue;
            };
            if changed_files.contains(&result.id)
                || result.outcome.is_unjudged()
                || before.judged() == 0
            {
                continue;
            }
            judged.ids.insert(result.id.as_str());
            judged.passed += usize::from(result.outcome == Outcome::Pass);
            judged.runs += 1;
            judged
                .counts
                .entry(result.id.as_str())
                .or_insert(stats::Compared {
                    baseline: stats::ScenarioCounts {
                        passed: before.passed,
                        judged: before.judged(),
                    },
                    runs: 0,
                })
                .runs += 1;
        }
        judged
    }
}

/// What `comparison` finds against the policy's band and alpha; pushes the reason for a drop
/// beyond the band.
fn rate_finding(comparison: &Comparison, policy: &Policy, verdict: &mut Verdict) -> RateFinding {
    if !comparison.beyond_band {
        return RateFinding::WithinBand;
    }
    let drop = format!(
        "pass rate dropped {:.1} points ({:.1}% -> {:.1}%), beyond the {:.1}-point tolerance",
        -comparison.delta_points,
        comparison.baseline.rate * 100.0,
        comparison.current.rate * 100.0,
        policy.tolerance_points
    );
    if comparison.significant {
        verdict.reasons.push(format!(
            "{drop} and significant (one-sided p = {}, alpha {})",
            p_text(comparison.p_value),
            policy.alpha
        ));
        RateFinding::Regression
    } else {
        verdict.reasons.push(format!(
            "{drop} but not significant (one-sided p = {} >= alpha {}): inconclusive, add repeats or baseline runs to tell",
            p_text(comparison.p_value),
            policy.alpha
        ));
        RateFinding::Inconclusive
    }
}

/// A probability for people: three decimals, `> 0.999` above that (never a rounded 1).
fn probability_text(p: f64) -> String {
    if p > 0.999 {
        "> 0.999".to_owned()
    } else {
        format!("{p:.3}")
    }
}

/// A p-value for people: four decimals, `< 0.0001` below that.
pub fn p_text(p: f64) -> String {
    if p < 1e-4 {
        "< 0.0001".to_string()
    } else {
        format!("{p:.4}")
    }
}

/// Applies Tier 5 zero tolerance; returns whether a failure blocks.
fn tier_5(
    current: &RunReport,
    baseline: Option<&Baseline>,
    policy: &Policy,
    verdict: &mut Verdict,
) -> bool {
    let mut blocks = false;
    for result in current
        .scenarios
        .iter()
        .filter(|r| r.tier == 5 && r.outcome == Outcome::Fail)
    {
        let id = &result.id;
        let entry = policy.quarantine.iter().find(|e| &e.scenario == id);
        if let Some(entry) = entry {
            if entry.is_active(policy.now) {
                verdict.notes.push(format!(
                    "Tier 5 `{id}` fails but is quarantined through {}: {}",
                    entry.expires, entry.reason
                ));
            } else {
                blocks = true;
                verdict.reasons.push(format!(
                    "Tier 5 `{id}` fails (zero tolerance; its quarantine expired after {})",
                    entry.expires
                ));
            }
            continue;
        }
        blocks = true;
        let before = baseline.and_then(|b| b.scenario(id));
        verdict.reasons.push(match before {
            Some(b) if b.failed == 0 && b.passed > 0 => {
                format!("Tier 5 `{id}` passed in the baseline and fails now (zero tolerance)")
            }
            Some(b) if b.failed > 0 => format!(
                "Tier 5 `{id}` fails, as in {} of {} baseline runs (zero tolerance; quarantine it to let it through)",
                b.failed,
                b.judged()
            ),
            _ => format!("Tier 5 `{id}` fails (zero tolerance)"),
        });
    }
    blocks
}

#[cfg(test)]
pub(crate) mod tests;
