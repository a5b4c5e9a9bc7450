//! Validating a parsed scenario file against the catalog and its fixtures: every problem is
//! collected with its field path and, where the text shows it, its line, so that one run of
//! the loader reports them all.

mod answer;
mod calls;
mod elicitations;
mod identifiers;
mod sources;
mod trajectories;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::assertion::Assertion;
use super::file::{AnswerChecksFile, FaultFile, ScenarioFile, UsageBudgetFile, WholeNumber};
use super::fixture::Fixtures;
use super::{AnswerChecks, ExpectedCall, Fault, ForbiddenCall, Scenario, SourceLines, UsageBudget};
use crate::catalog::Catalog;
use answer::{StateNames, validate_answer};
use calls::{validate_call, validate_forbidden, validate_probe};

/// Why `n` is not a count of at least `min` that fits in a `u32`.
fn out_of_range(n: WholeNumber, min: i128) -> String {
    if n.0 < min {
        format!("must be {min} or more, got {n}")
    } else {
        format!("must be at most {}, got {n}", u32::MAX)
    }
}

/// Collects validation problems for one file.
pub(super) struct Problems<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
    pub(super) list: Vec<String>,
}

impl Problems<'_> {
    /// Records a problem at `field`; `needle` (a value from the file) locates the line.
    fn add(&mut self, field: &str, needle: Option<&str>, message: impl std::fmt::Display) {
        let line = needle.and_then(|needle| line_of(self.text, needle));
        let location = match line {
            Some(line) => format!("`{}`: {field} (line {line})", self.path.display()),
            None => format!("`{}`: {field}", self.path.display()),
        };
        self.list.push(format!("{location}: {message}"));
    }
}

/// The 1-based line of the first occurrence of `needle` as a quoted or bare token.
fn line_of(text: &str, needle: &str) -> Option<usize> {
    if needle.is_empty() {
        return None;
    }
    let quoted = format!("\"{needle}\"");
    text.lines()
        .position(|line| line.contains(&quoted))
        .or_else(|| text.lines().position(|line| line.contains(needle)))
        .map(|index| index + 1)
}

/// The most characters of a scenario id. Ids name runs on command lines (`--only`, a
/// `command` agent's arguments), in file names, reports and comments: 128 is far beyond any
/// real one (`T1-001`, `billing-refund-007`).
pub(crate) const MAX_ID_CHARS: usize = 128;

/// What is wrong with a non-empty scenario id, if anything: longer than [`MAX_ID_CHARS`], or a
/// character other than an ASCII letter, digit, `-`, `_` or `.` (a space, a control character,
/// a quote or a path separator would break a command line, a file name or a report).
pub(crate) fn id_problem(id: &str) -> Option<String> {
    let chars = id.chars().count();
    if chars > MAX_ID_CHARS {
        return Some(format!(
            "is {chars} characters long; at most {MAX_ID_CHARS} are allowed"
        ));
    }
    id.chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .map(|c| {
            format!("{c:?} is not allowed in an id: use ASCII letters, digits, `-`, `_` and `.`")
        })
}

/// Validates one parsed scenario file; `None` when it cannot become a scenario at all.
pub(super) fn validate(
    mut raw: ScenarioFile,
    path: &Path,
    root: &Path,
    catalog: &Catalog,
    fixtures: &mut Fixtures,
    problems: &mut Problems<'_>,
) -> Option<Scenario> {
    let tier = validate_heading(&raw, problems);
    let servers = catalog.is_servers();
    let Seeding {
        seed_state,
        seeded,
        seed_path,
    } = validate_seeding(&raw, root, catalog, fixtures, problems);
    let expected_calls: Vec<ExpectedCall> = std::mem::take(&mut raw.expected_calls)
        .into_iter()
        .enumerate()
        .map(|(index, call)| validate_call(index, call, catalog, problems))
        .collect();
    let budgets = validate_budgets(&raw, &expected_calls, catalog, problems);
    let usage_budget = validate_usage_budget(raw.usage_budget.as_ref(), problems);

    let faults = raw
        .fault_injection
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .filter_map(|(index, fault)| validate_fault(index, fault, catalog, problems))
        .collect();
    let roots = state_roots(seeded.as_deref());
    let final_state_assertions = validate_state_assertions(
        &raw.final_state_assertions,
        servers,
        seeded.is_some(),
        &roots,
        problems,
    );

    let (forbidden_calls, final_state_probes) = validate_forbidden_and_probes(
        std::mem::take(&mut raw.forbidden_calls),
        std::mem::take(&mut raw.final_state_probes),
        raw.block_forbidden,
        catalog,
        problems,
    );
    let group = expected_calls
        .first()
        .and_then(|call| catalog.tool(&call.tool))
        .map_or_else(|| "none".to_string(), |tool| tool.group().to_string());
    let state = StateNames((!servers && seeded.is_some()).then_some(roots.as_slice()));
    let final_answer = validate_final_answer(
        raw.final_answer,
        raw.reference_answer.as_deref(),
        expected_calls.len(),
        &state,
        problems,
    );
    let talk = trajectories::validate_conversation(
        (raw.user_turns, raw.simulated_user),
        (raw.alternatives, raw.counterexamples),
        &expected_calls,
        &state,
        problems,
    );
    let elicitations = elicitations::validate_elicitations(raw.elicitations, catalog, problems);
    let identifiers = identifiers::validate_identifiers(&raw.identifiers, catalog, problems);
    let reference_placeholders = sources::reference_placeholders(
        raw.reference_answer.as_deref(),
        expected_calls.len(),
        problems,
    );

    Some(Scenario {
        draft: raw.draft,
        lines: SourceLines::index(problems.text),
        id: raw.id,
        tier,
        kind: raw.kind,
        prompt: raw.prompt,
        path: path.to_path_buf(),
        seed_state,
        seed_state_name: raw.seed_state.unwrap_or_default(),
        seed_path,
        group,
        block_forbidden: raw.block_forbidden,
        final_state_probes,
        // Without a fixture the load reports a problem, so this scenario is never returned.
        seeded: seeded.unwrap_or_else(|| Arc::new(Value::Null)),
        expected_calls,
        ordering: raw.ordering,
        max_calls: budgets.max_calls,
        max_reads: budgets.max_reads,
        max_writes: budgets.max_writes,
        read_only: Arc::new(catalog.read_only_names()),
        max_per_tool: budgets.max_per_tool,
        max_failures: budgets.max_failures,
        failure_counting: raw.failure_counting.unwrap_or_default(),
        usage_budget,
        user_turns: talk.user_turns,
        simulated_user: talk.simulated_user,
        faults,
        final_state_assertions,
        forbidden_calls,
        final_answer,
        reference_answer: raw.reference_answer,
        reference_placeholders,
        identifiers,
        judge_rubric: raw.judge_rubric.filter(|rubric| !rubric.trim().is_empty()),
        alternatives: talk.alternatives,
        counterexamples: talk.counterexamples,
        elicitations,
    })
}

/// Checks `forbidden_calls` (and that `block_forbidden` has some to block) and
/// `final_state_probes`; returns the usable ones of each, in file order.
fn validate_forbidden_and_probes(
    forbidden: Vec<super::file::ForbiddenCallFile>,
    probes: Vec<super::file::ProbeFile>,
    block_forbidden: bool,
    catalog: &Catalog,
    problems: &mut Problems<'_>,
) -> (Vec<ForbiddenCall>, Vec<super::Probe>) {
    let forbidden_calls: Vec<ForbiddenCall> = forbidden
        .into_iter()
        .enumerate()
        .map(|(index, call)| validate_forbidden(index, call, catalog, problems))
        .collect();
    let final_state_probes = probes
        .into_iter()
        .enumerate()
        .filter_map(|(index, probe)| validate_probe(index, probe, catalog, problems))
        .collect();
    if block_forbidden && forbidden_calls.is_empty() {
        problems.add(
            "block_forbidden",
            None,
            "has no effect without `forbidden_calls`",
        );
    }
    (forbidden_calls, final_state_probes)
}

/// Checks the id and the prompt; returns the tier, or 1 (reported) when it is not in 1..=5.
fn validate_heading(raw: &ScenarioFile, problems: &mut Problems<'_>) -> u8 {
    if raw.id.trim().is_empty() {
        problems.add("id", None, "must not be empty");
    } else if let Some(problem) = id_problem(&raw.id) {
        problems.add("id", None, problem);
    }
    let tier = match u8::try_from(raw.tier.0) {
        Ok(tier @ 1..=5) => tier,
        _ => {
            problems.add(
                "tier",
                None,
                format_args!("must be 1..=5, got {}", raw.tier),
            );
            1
        }
    };
    if raw.prompt.trim().is_empty() {
        problems.add("prompt", None, "must not be empty");
    }
    tier
}

/// Where a run's state comes from: the `seed_state` fixture's path and the state read from it,
/// and the `seed_path` of own servers.
struct Seeding {
    seed_state: Option<PathBuf>,
    seeded: Option<Arc<Value>>,
    seed_path: Option<PathBuf>,
}

/// Checks `seed_state` and `seed_path` against the kind of suite; returns what was usable.
fn validate_seeding(
    raw: &ScenarioFile,
    root: &Path,
    catalog: &Catalog,
    fixtures: &mut Fixtures,
    problems: &mut Problems<'_>,
) -> Seeding {
    let seed_state = raw.seed_state.as_ref().map(|name| root.join(name));
    let seeded = validate_seed_state(
        raw,
        seed_state.as_deref(),
        root,
        catalog,
        fixtures,
        problems,
    );
    let seed_path = validate_seed_path(raw, root, catalog, problems);
    if catalog.is_servers() && raw.seed_state.is_some() {
        problems.add(
            "seed_state",
            raw.seed_state.as_deref(),
            "seeds the built-in world, which a suite of your own servers does not use; seed the servers with `seed_path`",
        );
    }
    Seeding {
        seed_state,
        seeded,
        seed_path,
    }
}

/// The state a run starts from: empty for own servers and for mocks without a fixture, else
/// the `seed_state` fixture at `path`; `None` (reported) when it is missing or unreadable.
fn validate_seed_state(
    raw: &ScenarioFile,
    path: Option<&Path>,
    root: &Path,
    catalog: &Catalog,
    fixtures: &mut Fixtures,
    problems: &mut Problems<'_>,
) -> Option<Arc<Value>> {
    match (&raw.seed_state, path) {
        _ if catalog.is_servers() => Some(Arc::new(Value::Object(serde_json::Map::new()))),
        (None, _) if catalog.is_mocks() => Some(Arc::new(Value::Object(serde_json::Map::new()))),
        (Some(name), Some(path)) => match fixtures.get(path) {
            Ok(state) => Some(state),
            Err(error) => {
                problems.add(
                    "seed_state",
                    Some(name),
                    format_args!(
                        "{error} (fixture paths are relative to the suite root `{}`)",
                        root.display()
                    ),
                );
                None
            }
        },
        _ => {
            problems.add(
                "seed_state",
                None,
                "is required (the built-in world's fixture)",
            );
            None
        }
    }
}

/// The existing `seed_path` under `root`, for suites of own servers only; `None` when absent
/// or reported.
fn validate_seed_path(
    raw: &ScenarioFile,
    root: &Path,
    catalog: &Catalog,
    problems: &mut Problems<'_>,
) -> Option<PathBuf> {
    match &raw.seed_path {
        None => None,
        Some(_) if !catalog.is_servers() => {
            let instead = if catalog.is_mocks() {
                "mock tables are seeded by `seed_state` (a fixture of tables; without one they start from the catalog's rows)"
            } else {
                "the built-in world is seeded by `seed_state`"
            };
            problems.add(
                "seed_path",
                raw.seed_path.as_deref(),
                format_args!(
                    "is only for suites of your own servers (`servers:` in toolgate.yaml); {instead}"
                ),
            );
            None
        }
        Some(name) => {
            let path = root.join(name);
            if path.exists() {
                Some(path)
            } else {
                problems.add(
                    "seed_path",
                    Some(name),
                    format_args!(
                        "`{}` does not exist (seed paths are relative to the suite root `{}`)",
                        path.display(),
                        root.display()
                    ),
                );
                None
            }
        }
    }
}

/// The validated call budgets of a scenario; each `None` when absent or reported.
struct Budgets {
    max_calls: Option<u32>,
    max_reads: Option<u32>,
    max_writes: Option<u32>,
    max_per_tool: BTreeMap<String, u32>,
    max_failures: Option<u32>,
}

/// Checks the budgets (`max_calls`, `max_reads`, `max_writes`, `max_per_tool`,
/// `max_failures` and its `failure_counting`) against the calls a passing run must make.
fn validate_budgets(
    raw: &ScenarioFile,
    expected_calls: &[ExpectedCall],
    catalog: &Catalog,
    problems: &mut Problems<'_>,
) -> Budgets {
    let required = |read_only: Option<bool>| {
        expected_calls
            .iter()
            .filter(|call| !call.optional && read_only.is_none_or(|r| call.read_only == r))
            .count()
    };
    let max_calls = budget(
        "max_calls",
        raw.max_calls,
        required(None),
        "expected calls",
        problems,
    );
    let max_reads = budget(
        "max_reads",
        raw.max_reads,
        required(Some(true)),
        "expected calls to read-only tools",
        problems,
    );
    let max_writes = budget(
        "max_writes",
        raw.max_writes,
        required(Some(false)),
        "expected calls to other tools",
        problems,
    );
    let max_per_tool = validate_per_tool(&raw.max_per_tool, expected_calls, catalog, problems);
    let max_failures = match raw.max_failures {
        None => None,
        Some(n) => match u32::try_from(n.0) {
            Ok(n) => Some(n),
            Err(_) => {
                problems.add("max_failures", None, out_of_range(n, 0));
                None
            }
        },
    };
    if raw.failure_counting.is_some() && raw.max_failures.is_none() {
        problems.add(
            "failure_counting",
            None,
            "has no effect without `max_failures`",
        );
    }
    Budgets {
        max_calls,
        max_reads,
        max_writes,
        max_per_tool,
        max_failures,
    }
}

/// Checks `usage_budget`: whole numbers of at least 1 (a run always spends some), a finite
/// cost of at least 0.
fn validate_usage_budget(
    raw: Option<&UsageBudgetFile>,
    problems: &mut Problems<'_>,
) -> UsageBudget {
    let Some(raw) = raw else {
        return UsageBudget::default();
    };
    let mut whole = |field: &str, value: Option<WholeNumber>, least: i128| {
        let n = value?;
        match u64::try_from(n.0) {
            Ok(v) if n.0 >= least => Some(v),
            _ if n.0 < least => {
                problems.add(
                    &format!("usage_budget.{field}"),
                    None,
                    format_args!("must be {least} or more, got {n}"),
                );
                None
            }
            _ => {
                problems.add(
                    &format!("usage_budget.{field}"),
                    None,
                    format_args!("must be at most {}, got {n}", u64::MAX),
                );
                None
            }
        }
    };
    let budget = UsageBudget {
        // A model request always spends tokens: a limit of 0 could never hold.
        max_tokens: whole("max_tokens", raw.max_tokens, 1),
        max_prompt_tokens: whole("max_prompt_tokens", raw.max_prompt_tokens, 1),
        max_completion_tokens: whole("max_completion_tokens", raw.max_completion_tokens, 1),
        max_model_calls: whole("max_model_calls", raw.max_model_calls, 1),
        max_wall_ms: whole("max_wall_ms", raw.max_wall_ms, 1),
        max_cost_usd: raw.max_cost_usd,
    };
    match raw.max_cost_usd {
        Some(cost) if !cost.is_finite() || cost < 0.0 => {
            problems.add(
                "usage_budget.max_cost_usd",
                None,
                format_args!("must be a number of US dollars, 0 or more, got {cost}"),
            );
            UsageBudget {
                max_cost_usd: None,
                ..budget
            }
        }
        _ => budget,
    }
}

/// The top-level names of a seeded state (its tables or collections); none without one.
fn state_roots(seeded: Option<&Value>) -> Vec<String> {
    seeded
        .and_then(Value::as_object)
        .map(|state| state.keys().cloned().collect())
        .unwrap_or_default()
}

/// The parsed `final_state_assertions` over the state's `roots`; none for own servers
/// (reported when there are some) or without a seeded state.
fn validate_state_assertions(
    sources: &[String],
    servers: bool,
    seeded: bool,
    roots: &[String],
    problems: &mut Problems<'_>,
) -> Vec<Assertion> {
    let mut assertions = Vec::new();
    if servers && !sources.is_empty() {
        problems.add(
            "final_state_assertions",
            None,
            "read the built-in world's state, which toolgate cannot see in your own servers; use `final_state_probes`",
        );
    }
    for (index, source) in sources.iter().enumerate() {
        if !seeded || servers {
            break;
        }
        match Assertion::parse(source, roots) {
            Ok(assertion) => assertions.push(assertion),
            Err(error) => problems.add(
                &format!("final_state_assertions[{index}]"),
                Some(source),
                error,
            ),
        }
    }
    assertions
}

/// The validated `final_answer` checks (none when absent); also checks that
/// `reference_answer` is not blank, and present when there are checks.
fn validate_final_answer(
    checks: Option<AnswerChecksFile>,
    reference: Option<&str>,
    expected_calls: usize,
    state: &StateNames<'_>,
    problems: &mut Problems<'_>,
) -> AnswerChecks {
    let final_answer = checks
        .map(|checks| validate_answer("final_answer", checks, expected_calls, state, problems))
        .unwrap_or_default();
    match reference {
        Some(answer) if answer.trim().is_empty() => {
            problems.add("reference_answer", None, "must not be empty");
        }
        None if !final_answer.is_empty() => problems.add(
            "final_answer",
            None,
            "has checks, so `reference_answer` (the known-good answer the reference agent gives) is required",
        ),
        _ => {}
    }
    final_answer
}

/// A budget of 0 or more that fits in a `u32` and leaves room for the `least` calls a
/// passing run must make (`what` names them in the message).
fn budget(
    field: &str,
    raw: Option<WholeNumber>,
    least: usize,
    what: &str,
    problems: &mut Problems<'_>,
) -> Option<u32> {
    let n = raw?;
    match u32::try_from(n.0) {
        Ok(n) if (n as usize) < least => {
            problems.add(
                field,
                None,
                format_args!("{n} is fewer than the {least} {what}, so no run could pass"),
            );
            None
        }
        Ok(n) => Some(n),
        Err(_) => {
            problems.add(field, None, out_of_range(n, 0));
            None
        }
    }
}

/// Checks `max_per_tool`: catalog tools only, budgets of 0 or more, and no budget below the
/// calls the scenario itself expects of that tool.
fn validate_per_tool(
    budgets: &BTreeMap<String, WholeNumber>,
    expected_calls: &[ExpectedCall],
    catalog: &Catalog,
    problems: &mut Problems<'_>,
) -> BTreeMap<String, u32> {
    let mut valid = BTreeMap::new();
    for (tool, &budget) in budgets {
        let field = format!("max_per_tool.{tool}");
        if catalog.tool(tool).is_none() {
            problems.add(&field, Some(tool), catalog.unknown_tool_message(tool));
            continue;
        }
        let Ok(budget) = u32::try_from(budget.0) else {
            problems.add(&field, Some(tool), out_of_range(budget, 0));
            continue;
        };
        let expected = expected_calls
            .iter()
            .filter(|call| !call.optional && call.tool == *tool && call.also.is_empty())
            .count();
        if (budget as usize) < expected {
            problems.add(
                &field,
                Some(tool),
                format_args!(
                    "{budget} is fewer than the {expected} expected calls of `{tool}`, so no run could pass"
                ),
            );
            continue;
        }
        valid.insert(tool.clone(), budget);
    }
    valid
}

pub(super) fn validate_fault(
    index: usize,
    fault: FaultFile,
    catalog: &Catalog,
    problems: &mut Problems<'_>,
) -> Option<Fault> {
    let field = format!("fault_injection[{index}]");
    let mut valid = true;
    if catalog.tool(&fault.tool).is_none() {
        problems.add(
            &format!("{field}.tool"),
            Some(&fault.tool),
            catalog.unknown_tool_message(&fault.tool),
        );
        valid = false;
    }
    let on_call = u32::try_from(fault.on_call.0).ok().filter(|n| *n >= 1);
    if on_call.is_none() {
        problems.add(
            &format!("{field}.on_call"),
            None,
            out_of_range(fault.on_call, 1),
        );
    }
    let times = u32::try_from(fault.times.0).ok().filter(|n| *n >= 1);
    if times.is_none() {
        problems.add(
            &format!("{field}.times"),
            None,
            out_of_range(fault.times, 1),
        );
    }
    Some(Fault {
        tool: fault.tool,
        on_call: on_call?,
        times: times?,
        error: fault.error,
    })
    .filter(|_| valid)
}

#[cfg(test)]
mod tests {
    //! Line lookup: a value's line is found by its quoted spelling, and an absent value has none.

    use super::*;

    #[test]
    fn line_of_finds_quoted_value_first() {
        let text = "{\n  \"id\": \"x\",\n  \"tool\": \"crm_get_contact\"\n}";
        assert_eq!(line_of(text, "crm_get_contact"), Some(3));
        assert_eq!(line_of(text, "absent"), None);
    }
}
