//! Warnings about scenarios that judge the route instead of the outcome, or that cannot see a
//! wrong answer: the kinds an outside review of written trajectories found. Each warning
//! names the scenario, the field and, where the file shows it, the line. None of them fails
//! `verify`: a suite may have reasons (a system prompt, a tool whose query text matters).

use std::path::Path;

use serde_json::Value;

use crate::scenario::{Scenario, ValueSource};

/// One warning about one scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The scenario's id.
    pub scenario: String,
    /// The field it is about (`prompt`, `expected_calls[0].args_match.query`, ...).
    pub field: String,
    /// The 1-based line in the scenario file, when known.
    pub line: Option<usize>,
    /// What is wrong and what to do, in one sentence.
    pub message: String,
}

/// Argument names that carry free search text.
const SEARCH_ARGUMENTS: [&str; 6] = ["query", "q", "search", "text", "keyword", "term"];

/// Argument names that carry the content of a write.
const CONTENT_ARGUMENTS: [&str; 10] = [
    "text",
    "body",
    "message",
    "notes",
    "subject",
    "title",
    "description",
    "reason",
    "justification",
    "content",
];

/// Words that open a question in a prompt (`tell me`, `show me` and `give me` too).
const QUESTION_OPENERS: [&str; 12] = [
    "what", "which", "who", "how", "when", "where", "is", "are", "does", "do", "can", "list",
];

/// Every warning about `scenario`; `text` is its file as written (for lines and the YAML
/// comment trap).
pub fn lint(scenario: &Scenario, text: &str) -> Vec<Warning> {
    let mut warnings = Warnings {
        scenario,
        list: Vec::new(),
    };
    let is_yaml = scenario
        .path
        .extension()
        .is_some_and(|ext| ext == "yaml" || ext == "yml");
    if is_yaml {
        for (line, value) in comment_traps(text) {
            warnings.warn(
                "text",
                Some(line),
                format!(
                    "the plain string `{value} #...` is cut at ` #`, which YAML reads as a comment: quote it"
                ),
            );
        }
    }
    if asks_question(&scenario.prompt) && scenario.final_answer.is_empty() {
        warnings.warn(
            "final_answer",
            None,
            "the prompt asks a question, but nothing checks the answer: add `final_answer.values` or `claims`".to_owned(),
        );
    }
    warnings.unchecked_writes();
    warnings.pinned_search_text();
    warnings.answer_values();
    warnings.tight_budget();
    warnings.list
}

/// The warnings about one scenario, as they are found. Each method looks for one kind.
struct Warnings<'a> {
    scenario: &'a Scenario,
    list: Vec<Warning>,
}

impl Warnings<'_> {
    /// Adds a warning about `field` of the scenario.
    fn warn(&mut self, field: &str, line: Option<usize>, message: String) {
        self.list.push(Warning {
            scenario: self.scenario.id.clone(),
            field: field.to_owned(),
            line,
            message,
        });
    }

    /// Writes whose outcome nothing checks: no final-state assertion at all, or none that
    /// looks at the content they write.
    fn unchecked_writes(&mut self) {
        let scenario = self.scenario;
        let writes: Vec<(usize, &str)> = scenario
            .expected_calls
            .iter()
            .enumerate()
            .filter(|(_, call)| !call.optional && !call.read_only)
            .map(|(i, call)| (i, call.tool.as_str()))
            .collect();
        let own_servers = !scenario.final_state_probes.is_empty();
        if !writes.is_empty() && scenario.final_state_assertions.is_empty() && !own_servers {
            self.warn(
                "final_state_assertions",
                None,
                format!(
                    "`{}` writes, but no final-state assertion checks what it left",
                    writes[0].1
                ),
            );
        }
        let content_checked = scenario.final_state_assertions.iter().any(|assertion| {
            let source = assertion.source();
            source.contains("mentions(")
                || source.contains("says(")
                || source.contains("contains(")
                || CONTENT_ARGUMENTS.iter().any(|name| {
                    source.contains(&format!(".{name}")) || source.contains(&format!("_{name}"))
                })
        });
        for (i, _) in &writes {
            let call = &scenario.expected_calls[*i];
            let carries: Vec<&str> = call
                .reference_args
                .keys()
                .chain(call.args_match.keys())
                .map(String::as_str)
                .filter(|name| CONTENT_ARGUMENTS.contains(name))
                .collect();
            if !carries.is_empty()
                && !content_checked
                && !scenario.final_state_assertions.is_empty()
            {
                self.warn(
                    &format!("expected_calls[{i}]"),
                    None,
                    format!(
                        "`{}` writes content (`{}`) that no final-state assertion checks: assert it with `mentions` or `says`",
                        call.tool,
                        carries.join("`, `")
                    ),
                );
            }
        }
    }

    /// Reads that pin their free search text, which other words could serve as well.
    fn pinned_search_text(&mut self) {
        for (i, call) in self.scenario.expected_calls.iter().enumerate() {
            if !call.read_only {
                continue;
            }
            for name in SEARCH_ARGUMENTS {
                if call.args_match.get(name).is_some_and(Value::is_string)
                    || call.args_accept.contains_key(name)
                {
                    self.warn(
                        &format!("expected_calls[{i}].args_match.{name}"),
                        None,
                        format!(
                            "pins the search text `{name}`: other words find the same record; judge what the search found (`result_contains`) or the answer"
                        ),
                    );
                }
            }
        }
    }

    /// Answer values that cannot see a wrong answer: taken from the agent's own calls, or two
    /// or more numbers without labels.
    fn answer_values(&mut self) {
        let scenario = self.scenario;
        if !scenario.final_answer.contains_results.is_empty() {
            self.warn(
                "final_answer.contains_results",
                None,
                "takes answer values from the agent's own calls: a wrong call yields a wrong expected value, and another read route none; state them with `final_answer.values`".to_owned(),
            );
        }
        let unlabelled_numbers = scenario
            .final_answer
            .values
            .iter()
            .filter(|value| value.labels.is_empty() && !value.absent)
            .filter(|value| yields_number(source_value(value, scenario.seeded.as_ref())))
            .count()
            + scenario.final_answer.contains_results.len();
        if unlabelled_numbers >= 2 {
            self.warn(
                "final_answer.values",
                None,
                format!(
                    "{unlabelled_numbers} numbers are checked without labels, so an answer that swaps them passes: give each a `label`"
                ),
            );
        }
    }

    /// A `max_calls` with no room beyond the required calls, and no `max_reads`, where reads
    /// are expected.
    fn tight_budget(&mut self) {
        let scenario = self.scenario;
        let required = scenario
            .expected_calls
            .iter()
            .filter(|call| !call.optional)
            .count();
        let reads_expected = scenario.expected_calls.iter().any(|call| call.read_only);
        if scenario.max_reads.is_none()
            && scenario
                .max_calls
                .is_some_and(|budget| budget as usize <= required)
            && reads_expected
        {
            self.warn(
                "max_calls",
                None,
                "leaves no room for a prudent extra read: budget reads apart with `max_reads` (and writes with `max_writes`)".to_owned(),
            );
        }
    }
}

/// The value an answer value's source gives on the seeded state (`None` for `any_of`, or an
/// expression that cannot be evaluated before the run).
fn source_value(value: &crate::scenario::AnswerValue, seeded: &Value) -> Option<Value> {
    match &value.source {
        ValueSource::Literal(value) => Some(value.clone()),
        ValueSource::Seeded(expression) | ValueSource::State(expression) => {
            expression.evaluate(seeded).ok()
        }
        ValueSource::AnyOf(_) => None,
    }
}

fn yields_number(value: Option<Value>) -> bool {
    value.is_some_and(|value| value.is_number())
}

/// Whether `prompt` asks something: a `?`, or a sentence that opens with a question word.
fn asks_question(prompt: &str) -> bool {
    prompt.contains('?')
        || prompt.split(['.', '!', '\n', ';']).any(|sentence| {
            let words: Vec<String> = sentence
                .split_whitespace()
                .take(2)
                .map(|word| {
                    word.trim_matches(|c: char| !c.is_alphanumeric())
                        .to_lowercase()
                })
                .collect();
            match words.as_slice() {
                [first, second] if ["tell", "show", "give"].contains(&first.as_str()) => {
                    second == "me" || second == "us"
                }
                [first, ..] => QUESTION_OPENERS.contains(&first.as_str()),
                [] => false,
            }
        })
}

/// Plain (unquoted) YAML strings of two or more words followed on their line by ` #`: YAML
/// cuts them there. Returns the 1-based line and the text before ` #`.
fn comment_traps(text: &str) -> Vec<(usize, String)> {
    let mut traps = Vec::new();
    // The indentation of the key that opened a block scalar (`|`, `>`): deeper lines are its
    // text, where `#` is just a character.
    let mut block: Option<usize> = None;
    for (index, line) in text.lines().enumerate() {
        let indent = line.len() - line.trim_start().len();
        if let Some(opened) = block {
            if line.trim().is_empty() || indent > opened {
                continue;
            }
            block = None;
        }
        let content = line.trim_start().trim_start_matches("- ");
        if content.starts_with('#') {
            continue;
        }
        let opens_block = content
            .split_once(": ")
            .map_or(content, |(_, value)| value)
            .trim_start()
            .starts_with(['|', '>']);
        if opens_block {
            block = Some(indent);
            continue;
        }
        let value = match content.split_once(": ") {
            Some((key, value)) if !key.contains(' ') || key.starts_with('"') => value,
            _ if line.trim_start().starts_with("- ") => content,
            _ => continue,
        };
        let value = value.trim_start();
        if value.starts_with(['"', '\'', '|', '>', '[', '{', '&', '*', '!']) {
            continue;
        }
        if let Some((before, _)) = value.split_once(" #")
            && before.split_whitespace().count() >= 2
        {
            traps.push((index + 1, before.trim().to_owned()));
        }
    }
    traps
}

/// Lints every scenario of a suite, reading each file again for its text; a file that can
/// no longer be read is skipped (the load already read it once).
/// Drafts (`draft: true`) are skipped: they are listed as unfinished already.
pub fn lint_suite(scenarios: &[Scenario]) -> Vec<Warning> {
    scenarios
        .iter()
        .filter(|scenario| !scenario.draft)
        .flat_map(|scenario| {
            let text = std::fs::read_to_string(Path::new(&scenario.path)).unwrap_or_default();
            lint(scenario, &text)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    //! Scenario warnings: route pinning, unchecked writes, bare numbers; outcome-first is fine.

    use super::*;

    #[test]
    fn a_plain_string_cut_by_a_comment_is_found_but_quoted_strings_and_short_values_are_not() {
        let text = "id: T4-011\nprompt: Check the kits. If enough, tell #sales they are in stock.\n\
                    quoted: \"Tell #ops now\"\nmax_calls: 3   # two retries\n\
                    answer: |\n  Posted in #sales as asked.\n  Done.\n\
                    final_answer:\n  contains_text:\n    - post in #sales\n# a comment\n";
        assert_eq!(
            comment_traps(text),
            [
                (2, "Check the kits. If enough, tell".to_owned()),
                (10, "post in".to_owned())
            ]
        );
    }

    fn scenario(yaml: &str) -> (Scenario, String) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("T9-001.yaml");
        std::fs::write(&path, yaml).expect("write");
        let scenario = crate::scenario::load_file(
            &path,
            Path::new(env!("CARGO_MANIFEST_DIR")),
            crate::catalog::Catalog::builtin(),
        )
        .expect("valid scenario");
        (scenario, yaml.to_owned())
    }

    fn fields(yaml: &str) -> Vec<String> {
        let (scenario, text) = scenario(yaml);
        lint(&scenario, &text)
            .into_iter()
            .map(|w| w.field)
            .collect()
    }

    const HEAD: &str =
        "id: T9-001\ntier: 1\ntype: single_call\nseed_state: fixtures/enterprise.json\n";

    #[test]
    fn route_pinning_scenarios_are_warned_about_and_outcome_first_ones_are_not() {
        let pinned = format!(
            "{HEAD}prompt: What is Lena Vogel's user id?\nexpected_calls:\n  - tool: admin_search_users\n    args_match: {{query: Lena Vogel}}\nmax_calls: 1\n"
        );
        assert_eq!(
            fields(&pinned),
            [
                "final_answer",
                "expected_calls[0].args_match.query",
                "max_calls"
            ]
        );
        let outcome = format!(
            "{HEAD}prompt: What is Lena Vogel's user id?\nexpected_calls:\n  - tool: admin_search_users\n    optional: true\n    result_contains: [{{id: U-008}}]\nmax_reads: 5\nfinal_answer:\n  values: [{{value: U-008}}]\nreference_answer: U-008\n"
        );
        assert_eq!(fields(&outcome), Vec::<String>::new());
    }

    #[test]
    fn writes_without_state_or_content_checks_and_unlabelled_numbers_are_warned_about() {
        let unchecked = format!(
            "{HEAD}prompt: Tell #sales we have stock.\nexpected_calls:\n  - tool: comm_send_message\n    args_match: {{channel: \"#sales\"}}\n    reference_args: {{text: In stock.}}\n"
        );
        assert_eq!(fields(&unchecked), ["final_state_assertions"]);
        let counted = format!(
            "{}final_state_assertions:\n  - messages.count == baseline + 1\n",
            unchecked
        );
        assert_eq!(fields(&counted), ["expected_calls[0]"]);
        let swapped = format!(
            "{HEAD}prompt: How many contacts and orders do we have?\nexpected_calls: []\nfinal_answer:\n  values: [{{seeded: contacts.count}}, {{seeded: orders.count}}]\nreference_answer: 12 contacts, 7 orders\n"
        );
        assert_eq!(fields(&swapped), ["final_answer.values"]);
    }

    #[test]
    fn questions_are_found_by_mark_or_opening_word() {
        assert!(asks_question("What revenue are we forecasting for Q1?"));
        assert!(asks_question("List the contacts at Acme."));
        assert!(!asks_question("Create a contact for John Smith at Acme."));
        assert!(!asks_question("Tell #sales we have stock."));
        assert!(asks_question("Tell me Ada's email."));
    }
}
