//! The user simulator's mistakes, found deterministically in each message it writes (and in
//! its saying it is done): it revealed what it must never say, stated an identifier that
//! nothing it was told holds, ended the conversation early, or answered as the agent. A
//! mistake stops the conversation and makes the run `inconclusive`: the conversation no longer
//! tests the agent, so it is neither a pass nor a failure of the agent.
//!
//! The checks look for what can be told from the text alone; a simulator can still go wrong
//! in ways no rule here sees (a plausible fact in words, a changed mind). The cue lists are
//! public so that docs can name them.

use serde::{Deserialize, Serialize};

use super::answer::Answer;
use crate::scenario::SimulatedUser;
use crate::trace::CallRecord;

/// Phrases (lowercase) that only the agent would write: it claims the work as done, or speaks
/// as an assistant. A user who says "I have sent" about its own doing is rare in a support
/// conversation; the simulator saying it is the common failure (role confusion).
pub const AGENT_PHRASES: &[&str] = &[
    "as an ai",
    "as a language model",
    "as an assistant",
    "i am an ai",
    "i'm an ai",
    "how can i help you",
    "how can i assist you",
    "how may i assist you",
    "is there anything else i can help",
    "is there anything else i can do for you",
    "i have created",
    "i've created",
    "i have deleted",
    "i've deleted",
    "i have updated",
    "i've updated",
    "i have sent",
    "i've sent",
    "i have scheduled",
    "i've scheduled",
    "i have cancelled",
    "i've cancelled",
    "i have canceled",
    "i've canceled",
    "i have processed",
    "i've processed",
    "i have refunded",
    "i've refunded",
];

/// Text (lowercase) that is a tool call written out: a Hermes-style block, or call JSON.
pub const TOOL_CALL_CUES: &[&str] = &["<tool_call>", "\"tool_calls\"", "\"function_call\""];

/// What kind of mistake the user simulator made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MistakeKind {
    /// It said one of `never_say` (compared in any case, with any spacing).
    Revealed,
    /// It stated an identifier (an id such as `C-001`, an order number, an email address, a
    /// number of three or more digits) that none of the goal, the facts, the prompt and the
    /// agent's replies so far holds.
    OutsideFacts,
    /// It ended the conversation while the agent's last reply asked it something, or before
    /// the agent had replied anything.
    EndedEarly,
    /// It wrote as the agent: claimed the work as done, spoke as an assistant
    /// ([`AGENT_PHRASES`]), or wrote a tool call ([`TOOL_CALL_CUES`]).
    AnsweredAsAgent,
}

impl MistakeKind {
    /// The name in files and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            MistakeKind::Revealed => "revealed",
            MistakeKind::OutsideFacts => "outside_facts",
            MistakeKind::EndedEarly => "ended_early",
            MistakeKind::AnsweredAsAgent => "answered_as_agent",
        }
    }
}

/// One mistake: its kind and what gave it away, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mistake {
    /// What kind.
    pub kind: MistakeKind,
    /// What gave it away, e.g. ``it said `hunter2`, which it must never say``.
    pub detail: String,
}

/// What a simulator message is checked against.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The scenario's simulated user: goal, facts, `never_say`.
    pub user: &'a SimulatedUser,
    /// The scenario's prompt, the user's first message.
    pub prompt: &'a str,
    /// Every reply of the agent so far that has text, in order, the last one included.
    pub replies: &'a [&'a str],
    /// The agent's reply to the user's last message; `None` when it gave none.
    pub last_reply: Option<&'a str>,
    /// The run's calls so far, for reading the last reply ([`Answer::read`]).
    pub trace: &'a [CallRecord],
}

/// The mistake in what the simulator wrote, if any: `said` is its message, `None` when it
/// said it was done. A message is checked for, in order, a revealed `never_say` string, the
/// agent's voice, then an identifier outside what it was told; the end of the conversation for
/// ending early.
pub fn find(context: &Context<'_>, said: Option<&str>) -> Option<Mistake> {
    match said {
        None => ended_early(context),
        Some(text) => revealed(context.user, text)
            .or_else(|| as_agent(text))
            .or_else(|| outside_facts(context, text)),
    }
}

/// `text` in lowercase with every run of whitespace one space.
fn normalised(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn revealed(user: &SimulatedUser, text: &str) -> Option<Mistake> {
    let said = normalised(text);
    let secret = user
        .never_say
        .iter()
        .find(|secret| said.contains(&normalised(secret)))?;
    Some(Mistake {
        kind: MistakeKind::Revealed,
        detail: format!("it said `{secret}`, which it must never say (`never_say`)"),
    })
}

fn as_agent(text: &str) -> Option<Mistake> {
    let said = normalised(text);
    if let Some(cue) = TOOL_CALL_CUES.iter().find(|cue| said.contains(*cue)) {
        return Some(Mistake {
            kind: MistakeKind::AnsweredAsAgent,
            detail: format!("it wrote a tool call (`{cue}`), as the agent would"),
        });
    }
    let phrase = AGENT_PHRASES.iter().find(|phrase| said.contains(*phrase))?;
    Some(Mistake {
        kind: MistakeKind::AnsweredAsAgent,
        detail: format!("it wrote \"{phrase}\", as the agent would"),
    })
}

fn ended_early(context: &Context<'_>) -> Option<Mistake> {
    if context.replies.iter().all(|reply| reply.trim().is_empty()) {
        return Some(Mistake {
            kind: MistakeKind::EndedEarly,
            detail: "it ended the conversation before the agent replied anything".to_owned(),
        });
    }
    let reply = context.last_reply?;
    Answer::read(reply, context.trace)
        .asks_clarification()
        .then(|| Mistake {
            kind: MistakeKind::EndedEarly,
            detail: "it ended the conversation while the agent's last reply asked it something"
                .to_owned(),
        })
}

fn outside_facts(context: &Context<'_>, text: &str) -> Option<Mistake> {
    let mut known = alphanumeric(&context.user.goal);
    for part in context
        .user
        .facts
        .iter()
        .map(String::as_str)
        .chain([context.prompt])
        .chain(context.replies.iter().copied())
    {
        known.push(' ');
        known.push_str(&alphanumeric(part));
    }
    let token = identifiers(text)
        .into_iter()
        .find(|token| !known.contains(&alphanumeric(token)))?;
    Some(Mistake {
        kind: MistakeKind::OutsideFacts,
        detail: format!(
            "it stated `{token}`, which none of its goal, facts, the prompt and the agent's \
             replies holds"
        ),
    })
}

/// `text` in lowercase with only its letters and digits (so `C-001` is found as `c001`,
/// `1,250` as `1250`).
fn alphanumeric(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The identifier-like words of `text`, in order: an email address, a word of letters and
/// digits (`C-001`, `ORD7741`, `ab12`), or a number of three or more digits (`4412`,
/// `1,250.00`, `2024-05-01`). Ordinals (`1st`, `22nd`) and numbers of one or two digits
/// (`2 seats`) are not identifiers. Surrounding punctuation is not part of a word.
pub fn identifiers(text: &str) -> Vec<&str> {
    text.split_whitespace()
        .map(|word| word.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|word| is_identifier(word))
        .collect()
}

fn is_identifier(word: &str) -> bool {
    if let Some((local, domain)) = word.split_once('@') {
        return !local.is_empty() && domain.contains('.');
    }
    let digits = word.chars().filter(char::is_ascii_digit).count();
    let letters = word.chars().filter(|c| c.is_alphabetic()).count();
    if digits == 0 {
        return false;
    }
    if letters == 0 {
        return digits >= 3;
    }
    let lower = word.to_lowercase();
    let ordinal = ["st", "nd", "rd", "th"].iter().any(|suffix| {
        lower
            .strip_suffix(suffix)
            .is_some_and(|number| !number.is_empty() && number.chars().all(|c| c.is_ascii_digit()))
    });
    !ordinal
}

#[cfg(test)]
mod tests {
    //! One test per mistake kind, each with its reason, and the words that are identifiers.

    use super::*;

    fn user() -> SimulatedUser {
        SimulatedUser {
            goal: "Get the phone number of contact Ada Lovelace updated.".to_owned(),
            facts: vec![
                "The new number is +44 20 7946 0018.".to_owned(),
                "My account email is ada@example.com.".to_owned(),
            ],
            never_say: vec!["C-001".to_owned(), "open sesame".to_owned()],
            max_messages: 5,
        }
    }

    fn check(said: Option<&str>, replies: &[&str]) -> Option<Mistake> {
        let user = user();
        find(
            &Context {
                user: &user,
                prompt: "Please update Ada's phone number.",
                replies,
                last_reply: replies.last().copied(),
                trace: &[],
            },
            said,
        )
    }

    #[test]
    fn a_never_say_string_in_any_case_and_spacing_is_revealed() {
        assert_eq!(
            check(Some("Her id is c-001 I think."), &["Which contact?"]),
            Some(Mistake {
                kind: MistakeKind::Revealed,
                detail: "it said `C-001`, which it must never say (`never_say`)".to_owned()
            })
        );
        assert_eq!(
            check(Some("The password is OPEN\n  Sesame."), &["Password?"]).map(|m| m.kind),
            Some(MistakeKind::Revealed)
        );
    }

    #[test]
    fn an_identifier_nothing_holds_is_outside_the_facts() {
        assert_eq!(
            check(Some("It is order ORD-7741."), &["Which order?"]),
            Some(Mistake {
                kind: MistakeKind::OutsideFacts,
                detail: "it stated `ORD-7741`, which none of its goal, facts, the prompt and \
                         the agent's replies holds"
                    .to_owned()
            })
        );
        assert_eq!(
            check(Some("Use 555-0199 instead."), &["Which number?"]).map(|m| m.kind),
            Some(MistakeKind::OutsideFacts)
        );
        assert_eq!(
            check(Some("Write to me at ada.l@other.org"), &["Email?"]).map(|m| m.kind),
            Some(MistakeKind::OutsideFacts)
        );
    }

    #[test]
    fn identifiers_from_the_facts_or_the_agent_are_not_mistakes() {
        assert_eq!(
            check(
                Some("Yes: +44 20 7946 0018, and my email is ada@example.com. I found C-002."),
                &["I see two contacts, C-002 and C-003. Which one, and what number?"]
            ),
            None
        );
        assert_eq!(
            check(Some("The 2nd one, and 2 numbers."), &["Which one?"]),
            None
        );
    }

    #[test]
    fn ending_while_asked_or_before_any_reply_is_ending_early() {
        assert_eq!(
            check(None, &["Which phone number should I set?"]),
            Some(Mistake {
                kind: MistakeKind::EndedEarly,
                detail: "it ended the conversation while the agent's last reply asked it \
                         something"
                    .to_owned()
            })
        );
        assert_eq!(
            check(None, &[]),
            Some(Mistake {
                kind: MistakeKind::EndedEarly,
                detail: "it ended the conversation before the agent replied anything".to_owned()
            })
        );
        assert_eq!(
            check(None, &["   "]).map(|m| m.kind),
            Some(MistakeKind::EndedEarly)
        );
        assert_eq!(check(None, &["Done: the number is updated."]), None);
    }

    #[test]
    fn claiming_the_work_or_speaking_as_an_assistant_is_answering_as_the_agent() {
        assert_eq!(
            check(Some("I have updated the number for you."), &["Shall I?"]),
            Some(Mistake {
                kind: MistakeKind::AnsweredAsAgent,
                detail: "it wrote \"i have updated\", as the agent would".to_owned()
            })
        );
        assert_eq!(
            check(Some("As an AI, I cannot share that."), &["Why?"]).map(|m| m.kind),
            Some(MistakeKind::AnsweredAsAgent)
        );
        assert_eq!(
            check(
                Some("<tool_call>{\"name\": \"crm_update_contact\"}</tool_call>"),
                &["Go on."]
            ),
            Some(Mistake {
                kind: MistakeKind::AnsweredAsAgent,
                detail: "it wrote a tool call (`<tool_call>`), as the agent would".to_owned()
            })
        );
    }

    #[test]
    fn identifiers_are_ids_emails_and_long_numbers_not_ordinals_or_small_counts() {
        assert_eq!(
            identifiers("Order #ORD-7741 (2 items, 1st class) costs 1,250.00; mail a@b.co, 3pm."),
            vec!["ORD-7741", "1,250.00", "a@b.co", "3pm"]
        );
        assert_eq!(identifiers("See you on 2024-05-01!"), vec!["2024-05-01"]);
        assert!(identifiers("No numbers here, just words.").is_empty());
    }
}
