//! Elicitation in the harness: a tool of the scenario's `elicitations` asks the user for input
//! (MCP `elicitation/create`) through the agent's client before it runs.
//!
//! Three parties: the harness asks the *client* (through an [`Asker`], which the MCP server
//! makes from the calling connection); a faithful client shows the request to the *user*, who
//! is toolgate's ([`Elicitations::ask_user`], reached by the in-process client's handler or
//! by a `command` agent's client through the user endpoint), and returns the user's answer.
//! [`Elicitations`] remembers what the user saw, so the harness can record whether the answer
//! the server got is the user's.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde_json::Value;

use crate::scenario::{Elicitation, ElicitationAction, ElicitationReply, Scenario};

/// Who answers elicitations for toolgate: the scenario's scripted replies ([`ScriptedUser`]),
/// or another user (a simulator) plugged in with [`Elicitations::new`].
pub trait ElicitationUser: Send + Sync {
    /// The answer to being asked `message` with the form `schema` (MCP's `requestedSchema`,
    /// a JSON object; `Value::Null` when the client sent none).
    fn answer<'a>(&'a self, message: &'a str, schema: &'a Value)
    -> BoxFuture<'a, ElicitationReply>;
}

/// The scripted user: answers each request with the `reply` of the scenario's first
/// elicitation whose `message` is the one shown, and declines a request the scenario does not
/// have (a message the client made up or changed).
#[derive(Debug, Clone)]
pub struct ScriptedUser {
    elicitations: Vec<Elicitation>,
}

impl ScriptedUser {
    /// The user who answers as `elicitations` say.
    pub fn new(elicitations: Vec<Elicitation>) -> ScriptedUser {
        ScriptedUser { elicitations }
    }
}

impl ElicitationUser for ScriptedUser {
    fn answer<'a>(
        &'a self,
        message: &'a str,
        _schema: &'a Value,
    ) -> BoxFuture<'a, ElicitationReply> {
        let reply = self
            .elicitations
            .iter()
            .find(|asked| asked.message == message)
            .map_or(
                ElicitationReply {
                    action: ElicitationAction::Decline,
                    content: None,
                },
                |asked| asked.reply.clone(),
            );
        Box::pin(std::future::ready(reply))
    }
}

/// The elicitations of one run: what the scenario's tools ask, the user who answers, and what
/// the user answered since the harness last sent a request.
pub struct Elicitations {
    asked: Vec<Elicitation>,
    user: Arc<dyn ElicitationUser>,
    /// The user's answers since [`Elicitations::open`], in order.
    seen: Mutex<Vec<ElicitationReply>>,
}

impl std::fmt::Debug for Elicitations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Elicitations")
            .field("asked", &self.asked)
            .finish_non_exhaustive()
    }
}

impl Elicitations {
    /// The run's elicitations `asked` (a scenario's, at most one per tool), answered by `user`.
    pub fn new(asked: Vec<Elicitation>, user: Arc<dyn ElicitationUser>) -> Elicitations {
        Elicitations {
            asked,
            user,
            seen: Mutex::new(Vec::new()),
        }
    }

    /// `scenario`'s elicitations answered by its scripted replies; `None` when it has none.
    pub fn scripted(scenario: &Scenario) -> Option<Arc<Elicitations>> {
        if scenario.elicitations.is_empty() {
            return None;
        }
        let user = ScriptedUser::new(scenario.elicitations.clone());
        Some(Arc::new(Elicitations::new(
            scenario.elicitations.clone(),
            Arc::new(user),
        )))
    }

    /// Shows a request to the user and returns the answer, remembering it for the harness:
    /// what a client calls when it asks its user (the in-process client's handler, the user
    /// endpoint of a `command` agent).
    pub async fn ask_user(&self, message: &str, schema: &Value) -> ElicitationReply {
        let reply = self.user.answer(message, schema).await;
        self.lock().push(reply.clone());
        reply
    }

    /// The elicitation calls of `tool` make, with its index in the scenario's list.
    pub(super) fn for_tool(&self, tool: &str) -> Option<(usize, &Elicitation)> {
        self.asked
            .iter()
            .enumerate()
            .find(|(_, asked)| asked.tool == tool)
    }

    /// Forgets what the user answered so far: the harness is about to send a request.
    pub(super) fn open(&self) {
        self.lock().clear();
    }

    /// What the user answered since [`Elicitations::open`] (the last answer, when the client
    /// showed the request more than once); `None` when the user saw nothing.
    pub(super) fn take_seen(&self) -> Option<ElicitationReply> {
        self.lock().drain(..).next_back()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<ElicitationReply>> {
        // A panic while pushing an answer leaves at worst one answer missing.
        self.seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// How the harness reaches the calling client to ask it an elicitation: made by the MCP
/// server per call from the connection the call came on.
pub(crate) trait Asker: Send + Sync {
    /// Sends `asked` (its message and schema) to the client and waits for its answer.
    /// `Err` says why the server got no answer, as a lowercase fragment such as `the client
    /// does not declare the elicitation capability`.
    fn ask<'a>(&'a self, asked: &'a Elicitation)
    -> BoxFuture<'a, Result<ElicitationReply, String>>;
}

/// The asker of a call made without an MCP client (toolgate's own plays, such as `verify`
/// playing a written trajectory): a faithful client, which shows the request to the run's
/// user and returns the user's answer.
pub(crate) struct OwnPlay<'a>(pub(crate) Option<&'a Elicitations>);

impl Asker for OwnPlay<'_> {
    fn ask<'a>(
        &'a self,
        asked: &'a Elicitation,
    ) -> BoxFuture<'a, Result<ElicitationReply, String>> {
        Box::pin(async move {
            let Some(elicitations) = self.0 else {
                return Err("the run has no user to ask".to_owned());
            };
            elicitations.open();
            Ok(elicitations.ask_user(&asked.message, &asked.schema).await)
        })
    }
}

/// The tool error a call of `tool` answers with when it did not run because of the
/// elicitation's answer or its failure (`Err` as from [`Asker::ask`]); `None` when the user
/// accepted and the tool runs.
pub(super) fn refusal(tool: &str, asked: &Result<ElicitationReply, String>) -> Option<String> {
    match asked {
        Ok(reply) => match reply.action {
            ElicitationAction::Accept => None,
            ElicitationAction::Decline => Some(format!(
                "`{tool}` was not run: the user declined the request for input"
            )),
            ElicitationAction::Cancel => Some(format!(
                "`{tool}` was not run: the user cancelled the request for input"
            )),
        },
        Err(why) => Some(format!(
            "`{tool}` was not run: it needs the user's input, but {why}"
        )),
    }
}

#[cfg(test)]
mod tests {
    //! The scripted user answers by message and declines what the scenario does not ask; the
    //! run remembers only what the user saw since the last request.

    use serde_json::json;

    use super::*;

    fn refund(action: ElicitationAction) -> Elicitation {
        Elicitation {
            tool: "billing_issue_refund".into(),
            message: "Refund the invoice?".into(),
            schema: json!({"type": "object", "properties": {}}),
            reply: ElicitationReply {
                action,
                content: None,
            },
        }
    }

    #[tokio::test]
    async fn the_scripted_user_answers_by_message_and_the_run_keeps_what_it_saw() {
        let asked = vec![refund(ElicitationAction::Cancel)];
        let run = Elicitations::new(asked.clone(), Arc::new(ScriptedUser::new(asked)));
        assert_eq!(run.take_seen(), None);
        run.open();
        let schema = json!({"type": "object"});
        let answer = run.ask_user("Refund the invoice?", &schema).await;
        assert_eq!(answer.action, ElicitationAction::Cancel);
        let made_up = run.ask_user("Delete everything?", &schema).await;
        assert_eq!(made_up.action, ElicitationAction::Decline);
        assert_eq!(run.take_seen(), Some(made_up));
        assert_eq!(run.take_seen(), None, "taken once");
        assert_eq!(
            run.for_tool("billing_issue_refund").map(|(index, _)| index),
            Some(0)
        );
        assert!(run.for_tool("billing_get_invoice").is_none());
    }

    #[test]
    fn a_call_runs_only_when_the_user_accepted() {
        let reply = |action| {
            Ok(ElicitationReply {
                action,
                content: None,
            })
        };
        assert_eq!(refusal("t", &reply(ElicitationAction::Accept)), None);
        assert_eq!(
            refusal("t", &reply(ElicitationAction::Decline)).as_deref(),
            Some("`t` was not run: the user declined the request for input")
        );
        assert_eq!(
            refusal("t", &reply(ElicitationAction::Cancel)).as_deref(),
            Some("`t` was not run: the user cancelled the request for input")
        );
        assert_eq!(
            refusal(
                "t",
                &Err("the client does not declare the elicitation capability".into())
            )
            .as_deref(),
            Some(
                "`t` was not run: it needs the user's input, but the client does not declare \
                 the elicitation capability"
            )
        );
    }
}
