//! The judge's side of a provider: one chat exchange (a system prompt and one user message in,
//! text out) spoken as OpenAI chat completions or as Anthropic Messages. The HTTP itself
//! (retries, backoff, credential scrubbing) is the agents' [`JsonEndpoint`].

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::agent::http::JsonEndpoint;
use crate::agent::{anthropic, openai};

/// The output-token limit of one judge reply on Anthropic, where it is required; a verdict is
/// one short JSON object.
const ANTHROPIC_MAX_TOKENS: u32 = 1024;

/// The API a judge model is reached through.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum JudgeProvider {
    /// Any OpenAI-compatible chat-completions endpoint: `POST {base}/chat/completions`,
    /// `authorization: Bearer KEY`, the text of `choices[0].message.content`.
    #[default]
    Openai,
    /// The Anthropic Messages API: `POST {base}/v1/messages`, `x-api-key: KEY`,
    /// `anthropic-version`, the text blocks of `content` joined.
    Anthropic,
}

impl JudgeProvider {
    /// The name used on the command line and in the cache key.
    pub fn as_str(self) -> &'static str {
        match self {
            JudgeProvider::Openai => "openai",
            JudgeProvider::Anthropic => "anthropic",
        }
    }

    /// The base URL used when none is given: `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL` when
    /// set, else the provider's public API.
    pub fn default_base_url(self) -> String {
        let (variable, fallback) = match self {
            JudgeProvider::Openai => ("OPENAI_BASE_URL", openai::DEFAULT_BASE_URL),
            JudgeProvider::Anthropic => ("ANTHROPIC_BASE_URL", anthropic::DEFAULT_BASE_URL),
        };
        non_empty_env(variable).unwrap_or_else(|| fallback.to_string())
    }

    /// The key used when `TOOLGATE_JUDGE_API_KEY` is not set: `OPENAI_API_KEY` or
    /// `ANTHROPIC_API_KEY`.
    pub fn api_key_from_env(self) -> Option<String> {
        non_empty_env("TOOLGATE_JUDGE_API_KEY").or_else(|| {
            non_empty_env(match self {
                JudgeProvider::Openai => "OPENAI_API_KEY",
                JudgeProvider::Anthropic => "ANTHROPIC_API_KEY",
            })
        })
    }
}

fn non_empty_env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}

/// A judge model behind one provider: sends a system prompt and a user message, returns the
/// reply's text. Shared by the scoring judge and the description judge of `toolgate lint`.
#[derive(Debug)]
pub(crate) struct ChatClient {
    provider: JudgeProvider,
    model: String,
    http: JsonEndpoint,
}

impl ChatClient {
    /// Builds the client. Errors on a base URL that is not http(s) or an HTTP client that
    /// cannot be built.
    pub(crate) fn new(
        provider: JudgeProvider,
        base_url: &str,
        api_key: Option<&str>,
        model: &str,
        request_timeout: Duration,
        max_attempts: u32,
    ) -> anyhow::Result<ChatClient> {
        let base = base_url.trim_end_matches('/');
        let (url, headers) = match provider {
            JudgeProvider::Openai => (
                format!("{base}/chat/completions"),
                api_key
                    .iter()
                    .map(|key| ("authorization".to_string(), format!("Bearer {key}")))
                    .collect(),
            ),
            JudgeProvider::Anthropic => {
                let mut headers = vec![(
                    "anthropic-version".to_string(),
                    anthropic::API_VERSION.to_string(),
                )];
                headers.extend(api_key.map(|key| ("x-api-key".to_string(), key.to_string())));
                (format!("{base}/v1/messages"), headers)
            }
        };
        let http = JsonEndpoint::new(
            "judge",
            base_url,
            &url,
            headers,
            api_key,
            request_timeout,
            max_attempts,
        )?;
        Ok(ChatClient {
            provider,
            model: model.to_string(),
            http,
        })
    }

    /// The provider it speaks to.
    pub(crate) fn provider(&self) -> JudgeProvider {
        self.provider
    }

    /// The request body for `messages` (chat messages as OpenAI spells them: `role` and
    /// string `content`), as the provider spells it; also what the audit log records. For
    /// Anthropic, `system` messages become the top-level `system` text.
    pub(crate) fn body(&self, messages: &[Value]) -> Value {
        match self.provider {
            JudgeProvider::Openai => json!({
                "model": self.model,
                "temperature": 0,
                "messages": messages,
            }),
            JudgeProvider::Anthropic => {
                let (system, rest): (Vec<&Value>, Vec<&Value>) = messages
                    .iter()
                    .partition(|message| message["role"] == "system");
                let system: Vec<&str> = system
                    .iter()
                    .filter_map(|message| message["content"].as_str())
                    .collect();
                json!({
                    "model": self.model,
                    "max_tokens": ANTHROPIC_MAX_TOKENS,
                    "temperature": 0,
                    "system": system.join("\n\n"),
                    "messages": rest,
                })
            }
        }
    }

    /// Sends `body` (from [`ChatClient::body`]) and returns the reply's text. `Err` is a
    /// one-line reason without credentials: the HTTP failure after retries, or a reply
    /// without text.
    pub(crate) async fn complete(&self, body: &Value) -> Result<String, String> {
        let reply = self
            .http
            .post(body)
            .await
            .map_err(|error| error.to_string())?;
        reply_text(self.provider, &reply.body)
            .ok_or_else(|| "the judge's response has no message content".to_string())
    }
}

/// The text of a reply: OpenAI's `choices[0].message.content`, or Anthropic's `text` content
/// blocks joined in order (other blocks skipped). `None` when there is no text.
fn reply_text(provider: JudgeProvider, body: &Value) -> Option<String> {
    match provider {
        JudgeProvider::Openai => body["choices"][0]["message"]["content"]
            .as_str()
            .map(str::to_string),
        JudgeProvider::Anthropic => {
            let texts: Vec<&str> = body["content"]
                .as_array()?
                .iter()
                .filter(|block| block["type"] == "text")
                .filter_map(|block| block["text"].as_str())
                .collect();
            (!texts.is_empty()).then(|| texts.concat())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_text_is_the_text_blocks_joined() {
        let body = json!({"content": [
            {"type": "thinking", "thinking": "hmm"},
            {"type": "text", "text": "{\"verdict\": "},
            {"type": "text", "text": "\"ok\"}"},
        ]});
        assert_eq!(
            reply_text(JudgeProvider::Anthropic, &body).as_deref(),
            Some("{\"verdict\": \"ok\"}")
        );
        assert_eq!(
            reply_text(JudgeProvider::Anthropic, &json!({"content": []})),
            None
        );
        assert_eq!(
            reply_text(
                JudgeProvider::Openai,
                &json!({"choices": [{"message": {"content": "fine"}}]})
            )
            .as_deref(),
            Some("fine")
        );
    }
}
