//! Model providers: which API a model is reached through, where (base URL and key, from flags,
//! the environment and `toolgate.yaml`), and how that endpoint is named in results and pins.
//! One resolver serves the agents, the judge and the pins, so they never disagree.
//!
//! [`http`] is the HTTP client every provider call goes through (bounded retries, backoff,
//! `Retry-After`, credentials scrubbed from errors). reqwest lives here and in the harness's
//! MCP client only.

pub mod http;
pub mod otlp;
pub(crate) mod throttle;

use serde::{Deserialize, Serialize};

/// The API a model is reached through.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, llama.cpp):
    /// `POST {base}/chat/completions`, `authorization: Bearer KEY`.
    #[default]
    Openai,
    /// The Anthropic Messages API: `POST {base}/v1/messages`, `x-api-key: KEY`.
    Anthropic,
}

impl Api {
    /// The name used on the command line and in cache keys.
    pub fn as_str(self) -> &'static str {
        match self {
            Api::Openai => "openai",
            Api::Anthropic => "anthropic",
        }
    }

    /// The public API root used when nothing else names one.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Api::Openai => "https://api.openai.com/v1",
            Api::Anthropic => "https://api.anthropic.com",
        }
    }

    /// The environment variable that names the base URL.
    pub fn base_url_variable(self) -> &'static str {
        match self {
            Api::Openai => "OPENAI_BASE_URL",
            Api::Anthropic => "ANTHROPIC_BASE_URL",
        }
    }

    /// The environment variable that holds the key.
    pub fn api_key_variable(self) -> &'static str {
        match self {
            Api::Openai => "OPENAI_API_KEY",
            Api::Anthropic => "ANTHROPIC_API_KEY",
        }
    }

    /// How the API is named in the provider pin: `openai-compatible` or `anthropic`.
    fn pin_name(self) -> &'static str {
        match self {
            Api::Openai => "openai-compatible",
            Api::Anthropic => "anthropic",
        }
    }
}

/// The `anthropic-version` header sent with every request.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Where a model is reached: the API, its base URL and the key. The key never appears in
/// `Debug` output.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The API spoken.
    pub api: Api,
    /// The API root, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`.
    pub base_url: String,
    /// The key, when one is set.
    pub api_key: Option<String>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("api", &self.api)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .finish()
    }
}

/// Where an endpoint's settings come from besides the environment, each `None` when unset.
#[derive(Debug, Clone, Copy, Default)]
pub struct EndpointSources<'a> {
    /// A base URL named on the command line (e.g. `--judge-base-url`): wins over everything.
    pub flag_base_url: Option<&'a str>,
    /// The base URL from `toolgate.yaml`: used when the environment names none.
    pub file_base_url: Option<&'a str>,
    /// A variable whose key wins over the API's own (e.g. `TOOLGATE_JUDGE_API_KEY`).
    pub key_variable: Option<&'a str>,
}

impl Endpoint {
    /// Resolves the endpoint of `api`. The base URL is the flag's, else the API's variable
    /// (`OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`), else `toolgate.yaml`'s, else the public
    /// API; the key is `sources.key_variable`'s, else the API's variable. `env` reads a
    /// variable; empty and all-blank values count as unset.
    pub fn resolve(
        api: Api,
        sources: EndpointSources<'_>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Endpoint {
        let set = |name: &str| env(name).filter(|value| !value.trim().is_empty());
        let given = |value: Option<&str>| {
            value
                .filter(|value| !value.trim().is_empty())
                .map(str::to_owned)
        };
        let base_url = given(sources.flag_base_url)
            .or_else(|| set(api.base_url_variable()))
            .or_else(|| given(sources.file_base_url))
            .unwrap_or_else(|| api.default_base_url().to_owned());
        let api_key = sources
            .key_variable
            .and_then(set)
            .or_else(|| set(api.api_key_variable()));
        Endpoint {
            api,
            base_url,
            api_key,
        }
    }

    /// The host (and port, when given) of the base URL: never a path, query or credentials.
    /// `None` when the URL does not parse.
    pub fn host(&self) -> Option<String> {
        url_host(&self.base_url)
    }

    /// The provider pin: `openai-compatible HOST` or `anthropic HOST` (`unknown host` when
    /// the base URL does not parse).
    pub fn pin(&self) -> String {
        let host = self.host().unwrap_or_else(|| "unknown host".to_owned());
        format!("{} {host}", self.api.pin_name())
    }
}

/// The host (and port, when given) of a URL, for the results: never a path, query or
/// credentials. `None` when the URL does not parse or has no host.
pub fn url_host(url: &str) -> Option<String> {
    let url = reqwest::Url::parse(url).ok()?;
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

/// A provider call that failed for reasons that are not the model's: the run or verdict is
/// `errored`, never a pass or a model failure.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// The provider answered with an HTTP error after all retries.
    #[error("provider returned HTTP {status}: {message}")]
    Http {
        /// HTTP status code.
        status: u16,
        /// The provider's message (never contains credentials).
        message: String,
    },
    /// The provider refused the request because the conversation (prompt, tool definitions
    /// and turns so far) does not fit the model's context window. Not retried: the same
    /// request would fail again. The fix is a larger context (`n_ctx`, `--max-model-len`),
    /// fewer tools, or fewer turns.
    #[error("the conversation does not fit the model's context window (HTTP {status}): {message}")]
    ContextOverflow {
        /// HTTP status code.
        status: u16,
        /// The part of the provider's message that says so (never contains credentials).
        message: String,
    },
    /// The request did not complete (connection, timeout).
    #[error("provider request failed: {0}")]
    Transport(String),
    /// The provider's answer could not be understood.
    #[error("provider response is not valid: {0}")]
    BadResponse(String),
    /// The endpoint is misconfigured (a bad URL, header or attempt count).
    #[error("{0}")]
    Config(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    #[test]
    fn the_environment_wins_over_the_file_and_a_flag_over_both() {
        let file = EndpointSources {
            file_base_url: Some("http://file:1/v1"),
            ..EndpointSources::default()
        };
        let none = env(&[]);
        let from_env = env(&[("OPENAI_BASE_URL", "http://env:2/v1")]);
        assert_eq!(
            Endpoint::resolve(Api::Openai, file, &none).base_url,
            "http://file:1/v1"
        );
        assert_eq!(
            Endpoint::resolve(Api::Openai, file, &from_env).base_url,
            "http://env:2/v1"
        );
        let flag = EndpointSources {
            flag_base_url: Some("http://flag:3/v1"),
            ..file
        };
        assert_eq!(
            Endpoint::resolve(Api::Openai, flag, &from_env).base_url,
            "http://flag:3/v1"
        );
        assert_eq!(
            Endpoint::resolve(Api::Anthropic, EndpointSources::default(), &from_env).base_url,
            "https://api.anthropic.com"
        );
    }

    #[test]
    fn blank_variables_count_as_unset_and_a_named_key_variable_wins() {
        let lookup = env(&[
            ("OPENAI_BASE_URL", "  "),
            ("OPENAI_API_KEY", "sk-openai"),
            ("TOOLGATE_JUDGE_API_KEY", "sk-judge"),
        ]);
        let plain = Endpoint::resolve(Api::Openai, EndpointSources::default(), &lookup);
        assert_eq!(plain.base_url, "https://api.openai.com/v1");
        assert_eq!(plain.api_key.as_deref(), Some("sk-openai"));
        let judge = EndpointSources {
            key_variable: Some("TOOLGATE_JUDGE_API_KEY"),
            ..EndpointSources::default()
        };
        let judged = Endpoint::resolve(Api::Openai, judge, &lookup);
        assert_eq!(judged.api_key.as_deref(), Some("sk-judge"));
    }

    /// Regression: an Anthropic run was pinned as `openai-compatible api.anthropic.com`.
    #[test]
    fn the_pin_names_the_api_and_only_the_host_and_port() {
        let anthropic = Endpoint::resolve(Api::Anthropic, EndpointSources::default(), &env(&[]));
        assert_eq!(anthropic.pin(), "anthropic api.anthropic.com");
        let local = Endpoint {
            api: Api::Openai,
            base_url: "https://user:secret@api.example.com:8443/v1?key=x".into(),
            api_key: Some("sk-secret".into()),
        };
        assert_eq!(local.pin(), "openai-compatible api.example.com:8443");
        assert!(!format!("{local:?}").contains("sk-secret"));
        assert_eq!(url_host("not a url"), None);
    }
}
