//! Langfuse observations export, one observation per line: `TOOL` observations make the
//! calls; consecutive observations of one `traceId` make one trajectory.
//!
//! Fields read: `traceId`, `type`, `name` (the tool), `input` (the arguments), `output` (the
//! result), `level` (`ERROR` marks the call failed, with `statusMessage`), `startTime` and
//! `endTime` (RFC 3339).

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::{Present, Trajectory, arguments, call, string_field};
use crate::trace::CallOutcome;

/// Adds one observation to the pending trace; returns the previous trace when this one starts
/// another. Observations other than `TOOL` only open or continue their trace.
pub(super) fn push(pending: &mut Option<Trajectory>, value: &Value) -> Result<Option<Trajectory>> {
    let trace_id = string_field(value, "traceId")?.context("the observation has no `traceId`")?;
    let kind = string_field(value, "type")?.context("the observation has no `type`")?;
    let finished = match pending {
        Some(trajectory) if trajectory.trace_id == trace_id => None,
        _ => pending.take(),
    };
    let trajectory =
        pending.get_or_insert_with(|| Trajectory::empty(trace_id.to_string(), Present::ALL));
    if kind != "TOOL" {
        return Ok(finished);
    }
    let tool = string_field(value, "name")?.context("a `TOOL` observation has no `name`")?;
    let (args, invalid) = arguments(value.get("input"));
    let failed = string_field(value, "level")? == Some("ERROR");
    let error = failed.then(|| {
        string_field(value, "statusMessage")
            .ok()
            .flatten()
            .unwrap_or("error")
            .to_string()
    });
    let output = value
        .get("output")
        .filter(|output| !output.is_null())
        .cloned();
    let outcome = match (invalid, failed) {
        (Some(_), _) => CallOutcome::InvalidCall,
        (None, true) => CallOutcome::ToolError,
        (None, false) => CallOutcome::Success,
    };
    trajectory.has.results &= output.is_some() || failed;
    let mut record = call(trajectory.calls.len(), tool, args, outcome, output, error);
    record.invalid = invalid;
    match (time(value, "startTime")?, time(value, "endTime")?) {
        (Some(start), Some(end)) => {
            record.duration_us = end
                .duration_since(start)
                .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
        }
        _ => trajectory.has.durations = false,
    }
    trajectory.calls.push(record);
    Ok(finished)
}

fn time(value: &Value, field: &str) -> Result<Option<std::time::SystemTime>> {
    let Some(text) = string_field(value, field)? else {
        return Ok(None);
    };
    match humantime::parse_rfc3339_weak(text) {
        Ok(time) => Ok(Some(time)),
        Err(error) => bail!("`{field}` `{text}` is not an RFC 3339 time: {error}"),
    }
}
