//! How scenario checks compare an argument (or a result) with the value they expect: by what
//! the value means, not how it is spelled. Numbers compare by value (`5000` is `5000.0`),
//! RFC 3339 instants as instants (`...T09:00:00+00:00` is `...T09:00:00Z`), objects partially
//! (each expected key present and matching), and arrays as collections of items in any order
//! unless the check asks for order.

use serde_json::Value;

use crate::json::short;

/// Whether `actual` holds what `expected` asks; `ordered` makes arrays (at any depth) keep
/// their order. `Err` names the first difference with its JSON Pointer under `at`.
pub(crate) fn matches(
    expected: &Value,
    actual: &Value,
    at: &str,
    ordered: bool,
) -> Result<(), String> {
    match (expected, actual) {
        (Value::Number(_), Value::Number(_)) => crate::json::match_value(expected, actual, at),
        (Value::String(e), Value::String(a)) => {
            if e == a || same_instant(e, a) {
                Ok(())
            } else {
                Err(mismatch(expected, actual, at))
            }
        }
        (Value::Object(e), Value::Object(a)) => {
            for (key, expected_value) in e {
                let path = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                match a.get(key) {
                    Some(actual_value) => matches(expected_value, actual_value, &path, ordered)?,
                    None => {
                        return Err(format!(
                            "`{path}`: missing, expected {}",
                            short(expected_value)
                        ));
                    }
                }
            }
            Ok(())
        }
        (Value::Array(e), Value::Array(a)) => {
            if e.len() != a.len() {
                return Err(format!(
                    "`{}`: expected {} items, got {}",
                    display(at),
                    e.len(),
                    a.len()
                ));
            }
            if ordered {
                for (index, (x, y)) in e.iter().zip(a).enumerate() {
                    matches(x, y, &format!("{at}/{index}"), ordered)?;
                }
                return Ok(());
            }
            if assign(e, a, ordered).is_some() {
                Ok(())
            } else {
                Err(format!(
                    "`{}`: expected {} (in any order), got {}",
                    display(at),
                    short(expected),
                    short(actual)
                ))
            }
        }
        _ if expected == actual => Ok(()),
        _ => Err(mismatch(expected, actual, at)),
    }
}

/// Whether the array `actual` contains every item of `items` (each matched partially, to a
/// different element, in any order); `Err` says which item is missing.
pub(crate) fn contains(items: &[Value], actual: &Value, at: &str) -> Result<(), String> {
    let Some(elements) = actual.as_array() else {
        return Err(format!(
            "`{}`: expected a list containing {}, got {}",
            display(at),
            short(&Value::Array(items.to_vec())),
            short(actual)
        ));
    };
    if assign(items, elements, false).is_some() {
        return Ok(());
    }
    let missing = items
        .iter()
        .find(|item| !elements.iter().any(|e| matches(item, e, "", false).is_ok()))
        .unwrap_or(&items[0]);
    Err(format!(
        "`{}`: {} does not contain {}",
        display(at),
        short(actual),
        short(missing)
    ))
}

/// Whether `wanted` occurs at some depth of `haystack`: a scalar equal to it (as
/// `matches` compares), or an object or array it `matches` partially.
pub(crate) fn occurs_in(wanted: &Value, haystack: &Value) -> bool {
    if matches(wanted, haystack, "", false).is_ok() {
        return true;
    }
    match haystack {
        Value::Array(items) => items.iter().any(|item| occurs_in(wanted, item)),
        Value::Object(fields) => fields.values().any(|field| occurs_in(wanted, field)),
        _ => false,
    }
}

/// A one-to-one assignment of `expected` items to `actual` items that all match, found by
/// backtracking (arrays in arguments are short); `None` when there is none.
fn assign(expected: &[Value], actual: &[Value], ordered: bool) -> Option<Vec<usize>> {
    fn search(
        i: usize,
        expected: &[Value],
        actual: &[Value],
        ordered: bool,
        used: &mut Vec<bool>,
        chosen: &mut Vec<usize>,
    ) -> bool {
        if i == expected.len() {
            return true;
        }
        for j in 0..actual.len() {
            if used[j] || matches(&expected[i], &actual[j], "", ordered).is_err() {
                continue;
            }
            used[j] = true;
            chosen.push(j);
            if search(i + 1, expected, actual, ordered, used, chosen) {
                return true;
            }
            chosen.pop();
            used[j] = false;
        }
        false
    }
    let mut used = vec![false; actual.len()];
    let mut chosen = Vec::with_capacity(expected.len());
    search(0, expected, actual, ordered, &mut used, &mut chosen).then_some(chosen)
}

fn same_instant(a: &str, b: &str) -> bool {
    match (
        crate::calendar::parse_instant(a),
        crate::calendar::parse_instant(b),
    ) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

fn display(at: &str) -> &str {
    if at.is_empty() { "/" } else { at }
}

fn mismatch(expected: &Value, actual: &Value, at: &str) -> String {
    format!(
        "`{}`: expected {}, got {}",
        display(at),
        short(expected),
        short(actual)
    )
}

#[cfg(test)]
mod tests {
    //! Matching by meaning: arrays in any order unless ordered, partial objects, instants as such.

    use super::*;
    use serde_json::json;

    #[test]
    fn arrays_match_in_any_order_unless_ordered() {
        let expected = json!(["SKU-100", "SKU-200"]);
        let swapped = json!(["SKU-200", "SKU-100"]);
        assert_eq!(matches(&expected, &swapped, "/skus", false), Ok(()));
        assert_eq!(
            matches(&expected, &swapped, "/skus", true),
            Err("`/skus/0`: expected \"SKU-100\", got \"SKU-200\"".to_owned())
        );
        assert_eq!(
            matches(&expected, &json!(["SKU-100", "SKU-100"]), "/skus", false),
            Err("`/skus`: expected [\"SKU-100\",\"SKU-200\"] (in any order), got [\"SKU-100\",\"SKU-100\"]".to_owned())
        );
        assert!(matches(&expected, &json!(["SKU-100"]), "/skus", false).is_err());
    }

    #[test]
    fn objects_in_arrays_match_partially_and_in_any_order() {
        let expected = json!([{"sku": "SKU-400", "quantity": 10}, {"sku": "SKU-100"}]);
        let actual =
            json!([{"sku": "SKU-100", "quantity": 1}, {"sku": "SKU-400", "quantity": 10.0}]);
        assert_eq!(matches(&expected, &actual, "/lines", false), Ok(()));
    }

    #[test]
    fn instants_compare_as_instants_and_other_strings_exactly() {
        assert_eq!(
            matches(
                &json!("2026-01-16T09:00:00Z"),
                &json!("2026-01-16T10:00:00+01:00"),
                "/start",
                false
            ),
            Ok(())
        );
        assert!(matches(&json!("Acme"), &json!("acme"), "/q", false).is_err());
    }

    #[test]
    fn containment_and_occurrence() {
        assert_eq!(
            contains(&[json!(".env")], &json!(["a.txt", ".env"]), "/files"),
            Ok(())
        );
        assert_eq!(
            contains(&[json!(".env")], &json!(["a.txt"]), "/files"),
            Err("`/files`: [\"a.txt\"] does not contain \".env\"".to_owned())
        );
        let result = json!({"contacts": [{"id": "C-004", "name": "Lena Vogel"}], "count": 1});
        assert!(occurs_in(&json!({"id": "C-004"}), &result));
        assert!(occurs_in(&json!("C-004"), &result));
        assert!(!occurs_in(&json!({"id": "C-005"}), &result));
    }
}
