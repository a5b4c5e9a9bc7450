//! The judge on loopback: it may only turn a pass into `degraded`, never add a pass, and a
//! judge outage leaves the verdict as it was.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolgate::agent::Agent;
use toolgate::catalog::Catalog;
use toolgate::harness::{ToolSet, WorldBackends};
use toolgate::judge::{Judge, JudgeConfig};
use toolgate::provider::{Api, Endpoint};
use toolgate::runner::{RunOptions, ScenarioRun, run_one};
use toolgate::scenario::{Scenario, load_file};
use toolgate::score::Outcome;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::{FakeProvider, answer, repo};

fn judge_reply(verdict: &str, reason: &str) -> ResponseTemplate {
    let content = format!("{{\"verdict\": \"{verdict}\", \"reason\": \"{reason}\"}}");
    ResponseTemplate::new(200).set_body_json(answer(&content))
}

fn scenario(path: &str) -> Scenario {
    load_file(&repo().join(path), &repo(), Catalog::builtin()).expect("scenario loads")
}

async fn judged(
    scenario: &Scenario,
    provider: &FakeProvider,
    cache: Option<std::path::PathBuf>,
) -> ScenarioRun {
    let judge = Judge::new(JudgeConfig {
        endpoint: Endpoint::new(Api::Openai, provider.base_url()).with_key("sk-judge-canary"),
        model: "judge-1".into(),
        cache_dir: cache,
        request_timeout: Duration::from_secs(5),
        max_attempts: 1,
    })
    .expect("judge config");
    let options = RunOptions {
        judge: Some(Arc::new(judge)),
        ..RunOptions::default()
    };
    let backends = WorldBackends::new(ToolSet::builtin());
    run_one(0, 0, scenario, &Agent::Reference, &backends, &options).await
}

#[tokio::test]
async fn a_flag_turns_a_pass_into_degraded_with_the_reason() {
    let provider = FakeProvider::start(
        vec![judge_reply("flag", "the answer claims an email was sent")],
        None,
    )
    .await;
    let run = judged(&scenario("scenarios/tier2/T2-007.json"), &provider, None).await;
    assert_eq!(run.outcome, Outcome::Degraded);
    let verdict = run.judge.expect("a verdict");
    assert!(verdict.flagged);
    assert_eq!(verdict.reason, "the answer claims an email was sent");
    assert_eq!(verdict.model, "judge-1");
    let request = &provider.requests()[0];
    assert_eq!(request["model"], "judge-1");
    let user = request["messages"][1]["content"]
        .as_str()
        .expect("user message");
    assert!(
        user.contains("Create a contact for John Smith at Acme"),
        "{user}"
    );
    assert!(user.contains("crm_create_contact"), "{user}");
}

#[tokio::test]
async fn an_ok_keeps_the_pass() {
    let provider = FakeProvider::start(vec![judge_reply("ok", "accurate")], None).await;
    let run = judged(&scenario("scenarios/tier2/T2-007.json"), &provider, None).await;
    assert_eq!(run.outcome, Outcome::Pass);
    assert_eq!(run.judge.map(|v| v.flagged), Some(false));
}

#[tokio::test]
async fn a_judge_outage_leaves_the_pass_and_records_why() {
    let provider = FakeProvider::start(
        vec![],
        Some(ResponseTemplate::new(500).set_body_string("judge down")),
    )
    .await;
    let run = judged(&scenario("scenarios/tier2/T2-007.json"), &provider, None).await;
    assert_eq!(run.outcome, Outcome::Pass);
    assert!(run.judge.is_none());
    assert_eq!(
        run.judge_error.as_deref(),
        Some("provider returned HTTP 500: judge down")
    );
}

#[tokio::test]
async fn verdicts_are_cached_by_what_the_judge_saw() {
    let cache = tempfile::tempdir().expect("temp dir");
    let provider = FakeProvider::start(vec![judge_reply("flag", "vague")], None).await;
    let t2 = scenario("scenarios/tier2/T2-007.json");
    let first = judged(&t2, &provider, Some(cache.path().to_path_buf())).await;
    let second = judged(&t2, &provider, Some(cache.path().to_path_buf())).await;
    assert_eq!(provider.requests().len(), 1);
    assert_eq!(first.judge.as_ref().map(|v| v.cached), Some(false));
    assert_eq!(second.judge.as_ref().map(|v| v.cached), Some(true));
    assert_eq!(second.outcome, Outcome::Degraded);
}

#[test]
fn the_judge_config_never_shows_its_key() {
    let config = JudgeConfig {
        endpoint: Endpoint::new(Api::Openai, "http://127.0.0.1:1/v1").with_key("sk-judge-canary"),
        model: "judge-1".into(),
        cache_dir: None,
        request_timeout: Duration::from_secs(1),
        max_attempts: 1,
    };
    assert!(!format!("{config:?}").contains("sk-judge-canary"));
}

#[tokio::test]
async fn a_failing_run_never_reaches_the_judge() {
    let model = FakeProvider::start(
        vec![],
        Some(ResponseTemplate::new(200).set_body_json(answer("All done!"))),
    )
    .await;
    let judge_provider = FakeProvider::start(vec![], Some(judge_reply("ok", "looks fine"))).await;
    let mut config = toolgate::agent::openai::OpenAiConfig::from_env("fake-model");
    config.endpoint = Endpoint::new(Api::Openai, model.base_url());
    let agent = Agent::OpenAi(Box::new(
        toolgate::agent::openai::OpenAiAgent::new(config).expect("config"),
    ));
    let judge = Judge::new(JudgeConfig {
        endpoint: Endpoint::new(Api::Openai, judge_provider.base_url()),
        model: "judge-1".into(),
        cache_dir: None,
        request_timeout: Duration::from_secs(5),
        max_attempts: 1,
    })
    .expect("judge config");
    let options = RunOptions {
        judge: Some(Arc::new(judge)),
        ..RunOptions::default()
    };
    let backends = WorldBackends::new(ToolSet::builtin());
    let run = run_one(
        0,
        0,
        &scenario("scenarios/tier2/T2-007.json"),
        &agent,
        &backends,
        &options,
    )
    .await;
    assert_eq!(run.outcome, Outcome::Fail);
    assert!(run.judge.is_none());
    assert!(judge_provider.requests().is_empty());
}

/// A fake Anthropic Messages judge on loopback: answers `reply` only to a POST on
/// `/v1/messages` that carries the key as `x-api-key` and an `anthropic-version`; anything
/// else gets wiremock's 404.
async fn fake_anthropic_judge(reply: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "sk-ant-judge-canary"))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(reply)
        .mount(&server)
        .await;
    server
}

fn anthropic_reply(verdict: &str, reason: &str) -> ResponseTemplate {
    let text = format!("{{\"verdict\": \"{verdict}\", \"reason\": \"{reason}\"}}");
    ResponseTemplate::new(200).set_body_json(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-judge",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 5}
    }))
}

fn anthropic_judge(server: &MockServer, cache: Option<std::path::PathBuf>) -> Arc<Judge> {
    Arc::new(
        Judge::new(JudgeConfig {
            endpoint: Endpoint::new(Api::Anthropic, server.uri()).with_key("sk-ant-judge-canary"),
            model: "claude-judge".into(),
            cache_dir: cache,
            request_timeout: Duration::from_secs(5),
            max_attempts: 1,
        })
        .expect("judge config"),
    )
}

async fn judged_by(judge: &Arc<Judge>, scenario: &Scenario) -> ScenarioRun {
    let options = RunOptions {
        judge: Some(judge.clone()),
        ..RunOptions::default()
    };
    let backends = WorldBackends::new(ToolSet::builtin());
    run_one(0, 0, scenario, &Agent::Reference, &backends, &options).await
}

#[tokio::test]
async fn an_anthropic_judge_flag_turns_a_pass_into_degraded() {
    let server = fake_anthropic_judge(anthropic_reply(
        "flag",
        "the answer claims an email was sent",
    ))
    .await;
    let judge = anthropic_judge(&server, None);
    let run = judged_by(&judge, &scenario("scenarios/tier2/T2-007.json")).await;
    assert_eq!(run.judge_error, None);
    assert_eq!(run.outcome, Outcome::Degraded);
    let verdict = run.judge.expect("a verdict");
    assert!(verdict.flagged);
    assert_eq!(verdict.reason, "the answer claims an email was sent");
    assert_eq!(verdict.model, "claude-judge");
    let requests = server.received_requests().await.expect("recorded");
    let body: Value = serde_json::from_slice(&requests[0].body).expect("JSON body");
    assert_eq!(body["model"], "claude-judge");
    assert_eq!(body["max_tokens"], 1024);
    assert!(
        body["system"]
            .as_str()
            .is_some_and(|system| system.starts_with("You review the final answer")),
        "{body}"
    );
    let messages = body["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 1, "the system prompt is not a message");
    assert_eq!(messages[0]["role"], "user");
    assert!(
        messages[0]["content"]
            .as_str()
            .is_some_and(|user| user.contains("crm_create_contact")),
        "{body}"
    );
    let audit = serde_json::to_string(&judge.audit_log()).expect("audit");
    assert!(audit.contains("\"provider\":\"anthropic\""), "{audit}");
    assert!(!audit.contains("sk-ant-judge-canary"), "{audit}");
}

#[tokio::test]
async fn an_anthropic_judge_ok_keeps_the_pass() {
    let server = fake_anthropic_judge(anthropic_reply("ok", "accurate")).await;
    let run = judged_by(
        &anthropic_judge(&server, None),
        &scenario("scenarios/tier2/T2-007.json"),
    )
    .await;
    assert_eq!(run.outcome, Outcome::Pass);
    assert_eq!(
        run.judge.map(|v| (v.flagged, v.reason)),
        Some((false, "accurate".to_string()))
    );
}

#[tokio::test]
async fn an_anthropic_judge_outage_leaves_the_pass_and_records_why() {
    let server = fake_anthropic_judge(
        ResponseTemplate::new(529).set_body_string("overloaded sk-ant-judge-canary"),
    )
    .await;
    let run = judged_by(
        &anthropic_judge(&server, None),
        &scenario("scenarios/tier2/T2-007.json"),
    )
    .await;
    assert_eq!(run.outcome, Outcome::Pass);
    assert!(run.judge.is_none());
    assert_eq!(
        run.judge_error.as_deref(),
        Some("provider returned HTTP 529: overloaded [redacted]")
    );
}

#[tokio::test]
async fn judge_verdicts_are_cached_apart_per_provider() {
    // The same model name and the same run judged through two providers are two judgements.
    let cache = tempfile::tempdir().expect("temp dir");
    let t2 = scenario("scenarios/tier2/T2-007.json");
    let server = fake_anthropic_judge(anthropic_reply("flag", "vague")).await;
    let openai = FakeProvider::start(vec![judge_reply("ok", "fine")], None).await;
    let anthropic = anthropic_judge(&server, Some(cache.path().to_path_buf()));
    let first = judged_by(&anthropic, &t2).await;
    let again = judged_by(&anthropic, &t2).await;
    let openai_judge = Arc::new(
        Judge::new(JudgeConfig {
            endpoint: Endpoint::new(Api::Openai, openai.base_url()),
            model: "claude-judge".into(),
            cache_dir: Some(cache.path().to_path_buf()),
            request_timeout: Duration::from_secs(5),
            max_attempts: 1,
        })
        .expect("judge config"),
    );
    let other = judged_by(&openai_judge, &t2).await;
    assert_eq!(server.received_requests().await.map(|r| r.len()), Some(1));
    assert_eq!(openai.requests().len(), 1);
    assert_eq!(
        first.judge.map(|v| (v.flagged, v.cached)),
        Some((true, false))
    );
    assert_eq!(
        again.judge.map(|v| (v.flagged, v.cached)),
        Some((true, true))
    );
    assert_eq!(
        other.judge.map(|v| (v.flagged, v.cached)),
        Some((false, false))
    );
}
