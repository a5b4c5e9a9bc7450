//! Delivery on GitHub Actions: the step summary, step outputs and annotations go to the
//! files and log the runner reads. The text comes from `report::github` and
//! `report::markdown`; this module only finds where it goes.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher as _, Hasher as _};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::report::github::render_outputs;

/// The runner's files, from the environment.
#[derive(Debug, Clone, Default)]
pub struct Runner {
    /// `$GITHUB_STEP_SUMMARY`.
    pub step_summary: Option<PathBuf>,
    /// `$GITHUB_OUTPUT`.
    pub output: Option<PathBuf>,
    /// `$GITHUB_EVENT_PATH`.
    pub event: Option<PathBuf>,
    /// `GITHUB_ACTIONS=true`.
    pub is_actions: bool,
}

impl Runner {
    /// Reads the runner's variables through `env`.
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Runner {
        let path = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        Runner {
            step_summary: path("GITHUB_STEP_SUMMARY"),
            output: path("GITHUB_OUTPUT"),
            event: path("GITHUB_EVENT_PATH"),
            is_actions: env("GITHUB_ACTIONS").as_deref() == Some("true"),
        }
    }

    /// The pull request number of a `pull_request` event, if this is one.
    pub fn pull_request(&self) -> Option<u64> {
        let text = std::fs::read_to_string(self.event.as_ref()?).ok()?;
        let event: serde_json::Value = serde_json::from_str(&text).ok()?;
        event["pull_request"]["number"].as_u64()
    }
}

/// Appends `text` to the file at `path` (the step summary and outputs are appended to).
pub fn append(path: &Path, text: &str) -> Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("failed to open `{}`", path.display()))?;
    file.write_all(text.as_bytes())
        .with_context(|| format!("failed to write `{}`", path.display()))
}

/// 128 random bits as hex. The standard library seeds each `RandomState` from the operating
/// system's random source; two hashers give two independent 64-bit values.
fn random_hex() -> String {
    let word = || {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        hasher.finish()
    };
    format!("{:016x}{:016x}", word(), word())
}

/// A random token for `::stop-commands::`, so that quoted text cannot run workflow commands
/// until `::TOKEN::` resumes them.
pub fn stop_token() -> String {
    format!("toolgate-{}", random_hex())
}

/// Writes `outputs` to `$GITHUB_OUTPUT` with a random heredoc delimiter, checked against
/// every value (a value holding the delimiter could otherwise set other outputs).
pub fn write_outputs(path: &Path, outputs: &[(&str, String)]) -> Result<()> {
    loop {
        let delimiter = format!("ghadelimiter_{}", random_hex());
        if let Some(text) = render_outputs(outputs, &delimiter) {
            return append(path, &text);
        }
    }
}
