//! The HTTP side shared by the model-backed agents and the judge: one JSON POST with bounded retries,
//! exponential backoff with jitter, `Retry-After`, and error messages scrubbed of credentials.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::ProviderError;
use super::throttle::Throttle;
use crate::redact::Redactor;

/// The longest wait a `Retry-After` header can impose before a retry.
pub(crate) const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// The longest a single request keeps waiting out 429s, summed over its waits. Rate-limited
/// attempts do not count against `max_attempts`: a rate limit slows the suite (every request
/// to the endpoint waits, see [`Throttle`]) instead of erroring its runs.
pub(crate) const RATE_LIMIT_PATIENCE: Duration = Duration::from_secs(300);

/// The most characters of a provider's error body kept in an error message.
pub(crate) const MAX_ERROR_CHARS: usize = 500;

/// The largest provider response read, in bytes (32 MiB): far above any chat completion, and
/// a bound on the memory a broken or hostile endpoint can make toolgate use.
pub(crate) const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;

/// Exponential backoff between attempts: `base * 2^(attempt - 1)`, at most `max`, plus up to
/// half of that again as jitter.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Backoff {
    pub(crate) base: Duration,
    pub(crate) max: Duration,
}

impl Backoff {
    pub(crate) const DEFAULT: Self = Self {
        base: Duration::from_millis(500),
        max: Duration::from_secs(8),
    };

    /// The wait after failed attempt number `attempt` (1-based).
    pub(crate) fn delay(self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        let delay = self.base.saturating_mul(factor).min(self.max);
        let jitter_ms = u64::try_from(delay.as_millis() / 2).unwrap_or(u64::MAX);
        delay + Duration::from_millis(random_below(jitter_ms.saturating_add(1)))
    }
}

/// A number in `0..bound` from the standard library's randomly keyed hasher; enough for jitter.
fn random_below(bound: u64) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let random = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    random % bound.max(1)
}

/// A provider endpoint that takes JSON POSTs: the URL, the headers that carry credentials, and
/// the retry policy.
pub(crate) struct JsonEndpoint {
    client: reqwest::Client,
    url: reqwest::Url,
    /// Extra headers, credentials among them.
    headers: Vec<(reqwest::header::HeaderName, String)>,
    /// The credential and any credentials inside the URL, scrubbed from every error message
    /// before it is cut.
    redactor: Redactor,
    request_timeout: Duration,
    max_attempts: u32,
    pub(crate) backoff: Backoff,
    /// Shared by every request through this endpoint (all runs of a suite).
    throttle: Throttle,
}

impl std::fmt::Debug for JsonEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonEndpoint")
            .field("url", &self.url.as_str())
            .field("headers", &"[redacted]")
            .field("request_timeout", &self.request_timeout)
            .field("max_attempts", &self.max_attempts)
            .finish()
    }
}

/// One POST, successful: the decoded body and how long the provider took.
pub(crate) struct Reply {
    /// The JSON body; for a `text/event-stream` reply, the array of its events' JSON payloads.
    pub(crate) body: Value,
    /// Whether the reply was a `text/event-stream` (then `body` is its payloads).
    pub(crate) streamed: bool,
    /// Wall time of the successful attempt, from sending to the end of the body.
    pub(crate) latency: Duration,
}

/// One failed HTTP attempt.
struct Failure {
    error: ProviderError,
    /// Whether another attempt may succeed (429, 5xx, transport errors).
    is_retryable: bool,
    /// An HTTP 429: waited out under the shared [`Throttle`], not counted as an attempt.
    is_rate_limited: bool,
    /// The provider's `Retry-After`, already capped.
    retry_after: Option<Duration>,
}

impl JsonEndpoint {
    /// Checks `url` (http or https) and builds the HTTP client once.
    ///
    /// `provider` names the provider in errors (`OpenAI`, `Anthropic`); `base_url` is what the
    /// user wrote; `secret` is the credential inside `headers`, never shown. Errors (`ProviderError::Config`) on a bad URL, `max_attempts` of 0, or a client
    /// that cannot be built (e.g. no CA certificates; set `SSL_CERT_FILE`).
    pub(crate) fn new(
        provider: &str,
        base_url: &str,
        url: &str,
        headers: Vec<(String, String)>,
        secret: Option<&str>,
        request_timeout: Duration,
        max_attempts: u32,
    ) -> Result<Self, ProviderError> {
        let mut redactor = Redactor::new(secret);
        redactor.add_url_credentials(base_url);
        redactor.add_url_credentials(url);
        let shown = redactor.redact(base_url);
        if max_attempts == 0 {
            return Err(ProviderError::Config(
                "`max_attempts` must be at least 1".to_owned(),
            ));
        }
        let url = match reqwest::Url::parse(url) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => url,
            Ok(_) => {
                return Err(ProviderError::Config(format!(
                    "invalid {provider} base URL `{shown}`: expected http or https"
                )));
            }
            Err(error) => {
                return Err(ProviderError::Config(format!(
                    "invalid {provider} base URL `{shown}`: {error}"
                )));
            }
        };
        let headers = headers
            .into_iter()
            .map(|(name, value)| {
                reqwest::header::HeaderName::from_bytes(name.as_bytes())
                    .map(|name| (name, value))
                    .map_err(|_| ProviderError::Config(format!("invalid header name `{name}`")))
            })
            .collect::<Result<_, _>>()?;
        crate::tls::install_crypto_provider();
        let client = reqwest::Client::builder()
            .timeout(request_timeout)
            .build()
            .map_err(|error| {
                ProviderError::Config(format!(
                    "failed to build the HTTP client: {}",
                    chain(&error)
                ))
            })?;
        Ok(Self {
            client,
            url,
            headers,
            redactor,
            request_timeout,
            max_attempts,
            backoff: Backoff::DEFAULT,
            throttle: Throttle::default(),
        })
    }

    /// Also scrubs every secret of `secrets` from error messages.
    pub(crate) fn redacting(mut self, secrets: &Redactor) -> Self {
        self.redactor.extend(secrets);
        self
    }

    /// POSTs `body`, retrying 5xx and transport errors (timeouts, resets) up to
    /// `max_attempts` attempts, and 429s for up to [`RATE_LIMIT_PATIENCE`] of waiting; waits
    /// `Retry-After` when the provider sends one, else the backoff. A 429 also slows every
    /// other request to this endpoint (see [`Throttle`]). A body that is not JSON is not
    /// retried. The body is serialized once, before the first attempt.
    pub(crate) async fn post(&self, body: &impl serde::Serialize) -> Result<Reply, ProviderError> {
        let body = bytes::Bytes::from(serde_json::to_vec(body).map_err(|error| {
            ProviderError::Config(format!("the request body does not serialize: {error}"))
        })?);
        let mut attempt = 1;
        let mut rate_limits = 0;
        let mut waited = Duration::ZERO;
        loop {
            let permit = self.throttle.acquire().await;
            let started = Instant::now();
            let result = self.post_once(body.clone()).await;
            drop(permit);
            match result {
                Ok((body, streamed)) => {
                    self.throttle.succeeded();
                    return Ok(Reply {
                        body,
                        streamed,
                        latency: started.elapsed(),
                    });
                }
                Err(failure) if failure.is_rate_limited && waited < RATE_LIMIT_PATIENCE => {
                    rate_limits += 1;
                    let wait = failure
                        .retry_after
                        .unwrap_or_else(|| self.backoff.delay(rate_limits));
                    waited += wait;
                    // The next acquire waits out the pause, with every other request.
                    self.throttle.rate_limited(wait);
                }
                Err(failure) if failure.is_retryable && attempt < self.max_attempts => {
                    let delay = failure
                        .retry_after
                        .unwrap_or_else(|| self.backoff.delay(attempt));
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                Err(failure) => return Err(failure.error),
            }
        }
    }

    async fn post_once(&self, body: bytes::Bytes) -> Result<(Value, bool), Failure> {
        let mut request = self
            .client
            .post(self.url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        let response = request
            .send()
            .await
            .map_err(|error| self.transport(error))?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(parse_retry_after);
        let is_event_stream = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|kind| kind.starts_with("text/event-stream"));
        let bytes = self.read_body(response).await?;
        if status.is_success() && is_event_stream {
            return event_payloads(&bytes)
                .map(|events| (events, true))
                .map_err(|message| Failure {
                    error: ProviderError::BadResponse(self.redact(&message)),
                    is_retryable: false,
                    is_rate_limited: false,
                    retry_after: None,
                });
        }
        if !status.is_success() {
            let text = error_text(&bytes, status);
            if let Some(excerpt) = context_overflow(&text) {
                return Err(Failure {
                    error: ProviderError::ContextOverflow {
                        status: status.as_u16(),
                        message: self.redact(excerpt),
                    },
                    is_retryable: false,
                    is_rate_limited: false,
                    retry_after: None,
                });
            }
            let message = self.redact(&text);
            return Err(Failure {
                error: ProviderError::Http {
                    status: status.as_u16(),
                    message,
                },
                is_retryable: status.is_server_error(),
                is_rate_limited: status == reqwest::StatusCode::TOO_MANY_REQUESTS,
                retry_after,
            });
        }
        serde_json::from_slice(&bytes)
            .map(|value| (value, false))
            .map_err(|error| Failure {
                error: ProviderError::BadResponse(format!(
                    "body is not JSON ({error}): `{}`",
                    self.redact(&String::from_utf8_lossy(&bytes))
                )),
                is_retryable: false,
                is_rate_limited: false,
                retry_after: None,
            })
    }

    /// The response body, at most [`MAX_RESPONSE_BYTES`]; a longer one is a bad response, read
    /// no further.
    async fn read_body(&self, mut response: reqwest::Response) -> Result<Vec<u8>, Failure> {
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| self.transport(error))?
        {
            if bytes.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(Failure {
                    error: ProviderError::BadResponse(format!(
                        "the response body exceeds {} MiB",
                        MAX_RESPONSE_BYTES / (1024 * 1024)
                    )),
                    is_retryable: false,
                    is_rate_limited: false,
                    retry_after: None,
                });
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(bytes)
    }

    fn transport(&self, error: reqwest::Error) -> Failure {
        let what = if error.is_timeout() {
            format!("timed out after {:?}", self.request_timeout)
        } else {
            chain(&error.without_url())
        };
        Failure {
            error: ProviderError::Transport(
                self.redact(&format!("failed to POST `{}`: {what}", self.url)),
            ),
            is_retryable: true,
            is_rate_limited: false,
            retry_after: None,
        }
    }

    /// Removes the credentials from text bound for an error message, then cuts it to
    /// [`MAX_ERROR_CHARS`].
    pub(crate) fn redact(&self, text: &str) -> String {
        self.redactor.redact_and_cut(text, MAX_ERROR_CHARS)
    }
}

/// The `data` payloads of a server-sent event stream (a streamed model response), each parsed
/// as JSON, as one JSON array in stream order. Lines of one event are joined with `\n`;
/// comments, `event:`/`id:` lines and the final `[DONE]` are left out. `Err` names the first
/// payload that is not JSON.
fn event_payloads(bytes: &[u8]) -> Result<Value, String> {
    let text = String::from_utf8_lossy(bytes);
    let mut payloads = Vec::new();
    let mut data: Vec<&str> = Vec::new();
    let mut flush = |data: &mut Vec<&str>| -> Result<(), String> {
        if data.is_empty() {
            return Ok(());
        }
        let joined = data.join("\n");
        data.clear();
        if joined.trim() == "[DONE]" {
            return Ok(());
        }
        serde_json::from_str(&joined)
            .map(|value| payloads.push(value))
            .map_err(|error| format!("stream event is not JSON ({error}): `{joined}`"))
    };
    for line in text.lines() {
        if line.is_empty() {
            flush(&mut data)?;
        } else if let Some(rest) = line.strip_prefix("data:") {
            data.push(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    flush(&mut data)?;
    Ok(Value::Array(payloads))
}

/// A `Retry-After` in seconds (fractions allowed), capped at `MAX_RETRY_AFTER`; HTTP dates are
/// ignored (the backoff applies).
pub(crate) fn parse_retry_after(value: &str) -> Option<Duration> {
    let seconds: f64 = value.trim().parse().ok()?;
    if !seconds.is_finite() || seconds < 0.0 {
        return None;
    }
    Some(Duration::from_secs_f64(
        seconds.min(MAX_RETRY_AFTER.as_secs_f64()),
    ))
}

/// The provider's `error.message` from an error body, else the body itself, else the status;
/// whole: the caller redacts, then cuts.
pub(crate) fn error_text(bytes: &[u8], status: reqwest::StatusCode) -> String {
    let from_json = serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|body| match body.get("error")? {
            Value::String(message) => Some(message.clone()),
            error => error.get("message")?.as_str().map(str::to_owned),
        });
    let text = from_json.unwrap_or_else(|| String::from_utf8_lossy(bytes).trim().to_owned());
    if text.is_empty() {
        status.canonical_reason().unwrap_or("no body").to_owned()
    } else {
        text
    }
}

/// What OpenAI-compatible servers and Anthropic say when a request exceeds the context window,
/// lowercase: OpenAI and vLLM (`maximum context length`, `context_length_exceeded`),
/// llama.cpp and llama-cpp-python (`exceed context window`, `n_ctx`, `context size`),
/// Anthropic (`prompt is too long`), and generic wordings.
const CONTEXT_OVERFLOW_PHRASES: [&str; 9] = [
    "maximum context length",
    "context_length_exceeded",
    "context window",
    "context length",
    "context size",
    "n_ctx",
    "prompt is too long",
    "too many tokens",
    "exceeds the available context",
];

/// The excerpt of an error text that says the request overflowed the context window, at most
/// [`MAX_ERROR_CHARS`] around the first phrase of [`CONTEXT_OVERFLOW_PHRASES`] (a server's
/// traceback can bury it past any fixed cut); `None` when the text says no such thing.
pub(crate) fn context_overflow(text: &str) -> Option<&str> {
    let lower = text.to_ascii_lowercase();
    let at = CONTEXT_OVERFLOW_PHRASES
        .iter()
        .filter_map(|phrase| lower.find(phrase))
        .min()?;
    // The line holding the phrase, and what follows it while it fits.
    let start = text[..at].rfind('\n').map_or(0, |newline| newline + 1);
    let start = start.max(at.saturating_sub(MAX_ERROR_CHARS / 2));
    let mut end = (start + MAX_ERROR_CHARS).min(text.len());
    let mut start = start;
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(text[start..end].trim())
}

/// An error and its sources, joined by `: `.
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    //! HTTP retries: context overflow is found, `Retry-After` capped, backoff has bounded jitter.

    use super::*;

    #[test]
    fn context_overflow_is_found_in_each_servers_wording_even_deep_in_a_traceback() {
        let vllm = "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.";
        assert_eq!(context_overflow(vllm), Some(vllm));
        let llama = format!(
            "Traceback (most recent call last):\n{}  File \"llama.py\", line 1\nValueError: Requested tokens (8200) exceed context window of 8192",
            "  File \"app.py\", line 9, in handler\n".repeat(40)
        );
        assert_eq!(
            context_overflow(&llama),
            Some("ValueError: Requested tokens (8200) exceed context window of 8192")
        );
        assert_eq!(
            context_overflow("prompt is too long: 210000 tokens > 200000 maximum"),
            Some("prompt is too long: 210000 tokens > 200000 maximum")
        );
        assert_eq!(context_overflow("model `x` not found"), None);
        assert_eq!(context_overflow("Internal Server Error"), None);
    }

    #[test]
    fn retry_after_is_read_in_seconds_and_capped() {
        assert_eq!(parse_retry_after("0"), Some(Duration::ZERO));
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("1.5"), Some(Duration::from_millis(1500)));
        assert_eq!(parse_retry_after("3600"), Some(Duration::from_secs(30)));
        assert_eq!(parse_retry_after("-1"), None);
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }

    #[test]
    fn backoff_doubles_up_to_its_cap_with_bounded_jitter() {
        let backoff = Backoff::DEFAULT;
        for (attempt, base_ms) in [
            (1, 500),
            (2, 1000),
            (3, 2000),
            (4, 4000),
            (5, 8000),
            (40, 8000),
        ] {
            let delay = backoff.delay(attempt);
            assert!(
                delay >= Duration::from_millis(base_ms)
                    && delay <= Duration::from_millis(base_ms * 3 / 2),
                "attempt {attempt}: {delay:?}"
            );
        }
    }

    #[test]
    fn error_bodies_are_read_whole_for_the_caller_to_redact_then_cut() {
        let body = "x".repeat(2000);
        let text = error_text(body.as_bytes(), reqwest::StatusCode::BAD_GATEWAY);
        assert_eq!(text.len(), 2000);
        assert_eq!(
            crate::redact::cut(&text, MAX_ERROR_CHARS).len(),
            MAX_ERROR_CHARS + 3
        );
        assert_eq!(
            error_text(b"", reqwest::StatusCode::BAD_GATEWAY),
            "Bad Gateway"
        );
    }
}
