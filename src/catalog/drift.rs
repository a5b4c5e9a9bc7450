//! Drift: a lock file of a catalog (`toolgate snapshot`) and the classified differences between
//! it and a live catalog (`toolgate drift`).
//!
//! Classes: breaking (a tool or parameter removed, a parameter became required or a new one is
//! required, a type changed, an enum value removed; for output schemas, a property removed or a
//! type changed), non-breaking (a tool, an optional parameter, an enum value or an output
//! property added; a parameter became optional; a type widened) and description changed (the
//! tool's `title`/`description` or a parameter's `description`: behaviour-relevant, since
//! agents choose and fill tools from these texts).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::listing::SourcedTool;
use super::lock::Lock;
use crate::json::pointer_token;

/// How far the schema comparison descends into nested properties.
const MAX_DEPTH: usize = 32;

/// The class of a change. Ordered by how much it matters: `NonBreaking < Description < Breaking`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeClass {
    /// Existing callers keep working.
    NonBreaking,
    /// A description or title changed: worth a re-run of the scenarios that use the tool.
    DescriptionChanged,
    /// Existing callers may fail.
    Breaking,
}

impl ChangeClass {
    /// The name used in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeClass::NonBreaking => "non_breaking",
            ChangeClass::DescriptionChanged => "description_changed",
            ChangeClass::Breaking => "breaking",
        }
    }
}

/// One difference between the lock and the live catalog.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub class: ChangeClass,
    pub server: String,
    pub tool: String,
    /// JSON Pointer into the tool's definition; empty for a whole tool.
    pub pointer: String,
    pub message: String,
}

/// Every change, in lock order (removed and changed tools) then live order (added tools).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DriftReport {
    pub schema_version: u32,
    pub changes: Vec<Change>,
    /// For each changed tool that scenarios use, their ids in suite order (filled by
    /// [`DriftReport::with_scenarios`]); empty when no suite was given or none uses one.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub scenarios: BTreeMap<String, Vec<String>>,
}

impl DriftReport {
    /// The most serious class among the changes; `None` when nothing changed.
    pub fn worst(&self) -> Option<ChangeClass> {
        self.changes.iter().map(|change| change.class).max()
    }

    /// The same report naming, for each changed tool, the scenarios that use it. `uses` holds
    /// each scenario's id and the tools it calls or forbids, in suite order.
    pub fn with_scenarios(mut self, uses: &[(String, Vec<String>)]) -> Self {
        for change in &self.changes {
            if self.scenarios.contains_key(&change.tool) {
                continue;
            }
            let ids: Vec<String> = uses
                .iter()
                .filter(|(_, tools)| tools.contains(&change.tool))
                .map(|(id, _)| id.clone())
                .collect();
            if !ids.is_empty() {
                self.scenarios.insert(change.tool.clone(), ids);
            }
        }
        self
    }

    /// "N breaking, N non-breaking, N description changes" or "no drift".
    pub fn summary(&self) -> String {
        if self.changes.is_empty() {
            return "no drift".to_owned();
        }
        let count = |class| self.changes.iter().filter(|c| c.class == class).count();
        format!(
            "{} breaking, {} non-breaking, {} description changes",
            count(ChangeClass::Breaking),
            count(ChangeClass::NonBreaking),
            count(ChangeClass::DescriptionChanged)
        )
    }
}

/// Compares a live catalog (its `servers`, listed or not, and their `tools`) with a lock.
/// When both hold exactly one server, tools are matched by name alone (a server's command
/// line or URL may change between runs); otherwise by server and name.
pub fn compare(lock: &Lock, servers: &[String], tools: &[SourcedTool]) -> DriftReport {
    let locked_servers: std::collections::BTreeSet<&str> =
        lock.tools.iter().map(|tool| tool.server.as_str()).collect();
    let by_name_only = locked_servers.len() <= 1 && servers.len() <= 1;
    let key = |server: &str, name: &str| {
        if by_name_only {
            (String::new(), name.to_owned())
        } else {
            (server.to_owned(), name.to_owned())
        }
    };
    let live_tools: BTreeMap<(String, String), (&str, &Value)> = tools
        .iter()
        .filter_map(|tool| {
            let name = tool.definition.get("name")?.as_str()?;
            Some((
                key(&tool.server, name),
                (tool.server.as_str(), &tool.definition),
            ))
        })
        .collect();
    let mut changes = Vec::new();
    for locked in &lock.tools {
        let mut diff = Diff {
            server: &locked.server,
            tool: &locked.name,
            changes: &mut changes,
        };
        match live_tools.get(&key(&locked.server, &locked.name)) {
            None => diff.push(ChangeClass::Breaking, "", "tool removed".to_owned()),
            Some((_, definition)) => diff.tool(&locked.definition, definition),
        }
    }
    let locked_keys: std::collections::BTreeSet<(String, String)> = lock
        .tools
        .iter()
        .map(|tool| key(&tool.server, &tool.name))
        .collect();
    for tool in tools {
        let Some(name) = tool.definition.get("name").and_then(Value::as_str) else {
            continue;
        };
        if !locked_keys.contains(&key(&tool.server, name)) {
            changes.push(Change {
                class: ChangeClass::NonBreaking,
                server: tool.server.clone(),
                tool: name.to_owned(),
                pointer: String::new(),
                message: "tool added".to_owned(),
            });
        }
    }
    DriftReport {
        schema_version: 1,
        changes,
        scenarios: BTreeMap::new(),
    }
}

/// Which side of a call a schema describes: breaking means opposite things for each.
#[derive(Clone, Copy, PartialEq)]
enum Direction {
    Input,
    Output,
}

struct Diff<'a> {
    server: &'a str,
    tool: &'a str,
    changes: &'a mut Vec<Change>,
}

impl Diff<'_> {
    fn push(&mut self, class: ChangeClass, pointer: &str, message: String) {
        self.changes.push(Change {
            class,
            server: self.server.to_owned(),
            tool: self.tool.to_owned(),
            pointer: pointer.to_owned(),
            message,
        });
    }

    fn tool(&mut self, old: &Value, new: &Value) {
        for field in ["title", "description"] {
            if old.get(field) != new.get(field) {
                self.push(
                    ChangeClass::DescriptionChanged,
                    &format!("/{field}"),
                    format!("tool {field} changed"),
                );
            }
        }
        let empty = Value::Object(serde_json::Map::new());
        let schema =
            |tool: &Value, key: &str| tool.get(key).cloned().unwrap_or_else(|| empty.clone());
        self.schema(
            &schema(old, "inputSchema"),
            &schema(new, "inputSchema"),
            "/inputSchema",
            Direction::Input,
            0,
        );
        match (old.get("outputSchema"), new.get("outputSchema")) {
            (Some(old), Some(new)) => self.schema(old, new, "/outputSchema", Direction::Output, 0),
            (Some(_), None) => self.push(
                ChangeClass::Breaking,
                "/outputSchema",
                "output schema removed".to_owned(),
            ),
            (None, Some(_)) => self.push(
                ChangeClass::NonBreaking,
                "/outputSchema",
                "output schema added".to_owned(),
            ),
            (None, None) => {}
        }
    }

    fn schema(
        &mut self,
        old: &Value,
        new: &Value,
        pointer: &str,
        direction: Direction,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            return;
        }
        if depth > 0 && old.get("description") != new.get("description") {
            self.push(
                ChangeClass::DescriptionChanged,
                &format!("{pointer}/description"),
                "parameter description changed".to_owned(),
            );
        }
        let (old_types, new_types) = (types(old), types(new));
        if old_types != new_types {
            let widened = direction == Direction::Input
                && !old_types.is_empty()
                && old_types.iter().all(|ty| new_types.contains(ty));
            let widened = widened || (direction == Direction::Input && new_types.is_empty());
            self.push(
                if widened {
                    ChangeClass::NonBreaking
                } else {
                    ChangeClass::Breaking
                },
                &format!("{pointer}/type"),
                format!(
                    "type changed from {} to {}",
                    show(&old_types),
                    show(&new_types)
                ),
            );
        }
        self.enums(old, new, pointer, direction);
        self.properties(old, new, pointer, direction, depth);
        if let (Some(old_items), Some(new_items)) = (old.get("items"), new.get("items")) {
            self.schema(
                old_items,
                new_items,
                &format!("{pointer}/items"),
                direction,
                depth + 1,
            );
        }
    }

    fn enums(&mut self, old: &Value, new: &Value, pointer: &str, direction: Direction) {
        let (Some(old_values), Some(new_values)) = (
            old.get("enum").and_then(Value::as_array),
            new.get("enum").and_then(Value::as_array),
        ) else {
            return;
        };
        for value in old_values
            .iter()
            .filter(|value| !new_values.contains(value))
        {
            let class = match direction {
                Direction::Input => ChangeClass::Breaking,
                Direction::Output => ChangeClass::NonBreaking,
            };
            self.push(
                class,
                &format!("{pointer}/enum"),
                format!("enum value {value} removed"),
            );
        }
        for value in new_values
            .iter()
            .filter(|value| !old_values.contains(value))
        {
            let class = match direction {
                Direction::Input => ChangeClass::NonBreaking,
                Direction::Output => ChangeClass::Breaking,
            };
            self.push(
                class,
                &format!("{pointer}/enum"),
                format!("enum value {value} added"),
            );
        }
    }

    fn properties(
        &mut self,
        old: &Value,
        new: &Value,
        pointer: &str,
        direction: Direction,
        depth: usize,
    ) {
        let empty = serde_json::Map::new();
        let old_properties = old
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let new_properties = new
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let (old_required, new_required) = (required(old), required(new));
        for (name, old_property) in old_properties {
            let at = format!("{pointer}/properties/{}", pointer_token(name));
            let Some(new_property) = new_properties.get(name) else {
                let what = if direction == Direction::Input {
                    "parameter"
                } else {
                    "output property"
                };
                self.push(
                    ChangeClass::Breaking,
                    &at,
                    format!("{what} `{name}` removed"),
                );
                continue;
            };
            if direction == Direction::Input {
                match (old_required.contains(name), new_required.contains(name)) {
                    (false, true) => self.push(
                        ChangeClass::Breaking,
                        &at,
                        format!("parameter `{name}` became required"),
                    ),
                    (true, false) => self.push(
                        ChangeClass::NonBreaking,
                        &at,
                        format!("parameter `{name}` became optional"),
                    ),
                    _ => {}
                }
            }
            self.schema(old_property, new_property, &at, direction, depth + 1);
        }
        for name in new_properties
            .keys()
            .filter(|name| !old_properties.contains_key(*name))
        {
            let at = format!("{pointer}/properties/{}", pointer_token(name));
            match direction {
                Direction::Input if new_required.contains(name) => {
                    self.push(
                        ChangeClass::Breaking,
                        &at,
                        format!("required parameter `{name}` added"),
                    );
                }
                Direction::Input => {
                    self.push(
                        ChangeClass::NonBreaking,
                        &at,
                        format!("optional parameter `{name}` added"),
                    );
                }
                Direction::Output => {
                    self.push(
                        ChangeClass::NonBreaking,
                        &at,
                        format!("output property `{name}` added"),
                    );
                }
            }
        }
    }
}

fn types(schema: &Value) -> Vec<String> {
    let mut types: Vec<String> = match schema.get("type") {
        Some(Value::String(ty)) => vec![ty.clone()],
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    types.sort();
    types
}

fn show(types: &[String]) -> String {
    if types.is_empty() {
        "any".to_owned()
    } else {
        format!("`{}`", types.join("|"))
    }
}

fn required(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    //! Drift: each kind of change lands in its class and names its scenarios; locks round-trip.

    use serde_json::json;

    use super::*;

    /// The tools of one server `srv`.
    fn catalog(tools: Value) -> Vec<SourcedTool> {
        match tools {
            Value::Array(tools) => tools
                .into_iter()
                .map(|definition| SourcedTool {
                    server: "srv".to_owned(),
                    definition,
                })
                .collect(),
            _ => panic!("tools must be an array"),
        }
    }

    const SERVERS: &[String] = &[];

    #[test]
    fn names_the_scenarios_that_use_a_changed_tool() {
        let old = json!([
            {"name": "crm_get_contact", "description": "Get a contact.", "inputSchema": {"type": "object", "properties": {}}},
            {"name": "crm_delete_contact", "description": "Delete a contact.", "inputSchema": {"type": "object", "properties": {}}},
            {"name": "util_current_time", "description": "Now.", "inputSchema": {"type": "object", "properties": {}}}
        ]);
        let new = json!([
            {"name": "crm_get_contact", "description": "Get one contact by id.", "inputSchema": {"type": "object", "properties": {}}},
            {"name": "util_current_time", "description": "Now.", "inputSchema": {"type": "object", "properties": {}}}
        ]);
        let uses = [
            ("T1-002".to_owned(), vec!["crm_get_contact".to_owned()]),
            ("T1-003".to_owned(), vec!["util_current_time".to_owned()]),
            (
                "T5-001".to_owned(),
                vec![
                    "crm_get_contact".to_owned(),
                    "crm_delete_contact".to_owned(),
                ],
            ),
        ];
        let report =
            compare(&Lock::from_tools(&catalog(old)), SERVERS, &catalog(new)).with_scenarios(&uses);
        let named: Vec<(&str, Vec<&str>)> = report
            .scenarios
            .iter()
            .map(|(tool, ids)| (tool.as_str(), ids.iter().map(String::as_str).collect()))
            .collect();
        assert_eq!(
            named,
            [
                ("crm_delete_contact", vec!["T5-001"]),
                ("crm_get_contact", vec!["T1-002", "T5-001"]),
            ]
        );
        insta::assert_snapshot!(crate::lint::render::render_drift_table(&report));
    }

    fn drift(old: Value, new: Value) -> Vec<(ChangeClass, String, String, String)> {
        let lock = Lock::from_tools(&catalog(old));
        compare(&lock, SERVERS, &catalog(new))
            .changes
            .into_iter()
            .map(|c| (c.class, c.tool, c.pointer, c.message))
            .collect()
    }

    fn row(
        class: ChangeClass,
        tool: &str,
        pointer: &str,
        message: &str,
    ) -> (ChangeClass, String, String, String) {
        (
            class,
            tool.to_owned(),
            pointer.to_owned(),
            message.to_owned(),
        )
    }

    #[test]
    fn classifies_each_kind_of_change() {
        use ChangeClass::*;
        let old = json!([
            {"name": "search", "description": "Search.", "inputSchema": {"type": "object",
              "properties": {"q": {"type": "string", "description": "Query."},
                             "limit": {"type": "integer"},
                             "sort": {"type": "string", "enum": ["asc", "desc"]},
                             "page": {"type": "integer"}},
              "required": ["q"]}},
            {"name": "gone", "inputSchema": {"type": "object"}}
        ]);
        let new = json!([
            {"name": "search", "description": "Search orders.", "inputSchema": {"type": "object",
              "properties": {"q": {"type": "string", "description": "Query text."},
                             "limit": {"type": "string"},
                             "sort": {"type": "string", "enum": ["asc"]},
                             "page": {"type": "integer"},
                             "cursor": {"type": "string"}},
              "required": ["q", "page"]}},
            {"name": "added", "inputSchema": {"type": "object"}}
        ]);
        assert_eq!(
            drift(old, new),
            [
                row(
                    DescriptionChanged,
                    "search",
                    "/description",
                    "tool description changed"
                ),
                row(
                    DescriptionChanged,
                    "search",
                    "/inputSchema/properties/q/description",
                    "parameter description changed"
                ),
                row(
                    Breaking,
                    "search",
                    "/inputSchema/properties/limit/type",
                    "type changed from `integer` to `string`"
                ),
                row(
                    Breaking,
                    "search",
                    "/inputSchema/properties/sort/enum",
                    "enum value \"desc\" removed"
                ),
                row(
                    Breaking,
                    "search",
                    "/inputSchema/properties/page",
                    "parameter `page` became required"
                ),
                row(
                    NonBreaking,
                    "search",
                    "/inputSchema/properties/cursor",
                    "optional parameter `cursor` added"
                ),
                row(Breaking, "gone", "", "tool removed"),
                row(NonBreaking, "added", "", "tool added"),
            ]
        );
    }

    #[test]
    fn reports_no_drift_for_the_same_catalog_and_summarises_classes() {
        let tools = json!([{"name": "a", "inputSchema": {"type": "object", "properties": {}}}]);
        let lock = Lock::from_tools(&catalog(tools.clone()));
        let report = compare(&lock, SERVERS, &catalog(tools));
        assert_eq!(report.worst(), None);
        assert_eq!(report.summary(), "no drift");
    }

    #[test]
    fn round_trips_the_lock_file_and_rejects_other_versions() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join("toolgate.lock.json");
        let lock = Lock::from_tools(&catalog(
            json!([{"name": "a", "inputSchema": {"type": "object"}}]),
        ));
        std::fs::write(&path, lock.render()).expect("writes");
        assert_eq!(Lock::load(&path).expect("reads back"), lock);
        std::fs::write(&path, r#"{"schema_version": 9, "tools": []}"#).expect("writes");
        let error = Lock::load(&path).expect_err("version 9 is unknown");
        assert_eq!(
            error.to_string(),
            format!(
                "lock file `{}` has schema_version 9; this toolgate reads 1 (run `toolgate snapshot` again)",
                path.display()
            )
        );
        std::fs::write(
            &path,
            r#"{"schema_version": 1, "tools": [{"server": "s", "nam": "a"}]}"#,
        )
        .expect("writes");
        let error = Lock::load(&path).expect_err("a misspelled field");
        assert!(
            error.to_string().starts_with(&format!(
                "failed to parse lock file `{}` at `tools[0].nam`: unknown field `nam`",
                path.display()
            )),
            "{error}"
        );
    }
}
