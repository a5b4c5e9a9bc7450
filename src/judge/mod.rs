//! The optional LLM judge. It reads a run that passed every deterministic check and may only
//! downgrade it to `degraded` (right actions, faulty narration); it can never add a pass, and
//! a judge that fails leaves the verdict as it was.
//!
//! The judge is a pinned model behind an OpenAI-compatible chat-completions endpoint. Each
//! verdict is cached on disk by the hash of everything it saw (model, rubric, prompt, calls,
//! answer), and every exchange is kept for audit.

mod cache;
mod prompt;

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::agent::http::JsonEndpoint;
use crate::harness::CallRecord;
use crate::scenario::Scenario;

pub use prompt::{default_rubric, parse_verdict};

/// Where and how to reach the judge model.
#[derive(Clone)]
pub struct JudgeConfig {
    /// Chat-completions base URL; `/chat/completions` is appended.
    pub base_url: String,
    /// Bearer token, if the endpoint needs one. Never logged.
    pub api_key: Option<String>,
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
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("model", &self.model)
            .finish()
    }
}

/// The judge's word on one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    http: JsonEndpoint,
    audit: Mutex<Vec<Value>>,
}

impl Judge {
    /// Builds the judge. Errors on a bad URL or an HTTP client that cannot be built.
    pub fn new(config: JudgeConfig) -> anyhow::Result<Judge> {
        let url = format!("{}/chat/completions", config.base_url.trim_end_matches('/'));
        let headers = config
            .api_key
            .iter()
            .map(|key| ("authorization".to_string(), format!("Bearer {key}")))
            .collect();
        let http = JsonEndpoint::new(
            "judge",
            &config.base_url,
            &url,
            headers,
            config.api_key.as_deref(),
            config.request_timeout,
            config.max_attempts,
        )?;
        Ok(Judge {
            config,
            http,
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
        let rubric_sha256 = crate::config::sha256_hex(&rubric);
        let key = cache::key(&self.config.model, &rubric, &messages);
        if let Some(dir) = &self.config.cache_dir
            && let Some(mut verdict) = cache::load(dir, &key)
        {
            verdict.cached = true;
            self.log(json!({"scenario": scenario.id, "cache_key": key, "cached": true, "verdict": verdict}));
            return Ok(verdict);
        }
        let body = json!({"model": self.config.model, "temperature": 0, "messages": messages});
        let reply = self
            .http
            .post(&body)
            .await
            .map_err(|error| error.to_string());
        let content = reply.as_ref().ok().and_then(|reply| {
            reply.body["choices"][0]["message"]["content"]
                .as_str()
                .map(str::to_string)
        });
        self.log(json!({
            "scenario": scenario.id,
            "cache_key": key,
            "model": self.config.model,
            "request": messages,
            "response": content,
            "error": reply.as_ref().err(),
        }));
        let content = content.ok_or_else(|| match reply {
            Err(error) => error,
            Ok(_) => "the judge's response has no message content".to_string(),
        })?;
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
