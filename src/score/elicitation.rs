//! Elicitation checks: for every call that asked the user for input (the scenario's
//! `elicitations`), did the agent's MCP client show the request to the user and return the
//! user's answer to the server unchanged?
//!
//! The in-process client of the model agents and the reference always does. A `command`
//! agent's own client is what is tested: one that answers without asking (the user never saw
//! the request), or returns another answer than the user gave (accepts what the user
//! declined, or changes the content), fails. A client that cannot ask at all (it declares no
//! elicitation capability) fails too: the scenario needs a client that can. An elicitation
//! that never happened (the tool was never called) is no failure by itself.

use super::conversation::short;
use super::{Check, CheckKind};
use crate::trace::CallRecord;

/// One check per call of `trace` that made an elicitation, in call order, with subject
/// `elicitations[i]` (the scenario's entry); none for a trace without elicitations.
pub fn checks(trace: &[CallRecord]) -> Vec<Check> {
    trace
        .iter()
        .filter_map(|call| {
            let asked = call.elicitation.as_ref()?;
            let shown = short(&asked.message);
            let call_name = format!("call {} `{}`", call.index + 1, call.tool);
            let detail = match (&asked.answer, &asked.user, &asked.error) {
                (_, _, Some(error)) => format!(
                    "{call_name} could not ask the user {shown:?}: {error}; the scenario needs a \
                     client that can ask the user"
                ),
                (None, _, None) => {
                    format!("{call_name} got no answer to the elicitation {shown:?}")
                }
                (Some(answer), None, None) => format!(
                    "{call_name}: the client answered `{}` to an elicitation the user never saw \
                     ({shown:?})",
                    answer.describe()
                ),
                (Some(answer), Some(user), None) if !answer.agrees_with(user) => format!(
                    "{call_name}: the client returned `{}` where the user answered `{}` \
                     ({shown:?})",
                    answer.describe(),
                    user.describe()
                ),
                (Some(answer), Some(_), None) => format!(
                    "{call_name}: the user saw {shown:?} and the server got the user's answer \
                     (`{}`)",
                    answer.describe()
                ),
            };
            Some(Check {
                kind: CheckKind::Elicitation,
                subject: format!("elicitations[{}]", asked.index),
                passed: asked.is_faithful(),
                detail,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    //! One check per elicitation made: faithful, unseen, changed, and impossible ones.

    use serde_json::{Value, json};

    use super::*;
    use crate::scenario::{ElicitationAction, ElicitationReply};
    use crate::trace::ElicitationRecord;

    fn reply(action: ElicitationAction, content: Option<Value>) -> Option<ElicitationReply> {
        Some(ElicitationReply { action, content })
    }

    fn call(index: usize, elicitation: Option<ElicitationRecord>) -> CallRecord {
        CallRecord {
            elicitation,
            ..CallRecord::recorded(index, "billing_issue_refund", json!({"invoice_id": "I-1"}))
        }
    }

    fn asked(
        answer: Option<ElicitationReply>,
        user: Option<ElicitationReply>,
        error: Option<&str>,
    ) -> Option<ElicitationRecord> {
        Some(ElicitationRecord {
            index: 0,
            message: "Refund I-1?".to_owned(),
            answer,
            error: error.map(str::to_owned),
            user,
        })
    }

    #[test]
    fn each_elicitation_made_is_checked_against_what_the_user_answered() {
        use ElicitationAction::{Accept, Decline};
        let amount = Some(json!({"amount": 5}));
        let trace = vec![
            call(0, None),
            call(
                1,
                asked(
                    reply(Accept, amount.clone()),
                    reply(Accept, amount.clone()),
                    None,
                ),
            ),
            call(2, asked(reply(Accept, amount.clone()), None, None)),
            call(
                3,
                asked(reply(Accept, amount.clone()), reply(Decline, None), None),
            ),
            call(
                4,
                asked(
                    reply(Accept, Some(json!({"amount": 9}))),
                    reply(Accept, amount),
                    None,
                ),
            ),
            call(
                5,
                asked(
                    None,
                    None,
                    Some(
                        "the client cannot ask the user: it does not declare the elicitation \
                          capability",
                    ),
                ),
            ),
        ];
        let found: Vec<(bool, String, String)> = checks(&trace)
            .into_iter()
            .map(|check| {
                assert_eq!(check.kind, CheckKind::Elicitation);
                (check.passed, check.subject, check.detail)
            })
            .collect();
        let subject = "elicitations[0]".to_owned();
        assert_eq!(
            found,
            vec![
                (
                    true,
                    subject.clone(),
                    "call 2 `billing_issue_refund`: the user saw \"Refund I-1?\" and the server \
                     got the user's answer (`accept {\"amount\":5}`)"
                        .to_owned()
                ),
                (
                    false,
                    subject.clone(),
                    "call 3 `billing_issue_refund`: the client answered `accept {\"amount\":5}` \
                     to an elicitation the user never saw (\"Refund I-1?\")"
                        .to_owned()
                ),
                (
                    false,
                    subject.clone(),
                    "call 4 `billing_issue_refund`: the client returned `accept {\"amount\":5}` \
                     where the user answered `decline` (\"Refund I-1?\")"
                        .to_owned()
                ),
                (
                    false,
                    subject.clone(),
                    "call 5 `billing_issue_refund`: the client returned `accept {\"amount\":9}` \
                     where the user answered `accept {\"amount\":5}` (\"Refund I-1?\")"
                        .to_owned()
                ),
                (
                    false,
                    subject,
                    "call 6 `billing_issue_refund` could not ask the user \"Refund I-1?\": the \
                     client cannot ask the user: it does not declare the elicitation \
                     capability; the scenario needs a client that can ask the user"
                        .to_owned()
                ),
            ]
        );
    }
}
