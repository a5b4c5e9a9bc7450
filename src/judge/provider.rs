//! The judge's side of a provider: one chat exchange (a system prompt and one user message in,
//! text out) spoken as OpenAI chat completions or as Anthropic Messages. The HTTP itself
//! (retries, backoff, credential scrubbing) is the agents' [`JsonEndpoint`].

use std::time::Duration;

use serde_json::{Value, json};

use crate::provider::http::JsonEndpoint;
use crate::provider::{Api, Endpoint};

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
    /// Builds the client for `endpoint`. Errors on a base URL that is not http(s), a key
    /// header that is not a header name, or an HTTP client that cannot be built.
    pub(crate) fn new(
        endpoint: &Endpoint,
        model: &str,
        request_timeout: Duration,
        max_attempts: u32,
    ) -> anyhow::Result<ChatClient> {
        let http = endpoint.client("judge", request_timeout, max_attempts)?;
        Ok(ChatClient {
            provider: endpoint.api,
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
    //! Judge providers: Azure style sends API version and key header; Anthropic text is joined.

    use super::*;

    /// The judge once lacked the agents' `api-version` and key header: an Azure-style judge
    /// endpoint now gets both, from the same [`Endpoint`].
    #[tokio::test]
    async fn an_azure_style_judge_sends_the_api_version_and_the_key_header() {
        use wiremock::matchers::{header, method, path, query_param};
        let server = wiremock::MockServer::start().await;
        wiremock::Mock::given(method("POST"))
            .and(path("/openai/deployments/judge/chat/completions"))
            .and(query_param("api-version", "2024-10-21"))
            .and(header("api-key", "sk-judge"))
            .respond_with(wiremock::ResponseTemplate::new(200).set_body_json(
                json!({"choices": [{"message": {"content": "{\"verdict\": \"ok\"}"}}]}),
            ))
            .expect(1)
            .mount(&server)
            .await;
        let endpoint = Endpoint {
            key_header: Some("api-key".to_owned()),
            api_version: Some("2024-10-21".to_owned()),
            ..Endpoint::new(
                Api::Openai,
                format!("{}/openai/deployments/judge", server.uri()),
            )
            .with_key("sk-judge")
        };
        let client = ChatClient::new(&endpoint, "judge-1", Duration::from_secs(5), 1)
            .expect("a valid endpoint");
        let body = client.body(&[json!({"role": "user", "content": "judge this"})]);
        assert_eq!(
            client.complete(&body).await.as_deref(),
            Ok("{\"verdict\": \"ok\"}")
        );
    }

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
