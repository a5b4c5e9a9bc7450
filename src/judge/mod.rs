//! The optional LLM judge. It reads a run that passed every deterministic check and may only
//! downgrade it to `degraded` (right actions, faulty narration); it can never add a pass, and
//! a judge that fails leaves the verdict as it was.
//!
//! The judge is a pinned model behind an OpenAI-compatible chat-completions endpoint or the
//! Anthropic Messages API ([`Api`](crate::provider::Api)). Each verdict is cached on disk by the hash of
//! everything it saw (provider, model, rubric, prompt, calls, answer), and every exchange is
//! kept for audit.

pub(crate) mod cache;
mod prompt;
pub(crate) mod provider;

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::provider::Endpoint;
use crate::scenario::Scenario;
use crate::trace::CallRecord;
use provider::ChatClient;

pub use prompt::{default_rubric, parse_verdict};

/// Where and how to reach the judge model.
#[derive(Clone)]
pub struct JudgeConfig {
    /// Where the judge model is reached: the API it speaks, base URL (`/chat/completions`
    /// or `/v1/messages` is appended), key (never logged), and for OpenAI-compatible
    /// endpoints the key header and `api-version` ([`Endpoint`]).
    pub endpoint: Endpoint,
    /// The pinned judge model, recorded with every verdict.
    pub model: String,
    /// Where verdicts are cached; `None` disables the cache.
    pub cache_dir: Option<PathBuf>,
    /// Per-request timeout.
    pub request_timeout: Duration,
    /// Attempts per request (429, 5xx and timeouts are retried).
    pub max_attempts: u32,
}

impl std::fmt::Debug for JudgeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JudgeConfig")
            .field("endpoint", &self.endpoint)
            .field("model", &self.model)
            .finish()
    }
}

/// The judge's word on one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JudgeVerdict {
    /// True when the judge flagged the narration: the run becomes `degraded`.
    pub flagged: bool,
    /// The judge's one-line reason.
    pub reason: String,
    /// The judge model.
    pub model: String,
    /// Lowercase hex SHA-256 of the rubric text.
    pub rubric_sha256: String,
    /// Whether the verdict came from the cache.
    #[serde(default)]
    pub cached: bool,
}

/// A configured judge; shared by all runs of a suite.
#[derive(Debug)]
pub struct Judge {
    config: JudgeConfig,
    client: ChatClient,
    audit: Mutex<Vec<Value>>,
}

impl Judge {
    /// Builds the judge. Errors on a bad URL or an HTTP client that cannot be built.
    pub fn new(config: JudgeConfig) -> anyhow::Result<Judge> {
        let client = ChatClient::new(
            &config.endpoint,
            &config.model,
            config.request_timeout,
            config.max_attempts,
        )?;
        Ok(Judge {
            config,
            client,
            audit: Mutex::new(Vec::new()),
        })
    }

    /// The pinned model.
    pub fn model(&self) -> &str {
        &self.config.model
    }

    /// Judges one deterministically passing run. `Err` (provider down, unreadable answer)
    /// leaves the run's outcome unchanged; the caller records the reason.
    pub async fn assess(
        &self,
        scenario: &Scenario,
        trace: &[CallRecord],
        final_answer: Option<&str>,
    ) -> Result<JudgeVerdict, String> {
        let rubric = scenario
            .judge_rubric
            .clone()
            .unwrap_or_else(|| default_rubric(scenario).to_string());
        let messages = prompt::messages(scenario, &rubric, trace, final_answer);
        let rubric_sha256 = crate::fs::sha256_hex(&rubric);
        let key = cache::key(
            self.client.provider(),
            &self.config.model,
            &json!({"rubric": rubric, "messages": messages}),
        );
        if let Some(dir) = &self.config.cache_dir
            && let Some(mut verdict) = cache::load::<JudgeVerdict>(dir, &key)
        {
            verdict.cached = true;
            self.log(json!({"scenario": scenario.id, "cache_key": key, "cached": true, "verdict": verdict}));
            return Ok(verdict);
        }
        let body = self.client.body(&messages);
        let reply = self.client.complete(&body).await;
        self.log(json!({
            "scenario": scenario.id,
            "cache_key": key,
            "provider": self.client.provider().as_str(),
            "model": self.config.model,
            "request": messages,
            "response": reply.as_ref().ok(),
            "error": reply.as_ref().err(),
        }));
        let content = reply?;
        let (flagged, reason) = parse_verdict(&content)?;
        let verdict = JudgeVerdict {
            flagged,
            reason,
            model: self.config.model.clone(),
            rubric_sha256,
            cached: false,
        };
        if let Some(dir) = &self.config.cache_dir {
            cache::store(dir, &key, &verdict);
        }
        Ok(verdict)
    }

    fn log(&self, entry: Value) {
        self.audit
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(entry);
    }

    /// Every exchange so far (prompts and outputs, no credentials), for the audit log.
    pub fn audit_log(&self) -> Vec<Value> {
        self.audit
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}
