//! Description smells, on the six components of tool-description quality in arXiv 2602.14878
//! (856 tools on 103 MCP servers, 97.1% with at least one defect): unclear purpose, missing
//! usage guidance, unstated limitations, opaque parameters, underspecified or incomplete, and
//! exemplar issues.
//!
//! The heuristics are deterministic and lexical (length, verbs, cue words, mentions of
//! parameters, examples); they flag what a reviewer should look at, not a verdict. The optional
//! LLM judge scoring each component is [`judge`](super::judge).

use super::checks::CheckId;
use serde_json::Value;

use super::schema::matches_type;
use super::{Finding, Severity, ToolRef};
use crate::json::pointer_token;

/// Fewer words than this and the description cannot state a purpose.
const MIN_PURPOSE_WORDS: usize = 5;

/// Fewer words than this and the description is underspecified (the paper's well-rated
/// descriptions run to several sentences).
const MIN_COMPLETE_WORDS: usize = 20;

/// A parameter description of fewer words than this says little beyond the name.
const MIN_PARAMETER_WORDS: usize = 3;

/// Verbs that state what a tool does; matched on the first sentence, also with `-s`/`-es`.
const ACTION_VERBS: &[&str] = &[
    "add",
    "analyze",
    "annotate",
    "append",
    "apply",
    "archive",
    "assign",
    "attach",
    "calculate",
    "call",
    "cancel",
    "change",
    "check",
    "clear",
    "clone",
    "close",
    "compare",
    "compress",
    "compute",
    "convert",
    "copy",
    "count",
    "create",
    "decode",
    "delete",
    "describe",
    "detect",
    "download",
    "draft",
    "echo",
    "edit",
    "enable",
    "encode",
    "execute",
    "explain",
    "export",
    "extract",
    "fetch",
    "fill",
    "filter",
    "find",
    "format",
    "generate",
    "get",
    "import",
    "insert",
    "install",
    "invite",
    "launch",
    "list",
    "load",
    "log",
    "look",
    "lookup",
    "mark",
    "merge",
    "move",
    "multiply",
    "navigate",
    "notify",
    "open",
    "parse",
    "patch",
    "ping",
    "post",
    "print",
    "publish",
    "query",
    "read",
    "record",
    "register",
    "remove",
    "rename",
    "render",
    "replace",
    "reply",
    "report",
    "request",
    "reset",
    "resolve",
    "restart",
    "restore",
    "retrieve",
    "return",
    "run",
    "save",
    "scan",
    "schedule",
    "search",
    "send",
    "set",
    "share",
    "show",
    "sort",
    "start",
    "stop",
    "store",
    "submit",
    "subscribe",
    "sum",
    "summarize",
    "sync",
    "take",
    "test",
    "toggle",
    "track",
    "transfer",
    "translate",
    "trigger",
    "update",
    "upload",
    "validate",
    "verify",
    "view",
    "watch",
    "write",
    "zip",
];

/// Cue words for when (or when not) to use a tool.
const USAGE_CUES: &[&str] = &[
    "when", "whenever", "before", "after", "instead", "unless", "prefer", "avoid", "if", "use",
    "useful", "first", "then",
];

/// Cue words for limits, errors and constraints.
const LIMIT_CUES: &[&str] = &[
    "limit",
    "limits",
    "limited",
    "max",
    "maximum",
    "most",
    "cannot",
    "error",
    "errors",
    "fail",
    "fails",
    "failure",
    "rate",
    "quota",
    "timeout",
    "page",
    "pages",
    "paginated",
    "pagination",
    "truncated",
    "empty",
    "requires",
    "must",
    "permission",
    "permissions",
    "only",
    "never",
    "unsupported",
    "restricted",
    "not",
];

/// Cue words for what a tool returns.
const RETURN_CUES: &[&str] = &[
    "return", "returns", "returned", "responds", "output", "outputs", "result", "results", "gives",
    "yields", "lists", "shows", "prints", "produces", "reports",
];

/// Cue words that introduce an example.
const EXAMPLE_CUES: &[&str] = &[
    "e.g", "eg", "example", "examples", "instance", "such", "like",
];

/// Parameter-name parts whose values have a format a model must guess without an example.
const FORMATTED_PARAMETERS: &[&str] = &[
    "date",
    "time",
    "timestamp",
    "datetime",
    "id",
    "query",
    "filter",
    "url",
    "uri",
    "path",
    "email",
    "expression",
    "sql",
    "regex",
    "pattern",
    "range",
    "cron",
    "json",
    "format",
    "phone",
    "locale",
    "currency",
    "country",
    "selector",
    "duration",
];

/// Checks one tool's description and its parameters' descriptions.
pub fn check_tool(tool: &ToolRef<'_>, out: &mut Vec<Finding>) {
    let description = tool
        .definition
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim();
    let words = words(description);
    let parameters = parameters(tool.definition);

    if let Some(reason) = unclear_purpose(tool.name, description, &words) {
        out.push(Finding::tool(
            CheckId::UnclearPurpose,
            Severity::Warning,
            tool,
            "/description",
            reason,
            "open with a verb and the object it acts on, e.g. \"Search orders by customer and date.\"",
        ));
    }
    if words.is_empty() {
        // The other smells would only repeat that there is no description.
        check_exemplars(tool, &parameters, false, out);
        return;
    }
    if !has_any(&words, USAGE_CUES) {
        out.push(Finding::tool(
            CheckId::MissingUsageGuidance,
            Severity::Info,
            tool,
            "/description",
            "the description does not say when to use the tool (or when not to)",
            "add a sentence such as \"Use this when ...; use `other_tool` instead for ...\"",
        ));
    }
    if !has_any(&words, LIMIT_CUES) {
        out.push(Finding::tool(
            CheckId::UnstatedLimitations,
            Severity::Info,
            tool,
            "/description",
            "the description states no limits, constraints or errors",
            "say what it cannot do, its limits (page size, rate, scope) and how it fails",
        ));
    }
    check_opaque_parameters(tool, &parameters, out);
    let says_returns =
        has_any(&words, RETURN_CUES) || tool.definition.get("outputSchema").is_some();
    let short = words.len() < MIN_COMPLETE_WORDS;
    if short || !says_returns {
        let mut reasons = Vec::new();
        if short {
            reasons.push(format!("is short ({} words)", words.len()));
        }
        if !says_returns {
            reasons.push("does not say what the tool returns".to_owned());
        }
        out.push(Finding::tool(
            CheckId::Underspecified,
            Severity::Info,
            tool,
            "/description",
            format!("the description {}", reasons.join(" and ")),
            "describe inputs, the result's shape and side effects in two to four sentences",
        ));
    }
    let described_example =
        has_any(&words, EXAMPLE_CUES) || description.contains('`') || states_format(description);
    check_exemplars(tool, &parameters, described_example, out);
}

/// One top-level parameter of the input schema.
struct Parameter<'a> {
    name: &'a str,
    schema: &'a Value,
}

fn parameters(definition: &Value) -> Vec<Parameter<'_>> {
    definition
        .pointer("/inputSchema/properties")
        .and_then(Value::as_object)
        .map(|properties| {
            properties
                .iter()
                .map(|(name, schema)| Parameter { name, schema })
                .collect()
        })
        .unwrap_or_default()
}

/// Lowercase words of `text`: runs of letters and digits (`e.g.` becomes `e`, `g`, so the
/// cue list holds `e.g` as a phrase checked separately by [`has_any`]).
pub(super) fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Whether any cue occurs among `words` (a cue with a dot, such as `e.g`, as consecutive words).
fn has_any(words: &[String], cues: &[&str]) -> bool {
    cues.iter().any(|cue| {
        let parts: Vec<&str> = cue.split('.').collect();
        words
            .windows(parts.len())
            .any(|window| window.iter().zip(&parts).all(|(word, part)| word == part))
    })
}

/// Splits a tool or parameter name into lowercase words (`searchOrders`, `search_orders`).
pub(super) fn name_words(name: &str) -> Vec<String> {
    let mut spaced = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c.is_uppercase() && previous_lower {
            spaced.push(' ');
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        spaced.push(c);
    }
    words(&spaced)
}

fn is_action_verb(word: &str) -> bool {
    let known = |stem: &str| ACTION_VERBS.binary_search(&stem).is_ok();
    known(word)
        || word.strip_suffix('s').is_some_and(known)
        || word.strip_suffix("es").is_some_and(known)
        || word
            .strip_suffix("ies")
            .is_some_and(|stem| known(&format!("{stem}y")))
}

fn unclear_purpose(name: &str, description: &str, all_words: &[String]) -> Option<String> {
    if all_words.is_empty() {
        return Some("the tool has no description; the model sees only its name".to_owned());
    }
    if all_words.len() < MIN_PURPOSE_WORDS {
        return Some(format!(
            "the description has {} words, too few to state a purpose",
            all_words.len()
        ));
    }
    let name_words = name_words(name);
    if all_words
        .iter()
        .all(|word| name_words.contains(word) || STOP_WORDS.contains(&word.as_str()))
    {
        return Some("the description only restates the tool's name".to_owned());
    }
    let first_sentence = words(description.split(['.', '\n']).next().unwrap_or(description));
    let names_names_verb = name_words.iter().any(|word| is_action_verb(word));
    if !first_sentence.iter().any(|word| is_action_verb(word)) && !names_names_verb {
        return Some("the first sentence has no action verb saying what the tool does".to_owned());
    }
    None
}

/// Words too common to carry meaning (also used by the similarity check).
pub const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "into", "is", "it",
    "its", "of", "on", "or", "that", "the", "this", "to", "with",
];

fn parameter_description(schema: &Value) -> &str {
    schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
}

/// More than half of the parameters have no useful description (missing, under three words,
/// or only restating the name).
fn check_opaque_parameters(
    tool: &ToolRef<'_>,
    parameters: &[Parameter<'_>],
    out: &mut Vec<Finding>,
) {
    let opaque: Vec<String> = parameters
        .iter()
        .filter(|parameter| parameter.schema.get("$ref").is_none())
        .filter(|parameter| {
            let words = words(parameter_description(parameter.schema));
            let name_words = name_words(parameter.name);
            words.len() < MIN_PARAMETER_WORDS
                || words
                    .iter()
                    .all(|word| name_words.contains(word) || STOP_WORDS.contains(&word.as_str()))
        })
        .map(|parameter| format!("`{}`", parameter.name))
        .collect();
    if !opaque.is_empty() && opaque.len() * 2 > parameters.len() {
        out.push(Finding::tool(
            CheckId::OpaqueParameters,
            Severity::Warning,
            tool,
            "/inputSchema/properties",
            format!(
                "{} of {} parameters say little beyond their names: {}",
                opaque.len(),
                parameters.len(),
                opaque.join(", ")
            ),
            "describe each parameter's meaning, format, units and an example value",
        ));
    }
}

/// Examples that contradict their schema (a warning), and formatted parameters with no example
/// anywhere (an info).
fn check_exemplars(
    tool: &ToolRef<'_>,
    parameters: &[Parameter<'_>],
    described_example: bool,
    out: &mut Vec<Finding>,
) {
    let mut unexemplified = Vec::new();
    for parameter in parameters {
        let pointer = format!("/inputSchema/properties/{}", pointer_token(parameter.name));
        let examples = parameter
            .schema
            .get("examples")
            .and_then(Value::as_array)
            .map(|examples| examples.iter().collect::<Vec<_>>())
            .unwrap_or_default();
        for (index, example) in examples.iter().enumerate() {
            if let Some(reason) = contradicts(parameter.schema, example) {
                out.push(Finding::tool(
                    CheckId::ExemplarIssues,
                    Severity::Warning,
                    tool,
                    format!("{pointer}/examples/{index}"),
                    format!("example {example} of `{}` {reason}", parameter.name),
                    "make every example a value the schema accepts",
                ));
            }
        }
        if let Some(default) = parameter.schema.get("default")
            && let Some(reason) = contradicts(parameter.schema, default)
        {
            out.push(Finding::tool(
                CheckId::ExemplarIssues,
                Severity::Warning,
                tool,
                format!("{pointer}/default"),
                format!("default {default} of `{}` {reason}", parameter.name),
                "make the default a value the schema accepts",
            ));
        }
        let constrained = ["enum", "const", "format", "pattern", "examples"]
            .iter()
            .any(|key| parameter.schema.get(*key).is_some());
        let is_string = parameter.schema.get("type").and_then(Value::as_str) == Some("string");
        let formatted = name_words(parameter.name)
            .iter()
            .any(|word| FORMATTED_PARAMETERS.contains(&word.as_str()));
        let own = parameter_description(parameter.schema);
        let own_example = has_any(&words(own), EXAMPLE_CUES)
            || own.contains('`')
            || own.contains('"')
            || states_format(own);
        if is_string && formatted && !constrained && !own_example {
            unexemplified.push(format!("`{}`", parameter.name));
        }
    }
    if !unexemplified.is_empty() && !described_example {
        out.push(Finding::tool(
            CheckId::ExemplarIssues,
            Severity::Info,
            tool,
            "/inputSchema/properties",
            format!(
                "no example shows the format of {}",
                unexemplified.join(", ")
            ),
            "add `examples` to the parameter or an \"e.g. ...\" to its description",
        ));
    }
}

/// Whether `text` states a value format, which shows the expected shape as well as an example
/// would: a date/time template (`HH:MM`, `YYYY-MM-DD`, `hh:mm:ss`, `DD/MM/YYYY`) or a named
/// standard (`ISO 8601`, `RFC 3339`, Unix epoch seconds).
fn states_format(text: &str) -> bool {
    static FORMAT: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?x)
            \b(?:YYYY|YY|MM|DD|HH|hh|mm|ss)(?:[-:/.T](?:YYYY|YY|MM|DD|HH|hh|mm|ss|SSS|Z))+\b
            | (?i:\b(?:iso[\s-]?8601|rfc[\s-]?3339|unix\s+(?:epoch|time(?:stamp)?)|epoch\s+(?:seconds|milliseconds))\b)",
        )
        .expect("the format pattern compiles")
    });
    FORMAT.is_match(text)
}

/// Why `value` does not fit `schema`'s `type` or `enum`; `None` when it fits.
fn contradicts(schema: &Value, value: &Value) -> Option<String> {
    if let Some(ty) = schema.get("type").and_then(Value::as_str)
        && !matches_type(value, ty)
    {
        return Some(format!("is not of type `{ty}`"));
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array)
        && !values.contains(value)
    {
        return Some("is not one of the `enum` values".to_owned());
    }
    None
}

#[cfg(test)]
mod tests {
    //! Description smells: a bare tool has every smell, a complete one none; bad examples flagged.

    use serde_json::json;

    use super::*;

    fn checks(definition: &Value) -> Vec<(&'static str, Severity)> {
        let tool = ToolRef {
            server: "s",
            name: definition["name"].as_str().unwrap_or(""),
            definition,
        };
        let mut out = Vec::new();
        check_tool(&tool, &mut out);
        out.iter().map(|f| (f.check.as_str(), f.severity)).collect()
    }

    #[test]
    fn verb_list_is_sorted_for_binary_search() {
        assert!(ACTION_VERBS.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn finds_every_smell_in_a_bare_tool() {
        let tool = json!({"name": "data", "description": "Data thing.",
            "inputSchema": {"type": "object", "properties": {
                "q": {"type": "string"}, "date": {"type": "string", "description": "date"}}}});
        assert_eq!(
            checks(&tool),
            [
                ("unclear_purpose", Severity::Warning),
                ("missing_usage_guidance", Severity::Info),
                ("unstated_limitations", Severity::Info),
                ("opaque_parameters", Severity::Warning),
                ("underspecified", Severity::Info),
                ("exemplar_issues", Severity::Info),
            ]
        );
    }

    #[test]
    fn finds_no_smell_in_a_complete_description() {
        let tool = json!({"name": "search_orders",
            "description": "Search orders by customer and date range. Use this when the user asks about past purchases; use `get_order` instead when you know the id. Returns at most 50 orders, newest first, and an error if the customer does not exist.",
            "inputSchema": {"type": "object", "properties": {
                "customer_id": {"type": "string", "description": "The customer's id, e.g. `c_123`."},
                "since": {"type": "string", "format": "date", "description": "Earliest order date, inclusive."}}}});
        assert_eq!(checks(&tool), []);
    }

    #[test]
    fn reports_a_missing_description_once() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object", "properties": {}}});
        assert_eq!(checks(&tool), [("unclear_purpose", Severity::Warning)]);
    }

    #[test]
    fn flags_examples_that_contradict_the_schema() {
        let tool = json!({"name": "set_level",
            "description": "Set the log level of the service. Use this when debugging; fails if the service is stopped. Returns the previous level as a string so it can be restored later.",
            "inputSchema": {"type": "object", "properties": {
                "level": {"type": "string", "enum": ["debug", "info"], "examples": ["trace"],
                          "description": "The new level, one of debug or info."}}}});
        let definition = &tool;
        let found = {
            let tool = ToolRef {
                server: "s",
                name: "set_level",
                definition,
            };
            let mut out = Vec::new();
            check_tool(&tool, &mut out);
            out
        };
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].pointer, "/inputSchema/properties/level/examples/0");
        assert_eq!(
            found[0].message,
            "example \"trace\" of `level` is not one of the `enum` values"
        );
    }

    /// Issue #35: a stated format shows the expected shape, as an example would: no
    /// `exemplar_issues` for "time as HH:MM" or a tool that says "YYYY-MM-DD"; still one
    /// for a format nobody states.
    #[test]
    fn a_stated_format_counts_as_an_example() {
        let tool = |time: &str, description: &str| {
            json!({"name": "book_slot", "description": description,
                "inputSchema": {"type": "object", "properties": {
                    "start_time": {"type": "string", "description": time}}}})
        };
        let exemplar = |tool: &Value| {
            checks(tool)
                .into_iter()
                .filter(|(id, _)| *id == "exemplar_issues")
                .count()
        };
        assert_eq!(
            exemplar(&tool("The start time as HH:MM, 24-hour.", "Books a slot.")),
            0
        );
        assert_eq!(
            exemplar(&tool(
                "The start time.",
                "Books a slot on a day given as YYYY-MM-DD."
            )),
            0
        );
        assert_eq!(
            exemplar(&tool("The start, an ISO 8601 timestamp.", "Books a slot.")),
            0
        );
        assert_eq!(exemplar(&tool("The start time.", "Books a slot.")), 1);
        assert_eq!(exemplar(&tool("The time in HH or MM.", "Books a slot.")), 1);
    }
}
