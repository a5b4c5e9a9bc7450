//! The replay agent: plays recorded trajectories (JSON Lines) through the harness without any
//! model, for hermetic CI runs and for scoring production samples.
//!
//! Each line is one JSON object about one run of one scenario:
//! - a tool call: `{"scenario": ID, "tool": NAME, "arguments": {...}}`;
//! - a final answer: `{"scenario": ID, "final_answer": TEXT}`;
//! - in a conversation, a later user message: `{"scenario": ID, "reply": TEXT, "user": TEXT}`
//!   (the agent's reply before the message, absent when it said nothing), between the calls
//!   before and after it. On replay the scenario's scripted (or simulated) user answers each
//!   recorded reply; where it ends the conversation, the replay stops, that reply the final
//!   answer.
//!
//! Both may carry `"repeat": N` (0-based; default 0) to tell repetitions apart. A call may
//! carry `"turn": N` (1-based), the model turn that emitted it: calls of one turn were emitted
//! together (in parallel); a call without one is its own turn. A call whose
//! `arguments` is not an object, or that carries `"invalid": KIND`, is replayed as the same
//! invalid call. Other fields are ignored, so the `trace.jsonl` that `toolgate gate` writes
//! replays as it is.
//!
//! Calls are executed again, in file order, against the scenario's freshly seeded world with
//! its fault injection, so final-state assertions see their effects; recorded results are not
//! used. toolgate's own traces therefore replay to the same results.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use serde_json::Value;

use crate::agent::{AgentError, AgentOutcome, InvalidCallKind, ToolExecutor};
use crate::trace::{TRACE_SCHEMA_VERSION, TraceLine};

/// Recorded trajectories by scenario id and repetition.
#[derive(Debug, Clone)]
pub struct Recordings {
    source: PathBuf,
    runs: HashMap<(String, u32), Recorded>,
}

/// One recorded run: its calls in order and the final answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Recorded {
    /// The tool calls, in file order.
    pub calls: Vec<RecordedCall>,
    /// The last final answer given for the run, if any.
    pub final_answer: Option<String>,
    /// In a conversation, the replies a user message followed: how many calls came before
    /// each, and its text.
    pub replies: Vec<(usize, Option<String>)>,
}

/// One recorded tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedCall {
    /// The tool name.
    pub tool: String,
    /// The arguments as recorded (an object for a usable call).
    pub arguments: Value,
    /// Why the call was unusable when it was recorded, if it was.
    pub invalid: Option<InvalidCallKind>,
    /// The model turn that emitted it, 1-based; `None`: its own turn.
    pub turn: Option<u32>,
    /// The parser notes recorded with it, replayed into the new trace.
    pub notes: Vec<crate::trace::CallNote>,
}

impl Recordings {
    /// Reads a JSON Lines file; blank lines are skipped.
    ///
    /// Errors name the file and line: unreadable file, a line that is not a JSON object with
    /// a string `scenario`, or a line with neither `tool`, `final_answer` nor `user`.
    pub fn load(path: &Path) -> Result<Recordings> {
        let text = crate::fs::read_text(path, "recordings", crate::defaults::MAX_RUN_FILE_BYTES)?;
        Self::parse(&text, path)
    }

    /// Reads JSON Lines text; `source` names it in errors.
    pub fn parse(text: &str, source: &Path) -> Result<Recordings> {
        let mut runs: HashMap<(String, u32), Recorded> = HashMap::new();
        for (number, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = || format!("`{}` line {}", source.display(), number + 1);
            let line: TraceLine = serde_json::from_str(line).with_context(at)?;
            if line.schema_version > TRACE_SCHEMA_VERSION {
                bail!(
                    "{}: `schema_version` {} is newer than this toolgate reads ({TRACE_SCHEMA_VERSION})",
                    at(),
                    line.schema_version
                );
            }
            let run = runs.entry((line.scenario, line.repeat)).or_default();
            match (line.tool, line.final_answer) {
                (Some(tool), _) => run.calls.push(RecordedCall {
                    tool,
                    arguments: line
                        .arguments
                        .unwrap_or_else(|| Value::Object(Default::default())),
                    invalid: line.invalid,
                    turn: line.turn,
                    notes: line.notes,
                }),
                (None, Some(answer)) => run.final_answer = Some(answer),
                (None, None) if line.user.is_some() => {
                    run.replies.push((run.calls.len(), line.reply));
                }
                (None, None) => bail!("{}: expected `tool`, `final_answer` or `user`", at()),
            }
        }
        Ok(Recordings {
            source: source.to_path_buf(),
            runs,
        })
    }

    /// The recorded run for `scenario_id` and repetition `repeat`, falling back to repetition 0
    /// when that one was not recorded.
    pub fn recorded(&self, scenario_id: &str, repeat: u32) -> Option<&Recorded> {
        self.runs
            .get(&(scenario_id.to_owned(), repeat))
            .or_else(|| self.runs.get(&(scenario_id.to_owned(), 0)))
    }

    /// Replays the recorded run through `tools`.
    ///
    /// Errors (`AgentError::Replay`, the run is `errored`) when nothing was recorded for the
    /// scenario.
    pub async fn run<E: ToolExecutor>(
        &self,
        scenario_id: &str,
        repeat: u32,
        tools: &E,
    ) -> Result<AgentOutcome, AgentError> {
        let Some(recorded) = self.recorded(scenario_id, repeat) else {
            return Err(AgentError::Replay(format!(
                "no recorded trajectory for scenario `{scenario_id}` in `{}`",
                self.source.display()
            )));
        };
        let mut turn = 0;
        let mut replies = recorded.replies.iter().peekable();
        for (index, call) in recorded.calls.iter().enumerate() {
            while let Some((_, reply)) = replies.next_if(|(before, _)| *before == index) {
                if tools.next_user_message(reply.as_deref()).await.is_none() {
                    return Ok(AgentOutcome {
                        final_answer: reply.clone(),
                        turns: 1,
                        ..AgentOutcome::default()
                    });
                }
            }
            turn = call.turn.unwrap_or(turn + 1);
            tools.begin_turn(turn);
            if !call.notes.is_empty() {
                tools.note_next_call(&call.notes);
            }
            match (&call.arguments, call.invalid) {
                (Value::Object(arguments), None) => {
                    tools.call(&call.tool, arguments.clone()).await;
                }
                (arguments, kind) => {
                    let raw = match arguments {
                        Value::String(text) => text.clone(),
                        other => other.to_string(),
                    };
                    tools.record_invalid(
                        &call.tool,
                        &raw,
                        kind.unwrap_or(InvalidCallKind::ArgumentsNotObject),
                    );
                }
            }
        }
        for (_, reply) in replies {
            if tools.next_user_message(reply.as_deref()).await.is_none() {
                return Ok(AgentOutcome {
                    final_answer: reply.clone(),
                    turns: 1,
                    ..AgentOutcome::default()
                });
            }
        }
        Ok(AgentOutcome {
            final_answer: recorded.final_answer.clone(),
            turns: 1,
            ..AgentOutcome::default()
        })
    }
}

#[cfg(test)]
mod tests {
    //! Replay: lines are read per scenario and repeat; newer versions and bad lines are named.

    use serde_json::json;

    use super::*;

    #[test]
    fn reads_trace_lines_and_final_answers_by_scenario_and_repeat() {
        let text = r#"
{"scenario":"T1-001","index":0,"tool":"crm_search_contacts","arguments":{"query":"Acme"},"outcome":"success","result":{"x":1},"duration_us":12}
{"scenario":"T1-001","final_answer":"Two contacts."}
{"scenario":"T1-001","repeat":1,"tool":"crm_get_contact","arguments":"{\"id\":","outcome":"invalid_call","invalid":"truncated"}
"#;
        let recordings = Recordings::parse(text, Path::new("runs.jsonl")).expect("valid");
        assert_eq!(
            recordings.recorded("T1-001", 0),
            Some(&Recorded {
                calls: vec![RecordedCall {
                    tool: "crm_search_contacts".to_owned(),
                    arguments: json!({"query": "Acme"}),
                    invalid: None,
                    turn: None,
                    notes: Vec::new(),
                }],
                final_answer: Some("Two contacts.".to_owned()),
                replies: Vec::new(),
            })
        );
        let second = recordings.recorded("T1-001", 1).expect("repeat 1");
        assert_eq!(second.calls[0].invalid, Some(InvalidCallKind::Truncated));
        // A repetition that was not recorded falls back to the first.
        assert_eq!(
            recordings.recorded("T1-001", 5),
            recordings.recorded("T1-001", 0)
        );
        assert_eq!(recordings.recorded("T9-999", 0), None);
    }

    #[test]
    fn refuses_a_trace_line_from_a_newer_schema_version() {
        let text = r#"{"schema_version":99,"scenario":"T1-001","tool":"x","arguments":{}}"#;
        let error = Recordings::parse(text, Path::new("runs.jsonl")).expect_err("too new");
        assert_eq!(
            error.to_string(),
            "`runs.jsonl` line 1: `schema_version` 99 is newer than this toolgate reads (1)"
        );
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let error = Recordings::parse("\n{\"tool\": \"x\"}\n", Path::new("runs.jsonl"))
            .expect_err("no scenario");
        assert_eq!(
            format!("{error:#}"),
            "`runs.jsonl` line 2: missing field `scenario` at line 1 column 13"
        );
        let error = Recordings::parse("{\"scenario\": \"a\"}", Path::new("runs.jsonl"))
            .expect_err("neither");
        assert_eq!(
            error.to_string(),
            "`runs.jsonl` line 1: expected `tool`, `final_answer` or `user`"
        );
    }
}
