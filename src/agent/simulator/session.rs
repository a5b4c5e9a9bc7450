//! One run's conversation with the user simulator: each question goes to the model (and into
//! the run's recording) or to the recording of an earlier run.

use std::path::Path;

use serde_json::Value;

use super::recording::{self, Entry, Header, Recording};
use super::{DONE, Simulator, Source, Turn, prompt};
use crate::agent::RequestBody;
use crate::scenario::SimulatedUser;

/// The user simulator for one run of one scenario; made by [`Simulator::session`].
#[derive(Debug)]
pub struct Session<'a> {
    simulator: &'a Simulator,
    scenario: String,
    repeat: u32,
    /// In a replay, the run's recording once read (or why it cannot be).
    recorded: Option<Result<Recording, String>>,
    /// Live, what the model wrote so far, in order.
    written: Vec<Entry>,
}

impl<'a> Session<'a> {
    pub(super) fn new(simulator: &'a Simulator, scenario: &str, repeat: u32) -> Session<'a> {
        Session {
            simulator,
            scenario: scenario.to_owned(),
            repeat,
            recorded: None,
            written: Vec::new(),
        }
    }

    /// What the user says as its message number `message` (1-based; 2 is the first after the
    /// prompt) after `turns` (the conversation so far, the prompt's exchange first and the
    /// agent's last reply in the last): `Some(text)`, trimmed, or `None` when the user is done
    /// (the answer holds [`DONE`]).
    ///
    /// Errors (the run is `errored`), one line without credentials: the provider failed or
    /// answered no text; in a replay, no recording for the run, or none for this conversation
    /// (starting `not_recorded: user simulator:`).
    pub async fn say(
        &mut self,
        user: &SimulatedUser,
        turns: &[Turn<'_>],
        message: u32,
    ) -> Result<Option<String>, String> {
        let messages = prompt::messages(user, turns);
        let conversation_sha256 = crate::fs::sha256_hex(
            serde_json::to_string(&messages).expect("chat messages serialize"),
        );
        let said = match &self.simulator.source {
            Source::Replay { dir } => self.recorded(dir, message, &conversation_sha256)?,
            Source::Live { config, http, .. } => {
                let mut body = RequestBody::default();
                body.insert("model", config.model.as_str());
                body.messages("messages", &messages);
                body.insert("temperature", config.temperature);
                if let Some(seed) = config.seed {
                    body.insert("seed", seed);
                }
                if let Some(limit) = config.max_tokens {
                    body.insert(
                        crate::agent::openai::output_limit_field(&config.endpoint.base_url),
                        limit,
                    );
                }
                let reply = http
                    .post(&body)
                    .await
                    .map_err(|error| format!("the user simulator failed: {error}"))?;
                let said = reply_text(&reply.body).ok_or_else(|| {
                    "the user simulator's response has no message text".to_owned()
                })?;
                self.written.push(Entry {
                    message,
                    conversation_sha256,
                    said: said.clone(),
                });
                said
            }
        };
        if said.contains(DONE) {
            return Ok(None);
        }
        let text = said.trim();
        if text.is_empty() {
            return Err("the user simulator answered an empty message".to_owned());
        }
        Ok(Some(text.to_owned()))
    }

    /// Ends the session. A live simulator with a recording directory writes the run's
    /// recording there, replacing an older one (with only its header when the simulator was
    /// never asked).
    ///
    /// Errors: the recording cannot be written, naming it.
    pub fn close(self) -> Result<(), String> {
        let (
            Source::Live {
                record: Some(dir), ..
            },
            Some(pin),
        ) = (&self.simulator.source, self.simulator.pin())
        else {
            return Ok(());
        };
        let recording = Recording {
            header: Header {
                user_recording_version: recording::RECORDING_VERSION,
                scenario: self.scenario.clone(),
                repeat: self.repeat,
                toolgate: env!("CARGO_PKG_VERSION").to_owned(),
                simulator: pin.clone(),
            },
            entries: self.written,
        };
        let path = recording::path(dir, &self.scenario, self.repeat);
        crate::fs::write_atomic(&path, recording.render().as_bytes())
            .map_err(|error| format!("failed to record the user simulator: {error:#}"))
    }

    /// The recorded answer for `message` after the conversation hashed `conversation_sha256`.
    fn recorded(
        &mut self,
        dir: &Path,
        message: u32,
        conversation_sha256: &str,
    ) -> Result<String, String> {
        let path = recording::path(dir, &self.scenario, self.repeat);
        let recorded = self.recorded.get_or_insert_with(|| {
            if !path.exists() {
                return Err(format!(
                    "not_recorded: user simulator: no recording `{}` for this run (record one \
                     with `toolgate gate --user-record DIR` and a user model)",
                    path.display()
                ));
            }
            Recording::load(&path).map_err(|error| format!("{error:#}"))
        });
        let recording = recorded.as_ref().map_err(Clone::clone)?;
        recording
            .said(message, conversation_sha256)
            .map(str::to_owned)
            .ok_or_else(|| {
                format!(
                    "not_recorded: user simulator: message {message} after this conversation \
                     is not in `{}`; the agent said something the recording did not (record \
                     again with `toolgate gate --user-record DIR` and a user model)",
                    path.display()
                )
            })
    }
}

/// `choices[0].message.content` of a chat completion, when it is text.
fn reply_text(body: &Value) -> Option<String> {
    body["choices"][0]["message"]["content"]
        .as_str()
        .map(str::to_owned)
}
