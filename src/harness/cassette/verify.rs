//! `toolgate cassette verify`: the recorded requests sent again to live servers, and the
//! answers compared with the recorded ones, so that a change to a server shows up as a diff.
//!
//! Each cassette is played against fresh servers (as a run starts them), call by call in
//! recorded order. Answers are compared as JSON by meaning (key order and `1` vs `1.0` do not
//! matter), leaving out the parts the ignore paths select (JSONPath, RFC 9535, over the
//! answer as the cassette stores it: `$.result.created_at`, `$.tool_error`), after replacing
//! each match of a mask (a regular expression) inside every string of both answers by
//! [`MASK`]: a commit hash or a timestamp inside a text then changes nothing, while the rest
//! of the text is still compared.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context as _, Result};
use serde_json::Value;
use serde_json_path::JsonPath;

use super::{Cassette, RecordedAnswer};
use crate::harness::Backend;

/// The most differences reported per call.
pub const DIFFERENCES_SHOWN: usize = 5;

/// What a mask's match becomes in both answers before they are compared.
pub const MASK: &str = "[masked]";

/// What the comparison leaves out: answer parts (ignore paths) and, inside strings, the
/// matches of masks.
#[derive(Debug, Clone, Default)]
pub struct Ignore {
    paths: Vec<JsonPath>,
    masks: Vec<regex::Regex>,
}

impl Ignore {
    /// Parses `paths` (JSONPath expressions, RFC 9535) and `masks` (regular expressions, Rust
    /// `regex` syntax), in any number (none compares everything).
    ///
    /// Errors: a path or mask that does not parse, naming it.
    pub fn new(paths: &[String], masks: &[String]) -> Result<Ignore> {
        let paths = paths
            .iter()
            .map(|path| {
                JsonPath::parse(path).with_context(|| format!("invalid ignore path `{path}`"))
            })
            .collect::<Result<_>>()?;
        let masks = masks
            .iter()
            .map(|mask| regex::Regex::new(mask).with_context(|| format!("invalid mask `{mask}`")))
            .collect::<Result<_>>()?;
        Ok(Ignore { paths, masks })
    }

    /// `value` with every mask's matches in its strings replaced by [`MASK`], without the
    /// nodes any path selects.
    fn strip(&self, value: &Value) -> Value {
        let value = &self.mask(value);
        let mut out = value.clone();
        for path in &self.paths {
            let mut pointers: Vec<String> = path
                .query_located(value)
                .locations()
                .map(|location| location.to_json_pointer())
                .collect();
            // Deepest and last first, so removing one never shifts another.
            pointers.sort_by(|a, b| b.cmp(a));
            for pointer in pointers {
                remove(&mut out, &pointer);
            }
        }
        out
    }
}

impl Ignore {
    /// `value` with every mask's matches in each string (not in keys) replaced by [`MASK`].
    fn mask(&self, value: &Value) -> Value {
        if self.masks.is_empty() {
            return value.clone();
        }
        let mut masked = value.clone();
        crate::scenario::map_strings(&mut masked, &|text| {
            self.masks.iter().fold(text.to_owned(), |text, mask| {
                mask.replace_all(&text, MASK).into_owned()
            })
        });
        masked
    }
}

/// Removes the node at JSON Pointer `pointer` (RFC 6901) from `value`, if it is there.
fn remove(value: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    let last = last.replace("~1", "/").replace("~0", "~");
    match value.pointer_mut(parent) {
        Some(Value::Object(map)) => {
            map.shift_remove(&last);
        }
        Some(Value::Array(items)) => {
            if let Ok(index) = last.parse::<usize>()
                && index < items.len()
            {
                items.remove(index);
            }
        }
        _ => {}
    }
}

/// The differences between a recorded and a live answer, after `ignore` (masks, then paths): one line each,
/// `PATH: recorded X, live Y`, at most [`DIFFERENCES_SHOWN`] (and a count of the rest).
pub fn differences(
    recorded: &RecordedAnswer,
    live: &RecordedAnswer,
    ignore: &Ignore,
) -> Vec<String> {
    let (recorded, live) = (
        ignore.strip(&recorded.as_value()),
        ignore.strip(&live.as_value()),
    );
    let mut found = Vec::new();
    walk(&recorded, &live, "$", &mut found);
    if found.len() > DIFFERENCES_SHOWN {
        let rest = found.len() - DIFFERENCES_SHOWN;
        found.truncate(DIFFERENCES_SHOWN);
        found.push(format!("and {rest} more"));
    }
    found
}

fn walk(recorded: &Value, live: &Value, path: &str, found: &mut Vec<String>) {
    match (recorded, live) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                let at = format!("{path}.{key}");
                match b.get(key) {
                    Some(other) => walk(value, other, &at, found),
                    None => found.push(format!("{at}: recorded {}, live absent", short(value))),
                }
            }
            for (key, value) in b {
                if !a.contains_key(key) {
                    found.push(format!(
                        "{path}.{key}: recorded absent, live {}",
                        short(value)
                    ));
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (index, (x, y)) in a.iter().zip(b).enumerate() {
                walk(x, y, &format!("{path}[{index}]"), found);
            }
        }
        (Value::Array(a), Value::Array(b)) => found.push(format!(
            "{path}: recorded {} items, live {}",
            a.len(),
            b.len()
        )),
        (a, b) if crate::json::canonical(a) == crate::json::canonical(b) => {}
        (a, b) => found.push(format!("{path}: recorded {}, live {}", short(a), short(b))),
    }
}

/// A value as a short JSON text for a diff line.
fn short(value: &Value) -> String {
    crate::redact::cut(&value.to_string(), 80)
}

/// What verifying one cassette found.
#[derive(Debug, Clone, PartialEq)]
pub struct CassetteCheck {
    /// The cassette.
    pub path: PathBuf,
    /// How many calls were sent again.
    pub calls: usize,
    /// Each change, as `line N: `tool`: difference` or a changed catalog; empty when the
    /// live servers answered as recorded.
    pub changes: Vec<String>,
}

/// Plays `cassette` against `backend` (fresh servers, started for it), whose servers now list
/// tools hashing to `live` (server name -> [`super::ServerEntry::tools_sha256`]); closes the
/// backend.
pub async fn verify(
    cassette: &Cassette,
    mut backend: Box<dyn Backend>,
    live: &BTreeMap<String, String>,
    ignore: &Ignore,
) -> CassetteCheck {
    let mut changes = Vec::new();
    for server in &cassette.header.servers {
        match live.get(&server.name) {
            None => changes.push(format!("server `{}` is not in the live suite", server.name)),
            Some(sha) if *sha != server.tools_sha256 => changes.push(format!(
                "the tools server `{}` lists changed (recorded sha256 {}, live {})",
                server.name,
                prefix(&server.tools_sha256),
                prefix(sha)
            )),
            Some(_) => {}
        }
    }
    // A recorded `{seed_dir}` stands for this run's seed directory, both ways.
    let seed_dir = backend
        .paths()
        .map(|paths| paths.seed_dir.to_string_lossy().into_owned())
        .unwrap_or_default();
    for (line, interaction) in &cassette.interactions {
        let arguments = super::seed_dir::arguments_for_run(&interaction.arguments, &seed_dir);
        let answer = backend.call(&interaction.tool, &arguments).await;
        let live =
            super::seed_dir::answer_as_recorded(RecordedAnswer::from_answer(&answer), &seed_dir);
        for difference in differences(&interaction.answer, &live, ignore) {
            changes.push(format!("line {line}: `{}`: {difference}", interaction.tool));
        }
        if let Some(failure) = backend.failure() {
            changes.push(format!("line {line}: {failure}"));
            break;
        }
    }
    backend.close().await;
    CassetteCheck {
        path: cassette.path.clone(),
        calls: cassette.interactions.len(),
        changes,
    }
}

/// The first 12 hex digits of a hash.
fn prefix(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

#[cfg(test)]
mod tests {
    //! Cassette verify: answers compare by meaning; differences name path and values, capped.

    use serde_json::json;

    use super::*;

    fn result(value: Value) -> RecordedAnswer {
        RecordedAnswer::Result(value)
    }

    #[test]
    fn equal_answers_by_meaning_have_no_differences() {
        let none = Ignore::default();
        assert_eq!(
            differences(
                &result(json!({"a": 1, "b": [1.0]})),
                &result(json!({"b": [1], "a": 1.0})),
                &none
            ),
            Vec::<String>::new()
        );
    }

    #[test]
    fn differences_name_the_path_and_both_values() {
        let none = Ignore::default();
        assert_eq!(
            differences(
                &result(json!({"id": "T-1", "tags": ["a"], "gone": true})),
                &result(json!({"id": "T-2", "tags": ["a", "b"], "new": 3})),
                &none
            ),
            [
                "$.result.id: recorded \"T-1\", live \"T-2\"",
                "$.result.tags: recorded 1 items, live 2",
                "$.result.gone: recorded true, live absent",
                "$.result.new: recorded absent, live 3",
            ]
        );
        assert_eq!(
            differences(
                &result(json!({})),
                &RecordedAnswer::ToolError("down".into()),
                &none
            ),
            [
                "$.result: recorded {}, live absent",
                "$.tool_error: recorded absent, live \"down\""
            ]
        );
    }

    #[test]
    fn ignored_paths_are_left_out_of_the_comparison() {
        let ignore = Ignore::new(
            &["$.result.created_at".into(), "$.result.items[*].id".into()],
            &[],
        )
        .expect("parses");
        assert_eq!(
            differences(
                &result(json!({"created_at": "2026-01-01", "items": [{"id": 1, "n": "a"}]})),
                &result(json!({"created_at": "2026-12-03", "items": [{"id": 9, "n": "b"}]})),
                &ignore
            ),
            ["$.result.items[0].n: recorded \"a\", live \"b\""]
        );
        assert_eq!(
            Ignore::new(&["$.[".into()], &[])
                .expect_err("does not parse")
                .to_string(),
            "invalid ignore path `$.[`"
        );
    }

    #[test]
    fn many_differences_are_cut_with_a_count() {
        let a = json!({"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1});
        let b = json!({"a": 2, "b": 2, "c": 2, "d": 2, "e": 2, "f": 2, "g": 2});
        let found = differences(&result(a), &result(b), &Ignore::default());
        assert_eq!(found.len(), 6);
        assert_eq!(found[5], "and 2 more");
    }

    #[test]
    fn masked_matches_inside_texts_change_nothing_but_the_rest_of_the_text_still_does() {
        let masks = [
            r"\b[0-9a-f]{40}\b".to_owned(),
            r"\d{4}-\d{2}-\d{2}T[\d:.]+Z".to_owned(),
        ];
        let ignore = Ignore::new(&[], &masks).expect("parses");
        let text = |commit: &str, when: &str, subject: &str| {
            RecordedAnswer::Text(format!("commit {commit}\nDate: {when}\n\n    {subject}"))
        };
        let a = "3f1c2d9e8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e";
        let b = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567";
        assert_eq!(
            differences(
                &text(a, "2026-01-02T10:00:00Z", "add the README"),
                &text(b, "2026-12-06T11:02:33.5Z", "add the README"),
                &ignore
            ),
            Vec::<String>::new()
        );
        assert_eq!(
            differences(
                &text(a, "2026-01-02T10:00:00Z", "add the README"),
                &text(b, "2026-12-06T11:02:33Z", "delete the README"),
                &ignore
            ),
            [
                "$.text: recorded \"commit [masked]\\nDate: [masked]\\n\\n    add the README\", live \"commit [masked]\\nDate: [masked]\\n\\n    delete the README\""
            ]
        );
        // Structured string values are masked too; numbers and keys are not.
        assert_eq!(
            differences(
                &result(json!({"head": a, "n": 1})),
                &result(json!({"head": b, "n": 2})),
                &ignore
            ),
            ["$.result.n: recorded 1, live 2"]
        );
        // Without the masks the same answers differ.
        assert_eq!(
            differences(
                &result(json!({"head": a})),
                &result(json!({"head": b})),
                &Ignore::default()
            )
            .len(),
            1
        );
        assert_eq!(
            format!(
                "{:#}",
                Ignore::new(&[], &["(".into()]).expect_err("does not parse")
            ),
            "invalid mask `(`: regex parse error:\n    (\n    ^\nerror: unclosed group"
        );
    }
}
