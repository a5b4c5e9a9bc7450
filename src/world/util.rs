//! Behaviour of the `util_*` tools: arithmetic, statistics, the frozen clock, date
//! arithmetic, currency and format conversion, validation. None of them touch the state.

use serde_json::{Map, Value, json};

use super::{FROZEN_NOW, World, dates, integer, number, round2, text};

/// Units of each currency per US dollar: fixed reference rates for the frozen date.
const RATES_PER_USD: [(&str, f64); 5] = [
    ("USD", 1.0),
    ("EUR", 0.92),
    ("GBP", 0.79),
    ("JPY", 148.5),
    ("CHF", 0.88),
];

/// UTC offsets in hours on the frozen date (January: no daylight saving anywhere listed).
const ZONES: [(&str, i64); 7] = [
    ("UTC", 0),
    ("Europe/London", 0),
    ("Europe/Berlin", 1),
    ("Europe/Madrid", 1),
    ("America/New_York", -5),
    ("America/Chicago", -6),
    ("Asia/Tokyo", 9),
];

pub(super) fn call(
    _world: &mut World,
    tool: &str,
    args: &Map<String, Value>,
) -> Result<Value, String> {
    match tool {
        "util_calculate" => calculate(args),
        "util_statistics" => statistics(args),
        "util_current_time" => Ok(current_time(args)),
        "util_date_calc" => date_calc(args),
        "util_convert_currency" => convert_currency(args),
        "util_convert_format" => convert_format(args),
        "util_validate" => Ok(validate(args)),
        _ => Err(format!("tool `{tool}` has no behaviour in this world")),
    }
}

fn calculate(args: &Map<String, Value>) -> Result<Value, String> {
    let expression = text(args, "expression").unwrap_or_default();
    let value = crate::arith::evaluate(expression)?;
    let scale = 10f64.powi(integer(args, "decimals").unwrap_or(2) as i32);
    Ok(json!({"expression": expression, "result": (value * scale).round() / scale}))
}

fn statistics(args: &Map<String, Value>) -> Result<Value, String> {
    let mut values: Vec<f64> = args
        .get("values")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_f64)
        .collect();
    if values.is_empty() {
        return Err("`values` must hold at least one number".into());
    }
    values.sort_by(f64::total_cmp);
    let n = values.len() as f64;
    let sum: f64 = values.iter().sum();
    let mean = sum / n;
    let middle = values.len() / 2;
    let median = if values.len().is_multiple_of(2) {
        (values[middle - 1] + values[middle]) / 2.0
    } else {
        values[middle]
    };
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    Ok(json!({
        "count": values.len(), "sum": round2(sum), "mean": round2(mean), "median": round2(median),
        "min": values[0], "max": values[values.len() - 1], "stdev": round2(variance.sqrt()),
    }))
}

fn current_time(args: &Map<String, Value>) -> Value {
    let zone = text(args, "timezone").unwrap_or("UTC");
    let offset = ZONES
        .iter()
        .find(|(name, _)| *name == zone)
        .map_or(0, |(_, hours)| *hours);
    let utc = dates::parse_timestamp(FROZEN_NOW).expect("FROZEN_NOW is a valid timestamp");
    let local = utc + offset * 3600;
    let day = local.div_euclid(86_400);
    let seconds = local.rem_euclid(86_400);
    let time = format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds % 3600 / 60,
        seconds % 60
    );
    let suffix = if offset == 0 {
        "Z".to_string()
    } else {
        format!(
            "{}{:02}:00",
            if offset < 0 { '-' } else { '+' },
            offset.abs()
        )
    };
    json!({
        "timezone": zone,
        "date": dates::format_date(day),
        "time": time,
        "datetime": format!("{}T{time}{suffix}", dates::format_date(day)),
        "weekday": dates::weekday(day),
        "quarter": dates::quarter(day),
    })
}

fn date_calc(args: &Map<String, Value>) -> Result<Value, String> {
    let parse = |name: &str| -> Result<i64, String> {
        let value = text(args, name).ok_or_else(|| format!("this operation needs `{name}`"))?;
        dates::parse_date(value)
            .ok_or_else(|| format!("`{name}` `{value}` is not a calendar date (YYYY-MM-DD)"))
    };
    let date = parse("date")?;
    let days = || integer(args, "days").ok_or_else(|| "this operation needs `days`".to_string());
    let result = match text(args, "operation").unwrap_or_default() {
        "add_days" => date + days()?,
        "add_business_days" => {
            let (mut day, mut left) = (date, days()?);
            let step = left.signum();
            while left != 0 {
                day += step;
                if !dates::is_weekend(day) {
                    left -= step;
                }
            }
            day
        }
        "days_between" => {
            let other = parse("other_date")?;
            return Ok(
                json!({"date": dates::format_date(date), "other_date": dates::format_date(other), "days": other - date}),
            );
        }
        _ => date,
    };
    Ok(
        json!({"date": dates::format_date(result), "weekday": dates::weekday(result), "quarter": dates::quarter(result)}),
    )
}

fn convert_currency(args: &Map<String, Value>) -> Result<Value, String> {
    let rate = |code: &str| {
        RATES_PER_USD
            .iter()
            .find(|(c, _)| *c == code)
            .map(|(_, r)| *r)
    };
    let (from, to) = (
        text(args, "from").unwrap_or_default(),
        text(args, "to").unwrap_or_default(),
    );
    let (Some(from_rate), Some(to_rate)) = (rate(from), rate(to)) else {
        return Err(format!("unsupported currency pair `{from}`/`{to}`"));
    };
    let amount = number(args, "amount").unwrap_or(0.0);
    let rate = to_rate / from_rate;
    Ok(
        json!({"amount": amount, "from": from, "to": to, "rate": (rate * 1e6).round() / 1e6, "converted": round2(amount * rate)}),
    )
}

fn parse_csv_line(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                cells.last_mut().expect("never empty").push('"');
            }
            '"' => quoted = !quoted,
            ',' if !quoted => cells.push(String::new()),
            other => cells.last_mut().expect("never empty").push(other),
        }
    }
    cells
}

fn cell_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn convert_format(args: &Map<String, Value>) -> Result<Value, String> {
    let content = text(args, "content").unwrap_or_default();
    let records: Vec<Map<String, Value>> = if text(args, "from") == Some("json") {
        let parsed: Value = serde_json::from_str(content)
            .map_err(|e| format!("`content` is not valid JSON: {e}"))?;
        parsed
            .as_array()
            .and_then(|items| {
                items
                    .iter()
                    .map(|i| i.as_object().cloned())
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or("JSON content must be an array of objects")?
    } else {
        let mut lines = content.lines().filter(|l| !l.trim().is_empty());
        let header = parse_csv_line(lines.next().ok_or("CSV content has no header line")?);
        lines
            .enumerate()
            .map(|(index, line)| {
                let cells = parse_csv_line(line);
                if cells.len() != header.len() {
                    return Err(format!(
                        "CSV line {} has {} cells, the header has {}",
                        index + 2,
                        cells.len(),
                        header.len()
                    ));
                }
                Ok(header
                    .iter()
                    .cloned()
                    .zip(cells.into_iter().map(Value::String))
                    .collect())
            })
            .collect::<Result<_, String>>()?
    };
    let mut columns: Vec<String> = Vec::new();
    for key in records.iter().flat_map(Map::keys) {
        if !columns.contains(key) {
            columns.push(key.clone());
        }
    }
    let row = |r: &Map<String, Value>| -> Vec<String> {
        columns
            .iter()
            .map(|c| cell_text(r.get(c).unwrap_or(&Value::Null)))
            .collect()
    };
    let output = match text(args, "to").unwrap_or_default() {
        "json" => Value::Array(records.iter().cloned().map(Value::Object).collect()).to_string(),
        "markdown" => {
            let mut lines = vec![
                format!("| {} |", columns.join(" | ")),
                format!("|{}|", vec!["---"; columns.len()].join("|")),
            ];
            lines.extend(
                records
                    .iter()
                    .map(|r| format!("| {} |", row(r).join(" | "))),
            );
            lines.join("\n")
        }
        _ => {
            let quote = |cell: String| {
                if cell.contains([',', '"']) {
                    format!("\"{}\"", cell.replace('"', "\"\""))
                } else {
                    cell
                }
            };
            let mut lines = vec![columns.join(",")];
            lines.extend(
                records
                    .iter()
                    .map(|r| row(r).into_iter().map(quote).collect::<Vec<_>>().join(",")),
            );
            lines.join("\n")
        }
    };
    Ok(json!({"content": output, "records": records.len()}))
}

fn iban_checksum_holds(iban: &str) -> bool {
    let rearranged = format!("{}{}", &iban[4..], &iban[..4]);
    let mut remainder: u32 = 0;
    for c in rearranged.chars() {
        let digits = match c.to_digit(36) {
            Some(d) => d,
            None => return false,
        };
        let width = if digits >= 10 { 100 } else { 10 };
        remainder = (remainder * width + digits) % 97;
    }
    remainder == 1
}

fn validate(args: &Map<String, Value>) -> Value {
    let value = text(args, "value").unwrap_or_default();
    let kind = text(args, "kind").unwrap_or_default();
    let problem: Option<String> = match kind {
        "email" => match value.split_once('@') {
            _ if value.contains(char::is_whitespace) => Some("contains whitespace".into()),
            Some((local, domain))
                if !local.is_empty()
                    && domain.contains('.')
                    && !domain.contains('@')
                    && !domain.starts_with('.')
                    && !domain.ends_with('.') =>
            {
                None
            }
            _ => Some("must look like name@domain.tld".into()),
        },
        "phone" => {
            let digits = value.strip_prefix('+').unwrap_or("");
            let ok = digits.len() >= 7
                && digits.len() <= 15
                && digits.chars().all(|c| c.is_ascii_digit())
                && !digits.starts_with('0');
            (!ok)
                .then(|| "must be E.164: + then 7 to 15 digits, no spaces, e.g. +4930123456".into())
        }
        "iban" => {
            let compact: String = value
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect::<String>()
                .to_uppercase();
            let shaped = (15..=34).contains(&compact.len())
                && compact[..2].chars().all(|c| c.is_ascii_uppercase())
                && compact[2..4].chars().all(|c| c.is_ascii_digit())
                && compact.chars().all(|c| c.is_ascii_alphanumeric());
            if !shaped {
                Some(
                    "must be a country code, two check digits and up to 30 letters or digits"
                        .into(),
                )
            } else if !iban_checksum_holds(&compact) {
                Some("the check digits do not match (mod 97)".into())
            } else {
                None
            }
        }
        "url" => {
            let rest = value
                .strip_prefix("https://")
                .or_else(|| value.strip_prefix("http://"));
            match rest {
                Some(rest)
                    if rest
                        .split('/')
                        .next()
                        .is_some_and(|host| host.contains('.') && !host.contains(' ')) =>
                {
                    None
                }
                _ => Some("must start with http:// or https:// followed by a host name".into()),
            }
        }
        _ => dates::parse_date(value)
            .is_none()
            .then(|| "must be a real calendar date written YYYY-MM-DD".into()),
    };
    json!({"kind": kind, "value": value, "valid": problem.is_none(), "reason": problem})
}

#[cfg(test)]
mod tests {
    //! The util tools: calculator, frozen clock, business days, currency, CSV and validation.

    use super::*;

    fn run(tool: &str, value: Value) -> Result<Value, String> {
        let mut world = World::new(&json!({}));
        call(&mut world, tool, value.as_object().expect("object"))
    }

    #[test]
    fn calculator_respects_precedence_and_rejects_division_by_zero() {
        assert_eq!(
            run(
                "util_calculate",
                json!({"expression": "(120000 * 0.7) + 48000 * 0.5"})
            )
            .expect("ok")["result"],
            108000.0
        );
        assert_eq!(
            run("util_calculate", json!({"expression": "2 ^ 3 ^ 2 - -1"})).expect("ok")["result"],
            513.0
        );
        assert_eq!(
            run(
                "util_calculate",
                json!({"expression": "10 / 3", "decimals": 3})
            )
            .expect("ok")["result"],
            3.333
        );
        assert_eq!(
            run("util_calculate", json!({"expression": "1 / (2 - 2)"})),
            Err("division by zero".into())
        );
        assert_eq!(
            run("util_calculate", json!({"expression": "sqrt(4)"})),
            Err("unexpected `s` at position 1; only numbers, + - * / % ^ and parentheses are allowed".into())
        );
    }

    #[test]
    fn the_clock_is_frozen_and_zones_shift_it() {
        let utc = run("util_current_time", json!({})).expect("ok");
        assert_eq!(utc["datetime"], "2026-01-15T10:00:00Z");
        assert_eq!(utc["weekday"], "Thursday");
        let tokyo = run("util_current_time", json!({"timezone": "Asia/Tokyo"})).expect("ok");
        assert_eq!(tokyo["datetime"], "2026-01-15T19:00:00+09:00");
        let ny = run("util_current_time", json!({"timezone": "America/New_York"})).expect("ok");
        assert_eq!(ny["time"], "05:00:00");
    }

    #[test]
    fn business_days_skip_weekends() {
        let result = run(
            "util_date_calc",
            json!({"operation": "add_business_days", "date": "2026-01-15", "days": 3}),
        )
        .expect("ok");
        assert_eq!(result["date"], "2026-01-20");
        let between = run(
            "util_date_calc",
            json!({"operation": "days_between", "date": "2026-01-15", "other_date": "2026-03-31"}),
        )
        .expect("ok");
        assert_eq!(between["days"], 75);
    }

    #[test]
    fn currency_conversion_uses_the_fixed_rates() {
        let result = run(
            "util_convert_currency",
            json!({"amount": 56000, "from": "EUR", "to": "USD"}),
        )
        .expect("ok");
        assert_eq!(result["converted"], 60869.57);
    }

    #[test]
    fn csv_converts_to_json_and_markdown() {
        let json_out = run(
            "util_convert_format",
            json!({"content": "id,name\n1,\"Smith, J\"", "from": "csv", "to": "json"}),
        )
        .expect("ok");
        assert_eq!(json_out["content"], r#"[{"id":"1","name":"Smith, J"}]"#);
        let table = run(
            "util_convert_format",
            json!({"content": "[{\"a\":1}]", "from": "json", "to": "markdown"}),
        )
        .expect("ok");
        assert_eq!(table["content"], "| a |\n|---|\n| 1 |");
    }

    #[test]
    fn validation_explains_what_is_wrong() {
        let iban = run(
            "util_validate",
            json!({"kind": "iban", "value": "DE89 3704 0044 0532 0130 00"}),
        )
        .expect("ok");
        assert_eq!(iban["valid"], true);
        let bad = run(
            "util_validate",
            json!({"kind": "iban", "value": "DE88370400440532013000"}),
        )
        .expect("ok");
        assert_eq!(bad["reason"], "the check digits do not match (mod 97)");
        let phone = run(
            "util_validate",
            json!({"kind": "phone", "value": "+1 415 555 0103"}),
        )
        .expect("ok");
        assert_eq!(phone["valid"], false);
        let email = run(
            "util_validate",
            json!({"kind": "email", "value": "maria.garcia@acme.example"}),
        )
        .expect("ok");
        assert_eq!(email["valid"], true);
    }
}
