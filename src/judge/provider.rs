//! The judge's side of a provider: one chat exchange (a system prompt and one user message in,
//! text out) spoken as OpenAI chat completions or as Anthropic Messages. The HTTP itself
//! (retries, backoff, credential scrubbing) is the agents' [`JsonEndpoint`].

use std::time::Duration;

use serde_json::{Value, json};

use crate::provider::Api;
use crate::provider::http::JsonEndpoint;

/// The output-token limit of one judge reply on Anthropic, where it is required; a verdict is
/// one short JSON object.
const ANTHROPIC_MAX_TOKENS: u32 = 1024;

/// A judge model behind one provider: sends a system prompt and a user message, returns the
/// reply's text. Shared by the scoring judge and the description judge of `toolgate lint`.
#[derive(Debug)]
pub(crate) struct ChatClient {
    provider: Api,
    model: String,
    http: JsonEndpoint,
}

impl ChatClient {
    /// Builds the client. Errors on a base URL that is not http(s) or an HTTP client that
    /// cannot be built.
    pub(crate) fn new(
        provider: Api,
        base_url: &str,
        api_key: Option<&str>,
        model: &str,
        request_timeout: Duration,
        max_attempts: u32,
    ) -> anyhow::Result<ChatClient> {
        let base = base_url.trim_end_matches('/');
        let (url, headers) = match provider {
            Api::Openai => (
                format!("{base}/chat/completions"),
                api_key
                    .iter()
                    .map(|key| ("authorization".to_string(), format!("Bearer {key}")))
                    .collect(),
            ),
            Api::Anthropic => {
                let mut headers = vec![(
                    "anthropic-version".to_string(),
                    crate::provider::ANTHROPIC_VERSION.to_string(),
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
    pub(crate) fn provider(&self) -> Api {
        self.provider
    }

    /// The request body for `messages` (chat messages as OpenAI spells them: `role` and
    /// string `content`), as the provider spells it; also what the audit log records. For
    /// Anthropic, `system` messages become the top-level `system` text.
    pub(crate) fn body(&self, messages: &[Value]) -> Value {
        match self.provider {
            Api::Openai => json!({
                "model": self.model,
                "temperature": 0,
                "messages": messages,
            }),
            Api::Anthropic => {
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
fn reply_text(provider: Api, body: &Value) -> Option<String> {
    match provider {
        Api::Openai => body["choices"][0]["message"]["content"]
            .as_str()
            .map(str::to_string),
        Api::Anthropic => {
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
            reply_text(Api::Anthropic, &body).as_deref(),
            Some("{\"verdict\": \"ok\"}")
        );
        assert_eq!(reply_text(Api::Anthropic, &json!({"content": []})), None);
        assert_eq!(
            reply_text(
                Api::Openai,
                &json!({"choices": [{"message": {"content": "fine"}}]})
            )
            .as_deref(),
            Some("fine")
        );
    }
}
