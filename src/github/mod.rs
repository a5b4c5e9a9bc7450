//! GitHub's REST API (through octocrab, which lives only here): the sticky pull-request
//! comment and baseline artifacts. Every call goes to `GITHUB_API_URL` (GitHub Enterprise
//! Server differs from github.com). Nothing here prints; callers decide what a failure means.

pub mod artifact;
pub mod ci;
pub mod comment;

use std::time::Duration;

use anyhow::{Context as _, Result, bail};
use octocrab::Octocrab;

/// The public GitHub API, used when `GITHUB_API_URL` is not set.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// Where to reach GitHub and as whom.
#[derive(Clone)]
pub struct Connection {
    /// API base URL, e.g. `https://api.github.com` (`GITHUB_API_URL`).
    pub api_url: String,
    /// The token (`GITHUB_TOKEN`); never printed.
    pub token: String,
    /// `owner/name` (`GITHUB_REPOSITORY`).
    pub repository: String,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("api_url", &self.api_url)
            .field("token", &"<redacted>")
            .field("repository", &self.repository)
            .finish()
    }
}

impl Connection {
    /// Reads `GITHUB_API_URL`, `GITHUB_TOKEN` and `GITHUB_REPOSITORY` from `env`. `None`
    /// when there is no token or no repository.
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Option<Connection> {
        let non_empty = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        Some(Connection {
            api_url: non_empty("GITHUB_API_URL").unwrap_or_else(|| DEFAULT_API_URL.to_string()),
            token: non_empty("GITHUB_TOKEN")?,
            repository: non_empty("GITHUB_REPOSITORY")?,
        })
    }

    /// `(owner, name)` of the repository. Errors: not `owner/name`.
    pub fn owner_and_name(&self) -> Result<(&str, &str)> {
        match self.repository.split_once('/') {
            Some((owner, name)) if !owner.is_empty() && !name.is_empty() && !name.contains('/') => {
                Ok((owner, name))
            }
            _ => bail!("repository `{}` is not `owner/name`", self.repository),
        }
    }

    /// An API client; must run inside a tokio runtime. It resends a request answered 5xx (up
    /// to 3 times, octocrab's default): right for reads.
    fn client(&self) -> Result<Octocrab> {
        self.build_client(true)
    }

    /// An API client that never resends a request, for writes: octocrab resends 5xx answers at
    /// once, without a wait, and a resent POST can post a comment twice. `comment::upsert`
    /// retries its whole find-then-write step instead.
    fn client_without_retries(&self) -> Result<Octocrab> {
        self.build_client(false)
    }

    fn build_client(&self, retries: bool) -> Result<Octocrab> {
        crate::tls::install_crypto_provider();
        let builder = Octocrab::builder()
            .base_uri(self.api_url.as_str())
            .with_context(|| format!("`{}` is not a URL for the GitHub API", self.api_url))?
            .personal_token(self.token.clone())
            // GitHub's documented media type; octocrab itself sends `X-GitHub-Api-Version`.
            .add_header(
                http::header::ACCEPT,
                "application/vnd.github+json".to_owned(),
            )
            .set_connect_timeout(Some(Duration::from_secs(10)))
            .set_read_timeout(Some(Duration::from_secs(60)));
        let builder = if retries {
            builder
        } else {
            builder.add_retry_config(octocrab::service::middleware::retry::RetryConfig::None)
        };
        builder.build().context("failed to build the GitHub client")
    }
}

/// The HTTP status of a GitHub error response, if that is what `error` is.
fn status_of(error: &octocrab::Error) -> Option<u16> {
    match error {
        octocrab::Error::GitHub { source, .. } => Some(source.status_code.as_u16()),
        _ => None,
    }
}
