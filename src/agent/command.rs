//! The external agent: the user's own program, in any language. The runner serves the
//! scenario's tools over MCP (streamable HTTP on loopback) and this module starts the program
//! with the server URL and the prompt, then reads its final answer from stdout.
//!
//! The program's environment gains:
//! - `TOOLGATE_MCP_URL`: the MCP endpoint, `http://127.0.0.1:PORT/mcp`;
//! - `TOOLGATE_PROMPT`: the scenario's user prompt (also written to stdin, which is then closed);
//! - `TOOLGATE_SCENARIO_ID`: the scenario id;
//! - `TOOLGATE_REPEAT`: the 0-based repetition index (with `--repeat k`);
//! - `TOOLGATE_MODEL`, `TOOLGATE_SYSTEM_PROMPT`: when configured;
//! - `TOOLGATE_USER_URL`: when the scenario's tools ask the user for input (`elicitations`),
//!   the user endpoint, `http://127.0.0.1:PORT/elicitation`.
//!
//! Elicitation tests the program's own MCP client. A tool that asks sends the client an
//! elicitation request (`elicitation/create` on the `tools/call` stream for `2025-11-25`, which
//! then gets a session; an `input_required` result for `2026-07-28`). A faithful client
//! declares the `elicitation` capability, shows the request to its user by POSTing the
//! request's params as JSON to `TOOLGATE_USER_URL`, and returns the answer it gets there,
//! `{"action": "accept" | "decline" | "cancel", "content": {...}}`, unchanged. The harness
//! records whether the user saw each request and what they answered; a client that answers a
//! request the user never saw, or returns another answer than the user's (accepts what the
//! user declined), fails the run's `elicitation` check (see `crate::score::elicitation`).
//!
//! In a conversation (a scenario with `user_turns` or a `simulated_user`) the program runs once
//! per user message, against the same MCP server (so the state carries over):
//! `TOOLGATE_PROMPT` and stdin carry the new message, and from the second message on
//! - `TOOLGATE_TURN`: the message's 1-based number (the prompt is 1);
//! - `TOOLGATE_CONVERSATION`: the conversation so far as a JSON array of
//!   `{"role": "user" | "assistant", "content": TEXT}` objects, ending with the new message
//!   (an assistant's empty reply is `""`).

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};

use crate::agent::{AgentError, AgentOutcome};
use crate::redact::Redactor;

/// The most characters of the program's stderr kept in an error.
const MAX_STDERR_CHARS: usize = 2000;

/// The most stderr kept while the program runs (its end), in bytes.
const MAX_STDERR_BYTES: usize = 64 * 1024;

/// The longest final answer read from stdout, in bytes (4 MiB).
pub const MAX_STDOUT_BYTES: usize = 4 * 1024 * 1024;

/// How long children the program left behind may keep its stdout open after it exits before
/// the whole process group is killed.
pub const EXIT_GRACE: Duration = Duration::from_millis(500);

/// How to start the user's agent program.
#[derive(Debug, Clone)]
pub struct CommandAgent {
    /// A shell command line, run with `sh -c` in the current directory.
    pub command: String,
    /// Passed as `TOOLGATE_MODEL` when set.
    pub model: Option<String>,
    /// Passed as `TOOLGATE_SYSTEM_PROMPT` when set.
    pub system_prompt: Option<String>,
}

/// What the program is told about one run.
#[derive(Debug, Clone, Copy)]
pub struct Invocation<'a> {
    /// The MCP endpoint serving this run's harness.
    pub mcp_url: &'a str,
    /// The scenario's prompt.
    pub prompt: &'a str,
    /// The scenario id.
    pub scenario_id: &'a str,
    /// The 0-based repetition index.
    pub repeat: u32,
    /// In a conversation, from the second user message on: the message's number and the
    /// conversation so far (a JSON array, see the module docs).
    pub conversation: Option<(u32, &'a str)>,
    /// Where the program's MCP client shows elicitations to the user
    /// (`TOOLGATE_USER_URL`), when the scenario's tools ask the user anything.
    pub user_url: Option<&'a str>,
}

impl CommandAgent {
    /// Runs the program once and waits for it.
    ///
    /// The program runs in a process group of its own. The final answer is its stdout,
    /// trimmed (`None` when empty) and with every secret of the environment redacted, read
    /// when the program exits: children it left holding
    /// stdout get [`EXIT_GRACE`] to finish, then the whole group is killed, as it is when the
    /// run's time limit drops this future. Errors (`AgentError::Command`) when the program
    /// cannot start, writes more than [`MAX_STDOUT_BYTES`] to stdout, or exits with a
    /// non-zero status or a signal; the error names the status and the end of its stderr,
    /// with every secret of the environment redacted. Its stderr is otherwise discarded.
    pub async fn run(&self, invocation: Invocation<'_>) -> Result<AgentOutcome, AgentError> {
        self.run_redacted(invocation, &Redactor::from_env()).await
    }

    /// Plays a conversation: runs the program for the prompt, then once for each message
    /// `next` gives after the program's answer (`next(answer).await`; `None` ends it). The
    /// outcome is the last run's answer, with the runs' turns summed. Errors as
    /// [`CommandAgent::run`], for any of the runs.
    pub async fn converse<F>(
        &self,
        first: Invocation<'_>,
        next: impl Fn(Option<String>) -> F,
    ) -> Result<AgentOutcome, AgentError>
    where
        F: std::future::Future<Output = Option<String>>,
    {
        let mut outcome = self.run(first).await?;
        let mut history = vec![serde_json::json!({"role": "user", "content": first.prompt})];
        let mut number = 1_u32;
        while let Some(message) = next(outcome.final_answer.clone()).await {
            number += 1;
            history.push(serde_json::json!({"role": "assistant",
                                            "content": outcome.final_answer.as_deref().unwrap_or("")}));
            history.push(serde_json::json!({"role": "user", "content": message}));
            let conversation = serde_json::Value::Array(history.clone()).to_string();
            let answered = self
                .run(Invocation {
                    prompt: &message,
                    conversation: Some((number, &conversation)),
                    ..first
                })
                .await?;
            outcome.final_answer = answered.final_answer;
            outcome.turns += answered.turns;
        }
        Ok(outcome)
    }

    /// [`CommandAgent::run`], redacting the secrets `redactor` knows.
    async fn run_redacted(
        &self,
        invocation: Invocation<'_>,
        redactor: &Redactor,
    ) -> Result<AgentOutcome, AgentError> {
        let shown = redactor.redact(&self.command);
        let mut command = tokio::process::Command::new("sh");
        command
            .arg("-c")
            .arg(&self.command)
            .env("TOOLGATE_MCP_URL", invocation.mcp_url)
            .env("TOOLGATE_PROMPT", invocation.prompt)
            .env("TOOLGATE_SCENARIO_ID", invocation.scenario_id)
            .env("TOOLGATE_REPEAT", invocation.repeat.to_string())
            .env_remove("TOOLGATE_TURN")
            .env_remove("TOOLGATE_CONVERSATION")
            .env_remove("TOOLGATE_USER_URL")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        crate::process::contain(command.as_std_mut());
        if let Some((turn, conversation)) = invocation.conversation {
            command
                .env("TOOLGATE_TURN", turn.to_string())
                .env("TOOLGATE_CONVERSATION", conversation);
        }
        if let Some(url) = invocation.user_url {
            command.env("TOOLGATE_USER_URL", url);
        }
        if let Some(model) = &self.model {
            command.env("TOOLGATE_MODEL", model);
        }
        if let Some(system_prompt) = &self.system_prompt {
            command.env("TOOLGATE_SYSTEM_PROMPT", system_prompt);
        }
        let mut child = command
            .spawn()
            .map_err(|error| AgentError::Command(format!("`{shown}` failed to start: {error}")))?;
        // Killed on every way out: a normal exit (stray children), an error, or the run's
        // time limit dropping this future.
        let group = child.id().map(ProcessGroup);
        if let Some(mut stdin) = child.stdin.take() {
            // A program that never reads stdin closes it early: that is not an error.
            let _ = stdin.write_all(invocation.prompt.as_bytes()).await;
        }
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let readers = async {
            tokio::join!(
                capture(stdout, MAX_STDOUT_BYTES, Keep::Head),
                capture(stderr, MAX_STDERR_BYTES, Keep::Tail)
            )
        };
        tokio::pin!(readers);
        let (status, (out, err)) = tokio::select! {
            captured = &mut readers => (child.wait().await, captured),
            status = child.wait() => {
                // The program is gone; children may still hold its pipes open.
                let captured = match tokio::time::timeout(EXIT_GRACE, &mut readers).await {
                    Ok(captured) => captured,
                    Err(_) => {
                        if let Some(group) = &group {
                            ProcessGroup::kill(group.0);
                        }
                        readers.await
                    }
                };
                (status, captured)
            }
        };
        let status = status.map_err(|error| {
            AgentError::Command(format!("`{shown}` could not be waited for: {error}"))
        })?;
        if !status.success() {
            let stderr = redactor.redact(&String::from_utf8_lossy(&err.bytes));
            let tail = tail(stderr.trim(), MAX_STDERR_CHARS);
            let how = match status.code() {
                Some(code) => format!("exited with status {code}"),
                None => "was killed by a signal".to_owned(),
            };
            return Err(AgentError::Command(if tail.is_empty() {
                format!("`{shown}` {how}")
            } else {
                format!("`{shown}` {how}: {tail}")
            }));
        }
        if out.overflowed {
            return Err(AgentError::Command(format!(
                "`{shown}` wrote more than {} MiB to stdout; the final answer must be shorter",
                MAX_STDOUT_BYTES / (1024 * 1024)
            )));
        }
        // An agent may echo a key it was given; the answer reaches results, trace and reports.
        let answer = redactor.redact(String::from_utf8_lossy(&out.bytes).trim());
        Ok(AgentOutcome {
            final_answer: (!answer.is_empty()).then_some(answer),
            turns: 1,
            ..AgentOutcome::default()
        })
    }
}

/// The agent's process group (its id is the program's pid), killed when dropped.
struct ProcessGroup(u32);

impl ProcessGroup {
    fn kill(id: u32) {
        if let Ok(id) = i32::try_from(id) {
            // The group may already be gone; nothing is left to do then.
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(id),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        ProcessGroup::kill(self.0);
    }
}

/// Which end of a stream to keep when it is longer than its limit.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// The first bytes (the final answer; more is an error).
    Head,
    /// The last bytes (stderr, whose end says what went wrong).
    Tail,
}

/// A stream read to its end, at most `limit` bytes of it kept.
#[derive(Default)]
struct Captured {
    bytes: Vec<u8>,
    /// Whether the stream was longer than the limit.
    overflowed: bool,
}

/// Reads `stream` to its end (so the writer never blocks), keeping at most `limit` bytes.
async fn capture(stream: Option<impl AsyncRead + Unpin>, limit: usize, keep: Keep) -> Captured {
    let mut captured = Captured::default();
    let Some(mut stream) = stream else {
        return captured;
    };
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let read = match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        captured.bytes.extend_from_slice(&buffer[..read]);
        if captured.bytes.len() > limit {
            captured.overflowed = true;
            match keep {
                Keep::Head => captured.bytes.truncate(limit),
                Keep::Tail => {
                    let excess = captured.bytes.len() - limit;
                    captured.bytes.drain(..excess);
                }
            }
        }
    }
    captured
}

/// The last `max` characters of `text`.
fn tail(text: &str, max: usize) -> &str {
    let count = text.chars().count();
    match text.char_indices().nth(count.saturating_sub(max)) {
        Some((start, _)) => &text[start..],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    //! The command agent: stdout is the answer, errors carry stderr, secrets redacted, bounded.

    use super::*;

    fn agent(command: &str) -> CommandAgent {
        CommandAgent {
            command: command.to_owned(),
            model: Some("m1".to_owned()),
            system_prompt: None,
        }
    }

    const INVOCATION: Invocation<'static> = Invocation {
        mcp_url: "http://127.0.0.1:1/mcp",
        prompt: "Find Acme.",
        scenario_id: "T1-001",
        repeat: 2,
        conversation: None,
        user_url: None,
    };

    #[tokio::test]
    async fn a_conversation_runs_the_program_once_per_message_with_the_history() {
        let agent = agent(r#"echo "${TOOLGATE_TURN:-1}:$TOOLGATE_PROMPT:$TOOLGATE_CONVERSATION""#);
        let said = std::sync::Mutex::new(Vec::new());
        let outcome = agent
            .converse(INVOCATION, |answer| {
                let mut said = said.lock().expect("not poisoned");
                said.push(answer);
                std::future::ready((said.len() < 3).then(|| format!("reply {}", said.len())))
            })
            .await
            .expect("the program runs");
        let said = said.into_inner().expect("not poisoned");
        assert_eq!(said[0].as_deref(), Some("1:Find Acme.:"));
        assert_eq!(
            said[1].as_deref(),
            Some(
                r#"2:reply 1:[{"role":"user","content":"Find Acme."},{"role":"assistant","content":"1:Find Acme.:"},{"role":"user","content":"reply 1"}]"#
            )
        );
        assert_eq!(said.len(), 3);
        assert!(
            outcome
                .final_answer
                .as_deref()
                .is_some_and(|answer| answer.starts_with("3:reply 2:[")),
            "the last run's answer is the outcome's: {:?}",
            outcome.final_answer
        );
        assert_eq!(outcome.turns, 3);
    }

    #[tokio::test]
    async fn final_answer_is_stdout_and_the_prompt_arrives_twice() {
        let outcome = agent(
            r#"read line; echo "$line|$TOOLGATE_PROMPT|$TOOLGATE_SCENARIO_ID|$TOOLGATE_REPEAT|$TOOLGATE_MODEL|$TOOLGATE_MCP_URL""#,
        )
        .run(INVOCATION)
        .await
        .expect("runs");
        assert_eq!(
            outcome.final_answer.as_deref(),
            Some("Find Acme.|Find Acme.|T1-001|2|m1|http://127.0.0.1:1/mcp")
        );
    }

    #[tokio::test]
    async fn non_zero_exit_is_an_error_with_the_end_of_stderr() {
        let error = agent("echo partial; echo 'no key configured' >&2; exit 3")
            .run(INVOCATION)
            .await
            .expect_err("exit 3");
        assert_eq!(
            error.to_string(),
            "agent command `echo partial; echo 'no key configured' >&2; exit 3` exited with status 3: no key configured"
        );
    }

    #[tokio::test]
    async fn empty_stdout_is_no_final_answer() {
        let outcome = agent("true").run(INVOCATION).await.expect("runs");
        assert_eq!(outcome.final_answer, None);
    }

    #[tokio::test]
    async fn a_child_left_holding_stdout_does_not_hold_the_answer_back() {
        let started = std::time::Instant::now();
        let outcome = agent("echo done; sleep 30 &")
            .run(INVOCATION)
            .await
            .expect("runs");
        assert_eq!(outcome.final_answer.as_deref(), Some("done"));
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "waited for the child"
        );
    }

    #[tokio::test]
    async fn secrets_in_stderr_and_the_command_line_are_redacted() {
        let key = "sk-test-canary-0123456789";
        let redactor = Redactor::new([key, "x"]);
        let error = agent(&format!(
            "echo 'auth failed for {key} x' >&2; exit 1 # {key}"
        ))
        .run_redacted(INVOCATION, &redactor)
        .await
        .expect_err("exit 1");
        assert_eq!(
            error.to_string(),
            "agent command `echo 'auth failed for [redacted] x' >&2; exit 1 # [redacted]` exited with status 1: auth failed for [redacted] x"
        );
    }

    /// Issue case: a key the agent echoed in its final answer reached report.md, results.json
    /// and trace.jsonl in clear (its stderr was already redacted).
    #[tokio::test]
    async fn a_secret_in_the_final_answer_is_redacted() {
        let key = "sk-test-canary-0123456789";
        let redactor = Redactor::new([key]);
        let outcome = agent(&format!("echo 'Done. I used {key} to log in.'"))
            .run_redacted(INVOCATION, &redactor)
            .await
            .expect("runs");
        assert_eq!(
            outcome.final_answer.as_deref(),
            Some("Done. I used [redacted] to log in.")
        );
    }

    #[tokio::test]
    async fn an_endless_answer_is_an_error_not_a_memory_blowup() {
        let error = agent("head -c 5000000 /dev/zero")
            .run(INVOCATION)
            .await
            .expect_err("too long");
        assert_eq!(
            error.to_string(),
            "agent command `head -c 5000000 /dev/zero` wrote more than 4 MiB to stdout; the final answer must be shorter"
        );
    }

    #[test]
    fn tail_keeps_the_last_characters() {
        assert_eq!(tail("abcdef", 3), "def");
        assert_eq!(tail("ab", 3), "ab");
    }
}
