//! Calendar arithmetic for the mock tools, over [`crate::calendar`]: dates as days since
//! 1970-01-01 (proleptic Gregorian, UTC), timestamps as seconds since the epoch. No time-zone
//! database: the few zones the catalog offers have fixed offsets on the frozen date.

use super::FROZEN_NOW;

use crate::calendar::{civil_from_days, days_from_civil};
pub(crate) use crate::calendar::{format_date, parse_date, weekday};

/// Whether a day number falls on Saturday or Sunday.
pub(crate) fn is_weekend(days: i64) -> bool {
    matches!(weekday(days), "Saturday" | "Sunday")
}

/// The quarter `YYYY-Qn` of a day number.
pub(crate) fn quarter(days: i64) -> String {
    let (year, month, _) = civil_from_days(days);
    format!("{year}-Q{}", (month - 1) / 3 + 1)
}

/// The first and last day numbers of a quarter written `YYYY-Qn`.
pub(crate) fn quarter_range(text: &str) -> Option<(i64, i64)> {
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
pub(crate) fn is_within(value: &serde_json::Value, range: (i64, i64)) -> bool {
    value
        .as_str()
        .and_then(|text| text.get(..10))
        .and_then(parse_date)
        .is_some_and(|days| (range.0..=range.1).contains(&days))
}

/// Parses an RFC 3339 timestamp (`2026-01-20T14:00:00Z`, `...+01:00`, optional fraction)
/// into seconds since the epoch, UTC.
pub(crate) fn parse_timestamp(text: &str) -> Option<i64> {
    crate::calendar::parse_instant(text).map(|instant| instant.seconds)
}

/// Today's day number on the frozen clock.
pub(crate) fn today() -> i64 {
    parse_date(&FROZEN_NOW[..10]).expect("FROZEN_NOW starts with a valid date")
}

/// Whether a record's date or timestamp field (`YYYY-MM-DD...`) is on or after `since`.
pub(crate) fn is_on_or_after(value: &serde_json::Value, since: i64) -> bool {
    value
        .as_str()
        .and_then(|text| text.get(..10))
        .and_then(parse_date)
        .is_some_and(|days| days >= since)
}

#[cfg(test)]
mod tests {
    //! Mock dates: days round-trip with their weekday, and timestamps apply their zone's offset.

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
