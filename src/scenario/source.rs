//! Where things are in a scenario file: the line of each key and of each expected call,
//! found once when the file is loaded, so reports point at a check's subject without reading
//! the file again.

use std::collections::BTreeMap;

/// Lines (1-based) of a scenario file's keys and expected calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceLines {
    /// Each key -> the line of its first occurrence.
    keys: BTreeMap<String, usize>,
    /// Lines of the `tool` keys after `expected_calls`, in order: entry `i` is the line of
    /// `expected_calls[i]`.
    expected_calls: Vec<usize>,
}

impl SourceLines {
    /// Indexes scenario text (JSON or YAML with one key per line, as scenario files are
    /// written).
    pub fn index(text: &str) -> SourceLines {
        let mut lines = SourceLines::default();
        for (number, line) in text.lines().enumerate() {
            let Some(key) = key_of(line) else {
                continue;
            };
            if key == "tool" && lines.keys.contains_key("expected_calls") {
                lines.expected_calls.push(number + 1);
            }
            lines.keys.entry(key.to_owned()).or_insert(number + 1);
        }
        lines
    }

    /// The line of a check's subject: `expected_calls[i]` is the line of that call's `tool`
    /// key; any other subject the line of its key (`final_state_assertions[0] ...` ->
    /// `final_state_assertions`); 1 when not found.
    pub fn line_of(&self, subject: &str) -> usize {
        let key = subject.split(['[', ' ']).next().unwrap_or(subject);
        let start = self.keys.get(key).copied();
        let index: Option<usize> = subject
            .split_once('[')
            .and_then(|(_, rest)| rest.split(']').next()?.parse().ok());
        match index {
            Some(index) if key == "expected_calls" => {
                self.expected_calls.get(index).copied().or(start)
            }
            _ => start,
        }
        .unwrap_or(1)
    }
}

/// The key a line starts with (`"key":` in JSON, `key:` in YAML, after any indentation, list
/// dash or opening bracket), if any.
fn key_of(line: &str) -> Option<&str> {
    let line = line.trim_start_matches([' ', '\t', '-', '{', '[']);
    if let Some(rest) = line.strip_prefix('"') {
        let (key, after) = rest.split_once('"')?;
        return after.trim_start().starts_with(':').then_some(key);
    }
    let (key, _) = line.split_once(':')?;
    let is_name = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    is_name.then_some(key)
}

#[cfg(test)]
mod tests {
    //! Source lines: expected calls are located by index in both JSON and YAML files.

    use super::*;

    #[test]
    fn locates_expected_calls_by_index_in_json_and_yaml() {
        let json = "{\n  \"id\": \"T1\",\n  \"expected_calls\": [\n    {\"tool\": \"a\"},\n    {\n      \"tool\": \"b\"\n    }\n  ],\n  \"max_calls\": 3\n}\n";
        let lines = SourceLines::index(json);
        assert_eq!(lines.line_of("expected_calls[0]"), 4);
        assert_eq!(lines.line_of("expected_calls[1]"), 6);
        assert_eq!(lines.line_of("max_calls"), 9);
        let yaml = "id: T1\nexpected_calls:\n  - tool: a\n    args_match: {}\nfinal_state_assertions:\n  - x == 1\n";
        let lines = SourceLines::index(yaml);
        assert_eq!(lines.line_of("expected_calls[0]"), 3);
        assert_eq!(lines.line_of("expected_calls[5]"), 2);
        assert_eq!(lines.line_of("final_state_assertions[0] `x == 1`"), 5);
        assert_eq!(lines.line_of("nothing"), 1);
    }
}
