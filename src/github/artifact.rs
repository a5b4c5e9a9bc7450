//! Baseline artifacts: the newest unexpired artifact of a name, uploaded by a successful
//! workflow run on the default branch, downloaded and unpacked.

use std::io::{Cursor, Read as _};

use anyhow::{Context as _, Result, bail};
use octocrab::params::actions::ArchiveFormat;
use serde_json::Value;

use super::Connection;

/// Artifacts inspected (newest first) before giving up.
const PER_PAGE: usize = 100;

/// The most fetching a baseline artifact may take, every request and the download included.
/// Each read has its own 60 s limit, but an API that drips a byte at a time never trips it.
pub const DEADLINE: std::time::Duration = std::time::Duration::from_secs(180);

/// The artifact that was used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// Artifact id.
    pub artifact_id: u64,
    /// The workflow run that uploaded it.
    pub run_id: u64,
    /// The file inside the zip that was read.
    pub file: String,
    /// Its text.
    pub text: String,
}

/// Fetches the newest artifact called `name` from a successful run on the default branch,
/// and returns its JSON file (`baseline.json` if present, else the only `.json` file).
///
/// Errors: no such artifact, API failures, a zip without a single JSON file, or no answer
/// within `deadline` (all requests together; [`DEADLINE`] in `gate`); each names the artifact.
pub async fn fetch_newest(
    connection: &Connection,
    name: &str,
    deadline: std::time::Duration,
) -> Result<Fetched> {
    match tokio::time::timeout(deadline, fetch(connection, name)).await {
        Ok(fetched) => fetched,
        Err(_) => bail!(
            "failed to fetch baseline artifact `{name}` of `{}`: GitHub did not finish \
             answering within {} s",
            connection.repository,
            deadline.as_secs_f64()
        ),
    }
}

async fn fetch(connection: &Connection, name: &str) -> Result<Fetched> {
    let client = connection.client()?;
    let (owner, repo) = connection.owner_and_name()?;
    let context = || format!("failed to fetch baseline artifact `{name}` of `{owner}/{repo}`");
    let repository: Value = client
        .get(format!("/repos/{owner}/{repo}"), None::<&()>)
        .await
        .with_context(context)?;
    let default_branch = repository["default_branch"]
        .as_str()
        .context("GitHub's repository reply has no `default_branch`")
        .with_context(context)?
        .to_string();
    let list: Value = client
        .get(
            format!(
                "/repos/{owner}/{repo}/actions/artifacts?name={}&per_page={PER_PAGE}",
                query_escape(name)
            ),
            None::<&()>,
        )
        .await
        .with_context(context)?;
    let mut artifacts: Vec<&Value> = list["artifacts"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    artifacts.retain(|a| {
        a["name"].as_str() == Some(name)
            && a["expired"].as_bool() != Some(true)
            && a["workflow_run"]["head_branch"].as_str() == Some(default_branch.as_str())
    });
    // Newest first: RFC 3339 UTC timestamps sort as text.
    artifacts.sort_by(|a, b| b["created_at"].as_str().cmp(&a["created_at"].as_str()));
    for artifact in artifacts {
        let (Some(artifact_id), Some(run_id)) = (
            artifact["id"].as_u64(),
            artifact["workflow_run"]["id"].as_u64(),
        ) else {
            continue;
        };
        let run: Value = client
            .get(
                format!("/repos/{owner}/{repo}/actions/runs/{run_id}"),
                None::<&()>,
            )
            .await
            .with_context(context)?;
        if run["conclusion"].as_str() != Some("success") {
            continue;
        }
        let bytes = client
            .actions()
            .download_artifact(owner, repo, artifact_id.into(), ArchiveFormat::Zip)
            .await
            .with_context(context)?;
        let (file, text) =
            unpack(&bytes).with_context(|| format!("artifact `{name}` (id {artifact_id})"))?;
        return Ok(Fetched {
            artifact_id,
            run_id,
            file,
            text,
        });
    }
    bail!(
        "no unexpired artifact `{name}` from a successful run on `{default_branch}` of `{owner}/{repo}`"
    )
}

/// Percent-encodes everything but unreserved characters (RFC 3986).
fn query_escape(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The JSON file of an artifact zip: `baseline.json` if present, else the only `.json`.
pub fn unpack(bytes: &[u8]) -> Result<(String, String)> {
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).context("not a zip archive")?;
    let names: Vec<String> = zip
        .file_names()
        .filter_map(Result::ok)
        .filter(|n| n.ends_with(".json"))
        .map(|n| n.into_owned())
        .collect();
    let chosen = names
        .iter()
        .find(|n| n.rsplit('/').next() == Some("baseline.json"))
        .or(if names.len() == 1 {
            names.first()
        } else {
            None
        })
        .with_context(|| {
            format!(
                "expected `baseline.json` or a single `.json` file, found {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )
        })?
        .clone();
    let mut text = String::new();
    zip.by_name(&chosen)
        .with_context(|| format!("failed to read `{chosen}`"))?
        .read_to_string(&mut text)
        .with_context(|| format!("`{chosen}` is not UTF-8 text"))?;
    Ok((chosen, text))
}
