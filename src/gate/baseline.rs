//! The baseline a run is compared with: per-scenario pass counts over a window of
//! default-branch runs (`toolgate baseline`), or over a single results file.
//!
//! Both files are accepted wherever a baseline is read: a baseline file (`"kind":
//! "baseline"`) or a results file, which counts as a window of one run.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, Result, bail};
use serde::{Deserialize, Serialize};

use super::history::HistoryEntry;
use super::metrics::Metrics;
use crate::results::ScenarioKind;
use crate::results::pins::Pins;
use crate::results::{RunReport, Tally};
use crate::score::Outcome;

/// The baseline format version this build writes and reads.
pub const BASELINE_SCHEMA_VERSION: u32 = 1;

/// The most history points a trend keeps (newest last).
pub const TREND_POINTS: usize = 30;

/// Marks a baseline file apart from a results file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaselineKind {
    /// The only value.
    Baseline,
}

/// Per-scenario pass counts over a window of runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// Always [`BASELINE_SCHEMA_VERSION`] when written by this build.
    pub schema_version: u32,
    /// Always `baseline`.
    pub kind: BaselineKind,
    /// The branch the runs measured, when known.
    pub branch: Option<String>,
    /// The window's start and end, RFC 3339 UTC; `None` for a single results file.
    pub window: Option<Window>,
    /// Runs aggregated, at least 1.
    pub runs: usize,
    /// Runs in the window left out because they were measured with another ruler or
    /// subject than the newest run.
    #[serde(default)]
    pub excluded_runs: usize,
    /// The newest run's pinned metadata.
    pub pins: Option<Pins>,
    /// Mean metrics over the runs.
    pub metrics: Metrics,
    /// Per scenario, sorted by id.
    pub scenarios: Vec<BaselineScenario>,
    /// Overall pass rates of recent branch runs, oldest first, at most [`TREND_POINTS`].
    pub trend: Vec<TrendPoint>,
}

/// The window a baseline covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Window {
    /// Start, RFC 3339 UTC.
    pub from: String,
    /// End, RFC 3339 UTC.
    pub to: String,
}

/// One scenario's outcomes over the baseline's runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineScenario {
    /// Scenario id.
    pub id: String,
    /// 1..=5.
    pub tier: u8,
    /// Scenario type.
    #[serde(rename = "type")]
    pub kind: ScenarioKind,
    /// Runs that passed.
    pub passed: usize,
    /// Runs that failed.
    pub failed: usize,
    /// Runs that errored or were inconclusive (not judged).
    pub errored: usize,
}

impl BaselineScenario {
    /// Passed plus failed.
    pub fn judged(&self) -> usize {
        self.passed + self.failed
    }

    /// Passed / judged, `None` when never judged.
    pub fn pass_rate(&self) -> Option<f64> {
        (self.judged() > 0).then(|| self.passed as f64 / self.judged() as f64)
    }

    fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Pass | Outcome::Degraded => self.passed += 1,
            Outcome::Fail => self.failed += 1,
            Outcome::Errored | Outcome::Inconclusive => self.errored += 1,
        }
    }
}

/// One point of the pass-rate trend.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrendPoint {
    /// RFC 3339 UTC.
    pub recorded_at: String,
    /// The commit, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Runs that passed.
    pub passed: usize,
    /// Runs judged (passed + failed).
    pub judged: usize,
}

impl Baseline {
    /// A baseline of one run: `report`.
    pub fn from_report(report: &RunReport) -> Baseline {
        let scenarios = report
            .scenarios
            .iter()
            .map(|r| {
                let mut scenario = BaselineScenario {
                    id: r.id.clone(),
                    tier: r.tier,
                    kind: r.kind,
                    passed: 0,
                    failed: 0,
                    errored: 0,
                };
                scenario.add(r.outcome);
                scenario
            })
            .collect();
        Baseline {
            schema_version: BASELINE_SCHEMA_VERSION,
            kind: BaselineKind::Baseline,
            branch: None,
            window: None,
            runs: 1,
            excluded_runs: 0,
            pins: report.pins.clone(),
            metrics: Metrics::of(report),
            scenarios: sorted(scenarios),
            trend: Vec::new(),
        }
    }

    /// Aggregates the runs of `branch` recorded in the `window` ending at `now`.
    ///
    /// Only runs measured like the newest one count (same model, provider, system prompt,
    /// judge, harness and catalog); a scenario counts only runs where its file was the same as
    /// in the newest run. Errors: no run of `branch` in the window.
    pub fn aggregate(
        history: &[HistoryEntry],
        branch: &str,
        window: Duration,
        now: SystemTime,
    ) -> Result<Baseline> {
        let start = now.checked_sub(window).unwrap_or(SystemTime::UNIX_EPOCH);
        let mut on_branch: Vec<(SystemTime, &HistoryEntry)> = Vec::new();
        for entry in history.iter().filter(|e| e.branch == branch) {
            on_branch.push((entry.time()?, entry));
        }
        on_branch.sort_by_key(|(time, _)| *time);
        let in_window: Vec<&HistoryEntry> = on_branch
            .iter()
            .filter(|(time, _)| *time >= start && *time <= now)
            .map(|(_, entry)| *entry)
            .collect();
        let Some(newest) = in_window.last() else {
            bail!(
                "no run of branch `{branch}` in the {} before {}",
                humantime::format_duration(window),
                humantime::format_rfc3339_seconds(now)
            );
        };
        let same_measure = |entry: &HistoryEntry| match (&entry.pins, &newest.pins) {
            (Some(pins), Some(newest)) => {
                pins.ruler_changes(newest)
                    .iter()
                    .all(|c| c.starts_with("scenario files"))
                    && pins.subject_changes(newest).is_empty()
            }
            (None, None) => true,
            _ => false,
        };
        let counted: Vec<&HistoryEntry> = in_window
            .iter()
            .copied()
            .filter(|e| same_measure(e))
            .collect();
        let mut scenarios: BTreeMap<&str, BaselineScenario> = BTreeMap::new();
        for entry in &counted {
            for outcome in &entry.scenarios {
                let file = |e: &HistoryEntry| {
                    e.pins
                        .as_ref()
                        .and_then(|p| p.scenarios.get(&outcome.id))
                        .map(|pin| pin.sha256.clone())
                };
                if file(entry) != file(newest) {
                    continue;
                }
                scenarios
                    .entry(&outcome.id)
                    .or_insert_with(|| BaselineScenario {
                        id: outcome.id.clone(),
                        tier: outcome.tier,
                        kind: outcome.kind,
                        passed: 0,
                        failed: 0,
                        errored: 0,
                    })
                    .add(outcome.outcome);
            }
        }
        let metrics: Vec<Metrics> = counted.iter().map(|e| e.metrics).collect();
        let until_now: Vec<&HistoryEntry> = on_branch
            .iter()
            .filter(|(time, _)| *time <= now)
            .map(|(_, entry)| *entry)
            .collect();
        let trend = until_now[until_now.len().saturating_sub(TREND_POINTS)..]
            .iter()
            .map(|e| TrendPoint {
                recorded_at: e.recorded_at.clone(),
                commit: e.commit.clone(),
                passed: e.overall.passed,
                judged: e.overall.passed + e.overall.failed,
            })
            .collect();
        Ok(Baseline {
            schema_version: BASELINE_SCHEMA_VERSION,
            kind: BaselineKind::Baseline,
            branch: Some(branch.to_string()),
            window: Some(Window {
                from: humantime::format_rfc3339_seconds(start).to_string(),
                to: humantime::format_rfc3339_seconds(now).to_string(),
            }),
            runs: counted.len(),
            excluded_runs: in_window.len() - counted.len(),
            pins: newest.pins.clone(),
            metrics: Metrics::mean(&metrics),
            scenarios: scenarios.into_values().collect(),
            trend,
        })
    }

    /// Reads a baseline file or a results file (a window of one run).
    ///
    /// Errors: unreadable file, invalid JSON or shape (with the field path), or an unsupported
    /// `schema_version`.
    pub fn load(path: &Path) -> Result<Baseline> {
        let text = crate::fs::read_text(path, "baseline", crate::defaults::MAX_RUN_FILE_BYTES)?;
        Baseline::parse(&text, path)
    }

    /// Parses baseline or results text read from `origin` (named in errors).
    pub fn parse(text: &str, origin: &Path) -> Result<Baseline> {
        let value: serde_json::Value = serde_json::from_str(text)
            .with_context(|| format!("`{}` is not JSON", origin.display()))?;
        if value.get("kind").and_then(|k| k.as_str()) != Some("baseline") {
            return RunReport::parse(text, origin).map(|report| Baseline::from_report(&report));
        }
        let version = value.get("schema_version").and_then(|v| v.as_u64());
        if let Some(version) = version
            && version != u64::from(BASELINE_SCHEMA_VERSION)
        {
            bail!(
                "`{}`: schema_version: {version} is not supported (this toolgate reads {BASELINE_SCHEMA_VERSION})",
                origin.display()
            );
        }
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let baseline: Baseline =
            serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
                let field = error.path().to_string();
                anyhow::anyhow!("`{}`: {field}: {}", origin.display(), error.into_inner())
            })?;
        baseline.checked(origin)
    }

    /// The baseline with its scenarios in id order, or an error naming the first entry that
    /// cannot be true: a tier outside 1..=5, an id listed twice, or more outcomes than the
    /// baseline has runs (each run gives a scenario at most one outcome).
    fn checked(mut self, origin: &Path) -> Result<Baseline> {
        let problem = |index: usize, id: &str, what: String| {
            anyhow::anyhow!(
                "`{}`: scenarios[{index}] (`{id}`): {what}",
                origin.display()
            )
        };
        for (index, scenario) in self.scenarios.iter().enumerate() {
            if !(1..=5).contains(&scenario.tier) {
                return Err(problem(
                    index,
                    &scenario.id,
                    format!("tier {} is not in 1..=5", scenario.tier),
                ));
            }
            let outcomes = scenario.judged() + scenario.errored;
            if outcomes > self.runs {
                return Err(problem(
                    index,
                    &scenario.id,
                    format!(
                        "{outcomes} outcomes ({} passed, {} failed, {} errored) but the baseline counts {} runs",
                        scenario.passed, scenario.failed, scenario.errored, self.runs
                    ),
                ));
            }
        }
        let mut order: Vec<usize> = (0..self.scenarios.len()).collect();
        order.sort_by(|&a, &b| self.scenarios[a].id.cmp(&self.scenarios[b].id));
        for pair in order.windows(2) {
            if self.scenarios[pair[0]].id == self.scenarios[pair[1]].id {
                let index = pair[0].max(pair[1]);
                return Err(problem(
                    index,
                    &self.scenarios[index].id,
                    format!("listed twice (also scenarios[{}])", pair[0].min(pair[1])),
                ));
            }
        }
        // Lookups binary-search by id.
        self.scenarios.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(self)
    }

    /// The entry for scenario `id`.
    pub fn scenario(&self, id: &str) -> Option<&BaselineScenario> {
        self.scenarios
            .binary_search_by(|s| s.id.as_str().cmp(id))
            .ok()
            .map(|i| &self.scenarios[i])
    }

    /// The same baseline limited to scenarios `keep` accepts.
    pub fn restricted(&self, keep: impl Fn(&str) -> bool) -> Baseline {
        Baseline {
            scenarios: self
                .scenarios
                .iter()
                .filter(|s| keep(&s.id))
                .cloned()
                .collect(),
            ..self.clone()
        }
    }

    /// Counts over every scenario and run (`total` counts runs).
    pub fn overall(&self) -> Tally {
        tally(self.scenarios.iter())
    }

    /// Counts per tier.
    pub fn tiers(&self) -> BTreeMap<u8, Tally> {
        let mut tiers: BTreeMap<u8, Vec<&BaselineScenario>> = BTreeMap::new();
        for scenario in &self.scenarios {
            tiers.entry(scenario.tier).or_default().push(scenario);
        }
        tiers
            .into_iter()
            .map(|(tier, list)| (tier, tally(list.into_iter())))
            .collect()
    }
}

fn sorted(mut scenarios: Vec<BaselineScenario>) -> Vec<BaselineScenario> {
    scenarios.sort_by(|a, b| a.id.cmp(&b.id));
    scenarios
}

fn tally<'a>(scenarios: impl Iterator<Item = &'a BaselineScenario>) -> Tally {
    let mut tally = Tally::default();
    for s in scenarios {
        tally.passed += s.passed;
        tally.failed += s.failed;
        tally.errored += s.errored;
    }
    tally.total = tally.passed + tally.failed + tally.errored;
    tally
}

#[cfg(test)]
mod tests {
    //! Baselines: a window of default-branch runs aggregates; an empty or impossible one fails.

    use super::*;
    use crate::gate::history::{HISTORY_SCHEMA_VERSION, HistoryOutcome};

    fn entry(at: &str, branch: &str, outcomes: &[(&str, Outcome)]) -> HistoryEntry {
        let passed = outcomes.iter().filter(|(_, o)| *o == Outcome::Pass).count();
        HistoryEntry {
            schema_version: HISTORY_SCHEMA_VERSION,
            recorded_at: at.into(),
            branch: branch.into(),
            commit: None,
            pins: None,
            overall: Tally {
                total: outcomes.len(),
                passed,
                failed: outcomes.len() - passed,
                errored: 0,
                degraded: 0,
                inconclusive: 0,
            },
            metrics: Metrics::default(),
            scenarios: outcomes
                .iter()
                .map(|(id, outcome)| HistoryOutcome {
                    id: (*id).into(),
                    tier: 1,
                    kind: ScenarioKind::SingleCall,
                    outcome: *outcome,
                })
                .collect(),
        }
    }

    fn time(text: &str) -> SystemTime {
        humantime::parse_rfc3339(text).expect("valid time")
    }

    #[test]
    fn aggregates_the_window_of_default_branch_runs() {
        use Outcome::{Fail, Pass};
        let history = vec![
            entry("2026-11-20T02:00:00Z", "main", &[("A", Fail), ("B", Fail)]),
            entry("2026-11-25T02:00:00Z", "main", &[("A", Pass), ("B", Fail)]),
            entry(
                "2026-11-26T02:00:00Z",
                "feature",
                &[("A", Fail), ("B", Fail)],
            ),
            entry("2026-11-29T02:00:00Z", "main", &[("A", Pass), ("B", Pass)]),
        ];
        let baseline = Baseline::aggregate(
            &history,
            "main",
            Duration::from_secs(7 * 86_400),
            time("2026-11-30T00:00:00Z"),
        )
        .expect("runs in the window");
        assert_eq!(baseline.runs, 2);
        assert_eq!(
            baseline.scenario("A").map(|s| (s.passed, s.failed)),
            Some((2, 0))
        );
        assert_eq!(
            baseline.scenario("B").map(|s| (s.passed, s.failed)),
            Some((1, 1))
        );
        assert_eq!(baseline.overall().pass_rate(), Some(0.75));
        assert_eq!(
            baseline.window,
            Some(Window {
                from: "2026-11-23T00:00:00Z".into(),
                to: "2026-11-30T00:00:00Z".into()
            })
        );
        // The trend keeps every main run, the old one too.
        assert_eq!(baseline.trend.len(), 3);
    }

    #[test]
    fn a_baseline_that_cannot_be_true_is_refused_naming_the_entry() {
        use Outcome::{Fail, Pass};
        let history = vec![
            entry("2026-11-25T02:00:00Z", "main", &[("A", Pass), ("B", Fail)]),
            entry("2026-11-29T02:00:00Z", "main", &[("A", Pass), ("B", Pass)]),
        ];
        let window = Duration::from_secs(7 * 86_400);
        let now = time("2026-11-30T00:00:00Z");
        let good = Baseline::aggregate(&history, "main", window, now).expect("valid");
        let text = |baseline: &Baseline| crate::json::pretty(baseline);
        let origin = Path::new("b.json");

        let mut reversed = good.clone();
        reversed.scenarios.reverse();
        let read = Baseline::parse(&text(&reversed), origin).expect("order does not matter");
        assert_eq!(read.scenario("A").map(|s| s.passed), Some(2));
        assert_eq!(read.scenario("B").map(|s| s.failed), Some(1));

        let mut inflated = good.clone();
        inflated.scenarios[1].passed = 5;
        assert_eq!(
            Baseline::parse(&text(&inflated), origin)
                .expect_err("5 + 1 > 2")
                .to_string(),
            "`b.json`: scenarios[1] (`B`): 6 outcomes (5 passed, 1 failed, 0 errored) but the baseline counts 2 runs"
        );

        let mut twice = good.clone();
        twice.scenarios.push(good.scenarios[0].clone());
        assert_eq!(
            Baseline::parse(&text(&twice), origin)
                .expect_err("A twice")
                .to_string(),
            "`b.json`: scenarios[2] (`A`): listed twice (also scenarios[0])"
        );

        let mut tier = good;
        tier.scenarios[0].tier = 9;
        assert_eq!(
            Baseline::parse(&text(&tier), origin)
                .expect_err("tier 9")
                .to_string(),
            "`b.json`: scenarios[0] (`A`): tier 9 is not in 1..=5"
        );
    }

    #[test]
    fn fails_when_no_run_is_in_the_window() {
        let history = vec![entry(
            "2026-11-01T02:00:00Z",
            "main",
            &[("A", Outcome::Pass)],
        )];
        let error = Baseline::aggregate(
            &history,
            "main",
            Duration::from_secs(7 * 86_400),
            time("2026-11-30T00:00:00Z"),
        )
        .expect_err("nothing recent");
        assert_eq!(
            error.to_string(),
            "no run of branch `main` in the 7days before 2026-11-30T00:00:00Z"
        );
    }

    #[test]
    fn a_results_file_is_a_window_of_one_run() {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("baseline.json"))
                .expect("shipped baseline");
        let baseline = Baseline::parse(&text, Path::new("baseline.json")).expect("valid");
        assert_eq!(baseline.runs, 1);
        assert_eq!(baseline.overall().passed, baseline.scenarios.len());
    }
}
