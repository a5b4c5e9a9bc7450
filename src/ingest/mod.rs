//! Importers: production traces read into trajectories, one at a time, for the checks that
//! need no scenario.
//!
//! A trace file is read as a stream of lines ([`Trajectories`]); memory holds one line and the
//! trajectories being assembled, never the whole file. Each format has its own file:
//!
//! - `toolgate`: toolgate's own `trace.jsonl` ([`crate::trace::TraceLine`]); the lines of one
//!   run (`run_id`, `scenario`, `repeat`) make one trajectory, wherever they stand in the file
//!   (at most 256 runs open at once); lines without a run id group consecutively.
//! - `openai`: JSON Lines of chat conversations (`{"id"?, "messages": [...]}` or a bare array of
//!   messages): assistant `tool_calls` paired with `tool` messages by `tool_call_id`.
//! - `otel`: OTLP JSON, one `ExportTraceServiceRequest` per line (what the OpenTelemetry file
//!   exporters write): `execute_tool` spans (`gen_ai.tool.name`) and MCP client spans
//!   (`mcp.method.name` = `tools/call`), grouped by trace id within the line.
//! - `langfuse`: a Langfuse observations export, one observation per line: `TOOL`
//!   observations, consecutive observations of one `traceId` making one trajectory.
//!
//! A malformed line is an error naming the file and the 1-based line; nothing is skipped
//! silently.

mod langfuse;
mod openai;
mod otel;
mod toolgate;

pub use toolgate::lines as toolgate_lines;

use std::collections::VecDeque;
use std::io::BufRead;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::trace::{CallOutcome, CallRecord};

/// The longest line a trace file may have, in bytes (an OTLP export request of a large
/// batch fits; a file that is one unbroken line does not load whole).
pub const MAX_LINE_BYTES: u64 = crate::defaults::MAX_DATA_FILE_BYTES;

/// A trace file's format, as `--format` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// toolgate's own `trace.jsonl`.
    Toolgate,
    /// JSON Lines of OpenAI-style chat conversations.
    Openai,
    /// OTLP JSON, one export request per line.
    Otel,
    /// A Langfuse observations export, one observation per line.
    Langfuse,
}

/// One imported trajectory: the tool calls of one trace, in order, and what the trace says
/// around them.
#[derive(Debug, Clone, PartialEq)]
pub struct Trajectory {
    /// The trace's id in its source (an OTLP trace id, a conversation id, a toolgate run), or
    /// `line N` when the source has none.
    pub trace_id: String,
    /// The user's prompt text, when the trace has it.
    pub prompt: Option<String>,
    /// The tool calls, in order; `index` is the position here.
    pub calls: Vec<CallRecord>,
    /// The agent's final answer, when the trace has it.
    pub final_answer: Option<String>,
    /// What the trace carries, so that a check lacking its data reports `inconclusive`.
    pub has: Present,
}

impl Trajectory {
    /// An empty trajectory of `trace_id` whose source carries `has`.
    fn empty(trace_id: String, has: Present) -> Trajectory {
        Trajectory {
            trace_id,
            prompt: None,
            calls: Vec::new(),
            final_answer: None,
            has,
        }
    }
}

/// Which data a trajectory's source carries; a check that needs a missing one is
/// inconclusive, never passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Present {
    /// Every call has its result or error.
    pub results: bool,
    /// Outcomes say whether a call failed (OpenAI tool messages do not).
    pub outcomes: bool,
    /// Calls carry their duration.
    pub durations: bool,
}

impl Present {
    /// Every kind of data present.
    const ALL: Present = Present {
        results: true,
        outcomes: true,
        durations: true,
    };
}

/// The trajectories of a trace file, read line by line.
pub struct Trajectories<R> {
    reader: R,
    source: String,
    format: Format,
    line: usize,
    buffer: String,
    ready: VecDeque<Trajectory>,
    open: toolgate::OpenRuns,
    pending_trace: Option<Trajectory>,
    done: bool,
    /// The longest line read, in bytes ([`MAX_LINE_BYTES`] unless changed).
    max_line: u64,
}

impl<R: BufRead> Trajectories<R> {
    /// Reads `reader` as `format`; `source` names the file in errors.
    pub fn new(reader: R, source: &str, format: Format) -> Self {
        Trajectories {
            reader,
            source: source.to_string(),
            format,
            line: 0,
            buffer: String::new(),
            ready: VecDeque::new(),
            open: toolgate::OpenRuns::default(),
            pending_trace: None,
            done: false,
            max_line: MAX_LINE_BYTES,
        }
    }

    /// Refuses lines longer than `bytes` instead of [`MAX_LINE_BYTES`].
    pub fn with_max_line(mut self, bytes: u64) -> Self {
        self.max_line = bytes;
        self
    }

    /// Reads the next line, at most `max_line` bytes of it: a longer line is an error, so
    /// a file without line breaks never loads whole.
    fn read_line(&mut self) -> Result<bool> {
        self.buffer.clear();
        let read = std::io::Read::take(&mut self.reader, self.max_line + 1)
            .read_line(&mut self.buffer)
            .with_context(|| format!("failed to read `{}`", self.source))?;
        self.line += 1;
        if self.buffer.len() as u64 > self.max_line {
            bail!(
                "`{}` line {} is longer than {} bytes; one line holds one trace record",
                self.source,
                self.line,
                self.max_line
            );
        }
        Ok(read > 0)
    }

    fn parse_line(&mut self) -> Result<()> {
        let text = self.buffer.trim();
        if text.is_empty() {
            return Ok(());
        }
        let where_ = || format!("`{}` line {}", self.source, self.line);
        let value: Value = serde_json::from_str(text)
            .with_context(|| format!("failed to parse {} as JSON", where_()))?;
        match self.format {
            Format::Openai => {
                let trajectory = openai::conversation(&value, self.line)
                    .with_context(|| format!("failed to import {}", where_()))?;
                self.ready.push_back(trajectory);
            }
            Format::Otel => {
                let trajectories = otel::export_request(&value)
                    .with_context(|| format!("failed to import {}", where_()))?;
                self.ready.extend(trajectories);
            }
            Format::Langfuse => {
                let finished = langfuse::push(&mut self.pending_trace, &value)
                    .with_context(|| format!("failed to import {}", where_()))?;
                self.ready.extend(finished);
            }
            Format::Toolgate => {
                let line = toolgate::parse(value)
                    .with_context(|| format!("failed to import {}", where_()))?;
                self.open.push(line, &mut self.ready);
            }
        }
        Ok(())
    }
}

impl<R: BufRead> Iterator for Trajectories<R> {
    type Item = Result<Trajectory>;

    fn next(&mut self) -> Option<Result<Trajectory>> {
        loop {
            if let Some(trajectory) = self.ready.pop_front() {
                return Some(Ok(trajectory));
            }
            if self.done {
                return None;
            }
            match self.read_line() {
                Ok(true) => {
                    if let Err(error) = self.parse_line() {
                        self.done = true;
                        return Some(Err(error));
                    }
                }
                Ok(false) => {
                    self.done = true;
                    self.open.finish_all(&mut self.ready);
                    self.ready.extend(self.pending_trace.take());
                }
                Err(error) => {
                    self.done = true;
                    return Some(Err(error));
                }
            }
        }
    }
}

/// A call record with the fields an importer knows; the rest empty.
fn call(
    index: usize,
    tool: &str,
    arguments: Value,
    outcome: CallOutcome,
    result: Option<Value>,
    error: Option<String>,
) -> CallRecord {
    CallRecord {
        outcome,
        result,
        error,
        ..CallRecord::recorded(index, tool, arguments)
    }
}

/// Arguments as a trace carries them: a JSON object, or JSON text of one. Text that does not
/// parse to an object is kept raw and marks the call invalid.
fn arguments(raw: Option<&Value>) -> (Value, Option<crate::trace::InvalidCallKind>) {
    use crate::trace::InvalidCallKind;
    match raw {
        None | Some(Value::Null) => (Value::Object(Default::default()), None),
        Some(Value::String(text)) if text.trim().is_empty() => {
            (Value::Object(Default::default()), None)
        }
        Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
            Ok(object @ Value::Object(_)) => (object, None),
            Ok(_) => (
                Value::String(text.clone()),
                Some(InvalidCallKind::ArgumentsNotObject),
            ),
            Err(_) => (
                Value::String(text.clone()),
                Some(InvalidCallKind::UnparseableArguments),
            ),
        },
        Some(object @ Value::Object(_)) => (object.clone(), None),
        Some(other) => (other.clone(), Some(InvalidCallKind::ArgumentsNotObject)),
    }
}

/// A tool result as text or JSON: JSON text is decoded, anything else kept as a string.
fn result_value(raw: &str) -> Value {
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

fn string_field<'a>(value: &'a Value, field: &str) -> Result<Option<&'a str>> {
    match value.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => bail!("`{field}` is not a string"),
    }
}

#[cfg(test)]
mod tests;
