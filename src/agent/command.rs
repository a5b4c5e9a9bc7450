//! The external agent: the user's own program, in any language. The runner serves the
//! scenario's tools over MCP (streamable HTTP on loopback) and this module starts the program
//! with the server URL and the prompt, then reads its final answer from stdout.
//!
//! The program's environment gains:
//! - `TOOLGATE_MCP_URL`: the MCP endpoint, `http://127.0.0.1:PORT/mcp`;
//! - `TOOLGATE_PROMPT`: the scenario's user prompt (also written to stdin, which is then closed);
//! - `TOOLGATE_SCENARIO_ID`: the scenario id;
//! - `TOOLGATE_REPEAT`: the 0-based repetition index (with `--repeat k`);
//! - `TOOLGATE_MODEL`, `TOOLGATE_SYSTEM_PROMPT`: when configured.

use std::process::Stdio;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::agent::{AgentError, AgentOutcome, Usage};

/// The most characters of the program's stderr kept in an error.
const MAX_STDERR_CHARS: usize = 2000;

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
}

impl CommandAgent {
    /// Runs the program once and waits for it.
    ///
    /// The final answer is its stdout, trimmed (`None` when empty). The run's time limit is
    /// the runner's: dropping this future kills the program. Errors (`AgentError::Command`)
    /// when the program cannot start or exits with a non-zero status or a signal; the error
    /// names the status and the end of its stderr. Its stderr is otherwise discarded.
    pub async fn run(&self, invocation: Invocation<'_>) -> Result<AgentOutcome, AgentError> {
        let mut command = tokio::process::Command::new("sh");
        command
            .arg("-c")
            .arg(&self.command)
            .env("TOOLGATE_MCP_URL", invocation.mcp_url)
            .env("TOOLGATE_PROMPT", invocation.prompt)
            .env("TOOLGATE_SCENARIO_ID", invocation.scenario_id)
            .env("TOOLGATE_REPEAT", invocation.repeat.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(model) = &self.model {
            command.env("TOOLGATE_MODEL", model);
        }
        if let Some(system_prompt) = &self.system_prompt {
            command.env("TOOLGATE_SYSTEM_PROMPT", system_prompt);
        }
        let mut child = command.spawn().map_err(|error| {
            AgentError::Command(format!("`{}` failed to start: {error}", self.command))
        })?;
        if let Some(mut stdin) = child.stdin.take() {
            // A program that never reads stdin closes it early: that is not an error.
            let _ = stdin.write_all(invocation.prompt.as_bytes()).await;
        }
        let mut stdout = child.stdout.take();
        let mut stderr = child.stderr.take();
        let read_stdout = async {
            let mut bytes = Vec::new();
            if let Some(stdout) = &mut stdout {
                let _ = stdout.read_to_end(&mut bytes).await;
            }
            bytes
        };
        let read_stderr = async {
            let mut bytes = Vec::new();
            if let Some(stderr) = &mut stderr {
                let _ = stderr.read_to_end(&mut bytes).await;
            }
            bytes
        };
        let (out, err, status) = tokio::join!(read_stdout, read_stderr, child.wait());
        let status = status.map_err(|error| {
            AgentError::Command(format!(
                "`{}` could not be waited for: {error}",
                self.command
            ))
        })?;
        if !status.success() {
            let stderr = String::from_utf8_lossy(&err);
            let tail = tail(stderr.trim(), MAX_STDERR_CHARS);
            let how = match status.code() {
                Some(code) => format!("exited with status {code}"),
                None => "was killed by a signal".to_owned(),
            };
            return Err(AgentError::Command(if tail.is_empty() {
                format!("`{}` {how}", self.command)
            } else {
                format!("`{}` {how}: {tail}", self.command)
            }));
        }
        let answer = String::from_utf8_lossy(&out).trim().to_owned();
        Ok(AgentOutcome {
            final_answer: (!answer.is_empty()).then_some(answer),
            turns: 1,
            hit_turn_limit: false,
            usage: Usage::default(),
        })
    }
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
    };

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

    #[test]
    fn tail_keeps_the_last_characters() {
        assert_eq!(tail("abcdef", 3), "def");
        assert_eq!(tail("ab", 3), "ab");
    }
}
