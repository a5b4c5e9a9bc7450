//! The user simulator: a pinned model that plays the user of an open conversation
//! (`simulated_user`) from the scenario's goal, facts and `never_say`, or its recording of an
//! earlier run, replayed with no model.
//!
//! It takes the same role as a scripted user: after each reply of the agent it writes the
//! user's next message, or says it is done by answering [`DONE`]. It speaks to an
//! OpenAI-compatible chat-completions endpoint with a fixed, versioned system prompt
//! ([`prompt`]), at temperature 0 and with a seed by default; the model, the endpoint (its
//! host and path, never a key), the prompt's version and hash and the sampling settings are
//! pinned in the results ([`SimulatorPin`]). What it writes is checked for its mistakes by the
//! scorer, not here: this module only says what the user said.
//!
//! With a recording directory every message is also written to [`recording`]; a simulator
//! built by [`Simulator::replay`] answers from such a directory only, and a conversation the
//! recording does not hold is an error starting `not_recorded: user simulator:` (the run is
//! `errored`, and a gate with such runs fails, as with cassettes).

pub mod prompt;
pub mod recording;
mod session;

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::AgentError;
use crate::provider::http::JsonEndpoint;
use crate::provider::{Api, Endpoint};

pub use session::Session;

/// What the simulator answers to end the conversation. An answer that holds it anywhere ends
/// the conversation (the rest of that answer is not sent).
pub const DONE: &str = "###DONE###";

/// The simulator's default output-token limit per message: a user's chat message is short.
pub const DEFAULT_MAX_TOKENS: u32 = 512;

/// The simulator's default sampling seed; with temperature 0, a provider that honours seeds
/// answers the same conversation the same way.
pub const DEFAULT_SEED: u64 = 0;

/// Where and how to reach the simulator's model.
#[derive(Debug, Clone)]
pub struct SimulatorConfig {
    /// An OpenAI-compatible endpoint ([`Endpoint`], its key never shown).
    pub endpoint: Endpoint,
    /// The pinned model name; not blank.
    pub model: String,
    /// Sampling temperature, in 0.0..=2.0 (default 0).
    pub temperature: f64,
    /// Sampling seed ([`DEFAULT_SEED`] by default); `None` sends none.
    pub seed: Option<u64>,
    /// Output-token limit per message ([`DEFAULT_MAX_TOKENS`] by default); `None` sends none.
    pub max_tokens: Option<u32>,
    /// Timeout of one request.
    pub request_timeout: Duration,
    /// Attempts per request (429, 5xx and transport errors are retried), at least 1.
    pub max_attempts: u32,
}

impl SimulatorConfig {
    /// The defaults for `model` at `endpoint`: temperature 0, [`DEFAULT_SEED`],
    /// [`DEFAULT_MAX_TOKENS`], the agents' request timeout and attempts.
    pub fn new(endpoint: Endpoint, model: &str) -> SimulatorConfig {
        SimulatorConfig {
            endpoint,
            model: model.to_owned(),
            temperature: 0.0,
            seed: Some(DEFAULT_SEED),
            max_tokens: Some(DEFAULT_MAX_TOKENS),
            request_timeout: crate::defaults::REQUEST_TIMEOUT,
            max_attempts: crate::defaults::MAX_ATTEMPTS,
        }
    }

    /// The pin of this configuration: `base_url` without credentials, query or fragment.
    pub fn pin(&self) -> SimulatorPin {
        SimulatorPin {
            model: self.model.clone(),
            base_url: public_url(&self.endpoint.base_url),
            prompt_version: prompt::PROMPT_VERSION,
            prompt_sha256: prompt::prompt_sha256(),
            temperature: self.temperature,
            seed: self.seed,
            max_tokens: self.max_tokens,
        }
    }
}

/// The user simulator as pinned in the results (`run.user_simulator`) and in its recordings:
/// everything that decides what it writes, and no secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimulatorPin {
    /// The model name.
    pub model: String,
    /// The endpoint's base URL without credentials, query or fragment (never the key).
    pub base_url: String,
    /// [`prompt::PROMPT_VERSION`] of the system prompt it was given.
    pub prompt_version: u32,
    /// Lowercase hex SHA-256 of that system prompt as written ([`prompt::prompt_sha256`]).
    pub prompt_sha256: String,
    /// Sampling temperature sent.
    pub temperature: f64,
    /// Sampling seed sent; `None` when none was.
    pub seed: Option<u64>,
    /// Output-token limit per message sent; `None` when none was.
    pub max_tokens: Option<u32>,
}

impl SimulatorPin {
    /// One line for pins and notes: `MODEL at BASE_URL, prompt vN (12 hex), temperature T,
    /// seed S, max_tokens M`.
    pub fn describe(&self) -> String {
        let or_none = |value: Option<String>| value.unwrap_or_else(|| "none".to_owned());
        format!(
            "{} at {}, prompt v{} ({}), temperature {}, seed {}, max_tokens {}",
            self.model,
            self.base_url,
            self.prompt_version,
            self.prompt_sha256.get(..12).unwrap_or(&self.prompt_sha256),
            self.temperature,
            or_none(self.seed.map(|seed| seed.to_string())),
            or_none(self.max_tokens.map(|limit| limit.to_string())),
        )
    }
}

/// One exchange of the conversation so far, as the simulator is shown it: what the user said
/// (the prompt first) and the agent's reply.
#[derive(Debug, Clone, Copy)]
pub struct Turn<'a> {
    /// The user's message.
    pub user: &'a str,
    /// The agent's reply; `None` when it gave none.
    pub reply: Option<&'a str>,
}

/// A configured user simulator, shared by every run of a suite.
#[derive(Debug)]
pub struct Simulator {
    source: Source,
    pin: Option<SimulatorPin>,
}

#[derive(Debug)]
enum Source {
    /// The model, and where to record what it writes.
    Live {
        config: Box<SimulatorConfig>,
        http: Box<JsonEndpoint>,
        record: Option<PathBuf>,
    },
    /// A recording directory (`DIR/users/`), answered from without a model.
    Replay { dir: PathBuf },
}

impl Simulator {
    /// A simulator that asks the model of `config`, and with `record` also writes every run's
    /// messages to `record/users/` (see [`recording`]).
    ///
    /// Errors (`AgentError::Config`): a blank model, an endpoint that is not OpenAI-compatible,
    /// a temperature outside 0..=2, or what [`Endpoint`]'s client refuses (a base URL that is
    /// not http(s), a bad key header, 0 attempts).
    pub fn new(config: SimulatorConfig, record: Option<PathBuf>) -> Result<Simulator, AgentError> {
        if config.model.trim().is_empty() {
            return Err(AgentError::Config(
                "the user simulator's model name is empty".to_owned(),
            ));
        }
        if config.endpoint.api != Api::Openai {
            return Err(AgentError::Config(
                "the user simulator needs an OpenAI-compatible endpoint".to_owned(),
            ));
        }
        if !(0.0..=2.0).contains(&config.temperature) {
            return Err(AgentError::Config(format!(
                "the user simulator's temperature {} is not in 0..=2",
                config.temperature
            )));
        }
        let http = config.endpoint.client(
            "user simulator",
            config.request_timeout,
            config.max_attempts,
        )?;
        Ok(Simulator {
            pin: Some(config.pin()),
            source: Source::Live {
                config: Box::new(config),
                http: Box::new(http),
                record,
            },
        })
    }

    /// A simulator that answers from the recordings in `dir/users/` with no model; its pin is
    /// theirs (`None` when there are none).
    ///
    /// Errors: a recording that cannot be read, or recordings of two simulators.
    pub fn replay(dir: PathBuf) -> anyhow::Result<Simulator> {
        let pin = recording::pin_of(&dir)?;
        Ok(Simulator {
            source: Source::Replay { dir },
            pin,
        })
    }

    /// What is pinned in the results: the configured simulator, or the recorded one.
    pub fn pin(&self) -> Option<&SimulatorPin> {
        self.pin.as_ref()
    }

    /// Whether it answers from recordings only.
    pub fn is_replay(&self) -> bool {
        matches!(self.source, Source::Replay { .. })
    }

    /// The recording directory it writes to or answers from (recordings go under
    /// [`recording::SUBDIRECTORY`] in it); `None` for a model that records nothing.
    pub fn directory(&self) -> Option<&std::path::Path> {
        match &self.source {
            Source::Live { record, .. } => record.as_deref(),
            Source::Replay { dir } => Some(dir),
        }
    }

    /// The conversation of run `repeat` of scenario `scenario_id`.
    pub fn session(&self, scenario_id: &str, repeat: u32) -> Session<'_> {
        Session::new(self, scenario_id, repeat)
    }
}

/// `url` with its `user:password@`, `?query` and `#fragment` removed (`url` itself when it
/// has no `scheme://`).
fn public_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let rest = rest.split(['?', '#']).next().unwrap_or_default();
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    format!("{scheme}://{host}{path}")
}

#[cfg(test)]
mod tests {
    //! The simulator's pin: no credentials; its config is checked.

    use super::*;

    #[test]
    fn the_pin_keeps_no_credentials_query_or_fragment() {
        assert_eq!(
            public_url("https://user:secret@llm.example.com:8443/v1?key=sk-1#x"),
            "https://llm.example.com:8443/v1"
        );
        assert_eq!(public_url("http://127.0.0.1:9"), "http://127.0.0.1:9");
        assert_eq!(public_url("not a url"), "not a url");
        let config = SimulatorConfig::new(
            Endpoint::new(Api::Openai, "https://u:p@example.com/v1").with_key("sk-secret"),
            "sim-1",
        );
        let pin = config.pin();
        assert_eq!(pin.base_url, "https://example.com/v1");
        assert_eq!(
            (pin.temperature, pin.seed, pin.max_tokens),
            (0.0, Some(0), Some(512))
        );
        assert!(
            !serde_json::to_string(&pin)
                .expect("serializes")
                .contains("secret")
        );
        assert_eq!(
            pin.describe(),
            format!(
                "sim-1 at https://example.com/v1, prompt v1 ({}), temperature 0, seed 0, \
                 max_tokens 512",
                &prompt::prompt_sha256()[..12]
            )
        );
    }

    #[test]
    fn a_blank_model_or_an_anthropic_endpoint_is_refused() {
        let endpoint = Endpoint::new(Api::Openai, "http://127.0.0.1:9/v1");
        let error = |config| {
            Simulator::new(config, None)
                .expect_err("refused")
                .to_string()
        };
        assert_eq!(
            error(SimulatorConfig::new(endpoint.clone(), " ")),
            "the user simulator's model name is empty"
        );
        assert_eq!(
            error(SimulatorConfig::new(
                Endpoint::new(Api::Anthropic, "http://127.0.0.1:9"),
                "m"
            )),
            "the user simulator needs an OpenAI-compatible endpoint"
        );
        let mut hot = SimulatorConfig::new(endpoint, "m");
        hot.temperature = 3.0;
        assert_eq!(
            error(hot),
            "the user simulator's temperature 3 is not in 0..=2"
        );
    }
}
