//! toolgate's own `trace.jsonl`: consecutive lines of one run make one trajectory.

use anyhow::{Result, bail};
use serde_json::Value;

use super::{Present, Trajectory, call};
use crate::trace::{CallOutcome, TRACE_SCHEMA_VERSION, TraceLine};

/// The run being assembled: its key and trajectory so far.
pub(super) struct Run {
    key: (Option<String>, String, u32),
    trajectory: Trajectory,
}

impl Run {
    pub(super) fn finish(self) -> Trajectory {
        self.trajectory
    }
}

pub(super) fn parse(value: Value) -> Result<TraceLine> {
    let line: TraceLine = serde_json::from_value(value)?;
    if line.schema_version > TRACE_SCHEMA_VERSION {
        bail!(
            "`schema_version` {} is newer than this toolgate reads ({TRACE_SCHEMA_VERSION})",
            line.schema_version
        );
    }
    if line.tool.is_none() && line.final_answer.is_none() {
        bail!("the line has neither `tool` nor `final_answer`");
    }
    Ok(line)
}

/// Adds `line` to the pending run; returns the previous run when `line` starts a new one.
pub(super) fn push(pending: &mut Option<Run>, line: TraceLine) -> Option<Trajectory> {
    let key = (line.run_id.clone(), line.scenario.clone(), line.repeat);
    let finished = match pending {
        Some(run) if run.key == key => None,
        _ => pending.take().map(Run::finish),
    };
    let run = pending.get_or_insert_with(|| Run {
        trajectory: Trajectory::empty(
            match &key.0 {
                Some(run_id) => format!("{run_id}/{}#{}", key.1, key.2),
                None => format!("{}#{}", key.1, key.2),
            },
            Present::ALL,
        ),
        key,
    });
    let trajectory = &mut run.trajectory;
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
        if record.invalid.is_some() && line.outcome.is_none() {
            record.outcome = CallOutcome::InvalidCall;
        }
        trajectory.calls.push(record);
    }
    finished
}
