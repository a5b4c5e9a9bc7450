//! The optional description judge of `toolgate lint` (`--judge-model`): an LLM scores each
//! tool's description on the six components of [`descriptions`](super::descriptions) (arXiv
//! 2602.14878), 1 (bad) to 5 (good). A score below [`PASSING_SCORE`] becomes a warning of its
//! own check id (`judge_unclear_purpose`, ...), tagged [`FindingSource::Judge`], at
//! `/description`, with the judge's reason in the fix hint.
//!
//! It adds findings and never removes one: a judge that is down or answers nonsense leaves a
//! warning in [`LintReport::judge_warnings`](super::LintReport) and the deterministic findings
//! as they were. Answers are cached by provider, model and a hash of the tool's name,
//! description and input schema. The provider and HTTP code is the scoring judge's
//! ([`crate::judge`]).

use super::checks::CheckId;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Finding, FindingSource, Severity, ToolRef};
use crate::judge::provider::ChatClient;
use crate::judge::{JudgeConfig, cache};

/// Scores below this (on 1..=5) are findings.
pub const PASSING_SCORE: u8 = 3;

/// The six components, in report order: the key the judge answers with, the finding's check
/// id, and what the judge is asked about it.
pub const COMPONENTS: [(&str, CheckId, &str); 6] = [
    (
        "purpose",
        CheckId::JudgeUnclearPurpose,
        "Does it state clearly what the tool does?",
    ),
    (
        "usage_guidance",
        CheckId::JudgeMissingUsageGuidance,
        "Does it say when to use the tool (and when to use another one instead)?",
    ),
    (
        "limitations",
        CheckId::JudgeUnstatedLimitations,
        "Does it state limits, preconditions, side effects or errors?",
    ),
    (
        "parameters",
        CheckId::JudgeOpaqueParameters,
        "Do the description and the parameter descriptions say what each parameter means and which values it takes?",
    ),
    (
        "completeness",
        CheckId::JudgeUnderspecified,
        "Is it complete: what the tool returns, units, formats?",
    ),
    (
        "examples",
        CheckId::JudgeExemplarIssues,
        "Where an example would help, is there one, and does it agree with the schema?",
    ),
];

const SYSTEM: &str = "You review the description of one tool that an AI agent calls. Score each \
component from 1 (bad) to 5 (good). Reply with one JSON object and nothing else: {\"scores\": \
{\"<component>\": {\"score\": 1-5, \"reason\": \"one sentence\"}, ...}} with every component \
listed.";

/// One component's score and the judge's reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComponentScore {
    /// 1..=5, higher is better.
    pub score: u8,
    /// The judge's one-sentence reason.
    pub reason: String,
}

/// What the judge found: findings (tool order, then component order) and warnings for the
/// tools it could not score.
#[derive(Debug, Default)]
pub struct DescriptionVerdicts {
    /// One warning per component scored below [`PASSING_SCORE`].
    pub findings: Vec<Finding>,
    /// `the description judge could not score `tool`: reason`, one per tool.
    pub warnings: Vec<String>,
}

/// Scores every tool's description; tools that are not objects are skipped.
///
/// Errors only when the client cannot be built (a base URL that is not http(s)); a failing
/// request is a warning in the result.
pub async fn judge_descriptions(
    tools: &[ToolRef<'_>],
    config: &JudgeConfig,
) -> anyhow::Result<DescriptionVerdicts> {
    let client = ChatClient::new(
        &config.endpoint,
        &config.model,
        config.request_timeout,
        config.max_attempts,
    )?;
    let mut verdicts = DescriptionVerdicts::default();
    for tool in tools.iter().filter(|tool| tool.definition.is_object()) {
        match scores(&client, config, tool).await {
            Ok(scores) => verdicts.findings.extend(findings(tool, &scores)),
            Err(reason) => verdicts.warnings.push(format!(
                "the description judge could not score `{}`: {reason}",
                tool.name
            )),
        }
    }
    Ok(verdicts)
}

/// What the judge is shown of one tool; also the cache material.
fn shown(tool: &ToolRef<'_>) -> Value {
    json!({
        "name": tool.name,
        "description": tool.definition.get("description").cloned().unwrap_or(Value::Null),
        "inputSchema": tool.definition.get("inputSchema").cloned().unwrap_or(Value::Null),
    })
}

async fn scores(
    client: &ChatClient,
    config: &JudgeConfig,
    tool: &ToolRef<'_>,
) -> Result<BTreeMap<String, ComponentScore>, String> {
    let material = json!({"lint_description": shown(tool)});
    let key = cache::key(config.endpoint.api, &config.model, &material);
    if let Some(dir) = &config.cache_dir
        && let Some(scores) = cache::load::<BTreeMap<String, ComponentScore>>(dir, &key)
    {
        return Ok(scores);
    }
    let questions: Vec<String> = COMPONENTS
        .iter()
        .map(|(component, _, question)| format!("- {component}: {question}"))
        .collect();
    let user = format!(
        "Components:\n{}\n\nTool (JSON):\n{}",
        questions.join("\n"),
        serde_json::to_string_pretty(&shown(tool)).expect("plain JSON")
    );
    let messages = [
        json!({"role": "system", "content": SYSTEM}),
        json!({"role": "user", "content": user}),
    ];
    let text = client.complete(&client.body(&messages)).await?;
    let scores = parse_scores(&text)?;
    if let Some(dir) = &config.cache_dir {
        cache::store(dir, &key, &scores);
    }
    Ok(scores)
}

/// Reads `{"scores": {component: {"score": 1-5, "reason": "..."}}}` from the judge's text (the
/// first JSON object in it). Every component must be there with an integer score in 1..=5.
pub fn parse_scores(text: &str) -> Result<BTreeMap<String, ComponentScore>, String> {
    let snippet: String = text.chars().take(200).collect();
    let start = text
        .find('{')
        .ok_or_else(|| format!("the judge did not answer with JSON: {snippet}"))?;
    let value: Value = serde_json::Deserializer::from_str(&text[start..])
        .into_iter::<Value>()
        .next()
        .and_then(Result::ok)
        .ok_or_else(|| format!("the judge's JSON does not parse: {snippet}"))?;
    let mut scores = BTreeMap::new();
    for (component, _, _) in COMPONENTS {
        let entry = &value["scores"][component];
        let score = entry["score"]
            .as_u64()
            .and_then(|score| u8::try_from(score).ok())
            .filter(|score| (1..=5).contains(score))
            .ok_or_else(|| format!("the judge gave `{component}` no score in 1..=5: {snippet}"))?;
        let reason = entry["reason"].as_str().unwrap_or_default().to_string();
        scores.insert(component.to_string(), ComponentScore { score, reason });
    }
    Ok(scores)
}

/// The findings for one tool's scores, in component order.
pub fn findings(tool: &ToolRef<'_>, scores: &BTreeMap<String, ComponentScore>) -> Vec<Finding> {
    COMPONENTS
        .iter()
        .filter_map(|(component, check, _)| {
            let scored = scores.get(*component)?;
            (scored.score < PASSING_SCORE).then(|| {
                let mut finding = Finding::tool(
                    *check,
                    Severity::Warning,
                    tool,
                    "/description",
                    format!(
                        "the description judge scored `{component}` {} of 5",
                        scored.score
                    ),
                    format!("the judge says: {}", scored.reason),
                );
                finding.source = FindingSource::Judge;
                finding
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    //! The description judge: its answer needs all six components scored in 1..=5, else refused.

    use super::*;

    #[test]
    fn scores_need_every_component_in_range() {
        let all = |purpose: u64| {
            let mut scores = serde_json::Map::new();
            for (component, _, _) in COMPONENTS {
                scores.insert(component.into(), json!({"score": 4, "reason": "fine"}));
            }
            scores.insert(
                "purpose".into(),
                json!({"score": purpose, "reason": "vague"}),
            );
            format!("```json\n{}\n```", json!({"scores": scores}))
        };
        let parsed = parse_scores(&all(2)).expect("valid");
        assert_eq!(
            parsed["purpose"],
            ComponentScore {
                score: 2,
                reason: "vague".into()
            }
        );
        assert_eq!(parsed.len(), 6);
        let error = parse_scores(&all(6)).expect_err("out of range");
        assert!(
            error.starts_with("the judge gave `purpose` no score in 1..=5: "),
            "{error}"
        );
        assert_eq!(
            parse_scores("no"),
            Err("the judge did not answer with JSON: no".to_string())
        );
    }
}
