//! Delivery on GitHub Actions: the step summary, step outputs and annotations go to the
//! files and log the runner reads. The text comes from `report::github` and
//! `report::markdown`; this module only finds where it goes.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher as _, Hasher as _};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

use crate::report::github::render_outputs;
use crate::report::markdown::Links;

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
    /// `$GITHUB_SERVER_URL/$GITHUB_REPOSITORY` (`https://github.com/OWNER/REPO`).
    pub repository_url: Option<String>,
    /// `$GITHUB_SHA`: the commit the workflow runs on (a pull request's merge commit).
    pub sha: Option<String>,
    /// `$GITHUB_RUN_ID`.
    pub run_id: Option<String>,
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
            repository_url: match (
                env("GITHUB_SERVER_URL").filter(|v| !v.is_empty()),
                env("GITHUB_REPOSITORY").filter(|v| !v.is_empty()),
            ) {
                (Some(server), Some(repository)) => {
                    Some(format!("{}/{repository}", server.trim_end_matches('/')))
                }
                _ => None,
            },
            sha: env("GITHUB_SHA").filter(|v| !v.is_empty()),
            run_id: env("GITHUB_RUN_ID").filter(|v| !v.is_empty()),
        }
    }

    /// Links for the report: scenario files at the pull request's head commit (from the
    /// event; `$GITHUB_SHA` otherwise, which on a pull request is a merge commit that may
    /// be gone later), and the run's page. `None` without the repository's address or a
    /// commit. `root` is the suite root relative to the repository.
    pub fn links(&self, root: &Path) -> Option<Links> {
        let repository = self.repository_url.as_deref()?;
        let head = self.event_payload().and_then(|event| {
            event["pull_request"]["head"]["sha"]
                .as_str()
                .map(str::to_owned)
        });
        let commit = head.or_else(|| self.sha.clone())?;
        Some(Links {
            files: format!("{repository}/blob/{commit}/"),
            root: root.to_path_buf(),
            run: self
                .run_id
                .as_ref()
                .map(|id| format!("{repository}/actions/runs/{id}")),
        })
    }

    /// The pull request number of a `pull_request` event, if this is one.
    pub fn pull_request(&self) -> Option<u64> {
        self.event_payload()?["pull_request"]["number"].as_u64()
    }

    /// The event's JSON payload (`$GITHUB_EVENT_PATH`); `None` when absent or unreadable.
    fn event_payload(&self) -> Option<serde_json::Value> {
        let text = crate::fs::read_text(
            self.event.as_ref()?,
            "event payload",
            crate::defaults::MAX_DATA_FILE_BYTES,
        )
        .ok()?;
        serde_json::from_str(&text).ok()
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

#[cfg(test)]
mod tests {
    //! CI links: files at the pull request's head commit, the run by its id, none without a repo.

    use super::*;

    fn runner(vars: &[(&str, &str)]) -> Runner {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Runner::from_env(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn links_use_the_pull_requests_head_commit_and_the_run_id() {
        let dir = tempfile::tempdir().expect("temp dir");
        let event = dir.path().join("event.json");
        std::fs::write(
            &event,
            r#"{"pull_request": {"number": 7, "head": {"sha": "feedface"}}}"#,
        )
        .expect("write event");
        let event = event.display().to_string();
        let on_pr = runner(&[
            ("GITHUB_SERVER_URL", "https://github.com/"),
            ("GITHUB_REPOSITORY", "acme/agent"),
            ("GITHUB_SHA", "merge0001"),
            ("GITHUB_RUN_ID", "99"),
            ("GITHUB_EVENT_PATH", &event),
        ]);
        assert_eq!(
            on_pr.links(Path::new("evals")),
            Some(Links {
                files: "https://github.com/acme/agent/blob/feedface/".to_owned(),
                root: PathBuf::from("evals"),
                run: Some("https://github.com/acme/agent/actions/runs/99".to_owned()),
            })
        );
        let on_push = runner(&[
            ("GITHUB_SERVER_URL", "https://ghe.example"),
            ("GITHUB_REPOSITORY", "acme/agent"),
            ("GITHUB_SHA", "abc123"),
        ]);
        let links = on_push.links(Path::new(".")).expect("links");
        assert_eq!(links.files, "https://ghe.example/acme/agent/blob/abc123/");
        assert_eq!(links.run, None);
        assert_eq!(
            runner(&[("GITHUB_SHA", "abc123")]).links(Path::new(".")),
            None
        );
    }
}
