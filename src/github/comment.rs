//! The sticky comment: one comment per gate key on a pull request, found again by its hidden
//! marker and its author across every page of comments, then updated in place; created when
//! there is none.

use anyhow::{Context as _, Result, anyhow};
use serde_json::{Value, json};

use super::{Connection, status_of};

/// Comments fetched per page (GitHub's maximum).
const PER_PAGE: usize = 100;

/// What happened to the comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Posted {
    /// A new comment with this id.
    Created(u64),
    /// The existing comment with this id was updated.
    Updated(u64),
}

/// Why the comment could not be posted.
#[derive(Debug, thiserror::Error)]
pub enum CommentError {
    /// The token may not comment: a fork's read-only token, or missing `pull-requests:
    /// write`.
    #[error(
        "the token may not comment on pull request #{pr} (HTTP {status}); a fork's read-only token cannot, and the workflow needs `pull-requests: write`"
    )]
    Forbidden {
        /// The pull request.
        pr: u64,
        /// 401, 403 or 404.
        status: u16,
    },
    /// Anything else (network, server error, unexpected reply).
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

/// Creates or updates the sticky comment on pull request `pr`: the newest comment whose
/// author is `author` and whose body contains `marker` is updated to `body`.
pub async fn upsert(
    connection: &Connection,
    pr: u64,
    marker: &str,
    author: &str,
    body: &str,
) -> Result<Posted, CommentError> {
    let client = connection.client()?;
    let (owner, name) = connection.owner_and_name()?;
    let forbidden = |error: &octocrab::Error| {
        status_of(error)
            .filter(|s| matches!(s, 401 | 403 | 404))
            .map(|status| CommentError::Forbidden { pr, status })
    };
    let mut found = None;
    for page in 1.. {
        let route =
            format!("/repos/{owner}/{name}/issues/{pr}/comments?per_page={PER_PAGE}&page={page}");
        let comments: Vec<Value> = match client.get(&route, None::<&()>).await {
            Ok(comments) => comments,
            Err(error) => {
                return Err(forbidden(&error).unwrap_or_else(|| {
                    anyhow!(error)
                        .context(format!("failed to list the comments of pull request #{pr}"))
                        .into()
                }));
            }
        };
        for comment in &comments {
            let by_author = comment["user"]["login"].as_str() == Some(author);
            let marked = comment["body"].as_str().is_some_and(|b| b.contains(marker));
            if by_author && marked {
                found = comment["id"].as_u64();
            }
        }
        if comments.len() < PER_PAGE {
            break;
        }
    }
    let payload = json!({ "body": body });
    let result: Result<Value, octocrab::Error> = match found {
        Some(id) => {
            client
                .patch(
                    format!("/repos/{owner}/{name}/issues/comments/{id}"),
                    Some(&payload),
                )
                .await
        }
        None => {
            client
                .post(
                    format!("/repos/{owner}/{name}/issues/{pr}/comments"),
                    Some(&payload),
                )
                .await
        }
    };
    let reply = result.map_err(|error| {
        forbidden(&error).unwrap_or_else(|| {
            CommentError::Other(
                anyhow!(error)
                    .context(format!("failed to write the comment on pull request #{pr}")),
            )
        })
    })?;
    let id = reply["id"]
        .as_u64()
        .context("GitHub's reply to the comment has no `id`")?;
    Ok(match found {
        Some(_) => Posted::Updated(id),
        None => Posted::Created(id),
    })
}
