//! What a run changed in the world: the difference between the seeded state and the state
//! after the run, one line per change, for reports (the final-state assertions judge it; this
//! shows it).
//!
//! A top-level collection that is an array of records with an `id` is compared record by
//! record: a record added or removed is one line, a changed record one line per changed
//! field. Anything else is compared by JSON path.

use serde_json::Value;

/// Most changes listed; the last line then says how many more there are.
pub const MAX_CHANGES: usize = 50;

/// Most characters of one value shown in a change line.
const MAX_VALUE_CHARS: usize = 120;

/// The changes from `before` to `after`, in collection and record order, at most
/// [`MAX_CHANGES`] lines then `... and N more changes`; empty when nothing changed. Lines look
/// like `contacts C-005: email "a@x" -> "b@x"`, `activities + A-006 {...}`,
/// `contacts - C-009`, `settings.mode: "a" -> "b"`.
pub fn state_diff(before: &Value, after: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    diff_value("", before, after, &mut lines);
    if lines.len() > MAX_CHANGES {
        let more = lines.len() - MAX_CHANGES;
        lines.truncate(MAX_CHANGES);
        lines.push(format!("... and {more} more changes"));
    }
    lines
}

/// A value as compact JSON, cut to [`MAX_VALUE_CHARS`] characters.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(MAX_VALUE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn diff_value(path: &str, before: &Value, after: &Value, lines: &mut Vec<String>) {
    if before == after {
        return;
    }
    match (before, after) {
        (Value::Object(old), Value::Object(new)) => {
            for (key, value) in old {
                match new.get(key) {
                    Some(now) => diff_value(&join(path, key), value, now, lines),
                    None => lines.push(format!(
                        "{}: removed (was {})",
                        join(path, key),
                        shown(value)
                    )),
                }
            }
            for (key, value) in new {
                if !old.contains_key(key) {
                    lines.push(format!("{}: added {}", join(path, key), shown(value)));
                }
            }
        }
        (Value::Array(old), Value::Array(new)) if keyed(old) && keyed(new) => {
            diff_records(path, old, new, lines);
        }
        _ => lines.push(format!("{path}: {} -> {}", shown(before), shown(after))),
    }
}

/// Whether every element is an object with a string or number `id`.
fn keyed(items: &[Value]) -> bool {
    items.iter().all(|item| id_of(item).is_some())
}

fn id_of(item: &Value) -> Option<String> {
    match item.get("id")? {
        Value::String(id) => Some(id.clone()),
        Value::Number(id) => Some(id.to_string()),
        _ => None,
    }
}

/// Records compared by id: each id is looked up once (a map per side), so a table of
/// thousands of records costs a pass over each side, not a pass per record.
fn diff_records(path: &str, old: &[Value], new: &[Value], lines: &mut Vec<String>) {
    let label = if path.is_empty() { "records" } else { path };
    let by_id = |items: &[Value]| -> std::collections::HashMap<String, usize> {
        items
            .iter()
            .enumerate()
            .filter_map(|(index, item)| Some((id_of(item)?, index)))
            .collect()
    };
    let (old_ids, new_ids) = (by_id(old), by_id(new));
    for record in old {
        let id = id_of(record).unwrap_or_default();
        match new_ids.get(&id).map(|&index| &new[index]) {
            None => lines.push(format!("{label} - {id}")),
            Some(now) if now != record => {
                if let (Value::Object(before), Value::Object(after)) = (record, now) {
                    lines.push(format!("{label} {id}: {}", field_changes(before, after)));
                }
            }
            Some(_) => {}
        }
    }
    for record in new {
        let id = id_of(record).unwrap_or_default();
        if !old_ids.contains_key(&id) {
            lines.push(format!("{label} + {id} {}", shown(record)));
        }
    }
}

/// The fields that differ between two versions of a record, comma-separated.
fn field_changes(
    before: &serde_json::Map<String, Value>,
    after: &serde_json::Map<String, Value>,
) -> String {
    let mut fields = Vec::new();
    for (key, value) in before {
        match after.get(key) {
            Some(changed) if changed != value => {
                fields.push(format!("{key} {} -> {}", shown(value), shown(changed)));
            }
            Some(_) => {}
            None => fields.push(format!("{key} removed")),
        }
    }
    for (key, value) in after {
        if !before.contains_key(key) {
            fields.push(format!("{key} added {}", shown(value)));
        }
    }
    fields.join(", ")
}

#[cfg(test)]
mod tests {
    //! Record-by-record changes, path changes, and the cap.
    use serde_json::json;

    use super::*;

    #[test]
    fn records_are_compared_by_id_and_other_values_by_path() {
        let before = json!({
            "contacts": [{"id": "C-1", "email": "a@x"}, {"id": "C-2", "email": "b@x"}],
            "activities": [],
            "settings": {"mode": "a", "limit": 3}
        });
        let after = json!({
            "contacts": [{"id": "C-1", "email": "c@x", "title": "CTO"}],
            "activities": [{"id": "A-1", "contact_id": "C-1"}],
            "settings": {"mode": "b", "limit": 3}
        });
        assert_eq!(
            state_diff(&before, &after),
            [
                "contacts C-1: email \"a@x\" -> \"c@x\", title added \"CTO\"",
                "contacts - C-2",
                "activities + A-1 {\"id\":\"A-1\",\"contact_id\":\"C-1\"}",
                "settings.mode: \"a\" -> \"b\"",
            ]
        );
        assert!(state_diff(&before, &before).is_empty());
    }

    #[test]
    fn many_changes_are_capped_with_a_count() {
        let before = json!({"items": []});
        let items: Vec<Value> = (0..60).map(|i| json!({"id": i})).collect();
        let lines = state_diff(&before, &json!({ "items": items }));
        assert_eq!(lines.len(), MAX_CHANGES + 1);
        assert_eq!(lines[0], "items + 0 {\"id\":0}");
        assert_eq!(lines[MAX_CHANGES], "... and 10 more changes");
    }
}
