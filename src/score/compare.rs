//! Per-argument comparators, opt-in per expected call (`args_compare`). The default compares
//! by meaning (`crate::values::matches`: numbers by value, instants as instants, arrays in
//! any order); every other comparator changes that and is named in the check's detail.

use serde_json::Value;

use crate::json::short;
use crate::scenario::Comparator;
use crate::values::matches;

/// Compares `actual` with `expected` under `comparator`; `Err` says what differs, naming
/// the comparator when it is not exact.
pub fn compare(
    comparator: Comparator,
    expected: &Value,
    actual: &Value,
    at: &str,
) -> Result<(), String> {
    let transform: fn(&str) -> Option<String> = match comparator {
        Comparator::Exact => return matches(expected, actual, at, false),
        Comparator::Ordered => return matches(expected, actual, at, true),
        Comparator::EvaluatesTo => return evaluates_to(expected, actual, at),
        Comparator::Normalized => |text| Some(normalize(text)),
        Comparator::TimeOfDay => |text| time_of_day(text).map(|seconds| seconds.to_string()),
        Comparator::Date => |text| date(text).map(|(y, m, d)| format!("{y:04}-{m:02}-{d:02}")),
    };
    let (Some(e), Some(a)) = (expected.as_str(), actual.as_str()) else {
        return matches(expected, actual, at, false);
    };
    match (transform(e), transform(a)) {
        (Some(x), Some(y)) if x == y => Ok(()),
        _ => Err(format!(
            "`{at}`: expected {}, got {} (compared as {})",
            short(expected),
            short(actual),
            comparator.as_str()
        )),
    }
}

/// Whether the arithmetic expression `actual` evaluates to the number `expected`, within half
/// a cent.
fn evaluates_to(expected: &Value, actual: &Value, at: &str) -> Result<(), String> {
    let wanted = expected.as_f64();
    let value = actual.as_str().map(crate::arith::evaluate);
    match (wanted, value) {
        (Some(wanted), Some(Ok(value))) if (value - wanted).abs() <= 0.005 => Ok(()),
        (Some(wanted), Some(Ok(value))) => Err(format!(
            "`{at}`: {} evaluates to {value}, expected {wanted} (compared as evaluates_to)",
            short(actual)
        )),
        (_, Some(Err(error))) => Err(format!(
            "`{at}`: {} is not arithmetic: {error} (compared as evaluates_to)",
            short(actual)
        )),
        _ => matches(expected, actual, at, false),
    }
}

/// BFCL's string standardisation (`standardize_string` in its AST checker): lowercase, then
/// delete spaces and `, . / - _ * ^`. It also makes different strings equal (`"-5"` and
/// `"5"`), which is why it is opt-in.
pub fn normalize(text: &str) -> String {
    text.to_lowercase()
        .chars()
        .filter(|c| !matches!(c, ' ' | ',' | '.' | '/' | '-' | '_' | '*' | '^'))
        .collect()
}

/// Seconds since midnight for "8:00 AM", "08:00", "20:00:30", "8pm", "8:00pm".
pub fn time_of_day(text: &str) -> Option<u32> {
    let lower = text.trim().to_lowercase();
    let (clock, meridiem) = if let Some(rest) = lower.strip_suffix("am") {
        (rest.trim(), Some(false))
    } else if let Some(rest) = lower.strip_suffix("pm") {
        (rest.trim(), Some(true))
    } else {
        (lower.as_str(), None)
    };
    let mut parts = clock.split(':');
    let hour: u32 = parts.next()?.trim().parse().ok()?;
    let minute: u32 = parts.next().map_or(Some(0), |m| m.parse().ok())?;
    let second: u32 = parts.next().map_or(Some(0), |s| s.parse().ok())?;
    if parts.next().is_some() || minute > 59 || second > 59 {
        return None;
    }
    let hour = match meridiem {
        None if hour <= 23 => hour,
        Some(pm) if (1..=12).contains(&hour) => hour % 12 + if pm { 12 } else { 0 },
        _ => return None,
    };
    Some(hour * 3600 + minute * 60 + second)
}

/// (year, month, day) for "2024-01-02", "2024/01/02" or "20240102" (a time after the date is
/// ignored).
pub fn date(text: &str) -> Option<(u32, u32, u32)> {
    let text = text.trim();
    let digits: String = text
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-' || *c == '/')
        .filter(char::is_ascii_digit)
        .collect();
    if digits.len() != 8 {
        return None;
    }
    let y = digits[..4].parse().ok()?;
    let m = digits[4..6].parse().ok()?;
    let d = digits[6..].parse().ok()?;
    ((1..=12).contains(&m) && (1..=31).contains(&d)).then_some((y, m, d))
}

#[cfg(test)]
mod tests {
    //! Comparators: exact by default; normalized, date, time-of-day, `evaluates_to` as named.

    use super::*;
    use serde_json::json;

    /// Field case B03 (gorilla#1355, #309): exact by default; BFCL normalisation opt-in, with
    /// its dropped sign; a time-of-day comparator for the leading zero.
    #[test]
    fn b03_string_comparators() {
        let cases = [
            (json!("08:00 AM"), json!("8:00 AM")),
            (json!("2024-01-02"), json!("20240102")),
            (json!("-5"), json!("5")),
        ];
        let verdicts = |comparator| -> Vec<bool> {
            cases
                .iter()
                .map(|(e, a)| compare(comparator, e, a, "/x").is_ok())
                .collect()
        };
        assert_eq!(verdicts(Comparator::Exact), [false, false, false]);
        assert_eq!(verdicts(Comparator::Normalized), [false, true, true]);
        assert!(verdicts(Comparator::TimeOfDay)[0]);
        assert!(verdicts(Comparator::Date)[1]);
        assert_eq!(
            compare(
                Comparator::EvaluatesTo,
                &json!(9700),
                &json!("2500 + 0.15 * 48000"),
                "/expression"
            ),
            Ok(())
        );
        assert_eq!(
            compare(
                Comparator::EvaluatesTo,
                &json!(9700),
                &json!("48000 * 1.5"),
                "/expression"
            ),
            Err("`/expression`: \"48000 * 1.5\" evaluates to 72000, expected 9700 (compared as evaluates_to)".to_owned())
        );
        assert_eq!(
            compare(Comparator::Normalized, &cases[0].0, &cases[0].1, "/time"),
            Err(
                "`/time`: expected \"08:00 AM\", got \"8:00 AM\" (compared as normalized)"
                    .to_string()
            )
        );
    }

    #[test]
    fn times_parse_in_twelve_and_twenty_four_hour_forms() {
        assert_eq!(time_of_day("8:00 AM"), Some(8 * 3600));
        assert_eq!(time_of_day("12:30am"), Some(30 * 60));
        assert_eq!(time_of_day("8pm"), Some(20 * 3600));
        assert_eq!(time_of_day("20:00:30"), Some(20 * 3600 + 30));
        assert_eq!(time_of_day("25:00"), None);
        assert_eq!(time_of_day("13 PM"), None);
    }
}
