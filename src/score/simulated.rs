//! Conversations with a simulated user (`simulated_user`): the record, the message limit and
//! where a mistake of the user simulator stops them. The runner asks the simulator (a model,
//! or its recording) for each message; this module decides what becomes of its answer.
//!
//! The user's first message is the scenario's prompt. After each reply of the agent, unless
//! the user has sent its `max_messages` messages ([`Ended::MessageLimit`]), the simulator is
//! asked for the next one. It answers a message, or that it is done ([`Ended::Finished`]); each
//! answer is checked for the simulator's mistakes first ([`simulator_mistakes::find`]), and a
//! mistake ends the conversation unsent ([`Ended::SimulatorMistake`]: the run is
//! `inconclusive`).

use super::conversation::{Conversation, Ended, Exchange, Transcript};
use super::simulator_mistakes::{self, Context};
use crate::scenario::Scenario;
use crate::trace::CallRecord;

/// The conversation of one run with a simulated user, kept while the agent plays.
#[derive(Debug, Clone)]
pub struct Simulated {
    transcript: Transcript,
    /// Messages the simulator sent after the prompt.
    sent: u32,
}

impl Simulated {
    /// A conversation that starts with `scenario`'s prompt.
    pub fn new(scenario: &Scenario) -> Simulated {
        Simulated {
            transcript: Transcript::new(scenario),
            sent: 0,
        }
    }

    /// The agent replied `reply` to the user's last message; `trace` is every call of the run
    /// so far. Whether the simulator is to be asked for the next message: `false` when the
    /// conversation is over (it ended before, or the user has sent its `max_messages`).
    pub fn reply(
        &mut self,
        scenario: &Scenario,
        reply: Option<&str>,
        trace: &[CallRecord],
    ) -> bool {
        if !self.transcript.open {
            return false;
        }
        self.transcript.close_exchange(reply, trace);
        let limit = scenario
            .simulated_user
            .as_ref()
            .map_or(0, |user| user.max_messages);
        if self.sent >= limit {
            self.end(Ended::MessageLimit {
                messages: self.sent,
            });
            return false;
        }
        true
    }

    /// The conversation so far, in order, the prompt's exchange first and the agent's last
    /// reply in the last one: what the simulator is shown.
    pub fn exchanges(&self) -> &[Exchange] {
        &self.transcript.record.exchanges
    }

    /// The 1-based number of the user message the simulator is asked for next (2 is the first
    /// after the prompt).
    pub fn next_message(&self) -> u32 {
        self.sent + 2
    }

    /// The simulator answered `said` (`None`: it is done), after [`Simulated::reply`] asked
    /// for it. Returns the message to send, or `None` when the conversation ends: the user is
    /// done ([`Ended::Finished`]) or the simulator made a mistake ([`Ended::SimulatorMistake`]).
    pub fn answer(
        &mut self,
        scenario: &Scenario,
        said: Option<&str>,
        trace: &[CallRecord],
    ) -> Option<String> {
        if !self.transcript.open {
            return None;
        }
        let user = scenario.simulated_user.as_ref()?;
        let replies: Vec<&str> = self
            .transcript
            .record
            .exchanges
            .iter()
            .filter_map(|exchange| exchange.reply.as_deref())
            .filter(|reply| !reply.trim().is_empty())
            .collect();
        let context = Context {
            user,
            prompt: &scenario.prompt,
            replies: &replies,
            last_reply: self
                .transcript
                .record
                .exchanges
                .last()
                .and_then(|exchange| exchange.reply.as_deref()),
            trace,
        };
        if let Some(mistake) = simulator_mistakes::find(&context, said) {
            self.end(Ended::SimulatorMistake {
                mistake: mistake.kind,
                said: said.map(str::to_owned),
                detail: mistake.detail,
            });
            return None;
        }
        let Some(message) = said else {
            self.end(Ended::Finished);
            return None;
        };
        self.sent += 1;
        self.transcript.open_exchange(message, trace);
        Some(message.to_owned())
    }

    /// The message [`Simulated::answer`] just returned was never sent: the agent's play had
    /// ended while the user had more to say ([`Ended::Unfinished`]). Used when the runner asks the simulator about the agent's final
    /// answer, which the agent did not hand to the user itself.
    pub fn cut(&mut self) {
        if self.transcript.open && self.sent > 0 {
            self.transcript.record.exchanges.pop();
            self.sent -= 1;
            self.end(Ended::Unfinished {
                messages: self.sent,
            });
        }
    }

    /// Whether the conversation is over.
    pub fn is_over(&self) -> bool {
        !self.transcript.open
    }

    /// The record. A conversation still open (its simulator failed) reads as
    /// [`Ended::Finished`]; such a run is `errored` and its record is not kept.
    pub fn finish(self) -> Conversation {
        self.transcript.record
    }

    fn end(&mut self, ended: Ended) {
        self.transcript.end(ended);
    }
}

#[cfg(test)]
mod tests {
    //! The simulated user's conversation: messages up to the limit, the end, a mistake unsent.

    use serde_json::json;

    use super::*;
    use crate::catalog::Catalog;
    use crate::score::simulator_mistakes::MistakeKind;

    fn load(user: &str) -> anyhow::Result<Scenario> {
        let text = format!(
            "id: S-1\ntier: 2\ntype: ambiguous_input\nprompt: Update my contact's phone.\n\
             seed_state: fixtures/enterprise.json\nexpected_calls: []\n{user}"
        );
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("s.yaml");
        std::fs::write(&path, text).expect("write scenario");
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        crate::scenario::load_file(&path, root, Catalog::builtin())
    }

    fn scenario(max_messages: u32) -> Scenario {
        load(&format!(
            "simulated_user:\n  goal: Change Ada Lovelace's phone to 555-0100.\n  facts: [The \
             contact is Ada Lovelace.]\n  never_say: [C-001]\n  max_messages: {max_messages}\n"
        ))
        .expect("valid scenario")
    }

    #[test]
    fn the_simulated_user_is_read_with_its_default_limit_and_bad_ones_are_named() {
        let scenario = load("simulated_user:\n  goal: Fix my phone number.\n").expect("valid");
        let user = scenario.simulated_user.expect("a simulated user");
        assert_eq!(user.goal, "Fix my phone number.");
        assert_eq!(user.max_messages, 5);
        assert!(user.facts.is_empty() && user.never_say.is_empty());
        let error = |user: &str| {
            let message = format!("{:#}", load(user).expect_err("invalid"));
            message
                .lines()
                .filter(|line| line.contains("s.yaml`: "))
                .map(|line| line.split("s.yaml`: ").nth(1).unwrap_or("").to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            error(
                "user_turns:\n  - say: Yes.\nsimulated_user:\n  goal: ' '\n  facts: ['']\n  \
                 max_messages: 21\n"
            ),
            vec![
                "simulated_user: a conversation has a scripted user (`user_turns`) or a \
                 simulated one, not both",
                "simulated_user.goal: must not be empty",
                "simulated_user.facts[0]: must not be empty",
                "simulated_user.max_messages: must be 1..=20, got 21",
            ]
        );
        assert_eq!(
            error(
                "simulated_user:\n  goal: Log in.\n  facts: [My password is hunter2.]\n  \
                 never_say: [HUNTER2]\n"
            ),
            vec![
                "simulated_user.facts[0] (line 9): holds `HUNTER2`, which the user must never \
                 say (`never_say`): the simulator could not share this fact"
            ]
        );
        assert!(
            format!(
                "{:#}",
                load("simulated_user:\n  goal: x\n  mood: angry\n").expect_err("unknown")
            )
            .contains("unknown field `mood`")
        );
    }

    fn call(index: usize) -> CallRecord {
        CallRecord::recorded(index, "crm_search_contacts", json!({"query": "Ada"}))
    }

    #[test]
    fn messages_go_out_until_the_user_is_done() {
        let scenario = scenario(3);
        let mut talk = Simulated::new(&scenario);
        assert!(talk.reply(&scenario, Some("Which contact?"), &[call(0)]));
        assert_eq!(talk.next_message(), 2);
        assert_eq!(
            talk.answer(&scenario, Some("Ada Lovelace."), &[call(0)]),
            Some("Ada Lovelace.".to_owned())
        );
        let trace = [call(0), call(1)];
        assert!(talk.reply(&scenario, Some("Which new number?"), &trace));
        assert_eq!(
            talk.answer(&scenario, Some("555-0100"), &trace),
            Some("555-0100".to_owned())
        );
        assert!(talk.reply(&scenario, Some("Done: it is 555-0100."), &trace));
        assert_eq!(talk.answer(&scenario, None, &trace), None);
        assert!(talk.is_over());
        let record = talk.finish();
        assert_eq!(record.ended, Ended::Finished);
        assert_eq!(
            record
                .exchanges
                .iter()
                .map(|e| (e.user.as_str(), e.calls, e.reply.as_deref()))
                .collect::<Vec<_>>(),
            vec![
                ("Update my contact's phone.", 1, Some("Which contact?")),
                ("Ada Lovelace.", 1, Some("Which new number?")),
                ("555-0100", 0, Some("Done: it is 555-0100.")),
            ]
        );
    }

    #[test]
    fn the_user_stops_after_max_messages() {
        let scenario = scenario(1);
        let mut talk = Simulated::new(&scenario);
        assert!(talk.reply(&scenario, Some("Which contact?"), &[]));
        assert!(talk.answer(&scenario, Some("Ada."), &[]).is_some());
        assert!(!talk.reply(&scenario, Some("And then?"), &[]));
        assert_eq!(talk.finish().ended, Ended::MessageLimit { messages: 1 });
    }

    #[test]
    fn a_mistake_ends_the_conversation_without_sending_the_message() {
        let scenario = scenario(5);
        let mut talk = Simulated::new(&scenario);
        assert!(talk.reply(&scenario, Some("Which contact?"), &[]));
        assert_eq!(talk.answer(&scenario, Some("It is C-001."), &[]), None);
        let record = talk.finish();
        assert_eq!(record.exchanges.len(), 1);
        assert_eq!(
            record.ended,
            Ended::SimulatorMistake {
                mistake: MistakeKind::Revealed,
                said: Some("It is C-001.".to_owned()),
                detail: "it said `C-001`, which it must never say (`never_say`)".to_owned(),
            }
        );
        assert_eq!(
            record.ended.simulator_mistake().as_deref(),
            Some("revealed: it said `C-001`, which it must never say (`never_say`)")
        );
    }

    #[test]
    fn a_message_for_an_agent_that_stopped_is_cut() {
        let scenario = scenario(5);
        let mut talk = Simulated::new(&scenario);
        assert!(talk.reply(&scenario, Some("Looking it up."), &[]));
        assert!(talk.answer(&scenario, Some("Thanks, and?"), &[]).is_some());
        talk.cut();
        let record = talk.finish();
        assert_eq!(record.ended, Ended::Unfinished { messages: 0 });
        assert_eq!(record.exchanges.len(), 1);
    }
}
