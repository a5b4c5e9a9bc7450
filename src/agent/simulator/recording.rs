//! The user simulator's recordings: every message it wrote in one run, keyed by what it had
//! seen, so that a replay answers the same conversation the same way with no model.
//!
//! One JSON Lines file per run, `DIR/users/<scenario id>.r<repeat>.jsonl` (beside the
//! cassettes of `gate --record DIR`, which are the `*.jsonl` files of `DIR` itself):
//! - line 1, the [`Header`]: format version, scenario, repetition, toolgate version and the
//!   simulator's pin;
//! - every further line, one [`Entry`]: the 1-based number of the user message asked for,
//!   the SHA-256 of the request's messages (system prompt and conversation so far) and what the
//!   simulator answered, as it answered it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::SimulatorPin;

/// The recording format this toolgate writes and reads.
pub const RECORDING_VERSION: u32 = 1;

/// The directory under a cassette directory that holds the simulator's recordings.
pub const SUBDIRECTORY: &str = "users";

/// The largest recording read, in bytes (4 MiB): a conversation of at most 20 user messages.
const MAX_RECORDING_BYTES: u64 = 4 << 20;

/// The recording of run `repeat` (0-based) of scenario `scenario` under `dir`.
pub fn path(dir: &Path, scenario: &str, repeat: u32) -> PathBuf {
    dir.join(SUBDIRECTORY)
        .join(format!("{scenario}.r{repeat}.jsonl"))
}

/// The first line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// [`RECORDING_VERSION`] when written; another version is refused.
    pub user_recording_version: u32,
    /// The scenario id of the run.
    pub scenario: String,
    /// The 0-based repetition.
    pub repeat: u32,
    /// The toolgate version that recorded it.
    pub toolgate: String,
    /// The simulator that wrote the messages.
    pub simulator: SimulatorPin,
}

/// One message the simulator wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The 1-based number of the user message it was asked for (2 is the first after the
    /// prompt).
    pub message: u32,
    /// Lowercase hex SHA-256 of the request's messages as compact JSON: the system prompt
    /// (goal, facts, `never_say`) and the conversation so far.
    pub conversation_sha256: String,
    /// What the simulator answered, untouched (its end-of-conversation answer included).
    pub said: String,
}

/// A whole recording.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// Line 1.
    pub header: Header,
    /// The messages, in the order they were written.
    pub entries: Vec<Entry>,
}

impl Recording {
    /// What the simulator answered for message `message` after the conversation hashed as
    /// `conversation_sha256`, if recorded.
    pub fn said(&self, message: u32, conversation_sha256: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|entry| {
                entry.message == message && entry.conversation_sha256 == conversation_sha256
            })
            .map(|entry| entry.said.as_str())
    }

    /// The file's text: the header, then one entry per line.
    pub fn render(&self) -> String {
        let mut text = serde_json::to_string(&self.header).expect("a header serializes") + "\n";
        for entry in &self.entries {
            text.push_str(&serde_json::to_string(entry).expect("an entry serializes"));
            text.push('\n');
        }
        text
    }

    /// Reads the recording at `path`. Errors name the file and, for a bad line, its number:
    /// unreadable, empty, not JSON of the format, or another format version.
    pub fn load(path: &Path) -> anyhow::Result<Recording> {
        let text = crate::fs::read_text(path, "user simulator recording", MAX_RECORDING_BYTES)?;
        Recording::parse(&text, path)
    }

    /// Parses a recording's text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> anyhow::Result<Recording> {
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, line)| !line.trim().is_empty());
        let Some((_, first)) = lines.next() else {
            anyhow::bail!("`{}`: an empty recording (no header line)", path.display());
        };
        let header: Header = serde_json::from_str(first)
            .map_err(|error| anyhow::anyhow!("`{}` line 1: {error}", path.display()))?;
        if header.user_recording_version != RECORDING_VERSION {
            anyhow::bail!(
                "`{}` line 1: `user_recording_version` {} is not the version this toolgate reads \
                 ({RECORDING_VERSION})",
                path.display(),
                header.user_recording_version
            );
        }
        let entries = lines
            .map(|(index, line)| {
                serde_json::from_str(line).map_err(|error| {
                    anyhow::anyhow!("`{}` line {}: {error}", path.display(), index + 1)
                })
            })
            .collect::<anyhow::Result<Vec<Entry>>>()?;
        Ok(Recording { header, entries })
    }
}

/// The simulator pin of the recordings under `dir` (`dir/users/*.jsonl`); `None` when there
/// are none.
///
/// Errors: a recording that cannot be read, or two recordings of different simulators (named),
/// which one replay cannot pin as one.
pub fn pin_of(dir: &Path) -> anyhow::Result<Option<SimulatorPin>> {
    let users = dir.join(SUBDIRECTORY);
    let Ok(entries) = std::fs::read_dir(&users) else {
        return Ok(None);
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .collect();
    paths.sort();
    let mut found: Option<(PathBuf, SimulatorPin)> = None;
    for path in paths {
        let pin = Recording::load(&path)?.header.simulator;
        match &found {
            None => found = Some((path, pin)),
            Some((first, seen)) if *seen != pin => anyhow::bail!(
                "`{}` and `{}` were recorded with different user simulators; record the \
                 directory again in one run",
                first.display(),
                path.display()
            ),
            Some(_) => {}
        }
    }
    Ok(found.map(|(_, pin)| pin))
}

#[cfg(test)]
mod tests {
    //! Recordings: written and read back, looked up by message and hash, bad lines named.

    use super::*;

    fn pin() -> SimulatorPin {
        SimulatorPin {
            model: "sim-1".to_owned(),
            base_url: "http://127.0.0.1:9/v1".to_owned(),
            prompt_version: 1,
            prompt_sha256: "ab".repeat(32),
            temperature: 0.0,
            seed: Some(0),
            max_tokens: Some(512),
        }
    }

    #[test]
    fn a_recording_reads_back_and_answers_by_message_and_conversation() {
        let recording = Recording {
            header: Header {
                user_recording_version: RECORDING_VERSION,
                scenario: "S-1".to_owned(),
                repeat: 0,
                toolgate: "0.1.0".to_owned(),
                simulator: pin(),
            },
            entries: vec![Entry {
                message: 2,
                conversation_sha256: "h1".to_owned(),
                said: "It is Ada.".to_owned(),
            }],
        };
        let text = recording.render();
        assert_eq!(text.lines().count(), 2);
        let read = Recording::parse(&text, Path::new("u/S-1.r0.jsonl")).expect("reads");
        assert_eq!(read, recording);
        assert_eq!(read.said(2, "h1"), Some("It is Ada."));
        assert_eq!(read.said(2, "h2"), None);
        assert_eq!(read.said(3, "h1"), None);

        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(pin_of(dir.path()).expect("no recordings"), None);
        let file = path(dir.path(), "S-1", 0);
        crate::fs::write_atomic(&file, text.as_bytes()).expect("writes");
        assert_eq!(pin_of(dir.path()).expect("one recording"), Some(pin()));
    }

    #[test]
    fn bad_lines_and_other_versions_are_named() {
        let path = Path::new("u/S-1.r0.jsonl");
        let error = |text: &str| Recording::parse(text, path).expect_err("bad").to_string();
        assert_eq!(
            error(""),
            "`u/S-1.r0.jsonl`: an empty recording (no header line)"
        );
        let header = serde_json::json!({"user_recording_version": 9, "scenario": "S-1",
            "repeat": 0, "toolgate": "0", "simulator": pin()});
        assert_eq!(
            error(&header.to_string()),
            "`u/S-1.r0.jsonl` line 1: `user_recording_version` 9 is not the version this \
             toolgate reads (1)"
        );
        let mut good = header;
        good["user_recording_version"] = 1.into();
        assert_eq!(
            error(&format!("{good}\n{{\"message\": 2}}\n")),
            "`u/S-1.r0.jsonl` line 2: missing field `conversation_sha256` at line 1 column 14"
        );
    }
}
