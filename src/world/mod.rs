//! Seeded mock state and the behaviour of the mock tools.
//!
//! The state is a JSON object of collections (`contacts`, `activities`, `deals`, `orders`,
//! `inventory`, `users`, `tickets`, `calendar_events`, ...), each an array of records with
//! string ids. It is loaded from a fixture file, is fresh for every run, and changes only
//! through tool calls, deterministically: new ids continue the highest existing number, and
//! the clock is frozen at [`FROZEN_NOW`].
//!
//! One file per tool category gives the `<prefix>_*` tools their behaviour: `crm.rs`,
//! `erp.rs`, `comm.rs`, `data.rs` (with the SQL subset in `sql.rs`), `admin.rs` and `util.rs`;
//! [`dates`] holds the calendar arithmetic they share.

mod admin;
mod comm;
mod crm;
mod data;
pub(crate) mod dates;
mod erp;
mod sql;
mod util;

use serde_json::{Map, Value};

/// The mock world's current time (RFC 3339, UTC); date tools and default timestamps use it.
pub(crate) const FROZEN_NOW: &str = "2026-01-15T10:00:00Z";

/// The mutable mock state of one run.
#[derive(Debug, Clone)]
pub(crate) struct World {
    state: Map<String, Value>,
}

impl World {
    /// A world seeded with `state` (a fixture as [`crate::scenario::load_fixture`] returns it).
    pub(crate) fn new(state: &Value) -> World {
        World {
            state: state.as_object().cloned().unwrap_or_default(),
        }
    }

    /// The current state as one JSON object.
    pub(crate) fn snapshot(&self) -> Value {
        Value::Object(self.state.clone())
    }

    /// Runs tool `tool` on the state. `Ok` is the structured result; `Err` is a tool error
    /// message the agent can act on (unknown id, invalid combination). Arguments have already
    /// been validated against the tool's schema.
    pub(crate) fn call(&mut self, tool: &str, args: &Map<String, Value>) -> Result<Value, String> {
        match tool.split_once('_').map(|(prefix, _)| prefix) {
            Some("crm") => crm::call(self, tool, args),
            Some("erp") => erp::call(self, tool, args),
            Some("comm") => comm::call(self, tool, args),
            Some("data") => data::call(self, tool, args),
            Some("admin") => admin::call(self, tool, args),
            Some("util") => util::call(self, tool, args),
            _ => Err(format!("tool `{tool}` has no behaviour in this world")),
        }
    }

    fn collection(&self, name: &str) -> &[Value] {
        self.state
            .get(name)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    fn collection_mut(&mut self, name: &str) -> &mut Vec<Value> {
        let entry = self
            .state
            .entry(name)
            .or_insert_with(|| Value::Array(Vec::new()));
        if !entry.is_array() {
            *entry = Value::Array(Vec::new());
        }
        entry.as_array_mut().expect("just made an array")
    }

    fn find(&self, collection: &str, id: &str) -> Option<&Value> {
        self.collection(collection)
            .iter()
            .find(|record| record["id"] == id)
    }

    fn find_mut(&mut self, collection: &str, id: &str) -> Option<&mut Value> {
        self.collection_mut(collection)
            .iter_mut()
            .find(|record| record["id"] == id)
    }

    /// The next id for `collection` with `prefix` (e.g. `C-`): one past the highest number in
    /// use, zero-padded to three digits.
    fn next_id(&self, collection: &str, prefix: &str) -> String {
        let highest = self
            .collection(collection)
            .iter()
            .filter_map(|record| {
                record["id"]
                    .as_str()?
                    .strip_prefix(prefix)?
                    .parse::<u64>()
                    .ok()
            })
            .max()
            .unwrap_or(0);
        format!("{prefix}{:03}", highest + 1)
    }

    /// Appends an entry to the `audit_log` collection, performed by the assistant.
    fn audit(&mut self, action: &str, target: &str, detail: String) {
        let id = self.next_id("audit_log", "L-");
        self.collection_mut("audit_log").push(serde_json::json!({
            "id": id,
            "actor_id": "assistant",
            "action": action,
            "target": target,
            "detail": detail,
            "at": FROZEN_NOW,
        }));
    }
}

/// A number argument, or `None` when absent.
fn number(args: &Map<String, Value>, name: &str) -> Option<f64> {
    args.get(name).and_then(Value::as_f64)
}

/// An integer argument, or `None` when absent or not a whole number. An integer-valued
/// float (`3.0`) is the integer 3, as the input schema's `"type": "integer"` accepted it.
fn integer(args: &Map<String, Value>, name: &str) -> Option<i64> {
    args.get(name).and_then(crate::json::as_integer)
}

/// A whole-number field of a record or argument object (`line["quantity"]`), read as
/// [`integer`] reads arguments; `default` when absent or not a whole number.
fn whole(value: &Value, default: i64) -> i64 {
    crate::json::as_integer(value).unwrap_or(default)
}

/// A boolean argument, or `default` when absent.
fn flag(args: &Map<String, Value>, name: &str, default: bool) -> bool {
    args.get(name).and_then(Value::as_bool).unwrap_or(default)
}

/// Rounds to cents.
fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// A string argument, or `None` when absent.
fn text<'a>(args: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str)
}

/// Case-insensitive substring test.
fn contains_ci(haystack: &Value, needle: &str) -> bool {
    haystack
        .as_str()
        .is_some_and(|h| h.to_lowercase().contains(&needle.to_lowercase()))
}

#[cfg(test)]
mod tests {
    //! The world: new ids continue the highest number, and every tool reads `3.0` as 3.

    use super::*;
    use serde_json::json;

    #[test]
    fn next_id_continues_the_highest_number() {
        let world = World::new(&json!({"contacts": [{"id": "C-002"}, {"id": "C-010"}]}));
        assert_eq!(world.next_id("contacts", "C-"), "C-011");
        assert_eq!(world.next_id("activities", "A-"), "A-001");
    }

    /// The schema accepts `limit: 3.0` as an integer, so the tools must too (a
    /// search with `limit: 3.0` returned all 5 records, `days: 3.0` was "needs `days`").
    #[test]
    fn integer_valued_floats_are_integers_in_every_tool() {
        let contacts: Vec<Value> = (1..=5)
            .map(|n| serde_json::json!({"id": format!("C-00{n}"), "name": format!("Jo {n}")}))
            .collect();
        let mut world = World::new(&serde_json::json!({"contacts": contacts}));
        let args = |value: Value| value.as_object().cloned().expect("object");
        let found = world
            .call(
                "crm_search_contacts",
                &args(serde_json::json!({"query": "jo", "limit": 3.0})),
            )
            .expect("search");
        assert_eq!(found["contacts"].as_array().map(Vec::len), Some(3));
        assert_eq!(found["total"], 5);
        let date = world
            .call(
                "util_date_calc",
                &args(
                    serde_json::json!({"operation": "add_days", "date": "2026-01-15", "days": 3.0}),
                ),
            )
            .expect("date");
        assert_eq!(date["date"], "2026-01-18");
        assert_eq!(
            world.call(
                "util_date_calc",
                &args(
                    serde_json::json!({"operation": "add_days", "date": "2026-01-15", "days": 3.5})
                ),
            ),
            Err("this operation needs `days`".to_string())
        );
    }
}
