//! Validating the calls a scenario names: expected calls, forbidden calls and final-state
//! probes, each against the catalog's tools and their arguments.

use serde_json::{Map, Value};

use super::super::assertion::Assertion;
use super::super::file::{ExpectedCallFile, ForbiddenCallFile, ProbeFile};
use super::super::{ExpectedCall, ForbiddenCall, PROBE_RESULT, PriorRef, Probe};
use super::Problems;
use super::sources::parse_source;
use crate::catalog::{Catalog, ToolDef};

pub(super) fn validate_probe(
    index: usize,
    probe: ProbeFile,
    catalog: &Catalog,
    problems: &mut Problems<'_>,
) -> Option<Probe> {
    let field = format!("final_state_probes[{index}]");
    let Some(tool) = catalog.tool(&probe.tool) else {
        problems.add(
            &format!("{field}.tool"),
            Some(&probe.tool),
            catalog.unknown_tool_message(&probe.tool),
        );
        return None;
    };
    let known = tool.argument_names();
    for name in probe.arguments.keys() {
        if !known.contains(name) {
            problems.add(
                &format!("{field}.arguments.{name}"),
                Some(name),
                format_args!("`{}` has no argument `{name}`", probe.tool),
            );
        }
    }
    if probe.assertions.is_empty() {
        problems.add(
            &format!("{field}.assertions"),
            None,
            "must have at least one assertion",
        );
    }
    let roots = [PROBE_RESULT.to_string()];
    let mut assertions = Vec::new();
    for (i, source) in probe.assertions.iter().enumerate() {
        match Assertion::parse(source, &roots) {
            Ok(assertion) => assertions.push(assertion),
            Err(error) => problems.add(&format!("{field}.assertions[{i}]"), Some(source), error),
        }
    }
    Some(Probe {
        tool: probe.tool,
        arguments: probe.arguments,
        assertions,
    })
}

pub(super) fn validate_forbidden(
    index: usize,
    call: ForbiddenCallFile,
    catalog: &Catalog,
    problems: &mut Problems<'_>,
) -> ForbiddenCall {
    let field = format!("forbidden_calls[{index}]");
    match catalog.tool(&call.tool) {
        None => problems.add(
            &format!("{field}.tool"),
            Some(&call.tool),
            catalog.unknown_tool_message(&call.tool),
        ),
        Some(tool) => {
            let known = tool.argument_names();
            for (section, names) in [
                ("args_match", call.args_match.keys()),
                ("args_contains", call.args_contains.keys()),
                ("args_regex", call.args_regex.keys()),
            ] {
                for name in names {
                    if !known.contains(name) {
                        problems.add(
                            &format!("{field}.{section}.{name}"),
                            Some(name),
                            format_args!("`{}` has no argument `{name}`", call.tool),
                        );
                    }
                }
            }
        }
    }
    check_contains(&field, &call.args_contains, problems);
    let args_regex = compile_patterns(&field, &call.args_regex, problems);
    ForbiddenCall {
        tool: call.tool,
        args_match: call.args_match,
        args_contains: call.args_contains,
        args_regex,
    }
}

/// The `args_regex` patterns that compile, in file order; each other entry is a problem.
fn compile_patterns(
    field: &str,
    patterns: &Map<String, Value>,
    problems: &mut Problems<'_>,
) -> Vec<(String, regex::Regex)> {
    let mut compiled = Vec::new();
    for (name, pattern) in patterns {
        let at = format!("{field}.args_regex.{name}");
        match pattern.as_str().map(regex::Regex::new) {
            Some(Ok(regex)) => compiled.push((name.clone(), regex)),
            Some(Err(error)) => {
                // The parser's message draws the pattern over several lines; its last line
                // says what is wrong.
                let text = error.to_string();
                let why = text.lines().last().unwrap_or_default();
                let why = why.trim().trim_start_matches("error: ");
                problems.add(&at, Some(name), format_args!("bad pattern: {why}"));
            }
            None => problems.add(&at, Some(name), "must be a regular expression (a string)"),
        }
    }
    compiled
}

/// Every `args_contains` entry must list at least one item.
fn check_contains(field: &str, contains: &Map<String, Value>, problems: &mut Problems<'_>) {
    for (name, items) in contains {
        if items.as_array().is_none_or(Vec::is_empty) {
            problems.add(
                &format!("{field}.args_contains.{name}"),
                Some(name),
                "must be a non-empty list of items the array must contain",
            );
        }
    }
}

/// The tools of an expected call's `tool` (one name or a list), each checked against the
/// catalog; the known ones in file order.
fn expected_tools<'c>(
    field: &str,
    names: &[String],
    catalog: &'c Catalog,
    problems: &mut Problems<'_>,
) -> Vec<&'c ToolDef> {
    let mut tools = Vec::new();
    for (i, name) in names.iter().enumerate() {
        if names[..i].contains(name) {
            problems.add(
                &format!("{field}.tool"),
                Some(name),
                format_args!("`{name}` is listed twice"),
            );
        }
        match catalog.tool(name) {
            Some(tool) => tools.push(tool),
            None => problems.add(
                &format!("{field}.tool"),
                Some(name),
                catalog.unknown_tool_message(name),
            ),
        }
    }
    tools
}

/// Validates one expected call: its tools, the arguments each section names, and the
/// sections that depend on one another.
pub(super) fn validate_call(
    index: usize,
    mut call: ExpectedCallFile,
    catalog: &Catalog,
    problems: &mut Problems<'_>,
) -> ExpectedCall {
    let field = format!("expected_calls[{index}]");
    let names = std::mem::take(&mut call.tool.0);
    let tools = expected_tools(&field, &names, catalog, problems);
    let arguments = ArgumentNames {
        field: &field,
        tools: &tools,
    };
    check_argument_sections(&arguments, &call, problems);
    check_compared(&field, &call, problems);
    let schema_defaults = schema_defaults(tools.first().copied());
    let args_from_prior = validate_prior(index, &arguments, &call.args_from_prior, problems);
    let read_only = !tools.is_empty() && tools.iter().all(|tool| tool.is_read_only());
    let tool_arguments = tools
        .iter()
        .map(|tool| (tool.name.clone(), tool.argument_names()))
        .collect();
    let mut names = names.into_iter();
    ExpectedCall {
        tool: names.next().unwrap_or_default(),
        also: names.collect(),
        tool_arguments,
        optional: call.optional,
        read_only,
        args_exact: call.args_exact,
        args_contains: call.args_contains,
        result_contains: call.result_contains,
        succeeds: call.succeeds,
        args_match: call.args_match,
        args_forbid: call.args_forbid,
        args_from_prior,
        args_accept: call.args_accept,
        args_optional: call.args_optional,
        args_compare: call.args_compare,
        schema_defaults,
        reference_args: call.reference_args,
        closed: false,
        user_turn: user_turn(&field, call.user_turn, problems),
    }
}

/// The known tools of one expected call (at `field`), against which its sections' argument
/// names are checked.
struct ArgumentNames<'a> {
    field: &'a str,
    tools: &'a [&'a ToolDef],
}

impl ArgumentNames<'_> {
    /// Reports `name` in `section` when none of the tools it applies to has that argument.
    ///
    /// With a list of tools, a checked argument must exist in one of them (it then applies to
    /// calls of the tools that have it); the reference agent's arguments fit the first tool.
    fn check(&self, section: &str, name: &str, problems: &mut Problems<'_>) {
        let candidates: &[&ToolDef] = if section == "reference_args" {
            &self.tools[..self.tools.len().min(1)]
        } else {
            self.tools
        };
        let known = candidates
            .iter()
            .any(|tool| tool.argument_names().iter().any(|p| p == name));
        if !known && !candidates.is_empty() {
            let names: Vec<&str> = candidates.iter().map(|tool| tool.name.as_str()).collect();
            problems.add(
                &format!("{}.{section}.{name}", self.field),
                Some(name),
                format_args!("`{}` has no argument `{name}`", names.join("` or `")),
            );
        }
    }
}

/// Checks the argument names of `args_match`, `args_contains`, `args_forbid`,
/// `reference_args` and `args_accept`, and the sections' own rules (non-empty lists, no
/// argument both required and forbidden or matched and accepted).
fn check_argument_sections(
    arguments: &ArgumentNames<'_>,
    call: &ExpectedCallFile,
    problems: &mut Problems<'_>,
) {
    let field = arguments.field;
    for name in call.args_match.keys() {
        arguments.check("args_match", name, problems);
    }
    for name in call.args_contains.keys() {
        arguments.check("args_contains", name, problems);
    }
    check_contains(field, &call.args_contains, problems);
    for name in &call.args_forbid {
        arguments.check("args_forbid", name, problems);
        if call.args_match.contains_key(name) {
            problems.add(
                &format!("{field}.args_forbid"),
                Some(name),
                format_args!("`{name}` is both required by args_match and forbidden"),
            );
        }
    }
    for name in call.reference_args.keys() {
        arguments.check("reference_args", name, problems);
    }
    for (name, values) in &call.args_accept {
        arguments.check("args_accept", name, problems);
        if values.as_array().is_none_or(Vec::is_empty) {
            problems.add(
                &format!("{field}.args_accept.{name}"),
                Some(name),
                "must be a non-empty list of accepted values",
            );
        }
        if call.args_match.contains_key(name) {
            problems.add(
                &format!("{field}.args_accept.{name}"),
                Some(name),
                format_args!("`{name}` is in both args_match and args_accept"),
            );
        }
    }
}

/// Checks that what `args_optional`, `args_exact` and `args_compare` name is compared at all
/// (in `args_match` or `args_accept`).
fn check_compared(field: &str, call: &ExpectedCallFile, problems: &mut Problems<'_>) {
    let compared =
        |name: &String| call.args_match.contains_key(name) || call.args_accept.contains_key(name);
    for (section, names) in [
        ("args_optional", &call.args_optional),
        ("args_exact", &call.args_exact),
    ] {
        for name in names {
            if !compared(name) {
                problems.add(
                    &format!("{field}.{section}"),
                    Some(name),
                    format_args!("`{name}` is not in args_match or args_accept"),
                );
            }
        }
    }
    for name in call.args_compare.keys() {
        if !compared(name) {
            problems.add(
                &format!("{field}.args_compare.{name}"),
                Some(name),
                format_args!("`{name}` is not in args_match or args_accept"),
            );
        }
    }
}

/// The `default` of each argument of `tool`'s input schema that declares one; empty without
/// a tool.
fn schema_defaults(tool: Option<&ToolDef>) -> Map<String, Value> {
    tool.and_then(|tool| tool.input_schema()["properties"].as_object())
        .map(|properties| {
            properties
                .iter()
                .filter_map(|(name, schema)| Some((name.clone(), schema.get("default")?.clone())))
                .collect()
        })
        .unwrap_or_default()
}

/// The valid `args_from_prior` references of expected call `index`, in file order; each
/// invalid one is reported.
fn validate_prior(
    index: usize,
    arguments: &ArgumentNames<'_>,
    args_from_prior: &Map<String, Value>,
    problems: &mut Problems<'_>,
) -> Vec<PriorRef> {
    let mut refs = Vec::new();
    for (name, source) in args_from_prior {
        arguments.check("args_from_prior", name, problems);
        let at = format!("{}.args_from_prior.{name}", arguments.field);
        match parse_source(source, index) {
            Ok(from) => refs.push(PriorRef {
                argument: name.clone(),
                from,
            }),
            Err((message, needle)) => {
                problems.add(&at, Some(needle.as_deref().unwrap_or(name)), message);
            }
        }
    }
    refs
}

/// `user_turn`, 1 or more (default 1). Whether it names a message of the conversation is
/// checked against `user_turns` when those are read.
fn user_turn(
    field: &str,
    raw: Option<super::super::file::WholeNumber>,
    problems: &mut Problems<'_>,
) -> u32 {
    match raw.map(|turn| u32::try_from(turn.0)) {
        None => 1,
        Some(Ok(turn)) if turn >= 1 => turn,
        Some(_) => {
            problems.add(
                &format!("{field}.user_turn"),
                None,
                format_args!("must be 1 or more, got {}", raw.map_or(0, |turn| turn.0)),
            );
            1
        }
    }
}
