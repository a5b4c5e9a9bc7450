//! The user of a run's conversation, shared by the agent's play and the runner: the scripted
//! user (`user_turns`) or the simulated one (`simulated_user`, played by the user simulator),
//! so that agents need not know which. The runner reads the record when the play is over.

use crate::agent::Agent;
use crate::agent::simulator::{Session, Simulator, Turn};
use crate::scenario::Scenario;
use crate::score::conversation::{Conversation, Script};
use crate::score::simulated::Simulated;
use crate::trace::CallRecord;

/// Who answers the agent in one run.
pub(super) enum UserScript<'a> {
    /// The scenario's `user_turns`.
    Scripted(Script),
    /// The scenario's `simulated_user`, played by the user simulator.
    Simulated(Box<Talk<'a>>),
}

/// A conversation with the user simulator: its record, the simulator's session, and why the
/// simulator failed, once it did.
pub(super) struct Talk<'a> {
    state: Simulated,
    session: Session<'a>,
    error: Option<String>,
}

impl<'a> UserScript<'a> {
    /// The user of run `repeat` of `scenario` played by `agent`, with `simulator` for a
    /// simulated user; `None` for a single request, and for the reference agent with a
    /// simulated user (it knows the solution and asks nothing).
    ///
    /// Errors (the run is `errored`): a simulated user and no simulator configured.
    pub(super) fn of(
        scenario: &Scenario,
        repeat: u32,
        agent: &Agent,
        simulator: Option<&'a Simulator>,
    ) -> Result<Option<UserScript<'a>>, String> {
        if !scenario.user_turns.is_empty() {
            return Ok(Some(UserScript::Scripted(Script::new(scenario))));
        }
        if scenario.simulated_user.is_none() || matches!(agent, Agent::Reference) {
            return Ok(None);
        }
        let Some(simulator) = simulator else {
            return Err(format!(
                "scenario `{}` has a simulated user (`simulated_user`), but no user simulator is \
                 configured: pass `--user-model MODEL` (or `user_simulator.model` in \
                 toolgate.yaml), or replay a recording with `--user-replay DIR`",
                scenario.id
            ));
        };
        Ok(Some(UserScript::Simulated(Box::new(Talk {
            state: Simulated::new(scenario),
            session: simulator.session(&scenario.id, repeat),
            error: None,
        }))))
    }

    /// The user's next message after `reply`, given the run's calls so far; `None` when the
    /// conversation is over (or the simulator failed: see [`UserScript::finish`]).
    pub(super) async fn next(
        &mut self,
        scenario: &Scenario,
        reply: Option<&str>,
        trace: &[CallRecord],
    ) -> Option<String> {
        match self {
            UserScript::Scripted(script) => script.reply(scenario, reply, trace),
            UserScript::Simulated(talk) => {
                if talk.error.is_some() || !talk.state.reply(scenario, reply, trace) {
                    return None;
                }
                let said = talk.ask(scenario).await?;
                talk.state.answer(scenario, said.as_deref(), trace)
            }
        }
    }

    /// The agent's play is over, its last reply `final_answer`, its calls `trace`: the
    /// record. A conversation still open is decided on `final_answer` as a reply would be
    /// (the simulator is asked; a message it still had to send leaves the conversation
    /// unfinished).
    ///
    /// Errors (the run is `errored`): the simulator failed, now or during the play, or its
    /// recording could not be written.
    pub(super) async fn finish(
        self,
        scenario: &Scenario,
        final_answer: Option<&str>,
        trace: &[CallRecord],
    ) -> Result<Conversation, String> {
        let mut talk = match self {
            UserScript::Scripted(script) => {
                return Ok(script.finish(scenario, final_answer, trace));
            }
            UserScript::Simulated(talk) => talk,
        };
        if talk.error.is_none()
            && !talk.state.is_over()
            && talk.state.reply(scenario, final_answer, trace)
            && let Some(said) = talk.ask(scenario).await
            && talk
                .state
                .answer(scenario, said.as_deref(), trace)
                .is_some()
        {
            talk.state.cut();
        }
        let closed = talk.session.close();
        if let Some(error) = talk.error {
            return Err(error);
        }
        closed?;
        Ok(talk.state.finish())
    }

    /// The play failed: keeps what the simulator wrote (its recording), nothing else.
    pub(super) fn abandon(self) {
        if let UserScript::Simulated(talk) = self {
            // The run is errored already; a recording that cannot be written adds nothing.
            let _ = talk.session.close();
        }
    }
}

impl Talk<'_> {
    /// What the simulator says next (`Some(None)`: it is done); `None` when it failed (the
    /// reason is kept).
    async fn ask(&mut self, scenario: &Scenario) -> Option<Option<String>> {
        let user = scenario.simulated_user.as_ref()?;
        let turns: Vec<Turn<'_>> = self
            .state
            .exchanges()
            .iter()
            .map(|exchange| Turn {
                user: &exchange.user,
                reply: exchange.reply.as_deref(),
            })
            .collect();
        match self
            .session
            .say(user, &turns, self.state.next_message())
            .await
        {
            Ok(said) => Some(said),
            Err(error) => {
                self.error = Some(error);
                None
            }
        }
    }
}

/// The user of a run, shared by the agent's play and the runner; `script` is `None` for a
/// single request.
#[derive(Clone, Copy)]
pub(super) struct User<'s, 'a> {
    pub(super) scenario: &'s Scenario,
    pub(super) script: Option<&'s tokio::sync::Mutex<UserScript<'a>>>,
}

impl User<'_, '_> {
    /// The user's next message after `reply`, given the run's calls so far.
    pub(super) async fn next(&self, reply: Option<&str>, trace: &[CallRecord]) -> Option<String> {
        let mut script = self.script?.lock().await;
        script.next(self.scenario, reply, trace).await
    }
}
