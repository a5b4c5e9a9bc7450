//! The run history: one JSON object per line, appended by nightly runs, each line carrying its
//! own `schema_version` so that old lines stay readable after the format grows.

use std::io::Write as _;
use std::path::Path;
use std::time::SystemTime;

use anyhow::{Context as _, Result, bail};
use serde::{Deserialize, Serialize};

use super::metrics::Metrics;
use crate::results::ScenarioKind;
use crate::results::pins::Pins;
use crate::results::{RunReport, Tally};
use crate::score::Outcome;

/// The history line format version this build writes and reads.
pub const HISTORY_SCHEMA_VERSION: u32 = 1;

/// One recorded run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryEntry {
    /// Always [`HISTORY_SCHEMA_VERSION`] when written by this build.
    pub schema_version: u32,
    /// When the run was recorded, RFC 3339 UTC (`2026-11-30T02:00:00Z`).
    pub recorded_at: String,
    /// The branch the run measured (e.g. `main`).
    pub branch: String,
    /// The commit, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The run's pinned metadata, when it had any.
    pub pins: Option<Pins>,
    /// Over every scenario.
    pub overall: Tally,
    /// Tool selection, arguments, efficiency, degraded.
    pub metrics: Metrics,
    /// Every scenario's outcome, in suite order.
    pub scenarios: Vec<HistoryOutcome>,
}

/// One scenario's outcome in a recorded run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryOutcome {
    /// Scenario id.
    pub id: String,
    /// 1..=5.
    pub tier: u8,
    /// Scenario type.
    #[serde(rename = "type")]
    pub kind: ScenarioKind,
    /// Pass, fail or errored.
    pub outcome: Outcome,
}

impl HistoryEntry {
    /// The history line for `report`, recorded at `at` on `branch`.
    pub fn new(
        report: &RunReport,
        at: SystemTime,
        branch: &str,
        commit: Option<String>,
    ) -> HistoryEntry {
        HistoryEntry {
            schema_version: HISTORY_SCHEMA_VERSION,
            recorded_at: humantime::format_rfc3339_seconds(at).to_string(),
            branch: branch.to_string(),
            commit,
            pins: report.pins.clone(),
            overall: report.summary.overall,
            metrics: Metrics::of(report),
            scenarios: report
                .scenarios
                .iter()
                .map(|r| HistoryOutcome {
                    id: r.id.clone(),
                    tier: r.tier,
                    kind: r.kind,
                    outcome: r.outcome,
                })
                .collect(),
        }
    }

    /// When it was recorded.
    pub fn time(&self) -> Result<SystemTime> {
        humantime::parse_rfc3339_weak(&self.recorded_at).with_context(|| {
            format!(
                "recorded_at: `{}` is not an RFC 3339 time",
                self.recorded_at
            )
        })
    }
}

/// Reads every line of the history at `path`, oldest first as written. Blank lines are
/// skipped.
///
/// Errors: an unreadable file, or a line that is not a history entry of a supported
/// `schema_version` (named by its line number).
pub fn load(path: &Path) -> Result<Vec<HistoryEntry>> {
    let text = crate::fs::read_text(path, "history", crate::defaults::MAX_RUN_FILE_BYTES)?;
    parse(&text).with_context(|| format!("invalid history `{}`", path.display()))
}

/// Parses history text (JSON Lines).
pub fn parse(text: &str) -> Result<Vec<HistoryEntry>> {
    let mut entries = Vec::new();
    for (number, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        if line.trim().is_empty() {
            continue;
        }
        let version = serde_json::from_str::<serde_json::Value>(line)
            .ok()
            .and_then(|value| value.get("schema_version")?.as_u64());
        if let Some(version) = version
            && version != u64::from(HISTORY_SCHEMA_VERSION)
        {
            bail!(
                "line {number}: schema_version: {version} is not supported (this toolgate reads {HISTORY_SCHEMA_VERSION})"
            );
        }
        let mut deserializer = serde_json::Deserializer::from_str(line);
        let entry: HistoryEntry =
            serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
                let field = error.path().to_string();
                anyhow::anyhow!("line {number}: {field}: {}", error.into_inner())
            })?;
        entry.time().with_context(|| format!("line {number}"))?;
        entries.push(entry);
    }
    Ok(entries)
}

/// Appends `entry` as one line to the history at `path` (created when missing).
pub fn append(path: &Path, entry: &HistoryEntry) -> Result<()> {
    let mut line = serde_json::to_string(entry).expect("history entries serialize: plain data");
    line.push('\n');
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("failed to create `{}`", dir.display()))?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("failed to open history `{}`", path.display()))?;
    file.write_all(line.as_bytes())
        .with_context(|| format!("failed to append to history `{}`", path.display()))
}
