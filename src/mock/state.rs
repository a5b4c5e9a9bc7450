//! The state tables of one mock run: seeded from the catalog and the scenario's fixture,
//! changed only by rule effects.

use serde_json::{Map, Value};

use super::TableSpec;
use super::pattern::Pattern;
use super::template::Context;

/// Every table of one run, in catalog order.
#[derive(Debug, Clone)]
pub(super) struct State {
    tables: Vec<Table>,
}

#[derive(Debug, Clone)]
struct Table {
    name: String,
    key: String,
    id_prefix: String,
    next_id: u64,
    rows: Vec<Value>,
}

impl State {
    /// The start state: each table's rows from `seeded` (a fixture's object of collections)
    /// when it names the table, else the catalog's rows.
    ///
    /// Errors: a fixture collection that names no declared table (a typo would otherwise
    /// leave a table silently empty).
    pub(super) fn seed(specs: &[TableSpec], seeded: &Value) -> Result<State, String> {
        let fixture = seeded.as_object();
        let undeclared = fixture.and_then(|fixture| {
            fixture
                .keys()
                .find(|name| !specs.iter().any(|spec| &spec.name == *name))
        });
        if let Some(name) = undeclared {
            let declared: Vec<&str> = specs.iter().map(|spec| spec.name.as_str()).collect();
            return Err(format!(
                "the seed state has table `{name}`, which the mock catalog does not declare (declared: {})",
                if declared.is_empty() {
                    "none".to_owned()
                } else {
                    declared.join(", ")
                }
            ));
        }
        let tables = specs
            .iter()
            .map(|spec| {
                let rows: Vec<Value> = match fixture.and_then(|f| f.get(&spec.name)) {
                    Some(Value::Array(rows)) => rows.clone(),
                    _ => spec.rows.iter().cloned().map(Value::Object).collect(),
                };
                let highest = rows
                    .iter()
                    .filter_map(|row| numeric_id(&row[&spec.key], &spec.id_prefix))
                    .max()
                    .unwrap_or(0);
                Table {
                    name: spec.name.clone(),
                    key: spec.key.clone(),
                    id_prefix: spec.id_prefix.clone(),
                    next_id: spec.id_start.max(highest.saturating_add(1)),
                    rows,
                }
            })
            .collect();
        Ok(State { tables })
    }

    /// The tables as `final_state_assertions` and `{{state}}` read them: `{name: [rows]}`.
    pub(super) fn snapshot(&self) -> Value {
        Value::Object(
            self.tables
                .iter()
                .map(|table| (table.name.clone(), Value::Array(table.rows.clone())))
                .collect(),
        )
    }

    /// Positions of the rows of `table` matching every field of `filter`, in table order.
    pub(super) fn find(
        &self,
        table: usize,
        filter: &[(String, Pattern)],
        context: &Context<'_>,
    ) -> Vec<usize> {
        self.tables[table]
            .rows
            .iter()
            .enumerate()
            .filter(|(_, row)| fields_match(filter, row, context))
            .map(|(index, _)| index)
            .collect()
    }

    /// The rows at `positions` of `table`.
    pub(super) fn rows(&self, table: usize, positions: &[usize]) -> Vec<Value> {
        positions
            .iter()
            .map(|&index| self.tables[table].rows[index].clone())
            .collect()
    }

    /// Appends `row` (an object; anything else is stored under `value`), generating its key
    /// when absent; returns the stored row.
    pub(super) fn insert(&mut self, table: usize, row: Value) -> Value {
        let table = &mut self.tables[table];
        let mut row = match row {
            Value::Object(row) => row,
            other => Map::from_iter([("value".to_owned(), other)]),
        };
        if row.get(&table.key).is_none_or(Value::is_null) {
            let id = if table.id_prefix.is_empty() {
                Value::from(table.next_id)
            } else {
                Value::String(format!("{}{}", table.id_prefix, table.next_id))
            };
            table.next_id += 1;
            row.insert(table.key.clone(), id);
        }
        let row = Value::Object(row);
        table.rows.push(row.clone());
        row
    }

    /// Sets the fields of `set` (an object) on the rows at `positions`; returns them changed.
    pub(super) fn update(&mut self, table: usize, positions: &[usize], set: &Value) -> Vec<Value> {
        let table = &mut self.tables[table];
        positions
            .iter()
            .map(|&index| {
                let row = &mut table.rows[index];
                if let (Value::Object(row), Value::Object(set)) = (&mut *row, set) {
                    for (key, value) in set {
                        row.insert(key.clone(), value.clone());
                    }
                }
                row.clone()
            })
            .collect()
    }

    /// Removes the rows at `positions` (ascending); returns them.
    pub(super) fn delete(&mut self, table: usize, positions: &[usize]) -> Vec<Value> {
        let table = &mut self.tables[table];
        let mut removed = Vec::with_capacity(positions.len());
        for &index in positions.iter().rev() {
            removed.push(table.rows.remove(index));
        }
        removed.reverse();
        removed
    }
}

/// Whether `row` matches every field of `filter`.
fn fields_match(filter: &[(String, Pattern)], row: &Value, context: &Context<'_>) -> bool {
    filter.iter().all(|(key, pattern)| {
        row.get(key)
            .is_some_and(|value| pattern.matches(value, context))
    })
}

/// The number in a generated-looking key: `T-12` with prefix `T-` is 12, `12` without one.
fn numeric_id(key: &Value, prefix: &str) -> Option<u64> {
    match key {
        Value::Number(number) if prefix.is_empty() => number.as_u64(),
        Value::String(text) => text.strip_prefix(prefix)?.parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    //! Mock state: new keys continue after the seeded ones; undeclared seeded tables are refused.

    use serde_json::json;

    use super::*;

    fn spec(name: &str, prefix: &str) -> TableSpec {
        TableSpec {
            name: name.into(),
            key: "id".into(),
            id_prefix: prefix.into(),
            id_start: 1,
            rows: vec![json!({"id": "T-1"}).as_object().cloned().expect("object")],
        }
    }

    #[test]
    fn generated_keys_continue_after_the_seeded_ones() {
        let seeded = json!({"tickets": [{"id": "T-7"}, {"id": "T-3"}]});
        let mut state = State::seed(&[spec("tickets", "T-"), spec("notes", "")], &seeded)
            .expect("declared tables");
        let row = state.insert(0, json!({"subject": "x"}));
        assert_eq!(row, json!({"subject": "x", "id": "T-8"}));
        let note = state.insert(1, json!({"text": "n"}));
        assert_eq!(note, json!({"text": "n", "id": 1}));
        assert_eq!(
            state.snapshot(),
            json!({"tickets": [{"id": "T-7"}, {"id": "T-3"}, {"subject": "x", "id": "T-8"}],
                   "notes": [{"id": "T-1"}, {"text": "n", "id": 1}]})
        );
    }

    #[test]
    fn a_seeded_table_the_catalog_does_not_declare_is_refused() {
        let error =
            State::seed(&[spec("tickets", "T-")], &json!({"tikets": []})).expect_err("a typo");
        assert_eq!(
            error,
            "the seed state has table `tikets`, which the mock catalog does not declare (declared: tickets)"
        );
    }
}
