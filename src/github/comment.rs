//! The sticky comment: one comment per gate key on a pull request, found again by its hidden
//! marker and its author across every page of comments, then updated in place (or left alone
//! when its body is already the same); created when there is none.
//!
//! The author is the token's own identity: the login `GET /user` returns for a personal
//! access token, or, for the tokens that cannot read `/user` (the workflow's `GITHUB_TOKEN`
//! and GitHub App installation tokens, whose comments are posted by a bot), any bot account.
//! `--comment-author` names it outright.

use anyhow::{Context as _, Result, anyhow};
use octocrab::Octocrab;
use serde_json::{Value, json};

use super::{Connection, status_of};

/// Comments fetched per page (GitHub's maximum).
const PER_PAGE: usize = 100;

/// The most pages of comments read: 10,000 comments, far beyond a real pull request. An API
/// that ignores `page` (some caching proxies) would otherwise be read forever.
const MAX_PAGES: usize = 100;

/// Attempts of the whole find-then-write step when GitHub answers 5xx or the connection fails.
/// Each attempt lists the comments again first, so a comment that a failed POST did create is
/// found and updated, never posted twice.
pub const ATTEMPTS: u32 = 3;

/// Wait before the second attempt; doubled before each later one.
pub const FIRST_BACKOFF: std::time::Duration = std::time::Duration::from_secs(1);

/// The most the comment step may take, all attempts included: the verdict is already printed,
/// and a CI job must end with it, not be cancelled while a comment is retried.
pub const DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

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
///
/// A 5xx answer or a failed connection is tried again, up to [`ATTEMPTS`] times with a
/// doubling wait from [`FIRST_BACKOFF`], each time from the listing (so never two comments);
/// 401/403/404 is [`CommentError::Forbidden`] at once. The whole step ends within
/// [`DEADLINE`].
pub async fn upsert(
    connection: &Connection,
    pr: u64,
    marker: &str,
    author: &Author,
    body: &str,
) -> Result<Posted, CommentError> {
    let attempts = async {
        let mut wait = FIRST_BACKOFF;
        for attempt in 1..=ATTEMPTS {
            match attempt_upsert(connection, pr, marker, author, body).await {
                Err(Failure::Transient(_)) if attempt < ATTEMPTS => {
                    tokio::time::sleep(wait).await;
                    wait *= 2;
                }
                Err(Failure::Transient(error) | Failure::Final(error)) => return Err(error),
                Ok(posted) => return Ok(posted),
            }
        }
        unreachable!("the last attempt returns")
    };
    tokio::time::timeout(DEADLINE, attempts)
        .await
        .unwrap_or_else(|_| {
            Err(CommentError::Other(anyhow!(
                "the comment on pull request #{pr} was not written within {} s",
                DEADLINE.as_secs()
            )))
        })
}

/// Why one attempt failed: `Transient` (5xx, 429, transport) may succeed when tried again.
enum Failure {
    Transient(CommentError),
    Final(CommentError),
}

impl From<anyhow::Error> for Failure {
    fn from(error: anyhow::Error) -> Failure {
        Failure::Final(CommentError::Other(error))
    }
}

/// Whether a GitHub error may go away when the request is sent again.
fn transient(error: &octocrab::Error) -> bool {
    match status_of(error) {
        Some(status) => status >= 500 || status == 429,
        None => matches!(
            error,
            octocrab::Error::Hyper { .. } | octocrab::Error::Service { .. }
        ),
    }
}

/// One find-then-write attempt of [`upsert`].
async fn attempt_upsert(
    connection: &Connection,
    pr: u64,
    marker: &str,
    author: &Author,
    body: &str,
) -> Result<Posted, Failure> {
    let client = connection.client_without_retries()?;
    let (owner, name) = connection.owner_and_name()?;
    let author = resolve_owner(&client, author, pr).await?;
    let sticky = Sticky {
        client: &client,
        comments: format!("/repos/{owner}/{name}/issues/{pr}/comments"),
        pr,
        marker,
        author: &author,
    };
    let found = sticky.find(body).await?;
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
        None => client.post(&sticky.comments, Some(&payload)).await,
    };
    let reply = result.map_err(|error| {
        failed(
            error,
            pr,
            format!("failed to write the comment on pull request #{pr}"),
        )
    })?;
    let id = reply["id"]
        .as_u64()
        .context("GitHub's reply to the comment has no `id`")?;
    Ok(match found {
        Some(_) => Posted::Updated(id),
        None => Posted::Created(id),
    })
}

/// The failure of a request about pull request `pr` that was `doing` something: final and
/// [`CommentError::Forbidden`] for 401/403/404, transient when it may go away, else final.
fn failed(error: octocrab::Error, pr: u64, doing: String) -> Failure {
    if let Some(status) = status_of(&error).filter(|s| matches!(s, 401 | 403 | 404)) {
        return Failure::Final(CommentError::Forbidden { pr, status });
    }
    let retry = transient(&error);
    let error = CommentError::Other(anyhow!(error).context(doing));
    if retry {
        Failure::Transient(error)
    } else {
        Failure::Final(error)
    }
}

/// Who may own the sticky comment: the login named, the token's own login (`GET /user`), or
/// any bot for a token that cannot read `/user`.
async fn resolve_owner(client: &Octocrab, author: &Author, pr: u64) -> Result<Owner, Failure> {
    Ok(match author {
        Author::Login(login) => Owner::Login(login.clone()),
        Author::Token => match client.get::<Value, _, _>("/user", None::<&()>).await {
            Ok(user) => match user["login"].as_str() {
                Some(login) => Owner::Login(login.to_owned()),
                None => Owner::AnyBot,
            },
            Err(error) if matches!(status_of(&error), Some(401 | 403 | 404)) => Owner::AnyBot,
            Err(error) => {
                return Err(failed(
                    error,
                    pr,
                    "failed to find whose token this is (`GET /user`)".to_owned(),
                ));
            }
        },
    })
}

/// Where to look for the sticky comment of one pull request, and how to know it.
struct Sticky<'a> {
    client: &'a Octocrab,
    /// The route of the pull request's comments.
    comments: String,
    pr: u64,
    marker: &'a str,
    author: &'a Owner,
}

impl Sticky<'_> {
    /// The newest comment of the author that holds the marker, across every page: its id and
    /// whether it already reads `body`; `None` when there is none.
    async fn find(&self, body: &str) -> Result<Option<(u64, bool)>, Failure> {
        let pr = self.pr;
        let mut found: Option<(u64, bool)> = None;
        let mut first_page: Vec<Value> = Vec::new();
        for page in 1..=MAX_PAGES {
            let route = format!("{}?per_page={PER_PAGE}&page={page}", self.comments);
            let comments: Vec<Value> = match self.client.get(&route, None::<&()>).await {
                Ok(comments) => comments,
                Err(error) => {
                    return Err(failed(
                        error,
                        pr,
                        format!("failed to list the comments of pull request #{pr}"),
                    ));
                }
            };
            // A full page that repeats the first one: the API ignores `page`.
            let ids: Vec<Value> = comments
                .iter()
                .map(|comment| comment["id"].clone())
                .collect();
            if page == 1 {
                first_page = ids;
            } else if ids == first_page {
                return Err(Failure::Final(CommentError::Other(anyhow!(
                    "the API answered page {page} of the comments of pull request #{pr} with \
                     page 1 again: it ignores `page` (a caching proxy?), so the sticky comment \
                     cannot be looked for"
                ))));
            }
            for comment in &comments {
                let marked = comment["body"]
                    .as_str()
                    .is_some_and(|b| b.contains(self.marker));
                if marked
                    && self.author.owns(comment)
                    && let Some(id) = comment["id"].as_u64()
                {
                    found = Some((id, comment["body"].as_str() == Some(body)));
                }
            }
            if comments.len() < PER_PAGE {
                return Ok(found);
            }
        }
        Err(Failure::Final(CommentError::Other(anyhow!(
            "pull request #{pr} has more than {} comments; the sticky comment was not looked \
             for further",
            MAX_PAGES * PER_PAGE
        ))))
    }
}
