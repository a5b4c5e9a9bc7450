//! Scripted conversations (`user_turns`): what the scripted user says after each reply of the
//! agent, the record of the conversation, and its checks.
//!
//! The user's first message is the scenario's prompt. After each reply (the agent answered
//! without calling a tool), the next of `user_turns` is considered:
//! - a turn with `wait: true` needs the agent to have stopped for it: its reply asks the user
//!   something ([`Answer::asks_clarification`]) and no tool that is not read-only was called
//!   since the user's previous message (refused calls count: trying is acting). A run that did
//!   not wait fails there and the conversation stops;
//! - a turn with `when: asked` is sent only when the reply asks; otherwise the conversation
//!   ends, and the run is judged on what it did (a lookup instead of a question is no fault);
//! - any other turn is sent.
//!
//! When every turn was sent and answered, the conversation is finished. An agent that stops
//! before that (turn limit, time, crash) leaves it cut, which fails the run.
//!
//! A conversation with a simulated user (`simulated_user`) is kept in the same record by
//! [`super::simulated`], with endings of its own ([`Ended::MessageLimit`],
//! [`Ended::Unfinished`], [`Ended::SimulatorMistake`]).

use serde::{Deserialize, Serialize};

use super::answer::Answer;
use super::{Check, CheckKind};
use crate::scenario::Scenario;
use crate::scenario::file::SendWhen;
use crate::trace::CallRecord;

/// How a conversation went: the exchanges in order (the prompt's first) and how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Conversation {
    /// One per user message sent, in order.
    pub exchanges: Vec<Exchange>,
    /// How it ended.
    pub ended: Ended,
}

/// One user message and the agent's answer to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Exchange {
    /// What the user said.
    pub user: String,
    /// How many tool calls the agent made before replying (the trace's calls, in order, are
    /// split by these counts).
    pub calls: usize,
    /// The agent's reply; `None` when it gave none.
    pub reply: Option<String>,
}

/// How a conversation ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Ended {
    /// Every scripted message was sent and answered; with a simulated user: it said it was
    /// done after the agent's last reply.
    Finished,
    /// `user_turns[turn]` (`when: asked`) was not sent: the reply before it asked nothing.
    NotAsked {
        /// 0-based index into `user_turns`.
        turn: usize,
    },
    /// The agent did not stop for `user_turns[turn]` (`wait: true`): the run fails here.
    NotWaited {
        /// 0-based index into `user_turns`.
        turn: usize,
        /// What it did instead, in one line.
        detail: String,
    },
    /// The agent's play ended (turn limit, time, crash) before `user_turns[turn]` was sent.
    Cut {
        /// 0-based index into `user_turns`.
        turn: usize,
    },
    /// The agent's play ended (turn limit, time, crash) while the simulated user had more to
    /// say: the run fails.
    Unfinished {
        /// The messages the simulated user had sent after the prompt.
        messages: u32,
    },
    /// The simulated user sent its `max_messages` messages and the agent answered the last.
    MessageLimit {
        /// The messages it sent after the prompt (its `max_messages`).
        messages: u32,
    },
    /// The user simulator made a mistake in its next message, which was not sent: the run is
    /// `inconclusive`.
    SimulatorMistake {
        /// What kind of mistake.
        mistake: super::simulator_mistakes::MistakeKind,
        /// What the simulator wrote; `None` when it ended the conversation.
        said: Option<String>,
        /// What gave the mistake away, in one line.
        detail: String,
    },
}

impl Ended {
    /// The user simulator's mistake as one line (``revealed: it said `hunter2`, ...``), when
    /// the conversation ended on one.
    pub fn simulator_mistake(&self) -> Option<String> {
        match self {
            Ended::SimulatorMistake {
                mistake, detail, ..
            } => Some(format!("{}: {detail}", mistake.as_str())),
            _ => None,
        }
    }
}

/// A conversation's record while it is held, for the scripted and the simulated user alike:
/// the exchanges so far, whether it is still open, and where the calls since the user's last
/// message start in the trace.
#[derive(Debug, Clone)]
pub(crate) struct Transcript {
    pub(crate) record: Conversation,
    pub(crate) open: bool,
    first_call: usize,
}

impl Transcript {
    /// A conversation that starts with `scenario`'s prompt.
    pub(crate) fn new(scenario: &Scenario) -> Transcript {
        Transcript {
            record: Conversation {
                exchanges: vec![Exchange {
                    user: scenario.prompt.clone(),
                    calls: 0,
                    reply: None,
                }],
                ended: Ended::Finished,
            },
            open: true,
            first_call: 0,
        }
    }

    /// The calls made since the user's last message.
    pub(crate) fn since<'a>(&self, trace: &'a [CallRecord]) -> &'a [CallRecord] {
        trace.get(self.first_call..).unwrap_or_default()
    }

    /// Closes the last exchange with the agent's `reply` and the calls since its message;
    /// nothing once the conversation is over.
    pub(crate) fn close_exchange(&mut self, reply: Option<&str>, trace: &[CallRecord]) {
        if !self.open {
            return;
        }
        if let Some(last) = self.record.exchanges.last_mut() {
            last.calls = trace.len().saturating_sub(self.first_call);
            last.reply = reply.map(str::to_owned);
        }
    }

    /// Opens an exchange with the user's message `user`, after the calls of `trace`.
    pub(crate) fn open_exchange(&mut self, user: &str, trace: &[CallRecord]) {
        self.first_call = trace.len();
        self.record.exchanges.push(Exchange {
            user: user.to_owned(),
            calls: 0,
            reply: None,
        });
    }

    /// Ends the conversation as `ended`.
    pub(crate) fn end(&mut self, ended: Ended) {
        self.record.ended = ended;
        self.open = false;
    }
}

/// The scripted user of one run, kept while the agent plays.
#[derive(Debug, Clone)]
pub struct Script {
    transcript: Transcript,
    next: usize,
}

impl Script {
    /// A conversation that starts with `scenario`'s prompt.
    pub fn new(scenario: &Scenario) -> Script {
        Script {
            transcript: Transcript::new(scenario),
            next: 0,
        }
    }

    /// The agent replied `reply` to the last message; `trace` is every call of the run so far.
    /// Returns the user's next message, or `None` when the conversation is over (then `reply`
    /// is the agent's final answer).
    pub fn reply(
        &mut self,
        scenario: &Scenario,
        reply: Option<&str>,
        trace: &[CallRecord],
    ) -> Option<String> {
        self.transcript.close_exchange(reply, trace);
        if !self.transcript.open {
            return None;
        }
        let Some(turn) = scenario.user_turns.get(self.next) else {
            self.transcript.end(Ended::Finished);
            return None;
        };
        let asked = reply.is_some_and(|text| Answer::read(text, trace).asks_clarification());
        if turn.wait {
            let since = self.transcript.since(trace);
            if let Some(detail) = not_waited(scenario, since, asked) {
                self.transcript.end(Ended::NotWaited {
                    turn: self.next,
                    detail,
                });
                return None;
            }
        }
        if turn.when == SendWhen::Asked && !asked {
            self.transcript.end(Ended::NotAsked { turn: self.next });
            return None;
        }
        self.next += 1;
        self.transcript.open_exchange(&turn.say, trace);
        Some(turn.say.clone())
    }

    /// The agent's play is over, its last reply `final_answer`, its calls `trace`: the record.
    /// A conversation still open with messages left to send is [`Ended::Cut`].
    ///
    /// A conversation still open is decided as [`Script::reply`] would decide it on
    /// `final_answer`; where the user would have sent another message, the agent stopped
    /// before it and the conversation is [`Ended::Cut`].
    pub fn finish(
        mut self,
        scenario: &Scenario,
        final_answer: Option<&str>,
        trace: &[CallRecord],
    ) -> Conversation {
        if self.transcript.open && self.reply(scenario, final_answer, trace).is_some() {
            self.transcript.record.exchanges.pop();
            self.next -= 1;
            self.transcript.end(Ended::Cut { turn: self.next });
        }
        self.transcript.record
    }

    /// Whether the conversation is over (the user has nothing more to say, or the run failed
    /// a `wait`).
    pub fn is_over(&self) -> bool {
        !self.transcript.open
    }
}

/// Why the agent did not wait for a `wait` turn, given the calls `since` the user's previous
/// message and whether its reply asked; `None` when it waited.
fn not_waited(scenario: &Scenario, since: &[CallRecord], asked: bool) -> Option<String> {
    let mut writes: Vec<&str> = since
        .iter()
        .filter(|call| !call.unknown_tool && !scenario.is_read_only(&call.tool))
        .map(|call| call.tool.as_str())
        .collect();
    writes.dedup();
    match (writes.is_empty(), asked) {
        (true, true) => None,
        (true, false) => Some("its reply asked the user nothing".to_owned()),
        (false, _) => Some(format!(
            "it called {} before the user's answer",
            writes
                .iter()
                .map(|tool| format!("`{tool}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The checks of a conversation: one per `wait` turn it reached (the agent stopped for it, or
/// not), and one that fails when the agent's play ended before the script did. None for a run
/// without `user_turns`. With a simulated user, only the one that fails when the agent's play
/// ended before the user was done (a simulator's mistake is no check: it makes the run
/// `inconclusive`).
pub fn checks(scenario: &Scenario, conversation: &Conversation) -> Vec<Check> {
    if scenario.simulated_user.is_some() {
        return match conversation.ended {
            Ended::Unfinished { .. } => vec![Check {
                kind: CheckKind::Conversation,
                subject: "simulated_user".to_owned(),
                passed: false,
                detail: "the agent's play ended (turn limit, time or crash) before the \
                         simulated user was done"
                    .to_owned(),
            }],
            _ => Vec::new(),
        };
    }
    let sent = conversation.exchanges.len().saturating_sub(1);
    let mut checks = Vec::new();
    for (index, turn) in scenario.user_turns.iter().enumerate().take(sent) {
        if turn.wait {
            checks.push(Check {
                kind: CheckKind::Conversation,
                subject: format!("user_turns[{index}]"),
                passed: true,
                detail: "the agent stopped and asked before this message, without writing"
                    .to_owned(),
            });
        }
    }
    match &conversation.ended {
        Ended::NotWaited { turn, detail } => checks.push(Check {
            kind: CheckKind::Conversation,
            subject: format!("user_turns[{turn}]"),
            passed: false,
            detail: format!(
                "the agent had to wait for the user's message {:?} here, but {detail}",
                short(scenario.user_turns.get(*turn).map_or("", |turn| &turn.say))
            ),
        }),
        Ended::Cut { turn } => checks.push(Check {
            kind: CheckKind::Conversation,
            subject: format!("user_turns[{turn}]"),
            passed: false,
            detail: "the agent's play ended (turn limit, time, crash, or the end of a recorded \
                     or written trajectory) before the user's next message"
                .to_owned(),
        }),
        Ended::Finished
        | Ended::NotAsked { .. }
        | Ended::Unfinished { .. }
        | Ended::MessageLimit { .. }
        | Ended::SimulatorMistake { .. } => {}
    }
    checks
}

/// What a conversation shows about the agent beyond pass or fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConversationMetrics {
    /// User messages sent, the prompt included: the turns the agent needed.
    pub messages: usize,
    /// Whether the conversation reached its end (every message sent, or the user had no more
    /// to say), rather than stopping at a `wait` or being cut.
    pub completed: bool,
    /// Replies that asked the user something the script had no answer for: the message after
    /// it is sent whatever the reply (neither `wait` nor `when: asked`), or none follows and
    /// the final answer need not ask (`asks_clarification`). A question the prompt or the
    /// conversation had already answered is one of these.
    pub unneeded_questions: usize,
}

/// The measures of `conversation`, a conversation of `scenario`.
pub fn metrics(scenario: &Scenario, conversation: &Conversation) -> ConversationMetrics {
    let unneeded_questions = conversation
        .exchanges
        .iter()
        .enumerate()
        .filter(|(index, exchange)| {
            let asked = exchange
                .reply
                .as_deref()
                .is_some_and(|reply| Answer::read(reply, &[]).asks_clarification());
            let wanted = match scenario.user_turns.get(*index) {
                Some(next) => next.wait || next.when == SendWhen::Asked,
                None => scenario.final_answer.asks_clarification,
            };
            asked && !wanted
        })
        .count();
    ConversationMetrics {
        messages: conversation.exchanges.len(),
        completed: matches!(conversation.ended, Ended::Finished | Ended::NotAsked { .. }),
        unneeded_questions,
    }
}

/// `text` cut to 60 characters for a check's detail.
pub(crate) fn short(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(60).collect();
    if chars.next().is_some() {
        format!("{head}…")
    } else {
        head
    }
}

#[cfg(test)]
mod tests;
