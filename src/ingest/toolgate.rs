//! toolgate's own `trace.jsonl`: the lines of one run make one trajectory.

use std::collections::{BTreeMap, HashMap, VecDeque};

use anyhow::{Context as _, Result, bail};
use serde_json::Value;

use super::{Present, Trajectory, call};
use crate::trace::{CallOutcome, TRACE_SCHEMA_VERSION, TraceLine};

/// A run's identity in a trace: run id, scenario, repetition.
type Key = (Option<String>, String, u32);

/// How many runs with a run id may be open at once; when one more starts, the run extended
/// least recently is finished. Sessions of one proxy writing to one file interleave their
/// lines; a few hundred live sessions at once is far beyond what one proxy serves.
pub(super) const MAX_OPEN_RUNS: usize = 256;

/// The runs being assembled.
///
/// Lines with a run id join their run wherever they stand in the file (sessions appending to
/// one file interleave), held in a map of at most [`MAX_OPEN_RUNS`] runs: a run's lines that
/// come after it was closed for room start a new trajectory. Lines without a run id
/// (hand-written recordings) group consecutively: a line of another run finishes the open one.
#[derive(Default)]
pub(super) struct OpenRuns {
    runs: HashMap<Key, (u64, Trajectory)>,
    /// The open runs by when they were last extended (a counter of lines), oldest first.
    recency: BTreeMap<u64, Key>,
    lines: u64,
    anonymous: Option<(Key, Trajectory)>,
}

impl OpenRuns {
    /// Adds `line` to its run; runs finished to make room (or by a line without a run id)
    /// go to `finished`.
    pub(super) fn push(&mut self, line: TraceLine, finished: &mut VecDeque<Trajectory>) {
        let key = (line.run_id.clone(), line.scenario.clone(), line.repeat);
        if key.0.is_none() {
            if self
                .anonymous
                .as_ref()
                .is_some_and(|(open, _)| *open != key)
            {
                finished.extend(self.anonymous.take().map(|(_, run)| run));
            }
            let (_, run) = self
                .anonymous
                .get_or_insert_with(|| (key.clone(), started(&key)));
            add(run, line);
            return;
        }
        self.lines += 1;
        if let Some((touched, run)) = self.runs.get_mut(&key) {
            self.recency.remove(touched);
            *touched = self.lines;
            self.recency.insert(self.lines, key);
            add(run, line);
            return;
        }
        if self.runs.len() >= MAX_OPEN_RUNS
            && let Some((_, oldest)) = self.recency.pop_first()
            && let Some((_, run)) = self.runs.remove(&oldest)
        {
            finished.push_back(run);
        }
        let mut run = started(&key);
        add(&mut run, line);
        self.recency.insert(self.lines, key.clone());
        self.runs.insert(key, (self.lines, run));
    }

    /// Finishes every open run, the least recently extended first.
    pub(super) fn finish_all(&mut self, finished: &mut VecDeque<Trajectory>) {
        while let Some((_, key)) = self.recency.pop_first() {
            finished.extend(self.runs.remove(&key).map(|(_, run)| run));
        }
        finished.extend(self.anonymous.take().map(|(_, run)| run));
    }
}

/// An empty trajectory for the run `key`: `RUN_ID/SCENARIO#REPEAT`, or `SCENARIO#REPEAT`.
fn started(key: &Key) -> Trajectory {
    Trajectory::empty(
        match &key.0 {
            Some(run_id) => format!("{run_id}/{}#{}", key.1, key.2),
            None => format!("{}#{}", key.1, key.2),
        },
        Present::ALL,
    )
}

/// Reads toolgate's `trace.jsonl` text as its lines, in file order, blank lines skipped;
/// `source` names the file in errors. Each line is checked as the importer checks it.
///
/// Errors name the file and the 1-based line: a line that is not JSON, not a trace line, of
/// a newer `schema_version`, or with neither `tool`, `final_answer` nor `user`.
pub fn lines(text: &str, source: &std::path::Path) -> Result<Vec<TraceLine>> {
    let mut lines = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = || format!("`{}` line {}", source.display(), number + 1);
        let value: Value = serde_json::from_str(line)
            .with_context(|| format!("failed to parse {} as JSON", at()))?;
        lines.push(parse(value).with_context(|| format!("failed to read {}", at()))?);
    }
    Ok(lines)
}

pub(super) fn parse(value: Value) -> Result<TraceLine> {
    let line: TraceLine = serde_json::from_value(value)?;
    if line.schema_version > TRACE_SCHEMA_VERSION {
        bail!(
            "`schema_version` {} is newer than this toolgate reads ({TRACE_SCHEMA_VERSION})",
            line.schema_version
        );
    }
    if line.tool.is_none() && line.final_answer.is_none() && line.user.is_none() {
        bail!("the line has neither `tool`, `final_answer` nor `user`");
    }
    Ok(line)
}

/// Adds `line`'s call or final answer to `trajectory`.
fn add(trajectory: &mut Trajectory, line: TraceLine) {
    if let Some(answer) = line.final_answer {
        trajectory.final_answer = Some(answer);
    }
    if let Some(tool) = line.tool {
        let index = trajectory.calls.len();
        let mut record = call(
            index,
            &tool,
            line.arguments
                .unwrap_or_else(|| Value::Object(Default::default())),
            line.outcome.unwrap_or(CallOutcome::Success),
            line.result,
            line.error,
        );
        // A hand-written recording has neither outcome nor result nor duration.
        trajectory.has.outcomes &= line.outcome.is_some();
        trajectory.has.results &= line.outcome.is_some();
        trajectory.has.durations &= line.duration_us.is_some();
        record.duration_us = line.duration_us.unwrap_or(0);
        record.turn = line.turn.unwrap_or(record.turn);
        record.invalid = line.invalid;
        record.fault = line.fault;
        record.refused = line.refused;
        record.unknown_tool = line.unknown_tool;
        record.violations = line.violations;
        record.checked = line.checked;
        record.notes = line.notes;
        record.output_violations = line.output_violations;
        record.unmatched = line.unmatched;
        record.not_recorded = line.not_recorded;
        record.elicitation = line.elicitation;
        if record.invalid.is_some() && line.outcome.is_none() {
            record.outcome = CallOutcome::InvalidCall;
        }
        trajectory.calls.push(record);
    }
}
