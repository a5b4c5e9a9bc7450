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

/// Where a model is reached: the API, its base URL, the key and, for OpenAI-compatible
/// endpoints, the Azure-style key header and `api-version`. The key never appears in `Debug`
/// output. Agents and the judge build their request URL ([`Endpoint::url`]) and headers
/// ([`Endpoint::headers`]) from it, so they never disagree on how a provider is spoken to.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The API spoken.
    pub api: Api,
    /// The API root, e.g. `https://api.openai.com/v1`, `http://localhost:11434/v1`, or an
    /// Azure-style deployment `https://NAME.openai.azure.com/openai/deployments/DEPLOYMENT`.
    pub base_url: String,
    /// The key, when one is set.
    pub api_key: Option<String>,
    /// OpenAI-compatible only: the header that carries `api_key` bare (Azure: `api-key`);
    /// `None` sends `authorization: Bearer KEY`. Ignored for Anthropic.
    pub key_header: Option<String>,
    /// OpenAI-compatible only: Azure-style `api-version`, sent as a query parameter when
    /// set. Ignored for Anthropic.
    pub api_version: Option<String>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("api", &self.api)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("key_header", &self.key_header)
            .field("api_version", &self.api_version)
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
    /// The key header from `toolgate.yaml` (`api_key_header:`).
    pub file_key_header: Option<&'a str>,
    /// A variable naming the key header (e.g. `TOOLGATE_JUDGE_API_KEY_HEADER`); wins over
    /// the file's.
    pub key_header_variable: Option<&'a str>,
    /// The `api-version` from `toolgate.yaml` (`api_version:`): used when the environment
    /// names none.
    pub file_api_version: Option<&'a str>,
    /// A variable whose `api-version` wins over `OPENAI_API_VERSION` (e.g.
    /// `TOOLGATE_JUDGE_API_VERSION`).
    pub api_version_variable: Option<&'a str>,
}

/// The variable that names the `api-version` of an OpenAI-compatible endpoint.
pub const API_VERSION_VARIABLE: &str = "OPENAI_API_VERSION";

impl Endpoint {
    /// An endpoint of `api` at `base_url` with no key, key header or `api-version`.
    pub fn new(api: Api, base_url: impl Into<String>) -> Endpoint {
        Endpoint {
            api,
            base_url: base_url.into(),
            api_key: None,
            key_header: None,
            api_version: None,
        }
    }

    /// This endpoint with `key` as its key.
    #[must_use]
    pub fn with_key(mut self, key: impl Into<String>) -> Endpoint {
        self.api_key = Some(key.into());
        self
    }

    /// Resolves the endpoint of `api`. The base URL is the flag's, else the API's variable
    /// (`OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`), else `toolgate.yaml`'s, else the public
    /// API; the key is `sources.key_variable`'s, else the API's variable. For an
    /// OpenAI-compatible API, the `api-version` is `sources.api_version_variable`'s, else
    /// `OPENAI_API_VERSION`, else the file's; the key header is
    /// `sources.key_header_variable`'s, else the file's. `env` reads a variable; empty and
    /// all-blank values count as unset.
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
        let (key_header, api_version) = match api {
            Api::Anthropic => (None, None),
            Api::Openai => (
                sources
                    .key_header_variable
                    .and_then(set)
                    .or_else(|| given(sources.file_key_header)),
                sources
                    .api_version_variable
                    .and_then(set)
                    .or_else(|| set(API_VERSION_VARIABLE))
                    .or_else(|| given(sources.file_api_version)),
            ),
        };
        Endpoint {
            api,
            base_url,
            api_key,
            key_header,
            api_version,
        }
    }

    /// The URL requests are posted to: `{base}/chat/completions` (with `?api-version=V`, or
    /// `&api-version=V` after a query of the base, when set) or `{base}/v1/messages`.
    pub fn url(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        match self.api {
            Api::Openai => {
                let mut url = format!("{base}/chat/completions");
                if let Some(version) = &self.api_version {
                    url.push_str(if url.contains('?') { "&" } else { "?" });
                    url.push_str("api-version=");
                    url.push_str(version);
                }
                url
            }
            Api::Anthropic => format!("{base}/v1/messages"),
        }
    }

    /// The headers of every request: the key as `authorization: Bearer KEY` or bare in the
    /// key header (OpenAI-compatible), or `anthropic-version` ([`ANTHROPIC_VERSION`]) and
    /// `x-api-key: KEY` (Anthropic). No key header without a key.
    pub fn headers(&self) -> Vec<(String, String)> {
        match self.api {
            Api::Openai => match (&self.api_key, &self.key_header) {
                (None, _) => Vec::new(),
                (Some(key), None) => vec![("authorization".to_owned(), format!("Bearer {key}"))],
                (Some(key), Some(header)) => vec![(header.clone(), key.clone())],
            },
            Api::Anthropic => {
                let mut headers =
                    vec![("anthropic-version".to_owned(), ANTHROPIC_VERSION.to_owned())];
                headers.extend(
                    self.api_key
                        .iter()
                        .map(|key| ("x-api-key".to_owned(), key.clone())),
                );
                headers
            }
        }
    }

    /// The HTTP client that posts to [`Endpoint::url`] with [`Endpoint::headers`]; `label`
    /// names the caller in errors (`OpenAI`, `Anthropic`, `judge`).
    ///
    /// Errors (`ProviderError::Config`): a base URL that is not http(s), a key header that is
    /// not a header name, `max_attempts` of 0, or a client that cannot be built.
    pub(crate) fn client(
        &self,
        label: &str,
        request_timeout: std::time::Duration,
        max_attempts: u32,
    ) -> Result<http::JsonEndpoint, ProviderError> {
        http::JsonEndpoint::new(
            label,
            &self.base_url,
            &self.url(),
            self.headers(),
            self.api_key.as_deref(),
            request_timeout,
            max_attempts,
        )
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
    //! Provider resolution: flag over environment over file; pins name only the host and port.

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

    #[test]
    fn urls_and_headers_follow_the_api_the_version_and_the_key_header() {
        let plain = Endpoint::new(Api::Openai, "http://127.0.0.1:9/v1/").with_key("sk-1");
        assert_eq!(plain.url(), "http://127.0.0.1:9/v1/chat/completions");
        assert_eq!(
            plain.headers(),
            vec![("authorization".to_owned(), "Bearer sk-1".to_owned())]
        );
        let azure = Endpoint {
            key_header: Some("api-key".into()),
            api_version: Some("2024-10-21".into()),
            ..Endpoint::new(
                Api::Openai,
                "https://n.openai.azure.com/openai/deployments/d",
            )
            .with_key("sk-2")
        };
        assert_eq!(
            azure.url(),
            "https://n.openai.azure.com/openai/deployments/d/chat/completions?api-version=2024-10-21"
        );
        assert_eq!(
            azure.headers(),
            vec![("api-key".to_owned(), "sk-2".to_owned())]
        );
        let keyless = Endpoint {
            key_header: Some("api-key".into()),
            ..Endpoint::new(Api::Openai, "http://localhost:11434/v1")
        };
        assert_eq!(keyless.headers(), Vec::<(String, String)>::new());
        let anthropic = Endpoint::new(Api::Anthropic, "https://api.anthropic.com/").with_key("k");
        assert_eq!(anthropic.url(), "https://api.anthropic.com/v1/messages");
        assert_eq!(
            anthropic.headers(),
            vec![
                ("anthropic-version".to_owned(), ANTHROPIC_VERSION.to_owned()),
                ("x-api-key".to_owned(), "k".to_owned())
            ]
        );
    }

    /// The judge once ignored `OPENAI_API_VERSION` while the agent sent it: both now resolve
    /// the `api-version` here.
    #[test]
    fn api_version_and_key_header_resolve_variable_over_environment_over_file() {
        let file = EndpointSources {
            file_api_version: Some("2024-01-01"),
            file_key_header: Some("api-key"),
            ..EndpointSources::default()
        };
        let from_file = Endpoint::resolve(Api::Openai, file, &env(&[]));
        assert_eq!(from_file.api_version.as_deref(), Some("2024-01-01"));
        assert_eq!(from_file.key_header.as_deref(), Some("api-key"));
        let lookup = env(&[
            ("OPENAI_API_VERSION", "2024-10-21"),
            ("TOOLGATE_JUDGE_API_VERSION", "2025-01-01"),
            ("TOOLGATE_JUDGE_API_KEY_HEADER", "x-judge-key"),
        ]);
        assert_eq!(
            Endpoint::resolve(Api::Openai, file, &lookup)
                .api_version
                .as_deref(),
            Some("2024-10-21")
        );
        let judge = EndpointSources {
            api_version_variable: Some("TOOLGATE_JUDGE_API_VERSION"),
            key_header_variable: Some("TOOLGATE_JUDGE_API_KEY_HEADER"),
            ..file
        };
        let judged = Endpoint::resolve(Api::Openai, judge, &lookup);
        assert_eq!(judged.api_version.as_deref(), Some("2025-01-01"));
        assert_eq!(judged.key_header.as_deref(), Some("x-judge-key"));
        let anthropic = Endpoint::resolve(Api::Anthropic, judge, &lookup);
        assert_eq!((anthropic.api_version, anthropic.key_header), (None, None));
    }

    /// Regression: an Anthropic run was pinned as `openai-compatible api.anthropic.com`.
    #[test]
    fn the_pin_names_the_api_and_only_the_host_and_port() {
        let anthropic = Endpoint::resolve(Api::Anthropic, EndpointSources::default(), &env(&[]));
        assert_eq!(anthropic.pin(), "anthropic api.anthropic.com");
        let local = Endpoint::new(
            Api::Openai,
            "https://user:secret@api.example.com:8443/v1?key=x",
        )
        .with_key("sk-secret");
        assert_eq!(local.pin(), "openai-compatible api.example.com:8443");
        assert!(!format!("{local:?}").contains("sk-secret"));
        assert_eq!(url_host("not a url"), None);
    }
}
