//! `toolgate init`: a working suite skeleton for the user's own catalog.
//!
//! From a `toolgate snapshot` lock or a saved tools/list it writes, under one directory:
//! `toolgate.yaml` (reference agent, `mocks.catalog`), `tools.json` (the imported
//! definitions, which the agent sees unchanged), `mocks.yaml` (per tool an error rule for an
//! id that does not exist and a catch-all success to replace with real behaviour),
//! `fixtures/seed.json`, three draft scenarios per tool after the recipe "happy path, edge
//! case, error case", `smoke-set.yaml` and `.github/workflows/toolgate.yml`. Every draft loads
//! and passes with the reference agent, budgets reads apart from writes, and carries one
//! written alternative (must pass) and one counterexample (must fail), so a suite starts with
//! the same proof as the built-in one; each says `draft: true` until a person has made it
//! check what matters.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use serde_json::{Map, Value, json};

/// The value the error-case drafts send for a lookup that must fail.
pub const MISSING_VALUE: &str = "does-not-exist";

/// What [`write_suite`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Every file, in writing order.
    pub files: Vec<PathBuf>,
    /// Tools imported.
    pub tools: usize,
    /// Draft scenarios written.
    pub drafts: usize,
}

/// Writes `files` (path, text), creating folders; none is written when one exists already
/// and `force` is off.
///
/// Errors: an existing file without `force`, naming it, or a write that fails.
pub(super) fn write_files(files: &[(PathBuf, String)], force: bool) -> Result<()> {
    if let Some((path, _)) = files.iter().find(|(path, _)| !force && path.exists()) {
        bail!(
            "`{}` already exists; pass --force to overwrite the skeleton's files",
            path.display()
        );
    }
    for (path, text) in files {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("failed to create `{}`", parent.display()))?;
        }
        crate::fs::write_atomic(path, text.as_bytes())?;
    }
    Ok(())
}

/// Writes the skeleton for the tool `definitions` (from `source`, named in messages) under
/// `dir`.
///
/// Errors: no tools, a file that already exists (unless `force`), or a write that fails.
pub fn write_suite(
    definitions: Vec<Value>,
    source: &str,
    dir: &Path,
    force: bool,
) -> Result<Written> {
    if definitions.is_empty() {
        bail!("{source} lists no tools");
    }
    let mut files: Vec<(PathBuf, String)> = Vec::new();
    files.push((dir.join("toolgate.yaml"), config_text()));
    files.push((
        dir.join("tools.json"),
        crate::json::pretty(&json!({ "tools": definitions })),
    ));
    files.push((dir.join("mocks.yaml"), catalog_text(&definitions)));
    files.push((dir.join("fixtures/seed.json"), "{}\n".to_owned()));
    let mut ids = Vec::new();
    for definition in &definitions {
        let name = definition["name"].as_str().unwrap_or_default();
        for (suffix, text) in drafts(name, definition) {
            let id = format!("{}-{suffix}", safe(name));
            files.push((
                dir.join(format!("scenarios/{id}.yaml")),
                text.replace("{ID}", &id),
            ));
            ids.push(id);
        }
    }
    files.push((dir.join("smoke-set.yaml"), smoke_text()));
    files.push((dir.join(".github/workflows/toolgate.yml"), workflow_text()));
    write_files(&files, force)?;
    Ok(Written {
        files: files.into_iter().map(|(path, _)| path).collect(),
        tools: definitions.len(),
        drafts: ids.len(),
    })
}

/// A file-name-safe form of a tool name.
pub(super) fn safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn config_text() -> String {
    "# toolgate's settings for this suite (see docs/mocks.md). The tools are the mocks in\n\
     # mocks.yaml; switch `agent` to `openai`, `anthropic` or `command` to measure yours.\n\
     agent: reference\n\
     mocks:\n  catalog: mocks.yaml\n"
        .to_owned()
}

/// The string argument the error rule and the error-case draft key on: the first required
/// string property without `enum`, `format` or `const`, else the first such string property.
fn key_argument(definition: &Value) -> Option<String> {
    let schema = &definition["inputSchema"];
    let properties = schema["properties"].as_object()?;
    // A free-form string: the made-up value must pass the schema and reach the rules.
    let is_string = |name: &str| {
        let property = &properties[name];
        property["type"] == "string"
            && ["enum", "format", "const"]
                .iter()
                .all(|key| property.get(*key).is_none())
    };
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    required
        .iter()
        .copied()
        .find(|name| properties.contains_key(*name) && is_string(name))
        .or_else(|| {
            properties
                .keys()
                .map(String::as_str)
                .find(|name| is_string(name))
        })
        .map(str::to_owned)
}

/// The arguments of a draft call as its prompt names them, `key` first:
/// ``ticket_id `TK-0000` and agent_id `AG-0` ``. Every value the call sends is in the prompt,
/// so none of them reads as an invented identifier.
fn prompt_arguments(arguments: &serde_json::Map<String, Value>, key: &str) -> String {
    let shown = |value: &Value| match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let mut parts: Vec<String> = arguments
        .get(key)
        .map(|value| format!("{key} `{}`", shown(value)))
        .into_iter()
        .collect();
    parts.extend(
        arguments
            .iter()
            .filter(|(name, _)| *name != key)
            .map(|(name, value)| format!("{name} `{}`", shown(value))),
    );
    parts.join(" and ")
}

/// The key argument and a value of it that the schema accepts but names nothing: for a
/// free-form string [`MISSING_VALUE`], for a `pattern` a longer sample than the happy path's.
/// `None` when the tool has no such argument.
fn missing_argument(definition: &Value) -> Option<(String, String)> {
    let key = key_argument(definition)?;
    let property = &definition["inputSchema"]["properties"][&key];
    match property["pattern"].as_str() {
        None => Some((key, MISSING_VALUE.to_owned())),
        Some(pattern) => {
            let happy = sample(pattern, 0)?;
            let missing = sample(pattern, 3)?;
            (missing != happy).then_some((key, missing))
        }
    }
}

/// A short string `pattern` matches, with every repetition `extra` times longer than its
/// minimum (at least once); `None` for a pattern this cannot sample.
pub fn sample(pattern: &str, extra: u32) -> Option<String> {
    use regex_syntax::hir::{Class, HirKind};
    fn walk(hir: &regex_syntax::hir::Hir, extra: u32, out: &mut String) -> Option<()> {
        match hir.kind() {
            HirKind::Empty | HirKind::Look(_) => {}
            HirKind::Literal(literal) => out.push_str(std::str::from_utf8(&literal.0).ok()?),
            HirKind::Class(Class::Unicode(class)) => out.push(class.ranges().first()?.start()),
            HirKind::Class(Class::Bytes(class)) => {
                out.push(char::from(class.ranges().first()?.start()))
            }
            HirKind::Repetition(repetition) => {
                let mut count = repetition.min.max(1) + extra;
                if let Some(max) = repetition.max {
                    count = count.min(max);
                }
                for _ in 0..count {
                    walk(&repetition.sub, extra, out)?;
                }
            }
            HirKind::Capture(capture) => walk(&capture.sub, extra, out)?,
            HirKind::Concat(parts) => {
                for part in parts {
                    walk(part, extra, out)?;
                }
            }
            HirKind::Alternation(options) => walk(options.first()?, extra, out)?,
        }
        Some(())
    }
    let hir = regex_syntax::parse(pattern).ok()?;
    let mut text = String::new();
    walk(&hir, extra, &mut text)?;
    regex::Regex::new(pattern)
        .ok()?
        .is_match(&text)
        .then_some(text)
}

fn catalog_text(definitions: &[Value]) -> String {
    let mut text = String::from(
        "# The mock catalog (docs/mocks.md). Tools come from tools.json unchanged; replace each\n\
         # tool's draft rules with what the real tool answers. Rules are tried in order.\n\
         schema_version: 1\ntools_from: tools.json\ntables: {}\nrules:\n",
    );
    for definition in definitions {
        let name = definition["name"].as_str().unwrap_or_default();
        let _ = writeln!(text, "  {}:", yaml_string(name));
        if let Some((key, missing)) = missing_argument(definition) {
            let _ = writeln!(
                text,
                "    - note: draft error rule, for the error-case scenario\n      match: {{{}: {}}}\n      error: {}",
                yaml_string(&key),
                yaml_string(&missing),
                yaml_string(&format!("{name}: `{{{{args.{key}}}}}` not found"))
            );
        }
        let _ = writeln!(
            text,
            "    - note: draft catch-all; replace it with the tool's real answers\n      return: {{ok: true, tool: {}, arguments: \"{{{{args}}}}\"}}",
            yaml_string(name)
        );
    }
    text
}

/// The three drafts of one tool: (file suffix, text with `{ID}` for the id).
fn drafts(name: &str, definition: &Value) -> Vec<(&'static str, String)> {
    let args = example_arguments(&definition["inputSchema"]);
    let title = definition["title"]
        .as_str()
        .or_else(|| definition["description"].as_str())
        .unwrap_or(name)
        .lines()
        .next()
        .unwrap_or(name)
        .to_owned();
    let tool = DraftTool {
        name,
        read_only: definition["annotations"]["readOnlyHint"] == Value::Bool(true),
    };
    let error = match missing_argument(definition) {
        Some((key, value)) => tool.failed_lookup(&args, &key, &value),
        None => tool.unrelated_request(&args),
    };
    vec![
        ("happy", tool.happy_path(&args, &title)),
        ("edge", tool.rate_limited(&args)),
        ("error", error),
    ]
}

/// The tool a draft is written for, and the pieces of YAML its drafts share.
struct DraftTool<'a> {
    name: &'a str,
    /// Whether the tool says it only reads (`readOnlyHint`).
    read_only: bool,
}

impl DraftTool<'_> {
    /// The happy path: one call with example arguments, answered plainly.
    fn happy_path(&self, args: &Map<String, Value>, title: &str) -> String {
        let name = self.name;
        format!(
            "{}prompt: {}\n{}{}{}",
            head(1, "single_call", "the happy path"),
            yaml_string(&format!(
                "Use {name} ({title}) with {}.",
                Value::Object(args.clone())
            )),
            self.call(args),
            self.budget(0),
            trajectories(
                ("the call, then a plain answer", self.planned(args), "Done."),
                (
                    "answers without calling the tool",
                    "the task needs the tool, and the agent never called it",
                    String::new(),
                    "Done.",
                ),
            ),
        )
    }

    /// The edge case: a transient rate limit on the first call, to retry through.
    fn rate_limited(&self, args: &Map<String, Value>) -> String {
        let name = self.name;
        format!(
            "{}prompt: {}\n{}    # The draft catch-all rule answers `tool: {name}`: name a real result value.\n\
             \x20   result_contains: [{{tool: {}}}]\n{}fault_injection:\n  - tool: {}\n    on_call: 1\n    error: rate_limit\n{}",
            head(
                2,
                "error_recovery",
                "an edge case, a transient rate limit to retry through"
            ),
            yaml_string(&format!(
                "Use {name} with {}; retry if it is rate limited.",
                Value::Object(args.clone())
            )),
            self.call(args),
            yaml_string(name),
            self.budget(1),
            yaml_string(name),
            trajectories(
                (
                    "retries after the rate limit",
                    format!("{}{}", self.planned(args), self.planned(args)),
                    &format!("It worked on the second try: {name} answered."),
                ),
                (
                    "gives up after the rate limit",
                    "one retry would have worked, and the answer states no result",
                    self.planned(args),
                    "It was rate limited, so I stopped.",
                ),
            ),
        )
    }

    /// The error case of a tool that looks something up: argument `key` set to `value`, which
    /// does not exist, and an answer that must report the failure.
    fn failed_lookup(&self, args: &Map<String, Value>, key: &str, value: &str) -> String {
        let name = self.name;
        let mut missing = args.clone();
        missing.insert(key.to_owned(), Value::String(value.to_owned()));
        format!(
            "{}prompt: {}\n{}{}final_answer:\n  acknowledges_failure: true\nreference_answer: {}\n{}",
            head(
                1,
                "error_recovery",
                "the error case, a lookup that must fail and be reported"
            ),
            yaml_string(&format!(
                "Use {name} with {} and tell me what happened.",
                prompt_arguments(&missing, key)
            )),
            self.call(&missing),
            self.budget(0),
            yaml_string(&format!("{name} failed: `{value}` was not found.")),
            trajectories(
                (
                    "reports the failure in other words",
                    self.planned(&missing),
                    &format!(
                        "There is no `{value}`: the lookup came back empty-handed, it does not exist."
                    ),
                ),
                (
                    "claims success",
                    "the call failed, and the answer says it worked",
                    self.planned(&missing),
                    "All done, it worked.",
                ),
            ),
        )
    }

    /// The error case of a tool with nothing to look up: a request it must not serve.
    fn unrelated_request(&self, args: &Map<String, Value>) -> String {
        let name = self.name;
        format!(
            "{}prompt: {}\n{}max_writes: 0\nforbidden_calls:\n  - tool: {}\n    args_match: {{}}\n{}",
            head(
                1,
                "ambiguous_input",
                "the error case: a request this tool must not serve"
            ),
            yaml_string(&format!("Something unrelated to {name}: do not call it.")),
            "expected_calls: []\n",
            yaml_string(name),
            trajectories(
                (
                    "leaves the tool alone",
                    String::new(),
                    "I left it alone, as asked."
                ),
                (
                    "calls the tool anyway",
                    "the prompt says not to call it",
                    self.planned(args),
                    "Done.",
                ),
            ),
        )
    }

    /// The `expected_calls` section: one call of the tool matching `arguments`.
    fn call(&self, arguments: &Map<String, Value>) -> String {
        format!(
            "expected_calls:\n  - tool: {}\n    args_match: {}\n",
            yaml_string(self.name),
            Value::Object(arguments.clone())
        )
    }

    /// The `max_reads`/`max_writes` budget for a run with `retries` retries.
    ///
    /// Reads get room for a verification read; a write gets one try (and one retry where a
    /// fault is injected).
    fn budget(&self, retries: u32) -> String {
        if self.read_only {
            format!("max_reads: {}\nmax_writes: 0\n", 3 + retries)
        } else {
            format!("max_reads: 3\nmax_writes: {}\n", 1 + retries)
        }
    }

    /// One call of a written trajectory, as an item of its `calls` list.
    fn planned(&self, arguments: &Map<String, Value>) -> String {
        format!(
            "      - tool: {}\n        arguments: {}\n",
            yaml_string(self.name),
            Value::Object(arguments.clone())
        )
    }
}

/// The opening of a draft: the comment asking a person to finish it, `draft: true`, and the
/// fields every draft shares (`{ID}` stands for the id).
fn head(tier: u8, kind: &str, what: &str) -> String {
    format!(
        "# DRAFT written by `toolgate init`: {what}. Make the prompt a real user request,\n\
         # check the outcome (the state a write leaves, the values an answer states), then\n\
         # delete `draft: true`. See docs/writing-scenarios.md.\n\
         draft: true\nid: {{ID}}\ntier: {tier}\ntype: {kind}\nseed_state: fixtures/seed.json\n"
    )
}

/// The written trajectories of a draft: one alternative (name, planned calls, answer) and one
/// counterexample (name, why it is wrong, planned calls, answer).
fn trajectories(
    alternative: (&str, String, &str),
    counterexample: (&str, &str, String, &str),
) -> String {
    format!(
        "# Written trajectories: this one must pass, and this one must fail. Add the other\n\
         # ways a competent agent would do the task, and the wrong ones you fear.\n\
         alternatives:\n  - name: {}\n    calls:{}\n    answer: {}\n\
         counterexamples:\n  - name: {}\n    why: {}\n    calls:{}\n    answer: {}\n",
        yaml_string(alternative.0),
        listed(&alternative.1),
        yaml_string(alternative.2),
        yaml_string(counterexample.0),
        yaml_string(counterexample.1),
        listed(&counterexample.2),
        yaml_string(counterexample.3),
    )
}

/// Planned calls as the value of a `calls:` key: a block list, or ` []` when there are none.
fn listed(calls: &str) -> String {
    if calls.is_empty() {
        " []".to_owned()
    } else {
        format!("\n{}", calls.trim_end_matches('\n'))
    }
}

/// Arguments valid for `schema`: every required property with an example value, then, while
/// fewer than `minProperties`, the optional ones in schema order.
pub fn example_arguments(schema: &Value) -> Map<String, Value> {
    let mut args = Map::new();
    let Some(properties) = schema["properties"].as_object() else {
        return args;
    };
    for name in schema["required"].as_array().into_iter().flatten() {
        let Some(name) = name.as_str() else { continue };
        if let Some(property) = properties.get(name) {
            args.insert(name.to_owned(), example_value(property, name));
        }
    }
    let wanted = usize::try_from(schema["minProperties"].as_u64().unwrap_or(0)).unwrap_or(0);
    for (name, property) in properties {
        if args.len() >= wanted {
            break;
        }
        if !args.contains_key(name) {
            args.insert(name.clone(), example_value(property, name));
        }
    }
    args
}

fn example_value(schema: &Value, name: &str) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|values| values.first()) {
        return first.clone();
    }
    if let Some(value) = schema.get("const").or_else(|| schema.get("default")) {
        return value.clone();
    }
    let kind = match &schema["type"] {
        Value::Array(kinds) => kinds.first().and_then(Value::as_str).unwrap_or("string"),
        Value::String(kind) => kind.as_str(),
        _ => "string",
    };
    match kind {
        "integer" => {
            let low = schema["minimum"].as_i64().or_else(|| {
                schema["exclusiveMinimum"]
                    .as_i64()
                    .map(|n| n.saturating_add(1))
            });
            let high = schema["maximum"].as_i64().or_else(|| {
                schema["exclusiveMaximum"]
                    .as_i64()
                    .map(|n| n.saturating_sub(1))
            });
            // At least 1 and the lower bound, at most the upper one (which a valid schema
            // keeps at or above the lower bound).
            let value = low.unwrap_or(1).max(1);
            json!(high.map_or(value, |high| value.min(high)))
        }
        "number" => {
            let value = schema["minimum"].as_f64().unwrap_or(1.0).max(1.0);
            json!(
                schema["maximum"]
                    .as_f64()
                    .map_or(value, |high| value.min(high))
            )
        }
        "boolean" => json!(true),
        "null" => Value::Null,
        "array" => {
            let count = schema["minItems"].as_u64().unwrap_or(0);
            let item = example_value(&schema["items"], name);
            Value::Array((0..count).map(|_| item.clone()).collect())
        }
        "object" => Value::Object(example_arguments(schema)),
        _ => Value::String(example_string(schema, name)),
    }
}

/// A string for `schema`: its `format`'s example, or a sample of its `pattern`, padded to
/// `minLength`. With both, the first of the format's example, the sample, and the sample
/// behind `user` (an email pattern such as `@corp\.example$`) that the pattern matches.
fn example_string(schema: &Value, name: &str) -> String {
    let formatted = match schema["format"].as_str() {
        Some("date") => Some("2026-01-15"),
        Some("date-time") => Some("2026-01-15T09:00:00Z"),
        Some("email") => Some("user@example.com"),
        Some("uri" | "url") => Some("https://example.com/"),
        _ => None,
    };
    let pattern = schema["pattern"]
        .as_str()
        .and_then(|pattern| Some((regex::Regex::new(pattern).ok()?, sample(pattern, 0)?)));
    let mut text = match (formatted, pattern) {
        (Some(formatted), None) => formatted.to_owned(),
        (None, Some((_, sampled))) => sampled,
        (Some(formatted), Some((pattern, sampled))) => {
            [formatted.to_owned(), format!("user{sampled}"), sampled]
                .into_iter()
                .find(|candidate| pattern.is_match(candidate))
                .unwrap_or_else(|| formatted.to_owned())
        }
        (None, None) => format!("example-{name}"),
    };
    let min = usize::try_from(schema["minLength"].as_u64().unwrap_or(0)).unwrap_or(0);
    if let Some(pattern) = schema["pattern"].as_str() {
        // Padding could break the pattern: sample it with longer repetitions first.
        for extra in 1..=64 {
            if text.chars().count() >= min {
                break;
            }
            let Some(longer) = sample(pattern, extra) else {
                break;
            };
            text = longer;
        }
    }
    while text.chars().count() < min {
        text.push('x');
    }
    text
}

/// `text` as a YAML double-quoted string (JSON string syntax is valid YAML).
pub(super) fn yaml_string(text: &str) -> String {
    Value::String(text.to_owned()).to_string()
}

pub(super) fn smoke_text() -> String {
    "# The pull-request subset `toolgate gate` runs by default: every tier-1 scenario.\n\
     tiers:\n  - 1\n"
        .to_owned()
}

fn workflow_text() -> String {
    "# Gate every pull request on toolgate, with the suite's mocks (no real tools in CI).\n\
     # Fork-safe: `pull_request` only, never `pull_request_target`.\n\
     name: toolgate\n\
     on:\n  pull_request:\n\
     permissions:\n  contents: read\n  actions: read\n  pull-requests: write\n\
     jobs:\n  gate:\n    runs-on: ubuntu-latest\n    timeout-minutes: 30\n    steps:\n\
     \x20     - uses: actions/checkout@fbc6f3992d24b796d5a048ff273f7fcc4a7b6c09 # v5.1.0\n\
     \x20       with:\n          persist-credentials: false\n\
     \x20     # OWNER: the account toolgate's action is published under (or `uses: ./` in\n\
     \x20     # toolgate's own repository, to build it from source).\n\
     \x20     - name: toolgate\n        uses: OWNER/toolgate@v0.1.0\n        with:\n\
     \x20         # The suite root, relative to the repository (move this file to the\n\
     \x20         # repository's .github/workflows/ if the suite lives in a subdirectory).\n\
     \x20         root: .\n          args: --agent reference\n\
     \x20         # Without `baseline`, baseline.json under the root (see docs/mocks.md).\n\
     \x20         comment-key: toolgate\n"
        .to_owned()
}

#[cfg(test)]
mod tests {
    //! `toolgate init` examples: sample arguments meet each schema's enums, formats and bounds.

    use super::*;

    #[test]
    fn samples_match_their_pattern_and_grow_with_extra() {
        assert_eq!(sample("^TK-[0-9]+$", 0).as_deref(), Some("TK-0"));
        assert_eq!(sample("^TK-[0-9]+$", 3).as_deref(), Some("TK-0000"));
        assert_eq!(sample("^(ab|cd){2}x?$", 0).as_deref(), Some("ababx"));
        assert_eq!(sample("^[a-z]{3}$", 5).as_deref(), Some("aaa"));
    }

    #[test]
    fn example_arguments_satisfy_enums_formats_and_patterns() {
        let schema = json!({"type": "object", "required": ["a", "b", "c", "d", "e"],
            "properties": {"a": {"type": "string", "enum": ["x", "y"]},
                "b": {"type": "string", "format": "email"}, "c": {"type": "integer", "minimum": 5},
                "d": {"type": "string", "pattern": "^AG-[0-9]+$"}, "e": {"type": "boolean"},
                "f": {"type": "string"}}});
        assert_eq!(
            Value::Object(example_arguments(&schema)),
            json!({"a": "x", "b": "user@example.com", "c": 5, "d": "AG-0", "e": true})
        );
    }

    #[test]
    fn example_arguments_honour_email_patterns_min_properties_and_bounds() {
        let schema = json!({"type": "object", "required": ["email", "changes", "n", "code"],
            "properties": {
                "email": {"type": "string", "format": "email", "pattern": "@corp\\.example$"},
                "changes": {"type": "object", "minProperties": 2, "properties": {
                    "name": {"type": "string"}, "size": {"type": "integer", "maximum": 0},
                    "note": {"type": "string"}}},
                "n": {"type": "integer", "exclusiveMinimum": 7, "maximum": 9},
                "code": {"type": "string", "pattern": "^Z[0-9]+$", "minLength": 4}}});
        assert_eq!(
            Value::Object(example_arguments(&schema)),
            json!({"email": "user@corp.example", "changes": {"name": "example-name", "size": 0},
                "n": 8, "code": "Z000"})
        );
    }

    /// Every built-in tool's drafts send arguments its own schema accepts: the happy path's
    /// and the error case's (the key argument replaced by the missing value).
    #[test]
    fn drafts_for_every_builtin_tool_pass_its_schema() {
        let catalog = crate::catalog::Catalog::builtin();
        let tools = crate::harness::ToolSet::new(catalog).expect("compiles");
        let mut broken = Vec::new();
        for definition in catalog.definitions() {
            let name = definition["name"].as_str().expect("a name");
            let happy = example_arguments(&definition["inputSchema"]);
            let mut calls = vec![("happy", happy.clone())];
            if let Some((key, value)) = missing_argument(definition) {
                let mut missing = happy;
                missing.insert(key, Value::String(value));
                calls.push(("error", missing));
            }
            for (case, arguments) in calls {
                let check = tools.check(name, &arguments).expect("a catalog tool");
                if check.refusal.is_some() || !check.violations.is_empty() {
                    broken.push(format!("{name} {case}: {:?}", check.refusal));
                }
            }
        }
        assert_eq!(broken, Vec::<String>::new());
    }
}
