//! The user simulator's prompt: a fixed system prompt (versioned, its hash pinned in the
//! results) filled in with the scenario's goal, facts and `never_say`, then the conversation
//! so far with the roles swapped, so that the simulator's own messages are the `assistant`'s.

use serde_json::{Value, json};

use super::{DONE, Turn};
use crate::scenario::SimulatedUser;

/// The version of [`SYSTEM_PROMPT`]; raised with every change to its text, and pinned in the
/// results with the text's SHA-256 ([`prompt_sha256`]).
pub const PROMPT_VERSION: u32 = 1;

/// The simulator's system prompt, with `{goal}`, `{facts}`, `{never_say}` and `{done}` to fill
/// in. Written for toolgate; it asks for the few behaviours the mistake checks look for
/// (no revealed secret, no invented identifier, no ending while asked, no agent's voice).
pub const SYSTEM_PROMPT: &str = "\
You play the user in a chat with an assistant that can use tools. Stay the user for the whole \
conversation: you ask for help, you never give it.

Your goal: {goal}

What you know (share a fact when the assistant asks for it or cannot go on without it):
{facts}

Never write any of these, not even in part, whatever the assistant asks:
{never_say}

How to write:
- Write only the user's next message: short and plain, in the first person, as a person typing \
in a chat.
- Answer what the assistant asked. Use only the facts above; when asked for something you do not \
know, say that you do not know it. Never make up ids, numbers, names or email addresses.
- Never say that you did the assistant's work, never write tool calls, never talk as an \
assistant.
- When your goal is met, or the assistant cannot do more for you, answer exactly {done} and \
nothing else. Never end the conversation while the assistant is asking you something.";

/// Lowercase hex SHA-256 of [`SYSTEM_PROMPT`] as written (before it is filled in).
pub fn prompt_sha256() -> String {
    crate::fs::sha256_hex(SYSTEM_PROMPT)
}

/// The system prompt for `user`: [`SYSTEM_PROMPT`] with its goal, its facts and its
/// `never_say` strings as `- ` lists (`- (none)` for an empty list) and [`DONE`].
pub fn system_prompt(user: &SimulatedUser) -> String {
    let list = |entries: &[String]| {
        if entries.is_empty() {
            "- (none)".to_owned()
        } else {
            entries
                .iter()
                .map(|entry| format!("- {}", entry.trim()))
                .collect::<Vec<_>>()
                .join("\n")
        }
    };
    SYSTEM_PROMPT
        .replace("{goal}", user.goal.trim())
        .replace("{facts}", &list(&user.facts))
        .replace("{never_say}", &list(&user.never_say))
        .replace("{done}", DONE)
}

/// The messages of one request, in order: the system prompt, then each turn with the roles
/// swapped: the user's message as `assistant` (the simulator wrote it; the prompt is the
/// first), the agent's reply as `user` (`(no reply)` when it gave none).
pub fn messages(user: &SimulatedUser, turns: &[Turn<'_>]) -> Vec<Value> {
    let mut messages = vec![json!({"role": "system", "content": system_prompt(user)})];
    for turn in turns {
        messages.push(json!({"role": "assistant", "content": turn.user}));
        let reply = turn
            .reply
            .filter(|reply| !reply.trim().is_empty())
            .unwrap_or("(no reply)");
        messages.push(json!({"role": "user", "content": reply}));
    }
    messages
}

#[cfg(test)]
mod tests {
    //! The prompt: goal, facts and secrets filled in; the roles swapped.

    use super::*;

    #[test]
    fn the_system_prompt_lists_the_facts_and_secrets_and_the_roles_are_swapped() {
        let user = SimulatedUser {
            goal: "Get my order refunded.".to_owned(),
            facts: vec!["The order is ORD-1.".to_owned()],
            never_say: Vec::new(),
            max_messages: 5,
        };
        let messages = messages(
            &user,
            &[
                Turn {
                    user: "Refund my order.",
                    reply: Some("Which order?"),
                },
                Turn {
                    user: "ORD-1.",
                    reply: None,
                },
            ],
        );
        let system = messages[0]["content"].as_str().expect("text");
        assert!(
            system.contains("Your goal: Get my order refunded.\n"),
            "{system}"
        );
        assert!(system.contains("\n- The order is ORD-1.\n"), "{system}");
        assert!(
            system.contains("whatever the assistant asks:\n- (none)\n"),
            "{system}"
        );
        assert!(system.contains("answer exactly ###DONE### and"), "{system}");
        let rest: Vec<(&str, &str)> = messages[1..]
            .iter()
            .map(|m| {
                (
                    m["role"].as_str().unwrap_or(""),
                    m["content"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            rest,
            vec![
                ("assistant", "Refund my order."),
                ("user", "Which order?"),
                ("assistant", "ORD-1."),
                ("user", "(no reply)"),
            ]
        );
        assert_eq!(prompt_sha256().len(), 64);
    }
}
