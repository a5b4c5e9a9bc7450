//! The judge on loopback: it may only turn a pass into `degraded`, never add a pass, and a
//! judge outage leaves the verdict as it was.

use std::sync::Arc;
use std::time::Duration;

use toolgate::agent::Agent;
use toolgate::catalog::Catalog;
use toolgate::harness::ToolSet;
use toolgate::judge::{Judge, JudgeConfig};
use toolgate::runner::{RunOptions, ScenarioRun, run_one};
use toolgate::scenario::{Scenario, load_file};
use toolgate::score::Outcome;
use wiremock::ResponseTemplate;

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
        base_url: provider.base_url(),
        api_key: Some("sk-judge-canary".into()),
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
    let tools = Arc::new(ToolSet::new(Catalog::builtin()).expect("catalog"));
    run_one(0, 0, scenario, &Agent::Reference, &tools, &options).await
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
        base_url: "http://127.0.0.1:1/v1".into(),
        api_key: Some("sk-judge-canary".into()),
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
    config.base_url = model.base_url();
    config.api_key = None;
    let agent = Agent::OpenAi(Box::new(
        toolgate::agent::openai::OpenAiAgent::new(config).expect("config"),
    ));
    let judge = Judge::new(JudgeConfig {
        base_url: judge_provider.base_url(),
        api_key: None,
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
    let tools = Arc::new(ToolSet::new(Catalog::builtin()).expect("catalog"));
    let run = run_one(
        0,
        0,
        &scenario("scenarios/tier2/T2-007.json"),
        &agent,
        &tools,
        &options,
    )
    .await;
    assert_eq!(run.outcome, Outcome::Fail);
    assert!(run.judge.is_none());
    assert!(judge_provider.requests().is_empty());
}
