//! Reading a mock catalog file and validating it: tools imported and compiled, tables
//! declared, every rule's tool, table, regular expression and template checked.
//!
//! Every problem names the file and the field path (`rules.get_ticket[1].select.table`) and,
//! where the text shows it, the line; all problems of a file are reported together.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context as _, Result, bail};
use serde_json::{Map, Value};

use super::file::{CatalogFile, ResponseFile, RuleFile, TableFile};
use super::pattern::Pattern;
use super::template::Template;
use super::{Effect, MockCatalog, Reply, Response, Rule, SCHEMA_VERSION, Select, TableSpec};
use crate::catalog::{Catalog, ToolDef};
use crate::harness::ToolSet;

/// Reads and validates the mock catalog at `path` (YAML for `.yaml`/`.yml`, else JSON).
/// `tools_from` resolves against the file's directory.
///
/// Errors: an unreadable file, a parse error (with field and line), or every validation
/// problem found, each naming the file and field.
pub fn load(path: &Path) -> Result<MockCatalog> {
    let text = crate::fs::read_text(path, "mock catalog", crate::defaults::MAX_DATA_FILE_BYTES)?;
    parse(&text, path)
}

/// Parses and validates catalog text as if read from `path`. Errors as [`load`].
pub fn parse(text: &str, path: &Path) -> Result<MockCatalog> {
    let raw: CatalogFile = crate::scenario::load::parse_document(text, path)?;
    if raw.schema_version != SCHEMA_VERSION {
        bail!(
            "`{}`: schema_version: this toolgate reads mock catalogs of version {SCHEMA_VERSION}, got {}",
            path.display(),
            raw.schema_version
        );
    }
    let base = path.parent().unwrap_or_else(|| Path::new("."));
    let mut definitions = match &raw.tools_from {
        Some(from) => import_tools(&base.join(from))
            .with_context(|| format!("`{}`: tools_from", path.display()))?,
        None => Vec::new(),
    };
    let mut problems = Problems {
        path,
        text,
        list: Vec::new(),
    };
    add_inline_tools(raw.tools, &mut definitions, &mut problems);
    let tools = tool_set(definitions, &mut problems);
    let tables = table_specs(raw.tables, &mut problems);
    let rules = match &tools {
        Some(tools) => compile_rules(raw.rules, tools, &tables, &mut problems),
        None => HashMap::new(),
    };
    match tools {
        Some(tools) if problems.list.is_empty() => Ok(MockCatalog {
            path: path.to_owned(),
            tools,
            tables,
            rules,
        }),
        _ => bail!("invalid mock catalog:\n{}", problems.list.join("\n")),
    }
}

/// Adds the catalog's inline tool definitions to the imported `definitions`, an inline one
/// replacing an imported one of the same name; one without a name or `inputSchema` is reported.
fn add_inline_tools(tools: Vec<Value>, definitions: &mut Vec<Value>, problems: &mut Problems<'_>) {
    for (index, tool) in tools.into_iter().enumerate() {
        let Some(name) = tool.get("name").and_then(Value::as_str).map(str::to_owned) else {
            problems.add(&format!("tools[{index}]"), None, "has no string `name`");
            continue;
        };
        if tool.get("inputSchema").is_none() {
            problems.add(
                &format!("tools[{index}]"),
                Some(&name),
                format_args!("tool `{name}` has no `inputSchema`"),
            );
            continue;
        }
        match definitions.iter().position(|d| d["name"] == name.as_str()) {
            Some(at) => definitions[at] = tool,
            None => definitions.push(tool),
        }
    }
}

/// The compiled tools the catalog serves; `None` (reported) when they do not compile. No tool
/// at all is reported too, unless something else already was.
fn tool_set(definitions: Vec<Value>, problems: &mut Problems<'_>) -> Option<Arc<ToolSet>> {
    if definitions.is_empty() && problems.list.is_empty() {
        problems.add(
            "tools",
            None,
            "the catalog serves no tool: add `tools` or `tools_from`",
        );
    }
    match ToolSet::from_definitions(definitions) {
        Ok(tools) => Some(Arc::new(tools)),
        Err(error) => {
            problems.add("tools", None, format_args!("{error:#}"));
            None
        }
    }
}

/// The declared tables, in name order, with their defaults filled in; an `id_start` of 0 is
/// reported (and read as 1).
fn table_specs(tables: BTreeMap<String, TableFile>, problems: &mut Problems<'_>) -> Vec<TableSpec> {
    tables
        .into_iter()
        .map(|(name, table)| {
            let id_start = table.id_start.unwrap_or(1);
            if id_start == 0 {
                problems.add(
                    &format!("tables.{name}.id_start"),
                    Some(&name),
                    "must be 1 or more",
                );
            }
            TableSpec {
                name,
                key: table.key.unwrap_or_else(|| "id".to_owned()),
                id_prefix: table.id_prefix.unwrap_or_default(),
                id_start: id_start.max(1),
                rows: table.rows,
            }
        })
        .collect()
}

/// The compiled rules of each tool that `tools` serves; a rule for an unknown tool, and each
/// rule that does not compile, is reported and left out.
fn compile_rules(
    raw: BTreeMap<String, Vec<RuleFile>>,
    tools: &ToolSet,
    tables: &[TableSpec],
    problems: &mut Problems<'_>,
) -> HashMap<String, Vec<Rule>> {
    let catalog = Catalog::from_tools(
        tools
            .definitions()
            .iter()
            .cloned()
            .map(ToolDef::from_definition)
            .collect(),
    );
    let mut rules = HashMap::new();
    for (tool, list) in raw {
        let Some(definition) = catalog.tool(&tool) else {
            problems.add(
                &format!("rules.{tool}"),
                Some(&tool),
                catalog.unknown_tool_message(&tool),
            );
            continue;
        };
        let properties = definition.argument_names();
        let compiled: Vec<Rule> = list
            .into_iter()
            .enumerate()
            .filter_map(|(index, rule)| {
                let field = format!("rules.{tool}[{index}]");
                match compile_rule(rule, tables, &properties, &tool) {
                    Ok(rule) => Some(rule),
                    Err(message) => {
                        problems.add(&field_of(&field, &message), Some(&tool), strip(&message));
                        None
                    }
                }
            })
            .collect();
        rules.insert(tool, compiled);
    }
    rules
}

/// A rule problem is "sub.field\u{0}message"; these split it back.
fn field_of(base: &str, message: &str) -> String {
    match message.split_once('\u{0}') {
        Some((sub, _)) if !sub.is_empty() => format!("{base}.{sub}"),
        _ => base.to_owned(),
    }
}

fn strip(message: &str) -> &str {
    message
        .split_once('\u{0}')
        .map_or(message, |(_, text)| text)
}

/// An error at `field` of a rule.
fn at(field: &str, message: impl std::fmt::Display) -> String {
    format!("{field}\u{0}{message}")
}

/// Compiles one rule of `tool` (whose parameters are `properties`; empty means any); `Err`
/// is the first problem, as [`at`] writes it.
fn compile_rule(
    rule: RuleFile,
    tables: &[TableSpec],
    properties: &[String],
    tool: &str,
) -> Result<Rule, String> {
    let effects = [
        rule.insert.is_some(),
        rule.update.is_some(),
        rule.delete.is_some(),
    ];
    if effects.iter().filter(|on| **on).count() > 1 {
        return Err(at("", "at most one of `insert`, `update` and `delete`"));
    }
    let has_rows = rule.select.is_some() || effects.contains(&true);
    let matcher = matcher(&rule.matches, properties, tool)?;
    let select = match &rule.select {
        Some(select) => Some(Select {
            table: table_index(tables, "select.table", &select.table)?,
            filter: filter("select.where", &select.filter)?,
            limit: select.limit,
        }),
        None => None,
    };
    let effect = effect(&rule, tables)?;
    if rule.if_found.is_some()
        && rule.select.is_none()
        && rule.update.is_none()
        && rule.delete.is_none()
    {
        return Err(at(
            "if_found",
            "needs a `select`, `update` or `delete` to look for rows",
        ));
    }
    let if_found = rule.if_found;
    let response = response(rule, has_rows)?;
    Ok(Rule {
        matcher,
        select,
        if_found,
        effect,
        response,
    })
}

/// The index of table `name` in `tables`; `Err` at `field` names the declared ones.
fn table_index(tables: &[TableSpec], field: &str, name: &str) -> Result<usize, String> {
    tables
        .iter()
        .position(|table| table.name == name)
        .ok_or_else(|| {
            let declared: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
            at(
                field,
                format_args!(
                    "unknown table `{name}` (declared in `tables`: {})",
                    if declared.is_empty() {
                        "none".to_owned()
                    } else {
                        declared.join(", ")
                    }
                ),
            )
        })
}

/// The patterns of a rule's `match`, each on a parameter of `tool` (any name when
/// `properties` is empty).
fn matcher(
    matches: &Map<String, Value>,
    properties: &[String],
    tool: &str,
) -> Result<Vec<(String, Pattern)>, String> {
    let mut matcher = Vec::new();
    for (key, value) in matches {
        if !properties.is_empty() && !properties.contains(key) {
            return Err(at(
                &format!("match.{key}"),
                format_args!("`{key}` is not a parameter of `{tool}`"),
            ));
        }
        let pattern = Pattern::parse(value, false).map_err(|e| at(&format!("match.{key}"), e))?;
        matcher.push((key.clone(), pattern));
    }
    Ok(matcher)
}

/// The patterns of a `where` filter at `field`, one per column.
fn filter(field: &str, map: &Map<String, Value>) -> Result<Vec<(String, Pattern)>, String> {
    map.iter()
        .map(|(key, value)| {
            Pattern::parse(value, false)
                .map(|pattern| (key.clone(), pattern))
                .map_err(|e| at(&format!("{field}.{key}"), e))
        })
        .collect()
}

/// The rule's `insert`, `update` or `delete` (at most one is given), if any.
fn effect(rule: &RuleFile, tables: &[TableSpec]) -> Result<Option<Effect>, String> {
    Ok(if let Some(insert) = &rule.insert {
        Some(Effect::Insert {
            table: table_index(tables, "insert.table", &insert.table)?,
            row: Template::parse(&Value::Object(insert.row.clone()), true)
                .map_err(|e| at("insert.row", e))?,
        })
    } else if let Some(update) = &rule.update {
        Some(Effect::Update {
            table: table_index(tables, "update.table", &update.table)?,
            filter: filter("update.where", &update.filter)?,
            set: Template::parse(&Value::Object(update.set.clone()), rule.select.is_some())
                .map_err(|e| at("update.set", e))?,
        })
    } else if let Some(delete) = &rule.delete {
        Some(Effect::Delete {
            table: table_index(tables, "delete.table", &delete.table)?,
            filter: filter("delete.where", &delete.filter)?,
        })
    } else {
        None
    })
}

/// The rule's answer: its `sequence` of replies, or its one `return`, `error` or `rpc_error`.
fn response(rule: RuleFile, has_rows: bool) -> Result<Response, String> {
    Ok(match rule.sequence {
        Some(steps) => {
            if rule.returns.is_some() || rule.error.is_some() || rule.rpc_error.is_some() {
                return Err(at(
                    "",
                    "`sequence` replaces `return`, `error` and `rpc_error`; give only one",
                ));
            }
            if steps.is_empty() {
                return Err(at("sequence", "must have at least one step"));
            }
            let replies = steps
                .into_iter()
                .enumerate()
                .map(|(index, step)| {
                    reply(step, has_rows).map_err(|e| {
                        let field = field_of("", &e);
                        at(&format!("sequence[{index}]{field}"), strip(&e))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            Response::Sequence(replies)
        }
        None => Response::Always(reply(
            ResponseFile {
                returns: rule.returns,
                error: rule.error,
                rpc_error: rule.rpc_error,
            },
            has_rows,
        )?),
    })
}

fn reply(step: ResponseFile, has_rows: bool) -> Result<Reply, String> {
    let given = [
        step.returns.is_some(),
        step.error.is_some(),
        step.rpc_error.is_some(),
    ];
    if given.iter().filter(|on| **on).count() != 1 {
        return Err(at(
            "",
            "needs exactly one of `return`, `error`, `rpc_error` (or a `sequence` of them)",
        ));
    }
    let parse =
        |field: &str, value: &Value| Template::parse(value, has_rows).map_err(|e| at(field, e));
    Ok(match (step.returns, step.error, step.rpc_error) {
        (Some(value), _, _) => Reply::Return(parse("return", &value)?),
        (_, Some(value), _) => Reply::Error(parse("error", &value)?),
        (_, _, Some(value)) => Reply::RpcError(parse("rpc_error", &value)?),
        (None, None, None) => unreachable!("exactly one is given, checked above"),
    })
}

/// The tool definitions of a `toolgate snapshot` lock (`schema_version` + `tools` with
/// `definition`s) or of a saved tools/list (a result, `{"tools": [...]}` or an array).
///
/// Errors: an unreadable or invalid file.
pub fn import_tools(path: &Path) -> Result<Vec<Value>> {
    let text = crate::fs::read_text(path, "tools file", crate::defaults::MAX_DATA_FILE_BYTES)?;
    let value: Value = serde_json::from_str(&text)
        .with_context(|| format!("tools file `{}` is not valid JSON", path.display()))?;
    let is_lock = value.get("schema_version").is_some()
        && value["tools"]
            .as_array()
            .is_some_and(|tools| tools.iter().all(|tool| tool.get("definition").is_some()));
    if is_lock {
        let lock = crate::catalog::lock::Lock::load(path)?;
        return Ok(lock.tools.into_iter().map(|tool| tool.definition).collect());
    }
    let name = path.display().to_string();
    let servers = crate::catalog::listing::parse_saved(&name, value)
        .with_context(|| format!("failed to read tools file `{}`", path.display()))?;
    Ok(servers
        .into_iter()
        .flat_map(|(_, listing)| listing.tools)
        .collect())
}

/// Collects validation problems for one file.
struct Problems<'a> {
    path: &'a Path,
    text: &'a str,
    list: Vec<String>,
}

impl Problems<'_> {
    /// Records a problem at `field`; `needle` (a key from the file) locates the line.
    fn add(&mut self, field: &str, needle: Option<&str>, message: impl std::fmt::Display) {
        let line = needle.and_then(|needle| {
            self.text
                .lines()
                .position(|line| {
                    let line = line.trim_start().trim_start_matches('"');
                    line.starts_with(needle)
                        && line[needle.len()..]
                            .trim_start_matches('"')
                            .starts_with(':')
                })
                .map(|index| index + 1)
        });
        let location = match line {
            Some(line) => format!("`{}`: {field} (line {line})", self.path.display()),
            None => format!("`{}`: {field}", self.path.display()),
        };
        self.list.push(format!("{location}: {message}"));
    }
}
