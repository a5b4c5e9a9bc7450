//! The sticky comment: one comment per gate key on a pull request, found again by its hidden
//! marker and its author across every page of comments, then updated in place (or left alone
//! when its body is already the same); created when there is none.
//!
//! The author is the token's own identity: the login `GET /user` returns for a personal
//! access token, or, for the tokens that cannot read `/user` (the workflow's `GITHUB_TOKEN`
//! and GitHub App installation tokens, whose comments are posted by a bot), any bot account.
//! `--comment-author` names it outright.

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
    /// The existing comment with this id already had this body; nothing was sent.
    Unchanged(u64),
}

/// Whose comment is the sticky one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Author {
    /// This login (`--comment-author`).
    Login(String),
    /// The token's own identity, found as the module says.
    Token,
}

/// Who may own the sticky comment, once resolved.
enum Owner {
    Login(String),
    AnyBot,
}

impl Owner {
    fn owns(&self, comment: &Value) -> bool {
        let user = &comment["user"];
        match self {
            Owner::Login(login) => user["login"].as_str() == Some(login),
            Owner::AnyBot => user["type"].as_str() == Some("Bot"),
        }
    }
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

/// Creates or updates the sticky comment on pull request `pr`: the newest comment of `author`
/// whose body contains `marker` is updated to `body`, unless it already reads `body`.
pub async fn upsert(
    connection: &Connection,
    pr: u64,
    marker: &str,
    author: &Author,
    body: &str,
) -> Result<Posted, CommentError> {
    let client = connection.client()?;
    let (owner, name) = connection.owner_and_name()?;
    let forbidden = |error: &octocrab::Error| {
        status_of(error)
            .filter(|s| matches!(s, 401 | 403 | 404))
            .map(|status| CommentError::Forbidden { pr, status })
    };
    let author = match author {
        Author::Login(login) => Owner::Login(login.clone()),
        Author::Token => match client.get::<Value, _, _>("/user", None::<&()>).await {
            Ok(user) => match user["login"].as_str() {
                Some(login) => Owner::Login(login.to_owned()),
                None => Owner::AnyBot,
            },
            Err(error) if matches!(status_of(&error), Some(401 | 403 | 404)) => Owner::AnyBot,
            Err(error) => {
                return Err(anyhow!(error)
                    .context("failed to find whose token this is (`GET /user`)")
                    .into());
            }
        },
    };
    let mut found: Option<(u64, bool)> = None;
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
            let marked = comment["body"].as_str().is_some_and(|b| b.contains(marker));
            if marked
                && author.owns(comment)
                && let Some(id) = comment["id"].as_u64()
            {
                found = Some((id, comment["body"].as_str() == Some(body)));
            }
        }
        if comments.len() < PER_PAGE {
            break;
        }
    }
    if let Some((id, true)) = found {
        return Ok(Posted::Unchanged(id));
    }
    let found = found.map(|(id, _)| id);
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
