//! Elicitations (`elicitations`): what a tool asks the user mid-call over MCP
//! (`elicitation/create`), and what the scripted user answers. The harness asks; scoring
//! compares the answer the tool got with the user's.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How the user answered an elicitation (MCP's `action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ElicitationAction {
    /// The user submitted the form: `content` holds the values.
    Accept,
    /// The user said no: the tool does not run.
    Decline,
    /// The user dismissed the request without choosing: the tool does not run.
    Cancel,
}

impl ElicitationAction {
    /// The name in files, traces and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitationAction::Accept => "accept",
            ElicitationAction::Decline => "decline",
            ElicitationAction::Cancel => "cancel",
        }
    }
}

/// An answer to an elicitation: the scripted user's, or the one a client returned to the
/// server (MCP's `ElicitResult` without `_meta`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ElicitationReply {
    /// Accept, decline or cancel.
    pub action: ElicitationAction,
    /// The submitted values, with `accept`: an object valid against the requested schema in a
    /// scenario file; whatever the client sent in a trace. Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Value>,
}

impl ElicitationReply {
    /// Whether `other` is the same answer: the same action and, for `accept`, the same
    /// content (an absent content counts as `{}`). Content sent with a decline or cancel
    /// carries nothing and is not compared.
    pub fn agrees_with(&self, other: &ElicitationReply) -> bool {
        let content = |reply: &ElicitationReply| {
            reply
                .content
                .clone()
                .unwrap_or_else(|| Value::Object(serde_json::Map::new()))
        };
        self.action == other.action
            && (self.action != ElicitationAction::Accept || content(self) == content(other))
    }

    /// The answer in a few words for a check's detail: `accept {"amount":5}`, `decline`.
    pub fn describe(&self) -> String {
        match (&self.content, self.action) {
            (Some(content), ElicitationAction::Accept) => format!("accept {content}"),
            _ => self.action.as_str().to_owned(),
        }
    }
}

/// One validated entry of `elicitations`: every call of `tool` that would run asks the user
/// `message` first, and the scripted user answers `reply`.
#[derive(Debug, Clone, PartialEq)]
pub struct Elicitation {
    /// A tool of the catalog; no other entry names it.
    pub tool: String,
    /// What the user is asked; not blank.
    pub message: String,
    /// MCP's `requestedSchema`: a JSON Schema object with `type: object` and `properties`
    /// (strings, numbers, integers, booleans and string enums only), and optionally
    /// `required`, `title`, `description`.
    pub schema: Value,
    /// What the scripted user answers; with `accept`, its content is valid against `schema`.
    pub reply: ElicitationReply,
}

#[cfg(test)]
mod tests {
    //! Comparing answers: the action always, the content only for `accept`.

    use serde_json::json;

    use super::*;

    fn reply(action: ElicitationAction, content: Option<Value>) -> ElicitationReply {
        ElicitationReply { action, content }
    }

    #[test]
    fn answers_agree_on_the_action_and_an_accepts_content() {
        use ElicitationAction::{Accept, Cancel, Decline};
        assert!(reply(Accept, None).agrees_with(&reply(Accept, Some(json!({})))));
        assert!(
            !reply(Accept, Some(json!({"n": 1})))
                .agrees_with(&reply(Accept, Some(json!({"n": 2}))))
        );
        assert!(reply(Decline, Some(json!({"n": 1}))).agrees_with(&reply(Decline, None)));
        assert!(!reply(Decline, None).agrees_with(&reply(Cancel, None)));
        assert!(!reply(Accept, None).agrees_with(&reply(Decline, None)));
        assert_eq!(
            reply(Accept, Some(json!({"n": 1}))).describe(),
            r#"accept {"n":1}"#
        );
        assert_eq!(reply(Cancel, Some(json!({}))).describe(), "cancel");
    }
}
