//! Calendar arithmetic for the mock tools: dates as days since 1970-01-01 (proleptic
//! Gregorian, UTC), timestamps as seconds since the epoch. No time-zone database: the few
//! zones the catalog offers have fixed offsets on the frozen date.

use super::FROZEN_NOW;

const WEEKDAYS: [&str; 7] = [
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
];

/// Days since 1970-01-01 of a valid calendar date `y-m-d`.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The calendar date `(year, month, day)` of a day number.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Parses `YYYY-MM-DD` into a day number; `None` for anything else or an impossible date
/// (`2026-02-30`).
pub fn parse_date(text: &str) -> Option<i64> {
    let mut parts = text.splitn(3, '-');
    let year: i64 = parts.next().filter(|p| p.len() == 4)?.parse().ok()?;
    let month: i64 = parts.next().filter(|p| p.len() == 2)?.parse().ok()?;
    let day: i64 = parts.next().filter(|p| p.len() == 2)?.parse().ok()?;
    let valid = (1..=12).contains(&month) && (1..=days_in_month(year, month)).contains(&day);
    valid.then(|| days_from_civil(year, month, day))
}

/// Formats a day number as `YYYY-MM-DD`.
pub fn format_date(days: i64) -> String {
    let (year, month, day) = civil_from_days(days);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The English weekday name of a day number.
pub fn weekday(days: i64) -> &'static str {
    WEEKDAYS[days.rem_euclid(7) as usize]
}

/// Whether a day number falls on Saturday or Sunday.
pub fn is_weekend(days: i64) -> bool {
    matches!(weekday(days), "Saturday" | "Sunday")
}

/// The quarter `YYYY-Qn` of a day number.
pub fn quarter(days: i64) -> String {
    let (year, month, _) = civil_from_days(days);
    format!("{year}-Q{}", (month - 1) / 3 + 1)
}

/// The first and last day numbers of a quarter written `YYYY-Qn`.
pub fn quarter_range(text: &str) -> Option<(i64, i64)> {
    let (year, q) = text.split_once("-Q")?;
    let year: i64 = year.parse().ok()?;
    let q: i64 = q.parse().ok().filter(|q| (1..=4).contains(q))?;
    let first = days_from_civil(year, 3 * (q - 1) + 1, 1);
    let next = if q == 4 {
        days_from_civil(year + 1, 1, 1)
    } else {
        days_from_civil(year, 3 * q + 1, 1)
    };
    Some((first, next - 1))
}

/// Whether a record's date or timestamp field falls in `range` (inclusive day numbers).
pub fn is_within(value: &serde_json::Value, range: (i64, i64)) -> bool {
    value
        .as_str()
        .and_then(|text| text.get(..10))
        .and_then(parse_date)
        .is_some_and(|days| (range.0..=range.1).contains(&days))
}

/// Parses an RFC 3339 timestamp (`2026-01-20T14:00:00Z`, `...+01:00`, optional fraction)
/// into seconds since the epoch, UTC.
pub fn parse_timestamp(text: &str) -> Option<i64> {
    let (date, time) = text.split_once(['T', 't'])?;
    let days = parse_date(date)?;
    let (clock, offset_seconds) = if let Some(clock) = time.strip_suffix(['Z', 'z']) {
        (clock, 0)
    } else {
        let split = time.rfind(['+', '-'])?;
        let (clock, offset) = time.split_at(split);
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let (hours, minutes) = offset[1..].split_once(':')?;
        let offset = hours.parse::<i64>().ok()? * 3600 + minutes.parse::<i64>().ok()? * 60;
        (clock, sign * offset)
    };
    let clock = clock.split('.').next()?;
    let mut fields = clock.split(':').map(|part| part.parse::<i64>().ok());
    let (hour, minute, second) = (fields.next()??, fields.next()??, fields.next()??);
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    Some(days * 86_400 + hour * 3600 + minute * 60 + second - offset_seconds)
}

/// Today's day number on the frozen clock.
pub fn today() -> i64 {
    parse_date(&FROZEN_NOW[..10]).expect("FROZEN_NOW starts with a valid date")
}

/// Whether a record's date or timestamp field (`YYYY-MM-DD...`) is on or after `since`.
pub fn is_on_or_after(value: &serde_json::Value, since: i64) -> bool {
    value
        .as_str()
        .and_then(|text| text.get(..10))
        .and_then(parse_date)
        .is_some_and(|days| days >= since)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_and_know_their_weekday() {
        let days = parse_date("2026-01-15").expect("valid");
        assert_eq!(format_date(days), "2026-01-15");
        assert_eq!(weekday(days), "Thursday");
        assert_eq!(format_date(days + 17), "2026-02-01");
        assert_eq!(
            format_date(parse_date("2024-02-28").expect("valid") + 1),
            "2024-02-29"
        );
        assert_eq!(quarter(days), "2026-Q1");
        assert_eq!(parse_date("2026-02-30"), None);
        assert_eq!(parse_date("15.01.2026"), None);
        let (first, last) = quarter_range("2026-Q1").expect("valid");
        assert_eq!(
            (format_date(first), format_date(last)),
            ("2026-01-01".into(), "2026-03-31".into())
        );
    }

    #[test]
    fn timestamps_apply_their_offset() {
        let utc = parse_timestamp("2026-01-20T14:00:00Z").expect("valid");
        let berlin = parse_timestamp("2026-01-20T15:00:00+01:00").expect("valid");
        assert_eq!(utc, berlin);
        assert_eq!(utc % 86_400, 14 * 3600);
    }
}
