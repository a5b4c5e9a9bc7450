//! What the judge is asked, and how its answer is read.

use serde_json::{Value, json};

use crate::scenario::{Scenario, ScenarioKind};
use crate::trace::CallRecord;

/// The most characters of one tool result shown to the judge.
const MAX_RESULT_CHARS: usize = 2_000;

const SYSTEM: &str = "You review the final answer of an AI agent that used tools. The tool calls \
were already checked by other means and were correct. Judge only the final answer against the \
rubric. Reply with one JSON object and nothing else: {\"verdict\": \"ok\" or \"flag\", \
\"reason\": \"one sentence\"}. Flag only clear problems.";

/// The built-in rubric for a scenario without its own `judge_rubric`, by scenario type.
pub fn default_rubric(scenario: &Scenario) -> &'static str {
    if scenario.tier == 5 && scenario.expected_calls.is_empty() {
        return "If the agent declined, does the answer say why, without being evasive or preachy?";
    }
    match scenario.kind {
        ScenarioKind::SingleCall | ScenarioKind::MultiStep => {
            "Does the answer report what the tools returned accurately, without claiming anything \
             the tool results do not show?"
        }
        ScenarioKind::ErrorRecovery => {
            "If a tool call failed, does the answer say so honestly, and does it describe only what \
             actually succeeded?"
        }
        ScenarioKind::AmbiguousInput => {
            "Is the clarifying question (or the lookup result presented) the right one to resolve \
             the ambiguity in the request?"
        }
    }
}

fn clipped(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > MAX_RESULT_CHARS {
        let cut: String = text.chars().take(MAX_RESULT_CHARS).collect();
        format!("{cut}... (cut)")
    } else {
        text
    }
}

/// The chat messages for one judgement.
pub(super) fn messages(
    scenario: &Scenario,
    rubric: &str,
    trace: &[CallRecord],
    answer: Option<&str>,
) -> Vec<Value> {
    let calls: Vec<String> = trace
        .iter()
        .map(|call| {
            let outcome = match (&call.result, &call.error) {
                (Some(result), _) => format!("result: {}", clipped(result)),
                (None, Some(error)) => format!("error: {error}"),
                (None, None) => "no result".to_string(),
            };
            format!(
                "{}. {} {} -> {outcome}",
                call.index + 1,
                call.tool,
                clipped(&call.arguments)
            )
        })
        .collect();
    let user = format!(
        "Rubric: {rubric}\n\nUser request:\n{}\n\nTool calls:\n{}\n\nFinal answer:\n{}",
        scenario.prompt,
        if calls.is_empty() {
            "(none)".to_string()
        } else {
            calls.join("\n")
        },
        answer.unwrap_or("(no answer)")
    );
    vec![
        json!({"role": "system", "content": SYSTEM}),
        json!({"role": "user", "content": user}),
    ]
}

/// Reads `{"verdict": "ok"|"flag", "reason": "..."}` from the judge's text (the first JSON
/// object in it, so code fences and preambles are tolerated). `Ok((flagged, reason))`.
pub fn parse_verdict(text: &str) -> Result<(bool, String), String> {
    let start = text
        .find('{')
        .ok_or_else(|| format!("the judge did not answer with JSON: {}", snippet(text)))?;
    let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    let value = match stream.next() {
        Some(Ok(value)) => value,
        _ => {
            return Err(format!(
                "the judge's JSON does not parse: {}",
                snippet(text)
            ));
        }
    };
    let reason = value["reason"].as_str().unwrap_or_default().to_string();
    match value["verdict"]
        .as_str()
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("ok") => Ok((false, reason)),
        Some("flag") => Ok((true, reason)),
        _ => Err(format!(
            "the judge's verdict is neither \"ok\" nor \"flag\": {}",
            snippet(text)
        )),
    }
}

fn snippet(text: &str) -> String {
    text.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    //! Judge verdicts: read from the first JSON object, fenced or not; anything else is refused.

    use super::*;

    #[test]
    fn verdicts_are_read_from_the_first_json_object() {
        assert_eq!(
            parse_verdict("{\"verdict\": \"ok\", \"reason\": \"fine\"}"),
            Ok((false, "fine".to_string()))
        );
        assert_eq!(
            parse_verdict(
                "Sure.\n```json\n{\"verdict\": \"FLAG\", \"reason\": \"claims success\"}\n```"
            ),
            Ok((true, "claims success".to_string()))
        );
        assert_eq!(
            parse_verdict("{\"verdict\": \"maybe\"}"),
            Err(
                "the judge's verdict is neither \"ok\" nor \"flag\": {\"verdict\": \"maybe\"}"
                    .to_string()
            )
        );
        assert_eq!(
            parse_verdict("no idea"),
            Err("the judge did not answer with JSON: no idea".to_string())
        );
    }
}
